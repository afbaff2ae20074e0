"""Two builds of sroce.ko side by side in one boot of the guests:
  /usr/bin/python3 -m tools.testing.bench.ab [--old REF] [--rounds 2]
      [--runs ib_write_bw:64:20000,ib_send_lat:2:2000,...] [--lossy]

--old REF (a git revision, default HEAD~1) is built from its own tree
(git archive into build/ab/REF/) and compared with the work tree's
sroce.ko (run `make` first). The two modules are swapped with insmod
between runs, in alternating order each round (old, new; new, old; ...),
so that what the host does meanwhile falls on both. Each run is one
perftest program from guest B (client, requester) to guest A (server,
responder) at one size for a fixed number of iterations; for each the
report gives both builds' figures (MB/s and Mpps, or typical latency in
µs), their median ratio new/old, and the counters that explain it (A's
ACKs sent, both sides' retransmissions). --lossy puts make bench's netem
profile (perf.NETEM: delay, loss, duplication, reordering) on both
guests' eth0 for every run.

A change to the data path is judged by this before make bench: the two
drivers of make bench are sroce and rxe, and days differ by 2x.
"""
import argparse
import os
import statistics
import subprocess

from .guests import BUILD, TOP, Bench, install_signal_handlers
from .lib import perftest as pt
from .lib.rdma import counters
from .perf import NETEM

DEFAULT_RUNS = ("ib_write_bw:64:20000,ib_send_bw:64:20000,ib_write_bw:65536:400,"
                "ib_send_lat:2:2000,ib_write_lat:2:2000")
# Counters reported per run: A answers, B requests.
SHOWN = (("a", "ack_sent"), ("a", "ack_held"), ("b", "retransmits"), ("a", "rx_duplicate"))


def build_old(ref):
    """sroce.ko of git revision ref, built in its own tree under build/ab/."""
    sha = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", ref], check=True,
                         capture_output=True, text=True).stdout.strip()
    tree = os.path.join(BUILD, "ab", sha)
    ko = os.path.join(tree, "sroce.ko")
    if not os.path.exists(ko):
        os.makedirs(tree, exist_ok=True)
        archive = subprocess.Popen(["git", "-C", TOP, "archive", sha], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", tree], stdin=archive.stdout, check=True)
        if archive.wait():
            raise SystemExit(f"ab: git archive {sha} failed")
        print(f"==> building sroce.ko of {sha} in {tree}", flush=True)
        subprocess.run(["make", "-C", tree, "module"], check=True, stdout=subprocess.DEVNULL)
    return sha, ko


def parse_runs(text):
    runs = []
    for item in text.split(","):
        try:
            program, size, iters = item.split(":")
            runs.append((program, int(size), int(iters)))
        except ValueError:
            raise SystemExit(f"ab: --runs wants PROGRAM:SIZE:ITERS[,...], not {item!r}")
    return runs


def load(bench, ko):
    """ko in both guests, in place of whatever sroce was loaded; returns
    the two devices (A's, B's)."""
    for g in (bench.a, bench.b):
        # modprobe first: insmod loads no dependencies.
        g.run("rdma link delete sroce0 2>/dev/null; modprobe sroce && rmmod sroce")
        g.run(f"insmod {ko}")
    return bench.attach(bench.a), bench.attach(bench.b)


def figure(program, run):
    """(value, unit) of the client's row."""
    rows = (run.parsed["client"] or {}).get("rows") or []
    if not rows:
        return None
    row = rows[0]
    if "lat" in program:
        return row.get("t_typical")
    return row.get("msg_rate") if row["size"] <= 256 else row.get("bw_avg")


def one(bench, devs, program, size, iters):
    a, b = bench.a, bench.b
    da, db = devs
    before = {"a": counters(a, da), "b": counters(b, db)}
    run = pt.run_perftest(a, b, program, da, a.gid_index(da), a.ip, size=size, iters=iters,
                          client_gid_index=b.gid_index(db))
    after = {"a": counters(a, da), "b": counters(b, db)}
    problems = pt.judge(run, program, [size], iters=iters)
    counts = {f"{side}.{name}": after[side].get(name, 0) - before[side].get(name, 0)
              for side, name in SHOWN}
    return figure(program, run), counts, problems


def unit(program, size):
    return "us typical" if "lat" in program else ("Mpps" if size <= 256 else "MB/s")


def report(runs, results, old_sha):
    print(f"\nold = {old_sha}, new = work tree; medians, new/old "
          f"(latency: lower is better)")
    for program, size, iters in runs:
        key = (program, size)
        med = {}
        for build in ("old", "new"):
            vals = [v for v, _, _ in results[build][key] if v is not None]
            med[build] = statistics.median(vals) if vals else None
            counts = {}
            for _, c, _ in results[build][key]:
                for k, v in c.items():
                    counts.setdefault(k, []).append(v)
            shown = ", ".join(f"{k} {'/'.join(map(str, v))}" for k, v in counts.items())
            figs = ", ".join("-" if v is None else f"{v:g}" for v, _, _ in results[build][key])
            print(f"{program} {size} B x {iters} [{unit(program, size)}] {build}: {figs}; {shown}")
        if med["old"] and med["new"]:
            print(f"{program} {size} B: new/old {med['new'] / med['old']:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="HEAD~1")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", default=DEFAULT_RUNS)
    ap.add_argument("--lossy", action="store_true",
                    help=f"both guests' eth0 behind {NETEM!r}")
    args = ap.parse_args()
    runs = parse_runs(args.runs)
    new_ko = os.path.join(TOP, "sroce.ko")
    if not os.path.exists(new_ko):
        raise SystemExit("ab: no sroce.ko in the work tree: run make first")
    old_sha, old_ko = build_old(args.old)
    kos = {"old": old_ko, "new": new_ko}
    results = {b: {(p, s): [] for p, s, _ in runs} for b in kos}
    install_signal_handlers()
    problems = 0
    with Bench() as bench:
        if args.lossy:
            for g in (bench.a, bench.b):
                g.run(f"tc qdisc replace dev eth0 root {NETEM}")
        for r in range(args.rounds):
            for build in (("old", "new") if r % 2 == 0 else ("new", "old")):
                devs = load(bench, kos[build])
                for program, size, iters in runs:
                    value, counts, bad = one(bench, devs, program, size, iters)
                    results[build][(program, size)].append((value, counts, bad))
                    problems += bool(bad)
                    print(f"round {r + 1} {build} {program} {size}: {value} {counts}"
                          + (f" PROBLEM: {pt.headline(bad)}" if bad else ""), flush=True)
    report(runs, results, old_sha)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
