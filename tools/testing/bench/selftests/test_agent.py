"""Host-side unit tests of the guest agent's jobs:
/usr/bin/python3 -m pytest tools/testing/bench"""
import glob
import time
import unittest

from tools.testing.bench.agent import Job


def voluntary_switches():
    """This process's voluntary context switches, all threads."""
    total = 0
    for path in glob.glob("/proc/self/task/*/status"):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass  # a thread that ended meanwhile
    return total


class JobTest(unittest.TestCase):
    def test_result(self):
        job = Job("echo out; echo err >&2; exit 3", 30)
        self.assertTrue(job.done.wait(30))
        self.assertEqual((job.result["rc"], job.result["out"], job.result["err"]),
                         (3, "out\n", "err\n"))
        self.assertNotIn("killed", job.result)

    def test_timeout_kills(self):
        job = Job("sleep 30", 0.3)
        self.assertTrue(job.done.wait(10))
        self.assertEqual(job.result["rc"], 124)
        self.assertTrue(job.result["killed"])

    def test_kill(self):
        job = Job("sleep 30", 60)
        time.sleep(0.1)
        job.kill()
        self.assertTrue(job.done.wait(10))
        self.assertEqual(job.result["rc"], 124)

    def test_waiting_does_not_poll(self):
        # Popen.wait(timeout) wakes every 50 ms: about 20 switches in a
        # second where a blocking wait makes none (this thread's sleep: 1).
        # Counted while the job runs: an ended thread's count is gone.
        job = Job("sleep 3", 60)
        time.sleep(0.5)
        before = voluntary_switches()
        time.sleep(1)
        switches = voluntary_switches() - before
        job.kill()
        self.assertLess(switches, 8)

if __name__ == "__main__":
    unittest.main()
