"""Boot the two guests, attach the driver on both and show what it made:
  scripts/demo [--driver sroce|rxe]
Each step is a function in STEPS: the devices, a ping, then perftest
across the link (bandwidth and latency at a few sizes)."""
import argparse
import os
import sys

from .guests import Bench, CommandFailed, GuestError, install_signal_handlers
from .kmsg_gate import format_record, offending
from .lib import perftest as pt

# Non-zero GIDs of port 1 with their type and netdev. Builtins only (read, not
# cat): a process per entry costs a fraction of a second under TCG, and rxe
# has a 1024-entry table.
GID_TABLE = r"""
p=/sys/class/infiniband/{dev}/ports/1
printf '%-5s %-39s %-12s %s\n' index gid type netdev
for f in "$p"/gids/*; do
    read -r gid < "$f"
    [ "$gid" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
    i=${{f##*/}}
    read -r type < "$p/gid_attrs/types/$i" || type=?
    read -r ndev < "$p/gid_attrs/ndevs/$i" || ndev=?
    printf '%-5s %-39s %-12s %s\n' "$i" "$gid" "$type" "$ndev"
done
"""


def section(title, text):
    print(f"--- {title}")
    print(text.rstrip() or "(nothing)")


def step_attach(bench, devs):
    for g in bench.guests:
        devs[g.name] = bench.attach(g)
        g.wait_for(f"rdma link show {devs[g.name]}/1 | grep -q 'state ACTIVE'", timeout=60)


def step_show(bench, devs):
    for g in bench.guests:
        dev = devs[g.name]
        print(f"=== guest {g.name} ({g.hostname}, {g.ip}, {g.ip6})")
        section("rdma link (port state)", g.run("rdma link show").out)
        section("rdma dev", g.run("rdma dev show").out)
        section(f"GID table of {dev} port 1", g.run(GID_TABLE.format(dev=dev)).out)


def step_devinfo(bench, devs):
    """What a verbs program sees, through the provider (libsroce or librxe)."""
    g = bench.a
    section(f"ibv_devinfo -d {devs[g.name]} (guest {g.name})",
            g.run(f"ibv_devinfo -d {devs[g.name]}").out)


def step_ping(bench, devs):
    print("=== ping a -> b across the link")
    print(bench.a.run(f"ping -c 3 -i 0.2 -W 2 {bench.b.ip}", timeout=30).out.rstrip())


# perftest in the demo: a few sizes each, few iterations, one process per
# size (about 3 s each under TCG).
DEMO_BW = [64, 4096, 65536, 1 << 20]
DEMO_LAT = [2, 64, 4096]
# A client that moves nothing is given up on after this long.
DEMO_TIMEOUT = 45


def demo_perftest(bench, devs, gid, program, size, iters):
    a, b = bench.a, bench.b
    run = pt.run_perftest(b, a, program, devs["b"], gid["b"], b.ip, size=size, iters=iters,
                          mtu=1024, timeout=DEMO_TIMEOUT, client_gid_index=gid["a"])
    return run, pt.judge(run, program, [size], iters, mtu=1024)


def step_perftest(bench, devs):
    """ib_write_bw and ib_send_lat from a to b, RC, IPv4 GIDs, MTU 1500.
    A driver that cannot move data stops here with perftest's reason, and
    the demo goes on."""
    print(f"=== perftest a -> b ({bench.driver}, RC, RoCEv2 over IPv4, IB MTU 1024; "
          "TCG: compare drivers, not absolute numbers)")
    gid = {g.name: g.gid_index(devs[g.name]) for g in bench.guests}
    rows = []
    for size in DEMO_BW:
        run, problems = demo_perftest(bench, devs, gid, "ib_write_bw", size, 50)
        if problems:
            print(f"perftest: ib_write_bw -s {size} did not run on {bench.driver}: "
                  f"{pt.headline(problems)}")
            log = os.path.join(bench.logdir, "demo-perftest.log")
            with open(log, "w") as f:
                f.write(run.text)
            print(f"perftest: {bench.driver} moves no data here: skipping the rest of "
                  f"perftest; both sides' output: {os.path.relpath(log)}")
            return
        r = run.parsed["client"]["rows"][0]
        rows.append((size, r["bw_avg"], r["msg_rate"] * 1e6))
    print(f"{'ib_write_bw':<12}{'bytes':>9}{'MB/s':>10}{'msg/s':>10}")
    for size, bw, rate in rows:
        print(f"{'':<12}{size:>9}{bw:>10.2f}{rate:>10.0f}")
    rows = []
    for size in DEMO_LAT:
        run, problems = demo_perftest(bench, devs, gid, "ib_send_lat", size, 100)
        if problems:
            print(f"perftest: ib_send_lat -s {size} failed: {pt.headline(problems)}")
            return
        r = run.parsed["client"]["rows"][0]
        rows.append((size, r["t_min"], r["t_typical"], r["t_max"]))
    print(f"{'ib_send_lat':<12}{'bytes':>9}{'min us':>10}{'typical':>10}{'max':>10}")
    for size, lo, typ, hi in rows:
        print(f"{'':<12}{size:>9}{lo:>10.0f}{typ:>10.0f}{hi:>10.0f}")


def step_kmsg(bench, devs):
    """Same gate as the tests: the demo fails on a kernel splat or driver error."""
    bad = [format_record(g.name, r) for g in bench.guests for r in offending(g.kmsg())]
    if bad:
        raise GuestError("kernel log problems:\n" + "\n".join(bad))
    print("=== kernel logs clean")


STEPS = [step_attach, step_show, step_devinfo, step_ping, step_perftest, step_kmsg]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driver", choices=("sroce", "rxe"),
                    default=os.environ.get("DRIVER", "sroce"))
    args = ap.parse_args()
    install_signal_handlers()
    try:
        with Bench(args.driver) as bench:
            devs = {}
            for step in STEPS:
                step(bench, devs)
    except (GuestError, CommandFailed, TimeoutError) as e:
        print(f"demo failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
