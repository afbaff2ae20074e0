"""What `make bench` (tools/testing/bench/perf.py) reads from the guests and
the host around each run, and how it turns that into per-run figures.

Pure parsing, no guest: tools/testing/bench/selftests/test_benchstat.py
checks every function here on recorded text.
"""
import json
import re

USER_HZ = 100

# One guest command prints everything counted per run, each source after a
# marker line, so one round trip to the agent takes the whole snapshot.
# The `rdma statistic` line is empty when no RDMA link exists (TCP runs).
# @DEV@: the netdev the traffic crosses (eth0; vz0 for the veth bench).
_SNAPSHOT = r"""
echo '@@ stat'; cat /proc/stat
echo '@@ interrupts'; cat /proc/interrupts
echo '@@ softirqs'; cat /proc/softirqs
echo '@@ softnet'; cat /proc/net/softnet_stat
echo '@@ snmp'; cat /proc/net/snmp
echo '@@ netdev'; cd /sys/class/net/@DEV@/statistics && cat tx_packets rx_packets; cd /
echo '@@ ethtool'; ethtool -S @DEV@ 2>/dev/null || true
echo '@@ rdma'; rdma statistic show link 2>/dev/null || true
"""


def snapshot_script(dev="eth0"):
    return _SNAPSHOT.replace("@DEV@", dev)


SNAPSHOT = snapshot_script()

# Recorded once per boot, per guest: what decides how the link behaves.
ENVIRONMENT = r"""
echo '@@ clocksource'; cat /sys/devices/system/clocksource/clocksource0/current_clocksource
echo '@@ qdisc'; tc qdisc show dev eth0
echo '@@ features'; ethtool -k eth0 2>/dev/null || true
echo '@@ kernel'; uname -r
"""


def sections(text):
    """'@@ name' marker lines split text into {name: body}."""
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith("@@ "):
            name = line[3:].strip()
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def proc_stat_cpu(text):
    """The aggregate 'cpu' line of /proc/stat as jiffies: kernel (system +
    irq + softirq, where a soft-RoCE driver and the stack work), busy (all
    but idle and iowait) and all."""
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "cpu":
            v = [int(x) for x in f[1:9]]
            user, nice, system, idle, iowait, irq, softirq, steal = v
            return {"kernel": system + irq + softirq,
                    "busy": user + nice + system + irq + softirq + steal,
                    "all": sum(v)}
    raise ValueError("no cpu line in /proc/stat")


def interrupts(text):
    """/proc/interrupts summed over CPUs: the virtio-net queues' interrupts
    (lines naming virtioN-input/-output), and all interrupts."""
    lines = text.splitlines()
    ncpu = len(lines[0].split()) if lines else 0
    net, total = 0, 0
    for line in lines[1:]:
        f = line.split()
        if not f or not f[0].endswith(":"):
            continue
        counts = [int(x) for x in f[1:1 + ncpu] if x.isdigit()]
        n = sum(counts)
        total += n
        if re.search(r"virtio\d+-(input|output)", line):
            net += n
    return {"virtio_net_irqs": net, "irqs": total}


def softirqs(text):
    """NET_TX and NET_RX of /proc/softirqs, summed over CPUs."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if f and f[0] in ("NET_TX:", "NET_RX:"):
            out[f[0][:-1].lower()] = sum(int(x) for x in f[1:])
    return out


def softnet_dropped(text):
    """Packets dropped as a CPU's input backlog was full (the second column
    of /proc/net/softnet_stat, hex), summed over CPUs: where a veth's
    receiver falls behind its sender."""
    rows = [line.split() for line in text.splitlines() if line.strip()]
    return sum(int(r[1], 16) for r in rows if len(r) > 1)


def snmp(text, proto="Tcp"):
    """One protocol's counters of /proc/net/snmp (header line, value line)."""
    rows = [line.split() for line in text.splitlines() if line.startswith(proto + ":")]
    if len(rows) < 2:
        return {}
    return {k: int(v) for k, v in zip(rows[0][1:], rows[1][1:])}


def ethtool_stats(text):
    """`ethtool -S` as {name: value}; virtio-net's per-queue *_kicks summed
    into 'kicks'."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\w.\-]+):\s*(\d+)\s*$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    kicks = [v for k, v in out.items() if k.endswith("kicks")]
    if kicks:
        out["kicks"] = sum(kicks)
    return out


def rdma_stats(text):
    """`rdma statistic show link` as {name: value}, summed over links."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 2 or f[0] != "link":
            continue
        for k, v in zip(f[2::2], f[3::2]):
            if v.isdigit():
                out[k] = out.get(k, 0) + int(v)
    return out


# RDMA counters that count a retransmission: sroce's own; rxe's completer
# counts each retry of a request (6.1 has no per-packet count). TCP's are
# /proc/net/snmp's RetransSegs.
RDMA_RETRANSMIT_KEYS = ("retransmits", "completer_retry_err")


def snapshot(text):
    """A guest's SNAPSHOT output as one flat {counter: value}."""
    s = sections(text)
    out = {}
    out.update({"cpu_" + k: v for k, v in proc_stat_cpu(s.get("stat", "")).items()})
    out.update(interrupts(s.get("interrupts", "")))
    out.update(softirqs(s.get("softirqs", "")))
    if "softnet" in s:
        out["softnet_dropped"] = softnet_dropped(s["softnet"])
    out.update(snmp(s.get("snmp", "")))
    pk = s.get("netdev", "").split()
    if len(pk) == 2:
        out["tx_packets"], out["rx_packets"] = int(pk[0]), int(pk[1])
    eth = ethtool_stats(s.get("ethtool", ""))
    if "kicks" in eth:
        out["kicks"] = eth["kicks"]
    out.update({"rdma_" + k: v for k, v in rdma_stats(s.get("rdma", "")).items()})
    return out


def delta(before, after):
    """after - before for every counter both have (an RDMA device created
    between the two has no 'before': its counters start at zero)."""
    out = {}
    for k, v in after.items():
        if k in before:
            out[k] = v - before[k]
        elif k.startswith("rdma_"):
            out[k] = v
    return out


def per_run(deltas, both_ways=False):
    """Both guests' counter deltas of one run: totals, and the per-packet
    figures the report shows (per frame sent on the link by either guest).
    both_ways: one end's netdev sees the whole link (a veth pair in one
    guest), so its received frames count too."""
    tot = {}
    for d in deltas:
        for k, v in d.items():
            tot[k] = tot.get(k, 0) + v
    frames = tot.get("tx_packets", 0) + (tot.get("rx_packets", 0) if both_ways else 0)
    out = {"frames": frames, "softnet_dropped": tot.get("softnet_dropped"),
           "rdma_retransmits": sum(tot.get("rdma_" + k, 0) for k in RDMA_RETRANSMIT_KEYS),
           "tcp_retransmits": tot.get("RetransSegs", 0),
           "cpu_s": tot.get("cpu_busy", 0) / USER_HZ,
           "kernel_cpu_s": tot.get("cpu_kernel", 0) / USER_HZ}
    # sroce's packets sent as fragments of the registered pages, per
    # packet it sent (ACKs included); drivers without the counter: None.
    zc, sent = tot.get("rdma_tx_zerocopy"), tot.get("rdma_tx_packets")
    out["tx_zerocopy_per_packet"] = zc / sent if zc is not None and sent else None
    for k in ("virtio_net_irqs", "kicks", "net_rx", "net_tx"):
        if k in tot:
            out[k + "_per_frame"] = tot[k] / frames if frames else None
    out["counters"] = tot
    return out


def cpu_rate(text):
    """From a sampler's output (lines: time, /proc/stat's cpu line, eth0's
    tx and rx bytes): the guest's (kernel, busy) CPU-seconds per second
    over the part of the run where traffic flows (intervals at >= 30 % of
    the peak byte rate, the ramps at both ends dropped), or None when no
    traffic was seen."""
    samples = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 13 or f[1] != "cpu":
            continue
        c = proc_stat_cpu(" ".join(f[1:11]))
        samples.append((float(f[0]), c["busy"], c["kernel"], int(f[-2]) + int(f[-1])))
    steps = [tuple(b[i] - a[i] for i in range(4)) for a, b in zip(samples, samples[1:])]
    rates = [s[3] / s[0] for s in steps if s[0] > 0]
    if not rates or max(rates) <= 0:
        return None
    active = [i for i, s in enumerate(steps) if s[0] > 0 and s[3] / s[0] >= 0.3 * max(rates)]
    first, last = active[0], active[-1]
    if last - first >= 3:
        first, last = first + 1, last - 1
    window = steps[first:last + 1]
    secs = sum(s[0] for s in window)
    if secs <= 0 or sum(s[3] for s in window) <= 0:
        return None
    return (sum(s[2] for s in window) / USER_HZ / secs, sum(s[1] for s in window) / USER_HZ / secs)


def cpu_per_payload_gb(rates, payload_bytes_per_s):
    """CPU-seconds per GB (1e9 bytes) of payload delivered, both guests
    summed, from their steady-state CPU rates (cpu_rate) and the payload
    rate the program reported: (kernel, busy), or None."""
    if None in rates or not payload_bytes_per_s:
        return None
    gb_per_s = payload_bytes_per_s / 1e9
    return (sum(k for k, _ in rates) / gb_per_s, sum(b for _, b in rates) / gb_per_s)


def iperf3(text):
    """An `iperf3 -J` client's result: payload bytes/s received by the
    server, the sender's retransmits and the bytes moved."""
    doc = json.loads(text)
    if doc.get("error"):
        raise ValueError(f"iperf3: {doc['error']}")
    end = doc["end"]
    recv, sent = end["sum_received"], end["sum_sent"]
    return {"bytes_per_s": recv["bits_per_second"] / 8, "bytes": recv["bytes"],
            "seconds": recv["seconds"], "retransmits": sent.get("retransmits", 0),
            "streams": len(end.get("streams", []))}


def qemu_ticks(stat_text):
    """utime + stime (clock ticks) of one /proc/PID/stat."""
    # The command name (field 2) may hold spaces: split after its ')'.
    rest = stat_text[stat_text.rindex(")") + 2:].split()
    return int(rest[11]) + int(rest[12])


def host_other_busy(before, after):
    """Share of the host's CPUs (0..1) busy with anything but our two QEMU
    processes between two samples, each {'stat': /proc/stat text,
    'qemu': [ticks per QEMU]}; None if no time passed."""
    a, b = proc_stat_cpu(before["stat"]), proc_stat_cpu(after["stat"])
    total = b["all"] - a["all"]
    if total <= 0:
        return None
    ours = sum(after["qemu"]) - sum(before["qemu"])
    return max(0.0, (b["busy"] - a["busy"] - ours) / total)


# A run is "loaded" when other processes took this share of the host's
# CPUs on average during it (on the 2-core host: 40 % of one core). The
# load average counts the guests' own vCPU threads (one busy thread per
# guest) and lags by a minute: it decides only when no CPU share could be
# measured, and then only beyond the guests' two threads.
LOADED_SHARE = 0.2
GUEST_THREADS = 2


def loaded(other_busy, loadavg, ncpu):
    if other_busy is not None:
        return other_busy >= LOADED_SHARE
    return max(loadavg) > ncpu + GUEST_THREADS
