# SPDX-License-Identifier: GPL-2.0
"""Data integrity between the guests. sroce-integrity moves patterned data
with every RC opcode (UC's with -u), both ways on several QPs at once, and
checks every byte, every completion and every atomic counter; it runs on a
clean link and on one that loses, duplicates, reorders and delays frames.
sroce-badaccess breaks the remote access rules and checks what follows.
Before any of that, sroce-sendq checks what libsroce writes into the send
queue, through the flush of a QP that sends nothing.

The servers run in guest B, the clients in guest A. The tools bound their
own run (-t) and exit non-zero with the reason on any failure.
"""

import re

import pytest

from tools.testing.bench.lib import rdma
from tools.testing.bench.lib.integrity import INTEGRITY, summary

TIMEOUT = 240
BADACCESS = "build/tools/sroce-badaccess"
SENDQ = "build/tools/sroce-sendq"
B_GID = "0000:0000:0000:0000:0000:ffff:0a4d:0002"
# Each tool's own bound; the guest commands get some slack on top.
TOOL_TIMEOUT = 180
NETEM = "netem loss 1% duplicate 1% reorder 5% delay 1ms"


def sendq(bench):
    """sroce-sendq in A, its QPs' path to B: {check: "ok" or why not}."""
    a = bench.a
    dev = bench.attach(a)
    idx = a.gid_index(dev)
    # The core resolves the path's MAC through the neighbour table.
    a.run("ping -c 1 -W 5 10.77.0.2")
    r = a.run(f"{SENDQ} -d {dev} -g {idx} -r {B_GID}", timeout=90,
              check=False)
    print(r.out.strip())
    checks = dict(line.split(None, 1) for line in r.out.splitlines()
                  if not line.startswith("sroce-sendq"))
    assert checks and r.rc in (0, 1), f"rc={r.rc}\n{r.out}{r.err}"
    return checks


SENDQ_ONLY = "checks libsroce, which serves sroce devices only"


@pytest.mark.sroce(SENDQ_ONLY)
def test_send_queue_entries(bench):
    """Requests a QP cannot carry fail at post time; every other one,
    posted through ibv_post_send() or ibv_wr_*() in SQD, comes back from
    the flush with its wr_id and opcode, in order; failed and aborted
    ibv_wr_*() batches leave nothing behind."""
    checks = sendq(bench)
    checks.pop("flush_posted_in_error", None)
    bad = {k: v for k, v in checks.items() if v != "ok"}
    assert not bad, bad


@pytest.mark.sroce(SENDQ_ONLY)
def test_send_queue_flush_after_error(bench):
    """A request posted to a QP in the error state is flushed too: the
    kernel, which no longer reads the queue, must be rung and flush."""
    checks = sendq(bench)
    assert checks.get("flush_posted_in_error") == "ok", checks


def client_server(bench, tool, args="", port=18517):
    """Server in B, client in A; both must exit 0. The client's output."""
    a, b = bench.a, bench.b
    (da, ga), (db, gb) = rdma.endpoints(bench)
    common = f"-d {{}} -g {{}} -p {port} -t {TOOL_TIMEOUT}"
    srv = b.spawn(f"exec {tool} {common.format(db, gb)}",
                  timeout=TOOL_TIMEOUT + 30)
    cli = a.run(f"{tool} {common.format(da, ga)} {args} {b.ip}",
                timeout=TOOL_TIMEOUT + 30, check=False)
    res = srv.wait(TOOL_TIMEOUT + 30, check=False)
    assert cli.ok and res.ok, (f"client rc={cli.rc}\n{cli.out}{cli.err}"
                               f"server rc={res.rc}\n{res.out}{res.err}")
    print(cli.out.strip())
    return cli.out, res.out


def integrity(bench, args):
    """One sroce-integrity run: its summary as {'write': 24, ...}."""
    out, srv_out = client_server(bench, INTEGRITY, args)
    counts = summary(out)
    assert counts and out.strip().splitlines()[-1].startswith("sroce-integrity: OK"), out
    assert srv_out.strip().splitlines()[-1].startswith("sroce-integrity: OK")
    return counts


def test_rc_every_opcode(bench):
    """Two QPs, twelve iterations over sizes from 1 byte to 256 KiB."""
    n = integrity(bench, "-q 2 -n 12")
    assert n["write"] == n["write_imm"] == 24 and n["send"] == 72, n
    assert n["read"] >= 24 and n["fetch_add"] == 96, n
    assert n["cmp_swap"] >= 2 * 24 and n["inline"] == 24 and n["exact"], n


def test_rc_large_messages(bench):
    """Messages of several MiB, odd lengths, thousands of packets each."""
    n = integrity(bench, "-q 1 -n 2 -S 3m+5,1m+4093")
    assert n["bytes"] > 2 * (3 << 20), n


def test_rc_many_qps_share_counters(bench):
    """Eight QPs each way hit the same two counters: exact sums, no value
    fetched twice, compare&swap retried when another QP got in first."""
    n = integrity(bench, "-q 8 -n 4 -S 1,4097,65536")
    assert n["fetch_add"] == 8 * 4 * 4 and n["exact"], n


@pytest.mark.smp(2)
def test_rc_many_qps_two_vcpus(bench):
    """The same on guests with two vCPUs each (MTTCG): requesters,
    responders, completions and both processes' threads really run at
    once. The guests keep the TSC as their clocksource (tsc=reliable,
    tools/testing/bench/guests.py), which perftest's calibration needs."""
    for g in bench.guests:
        assert g.run("nproc").out.strip() == "2"
        clock = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
        assert g.run(f"cat {clock}").out.strip() == "tsc"
    n = integrity(bench, "-q 4 -n 4 -S 1,4097,65536")
    assert n["fetch_add"] == 4 * 4 * 4 and n["exact"], n

def test_uc(bench):
    """UC: Write, Write with Immediate and Send only."""
    n = integrity(bench, "-u -q 2 -n 12")
    assert n["write_imm"] == 24 and n["send"] == 72, n
    assert "read" not in n and "fetch_add" not in n, n


class Lossy:
    """netem on both guests' eth0 for the duration of a `with` block: each
    direction loses, duplicates, reorders and delays frames."""

    def __init__(self, bench):
        self.guests = (bench.a, bench.b)

    def __enter__(self):
        for g in self.guests:
            g.run("modprobe sch_netem")
            g.run(f"tc qdisc add dev eth0 root {NETEM}")
        return self

    def dropped(self):
        """Frames netem dropped, over both guests."""
        return sum(int(n) for g in self.guests for n in re.findall(
            r"dropped (\d+)", g.run("tc -s qdisc show dev eth0").out))

    def __exit__(self, *exc):
        for g in self.guests:
            g.run("tc qdisc del dev eth0 root", check=False)


def test_rc_lossy_link(bench):
    """Writes, Sends and Reads up to 128 KiB over a lossy link: RC still
    delivers every byte once, in order (UC loses messages by design)."""
    with Lossy(bench) as link:
        n = integrity(bench, "-A -q 2 -n 10 -S 1,1025,4097,32771,131075")
        # Unless netem did drop frames, the test proves nothing.
        assert link.dropped() > 0
    assert n["bytes"] > 1 << 20, n


test_rc_lossy_link.TIMEOUT = TOOL_TIMEOUT + 60

# Seen with Debian 12's 6.1 kernel: a Fetch&Add or Compare&Swap completes
# successfully without its fetched value being written, in every run or
# every other on the lossy link (the counters stay exact). The likely path:
# rxe_comp.c's check_psn() completes the oldest WQE through
# COMPST_COMP_ACK, which skips do_atomic(), when a response for its last
# PSN comes in behind comp.psn.
RXE_LOSSY_ATOMICS = ("rxe in Debian's 6.1 completes atomics whose response "
                     "was retried without writing the fetched value")


def test_rc_lossy_atomics(bench):
    """Atomics over the lossy link: each applied once, exactly, and its
    fetched value delivered, though requests and responses are lost and
    duplicated."""
    if bench.driver == "rxe":
        pytest.skip(RXE_LOSSY_ATOMICS)
    with Lossy(bench) as link:
        n = integrity(bench, "-q 2 -n 10 -S 1,4097")
        assert link.dropped() > 0
    assert n["exact"], n


test_rc_lossy_atomics.TIMEOUT = TOOL_TIMEOUT + 60


class Dropping:
    """For the duration of a `with` block, tc filters on the guests'
    ingress drop every nth frame of one BTH opcode (gact's deterministic
    drop): (guest, opcode, n) each. The opcode is the first byte of the
    UDP payload: offset 28 of an IPv4 packet without options."""

    def __init__(self, *rules):
        self.rules = rules

    def __enter__(self):
        for g, op, n in self.rules:
            g.run("tc qdisc add dev eth0 handle ffff: ingress")
            g.run("tc filter add dev eth0 parent ffff: protocol ip u32 "
                  f"match ip dport 4791 0xffff match u8 {op:#04x} 0xff at 28 "
                  f"action gact ok random determ drop {n}")
        return self

    def dropped(self):
        """Frames the filters dropped, per rule."""
        out = [g.run("tc -s filter show dev eth0 parent ffff:").out
               for g, _, _ in self.rules]
        return [sum(int(n) for n in re.findall(r"dropped (\d+)", o)) for o in out]

    def __exit__(self, *exc):
        for g, _, _ in self.rules:
            g.run("tc qdisc del dev eth0 ingress", check=False)


READ_REQUEST, READ_RESPONSE_MIDDLE = 0x0C, 0x0E


def test_rc_reads_whose_requests_are_lost(bench):
    """Reads of up to 1 MiB (a thousand packets) whose requests and
    responses are lost: every third read request A sends, and every 150th
    middle response B sends. A read whose request was lost is asked for
    again in pieces; the responder takes the first piece as a read of its
    own, and a response lost in it must be asked for again within that
    piece, or the responder cannot answer and the read fails with its
    retries ("transport retry counter exceeded"), as it did on the first
    run of every try before the pieces were cut at fixed offsets."""
    a, b = bench.a, bench.b
    with Dropping((b, READ_REQUEST, 3), (a, READ_RESPONSE_MIDDLE, 150)) as f:
        n = integrity(bench, "-A -q 1 -n 6 -S 1m+4093,300000")
        dropped = f.dropped()
    assert all(dropped), dropped
    assert n["read"] >= 6 and n["bytes"] > 6 << 20, n


test_rc_reads_whose_requests_are_lost.TIMEOUT = TOOL_TIMEOUT + 60


def test_remote_access_violations(bench):
    """Bad, dead and foreign keys, read-only and write-only regions, both
    ends of a region, atomics without access: each fails on the wire."""
    out, _ = client_server(bench, BADACCESS, port=18518)
    assert out.strip().splitlines()[-1].startswith("sroce-badaccess: OK"), out
