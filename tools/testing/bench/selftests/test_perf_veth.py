"""Host-side checks of `make bench-veth` (tools/testing/bench/perf.py
--veth, lib/veth.py) and the counters it adds to lib/benchstat.py, on
made-up samples and recorded text: no guest. Run:
/usr/bin/python3 -m pytest tools/testing/bench/selftests/test_perf_veth.py"""
import unittest

from tools.testing.bench import perf
from tools.testing.bench.lib import benchstat as bs
from tools.testing.bench.lib import veth


def sample(driver, m, value):
    return {"round": 1, "driver": driver, "metric": m["metric"], "value": value,
            "error": None, "loaded": False, "counters": None}


class Plan(unittest.TestCase):
    def test_veth_plan(self):
        args = perf.parse_args(["--veth"])
        self.assertEqual(args.sizes, [65536, 1 << 20])
        self.assertEqual(args.entities, ["rxe", "sroce", "sroce-routed", "tcp"])
        rdma, tcp, metrics = perf.plan(args)
        self.assertEqual(len(rdma), 2 * 3)
        self.assertFalse([r for r in rdma if r[0] != "bw" or r[3] != 1 or r[4] != 1500])
        self.assertEqual([t[0] for t in tcp], ["tcp", "tcp eq-payload"])
        names = [m["metric"] for m in metrics]
        self.assertEqual(len(names), len(set(names)))
        for n in ("ib_read_bw 1 MiB", "ib_send_bw 64 KiB CPU", "ib_write_bw 1 MiB zc/pkt",
                  "tcp CPU", "tcp eq-payload"):
            self.assertIn(n, names)
        self.assertFalse([n for n in names if "Mpps" in n or "lat" in n])

    def test_veth_args(self):
        args = perf.parse_args(["--veth", "--drivers", "sroce-routed,tcp", "--sizes", "4096"])
        self.assertEqual((args.entities, args.sizes), (["sroce-routed", "tcp"], [4096]))
        for bad in (["--drivers", "sroce-routed"], ["--veth", "--full"],
                    ["--veth", "--mtu", "9000"], ["--veth", "--drivers", "siw"]):
            with self.assertRaises(SystemExit):
                perf.parse_args(bad)
        # Without --veth the sizes stay the two-guest bench's.
        self.assertEqual(perf.parse_args([]).sizes, list(perf.DEFAULT_SIZES))

    def test_every_veth_entity_has_a_topology(self):
        for entity, (driver, topology) in perf.VETH_ENTITIES.items():
            self.assertIn(topology, veth.TOPOLOGIES)
            self.assertEqual(driver is None, entity == "tcp")
        # rdma_rxe 6.1 has its UDP port in the initial netns only.
        self.assertEqual(perf.VETH_ENTITIES["rxe"][1], "routed")


class Report(unittest.TestCase):
    def test_cpu_and_zero_copy_ratios(self):
        args = perf.parse_args(["--veth", "--sizes", "65536"])
        _, _, metrics = perf.plan(args)
        m = {x["metric"]: x for x in metrics}
        cpu, zc = m["ib_write_bw 64 KiB CPU"], m["ib_write_bw 64 KiB zc/pkt"]
        samples = [sample("rxe", cpu, 40), sample("sroce", cpu, 10), sample("sroce", cpu, 14),
                   sample("tcp", m["tcp CPU"], 8), sample("tcp", m["tcp eq-payload CPU"], 20),
                   sample("sroce", zc, 0.98)]
        table, summary = perf.report(samples, args.entities, metrics)
        e = next(x for x in summary if x["metric"] == cpu["metric"])
        self.assertEqual(e["unit"], "CPU-s/GB")
        self.assertAlmostEqual(e["ratio"]["sroce/rxe"], 12 / 40)
        self.assertAlmostEqual(e["ratio"]["sroce/TCP"], 12 / 8)
        self.assertAlmostEqual(e["ratio"]["sroce/TCPeq"], 12 / 20)
        e = next(x for x in summary if x["metric"] == zc["metric"])
        self.assertEqual((e["unit"], e["median"]["sroce"]), ("zc/pkt", 0.98))
        # rxe has no such counter: no sample, no ratio.
        self.assertEqual((e["median"]["rxe"], e["ratio"]), (None, {}))
        self.assertIn("ib_write_bw 64 KiB zc/pkt", table)

    def test_routed_sroce_against_rxe(self):
        """sroce-routed shares rxe's topology: its ratio to rxe is the
        like-for-like one, next to sroce's (netns) own."""
        args = perf.parse_args(["--veth", "--sizes", "65536",
                                "--drivers", "rxe,sroce,sroce-routed"])
        _, _, metrics = perf.plan(args)
        bw = next(m for m in metrics if m["metric"] == "ib_read_bw 64 KiB")
        samples = [sample("rxe", bw, 10), sample("sroce", bw, 30), sample("sroce-routed", bw, 25)]
        table, summary = perf.report(samples, args.entities, metrics)
        e = next(x for x in summary if x["metric"] == bw["metric"])
        self.assertEqual(e["ratio"], {"sroce/rxe": 3.0, "sroce-routed/rxe": 2.5})
        head = table.splitlines()[0].split()
        self.assertIn("sroce-routed/rxe", head)
        self.assertNotIn("rxe/rxe", head)
        self.assertNotIn("sroce/TCP", head)


SOFTNET = """\
0000a0b1 00000013 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
00000020 0000000a 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001
"""


class Counters(unittest.TestCase):
    def test_softnet_dropped(self):
        self.assertEqual(bs.softnet_dropped(SOFTNET), 0x13 + 0x0a)
        self.assertEqual(bs.softnet_dropped(""), 0)

    def test_snapshot_script_names_the_link(self):
        script = bs.snapshot_script("vz0")
        self.assertIn("/sys/class/net/vz0/statistics", script)
        self.assertNotIn("eth0", script)
        self.assertEqual(bs.SNAPSHOT, bs.snapshot_script("eth0"))
        self.assertNotIn("@DEV@", perf.SAMPLER.replace("@DEV@", "vz0"))

    def test_one_end_sees_both_directions(self):
        d = {"tx_packets": 700, "rx_packets": 300, "softnet_dropped": 5,
             "rdma_tx_packets": 800, "rdma_tx_zerocopy": 600}
        self.assertEqual(bs.per_run([d])["frames"], 700)
        r = bs.per_run([d], both_ways=True)
        self.assertEqual(r["frames"], 1000)
        self.assertEqual(r["softnet_dropped"], 5)
        self.assertAlmostEqual(r["tx_zerocopy_per_packet"], 0.75)
        # rxe: no tx_zerocopy counter; TCP: no RDMA counter at all.
        self.assertIsNone(bs.per_run([{"rdma_sent_pkts": 9, "tx_packets": 9}])
                          ["tx_zerocopy_per_packet"])


class Topology(unittest.TestCase):
    def test_scripts(self):
        netns = veth.script("netns")
        self.assertTrue(netns.startswith("set -e\n"))
        self.assertIn(f"netns {veth.NS}", netns)
        self.assertNotIn("ip rule", netns)
        routed = veth.script("routed")
        self.assertNotIn("netns", routed)
        # The local table steps behind the rules that send each end's
        # traffic out of its own veth; teardown puts it back.
        self.assertLess(routed.index("pref 1000 lookup local"), routed.index("ip rule del pref 0"))
        self.assertIn("accept_local=1", routed)
        self.assertIn("ip rule add pref 0 lookup local", veth.TEARDOWN)
        with self.assertRaises(ValueError):
            veth.script("bridge")

    def test_netns_wraps_commands(self):
        class Guest:
            name = "a"

            def run(self, cmd, timeout=60, check=True):
                return cmd

            def spawn(self, cmd, timeout=300):
                return cmd

        ns = veth.Netns(Guest())
        self.assertEqual(ns.name, "a:zc")
        self.assertEqual(ns.run("iperf3 -c 10.78.0.1 -J"),
                         "ip netns exec zc sh -c 'iperf3 -c 10.78.0.1 -J'")
        self.assertTrue(ns.spawn("exec x").startswith("exec ip netns exec zc sh -c "))
        pair = veth.Pair(Guest(), "routed")
        self.assertIs(pair.far, pair.near)


if __name__ == "__main__":
    unittest.main()
