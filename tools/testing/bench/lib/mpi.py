# SPDX-License-Identifier: GPL-2.0
"""Open MPI 4.1 between the guests: one rank per guest, the UCX PML over
one RDMA device, mpirun on A launching its daemon on B through
mpi_rsh.py (no ssh server), the job tools/testing/verbs/mpi.c
(build/tools/sroce-mpi), and the judge of a run: the job's own checks, the
transports UCX says it picked, and the device's counters.

How mpirun is told (each for a reason):
- `--host A:1,B:1`, by the guests' link addresses: one rank each; A's is
  its own, so only B's daemon is launched.
- `--mca plm_rsh_agent mpi_rsh.py`: the launcher, which sends orted's
  command line to the server the test starts on B.
- `--mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0`: orted
  connects back to mpirun over the guests' link, not over lo.
- `--mca pml ucx`: the job fails rather than fall back to ob1; `--mca btl
  ^tcp,openib` and `--mca osc ucx` leave no other path for data.
- `UCX_NET_DEVICES=DEV:1 UCX_TLS=rc_v,self`: RC over the device (with
  ud_verbs for the wire-up, rc_v being UCX's alias), self for a rank's
  messages to itself inside the collectives. UCX_IB_GID_INDEX, the
  RoCEv2 IPv4 GID of each guest's own device, is set in each side's own
  environment (mpirun's on A, the launcher server's on B, whose orted and
  rank inherit it), as the two guests' indexes need not be equal.
- `UCX_LOG_LEVEL=info`: UCX then prints each endpoint configuration it
  builds (`ep_cfg[N]: tag(rc_verbs/sroce0:1)`), which the judge reads:
  a run whose data could have gone anywhere but the device fails.
- rxe: `UCX_UD_VERBS_ETH_DGID_CHECK=n` (docs/ENGINES.md, UCX's UD
  destination check and rxe 6.1's completion SL).
"""
import math
import os
import re

from . import perftest as pt
from . import ucx
from .mpi_rsh import PORT_ENV

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))
RSH = os.path.join(TOP, "tools/testing/bench/lib/mpi_rsh.py")
PROG = os.path.join(TOP, "build/tools/sroce-mpi")

# Open MPI refuses root without both.
ROOT_ENV = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"

# The job's sizes: (ping-pong size, ping-pong iterations, bandwidth
# message size, bandwidth messages, collective elements per rank and peer).
SHORT = {"s": 8, "l": 50, "b": 65536, "n": 20, "c": 4096}
FULL = {"s": 8, "l": 200, "b": 1 << 20, "n": 20, "c": 65536}

# The transports a rank may use: the device's (RC and the UD wire-up) and
# self. Anything else (tcp, sysv/posix shared memory, cma) is a failure.
ALLOWED_TLS = {"rc_verbs", "ud_verbs"}

EP_CFG_RE = re.compile(r"\[[\d.]+\]\s+\[([^:\]\s]+):\d+\s*:\w+\].*?\bep_cfg\[\d+\]:\s*(.*)$",
                       re.M)
LANES_RE = re.compile(r"(\w+)\(([^)]*)\)")
WORDS_RE = re.compile(r"(\w+)=(\S+)")


def ucx_env(dev, driver):
    """The UCX variables both ranks get (mpirun -x)."""
    env = {"UCX_NET_DEVICES": f"{dev}:1", "UCX_TLS": "rc_v,self", "UCX_LOG_LEVEL": "info"}
    if driver == "rxe":
        env["UCX_UD_VERBS_ETH_DGID_CHECK"] = "n"
    return env


def server_cmd(ip, port, gid_index):
    """Guest B's launcher server, with what B's orted and rank inherit."""
    return f"exec env {ROOT_ENV} UCX_IB_GID_INDEX={gid_index} {RSH} --serve {ip} {port}"


def mpirun_cmd(a_ip, b_ip, dev, driver, gid_index, port, sizes, timeout):
    """mpirun on A (its rank gets A's GID index from this environment)."""
    xs = " ".join(f"-x {k}={v}" for k, v in ucx_env(dev, driver).items())
    args = " ".join(f"-{k} {v}" for k, v in sizes.items())
    return (f"env {ROOT_ENV} {PORT_ENV}={port} UCX_IB_GID_INDEX={gid_index} "
            f"timeout -k 10 {timeout} mpirun --allow-run-as-root -np 2 "
            f"--host {a_ip}:1,{b_ip}:1 --mca plm_rsh_agent {RSH} "
            f"--mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0 "
            f"--mca pml ucx --mca btl ^tcp,openib --mca osc ucx {xs} {PROG} {args}")


def parse(out):
    """The job's lines: {"pingpong": {...}, "bandwidth": {...}, "allreduce",
    "alltoall": True if checked, "payload": {host: {...}}, "ep_cfg":
    {host: [(lane kind, tl, device)]}}."""
    res = {"payload": {}, "ep_cfg": {}, "allreduce": False, "alltoall": False}
    for line in out.splitlines():
        head = line.split(" ", 1)[0]
        words = dict(WORDS_RE.findall(line))
        if head in ("pingpong", "bandwidth"):
            res[head] = {k: float(v) for k, v in words.items()}
        elif head in ("allreduce", "alltoall") and line.rstrip().endswith(" ok"):
            res[head] = True
        elif head == "payload":
            res["payload"][words["host"]] = {"sent": int(words["sent_min"]),
                                             "recv": int(words["recv_min"]),
                                             "rank": int(words["rank"])}
    for host, lanes in EP_CFG_RE.findall(out):
        for kind, items in LANES_RE.findall(lanes):
            for item in items.split():
                tl, _, dev = item.partition("/")
                res["ep_cfg"].setdefault(host, []).append((kind, tl, dev))
    return res


def transport_problems(res, dev, hosts):
    """What UCX picked that is not the device: every lane of every
    endpoint on both hosts must be the device's verbs transports or self,
    and each host must have put its peer's messages on rc_verbs/DEV:1."""
    problems = []
    for host in hosts:
        lanes = res["ep_cfg"].get(host)
        if not lanes:
            problems.append(f"{host}: no ep_cfg line from UCX (UCX_LOG_LEVEL=info)")
            continue
        for kind, tl, d in lanes:
            if tl == "self":
                continue
            if tl not in ALLOWED_TLS or d != f"{dev}:1":
                problems.append(f"{host}: UCX picked {tl}/{d} for {kind}")
        if ("tag", "rc_verbs", f"{dev}:1") not in lanes:
            problems.append(f"{host}: no tag lane on rc_verbs/{dev}:1")
    return problems


def job_problems(res, sizes):
    problems = []
    pp, bw = res.get("pingpong"), res.get("bandwidth")
    if not pp or pp.get("iters") != sizes["l"] or not pp.get("lat_us", 0) > 0:
        problems.append(f"no ping-pong measurement: {pp}")
    if not bw or bw.get("iters") != sizes["n"] or not bw.get("MBps", 0) > 0:
        problems.append(f"no bandwidth measurement: {bw}")
    for coll in ("allreduce", "alltoall"):
        if not res[coll]:
            problems.append(f"{coll} not checked ok")
    return problems


def traffic_problems(payload, mtu, deltas):
    """The device's packets and the netdev's bytes on each guest, against
    the payload its rank says it sent and received at least: a packet per
    MTU of it each way, and its bytes on the netdev."""
    problems = []
    for host, d in deltas.items():
        p = payload.get(host)
        if p is None:
            problems.append(f"no payload line from a rank on {host}")
            continue
        for way, pkts, nbytes in (("sent", "tx_pkts", "tx_bytes"),
                                  ("recv", "rx_pkts", "rx_bytes")):
            want = p[way]
            if d[pkts] < math.ceil(want / mtu):
                problems.append(f"{host}: device {pkts} grew by {d[pkts]}, fewer than "
                                f"{math.ceil(want / mtu)} for {want} B {way} at MTU {mtu}")
            if d[nbytes] < want:
                problems.append(f"{host}: netdev {nbytes} grew by {d[nbytes]}, "
                                f"less than the {want} B {way}")
    return problems


def run(bench, dev, driver, sizes, timeout=240):
    """One job, rank 0 on A and rank 1 on B, over dev. Returns (result,
    problems, mpirun's Result); result is parse()'s plus "deltas": each
    guest's counters' growth by host name."""
    a, b = bench.a, bench.b
    gid = {g.name: g.gid_index(dev) for g in (a, b)}
    port = pt.next_port(7410)
    srv = b.spawn(server_cmd(b.ip, port, gid[b.name]), timeout=timeout + 60)
    try:
        pt.wait_listening(b, port, srv)
        mtu = ucx.active_mtu(a, dev)
        before = {g: ucx.snapshot(g, dev, driver) for g in (a, b)}
        r = a.run(mpirun_cmd(a.ip, b.ip, dev, driver, gid[a.name], port, sizes, timeout),
                  timeout=timeout + 30, check=False)
        after = {g: ucx.snapshot(g, dev, driver) for g in (a, b)}
    finally:
        srv.kill()
    out = r.out + r.err
    res = parse(out)
    hosts = {g: f"sroce-{g.name}" for g in (a, b)}
    res["deltas"] = {hosts[g]: ucx.delta(before[g], after[g]) for g in (a, b)}
    problems = []
    if r.rc == 124:
        problems.append(f"mpirun killed after {timeout}s")
    elif not r.ok:
        problems.append(f"mpirun exit status {r.rc}")
    problems += job_problems(res, sizes)
    if set(res["payload"]) != set(hosts.values()):
        problems.append(f"ranks ran on {sorted(res['payload'])}, not one on each guest")
    problems += transport_problems(res, dev, hosts.values())
    problems += traffic_problems(res["payload"], mtu, res["deltas"])
    return res, problems, r


def counters_text(deltas):
    return "; ".join(f"{h}: +{d['tx_pkts']}/+{d['rx_pkts']} pkts, +{d['tx_bytes']}/"
                     f"+{d['rx_bytes']} B (tx/rx)" for h, d in sorted(deltas.items()))

