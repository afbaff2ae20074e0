# SPDX-License-Identifier: GPL-2.0
"""Memory windows through libsroce, on RC QPs looped back on one guest.

    python3 -m tools.testing.guest.verbs.mw DEV GID_INDEX   (from the repo top)

A type 2 window is bound over the second half of an MR that grants no
remote right itself; writes go through the window's key. Prints one JSON
object for tools/testing/guest/test_mw.py to judge.
"""

import errno
import json
import mmap
import sys
import time

from pyverbs.mr import MR, MW, MWBindInfo
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

from tools.testing.guest.verbs.qp import Bench

PAGE = mmap.PAGESIZE
SIZE = 2 * PAGE
HALF = SIZE // 2
LEN = 64


def wait(b, wr_id, timeout=20):
    """[status, opcode] of the completion of wr_id."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        n, wcs = b.cq.poll(1)
        if n and wcs[0].wr_id == wr_id:
            return [wcs[0].status, wcs[0].opcode]
        if not n:
            time.sleep(0.01)
    return None


def bind(b, qp, mw, mr, wr_id, addr, length, access):
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_BIND_MW,
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_bind_wr(mw, MWBindInfo(mr, addr, length, access))
    qp.post_send(wr)
    return wr.rkey, wait(b, wr_id)


def write(b, qp, src, wr_id, rkey, addr, lkey=None):
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(src.buf, LEN, src.lkey if lkey is None else lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(rkey, addr)
    qp.post_send(wr)
    return wait(b, wr_id)


def local_inv(b, qp, wr_id, rkey):
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_LOCAL_INV,
                send_flags=e.IBV_SEND_SIGNALED)
    wr.imm_data = rkey  # pyverbs' spelling of invalidate_rkey
    qp.post_send(wr)
    return wait(b, wr_id)


def errno_of(fn):
    try:
        fn()
    except PyverbsRDMAError as ex:
        return errno.errorcode.get(ex.error_code, str(ex.error_code))
    return "ok"


def run(b):
    out = {}
    src = MR(b.pd, LEN, e.IBV_ACCESS_LOCAL_WRITE)
    src.write(b"\x5a" * LEN, LEN)
    # The MR itself grants nothing remote: only the window does.
    dst = MR(b.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_MW_BIND)
    dst.write(b"\x11" * SIZE, SIZE)
    mw = MW(b.pd, e.IBV_MW_TYPE_2)
    cli, srv = b.loopback_pair()

    rw = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_LOCAL_WRITE
    rkey, out["bind"] = bind(b, srv, mw, dst, 1, dst.buf + HALF, HALF, rw)
    out["new_key_index"] = rkey >> 8 == mw.rkey >> 8 and rkey != mw.rkey
    out["dereg_bound"] = errno_of(dst.close)

    out["inside"] = write(b, cli, src, 2, rkey, dst.buf + HALF + 100)
    mem = dst.read(SIZE, 0)
    out["inside_landed"] = mem[HALF + 100:HALF + 100 + LEN] == b"\x5a" * LEN
    out["inside_only"] = (mem[:HALF + 100] == b"\x11" * (HALF + 100) and
                          mem[HALF + 100 + LEN:] ==
                          b"\x11" * (HALF - 100 - LEN))

    out["local_inv"] = local_inv(b, srv, 3, rkey)
    out["after_inv"] = write(b, cli, src, 4, rkey, dst.buf + HALF + 200)
    mem = dst.read(SIZE, 0)
    out["after_inv_untouched"] = mem[HALF + 200:HALF + 200 + LEN] == \
        b"\x11" * LEN

    # A fresh pair (the access error took the first to ERR): the window
    # is free again, and a write just before it is refused.
    cli, srv = b.loopback_pair()
    rkey, out["rebind"] = bind(b, srv, mw, dst, 5, dst.buf + HALF, HALF, rw)
    out["outside"] = write(b, cli, src, 6, rkey, dst.buf + HALF - LEN)
    mem = dst.read(SIZE, 0)
    out["outside_untouched"] = mem[HALF - LEN:HALF] == b"\x11" * LEN

    # A window's key is no lkey: a send through it fails before leaving.
    cli, srv = b.loopback_pair()
    out["mw_as_lkey"] = write(b, srv, src, 7, dst.rkey, dst.buf, lkey=rkey)
    out["dealloc"] = errno_of(mw.close)
    out["dereg_unbound"] = errno_of(dst.close)
    return out


def main():
    dev, gid_index = sys.argv[1:3]
    b = Bench(dev, int(gid_index), None)
    print(json.dumps(run(b)))


if __name__ == "__main__":
    main()
