# SPDX-License-Identifier: GPL-2.0
"""sroce's two-guest QEMU bench: the guests and their agent (guests.py,
agent.py), their boot (boot/), the kernel log gate (kmsg_gate.py), what
tests share (lib/), the host-side self-tests (selftests/), and the tools
built on them (perf.py, demo.py, capture_rxe.py).

The package is imported from the repo top as tools.testing.bench: pytest
gets the top on its path from pytest.ini, `python3 -m` from the working
directory, so nothing here edits the import path.
"""
