# SPDX-License-Identifier: GPL-2.0
"""QP1 (GSI), rdma_cm and multicast between the guests.

rdma_cm's users never exchange QP numbers by hand: the kernel's CM does,
with MADs on each port's QP1 over RoCEv2, and so every program here
proves that sroce runs ib_mad's GSI QP (kernel post verbs, kernel CQs),
then whatever the program itself moves: rping's RDMA reads and writes
with -V (it compares every ping buffer), 1000 pings, ucmatose's sends (RC), udaddy's
datagrams (UD, resolved by SIDR), mckey's multicast datagrams, and
perftest over rdma_cm (-R). Server on B, client on A, IPv4 and IPv6.

Then: 500 rdma_cm connect/disconnect cycles with a checked message each
(resource counts back to where they started, the module unloads after),
and hostile datagrams for QP1 (wrong Q_Key, P_Key, length, ICRC,
truncated), each dropped and counted, after which QP1 still works.
"""
import re
import time

import pytest

from tools.testing.bench.lib import perftest as pt
from tools.testing.bench.lib import roce
from tools.testing.bench.lib.rdma import counters, res_counts

# make check runs this file on the 6.12 guests too (scripts/check).
pytestmark = pytest.mark.kernel("6.12")

TIMEOUT = 600
RUN_TIMEOUT = 120
CHURN = 500


def cm_setup(bench):
    """sroce on both guests with the rdma_cm user interface loaded."""
    dev = {g.name: bench.attach(g) for g in (bench.a, bench.b)}
    for g in (bench.a, bench.b):
        g.run("modprobe rdma_ucm")
    return dev


def addr(g, ip):
    return g.ip if ip == "v4" else g.ip6


def pair(bench, server_cmd, client_cmd, timeout=RUN_TIMEOUT, ready=None, port=None):
    """Server on B, then client on A (perftest.cm_pair)."""
    return pt.cm_pair(bench.b, bench.a, server_cmd, client_cmd, timeout, ready, port)


# ---- the programs -----------------------------------------------------------

def rping(bench, ip, count):
    b = bench.b
    port = pt.next_port(7000)
    srv, cli, text = pair(bench, f"rping -s -a {addr(b, ip)} -p {port} -v -V -C {count}",
                          f"rping -c -a {addr(b, ip)} -p {port} -v -V -C {count}", port=port)
    for side, res in (("client", cli), ("server", srv)):
        pings = re.findall(r"ping data: rdma-ping-(\d+): ", res.out)
        assert [int(p) for p in pings] == list(range(count)), \
            f"{side}: {len(pings)} of {count} pings shown\n{text[-3000:]}"
        # rping -V prints this and goes on when a buffer does not compare.
        assert "data mismatch" not in res.out + res.err, f"{side}: data mismatch\n{text[-3000:]}"


@pytest.mark.sroce("checks QP1 and rdma_cm over sroce")
def test_rping_v4(bench):
    cm_setup(bench)
    rping(bench, "v4", 1000)


@pytest.mark.sroce("checks QP1 and rdma_cm over sroce")
def test_rping_v6(bench):
    cm_setup(bench)
    rping(bench, "v6", 1000)


def cmatose(bench, program, ip, count=20):
    a, b = bench.a, bench.b
    srv, cli, text = pair(bench, f"{program} -b {addr(b, ip)} -C {count}",
                          f"{program} -s {addr(b, ip)} -b {addr(a, ip)} -C {count}")
    for side, res in (("client", cli), ("server", srv)):
        assert "data transfers complete" in res.out and "return status 0" in res.out, \
            f"{side} did not complete its transfers\n{text[-3000:]}"


@pytest.mark.sroce("checks QP1 and rdma_cm over sroce")
def test_ucmatose(bench):
    cm_setup(bench)
    for ip in ("v4", "v6"):
        cmatose(bench, "ucmatose", ip)


@pytest.mark.sroce("checks QP1 and rdma_cm over sroce")
def test_udaddy(bench):
    cm_setup(bench)
    for ip in ("v4", "v6"):
        cmatose(bench, "udaddy", ip)


@pytest.mark.sroce("checks multicast over sroce")
def test_mckey(bench):
    """A sender on A, a receiver on B, one IPv4 group; every datagram must
    arrive. (rdma_cm in 6.1 refuses RoCEv2 multicast over IPv6 with
    -ENOTSUPP in cma_iboe_join_multicast(), for every device.)"""
    dev = cm_setup(bench)
    a, b = bench.a, bench.b
    count = 50
    before = counters(b, dev["b"])
    # The receiver posts its receives, joins, and says so: then the sender.
    out = f"/tmp/mckey-receiver-{pt.next_port(0)}.out"
    srv, cli, text = pair(bench, f"bash -c 'set -o pipefail; stdbuf -oL mckey -m 239.1.2.3"
                          f" -b {b.ip} -C {count} | tee {out}'",
                          f"mckey -m 239.1.2.3 -b {a.ip} -s -C {count}",
                          ready=f"grep -q 'joined dgid' {out}")
    for side, res in (("sender", cli), ("receiver", srv)):
        assert "joined dgid: ::ffff:239.1.2.3" in res.out and "test complete" in res.out \
            and "return status 0" in res.out, f"{side} did not complete\n{text[-3000:]}"
    after = counters(b, dev["b"])
    assert after["rx_packets"] - before["rx_packets"] >= count, (before, after)
    # A receiver that left its group hears nothing more (the netdev left it too).
    assert "01:00:5e:01:02:03" not in b.run("ip maddr show dev eth0").out


def perftest_cm(bench, program, ip, extra=""):
    """One perftest program over rdma_cm (-R), server on B, client on A, at
    perftest's default size, through the one perftest runner."""
    a, b = bench.a, bench.b
    run = pt.run_perftest(b, a, program, "sroce0", None, addr(b, ip), pt.DEFAULT_SIZE,
                          iters=200, extra=extra, timeout=RUN_TIMEOUT, rdma_cm=True)
    text = run.text
    problems = pt.judge(run, program, None, 200, "RC")
    parsed = run.parsed["client"]
    assert parsed and parsed["rows"], f"client printed no results\n{text[-3000:]}"
    want = [b.ip if ip == "v4" else b.ip6]
    assert [str(g) for g in parsed["gids"][1:]] == want, \
        f"remote GID {parsed['gids']}, not {want}\n{text[-3000:]}"
    assert not problems, f"{problems}\n{text[-3000:]}"


@pytest.mark.sroce("checks QP1 and rdma_cm over sroce")
def test_perftest_rdma_cm(bench):
    """IPv4 only: perftest 4.5 resolves the server's name for rdma_cm with
    AF_INET hints ("Address family for hostname not supported" for an
    IPv6 address, -x or --ipv6 notwithstanding). rping, ucmatose and
    udaddy cover rdma_cm over IPv6."""
    cm_setup(bench)
    for program in ("ib_send_bw", "ib_read_lat", "ib_write_bw"):
        perftest_cm(bench, program, "v4")


# ---- churn ---------------------------------------------------------------------

@pytest.mark.sroce("checks QP1 and rdma_cm over sroce")
def test_connection_churn(bench):
    """500 connect/send/disconnect cycles; then every restrack count is back,
    and the device and module go away (nothing holds them)."""
    dev = cm_setup(bench)
    a, b = bench.a, bench.b
    start = {g.name: res_counts(g, dev[g.name]) for g in (a, b)}
    tool = f"{bench.top}/build/tools/sroce-cmchurn"
    port = pt.next_port(7500)
    srv, cli, text = pair(bench, f"{tool} -s -b {b.ip} -p {port} -n {CHURN}",
                          f"{tool} -c {b.ip} -p {port} -n {CHURN}", timeout=900, port=port)
    assert f"cycles {CHURN}" in cli.out and f"cycles {CHURN}" in srv.out, text[-3000:]
    for g in (a, b):
        # The processes are gone; the kernel may still be tearing down.
        deadline = time.monotonic() + 30
        while (end := res_counts(g, dev[g.name])) != start[g.name] and \
                time.monotonic() < deadline:
            time.sleep(1)
        assert end == start[g.name], f"[{g.name}] resources {end}, at start {start[g.name]}"
    for g in (a, b):
        g.run(f"rdma link delete {dev[g.name]}", timeout=60)
        g.run("modprobe -r sroce", timeout=60)


# ---- hostile datagrams for QP1 ------------------------------------------------

MAD = bytes([1, 7, 2, 1]) + bytes(252)  # base version 1, CM class, version 2


def ud_frame(bench, qkey=0x80010000, pkey=0xFFFF, payload=MAD, dqpn=1, cut=0,
             fix_icrc=True):
    a, b = bench.a, bench.b
    deth = qkey.to_bytes(4, "big") + (1).to_bytes(4, "big")
    t = roce.bth(0x64, dqpn, 0, pkey=pkey) + deth + payload
    if cut:
        t = t[:cut]
    return roce.frame(t, a.mac, b.mac, b.ip, a.ip, fix_icrc=fix_icrc)


@pytest.mark.sroce("exercises sroce's QP1")
def test_hostile_mads_dropped_and_counted(bench):
    dev = cm_setup(bench)
    a, b = bench.a, bench.b
    cases = [
        ("wrong Q_Key", ud_frame(bench, qkey=0x12345678), "rx_bad_qkey"),
        ("wrong P_Key", ud_frame(bench, pkey=0x1234), "rx_bad_pkey"),
        ("truncated DETH", ud_frame(bench, cut=12 + 4), "rx_bad_header"),
        ("bad ICRC", ud_frame(bench, fix_icrc=False), "rx_bad_icrc"),
        ("short MAD", ud_frame(bench, payload=MAD[:100]), "rx_bad_mad"),
        ("oversized MAD", ud_frame(bench, payload=MAD + bytes(256)), "rx_bad_mad"),
    ]
    tool = f"{bench.top}/tools/testing/bench/lib/roce.py"
    for what, frame, counter in cases:
        before = counters(a, dev["a"])
        b.run(f"/usr/bin/python3 {tool} send eth0 {frame.hex()}")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            after = counters(a, dev["a"])
            if after[counter] > before[counter]:
                break
            time.sleep(0.3)
        assert after[counter] == before[counter] + 1, f"{what}: {counter} {before} -> {after}"
    # Still a working QP1, with all its receive buffers: many connections.
    tool = f"{bench.top}/build/tools/sroce-cmchurn"
    port = pt.next_port(7600)
    srv, cli, text = pair(bench, f"{tool} -s -b {b.ip} -p {port} -n 20",
                          f"{tool} -c {b.ip} -p {port} -n 20", port=port)
    assert "cycles 20" in cli.out, text
