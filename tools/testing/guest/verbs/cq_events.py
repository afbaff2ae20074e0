#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Completion events end to end, run inside a guest:

    cq_events.py DEV

With no data path yet, flushing a QP's posted receives is how completions
reach a CQ from userspace; each CQE raises an event on the completion
channel only as the CQ was armed. Prints one JSON object on its last line.
"""

import fcntl
import json
import os
import select
import sys

from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
import pyverbs.enums as e
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE


def channel_fd(make):
    """Create the channel; return it with its (now non-blocking) fd."""
    def fds():
        found = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}") == \
                        "anon_inode:[infinibandevent]":
                    found.add(int(fd))
            except FileNotFoundError:
                pass
        return found
    before = fds()
    ch = make()
    fd = (fds() - before).pop()
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    return ch, fd


def flush(pd, cq, wr_ids):
    """Post receives on a fresh RC QP, move it to ERR: wr_ids get flushed."""
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=8,
                                     max_send_sge=1, max_recv_sge=1)))
    attr = QPAttr(qp_state=e.IBV_QPS_INIT)
    attr.pkey_index = 0
    attr.port_num = 1
    attr.qp_access_flags = 0
    qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
              e.IBV_QP_ACCESS_FLAGS)
    for i in wr_ids:
        qp.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(0x1000, 64, 0x100)]))
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    return qp


def poll(cq):
    n, wcs = cq.poll(16)
    return [[wc.wr_id, wc.status] for wc in wcs[:n]]


def readable(fd, wait):
    return bool(select.select([fd], [], [], wait)[0])


def main():
    ctx = Context(name=sys.argv[1])
    pd = PD(ctx)
    ch, fd = channel_fd(lambda: CompChannel(ctx))
    cq = CQ(ctx, 16, None, ch, 0)
    out, qps = {}, []

    # Armed for solicited completions only: a flush is not solicited.
    cq.req_notify(True)
    qps.append(flush(pd, cq, [1, 2]))
    out["solicited_only"] = {"event": readable(fd, 1.0), "cqes": poll(cq)}

    # Armed for the next completion: exactly one event for it.
    cq.req_notify(False)
    qps.append(flush(pd, cq, [3]))
    got = readable(fd, 30.0)
    if got:
        ch.get_cq_event(cq)
        cq.ack_events(1)
    out["next"] = {"event": got, "cqes": poll(cq)}

    # Not re-armed: further completions raise nothing.
    qps.append(flush(pd, cq, [4]))
    out["unarmed"] = {"event": readable(fd, 1.0), "cqes": poll(cq)}

    for qp in qps:
        qp.close()
    cq.close()
    ch.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
