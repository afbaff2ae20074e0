# SPDX-License-Identifier: GPL-2.0
"""rdma-core's ibv_{rc,uc,ud}_pingpong -c between the guests (server on B,
client on A), judged on what both sides printed: test_pingpong runs the
sizes, test_fuzz one run to show the device still works after hostile
frames.

With -c the server checks the first byte of every page the client sent
and prints "invalid data in page N" for each page that did not arrive,
yet exits 0, so the output is read (perftest.check_pingpong).
"""
from . import perftest as pt

ITERS = 10
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
