# SPDX-License-Identifier: GPL-2.0
"""Zero copy on transmit: payload leaves as fragments of the registered
pages, on a netdev that takes them.

The link between the guests is virtio-net over a QEMU stream socket, which
has no checksum offload and so no scatter-gather: there every payload is
copied into the frame. A veth pair inside one guest does scatter-gather, so
two sroce devices on its ends show the zero-copy path, with the data
checked end to end; frames a device sends to its own MAC never reach a
driver and take fragments on any netdev.
"""

import re

import pytest

from tools.testing.bench.lib import veth

SROCE_ONLY = "counts sroce's zero-copy transmissions"


def counters(g, dev):
    out = g.run(f"rdma statistic show link {dev}/1").out
    return {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", out)}


def pingpong(g, srv_dev, srv_gid, cli_dev, cli_gid, host, size, iters,
             srv_ns="", prog="ibv_rc_pingpong"):
    srv = g.spawn(f"{srv_ns}{prog} -d {srv_dev} -g {srv_gid} "
                  f"-s {size} -n {iters} -c", timeout=120)
    g.wait_for(f"{srv_ns}ss -ltn | grep -q ':18515 '", timeout=30)
    cli = g.run(f"{prog} -d {cli_dev} -g {cli_gid} -s {size} "
                f"-n {iters} -c {host}", timeout=120, check=False)
    res = srv.wait(timeout=120, check=False)
    assert cli.ok and res.ok, (cli.out, cli.err, res.out, res.err)
    assert f"{iters} iters" in cli.out, cli.out


NS = f"ip netns exec {veth.NS} "


def veth_pair(bench):
    """sz0 on vz0 (10.78.0.1) in guest A, sz1 on its veth peer vz1
    (10.78.0.2) in the namespace zc, as another host would be (the
    "netns" topology of tools/testing/bench/lib/veth.py, which the bench's
    --veth mode builds too). Returns the two GID indexes."""
    return veth.make(bench.a, "netns").attach("sroce", ("sz0", "sz1"))


@pytest.mark.sroce(SROCE_ONLY)
def test_veth_pages_go_out_as_fragments(bench):
    a = bench.a
    g0, g1 = veth_pair(bench)
    before = counters(a, "sz0")
    pingpong(a, "sz1", g1, "sz0", g0, "10.78.0.2", 65536, 20, srv_ns=NS)
    after = counters(a, "sz0")
    sent = after["tx_packets"] - before["tx_packets"]
    zc = after["tx_zerocopy"] - before["tx_zerocopy"]
    # 64 KiB messages at a 1024-byte path MTU: all but ACKs carry a page.
    assert zc >= 20 * 64, (sent, zc)
    assert after["loopback"] == before["loopback"], after


@pytest.mark.sroce(SROCE_ONLY)
@pytest.mark.parametrize("prog,size", [("ibv_uc_pingpong", 65536),
                                       ("ibv_ud_pingpong", 1024)])
def test_uc_and_ud_copy_where_fragments_go(bench, prog, size):
    """A UC or UD send completes when its frames are handed to the netdev,
    not when they leave: sent from the application's pages, a buffer
    reused at once would go out changed. Where RC takes fragments, these
    copy, and the data still arrives whole (-c)."""
    a = bench.a
    g0, g1 = veth_pair(bench)
    before = counters(a, "sz0")
    pingpong(a, "sz1", g1, "sz0", g0, "10.78.0.2", size, 20, srv_ns=NS,
             prog=prog)
    after = counters(a, "sz0")
    assert after["tx_packets"] - before["tx_packets"] >= 20, after
    assert after["tx_zerocopy"] == before["tx_zerocopy"], (before, after)


@pytest.mark.sroce(SROCE_ONLY)
def test_virtio_without_sg_copies(bench):
    a, b = bench.a, bench.b
    assert "scatter-gather: off" in a.run("ethtool -k eth0").out
    da, db = bench.attach(a), bench.attach(b)
    ga, gb = a.gid_index(da), b.gid_index(db)
    srv = b.spawn(f"ibv_rc_pingpong -d {db} -g {gb} -s 8192 -n 10 -c",
                  timeout=120)
    b.wait_for("ss -ltn | grep -q ':18515 '", timeout=30)
    cli = a.run(f"ibv_rc_pingpong -d {da} -g {ga} -s 8192 -n 10 -c {b.ip}",
                timeout=120, check=False)
    res = srv.wait(timeout=120, check=False)
    assert cli.ok and res.ok, (cli.out, cli.err, res.out, res.err)
    c = counters(a, da)
    assert c["tx_packets"] > 0 and c["tx_zerocopy"] == 0, c


@pytest.mark.sroce(SROCE_ONLY)
def test_loopback_takes_fragments(bench):
    a = bench.a
    dev = bench.attach(a)
    gid = a.gid_index(dev)
    pingpong(a, dev, gid, dev, gid, "localhost", 16384, 20)
    c = counters(a, dev)
    assert c["loopback"] > 0 and c["tx_zerocopy"] > 0, c
