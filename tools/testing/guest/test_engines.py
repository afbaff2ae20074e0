# SPDX-License-Identifier: GPL-2.0
"""The engines people already run, across the guests: UCX 1.13
(Debian's ucx-utils) over the device, set up as a new user would
(UCX_NET_DEVICES=DEV:1, UCX_IB_GID_INDEX = the RoCEv2 IPv4 GID,
UCX_TLS=rc_v or ud_v).

Each ucx_perftest run (server on B, client on A, tools/testing/bench/lib/ucx.py)
must complete with a measurement, without a UCX error, and the device's
packet counters and the netdev's byte counters must account for every
message measured: the payload went over RoCE, not TCP.

UCX's UD transport (ud_v, and rc_v, which wires up over ud_verbs) drops
every datagram whose destination address is not one of its port's GIDs
(UCX_UD_VERBS_ETH_DGID_CHECK, on by default). UCX 1.13 finds that
address in the 40 bytes before the payload by the completion's SL, which
it reads as mlx5's provider reports it for RoCE: with the L3 header type
IPv4 (sl & 7 == 2) it compares the IPv4 destination at bytes 36..39,
otherwise all 16 bytes at 24..39 as a GID, which for IPv4 are the IP
header's. sroce reports that type (libsroce, docs/ENGINES.md), so its
runs keep UCX's defaults. rdma_rxe 6.1 reports SL 0: UCX drops all its
IPv4 datagrams, and the rxe runs turn the check off.

test_ucx_short is a short slice; test_ucx_matrix (marker full_only: make
engines-full, not make check) runs
tag_lat, tag_bw, put_bw and get_bw at 8 B, 4 KiB and 1 MiB over both
transports.
"""
import pytest

from tools.testing.bench.lib import ucx

TIMEOUT = 300

SIZES = (8, 4096, 1 << 20)
# Iterations by size: few, as the runs are under TCG (a 1 MiB message
# takes tens of ms); the warm-up adds two of each.
ITERS = {8: 200, 4096: 50, 1 << 20: 5}


def _setup(bench):
    dev = {}
    gid = {}
    for g in bench.guests:
        dev[g.name] = bench.attach(g)
        gid[g.name] = g.gid_index(dev[g.name])
    return dev[bench.a.name], gid


def _run(bench, dev, gid, test, size, tls):
    res, problems, r = ucx.run(bench, bench.driver, dev, test, size, ITERS[size], tls,
                               gid, extra_env=_extra_env(bench))
    return res, problems, r


def _extra_env(bench):
    # rxe's SL 0 makes UCX drop every IPv4 datagram: see the module's docstring.
    return "UCX_UD_VERBS_ETH_DGID_CHECK=n" if bench.driver == "rxe" else ""


def _runs(bench, plan):
    dev, gid = _setup(bench)
    failed = []
    for test, size, tls in plan:
        res, problems, r = _run(bench, dev, gid, test, size, tls)
        what = f"{bench.driver} {tls} {test} {size} B"
        if problems:
            failed.append(f"{what}: " + "; ".join(problems) + f"\n{r.text}")
        else:
            # The overall columns; a short run's interval averages may be inf.
            odd = f" (not finite: {', '.join(res['nonfinite'])})" if res["nonfinite"] else ""
            print(f"{what}: {res['lat_overall']:.1f} us, {res['bw_overall']:.2f} MB/s, "
                  f"{res['msg_rate_overall']:.0f} msg/s overall{odd}")
    assert not failed, "\n\n".join(failed)


def test_ucx_info(bench):
    """ucx_info -d lists the device's port with both verbs transports."""
    dev = bench.attach(bench.a)
    out = bench.a.run("ucx_info -d", timeout=60).out
    found = set()
    tl = None
    for line in out.splitlines():
        if "Transport:" in line:
            tl = line.split()[-1]
        elif "Device:" in line and line.split()[-1] == f"{dev}:1":
            found.add(tl)
    assert {"rc_verbs", "ud_verbs"} <= found, f"{dev}:1 has transports {found}:\n{out}"


def test_ucx_short(bench):
    """RC latency and bandwidth, and a UD run, one size each."""
    _runs(bench, [("tag_lat", 8, "rc"), ("tag_bw", 1 << 20, "rc"), ("tag_lat", 4096, "ud")])


@pytest.mark.full_only
def test_ucx_matrix(bench):
    """tag_lat, tag_bw, put_bw, get_bw x 8 B, 4 KiB, 1 MiB x rc_v, ud_v."""
    _runs(bench, [(t, s, tls) for tls in ("rc", "ud")
                  for t in ("tag_lat", "tag_bw", "put_bw", "get_bw") for s in SIZES])


test_ucx_matrix.TIMEOUT = 600
