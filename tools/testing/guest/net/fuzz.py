# SPDX-License-Identifier: GPL-2.0
"""Hostile RoCEv2 frames with valid ICRCs, aimed at live QPs.

Run from the repo top as python3 -m tools.testing.guest.net.fuzz (it
imports lib/roce.py from the package):

  fuzz send IFACE JSON         send frames described by JSON (see below),
                               print one JSON line of what was sent
  fuzz serve IFACE REQ RES     the same for each JSON read from the FIFO
                               REQ, its line written to the FIFO RES (or
                               {"error": ...}), until {"phase": "quit"}:
                               one process for a run's many sends, as
                               starting Python takes a second under TCG
  fuzz watch IFACE READY STOP SECRET...
                               count the RoCEv2 frames arriving on IFACE
                               until the file STOP exists (READY is made
                               once listening) and print one JSON line:
                               frames, opcodes, and how many carried one
                               of the SECRET strings

JSON: {"info": target.py's info, "seed", "count", "mtu" (the QPs' path
MTU), "dst_mac", "src_mac", "src_ip", "dst_ip"}.

Each frame is a well-formed RoCEv2 frame for one of the target's QPs whose
transport headers are chosen to hurt: opcodes of every kind and none,
PSNs around the expected ones and anywhere, RETHs and AtomicETHs with the
MRs' keys at their edges and beyond, lengths from zero past the MTU, pads
that lie, AETH syndromes of every class, Q_Keys right and wrong, and runs
of first/middle/last packets. One in ten then has a random byte of its
headers changed. Before them, each RC QP gets a valid read of the
read-only MR and duplicates of it aimed at the MR that may not be read,
and each outstanding read of the target's gets responses at its PSN that
carry more than it asked for. The ICRC is always right, so every frame reaches the
transport. Standard library only.
"""
import ctypes
import errno
import json
import os
import random
import socket
import struct
import sys
import time
import zlib

from tools.testing.bench.lib import roce

EXT = {"reth": 16, "aeth": 4, "imm": 4, "ieth": 4, "atomic": 28,
       "atomicack": 8, "deth": 8, "xrceth": 4, "feth": 4}
RC = {0x00: (), 0x01: (), 0x02: (), 0x03: ("imm",), 0x04: (), 0x05: ("imm",),
      0x06: ("reth",), 0x07: (), 0x08: (), 0x09: ("imm",), 0x0a: ("reth",),
      0x0b: ("reth", "imm"), 0x0c: ("reth",), 0x0d: ("aeth",), 0x0e: (),
      0x0f: ("aeth",), 0x10: ("aeth",), 0x11: ("aeth",),
      0x12: ("aeth", "atomicack"), 0x13: ("atomic",), 0x14: ("atomic",),
      0x16: ("ieth",), 0x17: ("ieth",), 0x1c: ("feth", "reth"),
      0x1d: ("reth",)}
UC = {0x20 | op: ext for op, ext in RC.items() if op <= 0x0b}
UD = {0x64: ("deth",), 0x65: ("deth", "imm")}
# XRC: RC's operations but flush and atomic write (RC's alone); requests
# carry an XRCETH first, answers do not.
XRC = {0xa0 | op: ext if 0x0d <= op <= 0x12 else ("xrceth",) + ext
       for op, ext in RC.items() if op not in (0x1c, 0x1d)}
ALL = {**RC, **UC, **UD, **XRC}
# An XRC target takes XRC's requests; its answers are the initiator's.
OPS = {"rc": RC, "uc": UC, "ud": UD,
       "xrc": {op: ext for op, ext in XRC.items() if "xrceth" in ext}}
RESPONSES = set(range(0x0d, 0x13))
# Multi-packet messages: first, middle, last opcodes per kind.
# Classes of frames that lie below the transport (Fuzzer.below()).
BELOW = ("vlan", "vlan0", "ip_options", "ip_fragment", "not_ours", "v4mapped",
         "udp_length", "ip_length", "ip_checksum", "udp_checksum", "truncated")
RUNS = {"rc": [(0x00, 0x01, 0x02), (0x06, 0x07, 0x08), (0x06, 0x07, 0x09),
               (0x0d, 0x0e, 0x0f)],
        "uc": [(0x20, 0x21, 0x22), (0x26, 0x27, 0x28), (0x26, 0x27, 0x29)],
        "xrc": [(0xa0, 0xa1, 0xa2), (0xa6, 0xa7, 0xa8), (0xa6, 0xa7, 0xa9)]}


class Fuzzer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.info = cfg["info"]
        self.rnd = random.Random(cfg["seed"])
        self.mtu = cfg["mtu"]
        if "dst_mac" in cfg:
            # The parts of an IPv4 frame A to B that never change, and
            # their ICRC-masked forms: roce.frame() per frame would cost
            # a third of the sender's time under TCG.
            self.eth = roce.mac(cfg["dst_mac"]) + roce.mac(cfg["src_mac"]) + b"\x08\x00"
            addrs = socket.inet_aton(cfg["src_ip"]) + socket.inet_aton(cfg["dst_ip"])
            self.ip_tail = b"\x00\x00\x40\x00\x40\x11"
            self.ip_addrs = addrs
            self.ip_sum = sum(struct.unpack("!10H", b"\x45\x00\x00\x00" + self.ip_tail +
                                            b"\x00\x00" + addrs))
            self.mask_tail = b"\x00\x00\x40\x00\xff\x11\xff\xff" + addrs

    def key(self):
        r = self.rnd
        mrs = self.info["mrs"]
        pick = r.random()
        if pick < 0.7:
            return r.choice(list(mrs.values()))[1]
        if pick < 0.8:
            return r.choice(list(mrs.values()))[1] ^ (1 << r.randrange(32))
        return r.getrandbits(32)

    def va(self, aligned=False):
        r = self.rnd
        base = r.choice(list(self.info["mrs"].values()))[0]
        size = self.info["size"]
        va = r.choice([base, base + r.randrange(size), base + size - 8,
                       base + size, base - 8, 0, (1 << 64) - 8,
                       r.getrandbits(64), base + size - 1])
        if aligned and r.random() < 0.8:
            va &= ~7
        return va & ((1 << 64) - 1)

    def length(self, payload):
        r = self.rnd
        size = self.info["size"]
        return r.choice([0, 1, 8, payload, payload + 1, self.mtu, 4096, size,
                         size + 1, 1 << 31, 0xffffffff, r.getrandbits(32),
                         r.randrange(3 * self.mtu)])

    def ext(self, name, payload):
        r = self.rnd
        if name == "reth":
            return struct.pack("!QII", self.va(), self.key(), self.length(payload))
        if name == "atomic":
            return struct.pack("!QIQQ", self.va(aligned=True), self.key(),
                               r.getrandbits(64), r.getrandbits(64))
        if name == "aeth":
            syndrome = r.choice([0x1f, 0x00, r.randrange(0x20, 0x40),
                                 r.choice([0x60, 0x61, 0x62, 0x63, 0x64]),
                                 r.randrange(256)])
            return struct.pack("!I", syndrome << 24 | r.getrandbits(24))
        if name == "deth":
            qkey = self.info["qkey"] if r.random() < 0.7 else r.getrandbits(32)
            return struct.pack("!II", qkey, r.getrandbits(24))
        if name == "xrceth":
            # The target's XRC SRQ, or small numbers that may be other
            # SRQs (not XRC ones) or none, or anything.
            return struct.pack("!I", r.choice([r.choice(self.info.get("xrc_srqs", [1])),
                                               r.randrange(1, 16),
                                               r.getrandbits(32)]))
        if name == "ieth" and r.random() < 0.5:
            return struct.pack("!I", self.key())
        if name == "feth" and r.random() < 0.7:
            # Every placement and selectivity, defined or not.
            return struct.pack("!I", r.randrange(4) << 4 | r.randrange(16))
        return r.randbytes(EXT[name])

    def psn(self, kind, opcode):
        r = self.rnd
        if r.random() < 0.1:
            return r.getrandbits(24)
        base = self.info["sq_psn"] if opcode in RESPONSES else self.info["rq_psn"]
        return (base + r.randrange(-8, 64)) & 0xFFFFFF

    def payload_len(self):
        r = self.rnd
        return r.choice([0, 1, 3, 4, 5, 8, 100, self.mtu - 1, self.mtu,
                         self.mtu + 4, r.randrange(self.mtu + 64)])

    def packet(self, kind, qpn, opcode=None, psn=None):
        """BTH onwards, without the ICRC."""
        r = self.rnd
        if opcode is None:
            pick = r.random()
            if pick < 0.85:
                opcode = r.choice(list(OPS[kind]))
            elif pick < 0.95:
                opcode = r.choice(list(ALL))
            else:
                opcode = r.randrange(256)
        if psn is None:
            psn = self.psn(kind, opcode)
        n = self.payload_len()
        payload = r.randbytes(n)
        pad = -n & 3 if r.random() < 0.9 else r.randrange(4)
        hdr = b"".join(self.ext(x, n) for x in ALL.get(opcode, ()))
        pkey = 0xFFFF if r.random() < 0.95 else r.getrandbits(16)
        t = roce.bth(opcode, qpn, psn, pad=pad, se=r.random() < 0.3,
                     ack_req=r.random() < 0.5, pkey=pkey)
        t = bytearray(t + hdr + payload + b"\0" * (-n & 3))
        if r.random() < 0.1:
            at = r.randrange(min(len(t), 12 + len(hdr)))
            t[at] = r.getrandbits(8)
        return bytes(t)

    def prelude(self, qpn):
        """For an RC QP as new: a valid read of the read-only MR at the
        expected PSN, then duplicates of it whose RETHs name the MR that
        may not be read: the first must be answered, the duplicates never
        with that MR's bytes."""
        r = self.rnd
        ro, none = self.info["mrs"]["ro"], self.info["mrs"]["none"]
        psn = self.info["rq_psn"]
        n = r.randrange(1, 4 * self.mtu)
        va = ro[0] + r.randrange(self.info["size"] - n)
        yield self.read(qpn, psn, va, ro[1], n)
        for _ in range(2):
            yield self.read(qpn, psn, none[0] + r.randrange(64), none[1], n)
            yield self.read(qpn, psn, none[0], ro[1], n)

    def responses(self, qpn, psn, n):
        """Read responses at the PSN of the QP's outstanding read of n
        bytes that carry more than n bytes, fewer, or more than the path
        MTU in a packet: none of it may land past the read's buffer."""
        r = self.rnd
        m = self.mtu
        aeth = struct.pack("!I", 0x1f << 24)
        full = -(-n // m)
        shapes = [
            [0x0d] + [0x0e] * (full - 2) + [0x0f],             # n rounded up to MTUs
            [0x0d] + [0x0e] * (full - 1) + [0x0f],             # one packet too many
            [0x10],                                             # one packet: too short
            [0x0d] + [0x0e] * (full + 2),                       # middles past the end
        ]
        ops = r.choice(shapes)
        for i, op in enumerate(ops):
            size = m + (4 if r.random() < 0.2 else 0)
            payload = r.randbytes(size)
            hdr = aeth if op in (0x0d, 0x0f, 0x10) else b""
            pad = -size & 3
            yield roce.bth(op, qpn, (psn + i) & 0xFFFFFF, pad=pad) + hdr + \
                payload + b"\0" * pad

    @staticmethod
    def read(qpn, psn, va, rkey, n):
        return roce.bth(0x0c, qpn, psn, ack_req=True) + struct.pack("!QII", va, rkey, n)

    def packets(self):
        """Yield (kind, transport) pairs: each RC QP's prelude, then
        single packets and runs."""
        r = self.rnd
        qps = self.info["qps"]
        for kind, qpn in qps:
            if kind == "rc":
                for t in self.prelude(qpn):
                    yield kind, t
        for qpn, psn, n in self.info["reads"]:
            for t in self.responses(qpn, psn, n):
                yield "rc", t
        while True:
            kind, qpn = r.choice(qps)
            if kind in RUNS and r.random() < 0.15:
                first, middle, last = r.choice(RUNS[kind])
                psn = self.psn(kind, first)
                ops = [first] + [middle] * r.randrange(3) + [last]
                for i, op in enumerate(ops):
                    yield kind, self.packet(kind, qpn, op, (psn + i) & 0xFFFFFF)
            else:
                yield kind, self.packet(kind, qpn)

    def frames(self):
        for _, t in self.packets():
            yield self.wire(t, 0xC000 | self.rnd.getrandbits(14))

    def wire(self, t, sport):
        """roce.frame(t, the cfg's MACs and IPv4 addresses, sport), the
        same bytes, from the parts __init__ made."""
        udp_len = len(t) + 12
        tot = struct.pack("!H", 20 + udp_len)
        s = self.ip_sum + 20 + udp_len
        s = (s & 0xFFFF) + (s >> 16)
        s = (s & 0xFFFF) + (s >> 16)
        ip = b"\x45\x00" + tot + self.ip_tail + struct.pack("!H", ~s & 0xFFFF) + \
            self.ip_addrs
        udp = struct.pack("!HHHH", sport, roce.ROCE_PORT, udp_len, 0)
        crc = zlib.crc32(b"\xff" * 8 + b"\x45\xff" + tot + self.mask_tail +
                         udp[:6] + b"\xff\xff" + t[:4] + b"\xff" + t[5:])
        return self.eth + ip + udp + t + struct.pack("<I", crc)

    def valid(self, kind, qpn):
        """A packet the QP would take, were its frame right: a Send Only
        at the expected PSN (UD: with the right Q_Key)."""
        r = self.rnd
        n = r.randrange(64)
        if kind == "ud":
            return roce.bth(0x64, qpn, 0, pad=-n & 3) + \
                struct.pack("!II", self.info["qkey"], 1) + r.randbytes(n) + \
                b"\0" * (-n & 3)
        if kind == "xrc":
            return roce.bth(0xa4, qpn, self.info["rq_psn"], pad=-n & 3) + \
                struct.pack("!I", self.info["xrc_srqs"][0]) + r.randbytes(n) + \
                b"\0" * (-n & 3)
        op = 0x04 if kind == "rc" else 0x24
        return roce.bth(op, qpn, self.info["rq_psn"], pad=-n & 3) + \
            r.randbytes(n) + b"\0" * (-n & 3)

    def base(self, kinds=None, src_ip=None, dst_ip=None, valid=0.5):
        """A whole frame with a right ICRC for a random QP (of kinds),
        whose transport is valid with the odds valid, else hostile."""
        r, c = self.rnd, self.cfg
        qps = [q for q in self.info["qps"] if kinds is None or q[0] in kinds]
        kind, qpn = r.choice(qps)
        t = self.valid(kind, qpn) if r.random() < valid else self.packet(kind, qpn)
        if src_ip is None and dst_ip is None:
            return self.wire(t, 0xC000 | r.getrandbits(14))
        return roce.frame(t, c["dst_mac"], c["src_mac"], src_ip or c["src_ip"],
                          dst_ip or c["dst_ip"], sport=0xC000 | r.getrandbits(14))

    def below(self, cls):
        """One frame of class cls (BELOW): a RoCEv2 frame whose Ethernet,
        IP or UDP layer lies. Offsets are an untagged IPv4 frame's: the
        IP header at 14, UDP at 34."""
        r, c = self.rnd, self.cfg
        f = bytearray(self.base())
        if cls in ("vlan", "vlan0"):
            vid = r.randrange(1, 4095) if cls == "vlan" else 0
            tag = struct.pack("!HH", 0x8100, r.randrange(8) << 13 | vid)
            if cls == "vlan" and r.random() < 0.2:
                # QinQ: an 802.1ad tag outside.
                tag = struct.pack("!HH", 0x88a8, r.randrange(1, 4095)) + tag
            return bytes(f[:12] + tag + f[12:])
        if cls == "ip_options":
            return self.with_options(f)
        if cls == "ip_fragment":
            return self.fragment(f)
        if cls == "not_ours":
            dst = r.choice(["10.77.0.99", c["src_ip"], "192.0.2.1", "239.1.2.3",
                            socket.inet_ntoa(struct.pack("!I", r.getrandbits(32)))])
            if dst == c["dst_ip"]:
                dst = "10.77.0.99"
            return self.base(dst_ip=dst)
        if cls == "v4mapped":
            # From B's IPv4-mapped address, to A's IPv6 GID (so that the
            # frame reaches the connected QPs, whose peer is B's IPv4 GID)
            # or to A's own IPv4-mapped address (no address of A's).
            dst = c["dst_ip6"] if r.random() < 0.7 else "::ffff:" + c["dst_ip"]
            # Valid transports: only the address may refuse them.
            return self.base(kinds=("rc", "uc"), src_ip="::ffff:" + c["src_ip"],
                             dst_ip=dst, valid=1)
        if cls == "udp_length":
            real = len(f) - 34
            f[38:40] = struct.pack("!H", r.choice(
                [0, r.randrange(1, 8), r.randrange(8, real), real + r.randrange(1, 64),
                 0xffff]))
            return bytes(f[:-4] + roce.icrc(f))
        if cls == "ip_length":
            return self.ip_length(f)
        if cls == "ip_checksum":
            f[24] ^= r.randrange(1, 256)
            return bytes(f)
        if cls == "udp_checksum":
            # Masked out of the ICRC: receivers ignore it.
            f[40:42] = struct.pack("!H", r.randrange(1, 0x10000))
            return bytes(f)
        if cls == "truncated":
            return bytes(f[:r.randrange(14, len(f))])
        raise ValueError(cls)

    def with_options(self, f):
        """The frame with IP options: NOPs, Router Alert, an end of list,
        or garbage, with the IP checksum, lengths and ICRC right."""
        r = self.rnd
        words = r.randrange(1, 11)
        opts = r.choice([b"\x01" * 4 * words, b"\x94\x04\x00\x00" + b"\x01" * 4 * (words - 1),
                         b"\x00" * 4 * words, r.randbytes(4 * words)])
        ip = bytearray(f[14:34] + opts)
        ip[0] = 0x45 + words
        ip[2:4] = struct.pack("!H", len(f) - 14 + len(opts))
        f = f[:14] + set_csum(ip) + f[34:]
        return bytes(f[:-4] + roce.icrc(f))

    def fragment(self, f):
        """A first fragment, a later one, or both (which the stack joins)
        of the frame's UDP datagram: none of them is a RoCEv2 frame."""
        r = self.rnd
        data = bytes(f[34:])
        cut = 8 * r.randrange(1, max(2, (len(data) - 1) // 8 + 1))
        ident = r.getrandbits(16)
        hdr = bytes(f[14:34])

        def frag(part, off, more):
            ip = bytearray(hdr)
            ip[2:4] = struct.pack("!H", 20 + len(part))
            ip[4:6] = struct.pack("!H", ident)
            ip[6:8] = struct.pack("!H", (0x2000 if more else 0) | off // 8)
            return bytes(f[:14] + set_csum(ip) + part)

        first = frag(data[:cut], 0, True)
        later = frag(data[cut:], cut, r.random() < 0.3)
        pick = r.random()
        if pick < 0.4:
            return [first]
        if pick < 0.8:
            return [later]
        return [first, later]

    def ip_length(self, f):
        """A wrong IP total length or header length (checksum right), or
        link-layer padding after a right one (taken, as Ethernet pads)."""
        r = self.rnd
        ip = bytearray(f[14:34])
        real = len(f) - 14
        pick = r.random()
        if pick < 0.15:
            return bytes(f + r.randbytes(r.randrange(1, 40)))
        if pick < 0.7:
            ip[2:4] = struct.pack("!H", r.choice(
                [0, r.randrange(1, 28), r.randrange(28, real), real + r.randrange(1, 64),
                 0xffff]))
        else:
            ip[0] = 0x40 | r.choice([0, 1, 4, 6, 7, 15])
        return bytes(f[:14] + set_csum(ip) + f[34:])


def set_csum(ip):
    ip = bytearray(ip)
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", roce.ipv4_checksum(bytes(ip)))
    return ip


class Sender:
    """Frames out of a packet socket in batches: sendmmsg() through ctypes
    (one system call per BATCH frames, which under TCG is most of the
    cost), send() one by one where libc has none. A full qdisc
    (ENOBUFS) is waited out, so every frame leaves."""
    BATCH = 256

    def __init__(self, iface):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.s.bind((iface, 0))
        try:
            self.libc = ctypes.CDLL(None, use_errno=True)
            self.mmsg = self.libc.sendmmsg
        except (OSError, AttributeError):
            self.mmsg = None
        self.pending = []

    def add(self, frame):
        self.pending.append(frame)
        if len(self.pending) >= self.BATCH:
            self.flush()

    def flush(self):
        frames, self.pending = self.pending, []
        if self.mmsg is None:
            for f in frames:
                self.retry(lambda: self.s.send(f))
            return
        n = len(frames)
        iov = (Iovec * n)()
        msgs = (Mmsghdr * n)()
        for i, f in enumerate(frames):
            iov[i].base = ctypes.cast(ctypes.c_char_p(f), ctypes.c_void_p)
            iov[i].len = len(f)
            msgs[i].hdr.iov = ctypes.pointer(iov[i])
            msgs[i].hdr.iovlen = 1
        done = 0
        while done < n:
            sent = self.mmsg(self.s.fileno(), ctypes.byref(msgs, done * ctypes.sizeof(Mmsghdr)),
                             n - done, 0)
            if sent < 0:
                err = ctypes.get_errno()
                if err not in (errno.ENOBUFS, errno.EAGAIN, errno.EINTR):
                    raise OSError(err, os.strerror(err))
                time.sleep(0.001)
                continue
            done += sent

    @staticmethod
    def retry(fn):
        while True:
            try:
                return fn()
            except OSError as ex:
                if ex.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise
                time.sleep(0.001)


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class Msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(Iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class Mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", Msghdr), ("len", ctypes.c_uint)]


def send(iface, cfg):
    """cfg["phase"] "transport" (the default) sends count transport
    frames; a class of BELOW sends count frames of it (a fragment pair
    counts as one). The random stream is the seed's and the phase's.
    Returns what was sent, as a dict."""
    phase = cfg.get("phase", "transport")
    if phase != "transport":
        cfg = dict(cfg, seed=f"{cfg['seed']}:{phase}")
    fz = Fuzzer(cfg)
    out = Sender(iface)
    sent = frames = 0
    opcodes = set()
    t0 = time.monotonic()
    if phase == "transport":
        for f in fz.frames():
            if sent == cfg["count"]:
                break
            out.add(f)
            sent += 1
            opcodes.add(f[42])
        frames = sent
    else:
        while sent < cfg["count"]:
            fs = fz.below(phase)
            for f in fs if isinstance(fs, list) else [fs]:
                out.add(f)
                frames += 1
            sent += 1
    out.flush()
    dt = time.monotonic() - t0
    return {"phase": phase, "sent": sent, "frames": frames, "opcodes": len(opcodes),
            "seconds": round(dt, 3), "per_second": round(frames / dt) if dt else None}


def serve(iface, req, res):
    """send() for each request read from the FIFO req; its answer goes to
    the FIFO res. Each open waits for the other side: the request's writer
    and the answer's reader."""
    while True:
        with open(req, encoding="ascii") as f:
            cfg = json.loads(f.read())
        if cfg.get("phase") == "quit":
            return
        try:
            out = send(iface, cfg)
        except Exception as e:  # the test shows it; the loop goes on
            out = {"error": f"{type(e).__name__}: {e}"}
        with open(res, "w", encoding="ascii") as f:
            f.write(json.dumps(out) + "\n")


def watch(iface, ready, stop, secrets):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(roce.ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    open(ready, "w").close()
    frames, leaks, opcodes = 0, 0, {}
    while not os.path.exists(stop):
        try:
            f, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        key = roce.roce_key(f)
        if key is None or addr[2] == socket.PACKET_OUTGOING:
            continue
        frames += 1
        opcodes[key[1]] = opcodes.get(key[1], 0) + 1
        if any(x in f for x in secrets):
            leaks += 1
    print(json.dumps({"frames": frames, "leaks": leaks,
                      "opcodes": {f"0x{k:02x}": v for k, v in sorted(opcodes.items())}}))


def main(argv):
    if len(argv) == 4 and argv[1] == "send":
        print(json.dumps(send(argv[2], json.loads(argv[3]))))
    elif len(argv) == 5 and argv[1] == "serve":
        serve(argv[2], argv[3], argv[4])
    elif len(argv) >= 5 and argv[1] == "watch":
        watch(argv[2], argv[3], argv[4], [x.encode() for x in argv[5:]])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
