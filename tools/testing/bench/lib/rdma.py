# SPDX-License-Identifier: GPL-2.0
"""What `rdma` tells about a device, for tests that compare before and
after (test_cm, test_fuzz, test_cc): restrack's object counts and the
port's counters; the driver attached in both guests; and the GID of an
IPv4 address, for a QP whose peer is a host with no RDMA device."""
import re
import socket

RES_KINDS = ("pd", "cq", "qp", "cm_id", "mr", "ctx")


def res_counts(g, dev):
    """rdma restrack's object counts for the device."""
    out = g.run(f"rdma res show {dev}").out
    return {k: int(v) for k, v in re.findall(r"\b(\w+) (\d+)", out) if k in RES_KINDS}


def counters(g, dev):
    """The device's port 1 counters, by name, from `rdma statistic`."""
    words = g.run(f"rdma statistic show link {dev}/1").out.split()
    return {words[i]: int(words[i + 1]) for i in range(len(words) - 1)
            if words[i + 1].isdigit() and words[i].islower()}


def endpoints(bench):
    """Attach the driver in both guests: [(dev, gid_index)] for A and B."""
    out = []
    for g in (bench.a, bench.b):
        dev = bench.attach(g)
        out.append((dev, g.gid_index(dev)))
    return out


def tool_pair(bench, tool, timeout, args=""):
    """One of the project's two-sided verbs tools (tools/testing/verbs/):
    both devices attached, the server in guest B, the client in guest A
    connecting to it; the tool bounds its own run with -t timeout.
    Returns (client, server) results; asserts both exited 0."""
    a, b = bench.a, bench.b
    opts = {}
    for g in (a, b):
        dev = bench.attach(g)
        opts[g.name] = f"-d {dev} -g {g.gid_index(dev)} -t {timeout} {args}".rstrip()
    srv = b.spawn(f"exec {tool} {opts['b']}", timeout=timeout + 30)
    cli = a.run(f"{tool} {opts['a']} {b.ip}", timeout=timeout + 30, check=False)
    res = srv.wait(timeout + 30, check=False)
    print(cli.out.strip())
    assert cli.ok and res.ok, (f"client rc={cli.rc}\n{cli.out}{cli.err}"
                               f"server rc={res.rc}\n{res.out}{res.err}")
    return cli, res


def mapped_gid(ip):
    """The IPv4-mapped GID of ip, as pyverbs parses it."""
    raw = socket.inet_pton(socket.AF_INET6, "::ffff:" + ip)
    return ":".join(raw[i:i + 2].hex() for i in range(0, 16, 2))
