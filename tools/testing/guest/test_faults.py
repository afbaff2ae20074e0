# SPDX-License-Identifier: GPL-2.0
"""Faults under traffic: sroce-integrity runs between the guests (server
in B, client in A, two RC QPs moving data both ways) and, while it runs,
something is taken away from under it: the rdma device, the link, the MTU,
the address its GID came from, or the link's reliability (netem).

test_lifecycle.py checks each of these on an idle device; here the point
is what traffic in flight makes of them. Each test expects:

- both tools end within their own bound (-t): with every byte verified
  when nothing was lost for good (netem, MTU, a short link flap), or with
  an error exit (1) where one is due (the device deleted; the address
  gone long enough for the retries to run out). Running out of time (2),
  or a tool that had to be killed, is a hang;
- the guest still answers, and once the tools have exited every
  `rdma resource` count (pd, cq, qp, mr, ...) is back to what it was
  before the traffic;
- with the fault undone, a fresh short sroce-integrity run passes;
- after the test (conftest's reset and gate) the module unloads and the
  kernel log holds no oops, WARN, BUG or lockdep report.

make faults-full adds the full_only variants: faults held until the
traffic ends, and the short faults again under perftest's ib_write_bw -D
(test_fault_under_perftest).

Each test prints a "fault:" line with the outcome and the bytes verified
(docs/HARDENING.md has the table).
"""

import re
import time

import pytest

from tools.testing.bench.lib import perftest
from tools.testing.bench.lib.integrity import FAILED, OK, Pair, summary
from tools.testing.bench.lib.rdma import res_counts

TIMEOUT = 150
# The traffic: two QPs each way, sizes on both sides of a 4 KiB page and
# up to 64 KiB, long enough (a few seconds under TCG) for the fault to
# land mid-transfer. Atomics are left out (-A): rxe 6.1 loses fetched
# values on retried atomics (test_integrity.py), which is not the point.
TRAFFIC = "-A -q 2 -n 150 -S 4097,65536,1025"
# The tools' bound: far above the traffic's few seconds, so that only a
# hang reaches it.
SECONDS = 60
# The fresh run once the fault is undone.
RECOVERY = "-q 1 -n 4 -S 1,4097,65536"
NETEM = "netem loss 1% duplicate 1% reorder 5% delay 1ms"
SYS = "/sys/class/infiniband"


def attach(bench, g):
    dev = bench.attach(g)
    return dev, g.gid_index(dev)


def wait_port(g, dev, active):
    state = "4: ACTIVE" if active else "1: DOWN"
    g.wait_for(f"grep -qx '{state}' {SYS}/{dev}/ports/1/state", timeout=30)


def wait_streaming(g, pair, comm="sroce-integrity"):
    """Until g's end of the traffic (process comm) has a QP connected
    (RTR or RTS: perftest's write server stops at RTR). The loop runs in the guest: a request per poll costs a good
    part of the traffic's few seconds under TCG."""
    poll = ("for i in $(seq 100); do rdma res show qp | "
            f"grep -qE 'state RT[RS] .*comm {comm}' && exit 0; sleep 0.05; done; exit 1")
    deadline = time.monotonic() + 60
    while not g.run(poll, timeout=60, check=False).ok:
        assert pair.running() and time.monotonic() < deadline, \
            "the traffic never ran\n" + Pair.text(*pair.wait())


def wait_counts(bench, devs, want, timeout=30):
    """Until each guest's rdma resource counts equal want's."""
    deadline = time.monotonic() + timeout
    while True:
        got = [res_counts(g, dev) for g, dev in zip(bench.guests, devs)]
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


# The faults: inject(bench, devs, pair) while the traffic runs, undo(bench,
# devs) after (it returns the devices as they are then), and the outcomes
# the tools may have: client and server exit statuses.
def delete_inject(bench, devs, pair):
    bench.detach(bench.b, devs[1])


def delete_undo(bench, devs):
    return devs[0], bench.attach(bench.b)


def flap_inject(bench, devs, pair):
    b = bench.b
    # IPv6 is not used here, but the reset expects the bench's addresses
    # (keep_addr_on_down, set before the traffic).
    b.run("ip link set eth0 down")
    wait_port(b, devs[1], active=False)


def flap_undo(bench, devs):
    b = bench.b
    b.run("ip link set eth0 up")
    wait_port(b, devs[1], active=True)
    return devs


def mtu_inject(bench, devs, pair):
    # B only: a virtio-net MTU change takes a while under TCG, and the
    # fault must land within the traffic's seconds. The QPs keep the path
    # MTU they were connected with.
    bench.b.run("ip link set eth0 mtu 9000")


def mtu_undo(bench, devs):
    bench.b.run("ip link set eth0 mtu 1500")
    wait_port(bench.b, devs[1], active=True)
    return devs


def address_inject(bench, devs, pair):
    b = bench.b
    b.run(f"ip addr del {b.ip}/24 dev eth0")
    gid = "0000:0000:0000:0000:0000:ffff:0a4d:0002"
    b.wait_for(f"! grep -qx {gid} {SYS}/{devs[1]}/ports/1/gids/*", timeout=30)


def address_undo(bench, devs):
    b = bench.b
    b.run(f"ip addr add {b.ip}/24 dev eth0")
    b.gid_index(devs[1])
    return devs


def netem_dropped(g):
    """Frames eth0's netem dropped."""
    out = g.run("tc -s qdisc show dev eth0 root").out
    return sum(int(n) for n in re.findall(r"dropped (\d+)", out))


def netem_inject(bench, devs, pair):
    for g in bench.guests:
        g.run(f"tc qdisc add dev eth0 root {NETEM}")
    # Unless netem did drop frames of this traffic, the test proves nothing.
    while pair.running() and not netem_dropped(bench.a) + netem_dropped(bench.b):
        time.sleep(0.2)


def netem_undo(bench, devs):
    dropped = sum(netem_dropped(g) for g in bench.guests)
    for g in bench.guests:
        g.run("tc qdisc del dev eth0 root")
    assert dropped, "netem dropped no frame of the traffic"
    return devs


def outage_inject(bench, devs, pair):
    for g in bench.guests:
        g.run("tc qdisc add dev eth0 root netem loss 100%")


def netem_undo(bench, devs):
    for g in bench.guests:
        g.run("tc qdisc del dev eth0 root")
    return devs


# Seen with rdma_rxe in Debian's 6.1: under a total outage neither side's
# QPs report "retry counter exceeded" within the tools' 60 s, so both
# time out (exit 2); with B's address gone, B's QP fails (local QP
# operation error) but A's still waits when the tool's bound ends.
RXE_HELD = ("rxe 6.1's RC QPs do not run out of retries under an outage: "
            "the tools time out")


class Fault:
    """inject(bench, devs, pair) while the traffic runs; with hold, wait for the
    traffic to end before undo(bench, devs), which returns the devices as
    they are then; allowed: the exit statuses the tools may have."""

    def __init__(self, inject, undo, allowed, hold=False):
        self.inject, self.undo, self.allowed, self.hold = inject, undo, allowed, hold


FAULTS = [
    # The server's device is gone: its process learns it, the client's
    # QPs run out of retries; both report the failure.
    # rdma_rxe cannot disassociate a process from its device: its
    # `rdma link delete` waits for the traffic to end and close it.
    pytest.param(Fault(delete_inject, delete_undo, {FAILED}), id="rdma_link_delete",
                 marks=pytest.mark.sroce("rxe's link delete waits for its users to close "
                                         "the device (no disassociation)")),
    # The port goes down and up within the QPs' retries (7 of ~0.27 s):
    # the traffic goes on, unless the flap outlasted them on a slow host.
    pytest.param(Fault(flap_inject, flap_undo, {OK, FAILED}), id="link_down_up"),
    # The QPs' path MTU (1024) fits either MTU: nothing may be lost.
    pytest.param(Fault(mtu_inject, mtu_undo, {OK}), id="mtu_1500_9000_1500"),
    # The GID goes while QPs use it: they may go on with the attribute
    # they hold, or fail; either way, no hang and nothing leaked.
    pytest.param(Fault(address_inject, address_undo, {OK, FAILED}), id="address_removed"),
    # RC recovers every frame netem loses, duplicates or reorders.
    pytest.param(Fault(netem_inject, netem_undo, {OK}), id="netem_loss_dup_reorder"),
    # Faults held until the traffic ends (make faults-full). An outage
    # (every frame lost both ways) outlasts every retry: both ends must
    # fail, not wait. It stands for a link held down, which this bench
    # cannot do: while one guest's eth0 is down its QEMU stops reading
    # the link, and the other guest's QEMU, its writes blocked, freezes
    # whole (seen with a plain UDP flood, no RDMA device at all).
    pytest.param(Fault(outage_inject, netem_undo, {FAILED}, hold=True),
                 id="outage_held", marks=[pytest.mark.full_only, pytest.mark.sroce(RXE_HELD)]),
    pytest.param(Fault(address_inject, address_undo, {OK, FAILED}, hold=True),
                 id="address_removed_held",
                 marks=[pytest.mark.full_only, pytest.mark.sroce(RXE_HELD)]),
]


def wait_ended(pair):
    deadline = time.monotonic() + pair.seconds + 30
    while pair.running() and time.monotonic() < deadline:
        time.sleep(0.5)


def prepare(bench):
    """Both devices attached, their resource counts before the traffic, and
    what the faults need loaded: a fault must land within its few seconds.
    Returns (ends, devs, baseline)."""
    ends = [attach(bench, g) for g in (bench.a, bench.b)]
    devs = [dev for dev, _ in ends]
    baseline = [res_counts(g, dev) for g, dev in zip(bench.guests, devs)]
    for g in bench.guests:
        g.run("modprobe sch_netem && sysctl -qw net.ipv6.conf.eth0.keep_addr_on_down=1")
    return ends, devs, baseline


def streaming(bench, port):
    """prepare(), then sroce-integrity between the guests with B's QPs
    connected and the client still running: the fault must land while
    data moves, not after. Returns (ends, devs, baseline, pair)."""
    ends, devs, baseline = prepare(bench)
    pair = Pair(bench.a, bench.b, ends, TRAFFIC, port=port, seconds=SECONDS)
    try:
        wait_streaming(bench.b, pair)
        assert pair.running(), "the traffic ended before the fault"
    except BaseException:
        pair.wait()
        raise
    return ends, devs, baseline, pair


def fresh_run(bench, ends, port):
    """A short sroce-integrity run between the (dev, gid_index) ends, which
    must pass: the devices recovered. Returns its summary()."""
    cli, srv = Pair(bench.a, bench.b, ends, RECOVERY, port=port, seconds=SECONDS).wait()
    after = summary(cli.out)
    assert cli.rc == srv.rc == OK and after, Pair.text(cli, srv)
    return after


def record_fault(record_property, cli, fresh):
    """For make hardening's table (tools/testing/bench/lib/hardening.py):
    one fault injected, and the bytes the client verified under it (perftest
    verifies none) and in the fresh run."""
    under = summary(cli.out)
    record_property("faults", 1)
    record_property("bytes_verified", (under["bytes"] if under else 0) + fresh["bytes"])


@pytest.mark.parametrize("fault", FAULTS)
def test_fault_under_traffic(request, bench, fault, record_property, port=18530):
    name = request.node.callspec.id
    a, b = bench.a, bench.b
    t0 = time.monotonic()
    ends, devs, baseline, pair = streaming(bench, port)
    try:
        fault.inject(bench, devs, pair)
        # Asked of B: with B's eth0 down, A's QEMU may stall until B
        # reads the link again (the held link-down case above).
        injected = pair.serving()
        if fault.hold:
            wait_ended(pair)
        devs = fault.undo(bench, devs)
    finally:
        cli, srv = pair.wait()
    took = time.monotonic() - t0
    text = Pair.text(cli, srv)
    # A run that ended before the fault was in place proves nothing.
    assert injected or cli.rc != OK, "the traffic ended before the fault\n" + text
    # The tools' own bound ran out (2) or they had to be killed: a hang.
    assert {cli.rc, srv.rc} <= fault.allowed, text
    verified = summary(cli.out)
    if cli.rc == OK:
        assert verified and srv.rc == OK and summary(srv.out), text

    # The guests answer, and nothing the tools made is left.
    for g, peer in ((a, b), (b, a)):
        g.run(f"ping -c 1 -W 5 {peer.ip}", timeout=15)
    counts = wait_counts(bench, devs, baseline)
    assert counts == baseline, f"rdma resource: {baseline} -> {counts}"

    # The device recovered: a fresh run passes.
    ends = [(dev, g.gid_index(dev)) for g, dev in zip(bench.guests, devs)]
    after = fresh_run(bench, ends, port + 1)
    record_fault(record_property, cli, after)
    counts = wait_counts(bench, devs, baseline)
    assert counts == baseline, f"rdma resource after the fresh run: {baseline} -> {counts}"

    print(f"fault: {name} driver {bench.driver}: client rc {cli.rc} server rc {srv.rc} "
          f"in {took:.1f}s, {verified['bytes'] if verified else 0} bytes verified "
          f"under the fault; fresh run {after['bytes']} bytes verified")
    if cli.rc != OK:
        print("client said: " + (cli.err.strip().splitlines() or ["(nothing)"])[-1])
        print("server said: " + (srv.err.strip().splitlines() or ["(nothing)"])[-1])


class PerftestPair:
    """ib_write_bw for a duration (-D) between the guests, server in B,
    client in A, both in the background; what the faults need of a Pair."""

    def __init__(self, bench, ends, seconds):
        (da, ga), (db, gb) = ends
        port = perftest.next_port(18600)
        self.seconds = seconds + 60
        srv, cli = perftest.perftest_cmds("ib_write_bw", db, gb, port, bench.b.ip,
                                          size=65536, extra=f"-D {seconds}")
        cli = cli.replace(f"-x {gb}", f"-x {ga}").replace(f"-d {db}", f"-d {da}")
        self.server = bench.b.spawn(f"exec {srv}", timeout=self.seconds + 30)
        perftest.wait_listening(bench.b, port, self.server, timeout=60)
        self.client = bench.a.spawn(f"exec {cli}", timeout=self.seconds + 30)

    running = Pair.running
    serving = Pair.serving
    wait = Pair.wait


# The short faults again under perftest's ib_write_bw -D (make faults-full):
# perftest checks no data, but it keeps the send queue full of 64 KiB
# Writes, which the faults then meet. Exit 1 is perftest's failure.
PERFTEST_FAULTS = [pytest.param(*p.values, id=p.id, marks=[*p.marks, pytest.mark.full_only])
                   for p in FAULTS if not p.values[0].hold]


@pytest.mark.parametrize("fault", PERFTEST_FAULTS)
def test_fault_under_perftest(request, bench, fault, record_property):
    name = request.node.callspec.id
    a, b = bench.a, bench.b
    ends, devs, baseline = prepare(bench)

    pair = PerftestPair(bench, ends, seconds=15)
    try:
        wait_streaming(b, pair, comm="ib_write_bw")
        assert pair.running(), "the traffic ended before the fault"
        fault.inject(bench, devs, pair)
        injected = pair.serving()
        devs = fault.undo(bench, devs)
    finally:
        cli, srv = pair.wait()
    text = Pair.text(cli, srv)
    assert injected or cli.rc != OK, "the traffic ended before the fault\n" + text
    assert cli.rc in fault.allowed, text
    rows = perftest.parse(cli.out)["rows"]
    if cli.rc == OK:
        # A row perftest could not time (its clock calibration failed,
        # lib/perftest.py) reads zero; its iterations still say the
        # traffic ran. Such a run cannot be measured again: the fault is
        # behind it.
        untimed = perftest.CALIBRATION_RE.search(cli.out + cli.err)
        assert rows and (rows[0]["bw_avg"] > 0 or
                         (untimed and rows[0]["iters"] > 0)), text

    for g, peer in ((a, b), (b, a)):
        g.run(f"ping -c 1 -W 5 {peer.ip}", timeout=15)
    counts = wait_counts(bench, devs, baseline)
    assert counts == baseline, f"rdma resource: {baseline} -> {counts}"
    ends = [(dev, g.gid_index(dev)) for g, dev in zip(bench.guests, devs)]
    after = fresh_run(bench, ends, 18532)
    record_fault(record_property, cli, after)
    print(f"fault: {name} (ib_write_bw) driver {bench.driver}: client rc {cli.rc} "
          f"server rc {srv.rc}, {rows[0]['bw_avg'] if rows else 0} MB/s; "
          f"fresh run {after['bytes']} bytes verified")


@pytest.mark.sroce(RXE_HELD)
def test_peer_guest_killed(bench, record_property, port=18540):
    """B's whole machine dies under traffic (its QEMU killed): A's client
    runs out of retries and exits 1 within its bound, A keeps nothing the
    tool made, and once B is booted again a fresh run between them passes.
    B's own side dies with B: nothing of it is checked."""
    a, b = bench.a, bench.b
    t0 = time.monotonic()
    ends, devs, baseline, pair = streaming(bench, port)
    try:
        b.kill()
        cli = pair.client.wait(SECONDS + 30, check=False)
    except TimeoutError:
        cli = pair.client.kill()
    took = time.monotonic() - t0
    text = f"client rc={cli.rc}\n{cli.out}{cli.err}"
    assert cli.rc == FAILED, text

    a.run("true", timeout=15)
    deadline = time.monotonic() + 30
    while (left := res_counts(a, devs[0])) != baseline[0] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert left == baseline[0], f"[a] rdma resource: {baseline[0]} -> {left}"

    bench.reboot(b)
    ends = [(devs[0], ends[0][1]), attach(bench, b)]
    after = fresh_run(bench, ends, port + 1)
    record_fault(record_property, cli, after)
    print(f"fault: peer_guest_killed driver {bench.driver}: client rc {cli.rc} in {took:.1f}s, "
          f"{summary(cli.out)['bytes'] if summary(cli.out) else 0} bytes verified before; "
          f"fresh run {after['bytes']} bytes verified")
    print("client said: " + (cli.err.strip().splitlines() or ["(nothing)"])[-1])
