"""perftest (Debian 12: 4.5) and ibv_*_pingpong on the bench: run a server
in one guest and its client in another (or the same), and read what they
printed.

perftest's exit status says little: it exits 0 with an all-zero table when
its clock calibration fails ("Correlation coefficient r^2 ... < 0.9"), so
every run is judged on its table: every size asked for is there, with a
non-zero bandwidth or message rate (bandwidth tests) or latency (latency
tests), the connection type, MTU and GIDs are the ones asked for, and no
error line was printed on either side.

perftest calibrates its clock once per table row, on each side, as it
prints the row: an `-a` run calibrates 46 times. A calibration fails when
the process is held off the CPU between its two clock reads (an interrupt
whose softirq runs long, another process, the host descheduling the
vCPU); measured on the guests, about one calibration in 200 fails, so one
`-a` run in five has a row with no figures although every message of it
was moved. run_perftest() measures such a size again on its own (a
single-size run calibrates twice), at most CALIBRATION_RETRIES times, and
counts it in CALIBRATION, which the runner prints in its summary.

Used by tools/testing/guest/test_perftest.py, test_interop.py, lib/pingpong.py,
tools/testing/bench/perf.py and tools/testing/bench/demo.py. The parsers are
checked on the host by tools/testing/bench/selftests/test_perftest_parse.py.
"""
import collections
import ipaddress
import itertools
import math
import re
import time

# Sizes `-a` runs: 2 B to 8 MiB.
ALL_SIZES = [1 << k for k in range(1, 24)]

BW_PROGRAMS = ("ib_send_bw", "ib_write_bw", "ib_read_bw", "ib_atomic_bw")
LAT_PROGRAMS = ("ib_send_lat", "ib_write_lat", "ib_read_lat", "ib_atomic_lat")
# perftest's connection types per program (of those a soft-RoCE device has):
# reads and atomics need RC; UD is only for sends and is left to a later test.
CONNECTIONS = {
    "ib_send_bw": ("RC", "UC"), "ib_write_bw": ("RC", "UC"),
    "ib_read_bw": ("RC",), "ib_atomic_bw": ("RC",),
    "ib_send_lat": ("RC", "UC"), "ib_write_lat": ("RC", "UC"),
    "ib_read_lat": ("RC",), "ib_atomic_lat": ("RC",),
}
# The IB path MTU perftest is told to use (-m) for a netdev MTU: the largest
# IB MTU whose RoCEv2 frame (payload + 58 bytes of headers at most) fits.
IB_MTU = {1500: 1024, 9000: 4096}

# Lines that mean a run went wrong even when the exit status is 0.
ERROR_RE = re.compile(
    r"(?i)(\berror\b|\bfail|couldn'?t|could not|unable|\bproblem|cannot|can'?t\b|"
    r"not supported|unsupported|invalid|correlation coefficient|timed? ?out|"
    r"higher than active|\bwrong\b|segmentation|aborted|mismatch|doesn'?t match)")
# Notices perftest prints on success.
BENIGN_RE = re.compile(r"Device not recognized to implement inline feature")
CALIBRATION_RE = re.compile(r"Correlation coefficient r\^2")
# How often a size whose row perftest could not time is measured again.
CALIBRATION_RETRIES = 3
# This process's tally of perftest runs and re-measurements, for the
# runner's summary (calibration_summary()).
CALIBRATION = collections.Counter()
# size for run_perftest(): perftest's own default size (no -s, no -a).
DEFAULT_SIZE = "default"


def kind(program):
    return "lat" if program.endswith("_lat") else "bw"


def _num(text):
    try:
        return float(text)
    except ValueError:
        return math.nan  # "-nan" and the like


def error_lines(text):
    return [line.strip() for line in text.splitlines()
            if ERROR_RE.search(line) and not BENIGN_RE.search(line)]


def gid_address(text):
    """perftest prints a GID as 16 decimal bytes joined by ':'
    ("00:...:255:255:10:77:00:01"); return it as an IPv4 address when it is
    v4-mapped, else as an IPv6 address."""
    octets = [int(x) for x in text.strip().split(":")]
    if len(octets) != 16 or any(not 0 <= o <= 255 for o in octets):
        raise ValueError(f"not a perftest GID: {text!r}")
    ip = ipaddress.IPv6Address(bytes(octets))
    return ip.ipv4_mapped or ip


def parse(out):
    """Read one side's perftest output: a dict with
    header: {"connection", "mtu", "gid_index", "device"} (those printed),
    gids: [local, remote] addresses, columns: the table's column names,
    rows: one dict per table row (size, iters and the columns, floats),
    errors: lines that say something went wrong."""
    header = {}
    for key, pat in (("connection", r"Connection type\s*:\s*(\w+)"),
                     ("mtu", r"\bMtu\s*:\s*(\d+)\s*\[B\]"),
                     ("gid_index", r"GID index\s*:\s*(\d+)"),
                     ("device", r"Device\s*:\s*(\S+)")):
        m = re.search(pat, out)
        if m:
            header[key] = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
    gids = [gid_address(m.group(1))
            for m in re.finditer(r"^\s*GID:\s*([\d:]+)\s*$", out, re.M)]
    columns, rows, in_table = [], [], False
    for line in out.splitlines():
        if "#bytes" in line:
            columns = [c.split("[")[0] for c in re.split(r"\s{2,}|\t+", line.strip())]
            in_table = True
            continue
        if not in_table:
            continue
        m = re.match(r"^\s*(\d+)\s+(\d+)\s+(.*)$", line)
        if m:
            vals = [_num(v) for v in m.group(3).split()]
            row = {"size": int(m.group(1)), "iters": int(m.group(2))}
            names = BW_COLUMNS if "BW average" in " ".join(columns) else LAT_COLUMNS
            row.update(zip(names, vals))
            rows.append(row)
        elif line.strip().startswith("---"):
            in_table = False
    return {"header": header, "gids": gids, "columns": columns, "rows": rows,
            "errors": error_lines(out)}


BW_COLUMNS = ("bw_peak", "bw_avg", "msg_rate", "cpu_util")
LAT_COLUMNS = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p99_9")


def row_problems(program, row):
    """What is wrong with one table row: all-zero or impossible numbers."""
    if kind(program) == "bw":
        bw, rate = row.get("bw_avg", math.nan), row.get("msg_rate", math.nan)
        if not (math.isfinite(bw) and math.isfinite(rate)):
            return [f"size {row['size']}: non-numeric bandwidth {bw} / rate {rate}"]
        # Two decimals of MB/s print small sizes' bandwidth as 0.00: then the
        # message rate (6 decimals of Mpps) must show the traffic.
        if bw <= 0 and rate <= 0:
            return [f"size {row['size']}: zero bandwidth and message rate"]
        return []
    t = [row.get(k, math.nan) for k in ("t_min", "t_typical", "t_max", "t_avg")]
    if not all(math.isfinite(x) and x > 0 for x in t):
        return [f"size {row['size']}: latency not positive: min/typical/max/avg {t}"]
    if not t[0] <= t[1] <= t[2]:
        return [f"size {row['size']}: latency min {t[0]} <= typical {t[1]} <= max {t[2]}"
                " does not hold"]
    return []


def check(program, parsed, sizes=None, iters=None, connection=None, mtu=None,
          gids=None, side="client"):
    """Problems (strings) with one side's parsed output. sizes: the rows the
    table must have, in order (None: whatever rows there are must be sane);
    iters: the iteration count every row must show; connection, mtu: what
    the header must say; gids: (local, remote) addresses the QPs must use."""
    problems = [f"{side}: error line: {e}" for e in parsed["errors"]]
    rows = parsed["rows"]
    got = [r["size"] for r in rows]
    if sizes is not None and got != list(sizes):
        missing = [s for s in sizes if s not in got]
        problems.append(f"{side}: table sizes {got} != expected {list(sizes)}"
                        f" (missing {missing})")
    for r in rows:
        problems += [f"{side}: {p}" for p in row_problems(program, r)]
        if iters is not None and r["iters"] != iters:
            problems.append(f"{side}: size {r['size']}: {r['iters']} iterations, not {iters}")
    head = parsed["header"]
    if connection is not None and head.get("connection") != connection:
        problems.append(f"{side}: connection type {head.get('connection')}, not {connection}")
    if mtu is not None and head.get("mtu") != mtu:
        problems.append(f"{side}: MTU {head.get('mtu')}, not {mtu}")
    if gids is not None:
        want = [ipaddress.ip_address(g) for g in gids]
        if parsed["gids"] != want:
            problems.append(f"{side}: GIDs (local, remote) {parsed['gids']}, not {want}")
    return problems


# ---- running them in the guests -------------------------------------------

_ports = itertools.count(0)


def next_port(base=18515):
    """A port for the next server: each run its own, so that a server left
    over from a failed run is never taken for the new one."""
    return base + next(_ports) % 2000


def _server_ended(guest, job, what):
    """Raise TimeoutError with the server's output if its job has ended."""
    try:
        res = job.wait(0, check=False)
    except TimeoutError:
        return
    raise TimeoutError(f"[{guest.name}] server ended (rc={res.rc}) before {what}:\n"
                       f"{res.out}{res.err}")


def wait_listening(guest, port, job, timeout=30):
    """Wait until the server job listens on TCP port; raise TimeoutError
    (with the server's output if it ended) otherwise. The polling loop
    runs in the guest, 2 s per request, as a request per poll costs more
    than the server takes to start under TCG."""
    deadline = time.monotonic() + timeout
    poll = (f"for i in $(seq 20); do ss -Hltn 'sport = :{port}' | grep -q . && exit 0; "
            f"sleep 0.1; done; exit 1")
    while True:
        if guest.run(poll, timeout=30, check=False).ok:
            return
        _server_ended(guest, job, f"listening on port {port}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"[{guest.name}] server not listening on port {port} "
                               f"within {timeout}s: {job.cmd}")


def wait_cm_listening(guest, port, job, timeout=30):
    """rdma_cm servers listen on no TCP port: their cm_id shows LISTEN (on
    port, if given, so that no other server's ID can stand in for it), and
    a thread of the process that owns it waits for its next CM event. The
    kernel shows an ID LISTEN before its CM listener is in place (on 6.1
    and 6.12 alike); a client whose request comes in between is rejected
    (invalid service ID). A thread asleep in ucma_get_event(), or polling
    (its event channel), has returned from rdma_listen(); the owner's main
    thread merely sleeping proves nothing when another thread listens
    (rping's main thread waits on a semaphore while its CM thread works)."""
    want = "state LISTEN " + (f".* src-addr [^ ]*:{port}( |$)" if port else "")
    waits = "ucma_get_event|do_sys_poll|do_select|ep_poll|do_epoll_wait"
    poll = (f"for i in $(seq 20); do "
            f"for p in $(rdma res show cm_id | grep -E '{want}' | "
            f"sed -nE 's/.* pid ([0-9]+) .*/\\1/p'); do "
            f"for w in /proc/$p/task/*/wchan; do echo $(cat $w 2>/dev/null); done | "
            f"grep -qxE '{waits}' && exit 0; done; "
            f"sleep 0.1; done; exit 1")
    deadline = time.monotonic() + timeout
    while True:
        if guest.run(poll, timeout=30, check=False).ok:
            return
        _server_ended(guest, job, "its rdma_cm ID listened")
        if time.monotonic() > deadline:
            raise TimeoutError(f"[{guest.name}] no rdma_cm ID listening on port {port} "
                               f"within {timeout}s: {job.cmd}")


class Run:
    """One client/server run: the commands, results and time taken."""

    def __init__(self, server_cmd, client_cmd):
        self.server_cmd, self.client_cmd = server_cmd, client_cmd
        self.client = self.server = None
        self.seconds = None
        self.hung = False
        self.setup_error = None
        self.parsed = None
        # (size, Run) for each size measured again after a failed calibration.
        self.remeasured = []

    @property
    def calibration_retries(self):
        return len(self.remeasured)

    @property
    def text(self):
        """Everything both sides printed, for logs and failure messages."""
        parts = [f"$ {self.server_cmd}  # server"]
        if self.server is not None:
            parts.append(f"[rc={self.server.rc}]\n{self.server.out}{self.server.err}")
        parts.append(f"$ {self.client_cmd}  # client")
        if self.client is not None:
            parts.append(f"[rc={self.client.rc}]\n{self.client.out}{self.client.err}")
        if self.setup_error:
            parts.append(f"setup: {self.setup_error}")
        for size, again in self.remeasured:
            parts.append(f"--- size {size} measured again, as perftest's clock calibration "
                         f"failed:\n{again.text}")
        return "\n".join(parts)


def run_pair(server, client, server_cmd, client_cmd, port, timeout, ready=wait_listening):
    """Start server_cmd on guest server, wait for it to be ready (ready(guest,
    port, job): by default, listening on TCP port), run client_cmd on guest
    client (killed after timeout s), then collect the server (killed if still
    there 20 s later, 3 s if the client failed). Returns a Run; run.hung when
    the client had to be killed (the data path is stuck)."""
    run = Run(server_cmd, client_cmd)
    t0 = time.monotonic()
    job = server.spawn(f"exec {server_cmd}", timeout=timeout + 60)
    try:
        try:
            ready(server, port, job)
        except TimeoutError as e:
            run.setup_error = str(e)
            return run
        run.client = client.run(client_cmd, timeout=timeout, check=False)
        run.hung = run.client.rc == 124
        try:
            # A server whose client failed may wait for it forever.
            run.server = job.wait(20 if run.client.ok else 3, check=False)
        except TimeoutError:
            pass
    finally:
        if run.server is None:
            run.server = job.kill()
        run.seconds = time.monotonic() - t0
    return run


def cm_pair(server, client, server_cmd, client_cmd, timeout, ready=None, port=None):
    """An rdma_cm program's server on guest server, then its client on guest
    client, each bounded by timeout s; both must exit 0. ready: a shell
    test on server that says it is ready (default: its rdma_cm ID
    listens, on port if given). Returns (server, client, text of both)."""
    job = server.spawn(f"exec timeout {timeout} {server_cmd}", timeout=timeout + 30)
    srv = None
    try:
        if ready:
            server.wait_for(ready, timeout=30)
        else:
            wait_cm_listening(server, port, job)
        cli = client.run(f"timeout {timeout} {client_cmd}", timeout=timeout + 30, check=False)
        try:
            srv = job.wait(30 if cli.ok else 5, check=False)
        except TimeoutError:
            pass
    finally:
        if srv is None:
            srv = job.kill()
    text = (f"$ {server_cmd}  # server, rc={srv.rc}\n{srv.out}{srv.err}\n"
            f"$ {client_cmd}  # client, rc={cli.rc}\n{cli.out}{cli.err}")
    assert cli.rc == 0 and srv.rc == 0, f"exit status client {cli.rc}, server {srv.rc}\n{text}"
    return srv, cli, text


def perftest_cmds(program, dev, gid_index, port, dest, size=None, iters=None,
                  connection="RC", mtu=None, extra="", rdma_cm=False):
    """(server command, client command) for one perftest run; size None: -a,
    DEFAULT_SIZE: perftest's own. gid_index None: no -x (rdma_cm picks the
    GID from the address)."""
    args = [program] + (["-R"] if rdma_cm else []) + ["-d", dev]
    if gid_index is not None:
        args += ["-x", str(gid_index)]
    args += ["-F", "-p", str(port)]
    if connection != "RC":
        args += ["-c", connection]
    if mtu is not None:
        args += ["-m", str(mtu)]
    if iters is not None:
        args += ["-n", str(iters)]
    if program.startswith("ib_atomic") or size == DEFAULT_SIZE:
        pass  # atomics: the size is fixed at 8 bytes
    elif size is None:
        args.append("-a")
    else:
        args += ["-s", str(size)]
    if extra:
        args.append(extra)
    cmd = " ".join(args)
    return cmd, f"{cmd} {dest}"


def _sides(run):
    return [p for p in (run.parsed["client"], run.parsed["server"]) if p is not None]


def calibration_failed(run):
    """Whether either side said its clock calibration failed."""
    return run.parsed is not None and any(
        CALIBRATION_RE.search(e) for p in _sides(run) for e in p["errors"])


def void_sizes(program, run):
    """The sizes of the rows a failed calibration left without figures
    (perftest prints zeros or inf there), on either side; None when the
    calibration failed but no row shows it (then the run has some other
    problem, which must not be measured away)."""
    sizes = {r["size"] for p in _sides(run) for r in p["rows"] if row_problems(program, r)}
    return sorted(sizes) or None


def _splice(run, size, again):
    """Put the rows for size that the run `again` measured in place of the
    run's void ones, on each side that printed one."""
    for side in ("client", "server"):
        mine, theirs = run.parsed[side], again.parsed[side]
        if mine is None or theirs is None:
            continue
        new = {r["size"]: r for r in theirs["rows"]}
        mine["rows"] = [new.get(r["size"], r) if r["size"] == size else r
                        for r in mine["rows"]]


def _clean(run, program):
    """Once no row is void any more, the calibration lines are history."""
    if void_sizes(program, run) is None:
        for p in _sides(run):
            p["errors"] = [e for e in p["errors"] if not CALIBRATION_RE.search(e)]


def _once(server, client, program, dev, client_dev, gid_index, client_gid_index, dest, size,
          iters, connection, mtu, extra, timeout, rdma_cm):
    port = next_port()
    srv, _ = perftest_cmds(program, dev, gid_index, port, dest, size, iters, connection,
                           mtu, extra, rdma_cm)
    _, cli = perftest_cmds(program, client_dev, client_gid_index, port, dest, size, iters,
                           connection, mtu, extra, rdma_cm)
    run = run_pair(server, client, srv, cli, port, timeout,
                   wait_cm_listening if rdma_cm else wait_listening)
    run.parsed = {
        "client": parse(run.client.out + run.client.err) if run.client else None,
        "server": parse(run.server.out + run.server.err) if run.server else None,
    }
    return run


def run_perftest(server, client, program, dev, gid_index, dest, size=None,
                 iters=None, connection="RC", mtu=None, extra="", timeout=120,
                 client_gid_index=None, calibration_retries=CALIBRATION_RETRIES,
                 rdma_cm=False, client_dev=None):
    """Run one perftest program between server and client guests (the same
    guest for loopback); dest: the server's address (perftest 4.5
    exchanges QP data over IPv4 only, so an IPv4 one but with rdma_cm; the
    GID index decides the RoCE address family). rdma_cm: connect with -R,
    the server's readiness shown by its cm_id. client_dev: the client's
    device when it differs from the server's (both ends of a veth pair in
    one guest). Returns a Run with .parsed
    = {"client", "server"}.

    Each size whose row a failed clock calibration left empty (a property
    of the moment in a TCG guest, not of the driver: the messages were
    moved) is measured again on its own, at most calibration_retries
    times, and its rows put in place of the empty ones; run.remeasured
    keeps those runs, and CALIBRATION counts them."""
    cgid = gid_index if client_gid_index is None else client_gid_index
    args = (program, dev, client_dev or dev, gid_index, cgid, dest)
    opts = (iters, connection, mtu, extra, timeout, rdma_cm)
    run = _once(server, client, *args, size, *opts)
    CALIBRATION["runs"] += 1
    if not calibration_failed(run):
        return run
    CALIBRATION["failed"] += 1
    for void in void_sizes(program, run) or ():
        # An atomic's size is fixed; a single size is measured as it was.
        again_size = size if size is not None else void
        for _ in range(calibration_retries):
            again = _once(server, client, *args, again_size, *opts)
            run.remeasured.append((void, again))
            CALIBRATION["remeasured"] += 1
            if not calibration_failed(again) and not void_sizes(program, again):
                _splice(run, void, again)
                break
    _clean(run, program)
    if calibration_failed(run):
        CALIBRATION["unresolved"] += 1
    return run


def calibration_summary():
    """One line for a runner's summary, or "" when no perftest ran."""
    c = CALIBRATION
    if not c["runs"]:
        return ""
    return (f"perftest: {c['runs']} runs; clock calibration failed in {c['failed']}, "
            f"sizes measured again {c['remeasured']} times, "
            f"{c['unresolved']} left without figures")


def judge(run, program, sizes, iters=None, connection="RC", mtu=None, gids=None):
    """Problems with a perftest Run: exit statuses, then both tables (the
    client's must have every size, if sizes is given; the server prints
    some of them, or none, depending on the test)."""
    if run.setup_error:
        return [run.setup_error]
    problems = []
    if run.hung:
        problems.append(f"client killed after {run.client.t:.0f}s: no progress")
    elif run.client.rc != 0:
        problems.append(f"client exit status {run.client.rc}")
    if run.server.rc != 0 and not run.hung:
        problems.append(f"server exit status {run.server.rc}")
    problems += check(program, run.parsed["client"], sizes, iters, connection, mtu,
                      gids, "client")
    srv_gids = None if gids is None else (gids[1], gids[0])
    srv = run.parsed["server"]
    problems += check(program, srv, None, iters, connection, mtu, srv_gids, "server")
    if sizes is not None:
        extra = [r["size"] for r in srv["rows"] if r["size"] not in sizes]
        if extra:
            problems.append(f"server: sizes {extra} were not asked for")
    return problems


def headline(problems):
    """The most telling of a run's problems: what the program itself said
    went wrong, if it said anything, else the first one."""
    said = [p for p in problems if ": error line: " in p]
    return (said or problems or ["no problem"])[0]


# ---- ibv_*_pingpong ---------------------------------------------------------

PINGPONG_RE = {
    "bytes": re.compile(r"^(\d+) bytes in ([\d.]+) seconds = ([\d.]+) Mbit/sec$", re.M),
    "iters": re.compile(r"^(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter$", re.M),
    "gid": re.compile(r"^\s*(local|remote) address:.*GID (\S+)\s*$", re.M),
}


def parse_pingpong(out):
    """{"bytes", "iters", "seconds", "mbit", "usec", "gids": {local, remote},
    "invalid": ["invalid data in page N", ...]} from one side's output."""
    res = {"gids": {}, "invalid": re.findall(r"^invalid data in page \d+$", out, re.M)}
    m = PINGPONG_RE["bytes"].search(out)
    if m:
        res.update(bytes=int(m.group(1)), seconds=float(m.group(2)), mbit=float(m.group(3)))
    m = PINGPONG_RE["iters"].search(out)
    if m:
        res.update(iters=int(m.group(1)), usec=float(m.group(3)))
    for m in PINGPONG_RE["gid"].finditer(out):
        res["gids"][m.group(1)] = ipaddress.ip_address(m.group(2))
    return res


def check_pingpong(parsed, size, iters, gids, side):
    """Problems with one side of a pingpong run: it moved size * iters bytes
    each way, in iters round trips, between the GIDs asked for, and (with
    -c) found every page it checked as the client wrote it."""
    problems = [f"{side}: {line}" for line in parsed["invalid"]]
    if parsed.get("bytes") != size * iters * 2:
        problems.append(f"{side}: moved {parsed.get('bytes')} bytes, not "
                        f"{size * iters * 2} (size {size} x {iters} iters x 2 ways)")
    if parsed.get("iters") != iters:
        problems.append(f"{side}: {parsed.get('iters')} iterations, not {iters}")
    if not parsed.get("usec", 0) > 0:
        problems.append(f"{side}: no time per iteration reported")
    want = {"local": ipaddress.ip_address(gids[0]), "remote": ipaddress.ip_address(gids[1])}
    got = {k: (v.ipv4_mapped or v) if isinstance(v, ipaddress.IPv6Address) else v
           for k, v in parsed["gids"].items()}
    if got != want:
        problems.append(f"{side}: GIDs {got}, not {want}")
    return problems
