# SPDX-License-Identifier: GPL-2.0
"""Congestion control (drivers/cc.c) across a bottleneck.

Guest A sends to guest B through a bottleneck on the way into B, as a
switch's port would be: B's eth0 redirects arriving RoCEv2 frames to an
IFB device that shapes them to 40 Mbit/s under a RED queue, which marks
ECN-capable packets Congestion Experienced and drops the others early.
(A bottleneck in A's own qdisc would not do: the skbs a QP has in its
qdisc count against the QP's frames in flight, which holds it back
without any congestion control.) Two ib_write_bw flows share it for 10 s,
three times:

- off: sroce's default, no ECN: RED drops, RC retransmits;
- marking only: the ecn parameter on, the rate limiter held off by a floor
  above the link (cc_min_mbps): RED marks instead of dropping, B sends
  CNPs, nothing slows down but the QPs' windows, and the queue stands;
- on: ECN and the rate limiter: A's requesters cut their rates on CNPs.

The time constants are the bottleneck's: a 40 Mbit/s port under TCG sees
round trips of several milliseconds, so the limiter's increase period,
steps and CNP interval are set to match, as for any path whose round trip
is far from the microseconds DCQCN's defaults assume (docs/BENCH.md,
"Congestion control").

Then sroce-integrity checks every byte it moves through the same
bottleneck with ECN on. The figures (each flow's bandwidth, Jain's
fairness index, retransmissions, RED's drops and marks, the queue's median
backlog, CNPs) are printed for docs/BENCH.md.
"""
import re

import pytest

from tools.testing.bench.lib import perftest, rdma
from tools.testing.bench.lib.integrity import INTEGRITY, summary

ONLY = "rdma_rxe has no congestion control"
RATE = "40mbit"
# In B: RoCEv2 over IPv4 into eth0 goes through ifb0 first. RED's queue
# marks from 30 KB (6 ms at 40 Mbit/s), always past 90 KB; the port's
# buffer is 1 MB.
BOTTLENECK = (
    "ip link add ifb0 type ifb",
    "ip link set ifb0 up",
    "tc qdisc add dev eth0 handle ffff: ingress",
    "tc filter add dev eth0 parent ffff: protocol ip u32 match ip dport 4791 0xffff "
    "action mirred egress redirect dev ifb0",
    f"tc qdisc add dev ifb0 root handle 1: tbf rate {RATE} burst 16kb latency 400ms",
    "tc qdisc add dev ifb0 parent 1:1 handle 10: red limit 1000000 min 30000 "
    f"max 90000 avpkt 1100 burst 40 bandwidth {RATE} probability 0.1 ecn",
)
UNDO = ("tc qdisc del dev eth0 ingress", "ip link delete ifb0")
# The limiter's time constants for this port (module parameters).
PARAMS = {"cnp_interval_us": 2000, "cc_period_us": 40000, "cc_rai_mbps": 1,
          "cc_rhai_mbps": 5}
# A floor far above the link: the limiter never holds a packet back.
NO_LIMITER = {"cc_min_mbps": 100000}
SECONDS = 10
PCAP = "/tmp/cc.pcap"
SIZE = 65536
TIMEOUT = 420


def jain(xs):
    """Jain's fairness index: 1 when all get the same, 1/n when one gets all."""
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 0.0


def red_stats(g):
    """RED's counters on ifb0: {"marked", "early", "pdrop"}."""
    out = g.run("tc -s qdisc show dev ifb0").out
    return {k: int(v) for k, v in re.findall(r"\b(marked|early|pdrop) (\d+)", out)}


def bottleneck(g):
    for cmd in BOTTLENECK:
        g.run(cmd)


def undo(g):
    for cmd in UNDO:
        g.run(cmd, check=False)


def set_params(guests, params):
    for g in guests:
        for name, value in params.items():
            g.run(f"echo {int(value)} > /sys/module/sroce/parameters/{name}")


def sample_backlog(g, seconds):
    """A job in g that prints ifb0's backlog in bytes four times a second."""
    return g.spawn(f"for i in $(seq {4 * seconds}); do tc -s qdisc show dev ifb0 | "
                   "sed -n 's/.*backlog \\([0-9]*\\)b.*/\\1/p' | head -n 1; "
                   "sleep 0.25; done", timeout=seconds + 120)


def flows(bench, devs, n=2):
    """n ib_write_bw flows from A to B at once for SECONDS: their MB/s."""
    a, b = bench.a, bench.b
    (da, ga), (db, gb) = devs
    ports = [perftest.next_port() for _ in range(n)]
    # An ACK timeout of 268 ms (-u 16), past what the full queue holds.
    common = f"-D {SECONDS} -u 16"
    servers = []
    for p in ports:
        cmd, _ = perftest.perftest_cmds("ib_write_bw", db, gb, p, b.ip, size=SIZE,
                                        extra=common)
        servers.append(b.spawn(f"exec {cmd}", timeout=SECONDS + 120))
        perftest.wait_listening(b, p, servers[-1])
    clients = []
    for p in ports:
        _, cmd = perftest.perftest_cmds("ib_write_bw", da, ga, p, b.ip, size=SIZE,
                                        extra=common)
        clients.append(a.spawn(f"exec {cmd}", timeout=SECONDS + 90))
    outs = [c.wait(SECONDS + 90, check=False) for c in clients]
    for s in servers:
        s.wait(30, check=False)
    bws = []
    for res in outs:
        assert res.ok, f"rc={res.rc}\n{res.out}{res.err}"
        parsed = perftest.parse(res.out + res.err)
        rows = parsed["rows"]
        assert rows and rows[0]["bw_avg"] > 0, f"no bandwidth:\n{res.out}{res.err}"
        bws.append(rows[0]["bw_avg"])
    return bws


def measure(bench, devs, name, params):
    """One round of flows through the bottleneck, with the module
    parameters params in both guests; what it did."""
    a, b = bench.a, bench.b
    set_params((a, b), params)
    bottleneck(b)
    before = (rdma.counters(a, devs[0][0]), rdma.counters(b, devs[1][0]))
    try:
        sampler = sample_backlog(b, SECONDS + 2)
        bws = flows(bench, devs)
        red = red_stats(b)
        backlog = [int(x) for x in sampler.wait(SECONDS + 60, check=False).out.split()]
    finally:
        undo(b)
    ca, cb = rdma.counters(a, devs[0][0]), rdma.counters(b, devs[1][0])

    def delta(c, now, then):
        return now[c] - then[c]

    # The queue's median over the second half of the flows' run: where
    # the first cuts took it, past the start both runs share.
    busy = [x for x in backlog if x]
    steady = sorted(busy[len(busy) // 2:]) or [0]
    r = {"run": name, "mbs": bws, "jain": round(jain(bws), 3), **red,
         "backlog_kb": round(steady[len(steady) // 2] / 1000, 1),
         "retransmits": delta("retransmits", ca, before[0]),
         "tx_paced": delta("tx_paced", ca, before[0]),
         "cnp_handled": delta("cnp_handled", ca, before[0]),
         "cnp_sent": delta("cnp_sent", cb, before[1]),
         "rx_ecn_ce": delta("rx_ecn_ce", cb, before[1])}
    print(f"cc: {r}")
    return r


@pytest.mark.sroce(ONLY)
def test_two_flows_share_a_marking_bottleneck(bench):
    """With ECN, CNPs slow both flows down to what the bottleneck carries:
    they share it fairly and RC retransmits far less than when RED has to
    drop."""
    devs = rdma.endpoints(bench)
    bench.a.run("ping -c 1 -W 5 10.77.0.2")
    off = measure(bench, devs, "off", {"ecn": 0, **PARAMS})
    marking = measure(bench, devs, "marking only", {"ecn": 1, **PARAMS, **NO_LIMITER})
    limiter = {"ecn": 1, **PARAMS, "cc_min_mbps": 1}
    on = measure(bench, devs, "on", limiter)
    # Without ECN nothing is marked and no CNP is sent ...
    assert off["cnp_sent"] == 0 and off["marked"] == 0, off
    # ... and the bottleneck must have bitten, or this proves nothing.
    assert off["retransmits"] > 0 and off["early"] + off["pdrop"] > 0, off
    for r in (marking, on):
        assert r["marked"] > 0 and r["rx_ecn_ce"] > 0, r
        assert r["cnp_sent"] > 0 and r["cnp_handled"] > 0, r
    assert marking["tx_paced"] == 0 and on["tx_paced"] > 0, (marking, on)
    assert on["jain"] >= 0.9, on
    assert 2 * on["retransmits"] <= off["retransmits"], (off, on)
    # The limiter, not only the marking, keeps the queue shorter than the
    # QPs' windows alone leave it standing (33 KB against 520 on an idle
    # host; 160 to 404 against 500 to 534 with the host's two cores
    # shared by another pair of guests). A loaded host's one round can
    # miss the margin: then a second says it, and a limiter that does not
    # cut leaves both at the windows' queue.
    bound = 0.8 * marking["backlog_kb"]
    queue = [on["backlog_kb"]]
    if queue[0] > bound:
        queue.append(measure(bench, devs, "on, again", limiter)["backlog_kb"])
    assert min(queue) <= bound, (marking, on, queue)


def cnp_frames(g):
    """The CNPs of the capture, as tshark in the guest dissects them:
    [(ECN field, destination QP)]; asserts nothing in it is malformed."""
    bad = g.run(f"tshark -r {PCAP} -Y '!infiniband || _ws.malformed || "
                f"_ws.expert.severity >= \"Warning\"'", timeout=180).out
    assert not bad.strip(), f"CNPs tshark does not take:\n{bad[:2000]}"
    out = g.run(f"tshark -r {PCAP} -Y 'infiniband.bth.opcode == 129' -T fields "
                "-e ip.dsfield.ecn -e infiniband.bth.destqp", timeout=180).out
    return [tuple(line.split("\t")) for line in out.splitlines() if line]


@pytest.mark.sroce(ONLY)
def test_data_intact_through_the_bottleneck(bench):
    """Every byte and atomic sroce-integrity moves arrives, with the
    requesters paced by CNPs, which tshark dissects as CNPs. Not its
    reads (-R): the limiter paces requests, not the read responses they
    ask for, and four outstanding reads of a MiB each answered at once
    overflow the port's 1 MB and, answered again whole, exhaust a read's
    retries (docs/BENCH.md)."""
    a, b = bench.a, bench.b
    (da, ga), (db, gb) = rdma.endpoints(bench)
    set_params((a, b), {"ecn": 1, **PARAMS})
    bottleneck(b)
    # The CNPs B sends to A: BTH opcode 0x81, the UDP payload's first byte.
    a.run(f"rm -f {PCAP} /tmp/tcpdump.pid")
    cap = a.spawn(f"echo $$ > /tmp/tcpdump.pid; exec tcpdump -i eth0 -n -s 0 -U "
                  f"-w {PCAP} 'udp dst port 4791 and udp[8] == 0x81'", timeout=600)
    a.wait_for(f"test -s {PCAP}", timeout=60)
    try:
        srv = b.spawn(f"exec {INTEGRITY} -d {db} -g {gb} -t 240", timeout=300)
        cli = a.run(f"{INTEGRITY} -d {da} -g {ga} -t 240 -q 2 -n 6 -S 65536,1m+5 -R {b.ip}",
                    timeout=300, check=False)
        res = srv.wait(60, check=False)
    finally:
        a.run("kill -INT $(cat /tmp/tcpdump.pid)", check=False)
        cap.wait(30, check=False)
        undo(b)
    assert cli.ok and res.ok, (f"client rc={cli.rc}\n{cli.out}{cli.err}"
                               f"server rc={res.rc}\n{res.out}{res.err}")
    n = summary(cli.out)
    assert n and n["bytes"] > 6 << 20, cli.out
    handled = rdma.counters(a, da)["cnp_handled"]
    cnps = cnp_frames(a)
    print(f"cc: {n['bytes']} bytes checked, {handled} CNPs handled, "
          f"{len(cnps)} captured, e.g. {cnps[:2]}")
    assert handled > 0 and cnps, (handled, cnps)
    # Not ECN-capable (0), each to a QP of A's.
    assert all(ecn == "0" and int(qpn, 16) > 1 for ecn, qpn in cnps), cnps
