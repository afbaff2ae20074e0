"""Host-side checks of tools/testing/bench/ab.py: what --runs accepts, and
which of a perftest row's figures a run is judged by.
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_ab.py"""
import unittest

from tools.testing.bench import ab


class Run:
    def __init__(self, rows):
        self.parsed = {"client": {"rows": rows}}


class TestAb(unittest.TestCase):
    def test_runs_parsed(self):
        self.assertEqual(ab.parse_runs("ib_write_bw:64:20000,ib_send_lat:2:100"),
                         [("ib_write_bw", 64, 20000), ("ib_send_lat", 2, 100)])
        self.assertEqual(len(ab.parse_runs(ab.DEFAULT_RUNS)), 5)

    def test_bad_runs_refused(self):
        for bad in ("ib_write_bw:64", "ib_write_bw:x:1", "ib_write_bw:64:1:2", ""):
            with self.assertRaises(SystemExit, msg=bad):
                ab.parse_runs(bad)

    def test_figure_by_program_and_size(self):
        row = {"size": 64, "bw_avg": 1.8, "msg_rate": 0.03, "t_typical": 240.0}
        self.assertEqual(ab.figure("ib_write_bw", Run([row])), 0.03)
        self.assertEqual(ab.figure("ib_write_bw", Run([dict(row, size=65536)])), 1.8)
        self.assertEqual(ab.figure("ib_send_lat", Run([row])), 240.0)
        self.assertIsNone(ab.figure("ib_write_bw", Run([])))


if __name__ == "__main__":
    unittest.main()
