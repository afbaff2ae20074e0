# SPDX-License-Identifier: GPL-2.0
"""sroce's wire layer: what its rx handler takes from the netdev and what it
leaves to the stack, netdevs whose rx handler is taken, and hostile frames.

Frames are built here by hand (tools/testing/bench/lib/roce.py, which
computes the ICRC itself) and sent raw from guest B. Only what the wire
layer decides is asserted: a frame it accepts is counted in rx_packets,
whatever the transport then makes of it.
"""
import struct

import pytest

from tools.testing.bench.lib import roce

TIMEOUT = 240
SROCE_ONLY = "exercises sroce's rx handler"
COUNTERS = ("rx_packets", "rx_bad_header", "rx_bad_icrc")


def counters(g, dev):
    """The device's counters, by name, from `rdma statistic`."""
    words = g.run(f"rdma statistic show link {dev}/1").out.split()
    return {words[i]: int(words[i + 1]) for i in range(len(words) - 1)
            if words[i + 1].isdigit() and words[i].islower()}


def send(bench, frames):
    """Send raw frames from B's eth0, one process for all of them."""
    tool = f"{bench.top}/tools/testing/bench/lib/roce.py"
    bench.b.run(f"/usr/bin/python3 {tool} send eth0 " +
                " ".join(f.hex() for f in frames))


def wait_counts(g, dev, want):
    """Wait until the counters named in want reach exactly those values."""
    def now():
        c = counters(g, dev)
        return {k: c[k] for k in want}
    g.wait_for("true", timeout=1)
    for _ in range(40):
        got = now()
        if got == want:
            return
        g.run("sleep 0.25")
    assert got == want, f"counters {got}, expected {want}"


@pytest.mark.sroce(SROCE_ONLY)
def test_ordinary_traffic_still_flows(bench):
    """ARP, ICMP, TCP and UDP to other ports pass the rx handler."""
    a, b = bench.a, bench.b
    dev = bench.attach(a)
    a.run("ip neigh flush dev eth0")
    a.run(f"ping -c 3 -i 0.2 -W 2 {b.ip}", timeout=30)
    b.run(f"ping -6 -c 3 -i 0.2 -W 2 {a.ip6}", timeout=30)
    job = a.spawn("exec python3 -c 'import socket; s=socket.socket(); "
                  "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
                  "s.bind((\"0.0.0.0\", 7777)); s.listen(); c,_=s.accept(); "
                  "print(c.recv(100).decode())'", timeout=60)
    a.wait_for("ss -ltn | grep -q ':7777 '", timeout=30)
    b.run(f"echo over-tcp > /dev/tcp/{a.ip}/7777")
    assert job.wait(30).out.strip() == "over-tcp"
    job = a.spawn("exec python3 -c 'import socket; "
                  "s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); "
                  "s.bind((\"::\", 4792)); print(s.recv(100).decode())'",
                  timeout=60)
    a.wait_for("ss -lun | grep -q ':4792 '", timeout=30)
    b.run(f"echo over-udp > /dev/udp/{a.ip6}/4792")
    assert job.wait(30).out.strip() == "over-udp"
    c = counters(a, dev)
    assert all(c[k] == 0 for k in COUNTERS), c


@pytest.mark.sroce(SROCE_ONLY)
def test_bridge_port_refused(bench):
    """A netdev whose rx handler is taken cannot carry sroce, and says why;
    the bridge itself can."""
    a = bench.a
    a.run("ip link add br0 type bridge && ip link set eth0 master br0 && "
          "ip link set br0 up")
    a.kmsg()
    r = a.run("rdma link add sroce0 type sroce netdev eth0", check=False)
    assert r.rc != 0, r.out
    assert (r.err + r.out).strip() == "error: Device or resource busy", r.err
    texts = [rec["text"] for rec in a.kmsg() if rec["level"] == 4]
    assert any("sroce: cannot attach: the receive handler is taken" in t
               for t in texts), texts
    a.run("test -z \"$(rdma link show)\"")
    bench.attach(a, "sroce1", netdev="br0")
    a.run("rdma link delete sroce1")
    a.run("ip link set eth0 nomaster")

    # And the other way round: sroce holds the rx handler against a bridge.
    bench.attach(a, "sroce0")
    r = a.run("ip link set eth0 master br0", check=False)
    assert r.rc != 0 and "busy" in r.err, r.err
    # Detached, the netdev is free for a bridge again.
    a.run("rdma link delete sroce0")
    a.run("ip link set eth0 master br0 && ip link set eth0 nomaster")


def good(bench, v6=False, opcode=0x04, payload=b"0123456789abcdef",
         **bth):
    """A valid frame from B to A; pad sets PadCnt, extra the bytes after the
    payload (both default to what the payload needs)."""
    a, b = bench.a, bench.b
    pad = -len(payload) & 3
    extra = bth.pop("extra", pad)
    t = roce.bth(opcode, 0x123, 1, pad=bth.pop("pad", pad), **bth) + \
        payload + b"\0" * extra
    src, dst = (b.ip6, a.ip6) if v6 else (b.ip, a.ip)
    return roce.frame(t, a.mac, b.mac, src, dst)


def tagged(frame, vid, prio=3):
    """The frame with an 802.1Q tag."""
    return frame[:12] + struct.pack("!HH", 0x8100, prio << 13 | vid) + \
        frame[12:]


def v4_field(frame, off, data):
    """Overwrite bytes of the IPv4 header and fix its checksum."""
    f = bytearray(frame)
    f[14 + off:14 + off + len(data)] = data
    f[24:26] = b"\0\0"
    f[24:26] = struct.pack("!H", roce.ipv4_checksum(bytes(f[14:34])))
    return bytes(f)


@pytest.mark.sroce(SROCE_ONLY)
def test_hostile_frames_dropped_and_counted(bench):
    a, b = bench.a, bench.b
    # virtio-net's VLAN filter lets priority-tagged frames in only once
    # 8021q has registered VLAN 0 on eth0.
    a.run("modprobe 8021q")
    dev = bench.attach(a)
    f = good(bench)
    bad_icrc = [
        f[:-1] + bytes([f[-1] ^ 1]),
        good(bench, v6=True)[:-4] + b"\0\0\0\0",
        # A payload byte changed after the ICRC was computed.
        f[:60] + bytes([f[60] ^ 0x80]) + f[61:],
        # resv8a (byte 4 of the BTH) is masked, but the QPN after it is not.
        f[:47] + bytes([f[47] ^ 1]) + f[48:],
    ]
    udp_short = bytearray(f[:34 + 8 + 6])
    udp_short[38:40] = struct.pack("!H", 14)
    bad_header = [
        # Too short for a BTH and an ICRC.
        v4_field(bytes(udp_short), 2, struct.pack("!H", 20 + 14)),
        # IPv4 header checksum wrong.
        f[:24] + bytes([f[24] ^ 0xff]) + f[25:],
        # IP total length past the end of the frame.
        v4_field(f, 2, struct.pack("!H", len(f) - 14 + 40)),
        # UDP length disagreeing with IP's.
        f[:38] + struct.pack("!H", len(f) - 34 - 4) + f[40:],
        # Valid ICRC, but: an opcode sroce does not run (RC RESYNC),
        good(bench, opcode=0x15),
        # TVer 1,
        good(bench, tver=1),
        # payload on an ACK,
        good(bench, opcode=0x11, payload=b"\0" * 8),
        # a pad bigger than what follows the headers,
        good(bench, payload=b"", pad=3, extra=0),
        # a length not a multiple of four,
        good(bench, payload=b"abcdefg", pad=0, extra=0),
        # the same over IPv6.
        good(bench, v6=True, opcode=0x0c, payload=b"\0" * 12),
    ]
    # resv8a itself is masked: changing it keeps the ICRC good.
    resv8a = f[:46] + b"\xff" + f[47:]
    accepted = [
        f,
        resv8a,
        good(bench, v6=True),
        # Link-layer padding after the ICRC is trimmed off.
        good(bench, payload=b"")[:] + b"\0\0\0\0\0\0",
        good(bench, opcode=0x11, payload=b"\0" * 4),
        # A CNP (drivers/cc.c), to no QP here.
        good(bench, opcode=0x81, payload=b"\0" * 16),
        # A priority tag (VLAN 0), as RoCE with PFC sends, is no VLAN.
        tagged(f, 0),
    ]
    # Not RoCEv2 for this host: left to the stack, counted nowhere.
    other_port = bytearray(f)
    other_port[36:38] = struct.pack("!H", 4792)
    fragment = v4_field(f, 6, struct.pack("!H", 0x2000))
    other_host = bytes.fromhex("525400770099") + f[6:]
    broadcast = b"\xff" * 6 + f[6:]
    # A VLAN A has no netdev for.
    vlan = tagged(f, 100)
    passed = [bytes(other_port), fragment, other_host, broadcast, vlan]

    before = counters(a, dev)
    send(bench, bad_icrc + bad_header + accepted + passed)
    wait_counts(a, dev, {
        "rx_bad_icrc": before["rx_bad_icrc"] + len(bad_icrc),
        "rx_bad_header": before["rx_bad_header"] + len(bad_header),
        "rx_packets": before["rx_packets"] + len(accepted),
    })
    # The stack is none the worse for it.
    b.run(f"ping -c 2 -i 0.2 -W 2 {a.ip}", timeout=30)


# A's listener for RoCEv2 datagrams at another of its addresses: IPv6
# RoCEv2 has no UDP checksum, which a socket takes only if it says so
# (UDP_NO_CHECK6_RX).
OTHER_V4, OTHER_V6 = "10.77.0.9", "fd77::9"
LISTENER = f"""
import socket
v4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v4.bind(("{OTHER_V4}", 4791))
v6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
v6.setsockopt(socket.IPPROTO_UDP, 102, 1)
v6.bind(("{OTHER_V6}", 4791))
open("/tmp/bound", "w").close()
for s in (v4, v6):
    s.settimeout(60)
    print(s.recv(4096).hex(), flush=True)
"""


@pytest.mark.sroce(SROCE_ONLY)
def test_frames_to_other_addresses_go_to_the_stack(bench):
    """RoCEv2 to an address of the host's that is no GID of the device (a
    dummy netdev's, which the host accepts on eth0 too) is the stack's: a
    UDP socket there gets it byte for byte, and rx_not_ours counts it;
    RoCEv2 to A's own addresses stays sroce's."""
    a, b = bench.a, bench.b
    dev = bench.attach(a)
    a.run(f"ip link add d0 type dummy && ip link set d0 up && "
          f"ip addr add {OTHER_V4}/32 dev d0 && "
          f"ip addr add {OTHER_V6}/128 dev d0 nodad")
    a.run("rm -f /tmp/bound")
    job = a.spawn(f"exec /usr/bin/python3 -c '{LISTENER}'", timeout=120)
    a.wait_for("test -e /tmp/bound", timeout=30)
    t = roce.bth(0x04, 0x123, 1) + b"0123456789abcdef"
    v4 = roce.frame(t, a.mac, b.mac, b.ip, OTHER_V4)
    v6 = roce.frame(t, a.mac, b.mac, b.ip6, OTHER_V6)
    before = counters(a, dev)
    send(bench, [v4, v6])
    got = job.wait(60).out.split()
    assert got == [v4[14 + 20 + 8:].hex(), v6[14 + 40 + 8:].hex()], got
    ours = [good(bench), good(bench, v6=True)]
    send(bench, ours)
    wait_counts(a, dev, {
        "rx_not_ours": before["rx_not_ours"] + 2,
        "rx_packets": before["rx_packets"] + len(ours),
    })


@pytest.mark.sroce(SROCE_ONLY)
def test_random_frames(bench):
    """Frames of random bytes after valid IP and UDP headers: each one is
    dropped and counted, none reaches the transport."""
    a = bench.a
    dev = bench.attach(a)
    rnd = __import__("random").Random(4791)
    frames = []
    for i in range(200):
        n = rnd.randrange(0, 300)
        body = bytes(rnd.randrange(256) for _ in range(n))
        fr = roce.frame(body, a.mac, bench.b.mac, bench.b.ip, a.ip,
                        fix_icrc=False)
        frames.append(fr[:-4] + bytes(rnd.randrange(256) for _ in range(4)))
    before = counters(a, dev)
    for i in range(0, len(frames), 50):
        send(bench, frames[i:i + 50])
    want = before["rx_bad_icrc"] + before["rx_bad_header"] + len(frames)
    for _ in range(40):
        c = counters(a, dev)
        if c["rx_bad_icrc"] + c["rx_bad_header"] == want:
            break
        a.run("sleep 0.25")
    assert c["rx_bad_icrc"] + c["rx_bad_header"] == want, (c, want)
    assert c["rx_packets"] == before["rx_packets"], c


@pytest.mark.sroce(SROCE_ONLY)
def test_on_a_vlan(bench):
    """sroce on a VLAN netdev takes that VLAN's frames, and only those."""
    a, b = bench.a, bench.b
    a.run("ip link add link eth0 name eth0.77 type vlan id 77 && "
          "ip addr add 10.78.0.1/24 dev eth0.77 && ip link set eth0.77 up")
    b.run("ip link add link eth0 name eth0.77 type vlan id 77 && "
          "ip addr add 10.78.0.2/24 dev eth0.77 && ip link set eth0.77 up")
    dev = bench.attach(a, "sroce0", netdev="eth0.77")
    bench.attach(a, "sroce1", netdev="eth0")
    a.run("ping -c 2 -i 0.2 -W 2 10.78.0.2", timeout=30)
    t = roce.bth(0x04, 0x123, 1) + b"0123456789abcdef"
    on_vlan = tagged(roce.frame(t, a.mac, b.mac, "10.78.0.2", "10.78.0.1"), 77)
    untagged = roce.frame(t, a.mac, b.mac, b.ip, a.ip)
    bad = on_vlan[:-1] + bytes([on_vlan[-1] ^ 1])
    send(bench, [on_vlan, on_vlan, bad, untagged])
    wait_counts(a, dev, {"rx_packets": 2, "rx_bad_icrc": 1})
    wait_counts(a, "sroce1", {"rx_packets": 1, "rx_bad_icrc": 0})


@pytest.mark.sroce(SROCE_ONLY)
def test_on_a_vlan_above_a_device(bench):
    """The device on eth0 takes eth0.77's frames (the core gives it that
    VLAN's GIDs) until a device is attached to eth0.77 itself, which takes
    them over, and gives them back when it goes."""
    a, b = bench.a, bench.b
    for g, ip in ((a, "10.78.0.1"), (b, "10.78.0.2")):
        g.run("ip link add link eth0 name eth0.77 type vlan id 77 && "
              f"ip addr add {ip}/24 dev eth0.77 && ip link set eth0.77 up")
    bench.attach(a, "sroce1", netdev="eth0")
    a.run("ping -c 2 -i 0.2 -W 2 10.78.0.2", timeout=30)
    t = roce.bth(0x04, 0x123, 1) + b"0123456789abcdef"
    on_vlan = tagged(roce.frame(t, a.mac, b.mac, "10.78.0.2", "10.78.0.1"), 77)
    send(bench, [on_vlan])
    wait_counts(a, "sroce1", {"rx_packets": 1})

    bench.attach(a, "sroce0", netdev="eth0.77")
    send(bench, [on_vlan, on_vlan])
    wait_counts(a, "sroce0", {"rx_packets": 2})
    wait_counts(a, "sroce1", {"rx_packets": 1})

    bench.detach(a, "sroce0")
    send(bench, [on_vlan])
    wait_counts(a, "sroce1", {"rx_packets": 2})
