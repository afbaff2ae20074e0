"""Host-side check of perf.py's CPU-per-byte window: only the part of a
run where traffic flows counts, ramps at both ends left out.
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_perf_cpu.py"""
import unittest

from tools.testing.bench.perf import cpu_per_gb


def sampler(steps):
    """Sampler lines from (seconds, user, system, softirq, idle, bytes) steps."""
    t, u, s, q, i, b = 1000.0, 0, 0, 0, 0, 0
    lines = []
    for dt, du, ds, dq, di, db in [(0, 0, 0, 0, 0, 0)] + steps:
        t, u, s, q, i, b = t + dt, u + du, s + ds, q + dq, i + di, b + db
        lines.append(f"{t:.6f} cpu  {u} 0 {s} {i} 0 0 {q} 0 0 0 {b} 0")
    return "\n".join(lines)


class CpuPerGb(unittest.TestCase):
    def test_window(self):
        idle = (0.25, 20, 5, 0, 0, 1000)         # perftest starting: no traffic
        ramp = (0.25, 10, 5, 5, 5, 1_000_000)     # traffic starting/ending
        flow = (0.25, 10, 10, 5, 0, 2_500_000)    # 15 kernel jiffies per 2.5 MB
        text = sampler([idle, idle, ramp] + [flow] * 8 + [ramp, idle])
        kern, total = cpu_per_gb(text)
        # 8 x (10 + 5) jiffies = 1.2 s over 8 x 2.5 MB = 0.02 GB
        self.assertAlmostEqual(kern, 1.2 / 0.02)
        self.assertAlmostEqual(total, 8 * 25 / 100 / 0.02)

    def test_no_traffic(self):
        self.assertIsNone(cpu_per_gb(sampler([(0.25, 25, 0, 0, 0, 0)] * 4)))
        self.assertIsNone(cpu_per_gb(""))


if __name__ == "__main__":
    unittest.main()
