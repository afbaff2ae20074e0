# SPDX-License-Identifier: GPL-2.0
"""perftest between the guests: every ib_*_bw and ib_*_lat program, RC and
UC, IPv4 and IPv6 GIDs, link MTU 1500 and 9000, across the link and in
loopback on one guest, reduced so that the file fits in CI.

The matrix. A program and connection type ("combo": 10 of them with
sizes, send/write/read x bw/lat x RC/UC where perftest has it, plus
ib_atomic_bw and ib_atomic_lat, RC only) runs in the environments
  {IPv4, IPv6 GID} x {MTU 1500 (IB MTU 1024), 9000 (IB MTU 4096)}
  x {across the link (server on B, client on A), loopback (both on A)}.
`make perftest-full` runs every combo in all 8, each with `-a` (every
size, 2 B to 8 MiB). make check runs each combo in half of them, a half
fraction of the 2^3 design: combos of even index in the environments of
even bit parity (v4-1500-link, v6-9000-link, v6-1500-loop, v4-9000-loop),
the others in the rest. Each combo so meets every value of every
dimension, and every pair of values of any two dimensions; every
environment meets send, write, read and atomics, RC and UC. One of an
RC combo's four runs is `-a` (latency programs' across the link: a
loopback round trip of every size on one vCPU takes twice as long); the
other runs, and all of a UC combo's, are one size each, a different one
each time, chosen not to be a multiple of the MTU (one byte, under one
packet, just over one and several packets, 1 MB).
Atomics have one size (8 bytes), FETCH_AND_ADD or CMP_AND_SWAP by the
environment, so that each operation meets every value of every dimension.
Iterations: -n 5 (perftest's minimum).

Every run is judged on both sides' output (tools/testing/bench/lib/perftest.py):
exit statuses, every size's row present with a non-zero bandwidth or
message rate / positive latencies, the connection type, MTU and the
local and remote GIDs the run was asked for (IPv6 GIDs are really used),
and no error line. A run whose client makes no progress stops its test
(the rest would hang the same way); other failures are collected and the
test fails with all of them.

Pick with -k: test_rc_write_bw, test_uc_send_lat, test_rc_atomic_bw, ...
PERFTEST_ENV=v6-9000-loop (comma-separated; v4|v6, 1500|9000, link|loop)
limits a run to some environments. `make perftest-full` (PERFTEST_FULL=1,
PERFTEST_ITERS=100, PERFTEST_LAT_ITERS=20) runs every combination with -a,
100 iterations of the bandwidth programs and 20 of the latency programs
instead: about 80 minutes under TCG; run it before calling the transport
done. "default" for either leaves the count to perftest. Each run's output
is in the run's log directory, under perftest/.

The first test, test_smoke, moves 64 KiB with RC writes: if it cannot,
the later tests fail at once with its reason instead of each waiting for
its own timeouts. test_wire_format then looks at the link itself with a
packet socket on B (tools/testing/bench/lib/roce_sniff.py): RoCEv2 frames of the
GID's IP version only, cut at the path MTU, one PSN per packet.
"""
import json
import os
import sys

import pytest

from tools.testing.bench.lib import perftest as pt

# PERFTEST_FULL=1 (make perftest-full) makes every test here the full matrix.
pytestmark = pytest.mark.full

FULL = os.environ.get("PERFTEST_FULL", "") not in ("", "0")
ITERS = None if FULL else 5


def _iters(name, default):
    """PERFTEST_ITERS=N (or PERFTEST_LAT_ITERS=N for the latency programs)
    runs N iterations of each size; "default" leaves the count to perftest
    (5000 for bandwidth, 1000 for latency)."""
    v = os.environ.get(name, "")
    if v == "default":
        return None
    if not v:
        return default
    if not v.isdigit() or not 5 <= int(v) <= 1000000:
        sys.exit(f"{name}={v!r}: give a count of 5 or more, or 'default'")
    return int(v)


ITERS = _iters("PERFTEST_ITERS", ITERS)
# A latency iteration is a round trip of every size: the full matrix runs
# them fewer times.
LAT_ITERS = _iters("PERFTEST_LAT_ITERS", ITERS)
AUTO = object()    # Setup.run's iterations: ITERS or LAT_ITERS by program

# (program, connection), in the order the tests run.
COMBOS = [(p, c) for p in ("ib_send_bw", "ib_write_bw", "ib_read_bw",
                           "ib_send_lat", "ib_write_lat", "ib_read_lat")
          for c in pt.CONNECTIONS[p]] + [("ib_atomic_bw", "RC"), ("ib_atomic_lat", "RC")]

# Environment e = (ip, mtu, where); index bits: 1 = IPv6, 2 = 9000, 4 = loopback.
ENVS = [(("v4", "v6")[e & 1], (1500, 9000)[e >> 1 & 1], ("link", "loop")[e >> 2 & 1])
        for e in range(8)]
# Environment indexes of even bit parity; the odd ones are the rest. Both
# are half fractions of the 2^3 design in which every pair of values of
# two dimensions occurs.
EVEN = (0, 3, 5, 6)
# The environment of each RC combo's -a run when make check runs it in
# its half (the full matrix runs -a everywhere); UC combos (None) run one
# size in each of theirs: their segmentation is RC's, and an -a run costs
# as much as five single sizes.
ALL_ENV = (6, None, 5, None, 0,  # send_bw RC, UC, write_bw RC, UC, read_bw
           2, None, 2, None, 1)  # send_lat RC, UC, write_lat RC, UC, read_lat
# Single sizes for the runs without -a.
SIZES = [1, 100, 1025, 4097, 12345, 65537, 1000000]

# Client time limits per run (s): -a takes 10-25 s, one size 1-3 s under
# TCG on an idle machine.
ALL_TIMEOUT = 20000 if FULL else 240
ONE_TIMEOUT = 600 if FULL else 60


def env_name(env):
    ip, mtu, where = env
    return f"{ip}-{mtu}-{where}"


def plan(combo_index, program):
    """[(env, size)] for one combo: size None means -a, "atomic" the fixed
    8 bytes. Single sizes first, so that a broken data path shows fast,
    and by MTU within each part, to switch it less."""
    half = [e for e in range(8) if (e in EVEN) == (combo_index % 2 == 0)] \
        if not FULL else list(range(8))
    if program.startswith("ib_atomic"):
        runs = [(ENVS[e], "atomic") for e in half]
    elif FULL:
        runs = [(ENVS[e], None) for e in half]
    else:
        runs = [(ENVS[e], None if e == ALL_ENV[combo_index] else
                 SIZES[(combo_index + e) % len(SIZES)]) for e in half]
    return sorted(runs, key=lambda r: (r[1] is None, r[0][1]))


def selected(env):
    want = os.environ.get("PERFTEST_ENV")
    if not want:
        return True
    return any(all(part in env_name(env).split("-") for part in w.split("-"))
               for w in want.split(","))


class Setup:
    """Both guests with the driver attached, MTU switched on demand, GID
    indexes looked up once."""

    def __init__(self, bench):
        self.bench = bench
        self.dev = {}
        for g in bench.guests:
            self.dev[g.name] = bench.attach(g)
        self.mtu = 1500
        self.gids = {}
        self.logdir = os.path.join(bench.logdir, "perftest")
        os.makedirs(self.logdir, exist_ok=True)

    def gid(self, g, ip):
        key = (g.name, ip)
        if key not in self.gids:
            addr = g.ip if ip == "v4" else g.ip6
            self.gids[key] = (g.gid_index(self.dev[g.name], addr), addr)
        return self.gids[key]

    def set_mtu(self, mtu):
        if mtu != self.mtu:
            for g in self.bench.guests:
                g.run(f"ip link set {g.netdev} mtu {mtu}")
            self.mtu = mtu

    def run(self, program, connection, env, size, op=None, label="", iters=AUTO):
        """One perftest run in env; returns (Run, problems)."""
        if iters is AUTO:
            iters = LAT_ITERS if pt.kind(program) == "lat" else ITERS
        ip, mtu, where = env
        self.set_mtu(mtu)
        a, b = self.bench.a, self.bench.b
        server = a if where == "loop" else b
        sidx, saddr = self.gid(server, ip)
        cidx, caddr = self.gid(a, ip)
        sizes = [8] if size == "atomic" else (pt.ALL_SIZES if size is None else [size])
        extra = f"-A {op}" if op else ""
        timeout = ALL_TIMEOUT if size is None else ONE_TIMEOUT
        run = pt.run_perftest(server, a, program, self.dev[a.name], sidx, server.ip,
                              size=None if size == "atomic" else size, iters=iters,
                              connection=connection, mtu=pt.IB_MTU[mtu], extra=extra,
                              timeout=timeout, client_gid_index=cidx)
        problems = pt.judge(run, program, sizes, iters, connection, pt.IB_MTU[mtu],
                            gids=(caddr, saddr))
        with open(os.path.join(self.logdir, f"{label}.log"), "w") as f:
            f.write(run.text + "\n\nproblems:\n" + "\n".join(problems or ["none"]) + "\n")
        return run, problems


def summary(program, run, size):
    """What a run measured, in one line: the largest size's figure."""
    rows = run.parsed["client"]["rows"] if run.parsed["client"] else []
    if not rows:
        return "no table"
    r = rows[-1]
    what = f"{len(rows)} sizes, " if size is None else ""
    if pt.kind(program) == "bw":
        return f"{what}{r['size']} B at {r['bw_avg']:.2f} MB/s, {r['msg_rate'] * 1e6:.0f} msg/s"
    return f"{what}{r['size']} B in {r['t_typical']:.1f} us typical"


_smoke = {}


def run_combo(bench, index, program, connection):
    if "failed" in _smoke:
        raise AssertionError(f"not run: test_smoke could not move data: {_smoke['failed']}")
    s = Setup(bench)
    failures, ran = [], 0
    for env, size in plan(index, program):
        if not selected(env):
            continue
        op = None
        if size == "atomic":
            # Each operation meets both IP versions, both MTUs, link and loop.
            op = ("FETCH_AND_ADD", "CMP_AND_SWAP")[(env[0] == "v6") ^ (env[2] == "loop")]
        what = (f"{connection.lower()} {program} {env_name(env)} "
                f"{'-a' if size is None else op or f'-s {size}'}")
        label = (f"{connection.lower()}_{program}_{env_name(env)}_"
                 f"{'all' if size is None else op or size}")
        run, problems = s.run(program, connection, env, size, op, label)
        ran += 1
        retry = (f", sizes measured again after a failed clock calibration: "
                 f"{sorted({size for size, _ in run.remeasured})}"
                 if run.remeasured else "")
        if problems:
            print(f"  FAIL {what} ({run.seconds:.1f}s): {pt.headline(problems)}", flush=True)
            failures.append((what, problems, run))
            if run.hung or run.setup_error:
                break  # the data path is stuck: the rest would hang as well
        else:
            print(f"  ok   {what} ({run.seconds:.1f}s{retry}): {summary(program, run, size)}",
                  flush=True)
    if not ran:
        pytest.skip(f"PERFTEST_ENV={os.environ.get('PERFTEST_ENV')} selects none")
    if failures:
        detail = "\n\n".join(f"{what}:\n  " + "\n  ".join(p) + "\n" + run.text[-3000:]
                             for what, p, run in failures)
        raise AssertionError(f"{len(failures)} of {ran} runs failed, first: "
                             f"{failures[0][0]}: {pt.headline(failures[0][1])}\n{detail}")


def test_smoke(bench):
    """RC writes of 64 KiB across the link: the data path moves data."""
    _smoke.clear()
    s = Setup(bench)
    run, problems = s.run("ib_write_bw", "RC", ENVS[0], 65536, label="smoke", iters=5)
    if problems:
        _smoke["failed"] = pt.headline(problems)
        raise AssertionError("; ".join(problems) + "\n" + run.text[-3000:])
    print(f"  ok   rc ib_write_bw {env_name(ENVS[0])} -s 65536: "
          f"{summary('ib_write_bw', run, 65536)}")


test_smoke.TIMEOUT = ONE_TIMEOUT + 120


# Messages per test_wire_format run, whatever the mode: a Python packet
# socket in a TCG guest keeps up with a few hundred frames.
ITERS_WIRE = 5
# What test_wire_format sends, and the opcodes that must appear: the first
# and middle packets of a multi-packet message carry exactly the path MTU.
WIRE = [
    ("ib_write_bw", "RC", ("v4", 1500), {0x06, 0x07, 0x08, 0x11}, {0x06, 0x07}),
    ("ib_write_bw", "RC", ("v6", 1500), {0x06, 0x07, 0x08, 0x11}, {0x06, 0x07}),
    ("ib_write_bw", "RC", ("v4", 9000), {0x06, 0x07, 0x08, 0x11}, {0x06, 0x07}),
    ("ib_read_bw", "RC", ("v6", 9000), {0x0c, 0x0d, 0x0e, 0x0f}, {0x0d, 0x0e}),
    ("ib_send_bw", "UC", ("v6", 1500), {0x20, 0x21, 0x22}, {0x20, 0x21}),
]


def test_wire_format(bench):
    """What goes over the link, seen by a packet socket on B: RoCEv2 on
    UDP 4791 of the GID's IP version only, and messages cut at the path
    MTU asked for (first and middle packets full, none larger)."""
    if "failed" in _smoke:
        raise AssertionError(f"not run: test_smoke could not move data: {_smoke['failed']}")
    s = Setup(bench)
    b = bench.b
    failures = []
    for program, connection, (ip, mtu), opcodes, full in WIRE:
        env = (ip, mtu, "link")
        ready, stop = "/tmp/sniff.ready", "/tmp/sniff.stop"
        b.run(f"rm -f {ready} {stop}")
        sniff = b.spawn(f"exec python3 tools/testing/bench/lib/roce_sniff.py {b.netdev} {ready} {stop}",
                        timeout=300)
        b.wait_for(f"test -e {ready}", timeout=60)
        label = f"wire_{connection.lower()}_{program}_{env_name(env)}"
        run, problems = s.run(program, connection, env, 65536, label=label, iters=ITERS_WIRE)
        b.run(f"touch {stop}")
        out = sniff.wait(60).out
        what = f"{connection.lower()} {program} {env_name(env)} -s 65536"
        if not problems:
            seen = json.loads(out.strip().splitlines()[-1])
            problems = wire_problems(seen, ip, pt.IB_MTU[mtu], opcodes, full,
                                     1 + len(run.remeasured))
        if problems:
            print(f"  FAIL {what}: {problems[0]}", flush=True)
            failures.append(f"{what}: " + "; ".join(problems) + f"\n{out}")
        else:
            print(f"  ok   {what}: {seen['frames']} frames, opcodes "
                  f"{sorted(seen['opcodes'])}, {seen['dropped']} missed by the sniffer",
                  flush=True)
    assert not failures, "\n".join(failures)


def wire_problems(seen, ip, ib_mtu, opcodes, full, runs):
    """runs: how many times perftest moved the messages (a run measured
    again after a failed clock calibration moves them again)."""
    other = "4" if ip == "v6" else "6"
    problems = []
    if not seen["frames"][ip[1]]:
        problems.append(f"no RoCEv2 frames over IPv{ip[1]}")
    if seen["frames"][other]:
        problems.append(f"{seen['frames'][other]} RoCEv2 frames over IPv{other}")
    got = {int(op, 16) for op in seen["opcodes"]}
    if not opcodes <= got:
        problems.append(f"opcodes {sorted(hex(o) for o in got)} lack "
                        f"{sorted(hex(o) for o in opcodes - got)}")
    if not seen["dropped"]:
        # Every message of 64 KiB in ceil(64 KiB / MTU) data packets, each
        # with its own PSN (retransmissions, which TCG's stalls can cause,
        # repeat one), in each of the runs.
        data = sum(o["psns"] for op, o in seen["opcodes"].items()
                   if int(op, 16) in opcodes and int(op, 16) not in (0x0c, 0x11))
        want = runs * ITERS_WIRE * -(-65536 // ib_mtu)
        if data != want:
            problems.append(f"{data} data packets, not {want} ({runs} x {ITERS_WIRE} x "
                            f"64 KiB at path MTU {ib_mtu})")
    for op, o in seen["opcodes"].items():
        sizes = {int(k) for k in o["payloads"]}
        if max(sizes) > ib_mtu:
            problems.append(f"opcode {op}: payload of {max(sizes)} bytes > path MTU {ib_mtu}")
        if int(op, 16) in full and sizes != {ib_mtu}:
            problems.append(f"opcode {op}: payloads {sorted(sizes)}, not all {ib_mtu}")
    return problems


def _make_test(index, program, connection):
    def test(bench):
        run_combo(bench, index, program, connection)
    test.__name__ = f"test_{connection.lower()}_{program[3:]}"
    test.__qualname__ = test.__name__
    test.__doc__ = f"{program} -c {connection} over the environments of the matrix."
    runs = plan(index, program)
    test.TIMEOUT = 120 + sum(ALL_TIMEOUT if size is None else ONE_TIMEOUT
                             for _, size in runs) // (1 if FULL else 3)
    return test


for _i, (_p, _c) in enumerate(COMBOS):
    _t = _make_test(_i, _p, _c)
    globals()[_t.__name__] = _t
del _i, _p, _c, _t
