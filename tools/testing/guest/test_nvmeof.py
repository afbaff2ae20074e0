# SPDX-License-Identifier: GPL-2.0
"""NVMe over Fabrics measured with fio (Debian's, which the guests run
from the host): guest B exports a RAM disk with nvmet-rdma over sroce or
rdma_rxe, or with nvmet-tcp as the reference, guest A connects with
nvme-rdma or nvme-tcp and runs fio against the namespace
(tools/testing/bench/lib/nvmeof.py: the set-up, fio's commands, its JSON
parsed and judged).

A write run verifies every block it wrote (verify=crc32c): it passes
only if fio read back as many bytes as it wrote and counted no verify
error. Every run must also show on A's counters the bytes fio moved
(netdev), and over RDMA a packet per MTU of them on the device: the data
went over RoCE.

test_fio_verify_short is make check's slice: one short verifying write
over sroce. test_fio_table (full_only: make engines-full) measures 4 KiB
random reads (IOPS) and 128 KiB sequential reads and writes (MB/s), all
at iodepth 16, over sroce, rdma_rxe and nvme-tcp interleaved on one pair
of guests for ROUNDS rounds, and prints the medians (docs/ENGINES.md).
"""
import os
import time

import pytest

from tools.testing.bench.lib import nvmeof

pytestmark = pytest.mark.sroce("runs sroce (the table: rxe and nvme-tcp beside it)")

TIMEOUT = 180

# make check's slice: a few seconds of I/O under TCG (~1 MB/s... 10 MB/s).
SHORT_MIB = 8

# The table: rounds, each engine once per round in a rotating order; the
# read runs' length and the write runs' size.
ROUNDS = int(os.environ.get("SROCE_FIO_ROUNDS", "3"))
READ_SECONDS = 5
WRITE_MIB = 32
ENGINES = ("sroce", "rxe", "tcp")


def _up(bench, engine):
    """The engine's device on both guests (none for tcp), B's target and
    A's connection. Returns the device's name or None."""
    dev = None
    if engine != "tcp":
        for g in bench.guests:
            dev = bench.attach(g, driver=engine)
    trtype = "tcp" if engine == "tcp" else "rdma"
    nvmeof.target_up(bench.b, trtype)
    nvmeof.connect(bench.a, bench.b, trtype)
    return dev


def _down(bench, engine, dev):
    trtype = "tcp" if engine == "tcp" else "rdma"
    nvmeof.disconnect(bench.a, trtype)
    nvmeof.target_down(bench.b, trtype)
    if dev:
        # Nothing the ULPs made may hold the device or the module.
        module = "sroce" if engine == "sroce" else "rdma_rxe"
        for g in bench.guests:
            g.run(f"rdma link delete {dev}", timeout=60)
            g.run(f"modprobe -r {module}", timeout=60)


def _run(bench, engine, dev, test, **kw):
    jobs, bad, r, d = nvmeof.run(bench, test, dev, None if engine == "tcp" else engine, **kw)
    what = f"{engine} fio {test}"
    if bad:
        return None, f"{what}: " + "; ".join(bad) + f"\n{r.out[-2000:]}{r.err[-2000:]}"
    j = jobs[0]
    unit = nvmeof.UNITS[nvmeof.TESTS[test][2]]
    extra = ""
    if nvmeof.TESTS[test][0] == "write":
        extra = f", {j['read']['io_bytes']} B verified, {j['total_err']} verify errors"
    print(f"{what}: {nvmeof.figure(test, j):.1f} {unit}{extra}; A's counters moved {d}")
    return nvmeof.figure(test, j), None


def test_fio_verify_short(bench):
    """One fio job over nvme-rdma on sroce: 8 MiB written in 128 KiB
    I/Os, read back and checked (crc32c), and sroce's packet counters
    carried it."""
    dev = _up(bench, "sroce")
    _, failed = _run(bench, "sroce", dev, "write 128k", size_mib=SHORT_MIB, timeout=120)
    assert failed is None, failed
    _down(bench, "sroce", dev)


@pytest.mark.full_only
def test_fio_table(bench):
    """sroce, rdma_rxe and nvme-tcp, ROUNDS rounds interleaved: each
    engine's runs of every test in nvmeof.TESTS, medians and ratios."""
    samples = {}
    failed = []
    load = [os.getloadavg()]
    t0 = time.monotonic()
    for rnd in range(ROUNDS):
        order = ENGINES[rnd % len(ENGINES):] + ENGINES[:rnd % len(ENGINES)]
        for engine in order:
            dev = _up(bench, engine)
            # The write first: the reads then read the pages it filled.
            for test in ("write 128k", "randread 4k", "read 128k"):
                value, bad = _run(bench, engine, dev, test, seconds=READ_SECONDS,
                                  size_mib=WRITE_MIB if test == "write 128k" else None)
                if bad:
                    failed.append(f"round {rnd + 1}: {bad}")
                else:
                    samples.setdefault((engine, test), {})[rnd] = value
            _down(bench, engine, dev)
    load.append(os.getloadavg())
    text = (f"NVMe-oF over fio, {ROUNDS} rounds, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())},"
            f" {time.monotonic() - t0:.0f} s, host load average (1/5/15 min) "
            f"{'/'.join(f'{x:.1f}' for x in load[0])} before, "
            f"{'/'.join(f'{x:.1f}' for x in load[1])} after\n" + nvmeof.table(samples) + "\n")
    with open(os.path.join(bench.logdir, "nvmeof-table.md"), "w") as f:
        f.write(text)
    print(text)
    assert not failed, "\n\n".join(failed)


test_fio_table.TIMEOUT = 1800
