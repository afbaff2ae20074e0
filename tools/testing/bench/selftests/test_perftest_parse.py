"""Host-side checks of tools/testing/bench/lib/perftest.py's parsers, on output
perftest 4.5 and ibv_rc_pingpong printed in the guests (trimmed).
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_perftest_parse.py"""
import ipaddress
import unittest

from tools.testing.bench.lib import perftest as pt

HEAD = """\
---------------------------------------------------------------------------------------
                    Send BW Test
 Dual-port       : OFF\t\tDevice         : rxe0
 Number of qps   : 1\t\tTransport type : IB
 Connection type : {conn}\t\tUsing SRQ      : OFF
 PCIe relax order: ON
 ibv_wr* API     : OFF
 TX depth        : 5
 CQ Moderation   : 5
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 2
 Max inline data : 0[B]
 rdma_cm QPs\t : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x001a PSN 0x28c39f
 GID: 253:119:00:00:00:00:00:00:00:00:00:00:00:00:00:01
 remote address: LID 0000 QPN 0x0014 PSN 0x9e99c7
 GID: 253:119:00:00:00:00:00:00:00:00:00:00:00:00:00:02
---------------------------------------------------------------------------------------
"""
BW_TABLE = """\
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 2          5                0.00               0.00   \t\t   0.000229
 4          5                0.00               0.00   \t\t   0.000396
 8388608    5                3.17               3.17   \t\t   0.000000
---------------------------------------------------------------------------------------
"""
ZERO_TABLE = """\
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 2          5                0.00               0.00   \t\t   0.000000
 4          5                0.00               0.00   \t\t   0.000000
 8388608    5                0.00               0.00   \t\t   0.000000
---------------------------------------------------------------------------------------
"""
LAT_TABLE = """\
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n\
 2       5          2257.68        2666.13      2405.29  \t       2405.29     \t147.00 \t\t2666.13 \t\t2666.13
 8388608 5          334735.88        443842.00      382831.16  \t       382831.16     \t-nan   \t\t443842.00 \t\t443842.00
---------------------------------------------------------------------------------------
"""
V4_GIDS = """\
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:00:01
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:00:02
"""
PINGPONG = """\
  local address:  LID 0x0000, QPN 0x000019, PSN 0x25aef1, GID ::ffff:10.77.0.1
  remote address: LID 0x0000, QPN 0x000017, PSN 0xf4db0c, GID ::ffff:10.77.0.2
10000000 bytes in 1.48 seconds = 53.93 Mbit/sec
5 iters in 1.48 seconds = 296660.19 usec/iter
"""
SIZES = [2, 4, 8388608]


class Perftest(unittest.TestCase):
    def test_bw_table(self):
        p = pt.parse(HEAD.format(conn="UC") + BW_TABLE)
        self.assertEqual(p["header"], {"connection": "UC", "mtu": 1024, "gid_index": 2,
                                       "device": "rxe0"})
        self.assertEqual(p["gids"], [ipaddress.ip_address("fd77::1"),
                                     ipaddress.ip_address("fd77::2")])
        self.assertEqual([r["size"] for r in p["rows"]], SIZES)
        self.assertEqual(p["rows"][0]["msg_rate"], 0.000229)
        self.assertEqual(p["errors"], [])
        # 0.00 MB/s with a message rate, or 0.000000 Mpps with a bandwidth: fine.
        self.assertEqual(pt.check("ib_send_bw", p, SIZES, 5, "UC", 1024,
                                  ("fd77::1", "fd77::2")), [])

    def test_expectations(self):
        p = pt.parse(HEAD.format(conn="RC") + BW_TABLE)
        problems = pt.check("ib_send_bw", p, SIZES + [16], 10, "UC", 4096,
                            ("10.77.0.1", "10.77.0.2"))
        self.assertEqual(len(problems), 1 + 3 + 3, problems)
        self.assertIn("missing [16]", problems[0])

    def test_all_zero_with_exit_0(self):
        out = "Correlation coefficient r^2: 0.52 < 0.9\n" + HEAD.format(conn="RC") + ZERO_TABLE
        p = pt.parse(out)
        self.assertTrue(pt.CALIBRATION_RE.search(out))
        problems = pt.check("ib_write_bw", p, SIZES)
        self.assertEqual(len(problems), 4, problems)
        self.assertIn("error line: Correlation coefficient", problems[0])
        self.assertIn("zero bandwidth and message rate", problems[1])

    def test_lat_table(self):
        p = pt.parse(HEAD.format(conn="RC") + LAT_TABLE)
        self.assertEqual([r["size"] for r in p["rows"]], [2, 8388608])
        self.assertEqual(p["rows"][0]["t_typical"], 2405.29)
        self.assertEqual(pt.check("ib_send_lat", p, [2, 8388608], 5), [])
        zero = LAT_TABLE.replace("2405.29", "0.00")
        self.assertEqual(len(pt.check("ib_send_lat", pt.parse(zero), [2, 8388608])), 1)

    def test_missing_table_and_errors(self):
        out = ("Couldn't connect to 10.77.0.2:18515\n"
               "Unable to open file descriptor for socket connection\n"
               "Device not recognized to implement inline feature. Disabling it\n")
        p = pt.parse(out)
        self.assertEqual(len(p["errors"]), 2, p["errors"])
        self.assertEqual(len(pt.check("ib_read_bw", p, SIZES)), 3)

    def test_v4_gids(self):
        p = pt.parse(V4_GIDS)
        self.assertEqual(p["gids"], [ipaddress.ip_address("10.77.0.1"),
                                     ipaddress.ip_address("10.77.0.2")])

    def test_commands(self):
        srv, cli = pt.perftest_cmds("ib_write_bw", "rxe0", 1, 18600, "10.77.0.2",
                                    connection="UC", mtu=1024, iters=5)
        self.assertEqual(srv, "ib_write_bw -d rxe0 -x 1 -F -p 18600 -c UC -m 1024 -n 5 -a")
        self.assertEqual(cli, srv + " 10.77.0.2")
        srv, _ = pt.perftest_cmds("ib_atomic_lat", "rxe0", 1, 18600, "x", size=64,
                                  extra="-A CMP_AND_SWAP")
        self.assertEqual(srv, "ib_atomic_lat -d rxe0 -x 1 -F -p 18600 -A CMP_AND_SWAP")


class FakeGuest:
    """Just enough of guests.Guest for run_perftest: the server job's and the
    client's outputs come from a script, one (server, client) pair a run."""

    name = "fake"

    def __init__(self, script):
        self.script, self.cmds = script, []

    def spawn(self, cmd, timeout):
        self.cmds.append(cmd)
        out = self.script[0][0]
        return type("Job", (), {"cmd": cmd, "wait": lambda job, t=0, check=True:
                                Result(cmd, 0, out, "", 1.0)})()

    def run(self, cmd, timeout=60, check=True):
        if cmd.startswith("for i in"):  # the readiness poll
            return Result(cmd, 0, "", "", 0.1)
        self.cmds.append(cmd)
        srv, cli = self.script.pop(0)
        return Result(cmd, 0, cli, "", 1.0)


class Result:
    def __init__(self, cmd, rc, out, err, t):
        self.cmd, self.rc, self.out, self.err, self.t = cmd, rc, out, err, t
        self.ok = rc == 0


CALIBRATION = "Correlation coefficient r^2: 0.863191 < 0.9\n"
ONE_ROW = """\
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 4          5                0.00               0.02   \t\t   0.000500
---------------------------------------------------------------------------------------
"""


class Remeasure(unittest.TestCase):
    """A row a failed clock calibration left empty is measured again alone."""

    def setUp(self):
        pt.CALIBRATION.clear()

    def tearDown(self):
        # The tally is the run's: pytest prints it at the end of the run.
        pt.CALIBRATION.clear()

    def run_with(self, script, retries=pt.CALIBRATION_RETRIES):
        g = FakeGuest(script)
        run = pt.run_perftest(g, g, "ib_send_bw", "sroce0", 1, "10.77.0.1", iters=5,
                              connection="UC", mtu=1024, calibration_retries=retries)
        return g, run, pt.judge(run, "ib_send_bw", SIZES, 5, "UC", 1024)

    def test_void_row_measured_again(self):
        good = HEAD.format(conn="UC") + BW_TABLE
        void = good.replace(" 4          5                0.00               0.00   \t\t   0.000396",
                            " 4          5                0.00               0.00   \t\t   0.000000")
        again = HEAD.format(conn="UC") + ONE_ROW
        g, run, problems = self.run_with([(good, void + CALIBRATION),
                                          (again, again + CALIBRATION), (again, again)])
        self.assertEqual(problems, [])
        self.assertEqual([c.split()[-2:] for c in g.cmds[2::2]], [["-s", "4"]] * 2)
        self.assertEqual([size for size, _ in run.remeasured], [4, 4])
        self.assertEqual(run.parsed["client"]["rows"][1]["msg_rate"], 0.0005)
        self.assertEqual(dict(pt.CALIBRATION), {"runs": 1, "failed": 1, "remeasured": 2})
        self.assertIn("sizes measured again 2 times, 0 left", pt.calibration_summary())

    def test_bounded_and_reported(self):
        good = HEAD.format(conn="UC") + BW_TABLE
        zero = HEAD.format(conn="UC") + ZERO_TABLE
        void_one = HEAD.format(conn="UC") + ONE_ROW.replace("0.02", "0.00").replace(
            "0.000500", "0.000000")
        g, run, problems = self.run_with([(good, zero + CALIBRATION)]
                                         + [(void_one, void_one + CALIBRATION)] * 6, 2)
        self.assertEqual(len(run.remeasured), 6)  # 3 sizes, 2 tries each
        self.assertTrue(any("Correlation" in p for p in problems), problems)
        self.assertEqual(pt.CALIBRATION["unresolved"], 1)

    def test_other_failures_not_measured_away(self):
        good = HEAD.format(conn="UC") + BW_TABLE
        g, run, problems = self.run_with([(good, HEAD.format(conn="UC") + CALIBRATION)])
        self.assertEqual(run.remeasured, [])
        self.assertTrue(problems)


class Pingpong(unittest.TestCase):
    def test_good(self):
        p = pt.parse_pingpong(PINGPONG)
        self.assertEqual(p["bytes"], 10000000)
        self.assertEqual(p["iters"], 5)
        self.assertEqual(pt.check_pingpong(p, 1000000, 5, ("10.77.0.1", "10.77.0.2"),
                                           "client"), [])

    def test_bad(self):
        p = pt.parse_pingpong(PINGPONG + "invalid data in page 3\n")
        problems = pt.check_pingpong(p, 100, 5, ("10.77.0.2", "10.77.0.1"), "server")
        self.assertEqual(len(problems), 3, problems)
        self.assertEqual(problems[0], "server: invalid data in page 3")


if __name__ == "__main__":
    unittest.main()
