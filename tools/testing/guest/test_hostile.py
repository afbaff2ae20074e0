# SPDX-License-Identifier: GPL-2.0
"""A hostile local process (sroce-hostile, tools/testing/verbs/hostile.c)
in guest A, on guests with two vCPUs each so that its threads, the
requester, the responder and the completer really run at once:

- scribble: garbage in the rings it shares with the kernel while it
  posts, polls and rings the doorbell;
- bindinval: memory window bind / local invalidate pairs from two
  threads on one UC QP aimed at itself (issue 13, finding 1), while the
  guest must keep answering shell commands; bindring: the same written
  straight into the send rings, faster than libsroce posts;
- destroyrace: MRs, QPs and CQs destroyed under traffic;
- fork: fork() with registered memory, the child writing over it;
- kill: kill -9 in the middle of a transfer.

Every mode must end with errors for that process only: the tool exits 0
(its own checks: data where it must be), the guest's kernel log has no
report (the bench's kmsg gate fails the test on any WARN, BUG, lockup or
RCU stall), every object is released once the process is gone (`rdma
resource` counts back to where they were) and the device then carries
ibv_rc_pingpong -c to guest B.

make check runs each mode for a second (test_hostile: about 50 s on a
busy host); `make hostile-full` runs them for a minute each and ten kills
(the tests marked full_only, --full: about 10 minutes). Under --driver rxe
they are skipped: scribble writes over libsroce's rings.
"""
import time

import pytest

from tools.testing.bench.guests import TIME_SCALE
from tools.testing.bench.lib.pingpong import pingpong
from tools.testing.bench.lib.rdma import res_counts

pytestmark = pytest.mark.smp(2)

TIMEOUT = 300
TOOL = "build/tools/sroce-hostile"
SHORT = 1           # seconds per mode in make check
LONG = 60           # and in make hostile-full
# How long the guest may take to answer `true` while the flood runs: far
# above what it takes (tenths of a second), far below a soft lockup's
# 20 s, which a CPU stuck in the requester's loop would show. A debug
# kernel (SROCE_TIME_SCALE) is slower at everything.
ANSWER_BOUND = 10 * TIME_SCALE


def counts_back(a, dev, start):
    """Every object of the gone process is released."""
    deadline = time.monotonic() + 30
    while (end := res_counts(a, dev)) != start and time.monotonic() < deadline:
        time.sleep(0.2)
    assert end == start, f"resources {end}, at start {start}"


def run_mode(a, dev, idx, mode, seconds):
    """One mode to its end, on A: its summary line."""
    t = time.monotonic()
    r = a.run(f"{TOOL} {mode} -d {dev} -g {idx} -s {seconds}",
              timeout=seconds + 120, check=False)
    print(r.out.strip(), f"({time.monotonic() - t:.1f} s)")
    assert r.rc == 0, f"rc={r.rc}\n{r.out}{r.err}"
    summary = r.out.strip().splitlines()[-1]
    assert summary.startswith(f"sroce-hostile: {mode} OK"), r.out
    if mode == "scribble":
        assert " rounds 0 " not in summary and " scribbles 0 " not in summary
    if mode == "fork":
        assert "wrong data 0" in summary, summary
    return summary


def flood(a, dev, idx, mode, seconds):
    """A bind/invalidate flood in the background; A answers `true`
    meanwhile."""
    job = a.spawn(f"exec {TOOL} {mode} -d {dev} -g {idx} -s {seconds}",
                  timeout=seconds + 120)
    answers = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        r = a.run("true", timeout=ANSWER_BOUND / TIME_SCALE + 30)
        answers.append(r.t)
    res = job.wait(check=False)
    print(res.out.strip())
    print(f"  {len(answers)} shell answers during the flood, slowest "
          f"{max(answers):.2f} s")
    assert res.rc == 0, f"rc={res.rc}\n{res.out}{res.err}"
    assert f"{mode} OK: pairs " in res.out, res.out
    assert " pairs 0 " not in res.out, res.out
    assert max(answers) < ANSWER_BOUND, answers


def kill(a, dev, idx, kills):
    """kill -9 at a few points of a transfer."""
    ready = "/tmp/hostile.ready"
    for n in range(kills):
        t = time.monotonic()
        a.run(f"rm -f {ready}")
        job = a.spawn(f"exec {TOOL} kill -d {dev} -g {idx} -s 0 -r {ready}",
                      timeout=120)
        a.wait_for(f"test -s {ready}", timeout=60, interval=0.1)
        t1 = time.monotonic()
        # The later the kill, the more requests are done and in flight.
        a.run(f"sleep {n % 10 / 10}; kill -9 $(cat {ready})")
        res = job.wait(check=False)
        assert res.rc in (137, -9), f"rc={res.rc}\n{res.out}{res.err}"
        print(f"  kill {n}: ready after {t1 - t:.1f} s, gone after "
              f"{time.monotonic() - t1:.1f} s")


def hostile(bench, modes, seconds, kills=0, record=None):
    """@modes in turn on A, each leaving the resources as they were; then
    the device carries traffic to B. record: pytest's record_property, for
    make hardening's table (tools/testing/bench/lib/hardening.py)."""
    a = bench.a
    dev = bench.attach(a)
    idx = a.gid_index(dev)
    start = res_counts(a, dev)
    for mode in modes:
        if mode.startswith("bind"):
            flood(a, dev, idx, mode, seconds)
        else:
            run_mode(a, dev, idx, mode, seconds)
        counts_back(a, dev, start)
    if kills:
        kill(a, dev, idx, kills)
        counts_back(a, dev, start)
    pingpong(bench, "ibv_rc_pingpong", [("v4", 65536)],
             dev={a.name: dev, bench.b.name: bench.attach(bench.b)})
    if record:
        record("hostile", len(modes) + kills)


MODES = ["scribble", "bindinval", "bindring", "destroyrace", "fork"]


@pytest.mark.sroce("writes over libsroce's rings")
def test_hostile(bench, record_property):
    """Every mode for SHORT seconds, then one kill."""
    hostile(bench, MODES, SHORT, kills=1, record=record_property)


@pytest.mark.full_only
@pytest.mark.sroce("writes over libsroce's rings")
@pytest.mark.parametrize("mode", MODES)
def test_hostile_long(bench, mode, record_property):
    hostile(bench, [mode], LONG, record=record_property)


@pytest.mark.full_only
def test_hostile_kills(bench, record_property):
    hostile(bench, [], 0, kills=10, record=record_property)
