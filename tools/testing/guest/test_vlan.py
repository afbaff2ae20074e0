# SPDX-License-Identifier: GPL-2.0
"""RoCE over a VLAN netdev above the attached one.

The RDMA device is attached to eth0 on both guests; eth0.100 above it has
addresses of its own, which the RDMA core puts in the port's GID table, as
it does for a hardware RoCE port. Traffic from such a GID leaves on eth0
tagged with VLAN 100, and the tagged frames that come back are taken by
the RDMA device, not by the stack:

- perftest between the VLAN GIDs, both ways (a write from A, a read from
  B), with traffic class 106 (DSCP 26, ECT(0)): the capture on both
  guests shows the frames tagged; sroce's carry priority 3, the DSCP's
  class. rdma_rxe sends through the VLAN netdev, whose default egress map
  gives priority 0, so the priority is checked on sroce only;
- rping over the VLAN's addresses: rdma_cm's MADs go over QP1 (UD), and
  the passive side finds the GID to answer from by the VLAN its work
  completion reports;
- both again between sroce on A and rdma_rxe on B, both ways.

(A device attached to the VLAN netdev itself is test_net.py's.)
"""
import re

import pytest

from tools.testing.bench.lib import perftest as pt

VID = 100
VLAN = f"eth0.{VID}"
ADDR = {"a": "10.79.0.1", "b": "10.79.0.2"}
TCLASS = 106
PRIO = TCLASS >> 5
SIZE = 65536
ITERS = 200
TIMEOUT = 120
PINGS = 100
# rping gives up after this long: a CM that never answers fails here.
RPING_TIMEOUT = 45


def vlan_up(bench):
    for g in (bench.a, bench.b):
        g.run(f"ip link add link eth0 name {VLAN} type vlan id {VID} && "
              f"ip addr add {ADDR[g.name]}/24 dev {VLAN} && ip link set {VLAN} up")
    bench.a.run(f"ping -c 2 -i 0.2 -W 2 {ADDR['b']}", timeout=30)


def capture(g):
    """tcpdump of the tagged RoCEv2 frames on g's eth0, both directions."""
    g.run("rm -f /tmp/vlan.txt /tmp/vlan.err /tmp/tcpdump.pid")
    job = g.spawn(f"echo $$ > /tmp/tcpdump.pid; exec tcpdump -i eth0 -e -n -l "
                  f"'vlan {VID} and udp port 4791' > /tmp/vlan.txt 2>/tmp/vlan.err",
                  timeout=TIMEOUT * 3)
    # tcpdump says so once its capture is active.
    g.wait_for("grep -q 'listening on' /tmp/vlan.err", timeout=30)
    return job


def captured(g, job):
    g.run("kill -INT $(cat /tmp/tcpdump.pid)", check=False)
    job.wait(30, check=False)
    return g.run("cat /tmp/vlan.txt").out


def check_tags(g, text, prio):
    """g captured tagged frames of both directions, all with the priority
    prio when it is given."""
    tags = re.findall(rf"vlan {VID}, p (\d+),", text)
    assert len(tags) >= 2 * 10, f"[{g.name}] {len(tags)} tagged RoCEv2 frames:\n{text[-2000:]}"
    if prio is not None:
        assert set(tags) == {str(prio)}, f"[{g.name}] priorities {set(tags)}:\n{text[-2000:]}"


def perftest(bench, devs, gids, program, server, client):
    g = {"a": bench.a, "b": bench.b}
    run = pt.run_perftest(g[server], g[client], program, devs[server], gids[server],
                          ADDR[server], size=SIZE, iters=ITERS, timeout=TIMEOUT,
                          client_gid_index=gids[client], client_dev=devs[client],
                          extra=f"--tclass={TCLASS}")
    problems = pt.judge(run, program, [SIZE], ITERS)
    assert not problems, f"{program} {client}->{server}: {problems}\n{run.text[-3000:]}"


def rping(server, client):
    port = pt.next_port(7100)
    cmd = f"-a {ADDR[server.name]} -p {port} -v -V -C {PINGS}"
    _, cli, text = pt.cm_pair(server, client, f"rping -s {cmd}", f"rping -c {cmd}",
                              RPING_TIMEOUT, port=port)
    pings = re.findall(r"ping data: rdma-ping-(\d+): ", cli.out)
    assert len(pings) == PINGS, f"{len(pings)} of {PINGS} pings\n{text[-3000:]}"


def run_both_ways(bench, drivers):
    a, b = bench.a, bench.b
    vlan_up(bench)
    devs = {g.name: bench.attach(g, "roce0", driver=drivers[g.name]) for g in (a, b)}
    for g in (a, b):
        g.run("modprobe rdma_ucm")
    gids = {g.name: g.gid_index(devs[g.name], ADDR[g.name]) for g in (a, b)}
    jobs = {g.name: capture(g) for g in (a, b)}
    try:
        perftest(bench, devs, gids, "ib_write_bw", "b", "a")
        perftest(bench, devs, gids, "ib_read_bw", "a", "b")
    finally:
        text = {g.name: captured(g, jobs[g.name]) for g in (a, b)}
    for g in (a, b):
        check_tags(g, text[g.name], PRIO if drivers[g.name] == "sroce" and
                   drivers["a"] == drivers["b"] else None)
    rping(b, a)
    rping(a, b)


# make check runs this one on the 6.12 guests too (scripts/check).
@pytest.mark.kernel("6.12")
def test_vlan_gids(bench):
    """perftest and rping between the VLAN's GIDs, on this run's driver."""
    run_both_ways(bench, {"a": bench.driver, "b": bench.driver})


@pytest.mark.sroce("pairs sroce with rdma_rxe")
def test_vlan_gids_against_rxe(bench):
    """The same between sroce on A and rdma_rxe on B."""
    run_both_ways(bench, {"a": "sroce", "b": "rxe"})

