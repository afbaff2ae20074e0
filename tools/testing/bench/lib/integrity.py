# SPDX-License-Identifier: GPL-2.0
"""sroce-integrity (tools/testing/verbs/integrity.c) between the guests:
the server in one, the client in the other, each bounded by its own -t.
For the tests that run it to completion (test_integrity) and those that
break something while it runs (test_faults)."""
import re

from ..guests import TIME_SCALE
from .perftest import wait_listening

INTEGRITY = "build/tools/sroce-integrity"

# The tool's exit statuses (integrity.c's header comment).
OK, FAILED, TIMED_OUT = 0, 1, 2


def summary(out):
    """The counts of a run's "sroce-integrity: OK" line, as {'write': 24,
    ..., 'bytes': N, 'exact': bool}; None if the run printed none."""
    lines = [line for line in out.splitlines() if line.startswith("sroce-integrity: OK")]
    if not lines:
        return None
    line = lines[-1]
    counts = {k: int(v) for k, v in re.findall(r" ([a-z_]+) (\d+)", line)}
    counts["bytes"] = int(re.search(r"(\d+) bytes verified", line)[1])
    counts["exact"] = "counters exact" in line
    return counts


class Pair:
    """A server started in guest @server and a client in guest @client,
    both in the background: Pair.wait() collects them. @ends are the
    (dev, gid_index) of the client and server sides; @seconds is each
    tool's -t, after which it exits with TIMED_OUT, times SROCE_TIME_SCALE
    (a debug kernel moves the same bytes more slowly)."""

    def __init__(self, client, server, ends, args="", port=18517, seconds=120):
        (dc, gc), (ds, gs) = ends
        seconds = round(seconds * TIME_SCALE)
        common = f"-d {{}} -g {{}} -p {port} -t {seconds}"
        self.seconds = seconds
        self.server = server.spawn(f"exec {INTEGRITY} {common.format(ds, gs)}",
                                   timeout=seconds + 30)
        wait_listening(server, port, self.server, timeout=60)
        self.client = client.spawn(f"exec {INTEGRITY} {common.format(dc, gc)} {args} "
                                   f"{server.ip}", timeout=seconds + 30)

    def running(self, job=None):
        """Whether the client (or job) still runs."""
        try:
            (job or self.client).wait(0, check=False)
        except TimeoutError:
            return True
        return False

    def serving(self):
        """Whether the server still runs: asks the server's guest only."""
        return self.running(self.server)

    def wait(self):
        """Both sides' Results, once each has exited (the tools' own bound
        plus some slack; a job still there then is killed, rc 124)."""
        out = []
        for job in (self.client, self.server):
            try:
                out.append(job.wait(self.seconds + 30, check=False))
            except TimeoutError:
                out.append(job.kill())
        return tuple(out)

    @staticmethod
    def text(cli, srv):
        return (f"client rc={cli.rc}\n{cli.out}{cli.err}"
                f"server rc={srv.rc}\n{srv.out}{srv.err}")
