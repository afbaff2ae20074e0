# SPDX-License-Identifier: GPL-2.0
"""Hostile RoCEv2 frames with valid ICRCs, aimed at live QPs.

Run from the repo top as python3 -m tools.testing.guest.net.fuzz (it
imports lib/roce.py from the package):

  fuzz send IFACE JSON         send frames described by JSON (see below),
                               print one JSON line of what was sent
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
import json
import os
import random
import socket
import struct
import sys

from tools.testing.bench.lib import roce

EXT = {"reth": 16, "aeth": 4, "imm": 4, "ieth": 4, "atomic": 28,
       "atomicack": 8, "deth": 8}
RC = {0x00: (), 0x01: (), 0x02: (), 0x03: ("imm",), 0x04: (), 0x05: ("imm",),
      0x06: ("reth",), 0x07: (), 0x08: (), 0x09: ("imm",), 0x0a: ("reth",),
      0x0b: ("reth", "imm"), 0x0c: ("reth",), 0x0d: ("aeth",), 0x0e: (),
      0x0f: ("aeth",), 0x10: ("aeth",), 0x11: ("aeth",),
      0x12: ("aeth", "atomicack"), 0x13: ("atomic",), 0x14: ("atomic",),
      0x16: ("ieth",), 0x17: ("ieth",)}
UC = {0x20 | op: ext for op, ext in RC.items() if op <= 0x0b}
UD = {0x64: ("deth",), 0x65: ("deth", "imm")}
ALL = {**RC, **UC, **UD}
OPS = {"rc": RC, "uc": UC, "ud": UD}
RESPONSES = set(range(0x0d, 0x13))
# Multi-packet messages: first, middle, last opcodes per kind.
RUNS = {"rc": [(0x00, 0x01, 0x02), (0x06, 0x07, 0x08), (0x06, 0x07, 0x09),
               (0x0d, 0x0e, 0x0f)],
        "uc": [(0x20, 0x21, 0x22), (0x26, 0x27, 0x28), (0x26, 0x27, 0x29)]}


class Fuzzer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.info = cfg["info"]
        self.rnd = random.Random(cfg["seed"])
        self.mtu = cfg["mtu"]

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
        if name == "ieth" and r.random() < 0.5:
            return struct.pack("!I", self.key())
        return bytes(r.getrandbits(8) for _ in range(EXT[name]))

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
        payload = bytes(r.getrandbits(8) for _ in range(n))
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
            payload = bytes(r.getrandbits(8) for _ in range(size))
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
        c = self.cfg
        for _, t in self.packets():
            yield roce.frame(t, c["dst_mac"], c["src_mac"], c["src_ip"], c["dst_ip"],
                             sport=0xC000 | self.rnd.getrandbits(14))


def send(iface, cfg):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    sent = 0
    opcodes = {}
    for f in Fuzzer(cfg).frames():
        if sent == cfg["count"]:
            break
        s.send(f)
        sent += 1
        op = f[42]
        opcodes[op] = opcodes.get(op, 0) + 1
    print(json.dumps({"sent": sent, "opcodes": len(opcodes)}))


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
        send(argv[2], json.loads(argv[3]))
    elif len(argv) >= 5 and argv[1] == "watch":
        watch(argv[2], argv[3], argv[4], [x.encode() for x in argv[5:]])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
