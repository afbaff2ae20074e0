# SPDX-License-Identifier: GPL-2.0
"""Queue pairs and shared receive queues through libsroce: creation and
its errors, the state machine with each type's attributes, query_qp,
receives flushed to the CQ on error, SRQs, and the QPs the RDMA core's
resource tracking lists.

The path of RC and UC QPs leads to guest B, whose GID the core resolves
to B's MAC; nothing is sent yet.
"""

import errno
import json
import os

import pytest

VERBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verbs")
SYS = "/sys/class/infiniband"
B_GID = "0000:0000:0000:0000:0000:ffff:0a4d:0002"

# enum ibv_qp_state
RESET, INIT, RTR, RTS, SQD, ERR = 0, 1, 2, 3, 4, 6
WC_WR_FLUSH_ERR, WC_RECV = 5, 128

TIMEOUT = 240


SROCE_ONLY = "checks libsroce, which serves sroce devices only"


def step(bench, name, timeout=120, prefix=""):
    a = bench.a
    dev = bench.attach(a, "sroce0")
    idx = a.gid_index(dev)
    # The core resolves the path's MAC through the neighbour table.
    a.run("ping -c 1 -W 5 10.77.0.2")
    out = a.run(f"{prefix}/usr/bin/python3 {VERBS}/qp.py {dev} {idx} {B_GID} {name}",
                timeout=timeout).out
    res = json.loads(out.strip().splitlines()[-1])
    res["_gid_index"] = idx
    return res


@pytest.mark.sroce(SROCE_ONLY)
def test_create_caps_and_errors(bench):
    r = step(bench, "create")
    for kind in ("rc", "uc", "ud"):
        # Rings hold powers of two; a send entry is a multiple of 64 bytes
        # and reports all the SGEs and inline bytes it has room for.
        assert r["caps"][f"{kind}-small"] == [1, 1, 4, 1, 64], r
        assert r["caps"][f"{kind}-odd"] == [128, 1024, 8, 3, 128], r
        assert r["caps"][f"{kind}-max"] == [16384, 16384, 32, 32, 512], r
    assert r["errno"] == {
        "send_wr": errno.EINVAL, "recv_wr": errno.EINVAL,
        "send_sge": errno.EINVAL, "recv_sge": errno.EINVAL,
        "inline": errno.EINVAL,
        "raw": errno.EOPNOTSUPP, "driver": errno.EOPNOTSUPP,
    }, r


@pytest.mark.sroce(SROCE_ONLY)
def test_state_walk(bench):
    r = step(bench, "walk")
    walk = [RESET, INIT, RTR, RTS, SQD, RTS, ERR, RESET]
    assert r == {"rc": walk, "uc": walk, "ud": walk,
                 "_gid_index": r["_gid_index"]}, r


@pytest.mark.sroce(SROCE_ONLY)
def test_illegal_transitions(bench):
    r = step(bench, "illegal")
    r.pop("_gid_index")
    inval = errno.EINVAL
    assert r == {
        "reset-rtr": [inval, RESET, RESET],
        "reset-rts": [inval, RESET, RESET],
        "init-no-port": [inval, RESET, RESET],
        "init-pkey-1": [inval, RESET, RESET],
        "init-rc-qkey": [inval, RESET, RESET],
        "init-access-mw": [inval, RESET, RESET],
        "init-rts": [inval, INIT, INIT],
        "rtr-mtu-6": [inval, INIT, INIT],
        "rtr-dest-rd-129": [inval, INIT, INIT],
        "rtr-no-av": [inval, INIT, INIT],
        "rtr-rnr-timer-32": [inval, INIT, INIT],
        "rts-timeout-32": [inval, RTR, RTR],
        "rts-retry-8": [inval, RTR, RTR],
        "rts-rd-129": [inval, RTR, RTR],
        "rts-mig-armed": [errno.EOPNOTSUPP, RTR, RTR],
        "ud-rtr-av": [inval, INIT, INIT],
    }, r


@pytest.mark.sroce(SROCE_ONLY)
def test_query_returns_what_was_set(bench):
    r = step(bench, "query")
    assert 2 <= r["qp_num"] <= 0xffffff, r
    expect = {
        "state": RTS, "cur_state": RTS, "path_mtu": 3,
        "rq_psn": 0x654321, "sq_psn": 0x123456, "dest_qp_num": 0xabcde,
        "access": 2 | 4, "pkey_index": 0, "port_num": 1,
        "timeout": 14, "retry_cnt": 7, "rnr_retry": 6, "min_rnr_timer": 12,
        "max_rd_atomic": 8, "max_dest_rd_atomic": 4, "mig": 0,
        # The core resolving the route replaces the hop limit asked for
        # (17) with the route's, as it does for every RoCE device.
        "ah": [1, 1, 2, B_GID, r["_gid_index"], 64, 0x28, 0x12345],
        # pyverbs signals all send WRs unless told otherwise.
        "init_type": 2, "sig_all": 1,
        "caps": [16, 32, 4, 3, 64],
    }
    got = {k: r[k] for k in expect}
    assert got == expect, r


@pytest.mark.sroce(SROCE_ONLY)
def test_flush_on_error(bench):
    r = step(bench, "flush")
    qpn = r["qp_num"]
    assert r["reset_post"] == errno.EINVAL, r
    assert r["full"] == errno.ENOMEM, r
    assert r["too_many_sge"] == errno.EINVAL, r
    assert r["before"] == [], r
    assert r["flushed"] == [[0x1000 + i, WC_WR_FLUSH_ERR, WC_RECV, qpn]
                            for i in range(8)], r
    assert r["again"] == [], r
    assert r["after_reset"] == [], r
    assert r["after_reinit"] == [[0x3000, WC_WR_FLUSH_ERR, WC_RECV, qpn]], r


@pytest.mark.sroce(SROCE_ONLY)
def test_srq(bench):
    r = step(bench, "srq")
    assert r["created"] == [128, 2, 10], r
    assert r["armed"] == [128, 2, 50], r
    assert r["after_errors"] == 50, r
    assert r["errno"] == {
        "limit>max_wr": errno.EINVAL, "resize": errno.EOPNOTSUPP,
        "max_wr": errno.EINVAL, "max_sge": errno.EINVAL,
        "limit": errno.EINVAL,
    }, r
    # A QP on an SRQ has no receive queue of its own.
    assert r["qp_caps"] == [16, 0, 4, 0, 64], r
    assert r["qp_post"] == errno.EINVAL, r
    assert r["srq_too_many_sge"] == errno.EINVAL, r
    # The QP's error leaves the SRQ's WQEs alone.
    assert r["flushed"] == [], r


@pytest.mark.sroce(SROCE_ONLY)
def test_resource_tracking(bench):
    r = step(bench, "restrack")
    rows = {row["lqpn"]: row for row in r["rows"]}
    assert sorted(rows) == sorted(r["qpns"].values()), r
    for kind, qpn in r["qpns"].items():
        row = rows[qpn]
        assert row["type"] == kind.upper(), row
        assert row["state"] == "RTS", row
        assert row["sq-psn"] == 0x123456, row
        if kind != "ud":
            assert row["rqpn"] == 0xabcde, row
            assert row["rq-psn"] == 0x654321, row
    assert r["left"] == [], r


MEMCG = "/sys/fs/cgroup/sroce-test"


@pytest.mark.sroce("checks sroce's own allocations")
def test_qp_memory_is_charged_to_the_cgroup(bench):
    """A maximal QP holds tens of MiB of rings and tables: they count
    against the memory cgroup of the process that made it, and a process
    whose cgroup is full gets ENOMEM, not the host's memory."""
    a = bench.a
    a.run("mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup; "
          "echo +memory > /sys/fs/cgroup/cgroup.subtree_control; "
          f"mkdir -p {MEMCG} && echo 96M > {MEMCG}/memory.max")
    join = f"sh -c 'echo $$ > {MEMCG}/cgroup.procs && exec \"$@\"' sh "
    r = step(bench, "memcg", prefix=join)
    # Rings alone: two of 16384 entries of more than 512 bytes.
    assert r["charged"] >= 16 << 20, r
    assert r["made"] < 8 and r["errno"] == errno.ENOMEM, r
    events = a.run(f"cat {MEMCG}/memory.events; rmdir {MEMCG}").out
    assert "oom_kill 0" in events, events


@pytest.mark.sroce(SROCE_ONLY)
def test_create_destroy_churn(bench):
    r = step(bench, "churn", timeout=900)
    assert r["bad"] == 0 and r["repeats"] == 0, r
    assert r["start"] == r["end"], r


test_create_destroy_churn.TIMEOUT = 1000


@pytest.mark.sroce(SROCE_ONLY)
def test_sqd_drains_the_message_in_progress(bench):
    """RTS to SQD with the drained notice: a 4 MiB write already started
    completes, whole, before IB_EVENT_SQ_DRAINED is raised (10.3.1.1)."""
    r = step(bench, "sqd_drain")
    assert r["event"] == r["drained"], r
    assert r["at_event"] == [[77, 0]], r
    assert r["data_ok"] and r["state"] == SQD, r


@pytest.mark.sroce(SROCE_ONLY)
def test_rnr_retry_for_ever_outlasts_the_transport_timer(bench):
    """rnr_retry 7: the requester keeps retrying while the receiver posts
    nothing, however many transport timeouts that lasts, and the send
    completes once a receive is posted (it used to end in
    RETRY_EXC_ERR: the transport timer ran on through the RNR waits)."""
    res = step(bench, "rnr_forever")
    ok = res["success"]
    assert res["wcs"] == [[88, ok], [99, ok]], res
