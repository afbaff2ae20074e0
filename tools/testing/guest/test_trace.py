# SPDX-License-Identifier: GPL-2.0
"""sroce's tracepoints (drivers/trace.h) read as a user reads them, from
tracefs in the guest, around exchanges whose every packet is known: the
packets of a pingpong on both sides, drops under their counter's name,
and an RNR NAK's whole story on a loopback pair.
"""
import json
import os
import re

import pytest

from tools.testing.bench.lib import roce
from tools.testing.bench.lib.pingpong import ITERS, pingpong

# Tracepoints are where the kernel's macros changed most between releases.
pytestmark = [pytest.mark.kernel("6.12"),
              pytest.mark.sroce("sroce's own tracepoints")]

TIMEOUT = 240
T = "/sys/kernel/tracing"
VERBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verbs")
# One event line: "... sroce_rx: sroce0 qpn=0x000011 psn=0x0a1b2c RC SEND_FIRST ..."
EVENT = re.compile(r"\ssroce_(\w+): (.*)$")


def trace_on(g):
    g.run(f"mountpoint -q {T} || mount -t tracefs tracefs {T}; "
          f"echo 0 > {T}/tracing_on; echo > {T}/trace; "
          f"echo 1 > {T}/events/sroce/enable; echo 1 > {T}/tracing_on")


def trace_off(g):
    """The events recorded since trace_on(g): [(name, text)]."""
    out = g.run(f"echo 0 > {T}/events/sroce/enable; cat {T}/trace").out
    return [(m.group(1), m.group(2)) for m in map(EVENT.search, out.splitlines()) if m]


def packets(events, name):
    """(qpn, psn, transport, opcode) of each sroce_tx or sroce_rx event."""
    return [tuple(re.match(r"\S+ qpn=(\S+) psn=(\S+) (\S+) (\S+)", text).groups())
            for ev, text in events if ev == name]


def test_pingpong_packets_and_completions(bench):
    """What A sends, B receives, field by field; B completes each of the
    client's messages once, with its length."""
    a, b = bench.a, bench.b
    dev = {g.name: bench.attach(g) for g in (a, b)}
    for g in (a, b):
        trace_on(g)
    size = 4096
    pingpong(bench, "ibv_rc_pingpong", [("v4", size)], dev)
    ev = {g.name: trace_off(g) for g in (a, b)}

    sent = {p for p in packets(ev["a"], "tx") if p[3].startswith("SEND")}
    got = {p for p in packets(ev["b"], "rx") if p[3].startswith("SEND")}
    # 4 KiB at the path MTU of 1024: first, two middles, last.
    assert len(got) == ITERS * 4, sorted(got)
    assert sent == got
    assert {p[2] for p in got} == {"RC"}
    assert any(p[3] == "ACK" for p in packets(ev["b"], "tx"))
    recv = [t for e, t in ev["b"] if e == "cqe" and " RECV " in t]
    assert len(recv) == ITERS, recv
    assert all("status=SUCCESS" in t and f"byte_len={size}" in t for t in recv), recv


def test_drops_name_their_counter(bench):
    """A frame with a bad ICRC and one to a QP that does not exist: one
    sroce_drop each, under the counter that counts it, as perf shows them
    (`perf script` decodes the reason from the event's format alone)."""
    a, b = bench.a, bench.b
    dev = bench.attach(a)
    # perf's workload marks that perf is recording, then waits for the
    # second drop to be counted. Without build IDs perf starts in half the
    # time (8 s against 17 under TCG).
    wait = (f"touch /tmp/perf-ready; until rdma statistic show link {dev}/1 | "
            f"grep -q 'rx_no_qp 1'; do sleep 0.1; done")
    job = a.spawn(f"rm -f /tmp/perf-ready; exec perf record -q -B -N -a -e sroce:sroce_drop "
                  f"-o /tmp/drops.data -- sh -c \"{wait}\"", timeout=120)
    a.wait_for("test -e /tmp/perf-ready", timeout=60)
    t = roce.bth(0x04, 0xfffe, 1) + b"0123456789abcdef"
    good = roce.frame(t, a.mac, b.mac, b.ip, a.ip)
    bad_icrc = good[:-1] + bytes([good[-1] ^ 1])
    tool = f"{bench.top}/tools/testing/bench/lib/roce.py"
    b.run(f"/usr/bin/python3 {tool} send eth0 {bad_icrc.hex()} {good.hex()}")
    job.wait(timeout=120)
    out = a.run("perf script -F event,trace -i /tmp/drops.data", timeout=120).out
    drops = re.findall(r"sroce_drop: .*reason=(\S+) n=(\d+)", out)
    assert drops == [("rx_bad_icrc", "1"), ("rx_no_qp", "1")], out


def test_rnr_naks_and_their_retries(bench):
    """A send to a QP without a receive WQE, over loopback: every attempt
    is an RNR NAK sent and received, each but the last a retransmission,
    and the send completes with RNR_RETRY_EXC_ERR."""
    a = bench.a
    dev = bench.attach(a, "sroce0")
    idx = a.gid_index(dev)
    trace_on(a)
    # The pair's path is its own GID: the DGID argument goes unused.
    out = a.run(f"/usr/bin/python3 {VERBS}/qp.py {dev} {idx} ::1 rnr", timeout=120).out
    res = json.loads(out.strip().splitlines()[-1])
    assert res["wcs"] == [[88, res["rnr_retry_exc"]]], res
    ev = trace_off(a)
    names = [e for e, _ in ev]
    # rnr_retry 6: the first try and six more.
    assert names.count("rnr_nak_sent") == 7, names
    assert names.count("rnr_nak_received") == 7, names
    resent = [t for e, t in ev if e == "retransmit"]
    assert len(resent) == 6 and all("why=rnr_nak" in t for t in resent), resent
    receiver = "qpn=0x%06x" % res["qpns"][1]
    assert all(t.startswith(receiver) for e, t in ev if e == "rnr_nak_sent"), ev
    assert any(e == "cqe" and "status=RNR_RETRY_EXC_ERR" in t for e, t in ev), ev
