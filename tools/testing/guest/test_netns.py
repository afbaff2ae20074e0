# SPDX-License-Identifier: GPL-2.0
"""sroce in network namespaces, as containers use RDMA devices.

In the RDMA core's exclusive mode (`rdma system set netns exclusive`) an
RDMA device belongs to one network namespace, and only processes there
see it (netlink, sysfs) and may open it (uverbs). A sroce device belongs
to the namespace of its netdev, where `rdma link add` ran. Here eth0 of
both guests moves into a namespace, gets its addresses there, and sroce
is attached from inside: the device is not seen from init_net, and
perftest and rping run between the two namespaces. Deleting the
namespaces while their processes still have QPs takes the devices away
cleanly: eth0 goes back to init_net, the module unloads, and the kmsg
gate sees no report.

rdma_rxe 6.1 opens its UDP socket in init_net only, so it carries nothing
for a netdev in another namespace (namespace support came to it in Linux
7.1): these tests are sroce's.
"""
import pytest

from tools.testing.bench.lib import perftest as pt
from tools.testing.bench.lib.netns import InNetns
from tools.testing.bench.lib.rdma import counters

SROCE_ONLY = "rdma_rxe 6.1 works in init_net only"
NS = "rdmans"
DEV = "sroce0"


def enter(g):
    """Exclusive mode, and g's eth0 in NS configured as it was in init_net."""
    g.run("rdma system set netns exclusive")
    g.run(f"ip netns add {NS} && ip link set eth0 netns {NS}")
    n = InNetns(g, NS)
    n.run(f"ip link set lo up && ip link set eth0 up && "
          f"ip addr add {g.ip}/24 dev eth0 && ip addr add {g.ip6}/64 dev eth0 nodad")
    return n


def leave(g):
    """NS gone with whatever ran in it, eth0 back and configured in init_net,
    and the shared mode again (refused while a dying namespace remains)."""
    g.run(f"pids=$(ip netns pids {NS}); ip netns delete {NS}; "
          f"[ -z \"$pids\" ] || kill -9 $pids", check=False)
    g.wait_for("test -e /sys/class/net/eth0", timeout=60)
    g.wait_for("rdma system set netns shared", timeout=60)
    g.run(f"ip link set eth0 up && ip addr replace {g.ip}/24 dev eth0 && "
          f"ip addr replace {g.ip6}/64 dev eth0 nodad")


@pytest.fixture
def namespaces(bench):
    """Both guests with sroce attached inside NS; the guests as seen from
    there (InNetns)."""
    inside = []
    try:
        for g in (bench.a, bench.b):
            n = enter(g)
            inside.append(n)
            n.run(f"rdma link add {DEV} type sroce netdev eth0")
        yield inside
    finally:
        for n in inside:
            leave(n.guest)


def listed(g):
    """RDMA devices g lists by netlink and by libibverbs (sysfs)."""
    return g.run("rdma dev").out + g.run("ibv_devices").out


@pytest.mark.sroce(SROCE_ONLY)
@pytest.mark.kernel("6.12")
def test_device_seen_only_in_its_namespace(bench, namespaces):
    for n in namespaces:
        assert DEV in listed(n), listed(n)
        assert DEV not in listed(n.guest), listed(n.guest)
        # uverbs refuses an open from outside (the node is not namespaced).
        out = n.guest.run(f"ibv_devinfo -d {DEV}", check=False)
        assert not out.ok, out.out


@pytest.mark.sroce(SROCE_ONLY)
def test_perftest_between_namespaces(bench, namespaces):
    na, nb = namespaces
    before = counters(na, DEV)
    run = pt.run_perftest(nb, na, "ib_write_bw", DEV, nb.gid_index(DEV), nb.ip,
                          size=65536, iters=200, client_gid_index=na.gid_index(DEV))
    problems = pt.judge(run, "ib_write_bw", [65536], 200)
    assert not problems, (problems, run.client and run.client.out)
    sent = counters(na, DEV)["tx_packets"] - before["tx_packets"]
    assert sent >= 200 * 64, sent


@pytest.mark.sroce(SROCE_ONLY)
def test_rping_between_namespaces(bench, namespaces):
    na, nb = namespaces
    for n in (na, nb):
        n.run("modprobe rdma_ucm")
    port = pt.next_port(7600)
    srv = f"rping -s -a {nb.ip} -p {port} -v -V -C 200"
    cli = f"rping -c -a {nb.ip} -p {port} -v -V -C 200"
    run = pt.run_pair(nb, na, srv, cli, port, 120, ready=pt.wait_cm_listening)
    assert not run.setup_error, run.setup_error
    assert run.client.ok and run.server.ok, (run.client.out + run.client.err,
                                              run.server.out + run.server.err)
    assert run.client.out.count("ping data") >= 200, run.client.out[-2000:]


@pytest.mark.sroce(SROCE_ONLY)
def test_namespace_deleted_with_live_qps(bench, namespaces):
    na, nb = namespaces
    port = pt.next_port()
    srv, _ = pt.perftest_cmds("ib_write_bw", DEV, nb.gid_index(DEV), port, nb.ip,
                              65536, None, "RC", None, "-D 120")
    _, cli = pt.perftest_cmds("ib_write_bw", DEV, na.gid_index(DEV), port, nb.ip,
                              65536, None, "RC", None, "-D 120")
    jobs = [nb.spawn(srv, timeout=300)]
    pt.wait_listening(nb, port, jobs[0])
    jobs.append(na.spawn(cli, timeout=300))
    na.wait_for(f"[ $(rdma statistic show link {DEV}/1 | "
                f"sed -nE 's/.* tx_packets ([0-9]+).*/\\1/p') -gt 5000 ]", timeout=60)
    for n in namespaces:
        comms = n.guest.run(f"for p in $(ip netns pids {NS}); do cat /proc/$p/comm; done").out
        assert "ib_write_bw" in comms, comms
    for n in namespaces:
        leave(n.guest)
        g = n.guest
        # The device went with the namespace: nowhere to be seen, and
        # nothing holds the module.
        g.wait_for(f"! rdma dev | grep -q {DEV}", timeout=60)
        g.wait_for("modprobe -r sroce", timeout=60)
    for job in jobs:
        res = job.wait(30, check=False)
        assert res.rc != 0, res.out
    # The fixture's teardown finds nothing left to do, and the guests carry
    # traffic again in init_net.
    da, db = bench.attach(bench.a), bench.attach(bench.b)
    run = pt.run_perftest(bench.b, bench.a, "ib_write_bw", db, bench.b.gid_index(db),
                          bench.b.ip, size=4096, iters=100,
                          client_gid_index=bench.a.gid_index(da))
    assert not pt.judge(run, "ib_write_bw", [4096], 100)
