"""Host-side checks of make bench's recovery from a failed run
(tools/testing/bench/perf.py RdmaRound.recover): a run that failed, which
may have wedged the driver or the link, costs its own sample and not the
rest of the driver's round. No guest: the guests, the bench and the
runs are stand-ins. Run:
/usr/bin/python3 -m pytest tools/testing/bench/selftests/test_perf_recover.py"""
import os
import tempfile
import types
import unittest

from tools.testing.bench import perf


class FakeGuest:
    def __init__(self, name):
        self.name, self.commands, self.ip = name, [], "10.0.0.1"
        # What each ping answers, in turn (then: the link works).
        self.link_up = []
        self.proc = types.SimpleNamespace(pid=os.getpid())

    def kmsg(self):
        return [{"text": f"{self.name}: a kernel line"}]

    def run(self, cmd, **_):
        self.commands.append(cmd)
        ok = self.link_up.pop(0) if cmd.startswith("ping") and self.link_up else True
        return types.SimpleNamespace(ok=ok)


class FakeBench:
    def __init__(self, logdir):
        self.a, self.b = FakeGuest("a"), FakeGuest("b")
        self.guests = (self.a, self.b)
        self.logdir, self.reboots, self.resets = logdir, 0, 0

    def reset(self, _guest):
        self.resets += 1

    def reboot(self, guest):
        assert guest is self.a, "rebooting A restarts both guests"
        self.reboots += 1


def problems(why):
    """A run's problems, as lib/perftest.judge() lists them."""
    return [why]


class Round(perf.RdmaRound):
    """RdmaRound with the guests' work replaced: self.script says what each
    run returns (by its program name) and what each probe answers."""

    def __init__(self, bench, script, probes):
        args = perf.parse_args(["--rounds", "1"])
        super().__init__(bench, "rxe", 1500, args, self.record_sample)
        self.script, self.probes = dict(script), list(probes)
        self.done, self.failed = [], []

    def record_sample(self, driver, m, value, error=None, text=None, extra=None):
        if value is None:
            self.failed.append((m["metric"], error))

    def attach(self):
        pass

    def probe(self):
        return self.probes.pop(0) if self.probes else None

    def bw(self, program, size, qps, lossy=False):
        self.done.append((program, lossy))
        return self.script.get(program, [])

    lat = bw


def runs(*programs, lossy=()):
    return ([("bw", p, 65536, 1, 1500, False) for p in programs]
            + [("bw", p, 65536, 1, 1500, True) for p in lossy])


class Recover(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bench = FakeBench(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_failed_run_resets_and_the_round_goes_on(self):
        r = Round(self.bench, {"ib_send_bw": problems("client: killed after its timeout")}, [])
        r.run(runs("ib_write_bw", "ib_send_bw", "ib_read_bw"))
        self.assertEqual([p for p, _ in r.done], ["ib_write_bw", "ib_send_bw", "ib_read_bw"])
        self.assertEqual(self.bench.reboots, 0)
        # setup and teardown reset both guests; the recovery once more.
        self.assertEqual(self.bench.resets, 6)
        with open(os.path.join(self.tmp.name, "perf-rxe-recover.log")) as f:
            self.assertIn("a: a kernel line", f.read())

    def test_a_clean_round_neither_resets_nor_reboots_between_runs(self):
        r = Round(self.bench, {}, [])
        r.run(runs("ib_write_bw", "ib_send_bw"))
        self.assertEqual((self.bench.resets, self.bench.reboots), (4, 0))

    def test_a_dead_link_is_a_failed_run_too(self):
        r = Round(self.bench, {"ib_write_bw": problems("client: error line: Couldn't connect to 10.77.0.2:18626")}, [])
        r.run(runs("ib_write_bw", "ib_read_bw"))
        self.assertEqual(self.bench.resets, 6)

    def test_reset_that_does_not_help_reboots(self):
        # The first probe (start of round) passes, the one after the reset
        # fails, the one after the reboot passes.
        r = Round(self.bench, {"ib_send_bw": problems("client: killed after its timeout")},
                  [None, "probe: hung", None])
        r.run(runs("ib_send_bw", "ib_read_bw"))
        self.assertEqual(self.bench.reboots, 1)
        self.assertEqual([p for p, _ in r.done], ["ib_send_bw", "ib_read_bw"])
        self.assertEqual(r.failed, [])

    def test_what_a_reboot_cannot_save_is_recorded_as_failed(self):
        r = Round(self.bench, {"ib_write_bw": problems("client: killed after its timeout")},
                  [None, "probe: hung", "probe: still hung"])
        r.run(runs("ib_write_bw", "ib_send_bw", lossy=("ib_read_bw",)))
        self.assertEqual([p for p, _ in r.done], ["ib_write_bw"])
        failed = {m for m, _ in r.failed}
        self.assertIn("ib_send_bw 64 KiB", failed)
        self.assertIn("lossy ib_read_bw 64 KiB", failed)
        self.assertTrue(all("after a reboot" not in e and "still hung" in e
                            for _, e in r.failed))

    def test_a_dead_link_at_the_start_of_a_turn_reboots_the_guests(self):
        self.bench.b.link_up = [False]
        r = Round(self.bench, {}, [])
        r.run(runs("ib_write_bw"))
        self.assertEqual(self.bench.reboots, 1)
        self.assertEqual([p for p, _ in r.done], ["ib_write_bw"])
        # Reset before the ping and again after the reboot.
        self.assertEqual(self.bench.resets, 2 + 2 + 2)

    def test_a_live_link_is_not_rebooted(self):
        self.bench.b.link_up = [True]
        Round(self.bench, {}, []).run(runs("ib_write_bw"))
        self.assertEqual(self.bench.reboots, 0)
        self.assertTrue(any(c.startswith("ping") for c in self.bench.b.commands))

    def test_netem_is_put_back_after_a_recovery_under_loss(self):
        r = Round(self.bench, {"ib_write_bw": problems("client: killed after its timeout")}, [])
        r.run(runs(lossy=("ib_write_bw", "ib_read_bw")))
        self.assertEqual([p for p, lossy in r.done if lossy], ["ib_write_bw", "ib_read_bw"])
        adds = [c for c in self.bench.a.commands if c.startswith("tc qdisc replace")]
        self.assertEqual(len(adds), 2)
        self.assertTrue(self.bench.a.commands[-1].startswith("tc qdisc del"))


if __name__ == "__main__":
    unittest.main()
