# SPDX-License-Identifier: GPL-2.0
"""libsroce through unmodified rdma-core tools: device listing, device and
port attributes, and the port events the kernel dispatches.

The guests run verbs programs with RDMAV_DRIVERS pointing at the provider
in the build tree, as a user would before `make install`.
"""

import re

import pytest


SROCE_ONLY = "checks libsroce, which serves sroce devices only"


def devinfo(g, dev):
    """ibv_devinfo -v as a dict of its `key: value` lines (first wins)."""
    out = g.run(f"ibv_devinfo -v -d {dev}").out
    info = {}
    for line in out.splitlines():
        key, sep, val = line.strip().partition(":")
        if sep and key not in info:
            info[key] = val.strip()
    return info, out


@pytest.mark.sroce(SROCE_ONLY)
def test_ibv_devices(bench):
    a = bench.a
    bench.attach(a, "sroce0")
    out = a.run("ibv_devices").out
    rows = [line.split() for line in out.splitlines()[2:]]
    assert rows == [["sroce0", "505400fffe770001"]], out


@pytest.mark.sroce(SROCE_ONLY)
def test_ibv_devinfo(bench):
    a = bench.a
    bench.attach(a, "sroce0")
    a.wait_for("grep -q ffff:0a4d:0001 /sys/class/infiniband/sroce0/ports/1/gids/*",
               timeout=30)
    info, out = devinfo(a, "sroce0")
    assert info["transport"] == "InfiniBand (0)", out
    assert info["node_guid"] == "5054:00ff:fe77:0001", out
    assert info["state"] == "PORT_ACTIVE (4)", out
    assert info["link_layer"] == "Ethernet", out
    assert info["max_mtu"] == "4096 (5)", out
    assert info["active_mtu"] == "1024 (3)", out
    assert info["max_qp"] == "65536", out
    assert info["max_pd"] == "65536", out
    assert info["max_cqe"] == "262144", out
    assert info["phys_port_cnt"] == "1", out
    assert re.search(r"GID\[\s*\d+\]:\s+::ffff:10\.77\.0\.1, RoCE v2", out), out
    assert re.search(r"GID\[\s*\d+\]:\s+fd77::1, RoCE v2", out), out


@pytest.mark.sroce(SROCE_ONLY)
def test_active_mtu_follows_netdev(bench):
    a = bench.a
    bench.attach(a, "sroce0")
    for mtu, ib in ((9000, "4096 (5)"), (2200, "2048 (4)"),
                    (600, "512 (2)"), (1500, "1024 (3)")):
        a.run(f"ip link set eth0 mtu {mtu}")
        info, out = devinfo(a, "sroce0")
        assert info["active_mtu"] == ib, f"mtu {mtu}: {out}"
    # Below 1280 bytes IPv6 left eth0: put the bench's address back.
    a.run("ip addr replace fd77::1/64 dev eth0 nodad")


@pytest.mark.sroce(SROCE_ONLY)
def test_port_events(bench):
    """Link down and up reach a verbs consumer as PORT_ERR, PORT_ACTIVE."""
    a = bench.a
    bench.attach(a, "sroce0")
    watch = a.spawn("exec stdbuf -oL ibv_asyncwatch -d sroce0 > /tmp/events",
                    timeout=120)
    try:
        # ibv_asyncwatch prints its banner once it has the device open.
        a.wait_for("grep -q . /tmp/events", timeout=30)
        a.run("ip link set eth0 down")
        a.wait_for("grep -q PORT_ERR /tmp/events", timeout=30)
        a.run("ip link set eth0 up")
        a.wait_for("grep -q PORT_ACTIVE /tmp/events", timeout=30)
    finally:
        watch.kill()
    out = a.run("cat /tmp/events").out
    events = re.findall(r"PORT_\w+", out)
    assert events == ["PORT_ERR", "PORT_ACTIVE"], out


@pytest.mark.sroce(SROCE_ONLY)
def test_installed_provider(bench):
    """`make install` puts libsroce where libibverbs finds it without
    RDMAV_DRIVERS; `make uninstall` takes it away again."""
    a = bench.a
    bench.attach(a, "sroce0")
    plain = "env -u RDMAV_DRIVERS ibv_devices"
    assert "sroce0" not in a.run(plain).out
    a.run(f"make -s -C {bench.top}/tools/libsroce install", timeout=120)
    out = a.run(plain).out
    assert "sroce0" in out, out
    a.run("test -f /etc/libibverbs.d/sroce.driver && "
          "test -f /usr/lib/x86_64-linux-gnu/libibverbs/libsroce-rdmav34.so")
    a.run(f"make -s -C {bench.top}/tools/libsroce uninstall", timeout=120)
    a.run("test ! -e /etc/libibverbs.d/sroce.driver")
    assert "sroce0" not in a.run(plain).out
