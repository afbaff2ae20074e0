"""sroce against rdma_rxe on the same pair of guests, interleaved:
  /usr/bin/python3 scripts/perf.py [--rounds R] [--drivers rxe,sroce]
      [--mtu 1500|9000] [--duration S] [--lat-iters N] [--json PATH]

In each round, each driver in turn (the order alternates round by round)
is attached on both guests, measured, and detached with its module
unloaded: bandwidth (ib_write_bw, ib_send_bw, ib_read_bw in duration mode
at 64 KiB and 1 MiB), the CPU both guests spent per byte on the wire
during those runs (from /proc/stat and eth0's counters, sampled in the
guests, over the part of the run where the traffic flows), and latency
(ib_send_lat, ib_write_lat, ib_read_lat at 2 and 64 bytes: perftest's
typical, i.e. median, latency). The table shows each metric's median over
the rounds per driver and the ratio sroce/rxe; the JSON file
(build/perf/perf-<time>.json, and build/perf/latest.json) has every
sample. A driver that cannot run a metric fails that row only; the reason
is printed under the table. Under TCG absolute numbers swing about 2x
from run to run: only compare the interleaved medians (docs/BENCH.md).
"""
import argparse
import json
import os
import statistics
import sys
import time

from .guests import BUILD, Bench, CommandFailed, GuestError, install_signal_handlers
from .lib import perftest as pt

BW = [(p, s) for p in ("ib_write_bw", "ib_send_bw", "ib_read_bw") for s in (65536, 1 << 20)]
LAT = [(p, s) for p in ("ib_send_lat", "ib_write_lat", "ib_read_lat") for s in (2, 64)]

# Run in each guest for the length of a bandwidth run: a line per quarter
# second with the time, /proc/stat's cpu line and eth0's byte counters.
# Builtins only (the wait is a read on a FIFO nobody writes), so that the
# sampler costs next to nothing itself.
SAMPLER = r"""
rm -f /tmp/perf.fifo && mkfifo /tmp/perf.fifo && exec 9<>/tmp/perf.fifo
s=/sys/class/net/eth0/statistics
while :; do
    read -r cpu < /proc/stat; read -r tx < $s/tx_bytes; read -r rx < $s/rx_bytes
    echo "$EPOCHREALTIME $cpu $tx $rx"
    read -t 0.25 -u 9 _
done
"""
USER_HZ = 100


def size_name(size):
    if size >= 1 << 20:
        return f"{size >> 20} MiB"
    if size >= 1 << 10:
        return f"{size >> 10} KiB"
    return f"{size} B"


def cpu_per_gb(text):
    """From a sampler's output: (kernel, total) CPU-seconds per GB that went
    over eth0 (sent + received) while traffic flowed, or None. Kernel
    time is system + irq + softirq, where a soft-RoCE driver works; total
    adds user time (perftest polls its CQ, so it holds the CPU of its
    guest whatever the driver does)."""
    samples = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 13 or f[1] != "cpu":
            continue
        t = float(f[0])
        user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in f[2:10])
        samples.append((t, user + nice + system + irq + softirq + steal,
                        system + irq + softirq, int(f[-2]) + int(f[-1])))
    steps = [tuple(b[i] - a[i] for i in range(4)) for a, b in zip(samples, samples[1:])]
    rates = [s[3] / s[0] for s in steps if s[0] > 0]
    if not rates or max(rates) <= 0:
        return None
    active = [i for i, s in enumerate(steps) if s[0] > 0 and s[3] / s[0] >= 0.3 * max(rates)]
    first, last = active[0], active[-1]
    if last - first >= 3:
        first, last = first + 1, last - 1  # ramps at both ends
    window = steps[first:last + 1]
    gb = sum(s[3] for s in window) / 1e9
    if gb <= 0:
        return None
    return (sum(s[2] for s in window) / USER_HZ / gb, sum(s[1] for s in window) / USER_HZ / gb)


class Measure:
    """One driver's round: attach on both guests, run every metric, detach."""

    def __init__(self, bench, driver, args, record):
        self.bench, self.driver, self.args, self.record = bench, driver, args, record

    def failed_all(self, why):
        for p, s in BW:
            self.record(self.driver, f"{p} {size_name(s)}", None, why)
            self.record(self.driver, f"{p} {size_name(s)} CPU", None, why)
        for p, s in LAT:
            self.record(self.driver, f"{p} {size_name(s)}", None, why)

    def run(self):
        a, b = self.bench.a, self.bench.b
        for g in (a, b):
            self.bench.reset(g)
            if self.args.mtu != 1500:
                g.run(f"ip link set {g.netdev} mtu {self.args.mtu}")
        try:
            self.dev = {g.name: self.bench.attach(g, driver=self.driver) for g in (a, b)}
            for g in (a, b):
                g.wait_for(f"rdma link show {self.dev[g.name]}/1 | grep -q 'state ACTIVE'",
                           timeout=60)
            self.gid = {g.name: g.gid_index(self.dev[g.name]) for g in (a, b)}
        except (CommandFailed, TimeoutError, AssertionError) as e:
            return self.failed_all(f"attach: {str(e).splitlines()[0]}")
        # A short write first: without a data path every run would wait
        # for its timeout.
        run = self.perftest("ib_write_bw", 65536, "-n 5", timeout=60)
        problems = pt.judge(run, "ib_write_bw", [65536], 5, mtu=pt.IB_MTU[self.args.mtu])
        if problems:
            return self.failed_all(f"probe ib_write_bw -s 65536 -n 5: {pt.headline(problems)}")
        for p, s in BW:
            self.bw(p, s)
        for p, s in LAT:
            self.lat(p, s)
        for g in (a, b):
            self.bench.reset(g)

    def perftest(self, program, size, extra, timeout):
        a, b = self.bench.a, self.bench.b
        return pt.run_perftest(b, a, program, self.dev["b"], self.gid["b"], b.ip, size=size,
                               mtu=pt.IB_MTU[self.args.mtu], extra=extra, timeout=timeout,
                               client_gid_index=self.gid["a"])

    def bw(self, program, size):
        name = f"{program} {size_name(size)}"
        samplers = [g.spawn(SAMPLER, timeout=600) for g in self.bench.guests]
        try:
            run = self.perftest(program, size, f"-D {self.args.duration}",
                                timeout=self.args.duration * 4 + 60)
        finally:
            cpu = [s.kill().out for s in samplers]
        for g, text in zip(self.bench.guests, cpu):
            path = f"perf-{self.driver}-{name.replace(' ', '_')}-cpu-{g.name}.log"
            with open(os.path.join(self.bench.logdir, path), "a") as f:
                f.write(text + "\n")
        problems = pt.judge(run, program, [size], None, mtu=pt.IB_MTU[self.args.mtu])
        if problems:
            self.record(self.driver, name, None, pt.headline(problems), run.text)
            self.record(self.driver, name + " CPU", None, pt.headline(problems))
            return
        self.record(self.driver, name, run.parsed["client"]["rows"][0]["bw_avg"])
        per = [cpu_per_gb(text) for text in cpu]
        if None in per:
            self.record(self.driver, name + " CPU", None, "no traffic seen by the sampler")
        else:
            self.record(self.driver, name + " CPU", sum(k for k, _ in per),
                        extra={"total": sum(t for _, t in per),
                               "kernel_per_guest": [k for k, _ in per]})

    def lat(self, program, size):
        name = f"{program} {size_name(size)}"
        run = self.perftest(program, size, f"-n {self.args.lat_iters}", timeout=120)
        problems = pt.judge(run, program, [size], self.args.lat_iters,
                            mtu=pt.IB_MTU[self.args.mtu])
        if problems:
            self.record(self.driver, name, None, pt.headline(problems), run.text)
            return
        self.record(self.driver, name, run.parsed["client"]["rows"][0]["t_typical"])


METRICS = ([(f"{p} {size_name(s)}", "MB/s", "higher") for p, s in BW]
           + [(f"{p} {size_name(s)} CPU", "CPU-s/GB", "lower") for p, s in BW]
           + [(f"{p} {size_name(s)}", "us", "lower") for p, s in LAT])


def fmt(x):
    if x is None:
        return "-"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def report(samples, drivers):
    """The table (a string) and the per-metric summary for the JSON."""
    summary, lines = [], []
    w = max(len(m) for m, _, _ in METRICS) + 2
    head = f"{'metric':<{w}}{'unit':<10}{'better':<8}" + "".join(
        f"{d + ' (n)':<16}" for d in drivers)
    if "rxe" in drivers and "sroce" in drivers:
        head += "sroce/rxe"
    lines += [head, "-" * len(head)]
    reasons = {}
    for name, unit, better in METRICS:
        entry = {"metric": name, "unit": unit, "better": better, "values": {},
                 "median": {}, "failures": {}}
        cells = []
        for d in drivers:
            vals = [s["value"] for s in samples
                    if s["metric"] == name and s["driver"] == d and s["value"] is not None]
            fails = [s["error"] for s in samples
                     if s["metric"] == name and s["driver"] == d and s["value"] is None]
            med = statistics.median(vals) if vals else None
            entry["values"][d], entry["median"][d], entry["failures"][d] = vals, med, fails
            cells.append(f"{fmt(med)} ({len(vals)})" + ("!" if fails else ""))
            for why in fails:
                reasons.setdefault((d, why), []).append(name)
        ratio = None
        m = entry["median"]
        if m.get("rxe") and m.get("sroce") is not None:
            ratio = m["sroce"] / m["rxe"]
        entry["ratio"] = ratio
        summary.append(entry)
        line = f"{name:<{w}}{unit:<10}{better:<8}" + "".join(f"{c:<16}" for c in cells)
        if "rxe" in drivers and "sroce" in drivers:
            line += fmt(ratio)
        lines.append(line)
    if reasons:
        lines += ["", "! failed samples (the metric's median leaves them out):"]
        for (d, why), names in reasons.items():
            lines.append(f"  {d}: {len(names)} x {why}")
    return "\n".join(lines), summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--drivers", default="rxe,sroce",
                    help="comma-separated, measured in this order in round 1")
    ap.add_argument("--mtu", type=int, choices=sorted(pt.IB_MTU), default=1500)
    ap.add_argument("--duration", type=int, default=5, help="seconds per bandwidth run (-D)")
    ap.add_argument("--lat-iters", type=int, default=300)
    ap.add_argument("--json", help="where to write the results (default build/perf/)")
    args = ap.parse_args()
    drivers = args.drivers.split(",")
    for d in drivers:
        if d not in ("rxe", "sroce"):
            ap.error(f"unknown driver {d}")
    install_signal_handlers()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    samples = []

    def record(driver, metric, value, error=None, text=None, extra=None):
        samples.append({"round": rnd, "driver": driver, "metric": metric, "value": value,
                        "error": error, **(extra or {})})
        if text:
            name = f"perf-r{rnd}-{driver}-{metric.replace(' ', '_')}.log"
            path = os.path.join(bench.logdir, name)
            with open(path, "w") as f:
                f.write(text)
        shown = "FAIL " + error if value is None else fmt(value)
        print(f"  [round {rnd} {driver}] {metric}: {shown}", flush=True)

    load = [os.getloadavg()[0]]
    t0 = time.monotonic()
    rnd, rc = 0, 0
    bench = Bench("rxe")
    try:
        bench.start()
        for rnd in range(1, args.rounds + 1):
            order = drivers if rnd % 2 else drivers[::-1]
            for d in order:
                print(f"=== round {rnd}/{args.rounds}: {d}", flush=True)
                Measure(bench, d, args, record).run()
    except (GuestError, CommandFailed, TimeoutError) as e:
        # What was measured until then is still reported.
        print(f"perf: bench failed in round {rnd}: {e}", file=sys.stderr)
        rc = 1
    finally:
        bench.stop()
    load.append(os.getloadavg()[0])
    table, summary = report(samples, drivers)
    print()
    print(f"{args.rounds} rounds, MTU {args.mtu}, {args.duration} s per bandwidth run, "
          f"{args.lat_iters} latency iterations; medians over the rounds, "
          f"(n) = samples; host load {load[0]:.1f} -> {load[1]:.1f}; "
          f"{time.monotonic() - t0:.0f} s")
    print(table)
    out = args.json or os.path.join(BUILD, "perf", f"perf-{stamp}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    doc = {"time": stamp, "args": vars(args), "host_load": load, "summary": summary,
           "samples": samples, "logs": bench.logdir}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    if not args.json:
        with open(os.path.join(BUILD, "perf", "latest.json"), "w") as f:
            json.dump(doc, f, indent=1)
    print(f"\nresults: {os.path.relpath(out)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
