# SPDX-License-Identifier: GPL-2.0
"""How frames leave: in bursts past the kernel's default qdisc, one
doorbell (virtio kick) for many frames; every frame through a qdisc
somebody configured; every frame seen by a capture on the sending guest;
one ACK asked for, and sent, per message of 64 packets, and one for
several short messages queued together; one ACK for several of a stream
of small messages posted one by one, but every ACK of a ping-pong at
once; and on the far side, frames taken in runs. On a path whose round
trip is longer than the QP's timeout, nothing goes twice once the round
trip is measured.
"""

import re

import pytest

from tools.testing.bench.guests import TIME_SCALE
from tools.testing.bench.lib import perftest as pt
from tools.testing.bench.lib.rdma import counters

SROCE_ONLY = "sroce's transmit path and its counters"
MSGS = 200
SIZE = 65536
# Small sends posted 16 at a time, for the ACK they share.
LIST_MSGS = 1600
LIST_SIZE = 256
# Small writes posted one at a time, for the ACKs the responder holds.
STREAM_MSGS = 4000
STREAM_SIZE = 64
# The gap (us) below which ACK requests are a stream: the default (200)
# times five, so that a loaded host's slower posting is still one, and
# times SROCE_TIME_SCALE for a debug kernel's.
STREAM_GAP_US = round(1000 * TIME_SCALE)
# A path slower than perftest's QP timeout (-u 14: 67 ms) that loses
# nothing: netem delays each guest's frames, a round trip of twice this.
SLOW_DELAY_MS = 50
SLOW_MSGS = 100


def qdisc_sent(g):
    """Frames the root qdisc of eth0 has sent."""
    out = g.run("tc -s qdisc show dev eth0 root").out
    m = re.search(r"Sent \d+ bytes (\d+) pkt", out)
    assert m, out
    return int(m.group(1))


def kicks(g):
    """virtio-net's doorbells on eth0's transmit queues, or None."""
    out = g.run("ethtool -S eth0", check=False).out
    found = re.findall(r"tx_queue_\d+_kicks: (\d+)", out)
    return sum(map(int, found)) if found else None


def write_bw(bench, responder=None):
    """B writes MSGS messages of SIZE bytes to A; returns B's counters
    before and after, with the qdisc's and the NIC's views of it. A's
    counters before and after go into the dict @responder, if given."""
    a, b = bench.a, bench.b
    da, db = bench.attach(a), bench.attach(b)
    if responder is not None:
        responder["before"] = counters(a, da)
    before = (counters(b, db), qdisc_sent(b), kicks(b))
    run = pt.run_perftest(a, b, "ib_write_bw", da, a.gid_index(da), a.ip,
                          size=SIZE, iters=MSGS, client_gid_index=b.gid_index(db))
    problems = pt.judge(run, "ib_write_bw", [SIZE], iters=MSGS)
    assert not problems, pt.headline(problems)
    after = (counters(b, db), qdisc_sent(b), kicks(b))
    if responder is not None:
        responder["after"] = counters(a, da)
    return before, after


def deltas(before, after):
    c0, q0, k0 = before
    c1, q1, k1 = after
    c = {k: c1[k] - c0.get(k, 0) for k in c1}
    return c, q1 - q0, None if k0 is None else k1 - k0


def ack_hold_us(bench, us):
    for g in (bench.a, bench.b):
        g.run(f"echo {us} > /sys/module/sroce/parameters/ack_hold_us")


def responder_deltas(bench, devs, program, size, iters, extra=""):
    """Run program from B to A over their devices devs; A's (the
    responder's) counter deltas."""
    a, b = bench.a, bench.b
    da, db = devs
    before = counters(a, da)
    run = pt.run_perftest(a, b, program, da, a.gid_index(da), a.ip, size=size,
                          iters=iters, extra=extra, client_gid_index=b.gid_index(db))
    problems = pt.judge(run, program, [size], iters=iters)
    assert not problems, pt.headline(problems)
    after = counters(a, da)
    return {k: after[k] - before.get(k, 0) for k in after}


@pytest.mark.sroce(SROCE_ONLY)
def test_default_qdisc_skipped_in_bursts(bench):
    b = bench.b
    assert " 0: root" in b.run("tc qdisc show dev eth0 root").out
    c, qdisc, kick = deltas(*write_bw(bench))
    frames = c["tx_packets"]
    assert frames >= MSGS * SIZE // 1024, c
    # Past the qdisc, all of them: it counts only the few others (ARP...).
    assert c["tx_direct"] == frames and qdisc < frames // 10, (c, qdisc)
    # 64-packet messages go out in bursts, not frame by frame.
    assert frames >= 4 * c["tx_bursts"], c
    if kick is not None:
        assert kick <= c["tx_bursts"] + qdisc + c["ack_sent"], (c, kick)


@pytest.mark.sroce(SROCE_ONLY)
def test_one_ack_per_message_taken_in_runs(bench):
    """A 64-packet message asks for one ACK, on its last packet, whatever
    PSN it starts at; a PSN-aligned rule asked twice or three times. The
    responder takes the frames of one poll as runs, not one by one."""
    resp = {}
    c, _, _ = deltas(*write_bw(bench, resp))
    r = {k: resp["after"][k] - resp["before"].get(k, 0) for k in resp["after"]}
    assert c["rx_packets"] >= MSGS, (c, r)
    # A duplicate that asks (after a retransmission) is answered too, and
    # so is a packet that asks because the window filled under it
    # (sroce_req_window_ends()), which moves the next asks off the
    # messages' last packets: seen once in a run, 201. A PSN-aligned rule
    # asks 400 to 600 times.
    extra = MSGS // 10 + r.get("rx_duplicate", 0)
    assert MSGS <= r["ack_sent"] <= MSGS + extra, r
    # 12,800 frames never all arrive one per poll: without runs, the
    # responder would take as many runs as packets.
    assert 0 < r["rx_runs"] < r["rx_packets"], r


@pytest.mark.sroce(SROCE_ONLY)
def test_queued_messages_share_one_ack(bench):
    """Messages queued behind each other (perftest's post list: 16 sends
    in one call, so one doorbell finds them all) ask for an ACK once per
    run of the requester, not once per message: the ACK for the run's
    last packet covers them all. One per message would be LIST_MSGS."""
    devs = bench.attach(bench.a), bench.attach(bench.b)
    r = responder_deltas(bench, devs, "ib_send_bw", LIST_SIZE, LIST_MSGS, "-l 16")
    assert r["rx_packets"] >= LIST_MSGS, r
    # Each of the 16 messages of a doorbell would ask without the rule;
    # duplicates after a (spurious) retransmission may ask again.
    assert r["ack_sent"] <= LIST_MSGS // 4 + r.get("rx_duplicate", 0), r


@pytest.mark.sroce(SROCE_ONLY)
def test_stream_of_small_messages_shares_acks(bench):
    """perftest's message rate posts one 64-byte write per call, and each
    finds the requester idle, so each asks for its ACK. The responder
    holds an ACK while such requests keep coming: without that, one ACK
    per message (STREAM_MSGS)."""
    devs = bench.attach(bench.a), bench.attach(bench.b)
    ack_hold_us(bench, STREAM_GAP_US)
    r = responder_deltas(bench, devs, "ib_write_bw", STREAM_SIZE, STREAM_MSGS)
    assert r["rx_packets"] >= STREAM_MSGS, r
    assert r["ack_sent"] <= STREAM_MSGS // 2 + r.get("rx_duplicate", 0), r
    assert r["ack_held"] >= STREAM_MSGS // 2, r


@pytest.mark.sroce(SROCE_ONLY)
def test_ping_pong_acks_go_at_once(bench):
    """In a ping-pong the peer waits for each ACK (its send completes
    before it pings again), and we answer between its requests: no ACK
    is held, even with requests well within the stream's gap."""
    devs = bench.attach(bench.a), bench.attach(bench.b)
    ack_hold_us(bench, 1000000)
    r = responder_deltas(bench, devs, "ib_send_lat", 2, 500)
    assert r["ack_sent"] >= 500, r
    assert r["ack_held"] == 0, r


@pytest.mark.sroce(SROCE_ONLY)
@pytest.mark.parametrize("program,moved,outs", [("ib_write_bw", "tx_packets", ""),
                                                ("ib_read_bw", "rx_packets", " -o 1")])
def test_slow_path_not_timed_out(bench, program, moved, outs):
    """B writes to (reads from) A over a path whose round trip (100 ms) is
    longer than the QP's timeout (67 ms). Each time the timer fires for
    packets that were only late, the window goes again (the read is asked
    for again). The first window times out, as nothing is measured yet;
    the timeout doubles, the next probe's answer comes within it, and from
    then on the timeout follows the measured round trip: a round trip
    longer than those measured may still time out once in a while (1 or 2
    a run measured, for either program). With the QP's
    timeout alone, every window's round trip timed out: 23 to 31 a run
    for writes, and 58 of the 100 reads, one outstanding at a time, were
    asked for twice."""
    a, b = bench.a, bench.b
    da, db = bench.attach(a), bench.attach(b)
    for g in (a, b):
        g.run("modprobe sch_netem")
        g.run(f"tc qdisc add dev eth0 root netem delay {SLOW_DELAY_MS}ms limit 10000")
    try:
        before = counters(b, db)
        run = pt.run_perftest(a, b, program, da, a.gid_index(da), a.ip,
                              size=SIZE, iters=SLOW_MSGS, extra="-u 14" + outs,
                              client_gid_index=b.gid_index(db))
        problems = pt.judge(run, program, [SIZE], iters=SLOW_MSGS)
        assert not problems, pt.headline(problems)
        after = counters(b, db)
    finally:
        for g in (a, b):
            g.run("tc qdisc del dev eth0 root", check=False)
    c = {k: after[k] - before.get(k, 0) for k in after}
    runs = 1 + len(run.remeasured)
    print(f"{program}: {c['retransmits']} retransmissions in {runs} run(s)")
    assert c[moved] >= SLOW_MSGS * SIZE // 1024, c
    assert c["retransmits"] <= 4 * runs, (runs, c)


@pytest.mark.smp(2)
def test_full_send_queue_on_two_vcpus(bench):
    """perftest keeps its send queue full: it posts again as soon as it
    polls a completion. With the process on one vCPU and the completer on
    the other, the completion must not be seen before its slot is free,
    or the post fails ("Couldn't post send"), as it did on every run
    before sroce handed the slot back first."""
    for g in bench.guests:
        assert g.run("nproc").out.strip() == "2"
    for _ in range(2):
        write_bw(bench)
        for g in bench.guests:
            g.run(f"rdma link delete {bench.driver}0")


@pytest.mark.sroce(SROCE_ONLY)
def test_configured_qdisc_sees_every_frame(bench):
    b = bench.b
    b.run("tc qdisc add dev eth0 root pfifo limit 10000")
    try:
        c, qdisc, _ = deltas(*write_bw(bench))
    finally:
        b.run("tc qdisc del dev eth0 root")
    assert c["tx_packets"] >= MSGS * SIZE // 1024, c
    assert c["tx_direct"] == 0 and qdisc >= c["tx_packets"], (c, qdisc)


def test_capture_sees_every_frame(bench):
    a, b = bench.a, bench.b
    cap = b.spawn(f"tcpdump -i eth0 -n -B 16384 -w /dev/null "
                  f"src host {b.ip} and udp dst port 4791", timeout=300)
    # Its packet socket is open (the table's first line is a header).
    b.wait_for("[ $(wc -l < /proc/net/packet) -gt 1 ]", timeout=30)
    try:
        before, after = write_bw(bench)
    finally:
        b.run("pkill -INT -x tcpdump", check=False)
    res = cap.wait(timeout=60, check=False)
    seen = re.search(r"(\d+) packets? received by filter", res.err)
    assert seen, res.err
    sent = deltas(before, after)[0]["tx_packets"] if bench.driver == "sroce" \
        else MSGS * SIZE // 1024
    assert int(seen.group(1)) >= sent, (res.err, sent)
    assert a.alive()
