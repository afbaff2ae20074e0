"""Count the RoCEv2 frames a guest's netdev sends and receives (run in a
guest, as root, by tools/testing/guest/test_perftest.py::test_wire_format):

  python3 tools/testing/bench/lib/roce_sniff.py IFACE READY_FILE STOP_FILE

Touches READY_FILE once it captures, stops when STOP_FILE exists (checked
every 0.2 s), then prints one JSON object: per IP version ("4", "6") the
frames to or from UDP port 4791, and per BTH opcode the frames and the
sizes of their RoCE payload (UDP payload less BTH, the opcode's extended
headers and the ICRC) and how many distinct (destination QP, PSN) they
carry (a retransmission repeats one), and how many frames the socket dropped, so a test
can check the family, the path MTU and the packet count on the wire
whatever the driver. A packet socket sees what the netdev sends
and receives, so it works for drivers that bypass the UDP stack.
"""
import json
import os
import select
import socket
import sys
import time

ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33
SOL_PACKET, PACKET_STATISTICS = 263, 6
ROCEV2_PORT = 4791
BTH, ICRC = 12, 4
# Extended header bytes after the BTH, by opcode (IBTA 9.2/9.3), for the
# RC and UC opcodes perftest uses.
EXT = {
    0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,      # RC send
    0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0a: 16, 0x0b: 20,   # RC write
    0x0c: 16, 0x0d: 4, 0x0e: 0, 0x0f: 4, 0x10: 4, 0x11: 4,     # RC read, ack
    0x12: 12, 0x13: 28,                                         # atomic ack, atomic
    0x14: 28,
    0x20: 0, 0x21: 0, 0x22: 0, 0x23: 4, 0x24: 0, 0x25: 4,      # UC send
    0x26: 16, 0x27: 0, 0x28: 0, 0x29: 4, 0x2a: 16, 0x2b: 20,   # UC write
    0x64: 8, 0x65: 12,                                          # UD send (DETH)
}


def roce(frame):
    """(ip version, opcode, RoCE payload bytes) of a RoCEv2 frame, else None."""
    if len(frame) < 14:
        return None
    etype = int.from_bytes(frame[12:14], "big")
    if etype == 0x0800:
        ihl = (frame[14] & 0x0f) * 4
        if frame[23] != 17:
            return None
        udp, ver = 14 + ihl, "4"
    elif etype == 0x86dd:
        if frame[20] != 17:
            return None
        udp, ver = 14 + 40, "6"
    else:
        return None
    if len(frame) < udp + 8 + BTH or int.from_bytes(frame[udp + 2:udp + 4], "big") != ROCEV2_PORT:
        return None
    length = int.from_bytes(frame[udp + 4:udp + 6], "big")
    opcode = frame[udp + 8]
    payload = length - 8 - BTH - EXT.get(opcode, 0) - ICRC
    # The pad count (BTH byte 1, bits 5:4) pads the payload to 4 bytes.
    payload -= (frame[udp + 9] >> 4) & 3
    bth = frame[udp + 8:udp + 8 + BTH]
    dqp, psn = int.from_bytes(bth[5:8], "big"), int.from_bytes(bth[9:12], "big")
    return ver, opcode, payload, (dqp, psn)


def main():
    iface, ready, stop = sys.argv[1:4]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    # Past rmem_max (root may): a TCG guest's Python falls behind bursts.
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 1 << 25)
    s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)  # zero the counters
    open(ready, "w").close()
    counts = {"4": 0, "6": 0}
    ops = {}
    deadline = time.monotonic() + 600
    while not os.path.exists(stop) and time.monotonic() < deadline:
        r, _, _ = select.select([s], [], [], 0.2)
        if not r:
            continue
        while True:
            try:
                frame = s.recv(65536, socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            got = roce(frame)
            if got is None:
                continue
            ver, opcode, payload, qp_psn = got
            counts[ver] += 1
            o = ops.setdefault(f"0x{opcode:02x}", {"frames": 0, "payloads": {}, "psns": set()})
            o["frames"] += 1
            o["payloads"][payload] = o["payloads"].get(payload, 0) + 1
            o["psns"].add(qp_psn)
    for o in ops.values():
        o["psns"] = len(o["psns"])
    # struct tpacket_stats: packets, drops (since the previous read).
    drops = int.from_bytes(s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)[4:8], "little")
    print(json.dumps({"frames": counts, "opcodes": ops, "dropped": drops}))


if __name__ == "__main__":
    main()
