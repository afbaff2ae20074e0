# SPDX-License-Identifier: GPL-2.0
"""Completion queues through libsroce: creation across every size class,
the errors a hardware provider gives, resize, completion channels and
arming, and the CQs the RDMA core's resource tracking sees.

Completions themselves are the integrity, pingpong and KUnit suites'
business; here an empty CQ must poll empty and raise no event. The
device has CQs and rings of its own before any process comes (ib_mad's
QP1 and its CQ): counts are compared with what was there at the start.
"""

import errno
import json
import os

import pytest

VERBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verbs")
MAX_CQE = 262144  # drivers/limits.h: a full ring of 256 Ki slots


SROCE_ONLY = "checks libsroce, which serves sroce devices only"


def verbs(g, *args, timeout=120):
    out = g.run(f"/usr/bin/python3 {VERBS}/cq.py " +
                " ".join(str(a) for a in args), timeout=timeout).out
    return json.loads(out.strip().splitlines()[-1])


def pow2_at_least(n):
    p = 1
    while p < n:
        p <<= 1
    return p


def capacity(n):
    """What sroce reports for a request of n: a power of two, capped."""
    return min(pow2_at_least(n), MAX_CQE)


def ring_bytes(n):
    """What vmallocinfo shows for a CQ of n: header, 64-byte entries,
    page-aligned, plus the guard page vmalloc adds."""
    page = 4096
    used = 128 + pow2_at_least(n) * 64
    return (used + page - 1) // page * page + page


def rings(g):
    return json.loads(g.run(f"/usr/bin/python3 {VERBS}/cq.py rings").out)["rings"]


def cq_count(g, dev):
    return len(json.loads(g.run(f"rdma -j resource show cq dev {dev}").out))


def minus(have, base):
    """The multiset have - base, sorted: what a process added to the
    device's own objects (ib_mad's QP1 and its CQ have rings too)."""
    left = list(have)
    for x in base:
        if x in left:
            left.remove(x)
    return sorted(left)


@pytest.mark.sroce(SROCE_ONLY)
def test_create_sizes_and_errors(bench):
    a = bench.a
    dev = bench.attach(a, "sroce0")
    out = verbs(a, dev, "sizes")
    assert out["max_cqe"] == MAX_CQE, out
    for asked, got in out["cqe"].items():
        assert got == capacity(int(asked)), (asked, got)
        assert got >= int(asked), (asked, got)
    assert out["errors"] == {
        "cqe 0": errno.EINVAL,
        "cqe max+1": errno.EINVAL,
        "cqe -1": errno.EINVAL,
        "comp_vector num": errno.EINVAL,
        "comp_vector last": None,
    }, out


@pytest.mark.sroce(SROCE_ONLY)
def test_resize_up_and_down(bench):
    a = bench.a
    dev = bench.attach(a, "sroce0")
    out = verbs(a, dev, "resize")
    assert out["steps"] == [
        ["create 10", 16],
        ["resize 1000", 1024],
        ["resize 1", 1],
        ["resize 3", 4],
        [f"resize {MAX_CQE}", MAX_CQE],
        ["resize 17", 32],
        ["after errors", 32],
    ], out
    assert out["errors"] == {
        "resize 0": errno.EINVAL,
        "resize max+1": errno.EINVAL,
        "resize -5": errno.EINVAL,
    }, out


@pytest.mark.sroce(SROCE_ONLY)
def test_completion_channel(bench):
    """CQs on a channel arm both ways without failing or raising events."""
    a = bench.a
    dev = bench.attach(a, "sroce0")
    out = verbs(a, dev, "channel")
    assert out == {
        "cqe": [8, 512],
        "polled": [0, 0],
        "readable": False,
        "get_cq_event": errno.EAGAIN,
    }, out


@pytest.mark.sroce(SROCE_ONLY)
def test_resource_tracking_shows_real_cqe(bench):
    a = bench.a
    dev = bench.attach(a, "sroce0")
    wanted = [1, 5, 100, 4097, MAX_CQE]
    base_rings, base_cqs = rings(a), cq_count(a, dev)
    out = verbs(a, dev, "hold", *wanted)
    assert out["cqe"] == [capacity(n) for n in wanted], out
    mine = [r for r in out["rdma"] if r.get("pid") == out["pid"]]
    assert sorted(r["cqe"] for r in mine) == \
        sorted(capacity(n) for n in wanted), out
    for r in mine:
        assert r["ifname"] == dev, r
        assert r["comm"] == "python3", r
    # One ring per CQ, sized for its capacity, and none left after.
    assert minus(out["rings"], base_rings) == sorted(ring_bytes(n) for n in wanted), out
    assert cq_count(a, dev) == base_cqs
    assert rings(a) == base_rings


@pytest.mark.sroce(SROCE_ONLY)
def test_process_exit_frees_cqs(bench):
    """A process that exits holding CQs leaves no CQ and no ring."""
    a = bench.a
    dev = bench.attach(a, "sroce0")
    base_rings, base_cqs = rings(a), cq_count(a, dev)
    out = verbs(a, dev, "abandon", 1, 300, MAX_CQE)
    assert out == {"cqe": [1, 512, MAX_CQE]}, out
    assert cq_count(a, dev) == base_cqs
    assert rings(a) == base_rings


@pytest.mark.sroce(SROCE_ONLY)
def test_ten_thousand_create_destroy(bench):
    a = bench.a
    dev = bench.attach(a, "sroce0")
    start, base_rings = cq_count(a, dev), rings(a)
    out = verbs(a, dev, "cycles", 10000, timeout=900)
    assert out == {"cycles": 10000}, out
    assert cq_count(a, dev) == start
    # Every ring went with its CQ and its mapping.
    assert rings(a) == base_rings


test_ten_thousand_create_destroy.TIMEOUT = 1000


@pytest.mark.sroce(SROCE_ONLY)
def test_completion_events_from_flushes(bench):
    """Completions raise channel events only as the CQ was armed: none
    for a solicited-only arm, one for a next-completion arm, none once
    that arm is used up. Flushed receives are the completions."""
    a = bench.a
    dev = bench.attach(a, "sroce0")
    out = json.loads(a.run(f"/usr/bin/python3 {VERBS}/cq_events.py {dev}",
                           timeout=120).out.strip().splitlines()[-1])
    flushed = 5	 # IBV_WC_WR_FLUSH_ERR
    assert out == {
        "solicited_only": {"event": False,
                           "cqes": [[1, flushed], [2, flushed]]},
        "next": {"event": True, "cqes": [[3, flushed]]},
        "unarmed": {"event": False, "cqes": [[4, flushed]]},
    }, out


CQCLEAN = "build/tools/sroce-cqclean"


@pytest.mark.sroce(SROCE_ONLY)
def test_destroyed_qp_leaves_no_completions(bench):
    """A QP destroyed with completions still queued in a CQ it shares:
    none of them may be polled afterwards, where a QP given its number
    again would be credited with them. sroce-cqclean
    (tools/testing/verbs/cqclean.c) flushes receives of QPs K and A into
    one CQ, destroys A unpolled, flushes one of a new QP B's, and expects
    exactly K's and B's, in order, through ibv_poll_cq() and through the
    extended polling API."""
    a = bench.a
    dev = bench.attach(a, "sroce0")
    res = a.run(f"{CQCLEAN} -d {dev}", timeout=90, check=False)
    print(res.out)
    assert res.ok, f"rc={res.rc}\n{res.out}{res.err}"
    assert res.out.strip().splitlines()[-1] == "sroce-cqclean: OK", res.out
    # A check that did not run is a check that failed.
    assert res.out.count(" ok\n") == 8, res.out
