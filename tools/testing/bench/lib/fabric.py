# SPDX-License-Identifier: GPL-2.0
"""libfabric 1.17 between the guests (Debian's libfabric-bin): what
`fi_info` lists, fi_pingpong's commands (a server on one guest, the
client on the other, over one verbs domain), its result line, and the
proof that the messages went over the device: its packet counters
(tools/testing/bench/lib/ucx.py's snapshot), not TCP.

fi_pingpong exchanges addresses over a TCP control connection (-B/-P),
then ping-pongs over the endpoint type asked for: "msg" is the verbs
provider's RC endpoint set up by rdma_cm, "rdm" the ofi_rxm layer over it.
"""
import math
import re

from . import perftest as pt
from . import ucx

# The provider string and endpoint type of each endpoint kind.
ENDPOINTS = {"msg": ("verbs", "msg"), "rdm": ("verbs;ofi_rxm", "rdm")}

# ofi_rxm 1.17's MSG CQ per RDM endpoint: (FI_OFI_RXM_MSG_TX_SIZE +
# FI_OFI_RXM_MSG_RX_SIZE) entries, both 128 by default, per peer of
# FI_UNIVERSE_SIZE (default 256): rxm_ep_msg_cq_open() in prov/rxm/src/rxm_ep.c.
RXM_MSG_QUEUES = 128 + 128
RXM_UNIVERSE = 256

# fi_pingpong's result row: bytes (64, 64k, 1m), #sent, #ack (=N), total,
# time (s), MB/sec, usec/xfer, Mxfers/sec.
_ROW_RE = re.compile(r"^(\d+[kmg]?)\s+(\d+)\s+=(\d+)\s+(\S+)\s+([\d.]+)s\s+"
                     r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
# fi_pingpong's only error line when it lost the race of its close
# (closing_race()), and its exit status then: -FI_ECANCELED.
_FLUSHED = "cq_readerr: Work Request Flushed Error"
_ECANCELED = 125


def domains(fi_info_out):
    """{(provider, domain, endpoint type)} of `fi_info`'s short listing."""
    found = set()
    for block in fi_info_out.split("provider:")[1:]:
        prov = block.split("\n", 1)[0].strip()
        dom = re.search(r"^\s*domain:\s*(\S+)", block, re.M)
        typ = re.search(r"^\s*type:\s*(\S+)", block, re.M)
        if dom and typ:
            found.add((prov, dom.group(1), typ.group(1)))
    return found


def parse(out):
    """fi_pingpong's result row: {"size", "iters", "acked", "seconds",
    "mb_s", "usec", "mxfers"}, or None."""
    m = _ROW_RE.search(out)
    if not m:
        return None
    num = m.group(1)
    size = int(num.rstrip("kmg")) * _UNITS[num[-1] if num[-1] in "kmg" else ""]
    return {"size": size, "iters": int(m.group(2)), "acked": int(m.group(3)),
            "seconds": float(m.group(5)), "mb_s": float(m.group(6)),
            "usec": float(m.group(7)), "mxfers": float(m.group(8))}


def closing_race(res):
    """Whether a side that failed (@res: its Result) lost fi_pingpong's
    race at its close, and did nothing else wrong. After its result row
    each side sends a "fin" message, waits for its completion and for the
    other's fin, and closes without a handshake (pp_finalize()). A side
    whose peer closed first can hear the disconnect before it polled its
    fin's completion: ofi_rxm then closes the connection's MSG endpoint,
    and libfabric's verbs provider completes every send still on its list
    with a flush error it makes itself, vendor error FI_ECANCELED
    (vrb_ep_close() -> vrb_flush_sq()), though the device completed the
    send. Measured: 6 of 367 rdm runs of 64 KiB x 10 beside two busy
    loops on the host (none of 40 without), and in the two traced, every
    PSN of both QPs acknowledged and no QP flushed by the kernel."""
    if res is None or res.rc != _ECANCELED:
        return False
    errors = [line for line in (res.out + res.err).splitlines()
              if line.startswith("[error]")]
    return (parse(res.out) is not None and len(errors) == 1 and
            errors[0].endswith(_FLUSHED))


def rxm_env(max_cqe):
    """The environment verbs;ofi_rxm needs on a device whose CQs hold
    max_cqe entries: its MSG CQ is RXM_MSG_QUEUES x FI_UNIVERSE_SIZE
    entries, and fi_enable() fails with EINVAL (vrb_cq_open(): "Unable to
    create verbs CQ") when that exceeds max_cqe. rdma_rxe 6.1 allows 32767
    (< 256 x 128), so its runs get the largest universe that fits."""
    if RXM_MSG_QUEUES * RXM_UNIVERSE <= max_cqe:
        return ""
    return f"FI_UNIVERSE_SIZE={max_cqe // RXM_MSG_QUEUES}"


def max_cqe(g, dev):
    out = g.run(f"ibv_devinfo -v -d {dev}").out
    return int(re.search(r"max_cqe:\s*(\d+)", out).group(1))


def cmds(kind, dev, size, iters, port, server_ip, env=""):
    """(server command, client command) of one fi_pingpong run with its
    data checks (-c)."""
    prov, ep = ENDPOINTS[kind]
    args = f"-p '{prov}' -e {ep} -d {dev} -S {size} -I {iters} -c"
    pre = f"env {env} " if env else ""
    return (f"{pre}fi_pingpong {args} -B {port}",
            f"{pre}fi_pingpong {args} -P {port} {server_ip}")


def problems_of(res, size, iters):
    if res is None:
        return ["no result row"]
    bad = []
    if (res["size"], res["iters"], res["acked"]) != (size, iters, iters):
        bad.append(f"row is not {iters} x {size} B acked: {res}")
    if not (res["usec"] > 0 and math.isfinite(res["usec"]) and res["seconds"] > 0):
        bad.append(f"row without a measurement: {res}")
    return bad


def traffic_problems(size, iters, mtu, delta_a, delta_b):
    """A ping-pong sends each message both ways: each side must have sent
    and received at least a packet per MTU of each measured message."""
    want = iters * max(1, math.ceil(size / mtu))
    bad = []
    for name, d in (("client", delta_a), ("server", delta_b)):
        for key in ("tx_pkts", "rx_pkts"):
            if d[key] < want:
                bad.append(f"{name} {key} moved by {d[key]}, fewer than {want} "
                           f"for {iters} x {size} B")
    return bad


def run(bench, kind, dev, size, iters, env="", timeout=120):
    """One fi_pingpong run, server on B, client on A. Returns (client's
    result, problems, run); problems is empty if both sides measured every
    message and the device's counters carried them."""
    a, b = bench.a, bench.b
    port = pt.next_port(47592)
    srv, cli = cmds(kind, dev, size, iters, port, b.ip, env)
    mtu = ucx.active_mtu(a, dev)
    before = {g.name: ucx.snapshot(g, dev, bench.driver) for g in (a, b)}
    r = pt.run_pair(b, a, srv, cli, port, timeout)
    if r.setup_error:
        return None, [r.setup_error], r
    after = {g.name: ucx.snapshot(g, dev, bench.driver) for g in (a, b)}
    bad = []
    if r.hung:
        bad.append(f"client killed after {timeout}s")
    for side, res in (("client", r.client), ("server", r.server)):
        if closing_race(res):
            print(f"{side}: lost fi_pingpong's race at close "
                  f"(lib/fabric.py closing_race()), its row complete")
        elif res is None or not res.ok:
            bad.append(f"{side} exit status {res.rc if res else None}")
    res = parse(r.client.out) if r.client else None
    bad += problems_of(res, size, iters)
    if r.server is not None:
        bad += [f"server: {p}" for p in problems_of(parse(r.server.out), size, iters)]
    if not bad:
        bad += traffic_problems(size, iters, mtu, ucx.delta(before[a.name], after[a.name]),
                                ucx.delta(before[b.name], after[b.name]))
    return res, bad, r
