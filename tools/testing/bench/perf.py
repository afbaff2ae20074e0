"""sroce against rdma_rxe and TCP on the same pair of guests, interleaved:
  /usr/bin/python3 scripts/perf.py [--rounds R] [--drivers rxe,sroce,tcp]
      [--mtu 1500[,9000]] [--sizes ...] [--qps 1,4] [--lossy] [--full]
      [--duration S] [--lat-iters N] [--json PATH] [--no-plots]
  /usr/bin/python3 scripts/perf.py --veth [--rounds R] [--drivers ...] ...

In each round, each entity in turn (the order rotates round by round) is
measured on both guests: rxe and sroce attached, measured and detached
with their modules unloaded; TCP (iperf3) with no RDMA module loaded.
Bandwidth (ib_write_bw, ib_send_bw, ib_read_bw in duration mode; message
rate at 64 B), CPU-seconds both guests spent per GB of payload, counters
per frame on the link (virtio interrupts and kicks, NET_RX softirqs,
retransmissions), latency (typical, average, p99 and max of
ib_{send,write,read}_lat) and, with --lossy, bandwidth over a netem link.
Every run also records the host's load before and after it and the share
of the host's CPUs other processes than our two QEMUs took: runs with
others busy are flagged "loaded". The table shows each metric's median
over the rounds per entity and the ratios; the JSON file
(build/perf/perf-<time>.json, and build/perf/latest.json) has every
sample; PNG plots are written next to it. docs/BENCH.md says how to read
it; under TCG only the interleaved medians compare.

--veth (`make bench-veth`): the same rounds in ONE guest, over a veth pair
(lib/veth.py), a netdev with scatter-gather and checksum offload where
the guests' link has neither: ib_{write,send,read}_bw at 64 KiB and
1 MiB and iperf3, each end's programs on its own end of the pair, with
bandwidth, CPU-seconds per payload GB (the one guest's /proc/stat) and
sroce's tx_zerocopy per packet. sroce and TCP put the far end in its own
netns; rdma_rxe cannot work there on 6.1 (its UDP port is in the initial
netns only) and runs on the "routed" topology: both ends in the initial
netns, policy routing sending each end's frames out of its own veth.
"sroce-routed" runs sroce on that topology too, for a like-for-like
ratio.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import time

from .guests import BUILD, Bench, CommandFailed, GuestError, install_signal_handlers
from .lib import benchstat as bs
from .lib import perftest as pt
from .lib import veth

BW_PROGRAMS = ("ib_write_bw", "ib_send_bw", "ib_read_bw")
LAT_PROGRAMS = ("ib_send_lat", "ib_write_lat", "ib_read_lat")
LAT_SIZES = (2, 4096)
LAT_STATS = (("typical", "t_typical"), ("avg", "t_avg"), ("p99", "p99"), ("max", "t_max"))
DEFAULT_SIZES = (64, 4096, 65536, 1 << 20)
LOSSY_SIZE = 65536
# 1 % loss, 1 % duplication, 10 % reordering, 2 ms delay on both guests.
NETEM = "netem delay 2ms loss 1% duplicate 1% reorder 10%"
# TCP variants: name -> iperf3 options (MSS given the RoCE payload per
# frame at the link's MTU: perftest's IB MTU).
TCP_VARIANTS = {"tcp": "", "tcp eq-payload": "-M {ibmtu}", "tcp -P 4": "-P 4"}
MIB = 1 << 20

# --veth: entity -> (RDMA driver or None for TCP, veth topology).
VETH_ENTITIES = {"sroce": ("sroce", "netns"), "rxe": ("rxe", "routed"),
                 "tcp": (None, "netns"), "sroce-routed": ("sroce", "routed")}
VETH_SIZES = (65536, 1 << 20)
VETH_TCP = ("tcp", "tcp eq-payload")

# Run in each guest for the length of a bandwidth run: a line per quarter
# second with the time, /proc/stat's cpu line and the byte counters of the
# netdev the traffic crosses (@DEV@: eth0, or the veth's near end).
# Builtins only (the wait is a read on a FIFO nobody writes), so that the
# sampler costs next to nothing itself.
SAMPLER = r"""
rm -f /tmp/perf.fifo && mkfifo /tmp/perf.fifo && exec 9<>/tmp/perf.fifo
s=/sys/class/net/@DEV@/statistics
while :; do
    read -r cpu < /proc/stat; read -r tx < $s/tx_bytes; read -r rx < $s/rx_bytes
    echo "$EPOCHREALTIME $cpu $tx $rx"
    read -t 0.25 -u 9 _
done
"""


def size_name(size):
    if size >= 1 << 20:
        return f"{size >> 20} MiB"
    if size >= 1 << 10:
        return f"{size >> 10} KiB"
    return f"{size} B"


def metric(kind, program, size=None, qps=1, mtu=1500, stat=None, lossy=False):
    """A metric's name and its fields (the plots and ratios use the fields).
    kind: bw (MB/s), mpps, cpu (CPU-s per payload GB), lat (us), zc
    (sroce's packets sent as page fragments per packet sent)."""
    parts = (["lossy"] if lossy else []) + [program]
    if size is not None:
        parts.append(size_name(size))
    if qps != 1:
        parts.append(f"q{qps}")
    if mtu != 1500:
        parts.append(f"mtu{mtu}")
    if kind == "mpps":
        parts.append("Mpps")
    elif kind == "cpu":
        parts.append("CPU")
    elif kind == "lat":
        parts.append(stat)
    elif kind == "zc":
        parts.append("zc/pkt")
    return {"metric": " ".join(parts), "kind": kind, "program": program, "size": size,
            "qps": qps, "mtu": mtu, "stat": stat, "lossy": lossy}


UNITS = {"bw": ("MB/s", "higher"), "mpps": ("Mpps", "higher"),
         "cpu": ("CPU-s/GB", "lower"), "lat": ("us", "lower"),
         "zc": ("zc/pkt", "higher")}


def plan(args):
    """Every metric of a run, in table order, and the runs that make them:
    [(entity kind 'rdma'|'tcp', run spec)]."""
    if args.veth:
        return plan_veth(args)
    rdma, tcp, metrics = [], [], []
    for mtu in args.mtus:
        for qps in args.qps:
            for size in args.sizes:
                for p in BW_PROGRAMS:
                    if qps != 1 and size not in args.q_sizes:
                        continue
                    rdma.append(("bw", p, size, qps, mtu, False))
                    kinds = ("bw", "cpu") + (("mpps",) if size <= 64 else ())
                    metrics += [metric(k, p, size, qps, mtu) for k in kinds]
        for p in LAT_PROGRAMS:
            for size in LAT_SIZES:
                rdma.append(("lat", p, size, 1, mtu, False))
                metrics += [metric("lat", p, size, 1, mtu, s) for s, _ in LAT_STATS]
        if args.lossy:
            for p in BW_PROGRAMS:
                rdma.append(("bw", p, LOSSY_SIZE, 1, mtu, True))
                metrics.append(metric("bw", p, LOSSY_SIZE, 1, mtu, lossy=True))
        for name in TCP_VARIANTS:
            tcp.append((name, mtu))
            metrics += [metric("bw", name, mtu=mtu), metric("cpu", name, mtu=mtu)]
    return rdma, tcp, metrics


def plan_veth(args):
    """plan() for --veth: bandwidth, CPU per GB and zero-copy share at the
    sizes asked (1 QP, MTU 1500), iperf3 plain and at RoCE's payload."""
    rdma, tcp, metrics = [], [], []
    for size in args.sizes:
        for p in BW_PROGRAMS:
            rdma.append(("bw", p, size, 1, 1500, False))
            metrics += [metric(k, p, size) for k in ("bw", "cpu", "zc")]
    for name in VETH_TCP:
        tcp.append((name, 1500))
        metrics += [metric("bw", name), metric("cpu", name)]
    return rdma, tcp, metrics


class Host:
    """The host's side of a run: load average and the CPU time of the host
    against that of our two QEMU processes."""

    def __init__(self, bench):
        self.pids = [g.proc.pid for g in bench.guests]

    def sample(self):
        with open("/proc/stat") as f:
            stat = f.read()
        ticks = []
        for pid in self.pids:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ticks.append(bs.qemu_ticks(f.read()))
            except OSError:
                ticks.append(0)
        return {"stat": stat, "qemu": ticks, "loadavg": os.getloadavg()[0]}

    @staticmethod
    def judge(before, after):
        other = bs.host_other_busy(before, after)
        load = (before["loadavg"], after["loadavg"])
        return {"loadavg": load, "other_busy": other,
                "loaded": bs.loaded(other, load, os.cpu_count())}


class Round:
    """One entity's part of a round (an RDMA driver's runs, or TCP's) at one
    MTU: guests reset, each run observed (host load, counters, CPU)."""

    # The netdev the traffic crosses, whose counters a run reads, and
    # whether it sees both directions (one end of a pair in one guest).
    link, both_ways = "eth0", False

    def __init__(self, bench, entity, mtu, args, record):
        self.bench, self.entity, self.mtu, self.args = bench, entity, mtu, args
        self.record, self.host = record, Host(bench)
        self.ibmtu = pt.IB_MTU[mtu]
        # Where servers and clients run: guest B serves, A connects.
        self.server, self.client = bench.b, bench.a
        self.server_ip = bench.b.ip
        self.driver = entity
        # The guests whose counters and CPU a run reads.
        self.guests = bench.guests

    def setup(self):
        self.prepare()
        if not self.link_ok():
            print(f"  [{self.entity}] the link between the guests carries nothing: "
                  "rebooting them", flush=True)
            self.bench.reboot(self.bench.a)
            self.prepare()

    def prepare(self):
        for g in self.bench.guests:
            self.bench.reset(g)
            g.run("tc qdisc del dev eth0 root 2>/dev/null || true")
            if self.mtu != 1500:
                g.run(f"ip link set {g.netdev} mtu {self.mtu}")

    def link_ok(self):
        """Whether B's pings reach A and come back (always, with one guest):
        a link that stopped (docs/BENCH.md) would fail every later run of
        every entity."""
        if len(self.bench.guests) < 2:
            return True
        return self.bench.b.run(f"ping -c 3 -i 0.2 -W 3 {self.bench.a.ip}",
                                timeout=30, check=False).ok

    def observe(self, fn, sample_cpu):
        """Run fn() with the host sampled and both guests' counters read
        around it (and their CPU sampled during it); return (fn's result,
        observation)."""
        guests = self.guests
        h0 = self.host.sample()
        c0 = self.snapshots()
        sampler = SAMPLER.replace("@DEV@", self.link)
        samplers = [g.spawn(sampler, timeout=900) for g in guests] if sample_cpu else []
        t0 = time.monotonic()
        try:
            result = fn()
        finally:
            seconds = time.monotonic() - t0
            cpu = [s.kill().out for s in samplers]
        c1 = self.snapshots()
        h1 = self.host.sample()
        obs = {"host": Host.judge(h0, h1), "seconds": seconds,
               "per_run": bs.per_run([bs.delta(a, b) for a, b in zip(c0, c1)],
                                     both_ways=self.both_ways),
               "cpu_rate": [bs.cpu_rate(t) for t in cpu] if cpu else None}
        return result, obs

    def snapshots(self):
        """Both guests' counters, read at once (TCG: each read takes a while)."""
        guests = self.guests
        script = bs.snapshot_script(self.link)
        with concurrent.futures.ThreadPoolExecutor(len(guests)) as pool:
            return list(pool.map(lambda g: bs.snapshot(g.run(script, timeout=60).out),
                                 guests))

    def log(self, name, text):
        path = os.path.join(self.bench.logdir,
                            f"perf-{self.entity}-{name.replace(' ', '_')}.log")
        with open(path, "a") as f:
            f.write(text + "\n")

    def extra(self, obs):
        return {"host": obs["host"], "loaded": obs["host"]["loaded"], "seconds": obs["seconds"],
                "counters": obs["per_run"]}


class RdmaRound(Round):
    def failed_all(self, runs, why):
        for kind, p, size, qps, mtu, lossy in runs:
            if kind == "bw":
                kinds = ("bw",) if lossy else ("bw", "cpu") + (("mpps",) if size <= 64 else ())
                for k in kinds:
                    self.record(self.entity, metric(k, p, size, qps, mtu, lossy=lossy), None, why)
            else:
                for s, _ in LAT_STATS:
                    self.record(self.entity, metric("lat", p, size, 1, mtu, s), None, why)

    def attach(self):
        """An RDMA device at each end: self.dev and self.gid, {"server",
        "client"}."""
        a, b = self.bench.a, self.bench.b
        dev = {g.name: self.bench.attach(g, driver=self.driver) for g in (a, b)}
        for g in (a, b):
            g.wait_for(f"rdma link show {dev[g.name]}/1 | grep -q 'state ACTIVE'", timeout=60)
        self.dev = {"server": dev["b"], "client": dev["a"]}
        self.gid = {"server": b.gid_index(dev["b"]), "client": a.gid_index(dev["a"])}

    def run(self, runs):
        self.setup()
        try:
            self.attach()
        except (CommandFailed, TimeoutError, AssertionError) as e:
            return self.failed_all(runs, f"attach: {str(e).splitlines()[0]}")
        problem = self.probe()
        if problem:
            return self.failed_all(runs, problem)
        clean = [r for r in runs if not r[5]]
        lossy = [r for r in runs if r[5]]
        for i, r in enumerate(clean):
            if (self.bw if r[0] == "bw" else self.lat)(*r[1:4]):
                problem = self.recover()
                if problem:
                    return self.failed_all(clean[i + 1:] + lossy, problem)
        if lossy:
            self.netem(True)
            try:
                for i, r in enumerate(lossy):
                    if self.bw(*r[1:4], lossy=True):
                        problem = self.recover()
                        if problem:
                            return self.failed_all(lossy[i + 1:], problem)
                        self.netem(True)
            finally:
                self.netem(False)
        self.teardown()

    def probe(self):
        """A short write: without a data path every run would wait for its
        timeout. Returns what failed, or None."""
        run = self.perftest("ib_write_bw", 65536, "-n 5", timeout=60)
        problems = pt.judge(run, "ib_write_bw", [65536], 5, mtu=self.ibmtu)
        if problems:
            return f"probe ib_write_bw -s 65536 -n 5: {pt.headline(problems)}"
        return None

    def netem(self, on):
        for g in self.bench.guests:
            g.run(f"tc qdisc replace dev eth0 root {NETEM}" if on
                  else "tc qdisc del dev eth0 root 2>/dev/null || true")

    def recover(self):
        """Fresh devices and a working link after a failed run, so that one
        failure costs its own sample only. A run that failed may have left
        the driver wedged, or the link: twice, once under each driver, the
        link stopped carrying anything, TCP included, and every later run
        failed with "Couldn't connect" (docs/BENCH.md). The guests are
        reset (modules unloaded); if that fails, or the probe then fails,
        they are rebooted. Each guest's kernel log is kept first. Returns
        what still fails, or None."""
        for g in self.bench.guests:
            self.log("recover", f"[{g.name}] kernel log before recovery:\n" + "\n".join(
                r["text"] for r in g.kmsg()))
        try:
            self.setup()
            self.attach()
            problem = self.probe()
        except (CommandFailed, TimeoutError, AssertionError, GuestError) as e:
            problem = str(e).splitlines()[0]
        if not problem:
            print(f"  [{self.entity}] after a failed run: guests reset", flush=True)
            return None
        print(f"  [{self.entity}] after a failed run, reset did not help ({problem}): "
              "rebooting the guests", flush=True)
        try:
            self.bench.reboot(self.bench.a)
            self.setup()
            self.attach()
            return self.probe()
        except (CommandFailed, TimeoutError, AssertionError, GuestError) as e:
            return f"after a reboot: {str(e).splitlines()[0]}"

    def teardown(self):
        for g in self.bench.guests:
            self.bench.reset(g)

    def perftest(self, program, size, extra, timeout):
        return pt.run_perftest(self.server, self.client, program, self.dev["server"],
                               self.gid["server"], self.server_ip, size=size,
                               mtu=self.ibmtu, extra=extra, timeout=timeout,
                               client_gid_index=self.gid["client"],
                               client_dev=self.dev["client"])

    def bw(self, program, size, qps, lossy=False):
        """One bandwidth run, recorded; returns its problems ([]: none)."""
        m = {k: metric(k, program, size, qps, self.mtu, lossy=lossy)
             for k in ("bw", "cpu", "mpps", "zc")}
        opts = f"-D {self.args.duration}" + (f" -q {qps}" if qps != 1 else "")
        run, obs = self.observe(lambda: self.perftest(program, size, opts,
                                                      timeout=self.args.duration * 4 + 90),
                                sample_cpu=True)
        problems = pt.judge(run, program, [size], None, mtu=self.ibmtu)
        extra = self.extra(obs)
        if problems:
            self.record(self.entity, m["bw"], None, pt.headline(problems), run.text)
            if not lossy:
                self.record(self.entity, m["cpu"], None, pt.headline(problems))
            return problems
        row = run.parsed["client"]["rows"][0]
        self.record(self.entity, m["bw"], row["bw_avg"], extra=extra)
        if lossy:
            return problems
        if size <= 64:
            self.record(self.entity, m["mpps"], row["msg_rate"], extra=extra)
        zc = obs["per_run"].get("tx_zerocopy_per_packet")
        if self.args.veth and zc is not None:
            self.record(self.entity, m["zc"], zc, extra=extra)
        per = bs.cpu_per_payload_gb(obs["cpu_rate"], row["bw_avg"] * MIB)
        if per is None:
            self.record(self.entity, m["cpu"], None, "no traffic seen by the sampler")
        else:
            self.record(self.entity, m["cpu"], per[0], extra={**extra, "busy": per[1]})
        return problems

    def lat(self, program, size, _qps):
        """One latency run, recorded; returns its problems ([]: none)."""
        run, obs = self.observe(lambda: self.perftest(program, size,
                                                      f"-n {self.args.lat_iters}",
                                                      timeout=180), sample_cpu=False)
        problems = pt.judge(run, program, [size], self.args.lat_iters, mtu=self.ibmtu)
        for stat, col in LAT_STATS:
            m = metric("lat", program, size, 1, self.mtu, stat)
            if problems:
                self.record(self.entity, m, None, pt.headline(problems),
                            run.text if stat == "typical" else None)
            else:
                self.record(self.entity, m, run.parsed["client"]["rows"][0][col],
                            extra=self.extra(obs))
        return problems


class TcpRound(Round):
    """iperf3 from guest B to guest A, no RDMA module loaded."""

    def run(self, variants):
        self.setup()
        for name, _ in variants:
            self.one(name)

    def __init__(self, *args):
        super().__init__(*args)
        # iperf3's server in A, its client in B.
        self.server, self.client = self.bench.a, self.bench.b
        self.server_ip = self.bench.a.ip

    def iperf3(self, opts):
        srv_guest, cli = self.server, self.client
        port = pt.next_port(5300)
        srv = srv_guest.spawn(f"exec iperf3 -s -1 -p {port}", timeout=self.args.duration + 120)
        try:
            pt.wait_listening(srv_guest, port, srv)
            res = cli.run(f"iperf3 -c {self.server_ip} -p {port} -t {self.args.duration} "
                          f"-J {opts}", timeout=self.args.duration + 90, check=False)
        finally:
            srv.kill()
        return res

    def one(self, name):
        opts = TCP_VARIANTS[name].format(ibmtu=self.ibmtu)
        mbw, mcpu = metric("bw", name, mtu=self.mtu), metric("cpu", name, mtu=self.mtu)
        res, obs = self.observe(lambda: self.iperf3(opts), sample_cpu=True)
        self.log(mbw["metric"], res.out + res.err)
        try:
            r = bs.iperf3(res.out)
        except (ValueError, KeyError) as e:
            why = f"iperf3 rc={res.rc}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            self.record("tcp", mbw, None, why)
            self.record("tcp", mcpu, None, why)
            return
        extra = {**self.extra(obs), "iperf3": r}
        self.record("tcp", mbw, r["bytes_per_s"] / MIB, extra=extra)
        per = bs.cpu_per_payload_gb(obs["cpu_rate"], r["bytes_per_s"])
        if per is None:
            self.record("tcp", mcpu, None, "no traffic seen by the sampler")
        else:
            self.record("tcp", mcpu, per[0], extra={**extra, "busy": per[1]})


class VethRound:
    """--veth: the entity's topology of the veth pair in guest A (the one
    guest booted), its near end serving, the far end connecting; counters
    and CPU read on the near end, which sees both directions."""
    link, both_ways = veth.NEAR_DEV, True

    def setup(self):
        super().setup()
        self.guests = (self.bench.a,)
        self.driver, topology = VETH_ENTITIES[self.entity]
        self.pair = veth.make(self.bench.a, topology)
        self.server, self.client = self.pair.near, self.pair.far
        self.server_ip = veth.NEAR_IP

    def attach(self):
        names = (f"{self.driver}0", f"{self.driver}1")
        gids = self.pair.attach(self.driver, names)
        for n in names:
            self.bench.a.wait_for(f"rdma link show {n}/1 | grep -q 'state ACTIVE'", timeout=60)
        self.dev = {"server": names[0], "client": names[1]}
        self.gid = {"server": gids[0], "client": gids[1]}

    def extra(self, obs):
        return {**super().extra(obs), "topology": self.pair.topology}

    def teardown(self):
        # The RDMA devices first (reset deletes them), then the pair and
        # any routing rules it made.
        super().teardown()
        veth.teardown(self.bench.a)


class VethRdmaRound(VethRound, RdmaRound):
    pass


class VethTcpRound(VethRound, TcpRound):
    def run(self, variants):
        super().run(variants)
        self.teardown()

    def teardown(self):
        self.bench.reset(self.bench.a)
        veth.teardown(self.bench.a)


def fmt(x):
    if x is None:
        return "-"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def tcp_reference(m, medians, variant):
    """TCP's median to set a bandwidth or CPU-per-GB metric against: the
    same kind and MTU, the given variant ('tcp' or 'tcp eq-payload')."""
    if m["kind"] not in ("bw", "cpu") or m["lossy"] or m["program"].startswith("tcp"):
        return None
    return medians.get(metric(m["kind"], variant, mtu=m["mtu"])["metric"])


def report(samples, entities, metrics):
    """The tables (a string) and the per-metric summary for the JSON."""
    drivers = [e for e in entities if e != "tcp"]
    summary, lines = [], []
    w = max(len(m["metric"]) for m in metrics) + 2
    # Each other driver against rxe (--veth's sroce-routed too: its
    # like-for-like ratio).
    vs_rxe = [d for d in drivers if d != "rxe"] if "rxe" in drivers else []
    ratios = [f"{d}/rxe" for d in vs_rxe] + (
        [f"{d}/{t}" for d in drivers for t in ("TCP", "TCPeq")] if "tcp" in entities else [])
    cols = drivers + (["tcp"] if "tcp" in entities else [])
    # Columns as wide as their heads (--veth's "sroce-routed").
    cw = max([16] + [len(c) + 6 for c in cols])
    rw = {r: max(11, len(r) + 2) for r in ratios}
    head = (f"{'metric':<{w}}{'unit':<10}{'better':<8}"
            + "".join(f"{c + ' (n)':<{cw}}" for c in cols)
            + "".join(f"{r:<{rw[r]}}" for r in ratios))
    lines += [head, "-" * len(head)]
    reasons = {}
    tcp_medians = {}
    for m in metrics:
        if m["program"].startswith("tcp"):
            vals = [s["value"] for s in samples if s["metric"] == m["metric"]
                    and s["value"] is not None]
            tcp_medians[m["metric"]] = statistics.median(vals) if vals else None
    for m in metrics:
        unit, better = UNITS[m["kind"]]
        entry = {**m, "unit": unit, "better": better, "values": {}, "median": {},
                 "failures": {}, "loaded": {}, "ratio": {}}
        cells = []
        owners = ["tcp"] if m["program"].startswith("tcp") else drivers
        for d in cols:
            if d not in owners:
                cells.append("")
                continue
            mine = [s for s in samples if s["metric"] == m["metric"] and s["driver"] == d]
            vals = [s["value"] for s in mine if s["value"] is not None]
            fails = [s["error"] for s in mine if s["value"] is None]
            nload = sum(1 for s in mine if s.get("loaded"))
            med = statistics.median(vals) if vals else None
            entry["values"][d], entry["median"][d] = vals, med
            entry["failures"][d], entry["loaded"][d] = fails, nload
            cells.append(f"{fmt(med)} ({len(vals)}{f',{nload}L' if nload else ''})"
                         + ("!" if fails else ""))
            for why in fails:
                reasons.setdefault((d, why), []).append(m["metric"])
        med = entry["median"]
        for d in vs_rxe:
            if med.get("rxe") and med.get(d) is not None:
                entry["ratio"][f"{d}/rxe"] = med[d] / med["rxe"]
        for d in drivers:
            for t, variant in (("TCP", "tcp"), ("TCPeq", "tcp eq-payload")):
                ref = tcp_reference(m, tcp_medians, variant)
                if ref and med.get(d) is not None:
                    entry["ratio"][f"{d}/{t}"] = med[d] / ref
        summary.append(entry)
        lines.append(f"{m['metric']:<{w}}{unit:<10}{better:<8}"
                     + "".join(f"{c:<{cw}}" for c in cells)
                     + "".join(f"{fmt(entry['ratio'][r]) if r in entry['ratio'] else '':<{rw[r]}}"
                               for r in ratios))
    lines += ["", "(n) = samples, kL = k of them loaded (docs/BENCH.md), ! = failures below"]
    lines += ["", per_frame_table(samples, metrics, cols)]
    if reasons:
        lines += ["", "! failed samples (the metric's median leaves them out):"]
        for (d, why), names in reasons.items():
            lines.append(f"  {d}: {len(names)} x {why}")
    return "\n".join(lines), summary


PER_FRAME = (("frames", "frames"), ("irq/fr", "virtio_net_irqs_per_frame"),
             ("kick/fr", "kicks_per_frame"), ("rxsoft/fr", "net_rx_per_frame"),
             ("retrans", None), ("bklg-drop", "softnet_dropped"))


def per_frame_table(samples, metrics, cols):
    """Medians of the per-run counters of every bandwidth run, both guests
    summed: frames sent on the link, virtio-net interrupts, kicks and
    NET_RX softirqs per frame, retransmissions (RDMA counters for rxe and
    sroce, TCP's RetransSegs for TCP), packets dropped as an input backlog
    was full (/proc/net/softnet_stat)."""
    names = [m["metric"] for m in metrics if m["kind"] == "bw"]
    w = max(len(n) for n in names) + 2 if names else 10
    dw = max([7] + [len(d) + 1 for d in cols])
    head = f"{'per run (medians)':<{w}}{'':<{dw}}" + "".join(f"{h:>11}" for h, _ in PER_FRAME)
    lines = [head, "-" * len(head)]
    for n in names:
        for d in cols:
            c = [s["counters"] for s in samples if s["metric"] == n and s["driver"] == d
                 and s.get("counters")]
            if not c:
                continue
            cells = []
            for _, key in PER_FRAME:
                if key is None:
                    v = [x["tcp_retransmits" if d == "tcp" else "rdma_retransmits"] for x in c]
                else:
                    v = [x[key] for x in c if x.get(key) is not None]
                cells.append(fmt(statistics.median(v)) if v else "-")
            lines.append(f"{n:<{w}}{d:<{dw}}" + "".join(f"{x:>11}" for x in cells))
    return "\n".join(lines)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--veth", action="store_true",
                    help="one guest, over a veth pair with offloads (make bench-veth): "
                         "bandwidth, CPU per GB and zero copy at 64 KiB and 1 MiB, iperf3")
    ap.add_argument("--drivers", default=None,
                    help="comma-separated entities (rxe, sroce, tcp; with --veth also "
                         "sroce-routed), in round 1's order (default rxe,sroce,tcp; "
                         "--veth: rxe,sroce,sroce-routed,tcp)")
    ap.add_argument("--mtu", default="1500", help="comma-separated: 1500, 9000")
    ap.add_argument("--sizes", default=None,
                    help="bandwidth message sizes, bytes (default "
                         f"{','.join(map(str, DEFAULT_SIZES))}; --veth: "
                         f"{','.join(map(str, VETH_SIZES))})")
    ap.add_argument("--qps", default="1,4", help="QP counts (-q) of the bandwidth runs")
    ap.add_argument("--q-sizes", default="65536",
                    help="sizes run with more than one QP (default 64 KiB; --full: all)")
    ap.add_argument("--lossy", action="store_true", help="add the netem row")
    ap.add_argument("--full", action="store_true",
                    help="MTU 1500 and 9000, every size with every QP count, the netem row")
    ap.add_argument("--duration", type=int, default=3, help="seconds per bandwidth run")
    ap.add_argument("--lat-iters", type=int, default=300)
    ap.add_argument("--json", help="where to write the results (default build/perf/)")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args(argv)
    if args.drivers is None:
        args.drivers = "rxe,sroce,sroce-routed,tcp" if args.veth else "rxe,sroce,tcp"
    args.entities = args.drivers.split(",")
    for d in args.entities:
        if d not in (VETH_ENTITIES if args.veth else ("rxe", "sroce", "tcp")):
            ap.error(f"unknown driver {d}")
    if args.veth and (args.full or args.lossy or args.mtu != "1500"):
        ap.error("--veth runs at MTU 1500 without netem: no --full, --lossy, --mtu")
    if args.sizes is None:
        args.sizes = ",".join(map(str, VETH_SIZES if args.veth else DEFAULT_SIZES))
    args.sizes = [int(x) for x in args.sizes.split(",")]
    args.qps = [int(x) for x in args.qps.split(",")]
    args.q_sizes = [int(x) for x in args.q_sizes.split(",")]
    args.mtus = [int(x) for x in args.mtu.split(",")]
    if args.full:
        args.mtus, args.q_sizes, args.lossy = sorted(pt.IB_MTU), args.sizes, True
    for m in args.mtus:
        if m not in pt.IB_MTU:
            ap.error(f"MTU {m}: one of {sorted(pt.IB_MTU)}")
    return args


def environment(bench):
    """Each guest's clocksource, qdisc, offloads (ethtool -k) and kernel."""
    return {g.name: bs.sections(g.run(bs.ENVIRONMENT, timeout=60).out) for g in bench.guests}


def main(argv=None):
    args = parse_args(argv)
    install_signal_handlers()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    samples = []
    rdma_runs, tcp_runs, metrics = plan(args)

    def record(driver, m, value, error=None, text=None, extra=None):
        samples.append({"round": rnd, "driver": driver, "metric": m["metric"], "value": value,
                        "error": error, **(extra or {})})
        if text:
            name = f"perf-r{rnd}-{driver}-{m['metric'].replace(' ', '_')}.log"
            with open(os.path.join(bench.logdir, name), "w") as f:
                f.write(text)
        shown = "FAIL " + error if value is None else fmt(value)
        flag = " (loaded)" if (extra or {}).get("loaded") else ""
        print(f"  [round {rnd} {driver}] {m['metric']}: {shown}{flag}", flush=True)

    load = [os.getloadavg()[0]]
    t0 = time.monotonic()
    rnd, rc, env = 0, 0, {}
    bench = Bench("rxe")
    rounds = (VethRdmaRound, VethTcpRound) if args.veth else (RdmaRound, TcpRound)
    if args.veth:
        # Guest A alone: B would only take host CPU from it. A's QEMU
        # listens on the link socket without waiting for B.
        bench.guests = (bench.a,)
    try:
        bench.start()
        env = environment(bench)
        for rnd in range(1, args.rounds + 1):
            k = (rnd - 1) % len(args.entities)
            order = args.entities[k:] + args.entities[:k]
            for mtu in args.mtus:
                for e in order:
                    print(f"=== round {rnd}/{args.rounds}, MTU {mtu}: {e}", flush=True)
                    if e == "tcp":
                        rounds[1](bench, e, mtu, args, record).run(
                            [t for t in tcp_runs if t[1] == mtu])
                    else:
                        rounds[0](bench, e, mtu, args, record).run(
                            [r for r in rdma_runs if r[4] == mtu])
    except (GuestError, CommandFailed, TimeoutError) as e:
        # What was measured until then is still reported.
        print(f"perf: bench failed in round {rnd}: {e}", file=sys.stderr)
        rc = 1
    finally:
        bench.stop()
    load.append(os.getloadavg()[0])
    seconds = time.monotonic() - t0
    table, summary = report(samples, args.entities, metrics)
    nloaded = sum(1 for s in samples if s.get("loaded"))
    print()
    where = "veth pair in one guest (vz0 counted), " if args.veth else ""
    print(f"{where}{args.rounds} rounds, MTU {args.mtu if not args.full else '1500,9000'}, "
          f"{args.duration} s per bandwidth run"
          + ("; " if args.veth else f", {args.lat_iters} latency iterations; ")
          + f"medians over the rounds; host load {load[0]:.1f} -> {load[1]:.1f}, "
          f"{nloaded} of {len(samples)} samples loaded; {seconds:.0f} s")
    if args.veth:
        print("topologies (tools/testing/bench/lib/veth.py): " + ", ".join(
            f"{e} {VETH_ENTITIES[e][1]}" for e in args.entities))
    print(table)
    kind = "perf-veth" if args.veth else "perf"
    out = args.json or os.path.join(BUILD, "perf", f"{kind}-{stamp}.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    doc = {"time": stamp, "args": {k: v for k, v in vars(args).items()},
           "host_load": load, "seconds": seconds, "environment": env, "summary": summary,
           "samples": samples, "logs": bench.logdir}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    if not args.json:
        latest = "latest-veth.json" if args.veth else "latest.json"
        with open(os.path.join(BUILD, "perf", latest), "w") as f:
            json.dump(doc, f, indent=1)
    print(f"\nresults: {os.path.relpath(out)}")
    if not args.no_plots:
        from .lib import benchplot
        for path in benchplot.write(doc, os.path.splitext(out)[0]):
            print(f"plot: {os.path.relpath(path)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
