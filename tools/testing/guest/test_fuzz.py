# SPDX-License-Identifier: GPL-2.0
"""Hostile frames aimed at live QPs: the transport, not the wire layer.

Guest A holds RC, UC and UD QPs in RTS with receives posted and RC
requests of its own outstanding, XRC target QPs in RTR whose receives are
an XRC SRQ's (XRC requests name it, other SRQs, or none), and three MRs
(verbs/target.py): one
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

Then frames that lie below the transport (net/fuzz.py BELOW), one class
at a time so that A's counters say which counter took each class: VLAN
tags (VLAN 0 is a priority tag, taken), IPv4 options, fragments, a
destination that is none of A's addresses, IPv4-mapped IPv6 addresses
aimed at IPv4 QPs, wrong UDP and IP lengths, bad IP checksums, UDP
checksums (ignored: the ICRC masks them), truncated frames. Frames not
for the device must reach the IP stack (its counters say it saw them)
and leave sroce's untouched; the rest are counted by sroce, frame by
frame. The canary pages around the MRs must hold, and sroce-integrity
then verifies every byte of its traffic between the guests.

Size and seeds (make check runs the default; `make fuzz-full` 10^6
frames): SROCE_FUZZ_SEED (first round's seed, 0), SROCE_FUZZ_ROUNDS (8),
SROCE_FUZZ_FRAMES (transport frames a round, 1000), SROCE_FUZZ_BELOW
(frames of each below-transport class a round, 0 but in the last round:
40). Round i uses seed SEED + i, printed with it: to replay round i alone,
SROCE_FUZZ_SEED=<its seed> SROCE_FUZZ_ROUNDS=1 with the same FRAMES and
BELOW (SROCE_FUZZ_BELOW=0 for a default run's rounds but the last; the
QPs then meet it as new, not as the earlier rounds left them).
"""
import json
import os
import re
import time

import pytest

from tools.testing.bench.lib.pingpong import pingpong
from tools.testing.bench.lib.rdma import counters, mapped_gid, res_counts

# make check runs this file on the 6.12 guests too (scripts/check).
pytestmark = pytest.mark.kernel("6.12")

SROCE_ONLY = "aims at sroce's transport"
PATH_MTU = 1024    # qp.py's RTR path MTU
SEED = int(os.environ.get("SROCE_FUZZ_SEED", "0"))
ROUNDS = int(os.environ.get("SROCE_FUZZ_ROUNDS", "8"))
FRAMES = int(os.environ.get("SROCE_FUZZ_FRAMES", "1000"))
# Below-transport frames of each class in every round; unset, only the
# last round sends them, DEFAULT_BELOW of each.
BELOW = os.environ.get("SROCE_FUZZ_BELOW")
DEFAULT_BELOW = 40
# Bounds that grow with the run: a frame takes well under 10 ms to make
# and send under TCG.
SEND_TIMEOUT = 120 + (FRAMES + 11 * int(BELOW or DEFAULT_BELOW)) // 100
# make check's size keeps today's bound (not "slow").
SIZED = ("SROCE_FUZZ_ROUNDS" in os.environ or "SROCE_FUZZ_FRAMES" in os.environ or
         BELOW is not None)
TIMEOUT = 300 + ROUNDS * (SEND_TIMEOUT + 60) if SIZED else 900
CLASSES = ("vlan", "vlan0", "ip_options", "ip_fragment", "not_ours", "v4mapped",
           "udp_length", "ip_length", "ip_checksum", "udp_checksum", "truncated")
INTEGRITY = "build/tools/sroce-integrity"
# sroce's counters of a frame it took from the rx_handler: each such frame
# moves exactly one of them (drivers/net.c).
TAKEN = ("rx_packets", "rx_bad_header", "rx_bad_icrc")
# Its drop counters (drivers/counters.c).
DROPS = ("rx_bad_header", "rx_bad_icrc", "rx_no_qp", "rx_bad_pkey", "rx_bad_qkey",
         "rx_dropped")
# The IP stack's counters that say it received a frame, and those that
# say it dropped one.
# link.rx_otherhost: frames for no netdev's VLAN; link.rx_dropped: frames
# no protocol took (an 802.1ad tag outside an 802.1Q one).
STACK_SAW = ("Ip.InReceives", "Ip6.Ip6InReceives", "link.rx_otherhost", "link.rx_dropped")
STACK_DROPS = ("Ip.InHdrErrors", "Ip.InAddrErrors", "Ip.InDiscards",
               "Ip.InUnknownProtos", "Ip.ReasmFails", "IpExt.InTruncatedPkts",
               "IpExt.InCsumErrors", "Udp.NoPorts", "Udp.InErrors",
               "Ip6.Ip6InHdrErrors", "Ip6.Ip6InAddrErrors", "Ip6.Ip6InNoRoutes",
               "Ip6.Ip6InDiscards", "Ip6.Ip6InTruncatedPkts", "Ip6.Udp6NoPorts",
               "link.rx_otherhost", "link.rx_dropped")
# What each class must meet: "stack" classes reach the IP stack and leave
# sroce's counters still; "taken" ones are sroce's, each frame counted by
# one of TAKEN; "header" ones all go to rx_bad_header; "not_peer" ones
# are IPv6 frames a connected QP whose peer is IPv4 must refuse (finding
# 12) or not for us at all; "dropped" ones are dropped by someone.
EXPECT = {"vlan": "stack", "vlan0": "taken", "ip_options": "taken",
          "ip_fragment": "stack", "not_ours": "stack", "v4mapped": "not_peer",
          "udp_length": "header", "ip_length": "dropped", "ip_checksum": "header",
          "udp_checksum": "taken", "truncated": "dropped"}


def all_counters(g, dev):
    """sroce's counters, and the stack's (/proc/net/snmp, snmp6, netstat,
    the netdev's core drops) as "Ip.InReceives" and the like, in one
    command."""
    out = g.run(f"rdma statistic show link {dev}/1; echo ===; cat /proc/net/snmp "
                "/proc/net/netstat; echo ===; cat /proc/net/snmp6; echo ===; "
                "ip -s -s -j link show dev eth0").out
    rdma, snmp, snmp6, link = out.split("===")
    words = rdma.split()
    c = {words[i]: int(words[i + 1]) for i in range(len(words) - 1)
         if words[i + 1].isdigit() and words[i].islower()}
    lines = snmp.split("\n")
    # "Ip: Forwarding ..." then "Ip: 2 ...": names, then values.
    for names, values in zip(lines, lines[1:]):
        group = names.split(":")[0]
        if group and values.startswith(group + ":") and \
                not names.split()[1].lstrip("-").isdigit():
            for k, v in zip(names.split()[1:], values.split()[1:]):
                c[f"{group}.{k}"] = int(v)
    for k, v in re.findall(r"^((?:Ip6|Udp6)\w+)\s+(\d+)$", snmp6, re.M):
        c[f"Ip6.{k}"] = int(v)
    stats = json.loads(link)[0].get("stats64", {}).get("rx", {})
    for k, v in stats.items():
        c[f"link.rx_{k}"] = v
    return c


def moved(before, after):
    return {k: after[k] - before.get(k, 0) for k in after
            if after[k] != before.get(k, 0)}


def check_class(cls, frames, d):
    """Did the class meet EXPECT? d: every counter that moved."""
    d = dict(d, cls=cls, frames=frames)
    taken = sum(d.get(k, 0) for k in TAKEN)
    drops = sum(d.get(k, 0) for k in DROPS + STACK_DROPS)
    want = EXPECT[cls]
    # Every frame met a counter: sroce's (one each) or the stack's, which
    # also saw the phase's closing ping (and may see ICMP errors from B).
    saw = sum(d.get(k, 0) for k in STACK_SAW) - 1
    assert taken <= frames and taken + saw >= frames, json.dumps(d)
    if want == "stack":
        assert taken == 0 and d.get("rx_not_ours", 0) in (0, frames), json.dumps(d)
        assert sum(d.get(k, 0) for k in STACK_SAW) >= frames, json.dumps(d)
    elif want == "taken":
        assert taken == frames, json.dumps(d)
    elif want == "header":
        assert d.get("rx_bad_header", 0) == frames, json.dumps(d)
    elif want == "not_peer":
        # Valid Sends at the expected PSN, but over IPv6 from B's
        # IPv4-mapped address: refused at the QP, or not for us at all.
        assert d.get("rx_no_qp", 0) + d.get("rx_not_ours", 0) == frames, json.dumps(d)
    else:
        assert drops > 0, json.dumps(d)


@pytest.mark.sroce(SROCE_ONLY)
def test_hostile_transport(bench, record_property):
    a, b = bench.a, bench.b
    dev = bench.attach(a)
    idx = a.gid_index(dev)
    # The core resolves the QPs' path to B's MAC through the neighbour table.
    a.run(f"ping -c 1 -W 5 {b.ip}")
    start = res_counts(a, dev)
    before = counters(a, dev)
    t_start = time.monotonic()

    info, go = "/tmp/fuzz.info", "/tmp/fuzz.go"
    a.run(f"rm -f {info}* {go}")
    target = a.spawn(f"exec /usr/bin/python3 -m tools.testing.guest.verbs.target {dev} {idx} "
                     f"{mapped_gid(b.ip)} {info} {go} {TIMEOUT}", timeout=TIMEOUT + 60)
    a.wait_for(f"test -e {info}", timeout=120)
    inf = json.loads(a.run(f"cat {info}").out)
    print(f"  target up ({time.monotonic() - t_start:.1f} s)", flush=True)

    ready, stop = "/tmp/watch.ready", "/tmp/watch.stop"
    b.run(f"rm -f {ready} {stop}")
    tool = "/usr/bin/python3 -m tools.testing.guest.net.fuzz"
    watch = b.spawn(f"exec {tool} watch eth0 {ready} {stop} " + " ".join(inf["secret"]),
                    timeout=TIMEOUT + 60)
    b.wait_for(f"test -e {ready}", timeout=60)
    cfg = {"info": inf, "mtu": PATH_MTU, "dst_mac": a.mac, "src_mac": b.mac,
           "src_ip": b.ip, "dst_ip": a.ip, "dst_ip6": a.ip6}

    # One sender for the whole run, fed through two FIFOs.
    fifo = "/tmp/fuzz.fifo"
    b.run(f"rm -rf {fifo} && mkdir {fifo} && mkfifo {fifo}/req {fifo}/res")
    sender = b.spawn(f"exec {tool} serve eth0 {fifo}/req {fifo}/res", timeout=TIMEOUT + 60)

    def send(seed, phase, count, sync=False):
        """count frames of phase from B; with sync, then a ping that comes
        back only once A has taken every frame before it."""
        c = dict(cfg, seed=seed, phase=phase, count=count)
        ping = f" && ping -c 1 -W 10 -q {a.ip}" if sync else ""
        out = b.run(f"echo '{json.dumps(c)}' > {fifo}/req && cat {fifo}/res{ping}",
                    timeout=SEND_TIMEOUT).out
        r = json.loads(next(x for x in out.splitlines() if x.startswith("{")))
        assert "error" not in r, f"fuzz sender, {phase} of seed {seed}: {r['error']}"
        return r

    sent = {"transport": 0}
    by_class = {}       # class -> {counter: total delta}
    rates = []
    for rnd in range(ROUNDS):
        seed = SEED + rnd
        if rnd:
            # QPs the last round put in the error state start again.
            a.run(f"touch {info}.revive.{rnd}")
            a.wait_for(f"test -e {info}.ready.{rnd}", timeout=120)
        print(f"  round {rnd}: seed {seed}", end="", flush=True)
        t_round = time.monotonic()
        r = send(seed, "transport", FRAMES)
        print(f", {r['frames']} transport frames at {r['per_second']}/s "
              f"({time.monotonic() - t_round:.1f} s)", flush=True)
        sent["transport"] += r["frames"]
        rates.append(r["per_second"])
        below = int(BELOW) if BELOW is not None else \
            (DEFAULT_BELOW if rnd == ROUNDS - 1 else 0)
        if not below:
            continue
        prev = all_counters(a, dev)
        t_below = time.monotonic()
        for cls in CLASSES:
            # virtio-net's device drops VLANs the guest did not ask for
            # (VLAN 0 too), but for a promiscuous netdev: let them reach
            # the kernel. (CLASSES has vlan then vlan0.)
            if cls == "vlan":
                a.run("ip link set eth0 promisc on")
            r = send(seed, cls, below, sync=True)
            if cls == "vlan0":
                a.run("ip link set eth0 promisc off")
            now = all_counters(a, dev)
            d = moved(prev, now)
            prev = now
            check_class(cls, r["frames"], d)
            sent[cls] = sent.get(cls, 0) + r["frames"]
            acc = by_class.setdefault(cls, {})
            for k, v in d.items():
                if k in DROPS + STACK_DROPS + TAKEN + STACK_SAW + ("rx_not_ours",):
                    acc[k] = acc.get(k, 0) + v
        print(f"  round {rnd}: {len(CLASSES)} classes below the transport "
              f"({time.monotonic() - t_below:.1f} s)", flush=True)

    b.run(f"echo '{{\"phase\": \"quit\"}}' > {fifo}/req")
    sender.wait(60)
    a.run(f"touch {go}")
    res = target.wait(120)
    assert res.rc == 0, res.out + res.err
    got = json.loads(res.out.strip().splitlines()[-1])
    b.run(f"touch {stop}")
    seen = json.loads(watch.wait(60).out.strip().splitlines()[-1])
    after = counters(a, dev)
    delta = {k: after[k] - before[k] for k in after if after[k] != before[k]}
    print(f"  sent {sent['transport']} transport frames; A's counters moved {delta}")
    print(f"  A answered {seen['frames']} frames, opcodes {seen['opcodes']}")
    print(f"  QPs revived {got['revived']}, states at the end {got['states']}, "
          f"completions by status {got['wcs']}")
    print(f"  B sent transport frames at {min(rates)}-{max(rates)} frames/s")

    assert got["go"], got
    assert got["intact"] == {"ro": True, "none": True, "rw": True, "canaries": True,
                             "sink": True}, got
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
    # The device still carries every byte between fresh QPs.
    dev_b = bench.attach(b)
    t_check = time.monotonic()
    verified = integrity(bench, dev, dev_b)
    print(f"  sroce-integrity: {verified} bytes ({time.monotonic() - t_check:.1f} s)",
          flush=True)
    pingpong(bench, "ibv_rc_pingpong", [("v4", 65536)], dev={a.name: dev, b.name: dev_b})
    report(sent, by_class, verified, time.monotonic() - t_start)
    # For make hardening's table (tools/testing/bench/lib/hardening.py).
    record_property("frames", sum(sent.values()))
    record_property("bytes_verified", verified)


def integrity(bench, dev_a, dev_b):
    """sroce-integrity from A to B, every RC opcode on two QPs, twice: the bytes
    it verified."""
    a, b = bench.a, bench.b
    common = "-p 18517 -t 180"
    srv = b.spawn(f"exec {INTEGRITY} -d {dev_b} -g {b.gid_index(dev_b)} {common}",
                  timeout=240)
    cli = a.run(f"{INTEGRITY} -d {dev_a} -g {a.gid_index(dev_a)} {common} -q 2 -n 2 "
                f"-S 1,4097,65536 {b.ip}", timeout=240, check=False)
    res = srv.wait(240, check=False)
    assert cli.ok and res.ok, (cli.out, cli.err, res.out, res.err)
    summary = cli.out.strip().splitlines()[-1]
    assert summary.startswith("sroce-integrity: OK"), cli.out
    return int(re.search(r"(\d+) bytes verified", summary)[1])


def report(sent, by_class, verified, seconds):
    """The run's table, printed and written to build/fuzz-table.md
    (docs/HARDENING.md keeps the full run's)."""
    lines = [f"fuzz: seeds {SEED}..{SEED + ROUNDS - 1}, {sum(sent.values())} frames in "
             f"{seconds:.0f} s", "",
             "| class | frames | counters that moved (sum over rounds) |",
             "| --- | --- | --- |",
             f"| transport | {sent['transport']} | (above) |"]
    for cls in CLASSES:
        if cls in sent:
            moved_ = ", ".join(f"{k} {v}" for k, v in sorted(by_class.get(cls, {}).items()))
            lines.append(f"| {cls} | {sent[cls]} | {moved_} |")
    lines.append(f"| sroce-integrity | {verified} bytes verified | |")
    lines.append("| kernel reports | 0 (the bench's kmsg gate) | |")
    print("\n" + "\n".join("  " + x for x in lines))
    with open("build/fuzz-table.md", "w") as f:
        f.write("\n".join(lines) + "\n")
