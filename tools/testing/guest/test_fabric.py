# SPDX-License-Identifier: GPL-2.0
"""libfabric 1.17 (Debian's libfabric-bin) over the device, across the
guests: fi_info lists its verbs domain, and fi_pingpong (server on B,
client on A, data checked with -c) runs over the verbs provider's MSG
endpoints and over RDM endpoints (verbs;ofi_rxm). Each run must print its
result row on both sides and move the device's packet counters by at
least a packet per MTU of every message both ways
(tools/testing/bench/lib/fabric.py).

RDM endpoints: ofi_rxm opens a verbs CQ of (128 + 128) x FI_UNIVERSE_SIZE
(256) = 65536 entries per endpoint, and fi_enable() fails with EINVAL on a
device allowing fewer. sroce allows 256 Ki (drivers/limits.h), so its runs
keep libfabric's defaults; rdma_rxe 6.1 allows 32767, so its runs shrink
the universe to what fits (fabric.rxm_env()).
"""
import pytest

from tools.testing.bench.lib import fabric

TIMEOUT = 180

# Iterations by size: few, as the guests run under TCG (a ping-pong
# takes milliseconds; each fi_pingpong process takes seconds to start).
ITERS = {64: 50, 65536: 10}


def _attach(bench):
    devs = [bench.attach(g) for g in bench.guests]
    return devs[0]


def _pingpong(bench, dev, kind, sizes):
    env = ""
    if kind == "rdm" and bench.driver == "rxe":
        # libfabric's limit, not the driver's bug: see the module's docstring.
        env = fabric.rxm_env(fabric.max_cqe(bench.a, dev))
    failed = []
    for size in sizes:
        iters = ITERS[size]
        res, problems, r = fabric.run(bench, kind, dev, size, iters, env=env)
        what = f"{bench.driver} fi_pingpong {kind} {size} B x {iters}"
        if problems:
            failed.append(f"{what}: " + "; ".join(problems) + f"\n{r.text}")
        else:
            print(f"{what}: {res['usec']:.1f} us/xfer, {res['mb_s']:.2f} MB/s")
    assert not failed, "\n\n".join(failed)


def test_fi_info(bench):
    """fi_info -p verbs lists the device as a domain with MSG endpoints,
    and ofi_rxm's RDM endpoints over it."""
    dev = _attach(bench)
    out = bench.a.run("fi_info -p verbs", timeout=60).out
    found = fabric.domains(out)
    assert ("verbs", dev, "FI_EP_MSG") in found, out
    assert ("verbs;ofi_rxm", dev, "FI_EP_RDM") in found, out


def test_fi_pingpong_msg(bench):
    """The verbs provider's RC endpoints, a small message."""
    _pingpong(bench, _attach(bench), "msg", [64])


def test_fi_pingpong_rdm(bench):
    """ofi_rxm over them, with its rendezvous (RDMA read) for 64 KiB. On
    sroce with libfabric's defaults: fails (fi_enable() EINVAL) when the
    device allows fewer CQEs than ofi_rxm asks for."""
    _pingpong(bench, _attach(bench), "rdm", [65536])


@pytest.mark.full_only
def test_fi_pingpong_sizes(bench):
    """Both endpoint types at 64 B and 64 KiB: the figures of
    docs/ENGINES.md (make engines-full)."""
    dev = _attach(bench)
    for kind in ("msg", "rdm"):
        _pingpong(bench, dev, kind, sorted(ITERS))
