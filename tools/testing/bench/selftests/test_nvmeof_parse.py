"""Host-side checks of tools/testing/bench/lib/nvmeof.py: fio 3.33's JSON
output, the judge of a run (verification ran over every byte and found
nothing), the link's account of it and the table, on output fio printed:
in guest A over nvme-rdma on sroce and over nvme-tcp (guest-*.json), and
on this host against a file whose block was overwritten before a
verify_only run (host-verify-bad-*.json: with continue_on_error=verify,
and without it, where fio logs a line before its JSON).
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_nvmeof_parse.py"""
import copy
import os
import unittest

from tools.testing.bench.lib import nvmeof

DATA = os.path.join(os.path.dirname(__file__), "fio")


def load(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


class TestParse(unittest.TestCase):
    def test_randread(self):
        jobs = nvmeof.parse(load("guest-sroce-randread_4k.json"))
        self.assertEqual(len(jobs), 1)
        j = jobs[0]
        self.assertEqual((j["jobname"], j["error"], j["total_err"]), ("randread-4k", 0, None))
        self.assertEqual(j["write"]["io_bytes"], 0)
        self.assertGreater(j["read"]["io_bytes"], 0)
        self.assertEqual(j["read"]["io_bytes"] % 4096, 0)
        self.assertAlmostEqual(nvmeof.figure("randread 4k", j), j["read"]["iops"])
        self.assertEqual(nvmeof.problems_of("randread 4k", jobs), [])

    def test_seq_read_bandwidth_in_mb_s(self):
        jobs = nvmeof.parse(load("guest-sroce-read_128k.json"))
        j = jobs[0]
        self.assertEqual(nvmeof.figure("read 128k", j), j["read"]["bw_bytes"] / 1e6)
        self.assertEqual(nvmeof.problems_of("read 128k", jobs), [])

    def test_write_verified(self):
        for name in ("guest-sroce-write_128k.json", "guest-tcp-write_128k.json"):
            jobs = nvmeof.parse(load(name))
            j = jobs[0]
            # 32 MiB written, then all of it read back and checked.
            self.assertEqual(j["write"]["io_bytes"], 32 << 20, name)
            self.assertEqual(j["read"]["io_bytes"], 32 << 20, name)
            self.assertEqual((j["error"], j["total_err"]), (0, 0), name)
            self.assertEqual(nvmeof.problems_of("write 128k", jobs, 32), [], name)
            self.assertEqual(nvmeof.figure("write 128k", j), j["write"]["bw_bytes"] / 1e6)

    def test_no_json(self):
        self.assertIsNone(nvmeof.parse(""))
        self.assertIsNone(nvmeof.parse("fio: failed to open /dev/nvme0n1\n"))
        self.assertEqual(nvmeof.problems_of("read 128k", None), ["no fio JSON output"])


class TestVerifyFailures(unittest.TestCase):
    def test_counted(self):
        """continue_on_error=verify: fio exits 0, the job has error 84
        (EILSEQ) and counts the bad block."""
        jobs = nvmeof.parse(load("host-verify-bad-continue.json"))
        j = jobs[0]
        self.assertEqual((j["error"], j["total_err"]), (84, 1))
        bad = nvmeof.problems_of("write 128k", jobs)
        self.assertIn("1 verify error(s)", bad)
        self.assertTrue(any(b.startswith("job error 84") for b in bad), bad)

    def test_fatal_with_a_line_before(self):
        out = load("host-verify-bad-fatal.json")
        self.assertTrue(out.startswith("fio: pid="))
        jobs = nvmeof.parse(out)
        self.assertEqual(jobs[0]["error"], 84)
        bad = nvmeof.problems_of("write 128k", jobs)
        self.assertIn("no verify error count (run without continue_on_error=verify)", bad)

    def test_good_host_run(self):
        jobs = nvmeof.parse(load("host-write-verify-ok.json"))
        self.assertEqual(nvmeof.problems_of("write 128k", jobs, 8), [])
        self.assertEqual(len(nvmeof.problems_of("write 128k", jobs, 16)), 1)

    def test_verification_must_cover_the_write(self):
        jobs = nvmeof.parse(load("guest-sroce-write_128k.json"))
        short = copy.deepcopy(jobs)
        short[0]["read"]["io_bytes"] = 0  # no verify phase (do_verify=0)
        self.assertEqual(nvmeof.problems_of("write 128k", short),
                         [f"verified 0 B of the {32 << 20} B written"])
        # A read test that wrote is not a read test.
        rw = copy.deepcopy(nvmeof.parse(load("guest-sroce-randread_4k.json")))
        rw[0]["write"]["io_bytes"] = 4096
        self.assertEqual(len(nvmeof.problems_of("randread 4k", rw)), 1)


class TestCommands(unittest.TestCase):
    def test_fio_cmd(self):
        w = nvmeof.fio_cmd("write 128k", size_mib=8)
        for opt in ("--rw=write", "--bs=128k", "--iodepth=16", "--verify=crc32c",
                    "--continue_on_error=verify", "--size=8M", "--direct=1",
                    "--output-format=json", "--filename=/dev/nvme0n1"):
            self.assertIn(opt, w.split())
        self.assertNotIn("--time_based", w)
        r = nvmeof.fio_cmd("randread 4k", seconds=3)
        for opt in ("--rw=randread", "--bs=4k", "--iodepth=16", "--time_based", "--runtime=3"):
            self.assertIn(opt, r.split())
        self.assertNotIn("verify", r)

    def test_snippets_format(self):
        # Every placeholder of the shell snippets is filled.
        up = nvmeof.TARGET_UP.format(nqn="n", trtype="tcp", modopts="", port=4420,
                                     family="ipv4", addr="10.0.0.2", rd_kib=1024)
        self.assertIn("echo tcp > ports/1/addr_trtype", up)
        self.assertIn("modprobe nvmet-tcp", up)
        self.assertIn("transport=rdma,traddr=10.0.0.2,trsvcid=4420,nqn=n",
                      nvmeof.HOST_CONNECT.format(trtype="rdma", addr="10.0.0.2", port=4420,
                                                 nqn="n"))


class TestTraffic(unittest.TestCase):
    def setUp(self):
        self.jobs = nvmeof.parse(load("guest-sroce-write_128k.json"))
        self.n = 32 << 20

    def test_both_ways(self):
        # What guest A's counters moved by in that run (MTU 1024).
        d = {"tx_bytes": 35580308, "rx_bytes": 35549832, "tx_pkts": 34260, "rx_pkts": 34050}
        self.assertEqual(nvmeof.traffic_problems(self.jobs, 1024, d), [])

    def test_not_over_the_device(self):
        d = {"tx_bytes": 35580308, "rx_bytes": 35549832, "tx_pkts": 12, "rx_pkts": 34050}
        bad = nvmeof.traffic_problems(self.jobs, 1024, d)
        self.assertEqual(len(bad), 1)
        self.assertIn("tx packets moved by 12", bad[0])
        # nvme-tcp: no device, the netdev's bytes only.
        tcp = {"tx_bytes": 35192600, "rx_bytes": 35189498}
        self.assertEqual(nvmeof.traffic_problems(self.jobs, 1, tcp, rdma_link=False), [])
        self.assertEqual(len(nvmeof.traffic_problems(
            self.jobs, 1, dict(tcp, rx_bytes=100), rdma_link=False)), 1)


class TestTable(unittest.TestCase):
    def test_medians_and_ratios(self):
        s = {("sroce", "randread 4k"): {0: 600, 1: 650, 2: 700},
             ("rxe", "randread 4k"): {0: 300, 1: 325, 2: 400},
             ("tcp", "randread 4k"): {0: 500, 1: 470, 2: 460},
             ("sroce", "read 128k"): {0: 16.0, 1: 17.0}, ("rxe", "read 128k"): {0: 8.0, 2: 9.0}}
        t = nvmeof.table(s).splitlines()
        self.assertEqual(len(t), 2 + len(nvmeof.TESTS))
        row = t[2].rstrip(" |").split(" | ")
        self.assertEqual(row[2], "650.0 IOPS (600.0-700.0, n=3)")
        # Per round: 2.0, 2.0, 1.75; 1.2, 1.38, 1.52.
        self.assertEqual((row[4], row[6]), ("2.00", "1.38"))
        # Only round 0 has both; no nvme-tcp figure: "-".
        row = t[3].rstrip(" |").split(" | ")
        self.assertEqual(row[2], "16.5 MB/s (16.0-17.0, n=2)")
        self.assertEqual((row[4], row[5], row[6]), ("2.00", "-", "-"))
        self.assertIn("verify=crc32c", t[4])
        self.assertEqual(t[4].count(" - "), 5)

    def test_paired_beats_ratio_of_medians(self):
        # Load falls round by round: each round sroce is twice rxe.
        s = {("sroce", "read 128k"): {0: 2.0, 1: 20.0, 2: 200.0},
             ("rxe", "read 128k"): {0: 1.0, 1: 10.0, 2: 100.0}}
        self.assertEqual(nvmeof.paired_ratio(s, "read 128k", "sroce", "rxe"), 2.0)
        self.assertIsNone(nvmeof.paired_ratio(s, "read 128k", "sroce", "tcp"))


if __name__ == "__main__":
    unittest.main()
