#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""QPs and SRQs on a sroce device through pyverbs, run inside a guest.

    qp.py DEV GID_INDEX DGID STEP

Each step prints one JSON object on its last line: what happened, as
values and errno numbers, for test_qp.py to judge.
"""

import json
import subprocess
import sys

from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
import pyverbs.enums as e
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SGE

TYPES = {"rc": e.IBV_QPT_RC, "uc": e.IBV_QPT_UC, "ud": e.IBV_QPT_UD}
RTS_TO_SQD_MASK = e.IBV_QP_STATE


def errno_of(fn):
    """0 if fn() succeeds, else the errno it failed with."""
    try:
        fn()
    except PyverbsRDMAError as ex:
        return ex.error_code
    return 0


class Bench:
    def __init__(self, dev, gid_index, dgid):
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 256)
        self.gid_index = gid_index
        self.dgid = dgid

    def qp(self, kind="rc", srq=None, **cap):
        caps = dict(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                    max_recv_sge=1, max_inline_data=0)
        caps.update(cap)
        init = QPInitAttr(qp_type=TYPES[kind], scq=self.cq, rcq=self.cq,
                          srq=srq, cap=QPCap(**caps))
        return QP(self.pd, init)

    def path(self):
        gr = GlobalRoute(dgid=GID(self.dgid), sgid_index=self.gid_index,
                         hop_limit=17, traffic_class=0x28, flow_label=0x12345)
        return AHAttr(is_global=1, port_num=1, gr=gr, sl=2)

    def to_init(self, qp, kind):
        a = QPAttr(qp_state=e.IBV_QPS_INIT)
        a.pkey_index = 0
        a.port_num = 1
        mask = e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT
        if kind == "ud":
            a.qkey = 0x11111111
            mask |= e.IBV_QP_QKEY
        else:
            a.qp_access_flags = (e.IBV_ACCESS_REMOTE_WRITE |
                                 e.IBV_ACCESS_REMOTE_READ)
            mask |= e.IBV_QP_ACCESS_FLAGS
        qp.modify(a, mask)

    def rtr_attr(self, kind):
        a = QPAttr(qp_state=e.IBV_QPS_RTR)
        mask = e.IBV_QP_STATE
        if kind != "ud":
            a.ah_attr = self.path()
            a.path_mtu = e.IBV_MTU_1024
            a.dest_qp_num = 0xabcde
            a.rq_psn = 0x654321
            mask |= (e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
                     e.IBV_QP_RQ_PSN)
        if kind == "rc":
            a.max_dest_rd_atomic = 4
            a.min_rnr_timer = 12
            mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
        return a, mask

    def loopback_pair(self, **rts):
        """Two RC QPs connected to each other through this device's own
        GID, in RTS; rts: attributes to set other than rts_attr's."""
        self.dgid = str(self.ctx.query_gid(1, self.gid_index))
        qps = [self.qp("rc"), self.qp("rc")]
        for qp in qps:
            self.to_init(qp, "rc")
        for qp, peer in ((qps[0], qps[1]), (qps[1], qps[0])):
            a, mask = self.rtr_attr("rc")
            a.dest_qp_num = peer.qp_num
            a.rq_psn = 0x123456
            qp.modify(a, mask)
        for qp in qps:
            a, mask = self.rts_attr("rc")
            for name, value in rts.items():
                setattr(a, name, value)
            qp.modify(a, mask)
        return qps

    def rts_attr(self, kind):
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.sq_psn = 0x123456
        mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if kind == "rc":
            a.timeout = 14
            a.retry_cnt = 7
            a.rnr_retry = 6
            a.max_rd_atomic = 8
            mask |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                     e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
        return a, mask


def state(qp):
    return qp.query(e.IBV_QP_STATE)[0].qp_state


def caps_of(qp):
    c = qp.query(e.IBV_QP_CAP)[1].cap
    return [c.max_send_wr, c.max_recv_wr, c.max_send_sge, c.max_recv_sge,
            c.max_inline_data]


def step_create(b):
    """Capacities reported for a few requests, and the errors."""
    out = {"caps": {}, "errno": {}}
    asks = {
        "small": dict(max_send_wr=1, max_recv_wr=1, max_send_sge=1,
                      max_recv_sge=1),
        "odd": dict(max_send_wr=100, max_recv_wr=1000, max_send_sge=5,
                    max_recv_sge=3, max_inline_data=100),
        "max": dict(max_send_wr=16384, max_recv_wr=16384, max_send_sge=32,
                    max_recv_sge=32, max_inline_data=512),
    }
    for kind in TYPES:
        for name, cap in asks.items():
            qp = b.qp(kind, **cap)
            out["caps"][f"{kind}-{name}"] = caps_of(qp)
            qp.close()
    over = {
        "send_wr": dict(max_send_wr=16385),
        "recv_wr": dict(max_recv_wr=16385),
        "send_sge": dict(max_send_sge=33),
        "recv_sge": dict(max_recv_sge=33),
        "inline": dict(max_inline_data=513),
    }
    for name, cap in over.items():
        out["errno"][name] = errno_of(lambda: b.qp("rc", **cap))
    for name, t in (("raw", e.IBV_QPT_RAW_PACKET), ("driver", e.IBV_QPT_DRIVER)):
        init = QPInitAttr(qp_type=t, scq=b.cq, rcq=b.cq, cap=QPCap())
        out["errno"][name] = errno_of(lambda: QP(b.pd, init))
    return out


def step_walk(b):
    """RESET to RTS, SQD and back, ERR and RESET, for each type."""
    out = {}
    for kind in TYPES:
        qp = b.qp(kind)
        seen = [state(qp)]
        b.to_init(qp, kind)
        seen.append(state(qp))
        qp.modify(*b.rtr_attr(kind))
        seen.append(state(qp))
        qp.modify(*b.rts_attr(kind))
        seen.append(state(qp))
        qp.modify(QPAttr(qp_state=e.IBV_QPS_SQD), e.IBV_QP_STATE)
        seen.append(state(qp))
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
        seen.append(state(qp))
        qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
        seen.append(state(qp))
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
        seen.append(state(qp))
        out[kind] = seen
        qp.close()
    return out


def step_illegal(b):
    """Illegal transitions, masks and values: errno and the state after."""
    out = {}

    def attempt(name, qp, attr, mask):
        before = state(qp)
        err = errno_of(lambda: qp.modify(attr, mask))
        out[name] = [err, before, state(qp)]

    qp = b.qp("rc")
    attempt("reset-rtr", qp, *b.rtr_attr("rc"))
    attempt("reset-rts", qp, *b.rts_attr("rc"))
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index, a.port_num = 0, 1
    attempt("init-no-port", qp, a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
            e.IBV_QP_ACCESS_FLAGS)
    a.pkey_index = 1
    attempt("init-pkey-1", qp, a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
            e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    a.pkey_index = 0
    a.qkey = 5
    attempt("init-rc-qkey", qp, a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
            e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS | e.IBV_QP_QKEY)
    a.qp_access_flags = e.IBV_ACCESS_MW_BIND
    attempt("init-access-mw", qp, a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
            e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    b.to_init(qp, "rc")
    attempt("init-rts", qp, *b.rts_attr("rc"))
    attr, mask = b.rtr_attr("rc")
    attr.path_mtu = 6
    attempt("rtr-mtu-6", qp, attr, mask)
    attr, mask = b.rtr_attr("rc")
    attr.max_dest_rd_atomic = 129
    attempt("rtr-dest-rd-129", qp, attr, mask)
    attr, mask = b.rtr_attr("rc")
    attempt("rtr-no-av", qp, attr, mask & ~e.IBV_QP_AV)
    attr, mask = b.rtr_attr("rc")
    attr.min_rnr_timer = 32
    attempt("rtr-rnr-timer-32", qp, attr, mask)
    qp.modify(*b.rtr_attr("rc"))
    attr, mask = b.rts_attr("rc")
    attr.timeout = 32
    attempt("rts-timeout-32", qp, attr, mask)
    attr, mask = b.rts_attr("rc")
    attr.retry_cnt = 8
    attempt("rts-retry-8", qp, attr, mask)
    attr, mask = b.rts_attr("rc")
    attr.max_rd_atomic = 129
    attempt("rts-rd-129", qp, attr, mask)
    attr, mask = b.rts_attr("rc")
    attr.path_mig_state = e.IBV_MIG_ARMED
    attempt("rts-mig-armed", qp, attr, mask | e.IBV_QP_PATH_MIG_STATE)
    qp.close()
    ud = b.qp("ud")
    b.to_init(ud, "ud")
    attr, mask = b.rtr_attr("rc")
    attempt("ud-rtr-av", ud, attr, e.IBV_QP_STATE | e.IBV_QP_AV)
    ud.close()
    return out


def step_query(b):
    """What query_qp returns after RTS, for RC."""
    qp = b.qp("rc", max_send_wr=10, max_recv_wr=20, max_send_sge=2,
              max_recv_sge=3, max_inline_data=64)
    b.to_init(qp, "rc")
    qp.modify(*b.rtr_attr("rc"))
    qp.modify(*b.rts_attr("rc"))
    a, init = qp.query(0x1fffff)
    ah = a.ah_attr
    out = {
        "qp_num": qp.qp_num,
        "state": a.qp_state, "cur_state": a.cur_qp_state,
        "path_mtu": a.path_mtu, "rq_psn": a.rq_psn, "sq_psn": a.sq_psn,
        "dest_qp_num": a.dest_qp_num, "access": a.qp_access_flags,
        "pkey_index": a.pkey_index, "port_num": a.port_num,
        "timeout": a.timeout, "retry_cnt": a.retry_cnt,
        "rnr_retry": a.rnr_retry, "min_rnr_timer": a.min_rnr_timer,
        "max_rd_atomic": a.max_rd_atomic,
        "max_dest_rd_atomic": a.max_dest_rd_atomic,
        "mig": a.path_mig_state,
        "ah": [ah.is_global, ah.port_num, ah.sl, str(ah.dgid),
               ah.sgid_index, ah.hop_limit, ah.traffic_class,
               ah.flow_label],
        "init_type": init.qp_type, "sig_all": init.sq_sig_all,
        "caps": caps_of(qp),
    }
    qp.close()
    return out


def recv_wr(wr_id, nsge=1):
    sges = [SGE(0x10000 + 64 * i, 64, 0x1234) for i in range(nsge)]
    return RecvWR(wr_id=wr_id, num_sge=nsge, sg=sges)


def poll_all(cq):
    got = []
    while True:
        n, wcs = cq.poll(16)
        if not n:
            return got
        got += [[wc.wr_id, wc.status, wc.opcode, wc.qp_num] for wc in wcs[:n]]


def step_flush(b):
    """Posted receives come back flushed when the QP enters ERR."""
    out = {}
    qp = b.qp("rc", max_recv_wr=8, max_recv_sge=2)
    out["reset_post"] = errno_of(lambda: qp.post_recv(recv_wr(1)))
    b.to_init(qp, "rc")
    ids = [0x1000 + i for i in range(8)]
    for i in ids:
        qp.post_recv(recv_wr(i, 2 if i % 2 else 1))
    out["full"] = errno_of(lambda: qp.post_recv(recv_wr(99)))
    out["too_many_sge"] = errno_of(lambda: qp.post_recv(recv_wr(98, 3)))
    out["before"] = poll_all(b.cq)
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    out["flushed"] = poll_all(b.cq)
    out["qp_num"] = qp.qp_num
    # A second ERR finds nothing left; RESET and back reuse the ring.
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    out["again"] = poll_all(b.cq)
    qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
    b.to_init(qp, "rc")
    for i in range(3):
        qp.post_recv(recv_wr(0x2000 + i))
    qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
    out["after_reset"] = poll_all(b.cq)
    b.to_init(qp, "rc")
    qp.post_recv(recv_wr(0x3000))
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    out["after_reinit"] = poll_all(b.cq)
    qp.close()
    return out


def step_srq(b):
    """SRQ create, limit, query, errors, and that a QP's ERR leaves it."""
    out = {"errno": {}}
    srq = SRQ(b.pd, SrqInitAttr(SrqAttr(max_wr=100, max_sge=2,
                                        srq_limit=10)))
    q = srq.query()
    out["created"] = [q.max_wr, q.max_sge, q.srq_limit]
    srq.modify(SrqAttr(srq_limit=50), e.IBV_SRQ_LIMIT)
    q = srq.query()
    out["armed"] = [q.max_wr, q.max_sge, q.srq_limit]
    out["errno"]["limit>max_wr"] = errno_of(
        lambda: srq.modify(SrqAttr(srq_limit=129), e.IBV_SRQ_LIMIT))
    out["errno"]["resize"] = errno_of(
        lambda: srq.modify(SrqAttr(max_wr=200), e.IBV_SRQ_MAX_WR))
    out["after_errors"] = srq.query().srq_limit
    for name, attr in (("max_wr", SrqAttr(max_wr=16385, max_sge=1)),
                       ("max_sge", SrqAttr(max_wr=1, max_sge=33)),
                       ("limit", SrqAttr(max_wr=4, max_sge=1, srq_limit=5))):
        out["errno"][name] = errno_of(
            lambda: SRQ(b.pd, SrqInitAttr(attr)))

    qp = b.qp("rc", srq=srq, max_recv_wr=64, max_recv_sge=4)
    out["qp_caps"] = caps_of(qp)
    b.to_init(qp, "rc")
    for i in range(5):
        srq.post_recv(recv_wr(0x500 + i, 2))
    out["qp_post"] = errno_of(lambda: qp.post_recv(recv_wr(1)))
    out["srq_too_many_sge"] = errno_of(lambda: srq.post_recv(recv_wr(2, 3)))
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    out["flushed"] = poll_all(b.cq)
    qp.close()
    srq.close()
    return out


def resources(dev):
    res = subprocess.run(["rdma", "-j", "resource", "show", "qp"],
                         check=True, capture_output=True, text=True)
    return [r for r in json.loads(res.stdout or "[]")
            if r.get("ifname") == dev]


def step_restrack(b):
    """QPs as `rdma resource show qp` lists them."""
    qps = {}
    for kind in TYPES:
        qp = b.qp(kind)
        b.to_init(qp, kind)
        qp.modify(*b.rtr_attr(kind))
        qp.modify(*b.rts_attr(kind))
        qps[kind] = qp
    lines = [r for r in resources(b.dev) if r.get("lqpn") in
             [q.qp_num for q in qps.values()]]
    out = {"qpns": {k: q.qp_num for k, q in qps.items()}, "rows": lines}
    for q in qps.values():
        q.close()
    out["left"] = [r for r in resources(b.dev)
                   if r.get("lqpn") in out["qpns"].values()]
    return out


def step_churn(b, n=10000):
    """n create/destroy cycles; QPNs never 0 or 1, never reused at once."""
    start = len(resources(b.dev))
    last, bad, repeats = None, 0, 0
    for _ in range(n):
        qp = b.qp("rc", max_send_wr=4, max_recv_wr=4)
        if qp.qp_num in (0, 1) or qp.qp_num > 0xffffff:
            bad += 1
        if qp.qp_num == last:
            repeats += 1
        last = qp.qp_num
        qp.close()
    return {"start": start, "end": len(resources(b.dev)), "bad": bad,
            "repeats": repeats}


def step_sqd_drain(b, size=4 << 20):
    """RC loopback: a large RDMA write posted, the QP moved to SQD asking
    for the drained event. The write in progress finishes (a peer must not
    wait for the rest of a message), and the event comes only after it
    completed: its completion is in the CQ when the event is read."""
    from pyverbs.mr import MR
    from pyverbs.wr import SendWR
    qps = b.loopback_pair()
    src = MR(b.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
    dst = MR(b.pd, size, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
    src.write(b"\x5a" * size, size)
    wr = SendWR(wr_id=77, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(src.buf, size, src.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(dst.rkey, dst.buf)
    qps[0].post_send(wr)
    a = QPAttr(qp_state=e.IBV_QPS_SQD)
    a.en_sqd_async_notify = 1
    qps[0].modify(a, e.IBV_QP_STATE | e.IBV_QP_EN_SQD_ASYNC_NOTIFY)
    ev = b.ctx.get_async_event()
    out = {"event": ev.event_type, "drained": e.IBV_EVENT_SQ_DRAINED}
    ev.ack()
    n, wcs = b.cq.poll(4)
    out["at_event"] = [[w.wr_id, w.status] for w in wcs[:n]]
    out["data_ok"] = dst.read(size, 0) == b"\x5a" * size
    out["state"] = state(qps[0])
    return out


def step_rnr(b, size=64):
    """RC loopback: a send to a QP that posted no receive. Each attempt
    earns an RNR NAK; rts_attr's rnr_retry (6) runs out, and the send
    completes with IBV_WC_RNR_RETRY_EXC_ERR."""
    import time
    from pyverbs.mr import MR
    from pyverbs.wr import SendWR
    qps = b.loopback_pair()
    src = MR(b.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
    wr = SendWR(wr_id=88, opcode=e.IBV_WR_SEND, num_sge=1,
                sg=[SGE(src.buf, size, src.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    qps[0].post_send(wr)
    end = time.monotonic() + 60
    wcs = []
    while not wcs and time.monotonic() < end:
        n, got = b.cq.poll(1)
        wcs = got[:n]
    return {"wcs": [[w.wr_id, w.status] for w in wcs],
            "qpns": [qp.qp_num for qp in qps],
            "rnr_retry_exc": e.IBV_WC_RNR_RETRY_EXC_ERR}


def step_rnr_forever(b, size=64):
    """RC loopback, rnr_retry 7 (retry for ever), a short transport timeout
    (timeout 10: 4 ms) and retry_cnt 2: a send to a QP that posts its
    receive only after 2 s, hundreds of timeouts later, completes."""
    import time
    from pyverbs.mr import MR
    from pyverbs.wr import RecvWR, SendWR
    qps = b.loopback_pair(timeout=10, retry_cnt=2, rnr_retry=7)
    src = MR(b.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
    dst = MR(b.pd, size, e.IBV_ACCESS_LOCAL_WRITE)
    qps[0].post_send(SendWR(wr_id=88, opcode=e.IBV_WR_SEND, num_sge=1,
                            sg=[SGE(src.buf, size, src.lkey)],
                            send_flags=e.IBV_SEND_SIGNALED))
    wcs = []
    end = time.monotonic() + 2
    while time.monotonic() < end:
        n, got = b.cq.poll(1)
        wcs += [[w.wr_id, w.status] for w in got[:n]]
    qps[1].post_recv(RecvWR(wr_id=99, num_sge=1,
                            sg=[SGE(dst.buf, size, dst.lkey)]))
    end = time.monotonic() + 60
    while len(wcs) < 2 and time.monotonic() < end:
        n, got = b.cq.poll(1)
        wcs += [[w.wr_id, w.status] for w in got[:n]]
    return {"wcs": sorted(wcs), "success": e.IBV_WC_SUCCESS}


def memcg_current():
    """memory.current of the cgroup (v2) this process is in."""
    path = open("/proc/self/cgroup").read().strip().split("::", 1)[1]
    with open(f"/sys/fs/cgroup{path}/memory.current") as f:
        return int(f.read())


def step_memcg(b, n=8):
    """Up to n QPs of the largest shape, kept: what the first one cost
    this process's memory cgroup, how many were made, and the errno that
    stopped them (0 if none did)."""
    cap = dict(max_send_wr=16384, max_recv_wr=16384, max_send_sge=32,
               max_recv_sge=32)
    before = memcg_current()
    qps = [b.qp("rc", **cap)]
    out = {"charged": memcg_current() - before, "errno": 0}
    while len(qps) < n:
        try:
            qps.append(b.qp("rc", **cap))
        except PyverbsRDMAError as ex:
            out["errno"] = ex.error_code
            break
    out["made"] = len(qps)
    for qp in qps:
        qp.close()
    return out


STEPS = {"rnr_forever": step_rnr_forever, "sqd_drain": step_sqd_drain, "memcg": step_memcg, "create": step_create, "walk": step_walk, "illegal": step_illegal,
         "query": step_query, "flush": step_flush, "srq": step_srq,
         "restrack": step_restrack, "churn": step_churn, "rnr": step_rnr}


def main():
    dev, gid_index, dgid, step = sys.argv[1:5]
    b = Bench(dev, int(gid_index), dgid)
    b.dev = dev
    print(json.dumps(STEPS[step](b)))


if __name__ == "__main__":
    main()
