"""Host-side checks of tools/testing/bench/lib/fabric.py: fi_pingpong
1.17's result row, fi_info's listing, the judge and ofi_rxm's CQ size,
on output the guests printed.
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_fabric_parse.py"""
import unittest

from tools.testing.bench.guests import Result
from tools.testing.bench.lib import fabric

HEAD = "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n"
SMALL = HEAD + "64      200     =200     25k         1.03s      0.02    2568.36       0.00\n"
LARGE = HEAD + "64k     50      =50      6.2m        0.88s      7.48    8759.66       0.00\n"

FI_INFO = """provider: verbs
    fabric: IB-0xfe80000000000000
    domain: sroce0
    version: 117.0
    type: FI_EP_MSG
    protocol: FI_PROTO_RDMA_CM_IB_RC
provider: verbs
    fabric: IB-0xfe80000000000000
    domain: sroce0-dgram
    version: 117.0
    type: FI_EP_DGRAM
    protocol: FI_PROTO_IB_UD
provider: verbs;ofi_rxm
    fabric: IB-0xfe80000000000000
    domain: sroce0
    version: 117.0
    type: FI_EP_RDM
    protocol: FI_PROTO_RXM
"""


class TestRow(unittest.TestCase):
    def test_small(self):
        r = fabric.parse(SMALL)
        self.assertEqual((r["size"], r["iters"], r["acked"]), (64, 200, 200))
        self.assertEqual((r["usec"], r["mb_s"], r["seconds"]), (2568.36, 0.02, 1.03))
        self.assertEqual(fabric.problems_of(r, 64, 200), [])

    def test_size_suffix(self):
        r = fabric.parse(LARGE)
        self.assertEqual(r["size"], 65536)
        self.assertEqual(fabric.problems_of(r, 65536, 50), [])

    def test_judge(self):
        self.assertEqual(fabric.problems_of(None, 64, 10), ["no result row"])
        self.assertTrue(fabric.problems_of(fabric.parse(SMALL), 64, 100))
        self.assertIsNone(fabric.parse(HEAD + "[error] util/pingpong.c:568 : ctrl/read\n"))


class TestInfo(unittest.TestCase):
    def test_domains(self):
        self.assertEqual(fabric.domains(FI_INFO), {
            ("verbs", "sroce0", "FI_EP_MSG"),
            ("verbs", "sroce0-dgram", "FI_EP_DGRAM"),
            ("verbs;ofi_rxm", "sroce0", "FI_EP_RDM")})


class TestRxm(unittest.TestCase):
    def test_env_by_max_cqe(self):
        # What the guests showed: 256 x 255 fits 65535, 256 x 127 fits 32767.
        self.assertEqual(fabric.rxm_env(65535), "FI_UNIVERSE_SIZE=255")
        self.assertEqual(fabric.rxm_env(32767), "FI_UNIVERSE_SIZE=127")
        self.assertEqual(fabric.rxm_env(65536), "")
        self.assertEqual(fabric.rxm_env(262144), "")


class TestTraffic(unittest.TestCase):
    def test_both_ways(self):
        ok = {"tx_pkts": 10, "rx_pkts": 10, "tx_bytes": 0, "rx_bytes": 0}
        self.assertEqual(fabric.traffic_problems(64, 10, 1024, ok, ok), [])
        short = dict(ok, rx_pkts=9)
        self.assertEqual(len(fabric.traffic_problems(64, 10, 1024, ok, short)), 1)
        # 4 KiB at MTU 1024: four packets a message.
        self.assertEqual(len(fabric.traffic_problems(4096, 10, 1024, ok, ok)), 4)


class TestClosingRace(unittest.TestCase):
    # A server's output when its peer's disconnect beat its fin's completion.
    ROW = "64k     10      =10      1.2m        0.38s      3.41   19192.25       0.00\n"
    LOST = "[error] util/pingpong.c:1119: cq_readerr: Work Request Flushed Error\n"

    def result(self, rc, out, err=""):
        return Result("fi_pingpong", rc, out, err, 1.0)

    def test_lost_after_a_complete_row(self):
        self.assertTrue(fabric.closing_race(self.result(125, HEAD + self.ROW, self.LOST)))
        self.assertTrue(fabric.closing_race(self.result(125, HEAD + self.ROW + self.LOST)))

    def test_anything_else_fails(self):
        # No row: the flush came before the measurement ended.
        self.assertFalse(fabric.closing_race(self.result(125, HEAD, self.LOST)))
        # Another status, or another error besides.
        self.assertFalse(fabric.closing_race(self.result(1, HEAD + self.ROW, self.LOST)))
        other = "[error] util/pingpong.c:1114: cq_readerr: Remote Access Error\n"
        self.assertFalse(fabric.closing_race(self.result(125, HEAD + self.ROW,
                                                         other + self.LOST)))
        self.assertFalse(fabric.closing_race(self.result(0, HEAD + self.ROW)))
        self.assertFalse(fabric.closing_race(None))
