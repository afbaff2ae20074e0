# SPDX-License-Identifier: GPL-2.0
"""Open MPI 4.1 (Debian's openmpi-bin) with its UCX PML across the guests:
one rank per guest, mpirun on A, its daemon launched on B through
tools/testing/bench/lib/mpi_rsh.py (a command server the test starts on
B's link address: no ssh server), the job build/tools/sroce-mpi
(tools/testing/verbs/mpi.c): ping-pong latency, bandwidth, and an
allreduce and an alltoall whose results every rank checks.

A run passes only if the job checked all its data and exited 0, its ranks
ran one on each guest, UCX's own account of every endpoint (UCX_LOG_LEVEL
=info: `ep_cfg[N]: tag(rc_verbs/DEV:1)`) names only the device's verbs
transports and self, never tcp or shared memory, and on each guest the
device's packet counters grew by a packet per MTU, and the netdev's
bytes by the bytes, of the payload its rank sent and received.
tools/testing/bench/lib/mpi.py has the commands and the judge, whose
host self-test (selftests/test_mpi_parse.py) shows it failing runs over
TCP and runs the counters do not account for.

test_mpi_short (make check) runs one small job over this run's driver
(--driver rxe: rdma_rxe). test_mpi_table (marker full_only: make
engines-full) runs a larger job over sroce, then over rdma_rxe, on the
same boot, one device attached at a time (both answer RoCE's UDP port),
and prints the engine table's rows, also written to
build/logs/<run>/mpi-table.md. A failure on rxe is rxe's result in the
table, with its reason; only sroce's fails the test.
"""
import os

import pytest

from tools.testing.bench.lib import mpi

TIMEOUT = 300

DRIVERS = ("sroce", "rxe")


def _job(bench, driver, sizes):
    devs = {g.name: bench.attach(g, driver=driver) for g in bench.guests}
    try:
        return mpi.run(bench, devs[bench.a.name], driver, sizes)
    finally:
        for g in bench.guests:
            bench.detach(g, devs[g.name])


def _summary(driver, res, problems, sizes):
    if problems:
        return f"{driver}: FAILED: " + "; ".join(problems)
    return (f"{driver}: ping-pong {res['pingpong']['size']:.0f} B "
            f"{res['pingpong']['lat_us']:.1f} us, bandwidth {res['bandwidth']['size']:.0f} B "
            f"{res['bandwidth']['MBps']:.2f} MB/s, allreduce and alltoall of "
            f"{sizes['c']} x int64 checked; counters {mpi.counters_text(res['deltas'])}")


def test_mpi_short(bench):
    """One small job over this run's driver, judged in full."""
    if not os.path.exists(mpi.PROG):
        pytest.fail(f"{mpi.PROG} missing: make tools (needs mpicc, libopenmpi-dev)")
    res, problems, r = _job(bench, bench.driver, mpi.SHORT)
    print(_summary(bench.driver, res, problems, mpi.SHORT))
    assert not problems, "\n".join(problems) + f"\n{r.out}{r.err}"


@pytest.mark.full_only
@pytest.mark.sroce("runs sroce and rxe itself, one after the other")
def test_mpi_table(bench):
    """sroce then rdma_rxe, the full-size job each: the engine table's rows."""
    if not os.path.exists(mpi.PROG):
        pytest.fail(f"{mpi.PROG} missing: make tools (needs mpicc, libopenmpi-dev)")
    sz = mpi.FULL
    results = {}
    for driver in DRIVERS:
        res, problems, r = _job(bench, driver, sz)
        results[driver] = (res, problems, r)
        print(_summary(driver, res, problems, sz))
        if problems:
            print(r.out + r.err)

    def cell(driver, key, field, unit):
        res, problems, _ = results[driver]
        if problems:
            return "fails: " + problems[0]
        return f"{res[key][field]:.1f} {unit}" if unit == "us" else f"{res[key][field]:.2f} {unit}"

    def ratio(key, field, higher_better):
        if any(results[d][1] for d in DRIVERS):
            return "-"
        s, x = (results[d][0][key][field] for d in DRIVERS)
        return f"{(s / x if higher_better else x / s):.2f}"

    rows = [
        ("Open MPI UCX PML rc_v", f"ping-pong {sz['s']} B, {sz['l']} iters, half round trip",
         cell("sroce", "pingpong", "lat_us", "us"), cell("rxe", "pingpong", "lat_us", "us"),
         ratio("pingpong", "lat_us", False)),
        ("Open MPI UCX PML rc_v", f"bandwidth {sz['b'] >> 10} KiB x {sz['n']}, window 8",
         cell("sroce", "bandwidth", "MBps", "MB/s"), cell("rxe", "bandwidth", "MBps", "MB/s"),
         ratio("bandwidth", "MBps", True)),
        ("Open MPI UCX PML rc_v", f"allreduce + alltoall, {sz['c']} x int64, checked",
         "ok" if not results["sroce"][1] else "fails", "ok" if not results["rxe"][1] else
         "fails", "-"),
    ]
    table = "\n".join(["| engine | test | sroce | rxe | ratio (sroce/rxe, rate) |",
                       "| --- | --- | --- | --- | --- |"] +
                      [f"| {' | '.join(row)} |" for row in rows])
    print(table)
    with open(os.path.join(bench.logdir, "mpi-table.md"), "w") as f:
        f.write(table + "\n")
    res, problems, r = results["sroce"]
    assert not problems, "sroce: " + "\n".join(problems) + f"\n{r.out}{r.err}"


test_mpi_table.TIMEOUT = 600
