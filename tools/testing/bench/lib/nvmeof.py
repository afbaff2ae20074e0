# SPDX-License-Identifier: GPL-2.0
"""NVMe over Fabrics between the guests: guest B exports a RAM disk (brd)
with the kernel's NVMe target, guest A connects with the kernel's NVMe
host, over RDMA (nvmet-rdma/nvme-rdma on sroce or rdma_rxe) or over TCP
(nvmet-tcp/nvme-tcp, the reference); fio (Debian's, the host's userspace
which the guests mount) measures the namespace from A.

The shell snippets set up and take down both ends (test_kverbs.py and
test_nvmeof.py use them); fio's commands, the parser of its JSON output
(--output-format=json) and the judge of a run are here too.

A write run verifies what it wrote: fio writes the whole size with a
crc32c in each block, then reads every block back and checks it
(verify=crc32c, do_verify by default). continue_on_error=verify makes it
go on past a bad block and count them: the job's `total_err`, shown in
JSON only with that option, and its `error` (84, EILSEQ) for the first.
The verify reads are the job's "read" figures; its "write" figures are
the write phase alone (fio restarts the clock for the verify phase).
"""
import json
import math
import os
import re
import statistics

from . import rdma

NQN = "sroce-test"
PORT = 4420

# The RAM disk B exports: brd's rd_size is in KiB.
DISK_MIB = 64

TARGET_UP = r"""set -e
modprobe brd rd_nr=1 rd_size={rd_kib}
modprobe nvmet-{trtype} {modopts}
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
cd /sys/kernel/config/nvmet
mkdir subsystems/{nqn}
echo 1 > subsystems/{nqn}/attr_allow_any_host
mkdir subsystems/{nqn}/namespaces/1
echo /dev/ram0 > subsystems/{nqn}/namespaces/1/device_path
echo 1 > subsystems/{nqn}/namespaces/1/enable
mkdir ports/1
echo {trtype} > ports/1/addr_trtype
echo {family} > ports/1/addr_adrfam
echo {addr} > ports/1/addr_traddr
echo {port} > ports/1/addr_trsvcid
ln -s /sys/kernel/config/nvmet/subsystems/{nqn} ports/1/subsystems/{nqn}
"""

TARGET_DOWN = r"""set -e
cd /sys/kernel/config/nvmet
rm ports/1/subsystems/{nqn}
rmdir ports/1
echo 0 > subsystems/{nqn}/namespaces/1/enable
rmdir subsystems/{nqn}/namespaces/1
rmdir subsystems/{nqn}
modprobe -r nvmet-{trtype} nvmet brd
"""

HOST_CONNECT = r"""set -e
modprobe nvme-{trtype}
echo "transport={trtype},traddr={addr},trsvcid={port},nqn={nqn}" > /dev/nvme-fabrics
for i in $(seq 100); do [ -b /dev/nvme0n1 ] && exit 0; sleep 0.2; done
echo "no /dev/nvme0n1 after connecting" >&2; exit 1
"""

HOST_DISCONNECT = r"""set -e
echo 1 > /sys/class/nvme/nvme0/delete_controller
for i in $(seq 100); do [ -e /sys/class/nvme/nvme0 ] || break; sleep 0.2; done
modprobe -r nvme-{trtype}
"""

DEVICE = "/dev/nvme0n1"


def target_up(b, trtype="rdma", ip="v4", srq=False, rd_mib=DISK_MIB, timeout=60):
    """Guest B exports a RAM disk of rd_mib MiB over trtype (rdma, tcp) on
    its IPv4 or IPv6 address; use_srq=1 for nvmet-rdma's SRQs."""
    modopts = f"use_srq={int(srq)}" if trtype == "rdma" else ""
    b.run(TARGET_UP.format(nqn=NQN, trtype=trtype, modopts=modopts, port=PORT,
                           family="ipv4" if ip == "v4" else "ipv6", addr=addr_of(b, ip),
                           rd_kib=rd_mib * 1024), timeout=timeout)


def target_down(b, trtype="rdma", timeout=120):
    b.run(TARGET_DOWN.format(nqn=NQN, trtype=trtype), timeout=timeout)


def connect(a, b, trtype="rdma", ip="v4", timeout=120):
    """Guest A's NVMe host connects to B's target: DEVICE appears."""
    a.run(HOST_CONNECT.format(nqn=NQN, trtype=trtype, port=PORT, addr=addr_of(b, ip)),
          timeout=timeout)


def disconnect(a, trtype="rdma", timeout=120):
    a.run(HOST_DISCONNECT.format(trtype=trtype), timeout=timeout)


def addr_of(g, ip):
    return g.ip if ip == "v4" else g.ip6


# ---- fio ---------------------------------------------------------------------

# The measurements: name -> (fio's rw, block size, the figure compared,
# what fio's options add). Reads run for a time; the write runs write a
# size once and verify it (a time-based verifying job would check only
# the blocks fio's history still holds).
TESTS = {
    "randread 4k": ("randread", "4k", "iops", "--time_based"),
    "read 128k": ("read", "128k", "bw", "--time_based"),
    "write 128k": ("write", "128k", "bw", "--verify=crc32c --continue_on_error=verify"),
}
IODEPTH = 16


def fio_cmd(test, seconds=5, size_mib=None, device=DEVICE, iodepth=IODEPTH):
    """fio's command line for one of TESTS on device: the read tests run
    for `seconds`, the write test writes size_mib MiB (the whole disk by
    default) and reads it back to verify."""
    rw, bs, _, extra = TESTS[test]
    cmd = (f"fio --name={rw}-{bs} --filename={device} --ioengine=libaio --direct=1 "
           f"--rw={rw} --bs={bs} --iodepth={iodepth} --output-format=json {extra}")
    if rw == "write":
        return cmd + (f" --size={size_mib}M" if size_mib else "")
    return cmd + f" --runtime={seconds}"


def parse(out):
    """fio's JSON output (a line fio logs before it, such as "fio: pid=...,
    err=84/...", is skipped): one dict per job with jobname, error,
    total_err (None without continue_on_error) and, for "read" and
    "write", io_bytes, bw_bytes (B/s), iops and runtime_ms. None if there
    is no JSON."""
    start = 0 if out.startswith("{") else out.find("\n{") + 1
    if start == 0 and not out.startswith("{"):
        return None
    try:
        doc, _ = json.JSONDecoder().raw_decode(out[start:])
    except ValueError:
        return None
    jobs = []
    for j in doc.get("jobs", []):
        job = {"jobname": j.get("jobname"), "error": j.get("error"),
               "total_err": j.get("total_err")}
        for ddir in ("read", "write"):
            d = j.get(ddir, {})
            job[ddir] = {"io_bytes": d.get("io_bytes", 0), "bw_bytes": d.get("bw_bytes", 0),
                         "iops": d.get("iops", 0.0), "runtime_ms": d.get("runtime", 0)}
        jobs.append(job)
    return jobs


def figure(test, job):
    """The figure a test compares: IOPS (read) or MB/s (10^6 B/s)."""
    rw, _, what, _ = TESTS[test]
    ddir = "write" if rw == "write" else "read"
    if what == "iops":
        return job[ddir]["iops"]
    return job[ddir]["bw_bytes"] / 1e6


UNITS = {"iops": "IOPS", "bw": "MB/s"}


def problems_of(test, jobs, size_mib=None):
    """What is wrong with a run of test: no job, an error, no I/O done; a
    write run whose verification did not run over every byte written, or
    found a bad block."""
    if not jobs:
        return ["no fio JSON output"]
    if len(jobs) != 1:
        return [f"{len(jobs)} jobs, not 1"]
    job = jobs[0]
    rw = TESTS[test][0]
    bad = []
    if job["error"]:
        bad.append(f"job error {job['error']} ({os.strerror(job['error'])})")
    ddir = "write" if rw == "write" else "read"
    done = job[ddir]
    if not (done["io_bytes"] > 0 and done["runtime_ms"] > 0 and done["iops"] > 0):
        bad.append(f"no {ddir} measured: {done}")
    if rw == "write":
        if job["total_err"] is None:
            bad.append("no verify error count (run without continue_on_error=verify)")
        elif job["total_err"]:
            bad.append(f"{job['total_err']} verify error(s)")
        verified = job["read"]["io_bytes"]
        if size_mib and done["io_bytes"] != size_mib << 20:
            bad.append(f"wrote {done['io_bytes']} B, not {size_mib} MiB")
        if verified != done["io_bytes"]:
            bad.append(f"verified {verified} B of the {done['io_bytes']} B written")
    elif job["write"]["io_bytes"]:
        bad.append(f"a read test wrote {job['write']['io_bytes']} B")
    return bad


# ---- the link's account of a run ----------------------------------------------

# Packet counters of `rdma statistic` per driver: (sent, received).
PACKET_COUNTERS = {"sroce": ("tx_packets", "rx_packets"),
                   "rxe": ("sent_pkts", "rcvd_pkts")}


def snapshot(g, dev=None, driver=None, netdev="eth0"):
    """The netdev's byte counters and, with an RDMA device, its packet
    counters."""
    stats = f"/sys/class/net/{netdev}/statistics"
    nb = g.run(f"cat {stats}/tx_bytes {stats}/rx_bytes").out.split()
    snap = {"tx_bytes": int(nb[0]), "rx_bytes": int(nb[1])}
    if dev:
        c = rdma.counters(g, dev)
        tx, rx = PACKET_COUNTERS[driver]
        snap.update(tx_pkts=c[tx], rx_pkts=c[rx])
    return snap


def delta(before, after):
    return {k: after[k] - before[k] for k in before}


def traffic_problems(jobs, mtu, host_delta, rdma_link=True):
    """The data fio moved crossed the link (seen from the host, A): the
    bytes read came in and the bytes written went out, on the netdev and,
    over RDMA, in at least a packet per MTU on the device."""
    job = jobs[0]
    bad = []
    for ddir, way in (("read", "rx"), ("write", "tx")):
        n = job[ddir]["io_bytes"]
        if not n:
            continue
        if host_delta[f"{way}_bytes"] < n:
            bad.append(f"the netdev's {way}_bytes moved by {host_delta[f'{way}_bytes']}, "
                       f"less than the {n} B fio {ddir}")
        want = math.ceil(n / mtu)
        if rdma_link and host_delta[f"{way}_pkts"] < want:
            bad.append(f"the device's {way} packets moved by {host_delta[f'{way}_pkts']}, "
                       f"fewer than {want} for {n} B {ddir} at MTU {mtu}")
    return bad


def run(bench, test, dev=None, driver=None, seconds=5, size_mib=None, timeout=300):
    """One fio run of test on A against B's namespace. Returns (jobs,
    problems, result, counters' delta on A); problems is empty if fio
    measured, verified (write) and the link carried the data (over dev
    when given)."""
    a = bench.a
    mtu = active_mtu(a, dev) if dev else 1
    before = snapshot(a, dev, driver)
    r = a.run(fio_cmd(test, seconds, size_mib), timeout=timeout, check=False)
    after = snapshot(a, dev, driver)
    jobs = parse(r.out)
    bad = [] if r.ok else [f"fio exit status {r.rc}: {r.err.strip()[-500:]}"]
    bad += problems_of(test, jobs, size_mib)
    d = delta(before, after)
    if not bad:
        bad += traffic_problems(jobs, mtu, d, rdma_link=dev is not None)
    return jobs, bad, r, d


def active_mtu(g, dev):
    """The port's active (IB) MTU in bytes."""
    out = g.run(f"ibv_devinfo -d {dev}").out
    return int(re.search(r"active_mtu:\s*(\d+)", out).group(1))


# ---- the table ----------------------------------------------------------------

def medians(samples):
    """{(engine, test): {round: figure}} -> {(engine, test): median}."""
    return {k: statistics.median(v.values()) for k, v in samples.items() if v}


def paired_ratio(samples, test, engine, other):
    """The median over rounds of engine's figure / other's in the same
    round: the engines of a round ran minutes apart, under the same load
    (which other work on the host makes vary from round to round)."""
    mine, theirs = samples.get((engine, test), {}), samples.get((other, test), {})
    ratios = [mine[r] / theirs[r] for r in mine if theirs.get(r)]
    return statistics.median(ratios) if ratios else None


def table(samples, engines=("sroce", "rxe", "tcp")):
    """Markdown rows, one per test: each engine's median over rounds (its
    range and count), and sroce's ratios to rxe and to nvme-tcp, each the
    median of the per-round ratios (higher is better for every figure).
    samples: {(engine, test): {round: figure}}."""
    med = medians(samples)
    lines = ["| engine | test | sroce | rxe | sroce/rxe | nvme-tcp | sroce/tcp |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for test, (rw, _, what, _) in TESTS.items():
        unit = UNITS[what]
        cells = []
        for e in engines:
            v = samples.get((e, test), {})
            cells.append(f"{med[(e, test)]:.1f} {unit} ({min(v.values()):.1f}-"
                         f"{max(v.values()):.1f}, n={len(v)})" if v else "-")
        ratios = [paired_ratio(samples, test, engines[0], o) for o in engines[1:]]
        ratios = [f"{r:.2f}" if r is not None else "-" for r in ratios]
        name = f"{test} iodepth {IODEPTH}" + (", verify=crc32c" if rw == "write" else "")
        lines.append(f"| NVMe-oF fio | {name} | {cells[0]} | {cells[1]} | {ratios[0]} | "
                     f"{cells[2]} | {ratios[1]} |")
    return "\n".join(lines)
