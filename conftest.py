# SPDX-License-Identifier: GPL-2.0
"""What every test run shares, guest tests and host self-tests alike: the
bench's command-line options, and the end of the run: the tables tests
filled in (lib/report.py), how often perftest's clock calibration failed
(lib/perftest.py), and one plain "N passed, N failed" line, the line
scripts/check counts.

It sits at the repo top so that pytest finds it before it collects (for
its options), whatever paths it is given. The guest pair, the reset and
the kernel log gate are in tools/testing/guest/conftest.py.
"""
import os

from tools.testing.bench.lib import perftest, report


def pytest_addoption(parser):
    g = parser.getgroup("sroce bench")
    g.addoption("--driver", choices=("sroce", "rxe"),
                default=os.environ.get("DRIVER") or "sroce",
                help="the driver the guest tests attach (default: $DRIVER or sroce)")
    g.addoption("--keep", action="store_true",
                help="after the tests, keep the guests up with a prompt to run "
                     "commands in them (until Ctrl-D); needs -s")
    g.addoption("--kernel", metavar="RELEASE",
                help="run only the tests marked kernel(RELEASE), e.g. 6.12: the part "
                     "of the guest tests make check runs on that kernel")
    g.addoption("--full", action="store_true",
                help="also run the tests marked full_only, too long for make "
                     "check (make engines-full)")


# nodeid -> "passed", "failed" or "skipped": one outcome per test, whichever
# phase decided it (a test that passes and then fails the kernel log gate
# in its teardown is one failed test, not a pass and an error).
_outcomes = {}


def pytest_runtest_logreport(report):
    if report.failed:
        _outcomes[report.nodeid] = "failed"
    elif report.skipped:
        _outcomes.setdefault(report.nodeid, "skipped")
    elif report.when == "call":
        _outcomes.setdefault(report.nodeid, "passed")


def counts():
    """(passed, failed, skipped) over the tests that ran."""
    values = list(_outcomes.values())
    return tuple(values.count(k) for k in ("passed", "failed", "skipped"))


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    for title in report.TABLES:
        tr.section(title)
        for line in report.lines(title):
            tr.write_line(line)
    if not _outcomes:
        return
    tr.write_sep("-", "counted")
    # Never silent: how often perftest's clock had to be calibrated again.
    if perftest.calibration_summary():
        tr.write_line(perftest.calibration_summary())
    passed, failed, skipped = counts()
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    # Alone on its line: scripts/check's `counted` looks for ^N passed, N failed.
    tr.write_line(line)
