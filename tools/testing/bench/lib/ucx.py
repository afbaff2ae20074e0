# SPDX-License-Identifier: GPL-2.0
"""UCX between the guests: ucx_perftest's commands (a server on one guest,
the client on the other, over one RDMA device and one UCX transport), its
result line, and the proof that the data went over the device: its packet
counters and the netdev's bytes, not TCP."""
import math
import re

from . import perftest as pt
from . import rdma

# ucx_perftest's UCP tests by the names the docs use; the direction the
# payload goes: "out" client to server, "in" server to client, "both".
TESTS = {
    "tag_lat": ("tag_lat", "both"),
    "tag_bw": ("tag_bw", "out"),
    "put_bw": ("ucp_put_bw", "out"),
    "get_bw": ("ucp_get", "in"),
    "stream_bw": ("stream_bw", "out"),
    "stream_lat": ("stream_lat", "both"),
}

# UCX_TLS per transport: rc_v is rc_verbs with ud_verbs for its wire-up
# (UCX's alias), ud_v ud_verbs alone.
TLS = {"rc": "rc_v", "ud": "ud_v"}

# Packet counters of `rdma statistic` per driver: (sent, received).
PACKET_COUNTERS = {"sroce": ("tx_packets", "rx_packets"),
                   "rxe": ("sent_pkts", "rcvd_pkts")}

# ucx_perftest's last line: iterations, then latency (us) typical,
# average and overall, bandwidth (MB/s) average and overall, message rate
# (msg/s) average and overall. The averages are moving ones, over the last
# report interval, which a short run (5 x 1 MiB) may leave empty: they are
# then inf, nan or 0, and only the overall columns measure the run.
_NUM = r"([-+]?(?:\d+(?:\.\d*)?|inf|nan))"
FINAL_RE = re.compile(r"^Final:\s+(\d+)\s+" + r"\s+".join([_NUM] * 7) + r"\s*$",
                      re.M | re.I)
FINAL_COLUMNS = ("lat_typ", "lat_avg", "lat_overall", "bw_avg", "bw_overall",
                 "msg_rate", "msg_rate_overall")
ERROR_RE = re.compile(r"UCX\s+(ERROR|FATAL)|Fatal:|unhandled timeout", re.I)


def env(dev, gid_index, tls):
    """The environment a new user sets: the device's port, its RoCEv2
    IPv4 GID and the transport."""
    return f"UCX_NET_DEVICES={dev}:1 UCX_IB_GID_INDEX={gid_index} UCX_TLS={TLS[tls]}"


def cmds(test, size, iters, port, server_ip, dev, gids, tls, warmup=2, extra_env=""):
    """(server command, client command) of one ucx_perftest run; gids:
    the (server's, client's) GID index."""
    args = f"-t {TESTS[test][0]} -s {size} -n {iters} -w {warmup} -p {port}"
    srv, cli = (f"{env(dev, gid, tls)} {extra_env}".rstrip() for gid in gids)
    # env(1): the server command is exec()ed (lib/perftest.py run_pair).
    return f"env {srv} ucx_perftest {args}", f"env {cli} ucx_perftest {server_ip} {args}"


def parse(out):
    """The client's Final line: {"iters", and FINAL_COLUMNS as floats (bw
    in MB/s), "nonfinite": the columns that are inf or nan}, or None."""
    m = FINAL_RE.search(out)
    if not m:
        return None
    res = {"iters": int(m.group(1))}
    res.update(zip(FINAL_COLUMNS, (float(v) for v in m.groups()[1:])))
    res["nonfinite"] = [c for c in FINAL_COLUMNS if not math.isfinite(res[c])]
    return res


def measured(res, iters):
    """Whether a Final line measured the whole run: every iteration, finite
    overall columns, and a latency and message rate above 0 (the overall
    bandwidth of small messages prints as 0.00 MB/s; the interval averages
    may be anything, see FINAL_RE)."""
    overall = (res["lat_overall"], res["bw_overall"], res["msg_rate_overall"])
    return (res["iters"] == iters and all(math.isfinite(v) for v in overall)
            and res["lat_overall"] > 0 and res["msg_rate_overall"] > 0)


def snapshot(g, dev, driver, netdev="eth0"):
    """The device's packet counters and the netdev's byte counters."""
    c = rdma.counters(g, dev)
    tx, rx = PACKET_COUNTERS[driver]
    stats = f"/sys/class/net/{netdev}/statistics"
    nb = g.run(f"cat {stats}/tx_bytes {stats}/rx_bytes").out.split()
    return {"tx_pkts": c[tx], "rx_pkts": c[rx], "tx_bytes": int(nb[0]), "rx_bytes": int(nb[1])}


def delta(before, after):
    return {k: after[k] - before[k] for k in before}


def active_mtu(g, dev):
    """The port's active (IB) MTU in bytes."""
    out = g.run(f"ibv_devinfo -d {dev}").out
    return int(re.search(r"active_mtu:\s*(\d+)", out).group(1))


def traffic_problems(test, size, iters, mtu, client_delta, server_delta):
    """What is wrong with the counters' account of a run: the side sending
    the payload must have sent, and the other received, at least a packet
    per MTU of every measured message, and the netdev carried at least its
    bytes. Warm-up messages only add to that."""
    per_msg = max(1, math.ceil(size / mtu))
    want_pkts, want_bytes = iters * per_msg, iters * size
    direction = TESTS[test][1]
    flows = []
    if direction in ("out", "both"):
        flows.append(("client", client_delta, "server", server_delta))
    if direction in ("in", "both"):
        flows.append(("server", server_delta, "client", client_delta))
    problems = []
    for sname, sender, rname, receiver in flows:
        if sender["tx_pkts"] < want_pkts:
            problems.append(f"{sname} sent {sender['tx_pkts']} RoCE packets, "
                            f"fewer than {want_pkts} for {iters} x {size} B")
        if receiver["rx_pkts"] < want_pkts:
            problems.append(f"{rname} received {receiver['rx_pkts']} RoCE packets, "
                            f"fewer than {want_pkts} for {iters} x {size} B")
        if sender["tx_bytes"] < want_bytes:
            problems.append(f"{sname}'s netdev sent {sender['tx_bytes']} B, "
                            f"fewer than the {want_bytes} B moved")
    return problems


def run(bench, driver, dev, test, size, iters, tls, gid_index, timeout=120, extra_env=""):
    """One ucx_perftest run, server on B, client on A. Returns (result,
    problems, run): result is parse()'s, problems a list (empty if the run
    completed, with numbers, over the device)."""
    a, b = bench.a, bench.b
    port = pt.next_port(13337)
    srv, cli = cmds(test, size, iters, port, b.ip, dev, (gid_index[b.name], gid_index[a.name]), tls,
                    extra_env=extra_env)
    mtu = active_mtu(a, dev)
    before = {g.name: snapshot(g, dev, driver) for g in (a, b)}
    r = pt.run_pair(b, a, srv, cli, port, timeout)
    after = {g.name: snapshot(g, dev, driver) for g in (a, b)}
    problems = []
    if r.setup_error:
        return None, [r.setup_error], r
    if r.hung:
        problems.append(f"client killed after {timeout}s")
    out = (r.client.out + r.client.err) if r.client else ""
    if r.client is None or not r.client.ok:
        problems.append(f"client exit status {r.client.rc if r.client else None}")
    if r.server is None or not r.server.ok:
        problems.append(f"server exit status {r.server.rc if r.server else None}")
    for text in (out, (r.server.out + r.server.err) if r.server else ""):
        problems += [ln.strip() for ln in text.splitlines() if ERROR_RE.search(ln)][:3]
    res = parse(out)
    if res is None:
        problems.append("no Final line")
    elif not measured(res, iters):
        problems.append(f"Final line without a measurement: {res}")
    if not problems:
        problems += traffic_problems(test, size, iters, mtu,
                                     delta(before[a.name], after[a.name]),
                                     delta(before[b.name], after[b.name]))
    return res, problems, r
