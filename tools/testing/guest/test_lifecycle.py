# SPDX-License-Identifier: GPL-2.0
"""The sroce device's life cycle, as a user drives it with iproute2's rdma.

Every test asserts the exact outcome: the device list, the port state and
GID entries in sysfs, the error text `rdma` prints. The runner fails a test
on any kernel warning in either guest, so "no oops, no leak warning" is
checked for each of them too.
"""

import json
import re

import pytest

from tools.testing.bench.lib.perftest import wait_listening

# make check runs this file on the 6.12 guests too (scripts/check).
pytestmark = pytest.mark.kernel("6.12")

SYS = "/sys/class/infiniband"

# The MAC the bench gives guest A's eth0 (52:54:00:77:00:01), as EUI-64.
GUID_A = "5054:00ff:fe77:0001"


SROCE_ONLY = "exercises sroce's own link type and error texts"


def links(g):
    """The rdma links as (name, netdev) pairs, in `rdma link` order."""
    out = g.run("rdma link show").out
    pairs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "link":
            pairs.append((f[1].split("/")[0], f[f.index("netdev") + 1]))
    return pairs


def port(g, dev, attr):
    return g.run(f"cat {SYS}/{dev}/ports/1/{attr}").out.strip()


def gids(g, dev):
    """The port's populated GIDs with their types.

    Two processes for the whole table: one per entry costs minutes under
    TCG. Reading the type of an empty entry fails, which leaves it out.
    """
    base = f"{SYS}/{dev}/ports/1"
    types = g.run(f"grep -H . {base}/gid_attrs/types/* 2>/dev/null; true").out
    values = g.run(f"grep -H . {base}/gids/*").out

    def by_index(out):
        return dict((line.split(":", 1)[0].rsplit("/", 1)[1],
                     line.split(":", 1)[1]) for line in out.splitlines())
    t, v = by_index(types), by_index(values)
    return {(v[i], t[i]) for i in t}


def wait_port(g, dev, state, phys):
    g.wait_for(f"grep -qx '{state}' {SYS}/{dev}/ports/1/state && "
               f"grep -qx '{phys}' {SYS}/{dev}/ports/1/phys_state",
               timeout=30)


def wait_gid(g, dev, gid, present=True):
    test = "" if present else "! "
    g.wait_for(f"{test}grep -qx '{gid}' {SYS}/{dev}/ports/1/gids/*",
               timeout=30)


def rdma_fails(g, cmd, text):
    """Run an `rdma` command that must fail, with exactly this message."""
    before = links(g)
    r = g.run(cmd, check=False)
    assert r.rc != 0, f"{cmd!r} succeeded"
    msg = (r.err + r.out).strip()
    assert msg == text, f"{cmd!r}: expected {text!r}, got {msg!r}"
    assert links(g) == before, f"{cmd!r} changed the links: {links(g)}"


@pytest.mark.sroce(SROCE_ONLY)
def test_modinfo(bench):
    out = bench.a.run("modinfo sroce").out
    fields = {}
    for line in out.splitlines():
        key, _, val = line.partition(":")
        fields.setdefault(key.strip(), []).append(val.strip())
    assert fields["license"] == ["GPL"], fields
    assert "rdma-link-sroce" in fields["alias"], fields
    assert fields["description"][0].startswith("Soft RoCE"), fields
    # ib_uverbs exports ib_umem_get(), which pins user MRs.
    assert sorted(fields["depends"][0].split(",")) == ["ib_core", "ib_uverbs"], fields
    assert fields["name"] == ["sroce"], fields
    # Every parameter is documented: "name:description (type)".
    for parm in fields.get("parm", []):
        assert re.fullmatch(r"\w+:\S.* \(\w+\)", parm), parm


@pytest.mark.sroce(SROCE_ONLY)
def test_add_autoloads_and_delete_removes(bench):
    a = bench.a
    a.run("! grep -q '^sroce ' /proc/modules")
    a.run("rdma link add sroce0 type sroce netdev eth0")
    a.run("grep -q '^sroce ' /proc/modules")
    assert links(a) == [("sroce0", "eth0")]
    out = a.run("rdma link show sroce0/1").out.split()
    assert out[out.index("state") + 1] == "ACTIVE", out
    assert out[out.index("physical_state") + 1] == "LINK_UP", out
    dev = a.run("rdma dev show sroce0").out.split()
    assert dev[dev.index("node_type") + 1] == "ca", dev
    assert dev[dev.index("node_guid") + 1] == GUID_A, dev
    assert dev[dev.index("sys_image_guid") + 1] == GUID_A, dev
    assert a.run(f"cat {SYS}/sroce0/node_type").out.strip() == "1: CA"

    a.run("rdma link delete sroce0")
    assert links(a) == []
    a.run(f"test ! -e {SYS}/sroce0")
    a.run("rmmod sroce")


@pytest.mark.sroce(SROCE_ONLY)
def test_port_reports_roce_v2(bench):
    a = bench.a
    bench.attach(a, "sroce0")
    assert port(a, "sroce0", "link_layer") == "Ethernet"
    assert port(a, "sroce0", "state") == "4: ACTIVE"
    assert port(a, "sroce0", "phys_state") == "5: LinkUp"
    assert port(a, "sroce0", "pkeys/0") == "0xffff"
    a.run(f"! cat {SYS}/sroce0/ports/1/pkeys/1")
    wait_gid(a, "sroce0", "0000:0000:0000:0000:0000:ffff:0a4d:0001")
    wait_gid(a, "sroce0", "fd77:0000:0000:0000:0000:0000:0000:0001")
    g = gids(a, "sroce0")
    assert g == {
        ("fe80:0000:0000:0000:5054:00ff:fe77:0001", "RoCE v2"),
        ("0000:0000:0000:0000:0000:ffff:0a4d:0001", "RoCE v2"),
        ("fd77:0000:0000:0000:0000:0000:0000:0001", "RoCE v2"),
    }, g


@pytest.mark.sroce(SROCE_ONLY)
def test_port_follows_netdev(bench):
    """add -> down/up -> MTU change -> addresses come and go -> delete."""
    a = bench.a
    bench.attach(a, "sroce0")
    wait_port(a, "sroce0", "4: ACTIVE", "5: LinkUp")

    # Keep eth0's IPv6 address over the down/up below, as later tests
    # expect the bench's addresses in place.
    a.run("sysctl -qw net.ipv6.conf.eth0.keep_addr_on_down=1")
    a.run("ip link set eth0 down")
    wait_port(a, "sroce0", "1: DOWN", "3: Disabled")
    a.run("ip link set eth0 up")
    wait_port(a, "sroce0", "4: ACTIVE", "5: LinkUp")

    # 343 bytes cannot carry a 256-byte IB payload with RoCEv2's largest
    # headers (88 bytes: an XRC write with immediate; the core's
    # iboe_get_mtu() counts the XRCETH too): the port must go down rather
    # than claim an MTU it cannot honour.
    a.run("ip link set eth0 mtu 343")
    wait_port(a, "sroce0", "1: DOWN", "3: Disabled")
    a.run("ip link set eth0 mtu 344")
    wait_port(a, "sroce0", "4: ACTIVE", "5: LinkUp")
    a.run("ip link set eth0 mtu 1500")
    wait_port(a, "sroce0", "4: ACTIVE", "5: LinkUp")
    # Below 1280 bytes IPv6 left eth0 altogether; put the bench's back.
    a.run("ip addr replace fd77::1/64 dev eth0 nodad")
    wait_gid(a, "sroce0", "fd77:0000:0000:0000:0000:0000:0000:0001")

    v4 = "0000:0000:0000:0000:0000:ffff:0a4e:0101"	 # 10.78.1.1
    v6 = "fd78:0000:0000:0000:0000:0000:0000:0001"
    a.run("ip addr add 10.78.1.1/24 dev eth0")
    a.run("ip addr add fd78::1/64 dev eth0 nodad")
    wait_gid(a, "sroce0", v4)
    wait_gid(a, "sroce0", v6)
    a.run("ip addr del 10.78.1.1/24 dev eth0")
    a.run("ip addr del fd78::1/64 dev eth0")
    wait_gid(a, "sroce0", v4, present=False)
    wait_gid(a, "sroce0", v6, present=False)

    bench.detach(a, "sroce0")
    assert links(a) == []


@pytest.mark.sroce(SROCE_ONLY)
def test_carrier_loss(bench):
    """Carrier off is a port down, but a physical state of 'polling'."""
    a = bench.a
    a.run("modprobe dummy numdummies=0 && ip link add d0 type dummy && "
          "ip link set d0 up")
    bench.attach(a, "sroce1", netdev="d0")
    wait_port(a, "sroce1", "4: ACTIVE", "5: LinkUp")
    a.run("ip link set d0 carrier off")
    wait_port(a, "sroce1", "1: DOWN", "2: Polling")
    a.run("ip link set d0 carrier on")
    wait_port(a, "sroce1", "4: ACTIVE", "5: LinkUp")
    a.run("ip link del d0")
    a.wait_for("! rdma link show sroce1/1", timeout=30)


@pytest.mark.sroce(SROCE_ONLY)
def test_fifty_add_delete_cycles(bench):
    a = bench.a
    a.run("ip link add v0 type veth peer name v1 && ip link set v0 up && "
          "ip link set v1 up")
    # One guest command for all 50 cycles: a process per step costs
    # seconds under TCG.
    a.run("for i in $(seq 50); do "
          "rdma link add sroce$i type sroce netdev eth0 || exit 1; "
          "rdma link add x$i type sroce netdev v0 || exit 2; "
          f"test -d {SYS}/sroce$i -a -d {SYS}/x$i || exit 3; "
          "rdma link delete sroce$i || exit 4; "
          "rdma link delete x$i || exit 5; "
          f"test ! -e {SYS}/sroce$i || exit 6; "
          "done", timeout=600)
    assert links(a) == []
    # Nothing may still hold the netdevs: deleting them must not wait.
    a.run("ip link del v0", timeout=30)
    a.run("rmmod sroce", timeout=30)


@pytest.mark.sroce(SROCE_ONLY)
def test_rmmod_with_devices_present(bench):
    a = bench.a
    a.run("ip link add v0 type veth peer name v1 && ip link set v0 up")
    bench.attach(a, "sroce0")
    bench.attach(a, "sroce1", netdev="v0")
    assert links(a) == [("sroce0", "eth0"), ("sroce1", "v0")]
    a.run("rmmod sroce", timeout=60)
    assert links(a) == []
    a.run(f"test -z \"$(ls {SYS})\"")
    # The netdevs were let go of.
    a.run("ip link del v0", timeout=30)
    bench.attach(a, "sroce0")
    assert links(a) == [("sroce0", "eth0")]


@pytest.mark.sroce(SROCE_ONLY)
def test_netdev_removed(bench):
    a = bench.a
    a.run("ip link add v0 type veth peer name v1")
    bench.attach(a, "sroce2", netdev="v0")
    a.run("ip link del v0", timeout=60)
    a.wait_for(f"test ! -e {SYS}/sroce2", timeout=30)
    assert links(a) == []


@pytest.mark.sroce(SROCE_ONLY)
def test_nic_module_unloaded(bench):
    a = bench.a
    a.run("modprobe dummy numdummies=0 && ip link add d0 type dummy && "
          "ip link add d1 type dummy")
    bench.attach(a, "sroce3", netdev="d0")
    bench.attach(a, "sroce4", netdev="d1")
    a.run("rmmod dummy", timeout=60)
    a.wait_for(f"test ! -e {SYS}/sroce3 -a ! -e {SYS}/sroce4", timeout=30)
    assert links(a) == []
    a.run("rmmod sroce", timeout=30)


@pytest.mark.sroce(SROCE_ONLY)
def test_bad_input(bench):
    a = bench.a
    bench.attach(a, "sroce0")
    a.run("ip link add v0 type veth peer name v1")
    a.run("modprobe tun && ip tuntap add mode tun dev tun0 && "
          "ip tuntap add mode tap dev tap0")

    rdma_fails(a, "rdma link add s1 type sroce netdev nosuch",
               "error: No such device")
    rdma_fails(a, "rdma link add s1 type sroce netdev lo",
               "error: Operation not supported")
    rdma_fails(a, "rdma link add s1 type sroce netdev tun0",
               "error: Operation not supported")
    rdma_fails(a, "rdma link add s1 type sroce netdev eth0",
               "error: File exists")
    rdma_fails(a, "rdma link add sroce0 type sroce netdev v0",
               "error: File exists")
    rdma_fails(a, "rdma link add 'a/b' type sroce netdev v0",
               "error: Invalid argument")
    rdma_fails(a, "rdma link add 'a b' type sroce netdev v0",
               "error: Invalid argument")
    # The core cuts names to 63 characters without a word, so sroce
    # refuses 63 and more: a cut name can never be registered.
    rdma_fails(a, f"rdma link add {'n' * 63} type sroce netdev v0",
               "error: File name too long")
    rdma_fails(a, f"rdma link add {'n' * 64} type sroce netdev v0",
               "error: File name too long")
    # Far longer, and the core's netlink policy refuses it before sroce.
    rdma_fails(a, f"rdma link add {'n' * 200} type sroce netdev v0",
               "Error: Attribute failed policy validation.\n"
               "error: Invalid argument")
    rdma_fails(a, "rdma link add s1 type nosuchtype netdev v0",
               "error: Invalid argument")

    # The longest name that fits, and a tap (Ethernet) device, are fine.
    longest = "n" * 62
    bench.attach(a, longest, netdev="v0")
    bench.attach(a, "s2", netdev="tap0")
    assert links(a) == [("sroce0", "eth0"), (longest, "v0"), ("s2", "tap0")]
    a.run("ip link del tap0 && ip link del tun0 && ip link del v0",
          timeout=60)
    a.wait_for(f"test ! -e {SYS}/s2 -a ! -e {SYS}/{longest}", timeout=30)
    assert links(a) == [("sroce0", "eth0")]


@pytest.mark.sroce(SROCE_ONLY)
def test_both_guests(bench):
    """Both guests attach; each sees its own addresses as GIDs."""
    for g, last in ((bench.a, "0001"), (bench.b, "0002")):
        bench.attach(g, "sroce0")
        wait_port(g, "sroce0", "4: ACTIVE", "5: LinkUp")
        wait_gid(g, "sroce0", f"0000:0000:0000:0000:0000:ffff:0a4d:{last}")


def removal_with_holder(bench, netdev, remove, timeout=60):
    """Take the device away (remove) while a process holds it open with
    live objects: removal must not wait for the process, and the process
    gets EIO afterwards, then exits cleanly."""
    a = bench.a
    bench.attach(a, "sroce5", netdev=netdev)
    verbs = f"{bench.top}/tools/testing/guest/verbs"
    a.run("rm -f /tmp/held /tmp/go")
    holder = a.spawn(f"/usr/bin/python3 {verbs}/hold.py sroce5 /tmp/held /tmp/go",
                     timeout=180)
    a.wait_for("test -e /tmp/held", timeout=60)
    a.run(remove, timeout=timeout)
    a.wait_for(f"test ! -e {SYS}/sroce5", timeout=30)
    assert ("sroce5", netdev) not in links(a)
    a.run("touch /tmp/go")
    out = holder.wait(timeout=60).out
    res = json.loads(out.strip().splitlines()[-1])
    assert res["alloc_pd_after"] == res["eio"], res


@pytest.mark.sroce(SROCE_ONLY)
def test_delete_while_a_process_holds_the_device(bench):
    removal_with_holder(bench, "eth0", "rdma link delete sroce5")


@pytest.mark.sroce(SROCE_ONLY)
def test_netdev_removed_while_a_process_holds_the_device(bench):
    bench.a.run("ip link add v0 type veth peer name v1")
    removal_with_holder(bench, "v0", "ip link del v0")


@pytest.mark.sroce(SROCE_ONLY)
def test_rmmod_while_a_process_holds_the_device(bench):
    removal_with_holder(bench, "eth0", "rmmod sroce")


def qdisc_backlog(g):
    """Packets eth0's root qdisc holds, from `tc -s qdisc`."""
    out = g.run("tc -s qdisc show dev eth0 root").out
    m = re.search(r"backlog \S+ (\d+)p", out)
    assert m, out
    return int(m.group(1))


@pytest.mark.sroce(SROCE_ONLY)
def test_rmmod_while_a_qdisc_holds_packets(bench):
    """The review's reproduction of a guest killed by rmmod: a slow qdisc
    holds a killed writer's packets past its device's deletion, and their
    destructor is the module's text. rmmod must refuse (EBUSY) while they
    are queued and succeed once they are freed; the gate sees no oops."""
    a, b = bench.a, bench.b
    for g in (a, b):
        bench.attach(g, "sroce0")
    ga, gb = a.gid_index("sroce0"), b.gid_index("sroce0")
    bw = "ib_write_bw -d sroce0 -s 65536 -D 300 -p 18600"
    a.run("tc qdisc add dev eth0 root tbf rate 8kbit burst 4000 limit 4000000")
    try:
        server = b.spawn(f"exec {bw} -x {gb}", timeout=400)
        wait_listening(b, 18600, server, timeout=60)
        client = a.spawn(f"echo $$ > /tmp/bw.pid; exec {bw} -x {ga} {b.ip}",
                         timeout=400)
        a.wait_for("tc -s qdisc show dev eth0 root | "
                   "grep -qE 'backlog [^ ]+ ([2-9][0-9]|[0-9]{3,})p'",
                   timeout=120)
        # The writer may have ended already: its ACKs wait behind the
        # qdisc too, and its retries run out.
        a.run("kill -9 $(cat /tmp/bw.pid) 2>/dev/null || true")
        client.wait(30, check=False)
        # Deleting the device does not wait for the qdisc.
        a.run("rdma link delete sroce0", timeout=30)
        r = a.run("rmmod sroce", check=False, timeout=30)
        assert r.rc != 0 and "in use" in r.err, r
        # The refusal was for packets really still queued.
        assert qdisc_backlog(a) > 0
        a.run("test -e /sys/module/sroce")
    finally:
        a.run("tc qdisc del dev eth0 root")
    # Packets the NIC took are freed when it next completes a send.
    a.wait_for(f"ping -c1 -W1 {b.ip} >/dev/null; rmmod sroce", timeout=60)
