# SPDX-License-Identifier: GPL-2.0
"""The guest tests' fixtures and rules, for pytest.

- `bench`: the two guests (tools/testing/bench/guests.py), booted once
  for the run and stopped at its end; a test marked smp(N) gets a pair
  with N vCPUs per guest instead (one pair is up at a time), SROCE_SMP=N
  gives every test N.
- `_reset_and_gate` (autouse): after every test both guests go back to
  their post-boot state and their new kernel log records pass the gate
  (tools/testing/bench/kmsg_gate.py), kmemleak (on a debug kernel,
  scripts/kernel debug guest) having scanned first; a guest that cannot,
  or whose kernel reported a problem, is rebooted and the test fails with
  the reports. A test that timed out reboots both. A test during which a
  guest's clock leapt ahead of the host's (Guest.clock_jump) and that
  failed is run once more on rebooted guests: its result says nothing
  about sroce. run.log keeps the first run's failure.
- Markers (pytest.ini): sroce(reason) skips under --driver rxe; a test's
  time limit is its own or its module's TIMEOUT (default 300 s), 15
  minutes or more marks it slow; --kernel RELEASE keeps the tests marked
  kernel(RELEASE).

Logs of a run are in build/logs/<timestamp>/: run.log (what the bench
did, each test's result and output), results.json, the guests' console,
kmsg and QEMU logs.
"""
import concurrent.futures
import json
import os
import sys
import time

import pytest
from _pytest.runner import runtestprotocol

from tools.testing.bench.guests import (SMP, TIME_SCALE, TOP, Bench, GuestError,
                                       install_signal_handlers)
from tools.testing.bench.kmsg_gate import format_record, reports
from tools.testing.bench.lib import perftest

DEFAULT_TIMEOUT = 300
SLOW = 900
# Seconds a guest's clock may gain on the host's between two gates before
# the test between them is run again: more than a control message's
# transit under load, less than the guest kernel's stall detectors' 20 s.
CLOCK_JUMP = 15


class Run:
    """This run's log directory, opened when the first guest test runs so
    that collecting or host-only runs leave no directory behind."""

    def __init__(self, config):
        self.config = config
        self.logdir = None
        self.file = None
        # nodeid -> {"result", "seconds", "detail"}, for results.json.
        self.results = {}

    def open(self):
        if self.file is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            self.logdir = os.path.join(TOP, "build", "logs", stamp)
            os.makedirs(self.logdir, exist_ok=True)
            self.file = open(os.path.join(self.logdir, "run.log"), "w")

    def log(self, msg, show=True):
        """To run.log and, past pytest's output capture, to the terminal:
        booting and rebooting guests takes long enough to want to see it."""
        self.open()
        self.file.write(msg + "\n")
        self.file.flush()
        if not show:
            return
        capman = self.config.pluginmanager.getplugin("capturemanager")
        tr = self.config.pluginmanager.getplugin("terminalreporter")
        with capman.global_and_fixture_disabled():
            tr.write_line(msg)

    def close(self):
        if self.file is None:
            return
        if perftest.calibration_summary():
            self.log(perftest.calibration_summary(), show=False)
        with open(os.path.join(self.logdir, "results.json"), "w") as f:
            json.dump({"driver": self.config.getoption("driver"),
                       "results": [dict(name=k, **v) for k, v in self.results.items()]},
                      f, indent=1)
        self.file.close()


REPORTS = pytest.StashKey()
# Why the test's run says nothing (a guest's clock leapt), set by the gate.
VOID = pytest.StashKey()
# This run's Run: hooks such as pytest_runtest_logreport get no config.
_run = None


def pytest_configure(config):
    global _run
    _run = Run(config)


def pytest_unconfigure(config):
    _run.close()


def time_limit(item):
    """The function's TIMEOUT, else its module's, else DEFAULT_TIMEOUT,
    times SROCE_TIME_SCALE."""
    default = getattr(item.module, "TIMEOUT", DEFAULT_TIMEOUT)
    return getattr(item.function, "TIMEOUT", default) * TIME_SCALE


def pytest_collection_modifyitems(config, items):
    want = config.getoption("kernel")
    driver = config.getoption("driver")
    full = config.getoption("full")
    keep, drop = [], []
    for item in items:
        if str(item.path).startswith(os.path.dirname(__file__) + os.sep):
            limit = time_limit(item)
            item.add_marker(pytest.mark.timeout(limit))
            if limit >= SLOW * TIME_SCALE:
                item.add_marker(pytest.mark.slow)
            only = item.get_closest_marker("sroce")
            if only and driver != "sroce":
                # A skip marker: reported at the test, with the reason.
                item.add_marker(pytest.mark.skip(reason=only.args[0]))
        marker = item.get_closest_marker("kernel")
        if want and not (marker and want in marker.args):
            drop.append(item)
        elif item.get_closest_marker("full_only") and not full:
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    # Tests on guests with another vCPU count go last, grouped by count:
    # one pair is up at a time, and each switch costs a boot.
    items.sort(key=lambda item: smp_wanted(item) != SMP and smp_wanted(item))


def smp_wanted(item):
    """vCPUs per guest for @item: its smp(N) marker's (default 2), else
    SROCE_SMP's."""
    marker = item.get_closest_marker("smp")
    if not marker:
        return SMP
    return marker.args[0] if marker.args else 2


def pytest_runtest_protocol(item, nextitem):
    """Runs a guest test; once more when it failed while a guest's clock
    leapt (_reset_and_gate()). Only the last run's reports are counted."""
    if _run is None or not str(item.path).startswith(os.path.dirname(__file__) + os.sep):
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    reports = runtestprotocol(item, nextitem=nextitem, log=False)
    void = item.stash.get(VOID, None)
    if void and any(r.failed for r in reports):
        _run.log(f"RERUN {item.nodeid}: {void}; the failure of its first run:\n" +
                 "\n".join(r.longreprtext for r in reports if r.failed))
        del item.stash[VOID]
        item.stash[REPORTS] = {}
        item._initrequest()
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
    for rep in reports:
        item.ihook.pytest_runtest_logreport(report=rep)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item: the reset after a test needs
    to know whether the test timed out."""
    outcome = yield
    rep = outcome.get_result()
    item.stash.setdefault(REPORTS, {})[rep.when] = rep


def pytest_runtest_logreport(report):
    """Each test's result, its output and why it failed, in run.log."""
    run = _run
    if run.file is None:
        return
    for title, text in report.sections:
        if text.strip() and report.when == "teardown":
            run.log(f"--- {report.nodeid}: {title} ---\n{text.rstrip()}", show=False)
    if report.failed:
        run.log(f"FAIL {report.nodeid} ({report.when}, {report.duration:.0f}s)\n"
                f"{report.longreprtext}", show=False)
    elif report.when == "call" or report.skipped:
        kind = "SKIP" if report.skipped else "PASS"
        why = f": {report.longrepr[2]}" if report.skipped else ""
        run.log(f"{kind} {report.nodeid} ({report.duration:.0f}s){why}", show=False)
    r = run.results.setdefault(report.nodeid, {"result": "pass", "seconds": 0.0, "detail": ""})
    r["seconds"] = round(r["seconds"] + report.duration, 1)
    if report.failed:
        r["result"] = "fail"
        r["detail"] = r["detail"] or report.longreprtext.strip().splitlines()[-1]
    elif report.skipped:
        r["result"], r["detail"] = "skip", report.longrepr[2]


class Pairs:
    """The one pair of guests up at a time (the host has two cores): booted
    for the first test that needs it, and replaced by a pair with another
    vCPU count when a test asks for one (the smp marker), SROCE_SMP's
    otherwise."""

    def __init__(self, request):
        self.request = request
        self.current = None

    def get(self, smp):
        if self.current is not None and self.current.smp == smp:
            return self.current
        self.stop()
        run = _run
        driver = self.request.config.getoption("driver")
        run.open()
        install_signal_handlers()
        run.log(f"driver: {driver}; {smp} vCPU per guest; logs: "
                f"{os.path.relpath(run.logdir, TOP)}")
        b = Bench(driver, logdir=run.logdir, log=run.log, smp=smp)
        try:
            b.start()
        except BaseException:
            for g in b.guests:
                g.kill()
            b.stop()
            raise
        self.current = b
        return b

    def stop(self):
        if self.current is not None:
            self.current.stop()
            self.current = None


@pytest.fixture(scope="session")
def _pairs(request):
    pairs = Pairs(request)
    yield pairs
    if pairs.current is not None and request.config.getoption("keep"):
        capman = request.config.pluginmanager.getplugin("capturemanager")
        with capman.global_and_fixture_disabled():
            shell(pairs.current)
    pairs.stop()


@pytest.fixture
def bench(request, _pairs):
    """The pair of guests (and with every guest test skipped, none is
    booted): one vCPU each, or SROCE_SMP's count for the whole run; a test
    marked smp(N) (default 2) gets a pair with N vCPUs each, which stays up
    for the tests after it that want the same."""
    return _pairs.get(smp_wanted(request.node))


@pytest.fixture(autouse=True)
def _reset_and_gate(request, bench):
    """After the test: both guests reset and their kernel logs gated; a
    guest that is dead, hung or not clean is rebooted, and the test fails."""
    yield
    run = _run
    call = request.node.stash.get(REPORTS, {}).get("call")
    if call is not None and call.failed and "Timeout >" in call.longreprtext:
        # The test's last command may still run in a guest: start afresh.
        for g in bench.guests:
            g.kill()
    problems, dirty = check_guests(bench, run)
    leapt = [p for p in problems if p.startswith("clock of")]
    if leapt:
        request.node.stash[VOID] = leapt[0]
    if problems:
        recover(bench, run, dirty)
        pytest.fail("; ".join(p.splitlines()[0] for p in problems) + "\n" +
                    "\n".join(line for p in problems for line in p.splitlines()[1:]),
                    pytrace=False)


def check_guests(bench, run):
    """Reset both guests (in parallel: each takes seconds under TCG) and
    gate their kernel logs. Returns the list of failure reasons (a
    headline, then the reports) and the guests whose kernels reported."""
    with concurrent.futures.ThreadPoolExecutor(len(bench.guests)) as pool:
        per_guest = list(pool.map(lambda g: check_guest(bench, g, run), bench.guests))
    problems = [p for problems in per_guest for p in problems]
    dirty = {g for g, problems in zip(bench.guests, per_guest)
             if any(p.startswith(("kernel log", "kmemleak", "clock of")) for p in problems)}
    return problems, dirty


def check_guest(bench, g, run):
    problems = []
    try:
        bench.reset(g)
    except GuestError as e:
        return [f"guest {g.name} unusable: {str(e).splitlines()[0]}"]
    except Exception as e:
        problems.append(f"reset of {g.name} failed: {e}")
    try:
        # After the reset: the module is gone, what it leaked is unreferenced.
        leaks = g.kmemleak()
        found = reports(g.kmsg())
    except GuestError as e:
        return problems + [f"guest {g.name} unusable: {str(e).splitlines()[0]}"]
    if g.clock_jump > CLOCK_JUMP:
        problems.append(f"clock of {g.name} leapt {g.clock_jump:.0f} s ahead of the host's "
                        f"during the test (the host's raw TSC, which TCG gives the guest)")
        run.log(f"    [{g.name}] {problems[-1]}")
    if found:
        text = [format_record(g.name, r) for block in found for r in block]
        for line in text:
            run.log("    " + line)
        problems.append(f"kernel log of {g.name}: {len(found)} report(s), "
                        f"first: {found[0][0]['text']}\n" + "\n".join(text))
    if leaks:
        text = [f"[{g.name}] {line}" for leak in leaks for line in leak[:30]]
        for line in text:
            run.log("    " + line)
        problems.append(f"kmemleak in {g.name}: {len(leaks)} leak(s), first: "
                        f"{leaks[0][0]}\n" + "\n".join(text))
    return problems


def recover(bench, run, dirty=()):
    """Reboot every guest that is dead, hung, could not be reset, whose
    kernel reported a problem (lockdep and KASAN report once per boot: the
    next test gets a kernel that still checks), or whose clock leapt."""
    for g in bench.guests:
        if g in dirty:
            run.log(f"    [{g.name}] rebooting after its kernel's report or its clock's leap")
        elif g.alive(timeout=15):
            try:
                bench.reset(g)
                continue
            except Exception as e:
                run.log(f"    [{g.name}] still not clean after the test: "
                        f"{str(e).splitlines()[0]}")
        run.log(f"    [{g.name}] rebooting; console log kept: "
                f"{os.path.relpath(g.console_log, TOP)}")
        bench.reboot(g)
        if g is bench.a:
            break  # rebooting A reboots B as well


def shell(bench):
    """--keep: a line-based prompt into the guests until EOF."""
    if not sys.stdin.isatty():
        print("--keep: stdin is not a terminal (run pytest with -s); stopping the guests")
        return
    print("guests kept up. Type 'a CMD' or 'b CMD' to run CMD in a guest; Ctrl-D ends.")
    while True:
        try:
            line = input("bench> ").strip()
        except EOFError:
            print()
            return
        which, _, cmd = line.partition(" ")
        if which not in ("a", "b") or not cmd:
            print("usage: a CMD | b CMD")
            continue
        try:
            r = getattr(bench, which).run(cmd, timeout=600, check=False)
            sys.stdout.write(r.out + r.err + ("" if r.ok else f"[rc={r.rc}]\n"))
        except GuestError as e:
            print(e)
