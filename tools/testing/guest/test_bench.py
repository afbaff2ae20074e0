"""Checks of the two-guest bench itself (tools/testing/bench). Run with
/usr/bin/python3 -m pytest tools/testing/guest/test_bench.py"""
import os

import pytest

from tools.testing.bench.kmsg_gate import offending

TIMEOUT = 120


def test_guests_up_with_addresses(bench):
    for g in (bench.a, bench.b):
        out = g.run(f"hostname; uname -r; ip -o addr show dev {g.netdev}").out
        assert out.startswith(f"sroce-{g.name}\n"), out
        assert f"inet {g.ip}/24 " in out, out
        assert f"inet6 {g.ip6}/64 " in out, out
        # The guest must see the prepared modules tree, not the host's.
        g.run("test -e /lib/modules/$(uname -r)/modules.dep")


def test_ping_v4_v6(bench):
    for src, dst in ((bench.a, bench.b), (bench.b, bench.a)):
        src.run(f"ping -c 3 -i 0.2 -W 2 {dst.ip}", timeout=30)
        src.run(f"ping -6 -c 3 -i 0.2 -W 2 {dst.ip6}", timeout=30)


def test_background_jobs(bench):
    # A listener in B, a client in A: spawn/wait/kill and the timeout path.
    job = bench.b.spawn("exec python3 -c 'import socket; s=socket.socket(); "
                        "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
                        "s.bind((\"0.0.0.0\", 7777)); s.listen(); c,_=s.accept(); "
                        "print(c.recv(100).decode())'", timeout=60)
    bench.b.wait_for("ss -ltn | grep -q ':7777 '", timeout=30)
    bench.a.run(f"echo hello-bench > /dev/tcp/{bench.b.ip}/7777")
    assert job.wait(30).out.strip() == "hello-bench"
    sleeper = bench.a.spawn("sleep 1000", timeout=600)
    killed = sleeper.kill()
    assert killed.rc == 124, killed
    r = bench.a.run("sleep 30", timeout=2, check=False)
    assert r.rc == 124, r


def test_rxe_attach_detach(bench):
    """rdma_rxe, the baseline every comparison runs against, works here
    whichever driver this run is for."""
    for g in (bench.a, bench.b):
        g.run("modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0")
        out = g.wait_for("rdma link show rxe0/1 | grep -q 'state ACTIVE' && "
                         "rdma link show rxe0/1", timeout=30).out
        assert f"netdev {g.netdev}" in out, out
    for g in (bench.a, bench.b):
        g.run("rdma link delete rxe0")
        g.run("test -z \"$(ls /sys/class/infiniband)\"")


def test_kmsg_gate_catches_planted_error(bench):
    g = bench.a
    g.kmsg()  # start from a clean cursor
    g.run("echo '<3>sroce: planted error' > /dev/kmsg")
    # Consumed here, so the runner's own gate after this test does not see it.
    records = g.kmsg()
    bad = offending(records)
    assert [r["text"] for r in bad] == ["sroce: planted error"], records
    assert bad[0]["level"] == 3, bad


def test_sroce_module_loads(bench):
    if not os.path.exists(os.path.join(bench.top, "sroce.ko")):
        pytest.skip("sroce.ko not built")
    bench.a.run("modprobe sroce && grep -q '^sroce ' /proc/modules")


def test_perf_smoke(bench):
    """`make bench`'s machinery end to end, in make check's budget: one
    short RDMA bandwidth run with this run's driver and one TCP run,
    observed as the bench observes them (host load, guests' counters and
    CPU). Only that every figure is there and sane is checked: timing is
    never pass or fail."""
    from tools.testing.bench import perf
    args = perf.parse_args(["--drivers", f"{bench.driver},tcp", "--duration", "1"])
    samples = []

    def record(driver, m, value, error=None, text=None, extra=None):
        samples.append({"driver": driver, "metric": m["metric"], "value": value,
                        "error": error, **(extra or {})})

    env = perf.environment(bench)
    for g in bench.guests:
        assert env[g.name]["clocksource"], env
        assert "qdisc" in env[g.name]["qdisc"], env
        assert "rx-checksumming" in env[g.name]["features"], env
    perf.RdmaRound(bench, bench.driver, 1500, args, record).run(
        [("bw", "ib_write_bw", 65536, 1, 1500, False)])
    perf.TcpRound(bench, "tcp", 1500, args, record).run([("tcp", 1500)])
    got = {(s["driver"], s["metric"]): s for s in samples}
    assert set(got) == {(bench.driver, "ib_write_bw 64 KiB"), (bench.driver,
                        "ib_write_bw 64 KiB CPU"), ("tcp", "tcp"), ("tcp", "tcp CPU")}, samples
    for s in samples:
        assert s["value"] is not None and s["value"] > 0, s
        assert s["host"]["loadavg"][0] > 0 and "loaded" in s, s
        c = s["counters"]
        # 64 KiB messages at MTU 1500: more frames on the link than messages.
        assert c["frames"] > 64, s
        assert c["virtio_net_irqs_per_frame"] is not None, s
    assert got[("tcp", "tcp")]["iperf3"]["bytes"] > 0
    assert got[(bench.driver, "ib_write_bw 64 KiB")]["counters"]["rdma_retransmits"] >= 0
test_perf_smoke.TIMEOUT = 300


@pytest.mark.sroce("measures sroce's zero-copy transmit")
def test_perf_veth_smoke(bench):
    """`make bench-veth`'s machinery (perf.py --veth) in seconds: one short
    sroce write over the veth pair in guest A, observed as the bench
    observes it, and its figures in the report's summary as the JSON
    file holds them: bandwidth, CPU per GB, and a zero-copy share above
    zero (the veth does scatter-gather; the guests' link would give 0)."""
    import json

    from tools.testing.bench import perf
    # 2 s: under a loaded host one vCPU runs both ends, and a 1-second
    # window has been seen to hold no completed message.
    args = perf.parse_args(["--veth", "--drivers", "sroce", "--duration", "2"])
    samples, texts = [], []

    def record(driver, m, value, error=None, text=None, extra=None):
        samples.append({"driver": driver, "metric": m["metric"], "value": value,
                        "error": error, **(extra or {})})
        texts.append(text or "")

    perf.VethRdmaRound(bench, "sroce", 1500, args, record).run(
        [("bw", "ib_write_bw", 65536, 1, 1500, False)])
    _, _, metrics = perf.plan(args)
    names = ("ib_write_bw 64 KiB", "ib_write_bw 64 KiB CPU", "ib_write_bw 64 KiB zc/pkt")
    _, summary = perf.report(samples, args.entities,
                             [m for m in metrics if m["metric"] in names])
    got = {e["metric"]: e["median"]["sroce"] for e in json.loads(json.dumps(summary))}
    assert set(got) == set(names), samples
    assert all(v is not None and v > 0 for v in got.values()), (samples, texts)
    s = samples[0]
    assert s["topology"] == "netns" and s["counters"]["frames"] > 64, s
    # The veth is gone again, and with it the namespace.
    assert "vz0" not in bench.a.run("ip -o link show").out
test_perf_veth_smoke.TIMEOUT = 180


def test_reset_after_jumbo_mtu_restores_default_qdisc(bench):
    """The reset puts the MTU back before it replaces the root qdisc: the
    default fq_codel sizes its quantum from the MTU it is made at, and a
    test after an MTU 9000 one must not run with a 9014-byte quantum."""
    a = bench.a
    show = "tc qdisc show dev eth0 root"
    a.run("ip link set eth0 mtu 1500 && { tc qdisc del dev eth0 root || true; }")
    want = a.run(show).out
    assert "quantum 1514 " in want, want
    # A test at MTU 9000 with a qdisc of its own (the default cannot be
    # deleted, so only a configured one brings a new default back).
    a.run("ip link set eth0 mtu 9000 && tc qdisc add dev eth0 root pfifo")
    bench.reset(a)
    assert a.run(show).out == want
