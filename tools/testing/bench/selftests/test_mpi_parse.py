"""Host-side checks of tools/testing/bench/lib/mpi.py's parser and judge,
on output the guests printed (2026-12-03): a job over sroce, and the same
job with UCX_TLS=tcp,self (and `--mca pml_ucx_tls any --mca
pml_ucx_devices any`, without which Open MPI 4.1's UCX PML refuses to
start on tcp alone), which the job's own checks pass and the judge must
fail. Also the launcher's relay of output and exit status, on the host's
loopback.
Run: /usr/bin/python3 -m pytest tools/testing/bench/selftests/test_mpi_parse.py"""
import os
import subprocess
import unittest

from tools.testing.bench.lib import mpi

JOB = """\
pingpong size=8 iters=20 lat_us=1776.57
bandwidth size=65536 iters=10 MBps=9.67
allreduce count=1024 ok
alltoall count=1024 ok
payload rank=0 host=sroce-a sent_min=802992 recv_min=16560
payload rank=1 host=sroce-b sent_min=16560 recv_min=802992
"""
SIZES = {"s": 8, "l": 20, "b": 65536, "n": 10, "c": 1024}
HOSTS = ("sroce-a", "sroce-b")

SROCE = """\
[1796272148.736526] [sroce-a:179  :0]     ucp_context.c:1849 UCX  INFO  Version 1.13.1 (loaded from /lib/x86_64-linux-gnu/libucp.so.0)
[1796272150.093023] [sroce-b:175  :0]      ucp_worker.c:1763 UCX  INFO    ep_cfg[0]: tag(self/memory0 rc_verbs/sroce0:1)
[1796272151.144166] [sroce-a:179  :0]      ucp_worker.c:1763 UCX  INFO    ep_cfg[0]: tag(self/memory0 rc_verbs/sroce0:1)
[1796272152.675240] [sroce-a:179  :0]      ucp_worker.c:1763 UCX  INFO    ep_cfg[1]: tag(rc_verbs/sroce0:1)
[1796272151.947448] [sroce-b:175  :a]      ucp_worker.c:1763 UCX  INFO    ep_cfg[1]: tag(rc_verbs/sroce0:1)
""" + JOB

TCP = """\
[1796272270.023959] [sroce-b:241  :0]      ucp_worker.c:1763 UCX  INFO    ep_cfg[0]: tag(self/memory0 tcp/eth0 tcp/lo)
[1796272270.872660] [sroce-a:246  :0]      ucp_worker.c:1763 UCX  INFO    ep_cfg[0]: tag(self/memory0 tcp/eth0 tcp/lo)
[1796272271.050499] [sroce-a:246  :0]      ucp_worker.c:1763 UCX  INFO    ep_cfg[1]: tag(tcp/eth0)
[1796272270.321806] [sroce-b:241  :0]      ucp_worker.c:1763 UCX  INFO    ep_cfg[1]: tag(tcp/eth0)
""" + JOB

# Counter growth of the sroce run's size (test_mpi_short's, scaled):
# enough on both guests; and what TCP leaves on the device (nothing).
MOVED = {"sroce-a": {"tx_pkts": 900, "rx_pkts": 40, "tx_bytes": 850000, "rx_bytes": 30000},
         "sroce-b": {"tx_pkts": 40, "rx_pkts": 900, "tx_bytes": 30000, "rx_bytes": 850000}}
IDLE = {h: {"tx_pkts": 0, "rx_pkts": 0, "tx_bytes": 850000, "rx_bytes": 850000}
        for h in HOSTS}


class TestJudge(unittest.TestCase):
    def test_sroce_run_passes(self):
        res = mpi.parse(SROCE)
        self.assertEqual(res["pingpong"]["lat_us"], 1776.57)
        self.assertEqual(res["bandwidth"]["MBps"], 9.67)
        self.assertTrue(res["allreduce"] and res["alltoall"])
        self.assertEqual(res["payload"]["sroce-b"]["recv"], 802992)
        self.assertEqual(mpi.job_problems(res, SIZES), [])
        self.assertEqual(mpi.transport_problems(res, "sroce0", HOSTS), [])
        self.assertEqual(mpi.traffic_problems(res["payload"], 1024, MOVED), [])

    def test_tcp_run_fails(self):
        res = mpi.parse(TCP)
        # The job itself cannot tell.
        self.assertEqual(mpi.job_problems(res, SIZES), [])
        problems = mpi.transport_problems(res, "sroce0", HOSTS)
        self.assertIn("sroce-a: UCX picked tcp/eth0 for tag", problems)
        self.assertIn("sroce-b: no tag lane on rc_verbs/sroce0:1", problems)
        # Nor the netdev's bytes: the device's packets do.
        problems = mpi.traffic_problems(res["payload"], 1024, IDLE)
        self.assertTrue(any("device tx_pkts grew by 0" in p for p in problems), problems)
        self.assertFalse(any("netdev" in p for p in problems), problems)

    def test_other_device_or_no_log_fails(self):
        res = mpi.parse(SROCE.replace("sroce0:1", "rxe0:1"))
        self.assertTrue(mpi.transport_problems(res, "sroce0", HOSTS))
        res = mpi.parse(JOB)
        self.assertIn("sroce-a: no ep_cfg line from UCX (UCX_LOG_LEVEL=info)",
                      mpi.transport_problems(res, "sroce0", HOSTS))

    def test_unchecked_collective_or_short_run_fails(self):
        res = mpi.parse(SROCE.replace("alltoall count=1024 ok\n", ""))
        self.assertEqual(mpi.job_problems(res, SIZES), ["alltoall not checked ok"])
        self.assertTrue(mpi.job_problems(mpi.parse(SROCE), dict(SIZES, l=200)))

    def test_too_few_packets_fails(self):
        few = {h: dict(d) for h, d in MOVED.items()}
        few["sroce-b"]["rx_pkts"] = 700   # 802992 B at MTU 1024 need 785
        problems = mpi.traffic_problems(mpi.parse(SROCE)["payload"], 1024, few)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("sroce-b: device rx_pkts grew by 700, fewer than 785", problems[0])


class TestLauncher(unittest.TestCase):
    """mpi_rsh.py as mpirun uses it: the words after the host are one
    shell line; stdout, stderr and the exit status come back."""

    def test_relay(self):
        port = 7400 + os.getpid() % 500
        env = dict(os.environ, MPI_RSH_PORT=str(port))
        srv = subprocess.Popen([mpi.RSH, "--serve", "127.0.0.1", str(port)],
                               stdout=subprocess.PIPE, env=env)
        try:
            self.assertIn(b"serving", srv.stdout.readline())
            r = subprocess.run([mpi.RSH, "127.0.0.1", "echo out;", "echo err >&2;", "exit 3"],
                               capture_output=True, env=env, timeout=30)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (3, b"out\n", b"err\n"))
            r = subprocess.run([mpi.RSH, "127.0.0.1", "kill -TERM $$"],
                               capture_output=True, env=env, timeout=30)
            self.assertEqual(r.returncode, 128 + 15)
        finally:
            srv.kill()
            srv.wait()
