#!/usr/bin/python3
"""Run the guest tests on the two-guest bench.

  /usr/bin/python3 scripts/bench/run.py [--driver sroce|rxe] [-k SUBSTR] [--keep] [files...]

Default files: tools/testing/guest/test_*.py. --keep: after the tests, keep
the guests up with a prompt to run commands in them (until Ctrl-D). Each top-level function
test_*(bench) runs in file order; a test skips itself with
`raise bench.Skip("why")`, sets its time limit with a module-level
`TIMEOUT = N` or a `fn.TIMEOUT = N` attribute (default 300 s). After every
test both guests are reset and their new kernel log records gated
(scripts/bench/kmsg_gate.py). Needs scripts/setup and, for sroce, `make`.
"""
import argparse
import concurrent.futures
import glob
import importlib.util
import json
import os
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guests import TOP, Bench, GuestError, Skip, install_signal_handlers  # noqa: E402
from kmsg_gate import format_record, offending  # noqa: E402
from perftest import calibration_summary  # noqa: E402

DEFAULT_TIMEOUT = 300
# Bound on resetting a guest between tests before it is declared hung.
RESET_TIMEOUT = 120


def load_tests(path):
    name = "guesttest_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    default = getattr(mod, "TIMEOUT", DEFAULT_TIMEOUT)
    # Definition order: the module dict keeps insertion order.
    return [(f"{os.path.basename(path)}::{fname}", fn, getattr(fn, "TIMEOUT", default))
            for fname, fn in vars(mod).items()
            if fname.startswith("test_") and callable(fn)
            and getattr(fn, "__module__", None) == mod.__name__]


def call_with_timeout(fn, bench, timeout):
    """Run fn(bench) in a thread; return (status, detail) where status is
    "pass", "fail", "skip" or "timeout"."""
    box = {}

    def target():
        try:
            fn(bench)
            box["status"] = ("pass", "")
        except Skip as e:
            box["status"] = ("skip", str(e))
        except BaseException as e:
            box["status"] = ("fail", f"{type(e).__name__}: {e}",
                             traceback.format_exc())

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        return ("timeout", f"timed out after {timeout}s"), t
    return box["status"], t


class Runner:
    def __init__(self, args):
        self.args = args
        self.driver = args.driver
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.logdir = os.path.join(TOP, "build", "logs", stamp)
        os.makedirs(self.logdir, exist_ok=True)
        self.results = []
        self.log_file = open(os.path.join(self.logdir, "run.log"), "w")

    def log(self, msg):
        print(msg, flush=True)
        self.log_file.write(msg + "\n")
        self.log_file.flush()

    def collect(self):
        tests = []
        files = self.args.files or sorted(glob.glob(
            os.path.join(TOP, "tools", "testing", "guest", "test_*.py")))
        for path in files:
            for name, fn, timeout in load_tests(os.path.abspath(path)):
                if self.args.k is None or self.args.k in name:
                    tests.append((name, fn, timeout))
        return tests

    def check_guests(self, bench):
        """Reset both guests (in parallel: each takes seconds under TCG) and
        gate their kernel logs. Returns the list of failure reasons."""
        with concurrent.futures.ThreadPoolExecutor(len(bench.guests)) as pool:
            per_guest = list(pool.map(lambda g: self.check_guest(bench, g), bench.guests))
        return [p for problems in per_guest for p in problems]

    def check_guest(self, bench, g):
        problems = []
        try:
            bench.reset(g)
        except GuestError as e:
            return [f"guest {g.name} unusable: {str(e).splitlines()[0]}"]
        except Exception as e:
            problems.append(f"reset of {g.name} failed: {e}")
        try:
            bad = offending(g.kmsg())
        except GuestError as e:
            return problems + [f"guest {g.name} unusable: {str(e).splitlines()[0]}"]
        if bad:
            for r in bad:
                self.log("    " + format_record(g.name, r))
            problems.append(f"kernel log of {g.name}: {len(bad)} bad record(s), "
                            f"first: {bad[0]['text']}")
        return problems

    def recover(self, bench):
        """Reboot every guest that is dead, hung or could not be reset."""
        for g in bench.guests:
            if g.alive(timeout=15):
                try:
                    bench.reset(g)
                    continue
                except Exception as e:
                    self.log(f"    [{g.name}] still not clean after the test: "
                             f"{str(e).splitlines()[0]}")
            self.log(f"    [{g.name}] rebooting; console log kept: "
                     f"{os.path.relpath(g.console_log, TOP)}")
            bench.reboot(g)
            if g is bench.a:
                break  # rebooting A reboots B as well

    def run(self):
        tests = self.collect()
        if not tests:
            self.log("no tests selected")
        self.log(f"driver: {self.driver}; logs: {os.path.relpath(self.logdir, TOP)}")
        bench = Bench(self.driver, logdir=self.logdir, log=self.log)
        try:
            bench.start()
            for name, fn, timeout in tests:
                self.run_one(bench, name, fn, timeout)
            if self.args.keep:
                shell(bench)
        except BaseException:
            for g in bench.guests:
                g.kill()
            bench.stop()
            raise
        bench.stop()
        return self.summary()

    def run_one(self, bench, name, fn, timeout):
        t0 = time.monotonic()
        status, thread = call_with_timeout(fn, bench, timeout)
        kind, reason = status[0], status[1]
        if kind == "timeout":
            # The stuck test thread blocks on a guest: killing the guests makes
            # its calls fail so the thread ends.
            for g in bench.guests:
                g.kill()
            thread.join(30)
        if kind == "fail":
            self.log_file.write(status[2])
        problems = self.check_guests(bench)
        dt = time.monotonic() - t0
        if kind == "skip" and not problems:
            line = f"SKIP {name}: {reason}"
            result = "skip"
        elif kind == "pass" and not problems:
            line = f"PASS {name} ({dt:.0f}s)"
            result = "pass"
        else:
            reasons = ([reason] if kind in ("fail", "timeout") else []) + problems
            line = f"FAIL {name} ({dt:.0f}s): " + "; ".join(r.splitlines()[0] for r in reasons)
            result = "fail"
            if kind == "fail":
                print(status[2], file=sys.stderr, flush=True)
        self.log(line)
        self.results.append({"name": name, "result": result, "seconds": round(dt, 1),
                             "detail": reason if kind != "pass" else "", "problems": problems})
        if problems:
            self.recover(bench)

    def summary(self):
        counts = {k: sum(r["result"] == k for r in self.results) for k in ("pass", "fail", "skip")}
        with open(os.path.join(self.logdir, "results.json"), "w") as f:
            json.dump({"driver": self.driver, "results": self.results}, f, indent=1)
        # Never silent: how often perftest's clock had to be calibrated again.
        if calibration_summary():
            self.log(calibration_summary())
        line = f"{counts['pass']} passed, {counts['fail']} failed"
        if counts["skip"]:
            line += f", {counts['skip']} skipped"
        self.log(line)
        return 0 if counts["fail"] == 0 else 1


def shell(bench):
    """--keep: a line-based prompt into the guests until EOF."""
    if not sys.stdin.isatty():
        print("--keep: stdin is not a terminal; stopping the guests")
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", choices=("sroce", "rxe"),
                    default=os.environ.get("DRIVER", "sroce"))
    ap.add_argument("-k", help="run only tests whose name contains this substring")
    ap.add_argument("--keep", action="store_true",
                    help="after the tests, keep the guests up with a prompt to run commands in them")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    install_signal_handlers()
    runner = Runner(args)
    try:
        return runner.run()
    except (KeyboardInterrupt, SystemExit):
        runner.log("interrupted")
        runner.summary()
        return 130
    except GuestError as e:
        runner.log(f"bench error: {e}")
        runner.summary()
        return 1


if __name__ == "__main__":
    sys.exit(main())
