# SPDX-License-Identifier: GPL-2.0
"""On-demand paging MRs through libsroce, on RC QPs looped back on one guest.

    python3 -m tools.testing.guest.verbs.odp DEV GID_INDEX ROUNDS KIND
                                              (from the repo top)

KIND explicit: an ODP MR covers a shared mapping of one of two memory
files, A and B; implicit: the MR is the whole address space (ibv_reg_mr()
of address 0, length SIZE_MAX), which the mapping is part of. Each file
is filled with its own byte. A peer's reads and writes go through the
MR's rkey, and the MR is also the source of writes into a pinned MR.
Each round maps the other file over the same addresses (MAP_FIXED) while
reads of every page are still outstanding, then checks that what the
peer reads now is the new file's, that a peer's write lands in the new
file, and that the MR as a source sends the new file's bytes: the MR
follows the process's mapping instead of keeping the pages it had. At the
end the range is unmapped altogether: a read through the MR must then
fail with a remote access error, not hang; and so must a read of a
larger range unmapped while it is being answered (once its first bytes
have arrived, before its last), rather than run the requester's retries
out. Prints one JSON object for tools/testing/guest/test_odp.py to
judge.
"""

import ctypes
import json
import mmap
import os
import sys
import time

from pyverbs.mr import MR
from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

from tools.testing.guest.verbs.qp import Bench

PAGE = mmap.PAGESIZE
PAGES = 16
SIZE = PAGES * PAGE
BIG = 32 << 20
# Tries of an unmapping in the middle of a read of BIG bytes.
MID_TRIES = 5
ODP = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
       e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_ON_DEMAND)

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long)
libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)


def memfile(byte):
    fd = os.memfd_create(f"odp-{byte:02x}")
    os.write(fd, bytes([byte]) * SIZE)
    return fd


def map_at(fd, addr=None):
    """Maps fd's SIZE bytes, at addr in place of what is there if given."""
    flags = mmap.MAP_SHARED | (0x10 if addr else 0)  # MAP_FIXED
    got = libc.mmap(addr, SIZE, mmap.PROT_READ | mmap.PROT_WRITE, flags,
                    fd, 0)
    if got in (None, ctypes.c_void_p(-1).value) or (addr and got != addr):
        raise OSError(ctypes.get_errno(), "mmap")
    return got


def poll(b, n, timeout=30):
    """The statuses of n completions, or fewer if they do not come."""
    out, end = [], time.monotonic() + timeout
    while len(out) < n and time.monotonic() < end:
        got, wcs = b.cq.poll(n - len(out))
        out += [wc.status for wc in wcs[:got]]
        if not got:
            time.sleep(0.002)
    return out


def post(qp, wr_id, op, sge, rkey, addr):
    wr = SendWR(wr_id=wr_id, opcode=op, num_sge=1, sg=[sge],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(rkey, addr)
    qp.post_send(wr)


def read_all(b, cli, buf, odp, base):
    """Reads every page of the ODP MR into buf, one read a page."""
    for i in range(PAGES):
        post(cli, i, e.IBV_WR_RDMA_READ, SGE(buf.buf + i * PAGE, PAGE,
                                             buf.lkey), odp.rkey,
             base + i * PAGE)


def one(b, cli, op, sge, rkey, addr):
    post(cli, 99, op, sge, rkey, addr)
    return poll(b, 1)


def unmapped_mid_read(b, kind, odp):
    """A read of BIG bytes through an ODP MR whose mapping goes once the
    first bytes have arrived: its status, and whether the first bytes had
    come and the last were still to come at the unmapping. A read that
    ended before the unmapping (this process lost the CPU between seeing
    its first bytes and unmapping) tells nothing: it is tried again, a
    few times."""
    for _ in range(MID_TRIES):
        r = unmap_during_read(b, kind, odp)
        if r["mid"]:
            break
    return r


def unmap_during_read(b, kind, odp):
    """One try of unmapped_mid_read(), on a new pair (the last unmapped
    read ended the other)."""
    # Bringing 32 MiB in takes longer than six RNR waits: wait for ever.
    cli, _ = b.loopback_pair(rnr_retry=7)
    fd = os.memfd_create("odp-big")
    os.ftruncate(fd, BIG)
    os.pwrite(fd, b"\xcc" * PAGE, 0)
    os.pwrite(fd, b"\xcc" * PAGE, BIG - PAGE)
    addr = libc.mmap(None, BIG, mmap.PROT_READ | mmap.PROT_WRITE,
                     mmap.MAP_SHARED, fd, 0)
    mr = odp if kind == "implicit" else MR(b.pd, BIG, ODP, address=addr)
    sink = MR(b.pd, BIG, e.IBV_ACCESS_LOCAL_WRITE)
    post(cli, 7, e.IBV_WR_RDMA_READ, SGE(sink.buf, BIG, sink.lkey), mr.rkey,
         addr)
    end = time.monotonic() + 60
    while sink.read(1, 0) != b"\xcc" and time.monotonic() < end:
        pass
    mid = sink.read(1, 0) == b"\xcc" and sink.read(1, BIG - 1) != b"\xcc"
    libc.munmap(addr, BIG)
    st = poll(b, 1, timeout=120)
    if mr is not odp:
        mr.close()
    sink.close()
    os.close(fd)
    return {"status": st, "mid": mid}


def run(b, rounds, kind):
    out = {"rounds": [], "bad_status": []}
    files = [memfile(0xaa), memfile(0xbb)]
    base = map_at(files[0])
    if kind == "implicit":
        odp = MR(b.pd, SIZE, ODP, implicit=True)
    else:
        odp = MR(b.pd, SIZE, ODP, address=base)
    buf = MR(b.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE |
             e.IBV_ACCESS_REMOTE_WRITE)
    cli, _ = b.loopback_pair()

    for r in range(rounds):
        now = files[(r + 1) % 2]
        want = bytes([0xbb if now == files[1] else 0xaa]) * SIZE
        # Reads of the old mapping in flight while the new one goes in.
        read_all(b, cli, buf, odp, base)
        map_at(now, base)
        st = poll(b, PAGES)
        out["bad_status"] += [s for s in st if s]
        res = {"inflight_done": len(st)}

        read_all(b, cli, buf, odp, base)
        st = poll(b, PAGES)
        out["bad_status"] += [s for s in st if s]
        res["reads_new"] = buf.read(SIZE, 0) == want

        # A write through the rkey lands in the new file.
        mark = bytes([0x40 + r]) * 64
        src = MR(b.pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
        src.write(mark, 64)
        st = one(b, cli, e.IBV_WR_RDMA_WRITE, SGE(src.buf, 64, src.lkey),
                 odp.rkey, base + PAGE + 8)
        out["bad_status"] += [s for s in st if s]
        res["write_lands"] = os.pread(now, 64, PAGE + 8) == mark
        os.pwrite(now, want[:64], PAGE + 8)

        # The MR as a source sends the new file's bytes.
        st = one(b, cli, e.IBV_WR_RDMA_WRITE, SGE(base, SIZE, odp.lkey),
                 buf.rkey, buf.buf)
        out["bad_status"] += [s for s in st if s]
        res["source_new"] = buf.read(SIZE, 0) == want
        out["rounds"].append(res)
        src.close()

    libc.munmap(base, SIZE)
    st = one(b, cli, e.IBV_WR_RDMA_READ, SGE(buf.buf, PAGE, buf.lkey),
             odp.rkey, base)
    out["unmapped_read"] = st
    out["unmapped_mid_read"] = unmapped_mid_read(b, kind, odp)
    odp.close()
    buf.close()
    return out


def main():
    dev, gid_index, rounds, kind = sys.argv[1:5]
    b = Bench(dev, int(gid_index), None)
    print(json.dumps(run(b, int(rounds), kind)))


if __name__ == "__main__":
    main()
