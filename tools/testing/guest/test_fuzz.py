# SPDX-License-Identifier: GPL-2.0
"""Hostile frames aimed at live QPs: the transport, not the wire layer.

Guest A holds RC, UC and UD QPs in RTS with receives posted and RC
requests of its own outstanding, and three MRs (verbs/target.py): one
remotely readable only, one with no remote access, one remotely writable
whose rkey is never told. Guest B, with no RDMA device, sends frames with
valid ICRCs and transport headers chosen to hurt (net/fuzz.py): every
opcode for every QP type and random ones, PSNs in and out of the window,
RETHs and AtomicETHs on the two told keys at and past their MRs' edges,
lengths from zero past the MTU, lying pads, AETHs of every syndrome,
runs of first/middle/last packets, one byte of ten frames' headers
changed. Each round starts with a valid read of the read-only MR on every
RC QP and duplicates of it whose RETHs name the unreadable MR, and with
read responses to the target's own outstanding reads that carry more
than the read's buffer holds (which must not change past it). Between
rounds, the QPs the last one put in the error state start again from
RESET, so every round meets live QPs. A packet socket on B watches what
A answers.

Afterwards: no kernel warning (the bench's kmsg gate), all three MRs hold
their patterns, no frame from A carried the unreadable MRs' bytes, the
transport both NAKed and counted sequence errors or duplicates (so the
frames got that far), the device then carries ibv_rc_pingpong -c to B,
and every object is released (the bench unloads the module after each
test and fails if it cannot).
"""
import json
import socket
import time

import pytest

from tools.testing.bench.lib.pingpong import pingpong
from tools.testing.bench.lib.rdma import counters, res_counts

# make check runs this file on the 6.12 guests too (scripts/check).
pytestmark = pytest.mark.kernel("6.12")

TIMEOUT = 900
SROCE_ONLY = "aims at sroce's transport"
# Frames per round, and rounds (each with its own seed, so a failure names
# the round to replay).
FRAMES = 1000
ROUNDS = 8
PATH_MTU = 1024    # qp.py's RTR path MTU


def long_gid(ip):
    """The IPv4-mapped GID of ip, as pyverbs parses it."""
    raw = socket.inet_pton(socket.AF_INET6, "::ffff:" + ip)
    return ":".join(raw[i:i + 2].hex() for i in range(0, 16, 2))


@pytest.mark.sroce(SROCE_ONLY)
def test_hostile_transport(bench):
    a, b = bench.a, bench.b
    dev = bench.attach(a)
    idx = a.gid_index(dev)
    # The core resolves the QPs' path to B's MAC through the neighbour table.
    a.run(f"ping -c 1 -W 5 {b.ip}")
    start = res_counts(a, dev)
    before = counters(a, dev)

    info, go = "/tmp/fuzz.info", "/tmp/fuzz.go"
    a.run(f"rm -f {info}* {go}")
    target = a.spawn(f"exec /usr/bin/python3 -m tools.testing.guest.verbs.target {dev} {idx} "
                     f"{long_gid(b.ip)} {info} {go}", timeout=TIMEOUT)
    a.wait_for(f"test -e {info}", timeout=120)
    inf = json.loads(a.run(f"cat {info}").out)

    ready, stop = "/tmp/watch.ready", "/tmp/watch.stop"
    b.run(f"rm -f {ready} {stop}")
    tool = "/usr/bin/python3 -m tools.testing.guest.net.fuzz"
    watch = b.spawn(f"exec {tool} watch eth0 {ready} {stop} " + " ".join(inf["secret"]),
                    timeout=TIMEOUT)
    b.wait_for(f"test -e {ready}", timeout=60)
    sent = 0
    for seed in range(ROUNDS):
        if seed:
            # QPs the last round put in the error state start again.
            a.run(f"touch {info}.revive.{seed}")
            a.wait_for(f"test -e {info}.ready.{seed}", timeout=120)
        cfg = {"info": inf, "seed": seed, "count": FRAMES, "mtu": PATH_MTU,
               "dst_mac": a.mac, "src_mac": b.mac, "src_ip": b.ip, "dst_ip": a.ip}
        out = b.run(f"{tool} send eth0 '{json.dumps(cfg)}'", timeout=300).out
        sent += json.loads(out.strip().splitlines()[-1])["sent"]

    a.run(f"touch {go}")
    res = target.wait(120)
    assert res.rc == 0, res.out + res.err
    got = json.loads(res.out.strip().splitlines()[-1])
    b.run(f"touch {stop}")
    seen = json.loads(watch.wait(60).out.strip().splitlines()[-1])
    after = counters(a, dev)
    delta = {k: after[k] - before[k] for k in after if after[k] != before[k]}
    print(f"  sent {sent} frames; A's counters moved {delta}")
    print(f"  A answered {seen['frames']} frames, opcodes {seen['opcodes']}")
    print(f"  QPs revived {got['revived']}, states at the end {got['states']}, "
          f"completions by status {got['wcs']}")

    assert got["go"], got
    assert got["intact"] == {"ro": True, "none": True, "rw": True, "sink": True}, got
    assert seen["leaks"] == 0, f"{seen['leaks']} frames from A carried MR bytes it must not read"
    # The frames reached the transport: it refused some and sequenced others.
    assert delta.get("nak_sent", 0) > 0, delta
    assert delta.get("rx_out_of_seq", 0) + delta.get("rx_duplicate", 0) > 0, delta
    assert seen["frames"] > 0, seen

    # The target's objects are gone with its process.
    deadline = time.monotonic() + 30
    while (end := res_counts(a, dev)) != start and time.monotonic() < deadline:
        time.sleep(1)
    assert end == start, f"resources {end}, at start {start}"
    # The device still works, between fresh QPs.
    pingpong(bench, "ibv_rc_pingpong", [("v4", 65536)],
             dev={a.name: dev, b.name: bench.attach(b)})
