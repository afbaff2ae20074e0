# SPDX-License-Identifier: GPL-2.0
"""A veth pair inside one guest: a netdev with every offload (checksum,
scatter-gather, TSO), unlike the guests' virtio link, which has no
checksum offload and so takes no fragments. Used by `make bench-veth`
(tools/testing/bench/perf.py --veth) and the zero-copy tests
(tools/testing/guest/test_zerocopy.py).

The near end vz0 (10.78.0.1) stays in the initial netns; the far end vz1
(10.78.0.2) goes where another host would be, in one of two topologies:

- "netns": vz1 in the namespace zc. With both addresses in one namespace
  the stack would route between them through lo, never the veth.
- "routed": vz1 in the initial netns too, with policy routing that sends
  each end's traffic out of its own device (and accept_local on both so
  that a frame from a local address is taken in). rdma_rxe needs this:
  on 6.1 it opens its UDP port 4791 in the initial netns only, so a
  device on vz1 in zc receives nothing (its frames end as UdpNoPorts in
  zc, docs/BENCH.md has the evidence). The frames still cross the veth:
  vz0's counters show them, and lo's stay still.
"""
import shlex

NS = "zc"
NEAR_DEV, FAR_DEV = "vz0", "vz1"
NEAR_IP, FAR_IP = "10.78.0.1", "10.78.0.2"
TOPOLOGIES = ("netns", "routed")

NETNS_SETUP = f"""
ip netns add {NS}
ip link add {NEAR_DEV} type veth peer name {FAR_DEV} netns {NS}
ip addr add {NEAR_IP}/24 dev {NEAR_DEV}
ip link set {NEAR_DEV} up
ip netns exec {NS} ip addr add {FAR_IP}/24 dev {FAR_DEV}
ip netns exec {NS} ip link set {FAR_DEV} up
ip netns exec {NS} ip link set lo up
"""

# The local table moves behind two rules that send what leaves by a veth
# end (its route lookups name the device: rxe's, sroce's) out of it; what
# arrives still finds its local address. rp_filter counts the larger of
# "all" and the device's value, so "all" must be 0 (the kernel's default).
ROUTED_SETUP = f"""
test "$(sysctl -n net.ipv4.conf.all.rp_filter)" = 0
ip link add {NEAR_DEV} type veth peer name {FAR_DEV}
ip addr add {NEAR_IP}/24 dev {NEAR_DEV}
ip addr add {FAR_IP}/24 dev {FAR_DEV}
for d in {NEAR_DEV} {FAR_DEV}; do
    sysctl -qw net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1
    ip link set $d up
done
ip rule add pref 1000 lookup local
ip rule del pref 0
ip rule add pref 100 oif {NEAR_DEV} lookup 100
ip rule add pref 101 oif {FAR_DEV} lookup 101
ip route add {FAR_IP} dev {NEAR_DEV} src {NEAR_IP} table 100
ip route add {NEAR_IP} dev {FAR_DEV} src {FAR_IP} table 101
"""

# Back to the guest's own state, whichever topology (or none) was made.
TEARDOWN = f"""
ip netns delete {NS} 2>/dev/null
ip link delete {NEAR_DEV} 2>/dev/null
ip link delete {FAR_DEV} 2>/dev/null
ip rule del pref 100 2>/dev/null
ip rule del pref 101 2>/dev/null
ip route flush table 100 2>/dev/null
ip route flush table 101 2>/dev/null
if ip rule show pref 1000 | grep -q .; then
    ip rule add pref 0 lookup local && ip rule del pref 1000
fi
true
"""


def script(topology):
    """The shell script that builds topology (every line must succeed)."""
    if topology not in TOPOLOGIES:
        raise ValueError(f"veth topology {topology!r}: one of {TOPOLOGIES}")
    body = NETNS_SETUP if topology == "netns" else ROUTED_SETUP
    return "set -e\n" + body.strip() + "\n"


class Netns:
    """A guest as seen from inside a network namespace: run() and spawn()
    wrap the command in `ip netns exec`. The far end of the "netns"
    topology's programs run through it."""

    def __init__(self, guest, ns=NS):
        self.guest, self.ns = guest, ns
        self.name = f"{guest.name}:{ns}"

    def wrap(self, cmd):
        return f"ip netns exec {self.ns} sh -c {shlex.quote(cmd)}"

    def run(self, cmd, timeout=60, check=True):
        return self.guest.run(self.wrap(cmd), timeout=timeout, check=check)

    def spawn(self, cmd, timeout=300):
        return self.guest.spawn("exec " + self.wrap(cmd), timeout=timeout)


class Pair:
    """Both ends of a pair built in guest: the guest object each end's
    programs run through (the far one in its netns or not), netdevs and
    addresses."""

    def __init__(self, guest, topology):
        self.guest, self.topology = guest, topology
        self.near = guest
        self.far = Netns(guest) if topology == "netns" else guest

    def attach(self, driver, names):
        """An RDMA device of driver on each end: names (near, far)."""
        if driver == "rxe":
            self.guest.run("modprobe rdma_rxe")
        self.near.run(f"rdma link add {names[0]} type {driver} netdev {NEAR_DEV}")
        self.far.run(f"rdma link add {names[1]} type {driver} netdev {FAR_DEV}")
        # sysfs shows every device whichever netns it was made in (the
        # RDMA core's default "shared" netns mode).
        return (self.guest.gid_index(names[0], NEAR_IP),
                self.guest.gid_index(names[1], FAR_IP))


def make(guest, topology="netns"):
    """Build the pair in guest (after tearing down any left over); the
    veth must do scatter-gather, or there is nothing to measure. Returns
    a Pair."""
    guest.run(TEARDOWN)
    guest.run(script(topology))
    feats = guest.run(f"ethtool -k {NEAR_DEV}").out
    assert "scatter-gather: on" in feats, feats
    return Pair(guest, topology)


def teardown(guest):
    guest.run(TEARDOWN)
