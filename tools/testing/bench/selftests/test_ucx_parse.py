"""Host-side checks of tools/testing/bench/lib/ucx.py's Final-line parser
and judge, on Final lines of ucx_perftest 1.13's shape (the inf one as a
CI run printed it).
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_ucx_parse.py"""
import math
import unittest

from tools.testing.bench.lib import ucx

# rc_v tag_lat 8 B, -n 200 (the figures of docs/ENGINES.md): the overall
# bandwidth of 8-byte messages prints as 0.00 MB/s.
LAT = ("Final:                   200     16568.200 16570.400 16570.400"
       "       0.00       0.00          60          60\n")
# ud_v tag_lat 1 MiB, -n 5: the last report interval held no iteration.
INF = "Final: 5 120220.000 inf 111220.098 0.00 8.99 0 9\n"


class TestFinal(unittest.TestCase):
    def test_columns(self):
        r = ucx.parse(LAT)
        self.assertEqual(r["iters"], 200)
        self.assertEqual(r["lat_overall"], 16570.4)
        self.assertEqual(r["msg_rate_overall"], 60)
        self.assertEqual(r["nonfinite"], [])
        self.assertTrue(ucx.measured(r, 200))

    def test_inf_average_is_reported_and_the_run_still_counts(self):
        r = ucx.parse(INF)
        self.assertIsNotNone(r)
        self.assertTrue(math.isinf(r["lat_avg"]))
        self.assertEqual(r["nonfinite"], ["lat_avg"])
        self.assertEqual((r["lat_overall"], r["bw_overall"], r["msg_rate_overall"]),
                         (111220.098, 8.99, 9))
        self.assertTrue(ucx.measured(r, 5))

    def test_nan_columns(self):
        r = ucx.parse("Final: 5 1.000 -nan 2.000 nan 3.00 0 1\n")
        self.assertEqual(r["nonfinite"], ["lat_avg", "bw_avg"])
        self.assertTrue(ucx.measured(r, 5))

    def test_not_measured(self):
        for line, iters in (("Final: 5 1.0 2.0 inf 0.00 inf 0 0", 5),
                            ("Final: 5 1.0 2.0 nan 0.00 1.00 0 1", 5),
                            ("Final: 5 1.0 2.0 3.0 0.00 1.00 0 0", 5),
                            ("Final: 4 1.0 2.0 3.0 0.00 1.00 1 1", 5)):
            with self.subTest(line=line):
                self.assertFalse(ucx.measured(ucx.parse(line), iters))

    def test_no_final_line(self):
        self.assertIsNone(ucx.parse("[1701] UCX ERROR UD endpoint 0x55 unhandled timeout\n"))


if __name__ == "__main__":
    unittest.main()
