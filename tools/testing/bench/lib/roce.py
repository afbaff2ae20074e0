#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""RoCEv2 frames by hand, for the guests: build them (with an ICRC computed
here, independently of any kernel), send them raw on a netdev, and capture
the ones on the wire. Standard library only.

  roce.py sniff IFACE STOPFILE [PER_KEY]   print captured RoCEv2 frames as
                                            JSON lines until STOPFILE exists
  roce.py send IFACE HEX...                 send each hex frame once
  roce.py ask IFACE SECONDS HEX...          send each hex frame and print,
                                            as a JSON line, the first RoCEv2
                                            frame to come back (null if none
                                            does within SECONDS)
"""
import json
import os
import socket
import struct
import sys
import time
import zlib

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
ROCE_PORT = 4791


def ipv4_checksum(hdr):
    s = sum(struct.unpack(f"!{len(hdr) // 2}H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def masked(frame):
    """The bytes an ICRC covers, of an Ethernet frame (no VLAN tag) without
    its last four bytes: the IP, UDP and BTH headers with their variant
    fields as ones, then the rest; and the BTH's offset in them."""
    proto = struct.unpack("!H", frame[12:14])[0]
    ip = bytearray(frame[14:])
    if proto == ETH_P_IP:
        iplen = (ip[0] & 0xF) * 4
        ip[1] = 0xFF                    # TOS
        ip[8] = 0xFF                    # TTL
        ip[10:12] = b"\xff\xff"         # header checksum
    else:
        iplen = 40
        ip[0] |= 0x0F                   # traffic class, flow label
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF                    # hop limit
    ip[iplen + 6:iplen + 8] = b"\xff\xff"   # UDP checksum
    ip[iplen + 12] = 0xFF                   # BTH resv8a
    return bytes(ip[:-4]), iplen + 8


def icrc(frame):
    """The ICRC of an Ethernet frame (no VLAN tag) without its last four
    bytes: CRC32 over eight bytes of ones and the masked rest (IBTA
    A17.3.3)."""
    body, _ = masked(frame)
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + body) & 0xFFFFFFFF)


def rxe_flush_icrc(frame):
    """A FLUSH frame with the ICRC rdma_rxe (6.2 on, 6.12 still) computes
    for FLUSH, and only takes: over the masked headers, then once more over
    everything from the BTH on, unmasked, as if it were payload
    (docs/INTEROP.md)."""
    body, bth = masked(frame)
    crc = zlib.crc32(b"\xff" * 8 + body)
    crc = zlib.crc32(frame[14 + bth:-4], crc)
    return frame[:-4] + struct.pack("<I", crc & 0xFFFFFFFF)


def bth(opcode, qpn, psn, pad=0, se=False, ack_req=False, tver=0,
        pkey=0xFFFF):
    flags = (0x80 if se else 0) | (pad << 4) | tver
    return struct.pack("!BBHII", opcode, flags, pkey, qpn & 0xFFFFFF,
                       (psn & 0xFFFFFF) | (0x80000000 if ack_req else 0))


def frame(transport, dst_mac, src_mac, src_ip, dst_ip, sport=0xC000,
          fix_icrc=True):
    """An Ethernet/IP/UDP frame around transport (BTH onwards, without the
    ICRC); the ICRC is appended (right, or four zero bytes)."""
    v6 = ":" in src_ip
    udp_len = 8 + len(transport) + 4
    udp = struct.pack("!HHHH", sport, ROCE_PORT, udp_len, 0)
    if v6:
        ip = struct.pack("!IHBB", 0x60000000, udp_len, 17, 64) + \
            socket.inet_pton(socket.AF_INET6, src_ip) + \
            socket.inet_pton(socket.AF_INET6, dst_ip)
        proto = ETH_P_IPV6
    else:
        ip = bytearray(struct.pack("!BBHHHBBH", 0x45, 0, 20 + udp_len, 0,
                                   0x4000, 64, 17, 0) +
                       socket.inet_aton(src_ip) + socket.inet_aton(dst_ip))
        ip[10:12] = struct.pack("!H", ipv4_checksum(bytes(ip)))
        ip = bytes(ip)
        proto = ETH_P_IP
    eth = mac(dst_mac) + mac(src_mac) + struct.pack("!H", proto)
    f = eth + ip + udp + transport + b"\0\0\0\0"
    return f[:-4] + icrc(f) if fix_icrc else f


def mac(text):
    return bytes(int(x, 16) for x in text.split(":"))


def roce_key(f):
    """(ip version, opcode, pad) of a RoCEv2 frame, or None."""
    if len(f) < 14:
        return None
    proto = struct.unpack("!H", f[12:14])[0]
    if proto == ETH_P_IP and len(f) >= 34 and f[23] == 17:
        off, ver = 14 + (f[14] & 0xF) * 4, 4
    elif proto == ETH_P_IPV6 and len(f) >= 54 and f[20] == 17:
        off, ver = 54, 6
    else:
        return None
    if len(f) < off + 8 + 12 or \
            struct.unpack("!H", f[off + 2:off + 4])[0] != ROCE_PORT:
        return None
    return ver, f[off + 8], (f[off + 9] >> 4) & 3


def sniff(iface, stopfile, per_key=2):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    seen = {}
    while not os.path.exists(stopfile):
        try:
            f, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        key = roce_key(f)
        if key is None or seen.get(key, 0) >= per_key:
            continue
        seen[key] = seen.get(key, 0) + 1
        print(json.dumps({"t": time.time(), "ver": key[0], "opcode": key[1],
                          "pad": key[2], "dir": addr[2], "hex": f.hex()}),
              flush=True)


def send(iface, frames):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    for f in frames:
        s.send(f)


def ask(iface, seconds, frames):
    """Each frame in turn, and the first RoCEv2 frame that comes in after
    it (the socket listens before the first is sent: none is missed)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    for f in frames:
        s.send(f)
        answer = None
        deadline = time.monotonic() + seconds
        while answer is None and time.monotonic() < deadline:
            s.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                got, addr = s.recvfrom(65535)
            except socket.timeout:
                break
            if addr[2] != socket.PACKET_OUTGOING and roce_key(got):
                answer = got.hex()
        print(json.dumps(answer), flush=True)


def main(argv):
    if argv[1] == "sniff":
        sniff(argv[2], argv[3], int(argv[4]) if len(argv) > 4 else 2)
    elif argv[1] == "send":
        send(argv[2], [bytes.fromhex(h) for h in argv[3:]])
    elif argv[1] == "ask":
        ask(argv[2], float(argv[3]), [bytes.fromhex(h) for h in argv[4:]])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
