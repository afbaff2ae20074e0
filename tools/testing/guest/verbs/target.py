# SPDX-License-Identifier: GPL-2.0
"""Live QPs and MRs for hostile frames to aim at, run inside a guest:

    python3 -m tools.testing.guest.verbs.target DEV GID_INDEX DGID INFO GO [SECONDS]

(from the repo top: it imports verbs/qp.py as part of the package)

Creates RC, UC and UD QPs in RTS and XRC target QPs in RTR whose peer is
DGID (a host with no RDMA device, which sends the frames), receives
posted on each (the XRC targets' on their XRC SRQ), on half of the RC QPs
requests of their own outstanding (so acknowledgements have something to
hit), and three MRs whose contents must survive: one
remotely readable only, one with no remote access, one remotely writable
whose rkey is never told. The MRs lie in one mapping, each between two
canary pages that no MR covers (frames aimed just past an MR's edges
meet them), which must survive too. Writes INFO (JSON: QPNs, PSNs, rkeys,
addresses, the secret patterns), then waits (at most SECONDS, 900 unless told) for the file GO.
Until then, each time a file INFO.revive.N appears (N = 1, 2, ...), it
takes every QP in the error state back through RESET to RTS, as new,
drains the CQ, and creates INFO.ready.N. At GO it reports, as one JSON
line: whether each MR still holds its pattern, the QPs revived, their
states, the completions seen, and closes everything as a program would.
"""

import ctypes
import json
import mmap
import os
import sys
import tempfile
import time

from pyverbs.qp import QP, QPAttr, QPInitAttrEx
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.srq import SRQ, SrqInitAttrEx
from pyverbs.wr import RecvWR, SendWR, SGE
from pyverbs.xrcd import XRCD, XRCDInitAttr
import pyverbs.enums as e

from tools.testing.guest.verbs.qp import Bench, state

MR_SIZE = 65536
RQ_PSN = 0x654321
SQ_PSN = 0x123456
PEER_QPN = 0xabcde
QKEY = 0x11111111
QPS_PER_KIND = {"rc": 8, "uc": 2, "ud": 2, "xrc": 2}
# Patterns the fuzzer must never see again (no remote read on these MRs)
# and the one it may (the read-only MR).
PATTERNS = {"ro": b"sroce-RO", "none": b"sroce-NO", "rw": b"sroce-RW"}
# The RC requests' buffers: a send and a write from slots 0 and 1, a read
# into slot 2, REQ_LEN bytes each; nothing past a read's SGE may change.
SINK_SLOT = 4096
REQ_LEN = 3000
SINK_PATTERN = b"sroce-SK"
CANARY = b"sroce-CN"
PAGE = mmap.PAGESIZE
PATH_MTU = 1024     # qp.py's RTR path MTU
ACCESS = {
    "ro": e.IBV_ACCESS_REMOTE_READ,
    "none": e.IBV_ACCESS_LOCAL_WRITE,
    "rw": (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
           e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC),
}


def connect(b, qp, kind):
    """To RTS; an XRC target, which sends nothing, to RTR with RC's path."""
    b.to_init(qp, kind)
    if kind != "ud":
        a = QPAttr(qp_state=e.IBV_QPS_INIT)
        # And the flush right (IB_ACCESS_FLUSH_GLOBAL, Linux 6.2): FLUSHes
        # then reach the MR checks.
        a.qp_access_flags = ACCESS["rw"] | 1 << 8
        qp.modify(a, e.IBV_QP_ACCESS_FLAGS)
    a, mask = b.rtr_attr("rc" if kind == "xrc" else kind)
    if kind != "ud":
        a.dest_qp_num = PEER_QPN
        a.rq_psn = RQ_PSN
    qp.modify(a, mask)
    if kind == "xrc":
        return
    a, mask = b.rts_attr(kind)
    if kind == "rc":
        # Long enough that the QP's own requests do not exhaust their
        # retries while the frames arrive (4.096 us << 20: about 4 s).
        a.timeout = 20
    qp.modify(a, mask)


def post_recvs(qp, mr, base, n):
    for i in range(n):
        qp.post_recv(RecvWR(wr_id=base + i, num_sge=1,
                            sg=[SGE(mr.buf + i * 2048, 2048, mr.lkey)]))


class Xrc:
    """An XRC domain (on a file of its own), one XRC SRQ in it for the
    target QPs' receives, and the targets themselves."""

    def __init__(self, b):
        self.file = tempfile.NamedTemporaryFile()
        self.fd = os.open(self.file.name, os.O_RDONLY)
        self.xrcd = XRCD(b.ctx, XRCDInitAttr(
            e.IBV_XRCD_INIT_ATTR_FD | e.IBV_XRCD_INIT_ATTR_OFLAGS, os.O_CREAT, self.fd))
        attr = SrqInitAttrEx(max_wr=64)
        attr.srq_type = e.IBV_SRQT_XRC
        attr.pd = b.pd
        attr.xrcd = self.xrcd
        attr.cq = b.cq
        attr.comp_mask = (e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD |
                          e.IBV_SRQ_INIT_ATTR_CQ | e.IBV_SRQ_INIT_ATTR_XRCD)
        self.srq = SRQ(b.ctx, attr)

    def qp(self, b):
        init = QPInitAttrEx(qp_type=e.IBV_QPT_XRC_RECV,
                            comp_mask=e.IBV_QP_INIT_ATTR_XRCD, xrcd=self.xrcd)
        return QP(b.ctx, init)

    def post_recvs(self, mr, base, n):
        for i in range(n):
            self.srq.post_recv(RecvWR(wr_id=base + i, num_sge=1,
                                      sg=[SGE(mr.buf + i * 2048, 2048, mr.lkey)]))


def post_requests(qp, sink):
    """A send, an RDMA write and an RDMA read toward the peer, all
    signaled, so the completer has something outstanding."""
    flags = e.IBV_SEND_SIGNALED
    for i, op in enumerate((e.IBV_WR_SEND, e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ)):
        wr = SendWR(wr_id=1000 + i, opcode=op, num_sge=1, send_flags=flags,
                    sg=[SGE(sink.buf + i * SINK_SLOT, REQ_LEN, sink.lkey)])
        if op != e.IBV_WR_SEND:
            wr.set_wr_rdma(0x1234, 0x10000)
        qp.post_send(wr)


def main():
    dev, gid_index, dgid, info, go = sys.argv[1:6]
    seconds = int(sys.argv[6]) if len(sys.argv) > 6 else 900
    b = Bench(dev, int(gid_index), dgid)
    # [canary][ro][canary][none][canary][rw][canary]
    stride = PAGE + MR_SIZE
    area = mmap.mmap(-1, len(PATTERNS) * stride + PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(area))
    area[:] = CANARY * (len(area) // len(CANARY))
    mrs = {}
    for i, (name, pattern) in enumerate(PATTERNS.items()):
        off = i * stride + PAGE
        area[off:off + MR_SIZE] = pattern * (MR_SIZE // len(pattern))
        mrs[name] = MR(b.pd, MR_SIZE, ACCESS[name], address=base + off)
    local = e.IBV_ACCESS_LOCAL_WRITE
    recv = MR(b.pd, 16 * 2048 * sum(QPS_PER_KIND.values()), local)
    sink = MR(b.pd, 3 * SINK_SLOT, local)
    sink.write(SINK_PATTERN * (3 * SINK_SLOT // len(SINK_PATTERN)), 3 * SINK_SLOT)

    xrc = Xrc(b)
    qps = []
    for kind, n in QPS_PER_KIND.items():
        for i in range(n):
            qps.append((kind, xrc.qp(b) if kind == "xrc" else
                        b.qp(kind, max_send_wr=8, max_recv_wr=16)))
    # The targets' receives are the SRQ's: posted once, 16 a target.
    xrc_first = len(qps) - QPS_PER_KIND["xrc"]
    xrc.post_recvs(recv, xrc_first * 16, 16 * QPS_PER_KIND["xrc"])

    def start(i):
        kind, qp = qps[i]
        connect(b, qp, kind)
        if kind != "xrc":
            post_recvs(qp, recv, i * 16, 16)
        if kind == "rc" and i % 2:
            post_requests(qp, sink)

    for i in range(len(qps)):
        start(i)

    with open(info + ".tmp", "w") as f:
        json.dump({
            "qps": [[kind, qp.qp_num] for kind, qp in qps],
            "rq_psn": RQ_PSN, "sq_psn": SQ_PSN, "qkey": QKEY,
            "peer_qpn": PEER_QPN, "size": MR_SIZE,
            "xrc_srqs": [xrc.srq.get_srq_num()],
            # What the fuzzer may aim at: the rw MR's key stays secret.
            "mrs": {n: [mrs[n].buf, mrs[n].rkey] for n in ("ro", "none")},
            "secret": [p.decode() for n, p in PATTERNS.items() if n != "ro"] +
                      [CANARY.decode()],
            # RC QPs with a read outstanding: [QPN, the read's PSN, length].
            "reads": [[qp.qp_num, (SQ_PSN + 2 * -(-REQ_LEN // PATH_MTU)) & 0xFFFFFF,
                       REQ_LEN] for i, (kind, qp) in enumerate(qps)
                      if kind == "rc" and i % 2],
        }, f)
    os.rename(info + ".tmp", info)

    wcs = {}

    def drain():
        while True:
            n, polled = b.cq.poll(64)
            for wc in polled:
                wcs[str(wc.status)] = wcs.get(str(wc.status), 0) + 1
            if not n:
                return

    revived, rnd = 0, 1
    deadline = time.monotonic() + seconds
    while not os.path.exists(go) and time.monotonic() < deadline:
        if not os.path.exists(f"{info}.revive.{rnd}"):
            time.sleep(0.2)
            continue
        for i, (kind, qp) in enumerate(qps):
            if state(qp) == e.IBV_QPS_ERR:
                qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
                drain()
                start(i)
                revived += 1
        drain()
        open(f"{info}.ready.{rnd}", "w").close()
        rnd += 1
    drain()
    states = {}
    for kind, qp in qps:
        try:
            s = str(state(qp))
        except PyverbsRDMAError as ex:
            s = f"errno {ex.error_code}"
        states[s] = states.get(s, 0) + 1
    intact = {n: mrs[n].read(MR_SIZE, 0) == p * (MR_SIZE // len(p))
              for n, p in PATTERNS.items()}
    canary = CANARY * (PAGE // len(CANARY))
    intact["canaries"] = all(area[i * stride:i * stride + PAGE] == canary
                             for i in range(len(PATTERNS) + 1))
    # The sink, but for where reads may land.
    want = SINK_PATTERN * (3 * SINK_SLOT // len(SINK_PATTERN))
    got = bytearray(sink.read(3 * SINK_SLOT, 0))
    got[2 * SINK_SLOT:2 * SINK_SLOT + REQ_LEN] = want[2 * SINK_SLOT:2 * SINK_SLOT + REQ_LEN]
    intact["sink"] = bytes(got) == want
    print(json.dumps({"go": os.path.exists(go), "intact": intact, "revived": revived,
                      "states": states, "wcs": wcs}))


if __name__ == "__main__":
    main()
