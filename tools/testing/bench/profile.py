"""Where the guests' CPU goes while one transfer runs:
  /usr/bin/python3 -m tools.testing.bench.profile [--drivers sroce,rxe,tcp]
      [--program ib_write_bw] [--size 65536] [--duration 20] [--window 5]
      [--top 25]

For each driver in turn (attached on both guests, then detached), one
transfer runs from guest B (client) to guest A (server); once its traffic
flows, both guests record `perf record -e cpu-clock -a -g` (no PMU under
TCG: the timer samples) for a window, over which the per-packet events
are counted too: eth0's frames, interrupts,
softirqs, context switches, and the driver's own counters. "tcp" is
iperf3 over the same link. The report gives, per guest, the top symbols
(self time) and the events per frame on the wire. It is a profile, not a
benchmark: the perf sampling itself costs time, and the numbers are for
finding where the cost is, not for comparing speed (scripts/perf.py).
"""
import argparse
import os
import re
import threading
import time

from .guests import BUILD, Bench, install_signal_handlers
from .lib import perftest as pt

PERF_DATA = "/tmp/profile.data"

# Counted in each guest before and after the run.
SNAPSHOT = r"""
s=/sys/class/net/eth0/statistics
for c in tx_packets rx_packets tx_bytes rx_bytes; do read -r v < $s/$c; echo "$c $v"; done
while read -r k v _; do [ "$k" = ctxt ] && echo "ctxt $v"; done < /proc/stat
awk '/virtio/ {n=0; for (i=2;i<=NF;i++) if ($i ~ /^[0-9]+$/) n+=$i; t+=n} END {print "virtio_irqs", t+0}
     /NET_TX|NET_RX|TIMER|TASKLET/ {n=0; for (i=2;i<=NF;i++) n+=$i; sub(":", "", $1); print "softirq_" $1, n}' \
    /proc/interrupts /proc/softirqs
ethtool -S eth0 2>/dev/null | awk '/(kicks|packets|napi):/ {sub(":", "", $1); print "nic_" $1, $2}'
rdma statistic show 2>/dev/null | awk '{for (i=3;i<NF;i+=2) print "hw_" $i, $(i+1)}'
"""


def snapshot(guest):
    out = guest.run(SNAPSHOT, timeout=30).out
    return {k: int(v) for k, v in (line.split() for line in out.splitlines() if line.strip())}


def delta(before, after):
    return {k: after[k] - before.get(k, 0) for k in after}


TOP_RE = re.compile(r"^\s*([\d.]+)%\s+(\S+)\s+\[[.kX]\]\s+(.+)$")


def top_symbols(report, n):
    rows = []
    for line in report.splitlines():
        m = TOP_RE.match(line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3).strip()))
    return rows[:n]


def transfer(bench, driver, args):
    a, b = bench.a, bench.b
    if driver == "tcp":
        srv = a.spawn("iperf3 -s -1", timeout=args.duration + 60)
        a.wait_for("ss -Hltn sport = :5201 | grep -q LISTEN", timeout=30)
        out = b.run(f"iperf3 -c {a.ip} -t {args.duration}", timeout=args.duration + 60).out
        srv.wait(timeout=30, check=False)
        return out
    dev = f"{driver}0"
    gid = a.gid_index(dev, a.ip)
    cgid = b.gid_index(dev, b.ip)
    run = pt.run_perftest(a, b, args.program, dev, gid, a.ip, size=args.size,
                          extra=f"-D {args.duration}", timeout=args.duration + 120,
                          client_gid_index=cgid)
    return run.client.out if run.client else ""


def frames(guest):
    out = guest.run("read -r t < /sys/class/net/eth0/statistics/tx_packets; echo $t",
                    timeout=30).out
    return int(out.split()[0])


def wait_traffic(guest, done, min_rate=200, timeout=120):
    """Until guest sends min_rate frames a second (the transfer's steady
    state, after connection set-up), or the transfer ended."""
    deadline = time.monotonic() + timeout
    last, t_last = frames(guest), time.monotonic()
    while time.monotonic() < deadline and not done.is_set():
        time.sleep(1)
        now, t_now = frames(guest), time.monotonic()
        if (now - last) / (t_now - t_last) >= min_rate:
            return True
        last, t_last = now, t_now
    return False


def profile_one(bench, driver, args, log):
    guests = bench.guests
    if driver != "tcp":
        for g in guests:
            bench.attach(g, driver=driver)
    try:
        out, done = [], threading.Event()

        def run():
            try:
                out.append(transfer(bench, driver, args))
            finally:
                done.set()

        t = threading.Thread(target=run, daemon=True)
        t.start()
        # Sampled only while the traffic flows, not while tools start.
        if not wait_traffic(bench.b, done):
            t.join()
            raise RuntimeError(f"{driver}: no traffic seen")
        before = [snapshot(g) for g in guests]
        recs = [g.spawn(f"perf record -q -e cpu-clock -a -g -o {PERF_DATA} "
                        f"-- sleep {args.window}", timeout=args.window + 120)
                for g in guests]
        for r in recs:
            r.wait(timeout=args.window + 120, check=False)
        after = [snapshot(g) for g in guests]
        t.join()
        if not done.is_set() or not out:
            raise RuntimeError(f"{driver}: the transfer did not end")
        result = {"driver": driver, "out": out[0], "guests": {}}
        for g, b0, a0 in zip(guests, before, after):
            rep = g.run(f"perf report -i {PERF_DATA} --no-children --sort dso,sym "
                        "--stdio 2>/dev/null | grep -v '^#' | grep '%'",
                        timeout=300, check=False).out
            result["guests"][g.name] = {"delta": delta(b0, a0),
                                        "top": top_symbols(rep, args.top)}
        return result
    finally:
        if driver != "tcp":
            for g in guests:
                bench.detach(g, f"{driver}0")
                if driver == "rxe":
                    g.run("modprobe -r rdma_rxe", check=False)


def print_result(res, log):
    log(f"== {res['driver']}")
    for line in res["out"].splitlines():
        if re.match(r"\s*\d+\s+\d+", line) or "receiver" in line or "sender" in line:
            log("   " + line.strip())
    for name, g in res["guests"].items():
        d = g["delta"]
        frames = d.get("tx_packets", 0) + d.get("rx_packets", 0)
        log(f"-- guest {name}: {d.get('tx_packets', 0)} frames out, "
            f"{d.get('rx_packets', 0)} in")
        if frames:
            per = ", ".join(f"{k} {v / frames:.3f}" for k, v in sorted(d.items())
                            if k in ("ctxt", "virtio_irqs") or k.startswith("softirq_"))
            log(f"   per frame: {per}")
        nic = {k: v for k, v in d.items() if k.startswith("nic_") and v}
        if nic:
            log("   nic: " + ", ".join(f"{k[4:]} {v}" for k, v in sorted(nic.items())))
        hw = {k: v for k, v in d.items() if k.startswith("hw_") and v}
        if hw:
            log("   counters: " + ", ".join(f"{k[3:]} {v}" for k, v in sorted(hw.items())))
        for pct, dso, sym in g["top"]:
            log(f"   {pct:6.2f}%  {dso:20.20s} {sym}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drivers", default="sroce,rxe,tcp")
    ap.add_argument("--program", default="ib_write_bw")
    ap.add_argument("--size", type=int, default=65536)
    ap.add_argument("--duration", type=int, default=20,
                    help="seconds the transfer runs")
    ap.add_argument("--window", type=int, default=5,
                    help="seconds sampled, once the traffic flows")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    install_signal_handlers()
    logdir = os.path.join(BUILD, "logs", "profile-" + time.strftime("%Y%m%d-%H%M%S"))
    lines = []

    def log(msg):
        print(msg, flush=True)
        lines.append(msg)

    with Bench(logdir=logdir, log=print) as bench:
        for driver in args.drivers.split(","):
            print_result(profile_one(bench, driver, args, log), log)
    with open(os.path.join(logdir, "profile.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"report: {logdir}/profile.txt")


if __name__ == "__main__":
    main()
