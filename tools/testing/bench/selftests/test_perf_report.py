"""Host-side checks of `make bench`'s plan, table, ratios and plots
(tools/testing/bench/perf.py, lib/benchplot.py) on made-up samples: no
guest. Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_perf_report.py"""
import os
import tempfile
import unittest

from tools.testing.bench import perf


def sample(driver, m, value, rnd=1, loaded=False, error=None, counters=None):
    return {"round": rnd, "driver": driver, "metric": m["metric"], "value": value,
            "error": error, "loaded": loaded, "counters": counters}


class Plan(unittest.TestCase):
    def test_default(self):
        args = perf.parse_args([])
        rdma, tcp, metrics = perf.plan(args)
        self.assertEqual(args.entities, ["rxe", "sroce", "tcp"])
        bw = [r for r in rdma if r[0] == "bw"]
        # 4 sizes x 3 programs with 1 QP, 64 KiB x 3 with 4 QPs; no lossy row
        self.assertEqual(len(bw), 15)
        self.assertEqual({r[3] for r in bw if r[2] != 65536}, {1})
        self.assertEqual(len([r for r in rdma if r[0] == "lat"]), 6)
        self.assertEqual([t[0] for t in tcp], ["tcp", "tcp eq-payload", "tcp -P 4"])
        names = [m["metric"] for m in metrics]
        self.assertEqual(len(names), len(set(names)))
        for n in ("ib_send_bw 64 B Mpps", "ib_write_bw 64 KiB q4", "ib_read_bw 1 MiB CPU",
                  "ib_read_lat 4 KiB p99", "ib_send_lat 2 B max", "tcp eq-payload CPU"):
            self.assertIn(n, names)
        self.assertFalse([n for n in names if "lossy" in n or "mtu9000" in n])

    def test_full(self):
        args = perf.parse_args(["--full"])
        rdma, tcp, metrics = perf.plan(args)
        self.assertEqual(args.mtus, [1500, 9000])
        self.assertEqual(len([r for r in rdma if r[0] == "bw" and not r[5]]), 2 * 2 * 4 * 3)
        self.assertEqual(len([r for r in rdma if r[5]]), 2 * 3)
        names = [m["metric"] for m in metrics]
        self.assertIn("lossy ib_read_bw 64 KiB mtu9000", names)
        self.assertIn("ib_send_bw 1 MiB q4 mtu9000", names)

    def test_bad_args(self):
        with self.assertRaises(SystemExit):
            perf.parse_args(["--mtu", "4000"])
        with self.assertRaises(SystemExit):
            perf.parse_args(["--drivers", "siw"])


class Report(unittest.TestCase):
    def setUp(self):
        self.args = perf.parse_args(["--sizes", "65536", "--qps", "1", "--lossy"])
        _, _, self.metrics = perf.plan(self.args)
        self.m = {m["metric"]: m for m in self.metrics}

    def report(self, samples):
        return perf.report(samples, self.args.entities, self.metrics)

    def test_medians_ratios_flags(self):
        w, t, teq = (self.m[n] for n in ("ib_write_bw 64 KiB", "tcp", "tcp eq-payload"))
        lat = self.m["ib_send_lat 2 B p99"]
        counters = {"frames": 1000, "virtio_net_irqs_per_frame": 0.5, "kicks_per_frame": 1.0,
                    "net_rx_per_frame": 0.25, "rdma_retransmits": 0, "tcp_retransmits": 3}
        samples = [sample("rxe", w, 20, 1), sample("rxe", w, 30, 2, loaded=True),
                   sample("rxe", w, 25, 3),
                   sample("sroce", w, 50, 1, counters=counters),
                   sample("sroce", w, None, 2, error="probe failed"),
                   sample("tcp", t, 80), sample("tcp", teq, 40, counters=counters),
                   sample("rxe", lat, 400), sample("sroce", lat, 200)]
        table, summary = self.report(samples)
        e = next(x for x in summary if x["metric"] == "ib_write_bw 64 KiB")
        self.assertEqual(e["median"], {"rxe": 25, "sroce": 50})
        self.assertEqual(e["loaded"], {"rxe": 1, "sroce": 0})
        self.assertEqual(e["failures"]["sroce"], ["probe failed"])
        self.assertAlmostEqual(e["ratio"]["sroce/rxe"], 2.0)
        self.assertAlmostEqual(e["ratio"]["sroce/TCP"], 50 / 80)
        self.assertAlmostEqual(e["ratio"]["sroce/TCPeq"], 50 / 40)
        self.assertAlmostEqual(e["ratio"]["rxe/TCP"], 25 / 80)
        line = next(x for x in table.splitlines() if x.startswith("ib_write_bw 64 KiB "))
        self.assertIn("25 (3,1L)", line)
        self.assertIn("50 (1)!", line)
        # Latency: sroce/rxe only, never against TCP's bandwidth.
        e = next(x for x in summary if x["metric"] == "ib_send_lat 2 B p99")
        self.assertEqual(set(e["ratio"]), {"sroce/rxe"})
        self.assertIn("sroce: 1 x probe failed", table)
        # The per-run counters table: sroce's write and TCP's equal-payload row.
        rows = [x.split() for x in table.splitlines() if x.startswith(("ib_write_bw 64 KiB ",
                                                                       "tcp eq-payload "))]
        self.assertIn(["ib_write_bw", "64", "KiB", "sroce", "1000", "0.5", "1", "0.25", "0",
                       "-"], rows)
        self.assertIn(["tcp", "eq-payload", "tcp", "1000", "0.5", "1", "0.25", "3", "-"], rows)

    def test_lossy_row_has_no_tcp_ratio(self):
        lw = self.m["lossy ib_write_bw 64 KiB"]
        samples = [sample("rxe", lw, 0.2), sample("sroce", lw, 0.9),
                   sample("tcp", self.m["tcp"], 80)]
        _, summary = self.report(samples)
        e = next(x for x in summary if x["metric"] == lw["metric"])
        self.assertEqual(set(e["ratio"]), {"sroce/rxe"})
        self.assertAlmostEqual(e["ratio"]["sroce/rxe"], 4.5)


class Plots(unittest.TestCase):
    def test_png_written(self):
        from tools.testing.bench.lib import benchplot
        args = perf.parse_args(["--sizes", "64,65536", "--qps", "1"])
        _, _, metrics = perf.plan(args)
        samples = []
        for i, m in enumerate(metrics):
            for d in (["tcp"] if m["program"].startswith("tcp") else ["rxe", "sroce"]):
                samples.append(sample(d, m, 10.0 + i + (d == "sroce")))
        _, summary = perf.report(samples, args.entities, metrics)
        doc = {"time": "test", "args": {"entities": args.entities}, "summary": summary}
        with tempfile.TemporaryDirectory() as tmp:
            paths = benchplot.write(doc, os.path.join(tmp, "perf-test"))
            self.assertEqual([os.path.basename(p) for p in paths],
                             ["perf-test-bw.png", "perf-test-lat.png"])
            for p in paths:
                with open(p, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
