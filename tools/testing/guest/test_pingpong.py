# SPDX-License-Identifier: GPL-2.0
"""rdma-core's ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong between
the guests (server on B, client on A), with -c: the server checks the
first byte of every page the client sent (the client writes 0 there over
a buffer both sides filled with 0x7b) and prints "invalid data in page N"
for each page that did not arrive, yet exits 0, so the output is read.

Each run must: exit 0 on both sides, report size x iterations x 2 bytes
moved in that many round trips, use the RoCEv2 GIDs it was given (IPv4,
and IPv6 for one size), and print no invalid page.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts", "bench"))
import perftest as pt  # noqa: E402

TIMEOUT = 300
ITERS = 10
SIZES = [1, 100, 4096, 65536, 1000000]
# A UD message fits one packet: at MTU 1500 the port's MTU is 1024 bytes
# (ibv_ud_pingpong refuses more; it receives the 40-byte GRH in front).
UD_SIZES = [1, 100, 1024]
# A client that makes no progress is killed after this long (a run takes
# 1-3 s under TCG).
RUN_TIMEOUT = 60


def judge(run, size, addr):
    """Problems with one pingpong run; addr: {guest name: address}."""
    if run.setup_error:
        return [run.setup_error]
    if run.hung:
        return [f"client killed after {RUN_TIMEOUT}s: no progress"]
    problems = []
    for side, res in (("client", run.client), ("server", run.server)):
        if res.rc != 0:
            said = (res.err.strip() or res.out.strip()).splitlines()
            problems.append(f"{side} exit status {res.rc}" + (f": {said[0]}" if said else ""))
    if problems:
        return problems
    problems += pt.check_pingpong(pt.parse_pingpong(run.client.out), size, ITERS,
                                  (addr["a"], addr["b"]), "client")
    problems += pt.check_pingpong(pt.parse_pingpong(run.server.out), size, ITERS,
                                  (addr["b"], addr["a"]), "server")
    return problems


def pingpong(bench, program, runs, dev=None):
    """runs: [(ip, size)], ip "v4" or "v6" (which RoCEv2 GIDs to use);
    dev: {guest name: device} already attached, else both are attached."""
    a, b = bench.a, bench.b
    dev = dev or {g.name: bench.attach(g) for g in (a, b)}
    failures = []
    for ip, size in runs:
        addr = {g.name: g.ip if ip == "v4" else g.ip6 for g in (a, b)}
        gidx = {g.name: g.gid_index(dev[g.name], addr[g.name]) for g in (a, b)}
        port = pt.next_port(19000)
        base = f"{program} -d {{dev}} -g {{gid}} -c -s {size} -n {ITERS} -p {port}"
        srv = base.format(dev=dev["b"], gid=gidx["b"])
        cli = base.format(dev=dev["a"], gid=gidx["a"]) + f" {b.ip}"
        run = pt.run_pair(b, a, srv, cli, port, RUN_TIMEOUT)
        what = f"{program} {ip} -s {size}"
        problems = judge(run, size, addr)
        if problems:
            print(f"  FAIL {what}: {problems[0]}", flush=True)
            failures.append((what, problems, run))
            if run.hung or run.setup_error:
                break  # the data path is stuck: the rest would hang as well
        else:
            c = pt.parse_pingpong(run.client.out)
            print(f"  ok   {what}: {c['bytes']} bytes, {c['usec']:.0f} us/iter", flush=True)
    if failures:
        raise AssertionError(
            f"{len(failures)} of {len(runs)} runs failed, first: {failures[0][0]}: "
            f"{failures[0][1][0]}\n"
            + "\n\n".join(f"{w}:\n  " + "\n  ".join(p) + "\n" + r.text[-2000:]
                          for w, p, r in failures))


def test_rc_pingpong(bench):
    pingpong(bench, "ibv_rc_pingpong", [("v4", s) for s in SIZES] + [("v6", 65536)])


def test_uc_pingpong(bench):
    pingpong(bench, "ibv_uc_pingpong", [("v4", s) for s in SIZES] + [("v6", 65536)])


def test_ud_pingpong(bench):
    pingpong(bench, "ibv_ud_pingpong", [(ip, s) for ip in ("v4", "v6") for s in UD_SIZES])
