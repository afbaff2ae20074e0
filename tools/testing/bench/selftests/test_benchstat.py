"""Host-side checks of tools/testing/bench/lib/benchstat.py, what `make
bench` reads in the guests and on the host, on text in the formats the
6.1 guests print (trimmed).
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_benchstat.py"""
import json
import unittest

from tools.testing.bench.lib import benchstat as bs

STAT = "cpu  {u} 0 {s} {i} 0 {irq} {soft} 0 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\nintr 5 0\n"

INTERRUPTS = """\
           CPU0
  0:         43   IO-APIC   2-edge      timer
 24:          0   PCI-MSI 49152-edge      virtio0-config
 25:       {rx}   PCI-MSI 49153-edge      virtio0-input.0
 26:       {tx}   PCI-MSI 49154-edge      virtio0-output.0
 27:         12   PCI-MSI 65536-edge      virtio1-req.0
NMI:          0   Non-maskable interrupts
LOC:       {loc}   Local timer interrupts
ERR:          0
"""

SOFTIRQS = """\
                    CPU0
          HI:          1
       TIMER:       5000
      NET_TX:         {tx}
      NET_RX:       {rx}
       BLOCK:          0
"""

SNMP = """\
Ip: Forwarding DefaultTTL InReceives
Ip: 2 64 100
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens RetransSegs InErrs
Tcp: 1 200 120000 -1 4 {retr} 0
Udp: InDatagrams NoPorts
Udp: 7 0
"""

ETHTOOL = """\
NIC statistics:
     rx_queue_0_packets: 100
     rx_queue_0_kicks: {rk}
     tx_queue_0_packets: 200
     tx_queue_0_kicks: {tk}
"""

RDMA = "link sroce0/1 rx_packets {rx} tx_packets 9 retransmits {retr} ack_sent 4\n"


def snap(u=100, s=50, i=1000, irq=0, soft=10, rx=5, tx=7, loc=300, srx=20, stx=3,
         retr=0, rk=2, tk=30, txp=1000, rxp=900, rdma=None):
    parts = ["@@ stat", STAT.format(u=u, s=s, i=i, irq=irq, soft=soft),
             "@@ interrupts", INTERRUPTS.format(rx=rx, tx=tx, loc=loc),
             "@@ softirqs", SOFTIRQS.format(tx=stx, rx=srx),
             "@@ snmp", SNMP.format(retr=retr),
             "@@ netdev", f"{txp}\n{rxp}",
             "@@ ethtool", ETHTOOL.format(rk=rk, tk=tk),
             "@@ rdma", rdma or ""]
    return "\n".join(parts)


class Snapshot(unittest.TestCase):
    def test_fields(self):
        s = bs.snapshot(snap(rdma=RDMA.format(rx=11, retr=2)))
        self.assertEqual(s["cpu_kernel"], 60)
        self.assertEqual(s["cpu_busy"], 160)
        self.assertEqual(s["cpu_all"], 1160)
        self.assertEqual(s["virtio_net_irqs"], 12)   # input + output, not config/req
        self.assertEqual(s["irqs"], 43 + 5 + 7 + 12 + 300)
        self.assertEqual((s["net_rx"], s["net_tx"]), (20, 3))
        self.assertEqual(s["RetransSegs"], 0)
        self.assertEqual((s["tx_packets"], s["rx_packets"]), (1000, 900))
        self.assertEqual(s["kicks"], 32)
        self.assertEqual((s["rdma_rx_packets"], s["rdma_retransmits"]), (11, 2))

    def test_no_ethtool_no_rdma(self):
        text = snap().replace(ETHTOOL.format(rk=2, tk=30), "")
        s = bs.snapshot(text)
        self.assertNotIn("kicks", s)
        self.assertFalse([k for k in s if k.startswith("rdma_")])

    def test_run_deltas(self):
        # Guest A: the RDMA link appears during the run (no 'before').
        a0 = bs.snapshot(snap())
        a1 = bs.snapshot(snap(u=300, s=150, soft=40, rx=105, tx=57, srx=120, tk=80,
                              txp=1600, rxp=1300, rdma=RDMA.format(rx=400, retr=3)))
        b0 = bs.snapshot(snap(retr=5))
        b1 = bs.snapshot(snap(s=90, rx=205, srx=220, retr=9, txp=1400, rxp=1600))
        r = bs.per_run([bs.delta(a0, a1), bs.delta(b0, b1)])
        self.assertEqual(r["frames"], 600 + 400)
        self.assertEqual(r["virtio_net_irqs_per_frame"], (150 + 200) / 1000)
        self.assertEqual(r["kicks_per_frame"], 50 / 1000)
        self.assertEqual(r["net_rx_per_frame"], (100 + 200) / 1000)
        self.assertEqual(r["rdma_retransmits"], 3)
        self.assertEqual(r["tcp_retransmits"], 4)
        self.assertAlmostEqual(r["kernel_cpu_s"], (130 + 40) / 100)
        self.assertAlmostEqual(r["cpu_s"], (330 + 40) / 100)

    def test_rxe_retries_count(self):
        r = bs.per_run([{"rdma_completer_retry_err": 2, "tx_packets": 10}])
        self.assertEqual(r["rdma_retransmits"], 2)


def sampler(steps):
    """Sampler lines from (seconds, user, system, softirq, idle, bytes) steps."""
    t, u, s, q, i, b = 1000.0, 0, 0, 0, 0, 0
    lines = []
    for dt, du, ds, dq, di, db in [(0, 0, 0, 0, 0, 0)] + steps:
        t, u, s, q, i, b = t + dt, u + du, s + ds, q + dq, i + di, b + db
        lines.append(f"{t:.6f} cpu  {u} 0 {s} {i} 0 0 {q} 0 0 0 {b} 0")
    return "\n".join(lines)


class Cpu(unittest.TestCase):
    def test_window(self):
        idle = (0.25, 20, 5, 0, 0, 1000)         # perftest starting: no traffic
        ramp = (0.25, 10, 5, 5, 5, 1_000_000)     # traffic starting/ending
        flow = (0.25, 10, 10, 5, 0, 2_500_000)    # 15 kernel jiffies per quarter second
        text = sampler([idle, idle, ramp] + [flow] * 8 + [ramp, idle])
        kern, busy = bs.cpu_rate(text)
        # 8 x 15 jiffies = 1.2 s over 2 s; 8 x 25 = 2 s over 2 s
        self.assertAlmostEqual(kern, 0.6)
        self.assertAlmostEqual(busy, 1.0)

    def test_no_traffic(self):
        self.assertIsNone(bs.cpu_rate(sampler([(0.25, 25, 0, 0, 0, 0)] * 4)))
        self.assertIsNone(bs.cpu_rate(""))

    def test_per_payload_gb(self):
        # Both guests: 0.6 + 0.2 kernel CPU-s/s at 40 MB/s of payload.
        k, b = bs.cpu_per_payload_gb([(0.6, 1.0), (0.2, 0.5)], 40e6)
        self.assertAlmostEqual(k, 0.8 / 0.04)
        self.assertAlmostEqual(b, 1.5 / 0.04)
        self.assertIsNone(bs.cpu_per_payload_gb([(0.6, 1.0), None], 40e6))
        self.assertIsNone(bs.cpu_per_payload_gb([(0.6, 1.0)], 0))


IPERF3 = {"start": {}, "intervals": [],
          "end": {"streams": [{}, {}, {}, {}],
                  "sum_sent": {"seconds": 3.0, "bytes": 250_000_000,
                               "bits_per_second": 666_666_666.7, "retransmits": 7},
                  "sum_received": {"seconds": 3.01, "bytes": 240_000_000,
                                   "bits_per_second": 637_873_754.2}}}


class Iperf3(unittest.TestCase):
    def test_result(self):
        r = bs.iperf3(json.dumps(IPERF3))
        self.assertAlmostEqual(r["bytes_per_s"], 637_873_754.2 / 8)
        self.assertEqual((r["retransmits"], r["streams"], r["bytes"]), (7, 4, 240_000_000))

    def test_error(self):
        doc = {"start": {}, "intervals": [], "end": {},
               "error": "unable to connect to server: Connection refused"}
        with self.assertRaisesRegex(ValueError, "Connection refused"):
            bs.iperf3(json.dumps(doc))
        with self.assertRaises(ValueError):
            bs.iperf3("iperf3: error - unable to connect")


class Host(unittest.TestCase):
    def test_qemu_ticks(self):
        stat = ("4242 (qemu-system-x86) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
                "1234 567 0 0 20 0 5 0 100 0 0")
        self.assertEqual(bs.qemu_ticks(stat), 1234 + 567)
        self.assertEqual(bs.qemu_ticks(stat.replace("(qemu-system-x86)", "(a b) c)")),
                         1234 + 567)

    def test_other_busy(self):
        before = {"stat": STAT.format(u=1000, s=0, i=1000, irq=0, soft=0), "qemu": [400, 400]}
        # 200 ticks passed on the host: 150 busy, of which our QEMUs 100.
        after = {"stat": STAT.format(u=1150, s=0, i=1050, irq=0, soft=0), "qemu": [450, 450]}
        self.assertAlmostEqual(bs.host_other_busy(before, after), 50 / 200)
        self.assertTrue(bs.loaded(50 / 200, (1.0, 1.5), 2))
        self.assertFalse(bs.loaded(0.05, (1.0, 1.5), 2))
        # The guests' own two threads are in the load average.
        self.assertFalse(bs.loaded(0.05, (1.0, 3.5), 2))
        self.assertFalse(bs.loaded(None, (1.0, 3.5), 2))
        self.assertTrue(bs.loaded(None, (1.0, 4.5), 2))
        self.assertIsNone(bs.host_other_busy(before, before))

    def test_sections(self):
        s = bs.sections("@@ clocksource\ntsc\n@@ qdisc\nqdisc fq_codel 0: root\nx\n@@ kernel\n")
        self.assertEqual(s, {"clocksource": "tsc", "qdisc": "qdisc fq_codel 0: root\nx",
                             "kernel": ""})


if __name__ == "__main__":
    unittest.main()
