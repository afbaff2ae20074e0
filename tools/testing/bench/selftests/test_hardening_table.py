"""Host-side checks of tools/testing/bench/lib/hardening.py on JUnit XML
as pytest writes it.
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_hardening_table.py"""
import unittest

from tools.testing.bench.lib import hardening

XML = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tools.testing.guest.test_fuzz" name="test_hostile_transport" time="52">
<properties><property name="frames" value="8450"/><property name="bytes_verified" value="392157"/>
</properties></testcase>
<testcase classname="tools.testing.guest.test_faults" name="test_fault_under_traffic[a]" time="13">
<properties><property name="faults" value="1"/><property name="bytes_verified" value="100"/>
</properties></testcase>
<testcase classname="tools.testing.guest.test_faults" name="test_fault_under_traffic[b]" time="13">
<properties><property name="faults" value="1"/></properties>
<error message="failed on teardown with &quot;Failed: kernel log of b: 1 report(s), first: BUG&quot;">
kernel log of b: 1 report(s)</error></testcase>
<testcase classname="tools.testing.guest.test_faults" name="test_peer_guest_killed" time="1">
<skipped message="rxe"/></testcase>
<testcase classname="tools.testing.guest.test_hostile" name="test_hostile" time="60">
<properties><property name="hostile" value="6"/></properties>
<failure message="AssertionError: rdma resource: 1 -> 2">x</failure></testcase>
</testsuite></testsuites>"""


class TableTest(unittest.TestCase):
    def test_sums_per_file(self):
        rows = hardening.collect(XML)
        self.assertEqual(rows["test_fuzz"]["frames"], 8450)
        faults = rows["test_faults"]
        self.assertEqual((faults["tests"], faults["passed"], faults["failed"],
                          faults["skipped"]), (3, 1, 1, 1))
        self.assertEqual(faults["faults"], 2)
        self.assertEqual(faults["kernel reports"], 1)
        self.assertEqual(rows["test_hostile"]["leaks"], 1)
        self.assertEqual(rows["test_hostile"]["hostile"], 6)

    def test_total_row(self):
        text = hardening.table(hardening.collect(XML))
        total = text.splitlines()[-1].split(" | ")
        self.assertEqual(total[0], "| total")
        # tests, passed, failed, skipped, frames, faults, hostile, bytes, reports, leaks
        self.assertEqual(total[1:], ["5", "2", "2", "1", "8450", "2", "6", "392257", "1",
                                     "1 |"])
