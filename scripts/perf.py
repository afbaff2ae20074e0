#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""`make bench`: sroce against rdma_rxe and TCP on the same guests, interleaved
(tools/testing/bench/perf.py says how; docs/BENCH.md how to read it).

  /usr/bin/python3 scripts/perf.py [--rounds R] [--drivers rxe,sroce,tcp] [--full] ...

The bench's one entry point that is run by path: it puts the repo top on
the import path so that the package tools.testing.bench is found from
any working directory.
"""
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
from tools.testing.bench.perf import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
