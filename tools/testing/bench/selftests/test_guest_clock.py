"""Host-side unit tests of how a guest's clock is watched
(Guest._look_at_clock(), and the gate's CLOCK_JUMP in
tools/testing/guest/conftest.py): /usr/bin/python3 -m pytest tools/testing/bench"""
import time
import unittest

from tools.testing.bench.guests import Guest


class ClockTest(unittest.TestCase):
    def setUp(self):
        self.g = Guest("a", 1, "/nonexistent", "/nonexistent", "/nonexistent/link", True)
        # The agent's hello: the guest booted 20 s ago by its clock.
        self.g._dispatch({"hello": "sroce-agent", "uptime": 20.0})

    def look(self, leapt=0.0, transit=0.0):
        """A look at the guest's clock, @leapt s ahead of where the host's
        time puts it, its reply @transit s on the way."""
        uptime = time.monotonic() - self.g._clock_zero + leapt - transit
        self.g._look_at_clock(uptime)
        return self.g.clock_jump

    def test_steady(self):
        self.assertLess(abs(self.look()), 1)
        self.assertLess(abs(self.look()), 1)

    def test_leap_is_seen_once(self):
        self.assertGreater(self.look(leapt=3600), 3599)
        # From there on the guest's clock runs as the host's again.
        self.assertLess(abs(self.look(leapt=3600)), 1)

    def test_slow_reply_is_no_leap(self):
        # A reply late by seconds makes the guest look behind, and the
        # next, prompt one looks ahead by no more than that delay.
        self.assertLess(self.look(transit=5), 0)
        self.assertLess(self.look(), 6)

    def test_reboot_starts_afresh(self):
        self.look(leapt=3600)
        self.g._hello.clear()
        self.g._dispatch({"hello": "sroce-agent", "uptime": 1.0})
        self.assertLess(abs(self.look()), 1)


if __name__ == "__main__":
    unittest.main()
