#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Memory regions and address handles through libsroce, run in a guest.

    mr_ah.py DEV keys           register every size x legal access; keys
    mr_ah.py DEV errors         bad registrations and their errnos
    mr_ah.py DEV iova           registrations whose iova is not the address
    mr_ah.py DEV churn N        N register/deregister rounds
    mr_ah.py DEV memlock        fill RLIMIT_MEMLOCK (run without CAP_IPC_LOCK)
    mr_ah.py DEV mr-limit       register until the device's MR limit
    mr_ah.py DEV ah SGID4 SGID6 address handles to the peer
    mr_ah.py DEV ah-limit SGID4 [CMD...]
                                 create AHs until the device's limit, and
                                 run CMD while holding them

Each prints one JSON object on stdout for tools/testing/guest/test_mr.py to
judge; the checks live there. Errors are reported as errno names.
"""

import ctypes
import errno
import itertools
import json
import mmap
import os
import resource
import subprocess
import sys

from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
import pyverbs.enums as e

LW = e.IBV_ACCESS_LOCAL_WRITE
RW = e.IBV_ACCESS_REMOTE_WRITE
RR = e.IBV_ACCESS_REMOTE_READ
RA = e.IBV_ACCESS_REMOTE_ATOMIC
RO = e.IBV_ACCESS_RELAXED_ORDERING
PAGE = mmap.PAGESIZE

# The device's limits (drivers/limits.h).
MAX_MR_SIZE = 1 << 40

PEER_V4 = "0000:0000:0000:0000:0000:ffff:0a4d:0002"   # ::ffff:10.77.0.2
PEER_V6 = "fd77:0000:0000:0000:0000:0000:0000:0002"   # fd77::2


def legal_access():
    """Every combination of the rights sroce grants that the core allows:
    remote write and remote atomic need local write."""
    out = []
    for bits in itertools.product((0, 1), repeat=5):
        acc = sum(f for f, b in zip((LW, RW, RR, RA, RO), bits) if b)
        if acc & (RW | RA) and not acc & LW:
            continue
        out.append(acc)
    return out


class Buf:
    """An anonymous mapping whose address can be handed to ibv_reg_mr."""

    def __init__(self, size):
        self.map = mmap.mmap(-1, size)
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.map))


def errname(code):
    """The errno's name, spelt as the kernel spells its 95."""
    if code == errno.EOPNOTSUPP:
        return "EOPNOTSUPP"
    return errno.errorcode.get(code, str(code))


def try_mr(pd, length, access, address):
    """'ok' after registering (and deregistering) an MR, or the errno name."""
    try:
        MR(pd, length, access, address=address).close()
        return "ok"
    except PyverbsRDMAError as exc:
        return errname(exc.error_code)


def res_mrs(dev):
    """This process's MRs in `rdma resource show mr`: lkey -> entry."""
    out = subprocess.run(["rdma", "-j", "-dd", "resource", "show", "mr",
                          "dev", dev], check=True, capture_output=True,
                         text=True).stdout
    mine = {}
    for ent in json.loads(out or "[]"):
        if ent.get("pid") == os.getpid():
            mine[int(ent["lkey"], 16)] = {
                "rkey": int(ent["rkey"], 16), "mrlen": ent["mrlen"]}
    return mine


def vm_pinned_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmPin:"):
                return int(line.split()[1])
    raise RuntimeError("no VmPin in /proc/self/status")


def cmd_keys(ctx, pd, dev):
    sizes = (1, PAGE - 1, PAGE, PAGE + 1, 65537, 2 << 20)
    buf = Buf(max(sizes) + PAGE)
    mrs, regs = [], []
    for size in sizes:
        for acc in legal_access():
            # Start off a page boundary too: the MR covers exactly that.
            for off in (0, 123):
                mr = MR(pd, size, acc, address=buf.addr + off)
                mrs.append(mr)
                regs.append({"size": size, "access": acc, "off": off,
                             "lkey": mr.lkey, "rkey": mr.rkey})
    shown = res_mrs(dev)
    old = [r["lkey"] for r in regs]
    for mr in mrs:
        mr.close()
    after = res_mrs(dev)
    # The same number again, right after: none of the old keys come back.
    again = [MR(pd, PAGE, LW, address=buf.addr) for _ in range(len(old))]
    new = [mr.lkey for mr in again]
    for mr in again:
        mr.close()
    # One register, deregister, register: the second key differs.
    a = MR(pd, PAGE, LW, address=buf.addr)
    k1 = a.lkey
    a.close()
    b = MR(pd, PAGE, LW, address=buf.addr)
    k2 = b.lkey
    b.close()
    return {"regs": regs, "shown": {str(k): v for k, v in shown.items()},
            "after": len(after), "old": old, "new": new, "k1": k1, "k2": k2}


def cmd_errors(ctx, pd, dev):
    buf = Buf(4 * PAGE)
    # Python's mmap cannot give the address of a PROT_NONE mapping.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long)
    none_addr = libc.mmap(None, PAGE, 0,  # PROT_NONE
                          mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    top = (1 << 64) - PAGE
    cases = {
        "zero_length": (buf.addr, 0, LW),
        "mw_bind": (buf.addr, PAGE, LW | e.IBV_ACCESS_MW_BIND),
        "zero_based": (buf.addr, PAGE, LW | e.IBV_ACCESS_ZERO_BASED),
        "hugetlb": (buf.addr, PAGE, LW | e.IBV_ACCESS_HUGETLB),
        "on_demand": (buf.addr, PAGE, LW | e.IBV_ACCESS_ON_DEMAND),
        "on_demand_mw_bind": (buf.addr, PAGE, LW | e.IBV_ACCESS_ON_DEMAND |
                              e.IBV_ACCESS_MW_BIND),
        "on_demand_zero_based": (buf.addr, PAGE, LW | e.IBV_ACCESS_ON_DEMAND |
                                 e.IBV_ACCESS_ZERO_BASED),
        "flush_global": (buf.addr, PAGE, LW | (1 << 8)),
        "flush_persistent": (buf.addr, PAGE, LW | (1 << 9)),
        "unknown_bit19": (buf.addr, PAGE, LW | (1 << 19)),
        "unknown_bit30": (buf.addr, PAGE, LW | (1 << 30)),
        "optional_bit21": (buf.addr, PAGE, LW | (1 << 21)),
        "remote_write_no_local": (buf.addr, PAGE, RW),
        "remote_atomic_no_local": (buf.addr, PAGE, RA | RR),
        "unmapped": (0x1000, PAGE, LW),
        "prot_none": (none_addr, PAGE, LW),
        "max_plus_one": (buf.addr, MAX_MR_SIZE + 1, LW),
        "huge": (buf.addr, 1 << 63, LW),
        "max_size_unmapped_tail": (buf.addr, MAX_MR_SIZE, LW),
        "wraps": (top, 2 * PAGE, LW),
    }
    out = {name: try_mr(pd, length, acc, addr)
           for name, (addr, length, acc) in cases.items()}
    out["leftover"] = len(res_mrs(dev))
    out["pinned_kb"] = vm_pinned_kb()
    return out


class IbvMr(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p), ("pd", ctypes.c_void_p),
                ("addr", ctypes.c_void_p), ("length", ctypes.c_size_t),
                ("handle", ctypes.c_uint32), ("lkey", ctypes.c_uint32),
                ("rkey", ctypes.c_uint32)]


class IbvGrh(ctypes.Structure):
    _fields_ = [("dgid", ctypes.c_uint8 * 16),
                ("flow_label", ctypes.c_uint32),
                ("sgid_index", ctypes.c_uint8),
                ("hop_limit", ctypes.c_uint8),
                ("traffic_class", ctypes.c_uint8)]


class IbvAhAttr(ctypes.Structure):
    _fields_ = [("grh", IbvGrh), ("dlid", ctypes.c_uint16),
                ("sl", ctypes.c_uint8), ("src_path_bits", ctypes.c_uint8),
                ("static_rate", ctypes.c_uint8),
                ("is_global", ctypes.c_uint8),
                ("port_num", ctypes.c_uint8)]


class IbvAh(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p), ("pd", ctypes.c_void_p),
                ("handle", ctypes.c_uint32)]


class SroceAh(ctypes.Structure):
    """libsroce's struct sroce_ah: struct ibv_ah, then the number the kernel
    named the AH by."""
    _fields_ = [("ibv_ah", IbvAh), ("ah_num", ctypes.c_uint32)]


class Raw:
    """Just enough of libibverbs through ctypes for what pyverbs does not
    offer: ibv_reg_mr_iova and the provider's AH number."""

    def __init__(self, dev):
        v = self.v = ctypes.CDLL("libibverbs.so.1", use_errno=True)
        v.ibv_get_device_list.restype = ctypes.POINTER(ctypes.c_void_p)
        v.ibv_get_device_name.restype = ctypes.c_char_p
        v.ibv_get_device_name.argtypes = (ctypes.c_void_p,)
        v.ibv_open_device.restype = ctypes.c_void_p
        v.ibv_open_device.argtypes = (ctypes.c_void_p,)
        v.ibv_alloc_pd.restype = ctypes.c_void_p
        v.ibv_alloc_pd.argtypes = (ctypes.c_void_p,)
        v.ibv_reg_mr_iova.restype = ctypes.POINTER(IbvMr)
        v.ibv_reg_mr_iova.argtypes = (ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.c_size_t, ctypes.c_uint64,
                                      ctypes.c_int)
        v.ibv_dereg_mr.argtypes = (ctypes.POINTER(IbvMr),)
        v.ibv_create_ah.restype = ctypes.POINTER(SroceAh)
        v.ibv_create_ah.argtypes = (ctypes.c_void_p,
                                    ctypes.POINTER(IbvAhAttr))
        v.ibv_destroy_ah.argtypes = (ctypes.POINTER(SroceAh),)
        n = ctypes.c_int()
        devs = v.ibv_get_device_list(ctypes.byref(n))
        names = [v.ibv_get_device_name(devs[i]).decode()
                 for i in range(n.value)]
        self.ctx = v.ibv_open_device(devs[names.index(dev)])
        self.pd = v.ibv_alloc_pd(self.ctx)
        if not self.ctx or not self.pd:
            raise OSError(ctypes.get_errno(), "cannot open " + dev)

    def reg_iova(self, addr, length, iova, access):
        mr = self.v.ibv_reg_mr_iova(self.pd, addr, length, iova, access)
        if not mr:
            return errname(ctypes.get_errno()), None
        keys = (mr.contents.lkey, mr.contents.length)
        self.v.ibv_dereg_mr(mr)
        return "ok", keys

    def create_ah(self, dgid, sgid_index):
        attr = IbvAhAttr(is_global=1, port_num=1)
        attr.grh.dgid[:] = bytes.fromhex(dgid.replace(":", ""))
        attr.grh.sgid_index = sgid_index
        attr.grh.hop_limit = 64
        ah = self.v.ibv_create_ah(self.pd, ctypes.byref(attr))
        if not ah:
            raise OSError(ctypes.get_errno(), "ibv_create_ah")
        return ah

    def destroy_ah(self, ah):
        return self.v.ibv_destroy_ah(ah)


def cmd_iova(ctx, pd, dev):
    raw = Raw(dev)
    buf = Buf(2 * PAGE)
    off = 0x234
    addr = buf.addr + off
    return {
        # Another iova with the same offset in its page: what the core asks.
        "other": raw.reg_iova(addr, PAGE, 0x7000_0000_0000 + off, LW),
        "zero_page": raw.reg_iova(addr, PAGE, off, LW | RR),
        "top": raw.reg_iova(addr, 0x100, (1 << 64) - 0x1000 + off, LW),
        "wraps": raw.reg_iova(addr, PAGE, (1 << 64) - 0x1000 + off, LW),
        "bad_offset": raw.reg_iova(addr, PAGE, 0x7000_0000_0000, LW),
    }


def cmd_churn(ctx, pd, dev, rounds):
    buf = Buf(PAGE)
    before = len(res_mrs(dev))
    keys = set()
    for _ in range(int(rounds)):
        mr = MR(pd, PAGE, LW | RW | RR, address=buf.addr)
        keys.add(mr.lkey)
        mr.close()
    return {"rounds": int(rounds), "distinct_keys": len(keys),
            "before": before, "after": len(res_mrs(dev)),
            "pinned_kb": vm_pinned_kb()}


def cap_eff():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    raise RuntimeError("no CapEff in /proc/self/status")


def cmd_memlock(ctx, pd, dev):
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    out = {"ipc_lock": bool(cap_eff() & (1 << 14)), "limit": soft}
    if soft == 0:
        out["one_page"] = try_mr(pd, PAGE, LW, Buf(PAGE).addr)
        return out
    pages = soft // PAGE
    buf = Buf((pages + 1) * PAGE)
    full = MR(pd, pages * PAGE, LW, address=buf.addr)
    out["full_pinned_kb"] = vm_pinned_kb()
    # The same pages again count again: the limit is on pins, not pages.
    out["one_more"] = try_mr(pd, PAGE, LW, buf.addr)
    full.close()
    out["after_release"] = try_mr(pd, PAGE, LW, buf.addr)
    half = MR(pd, pages // 2 * PAGE, LW, address=buf.addr)
    out["second_half"] = try_mr(pd, (pages - pages // 2) * PAGE, LW,
                                buf.addr + pages // 2 * PAGE)
    out["past_half"] = try_mr(pd, (pages - pages // 2 + 1) * PAGE, LW,
                              buf.addr + pages // 2 * PAGE)
    half.close()
    out["pinned_kb"] = vm_pinned_kb()
    return out


def cmd_mr_limit(ctx, pd, dev):
    buf = Buf(PAGE)
    mrs = []
    err = None
    while len(mrs) < (1 << 17):
        try:
            mrs.append(MR(pd, PAGE, LW, address=buf.addr))
        except PyverbsRDMAError as exc:
            err = errname(exc.error_code)
            break
    n = len(mrs)
    mrs.pop().close()
    refill = try_mr(pd, PAGE, LW, buf.addr)
    last = MR(pd, PAGE, LW, address=buf.addr)
    again = try_mr(pd, PAGE, LW, buf.addr)
    last.close()
    for mr in mrs:
        mr.close()
    return {"registered": n, "error": err, "refill": refill, "again": again,
            "left": len(res_mrs(dev))}


def ah_attr(dgid, sgid_index, flow_label=0, is_global=1):
    gr = GlobalRoute(dgid=GID(dgid), sgid_index=sgid_index, hop_limit=64,
                     flow_label=flow_label, traffic_class=0x28)
    return AHAttr(port_num=1, is_global=is_global, gr=gr)


def try_ah(pd, attr):
    try:
        AH(pd, attr=attr).close()
        return "ok"
    except PyverbsRDMAError as exc:
        return errname(exc.error_code)


def cmd_ah(ctx, pd, dev, sgid4, sgid6):
    sgid4, sgid6 = int(sgid4), int(sgid6)
    out = {
        "v4": try_ah(pd, ah_attr(PEER_V4, sgid4)),
        "v6": try_ah(pd, ah_attr(PEER_V6, sgid6)),
        "flow_label_max": try_ah(pd, ah_attr(PEER_V6, sgid6, 0xfffff)),
        "no_grh": try_ah(pd, ah_attr(PEER_V4, sgid4, is_global=0)),
        "empty_sgid": try_ah(pd, ah_attr(PEER_V4, 255)),
        "flow_label_21_bits": try_ah(pd, ah_attr(PEER_V6, sgid6, 0x100000)),
        "v4_sgid_v6_dgid": try_ah(pd, ah_attr(PEER_V6, sgid4)),
        "v6_sgid_v4_dgid": try_ah(pd, ah_attr(PEER_V4, sgid6)),
    }
    # Both families at once, then the numbers the kernel named them by.
    held = [AH(pd, attr=ah_attr(PEER_V4, sgid4)),
            AH(pd, attr=ah_attr(PEER_V6, sgid6))]
    for ah in held:
        ah.close()
    raw = Raw(dev)
    a = raw.create_ah(PEER_V4, sgid4)
    b = raw.create_ah(PEER_V6, sgid6)
    out["ah_nums"] = [a.contents.ah_num, b.contents.ah_num]
    out["destroy"] = [raw.destroy_ah(a), raw.destroy_ah(b)]
    return out


def cmd_ah_limit(ctx, pd, dev, sgid4, *while_full):
    """AHs until the device refuses one; then, holding them all, the
    shell command while_full (if given) runs, and its exit status is
    reported: what the kernel's consumers can still do then."""
    attr = ah_attr(PEER_V4, int(sgid4))
    ahs, err = [], None
    while len(ahs) < (1 << 16):
        try:
            ahs.append(AH(pd, attr=attr))
        except PyverbsRDMAError as exc:
            err = errname(exc.error_code)
            break
    out = {"created": len(ahs), "error": err}
    if while_full:
        run = subprocess.run(" ".join(while_full), shell=True, timeout=120,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, check=False)
        out["while_full"] = run.returncode
        out["while_full_out"] = run.stdout[-2000:]
    ahs.pop().close()
    out["refill"] = try_ah(pd, attr)
    for ah in ahs:
        ah.close()
    return out


COMMANDS = {
    "keys": cmd_keys, "errors": cmd_errors, "iova": cmd_iova,
    "churn": cmd_churn, "memlock": cmd_memlock, "mr-limit": cmd_mr_limit,
    "ah": cmd_ah, "ah-limit": cmd_ah_limit,
}


def main():
    dev, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    with Context(name=dev) as ctx:
        with PD(ctx) as pd:
            out = COMMANDS[cmd](ctx, pd, dev, *args)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
