"""Host side of the two-guest QEMU bench.

Each guest runs Debian's stock kernel (build/guest/kernel, see scripts/setup)
with the host's / as a read-only 9p root under a tmpfs overlay, and an agent
(tools/testing/bench/agent.py) answering JSON requests on a virtio-serial port.
Guest A (10.77.0.1) and guest B (10.77.0.2) are linked by one virtio-net NIC
each, joined through a QEMU stream socket; the host never talks to that link.
"""
import atexit
import ctypes
import ipaddress
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from .kmsg_gate import leaks, offending

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILD = os.path.join(TOP, "build")
# The guests' kernel and modules: build/guest (Debian 12's stock kernel, see
# scripts/setup), or the directory under build/ that SROCE_GUEST names
# (build/guest-6.12, see scripts/kernel).
GUEST_NAME = os.environ.get("SROCE_GUEST") or "guest"
GUEST_DIR = os.path.join(BUILD, GUEST_NAME)
QEMU = "qemu-system-x86_64"
PORT_NAME = "org.sroce.ctl"
# 2 MiB huge pages each guest reserves at boot (8 MiB of its 1 GiB): a
# pyverbs huge-page test maps one per player, two players at a time, and
# one more for a user buffer.
HUGEPAGES = 4
# A debug kernel (scripts/kernel debug guest) runs several times slower
# than Debian's: SROCE_TIME_SCALE multiplies every bound the bench sets on
# the guests (boot, commands, jobs, waits) and the tests' time limits.
TIME_SCALE = float(os.environ.get("SROCE_TIME_SCALE") or 1)
# Requests are answered by the agent within their own timeout; past this extra
# margin the agent (or the guest) is taken to be hung.
REPLY_MARGIN = 30.0
# vCPUs per guest for a whole run (SROCE_SMP=2): see smp_args().
SMP = int(os.environ.get("SROCE_SMP") or 1)


def smp_args(smp):
    """QEMU's and the guest kernel's arguments for @smp vCPUs.

    One vCPU is plain TCG. More run one host thread per vCPU (MTTCG,
    thread=multi), so that the requester, the responder, workers, timers
    and processes really run in parallel. Under TCG the vCPUs' TSCs drift
    apart: the kernel's TSC watchdog then marks the TSC unstable and falls
    back to the HPET (a trap per clock read), which spoils perftest's
    clock calibration. tsc=reliable keeps the TSC as the clocksource (no
    watchdog, no synchronisation check); measured in
    tools/testing/bench/README.md.
    Returns (QEMU arguments, kernel command line words).
    """
    if smp == 1:
        return ["-accel", "tcg", "-smp", "1"], []
    return (["-accel", "tcg,thread=multi", "-smp", str(smp)],
            ["tsc=reliable"])


class GuestError(Exception):
    """The guest or its agent failed (not the command run in it)."""


class GuestDead(GuestError):
    """QEMU exited or the control channel closed."""


class GuestHung(GuestError):
    """The agent did not answer within the bound."""


class CommandFailed(Exception):
    def __init__(self, guest, cmd, result):
        self.guest, self.cmd, self.result = guest, cmd, result
        super().__init__(f"[{guest}] command failed with rc={result.rc}: {cmd}\n"
                         f"--- stdout ---\n{result.out}--- stderr ---\n{result.err}")


class Result:
    def __init__(self, cmd, rc, out, err, t):
        self.cmd, self.rc, self.out, self.err, self.t = cmd, rc, out, err, t

    @property
    def ok(self):
        return self.rc == 0

    def __repr__(self):
        return f"Result(rc={self.rc}, t={self.t}, cmd={self.cmd!r})"


class Job:
    """A background command in a guest (Guest.spawn)."""

    def __init__(self, guest, jid, cmd, timeout):
        self.guest, self.jid, self.cmd, self.timeout = guest, jid, cmd, timeout
        self.result = None

    def wait(self, timeout=None, check=True):
        """Wait up to timeout s (default: the job's own timeout) for the job to end
        and return its Result; raise TimeoutError if it is still running."""
        if self.result is None:
            timeout = self.timeout if timeout is None else timeout * TIME_SCALE
            reply = self.guest.request({"op": "wait", "job": self.jid, "timeout": timeout},
                                       timeout)
            if reply.get("running"):
                raise TimeoutError(f"[{self.guest.name}] job still running after {timeout}s:"
                                   f" {self.cmd}")
            self.result = self.guest._result(self.cmd, reply)
            self.guest._jobs.discard(self)
        if check and not self.result.ok:
            raise CommandFailed(self.guest.name, self.cmd, self.result)
        return self.result

    def kill(self):
        """Kill the job's process group; return its Result (rc 124 when killed)."""
        if self.result is None:
            reply = self.guest.request({"op": "kill", "job": self.jid}, 10)
            self.result = self.guest._result(self.cmd, reply)
            self.guest._jobs.discard(self)
        return self.result


# Every QEMU we start, so that any exit of the host process stops them.
_live = set()
_live_lock = threading.Lock()


def _kill_all():
    with _live_lock:
        procs = list(_live)
    for p in procs:
        _kill_group(p)


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    with _live_lock:
        _live.discard(proc)


atexit.register(_kill_all)

_PR_SET_PDEATHSIG = 1


def _qemu_preexec():
    # If this Python process dies without running atexit (SIGKILL, CI timeout),
    # the kernel kills QEMU. Note: PDEATHSIG fires when the *thread* that forked
    # exits, so QEMU is always started from the caller's (main) thread.
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def install_signal_handlers():
    """Turn SIGTERM/SIGHUP into SystemExit so atexit stops the guests
    (SIGINT already raises KeyboardInterrupt)."""
    def handler(signum, frame):
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


def guest_abi():
    path = os.path.join(GUEST_DIR, "abi")
    try:
        with open(path) as f:
            return f.read().strip()
    except FileNotFoundError:
        raise GuestError(f"{path} missing: run scripts/setup first") from None


def prepare_modules(top=TOP, log=print):
    """Build build/guest/modules/lib/modules/<abi>: the stock guest modules
    (hard links, so it costs no space) plus extra/sroce.ko from the repo top
    (or from the path in GUEST_DIR/ko, for another kernel), depmod'ed here
    so the guest's modprobe and request_module() find sroce."""
    abi = guest_abi()
    src = os.path.join(GUEST_DIR, "kernel", "lib", "modules", abi)
    base = os.path.join(GUEST_DIR, "modules")
    dst = os.path.join(base, "lib", "modules", abi)
    if not os.path.isdir(os.path.join(dst, "kernel")):
        if not os.path.isdir(os.path.join(src, "kernel")):
            raise GuestError(f"{src} missing: run scripts/setup first")
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(dst)
        subprocess.run(["cp", "-al", os.path.join(src, "kernel"), dst], check=True)
        for name in os.listdir(src):
            if name.startswith("modules.builtin") or name == "modules.order":
                shutil.copy2(os.path.join(src, name), dst)
    extra = os.path.join(dst, "extra")
    os.makedirs(extra, exist_ok=True)
    ko = os.path.join(top, "sroce.ko")
    if os.path.exists(os.path.join(GUEST_DIR, "ko")):
        with open(os.path.join(GUEST_DIR, "ko")) as f:
            ko = os.path.join(top, f.read().strip())
    target = os.path.join(extra, "sroce.ko")
    if os.path.exists(target):
        os.unlink(target)
    if os.path.exists(ko):
        shutil.copy2(ko, target)
    else:
        log(f"warning: {ko} not found (run make): the guests have no sroce module")
    subprocess.run(["depmod", "-b", base, abi], check=True)
    # Inputs of the initramfs may have changed (init script, kernel): cheap if not.
    subprocess.run([sys.executable, os.path.join(top, "tools", "testing", "bench", "boot",
                                                 "mkinitramfs.py")],
                   check=True, stdout=subprocess.DEVNULL)


class Guest:
    """One QEMU guest and its agent connection.

    name: "a" or "b"; index: 1 or 2 (address suffix). link: path of the unix
    socket joining the two NICs; link_server: whether this QEMU listens on it.
    """

    netdev = "eth0"

    def __init__(self, name, index, logdir, rundir, link, link_server, top=TOP,
                 mem_mb=1024, log=print, smp=1):
        self.name, self.index = name, index
        self.hostname = f"sroce-{name}"
        self.ip = f"10.77.0.{index}"
        self.ip6 = f"fd77::{index}"
        self.mac = f"52:54:00:77:00:{index:02x}"
        self.logdir, self.rundir, self.top = logdir, rundir, top
        self.link, self.link_server = link, link_server
        self.mem_mb = mem_mb
        self.smp = smp
        self.log = log
        self.ctl_path = os.path.join(rundir, f"{name}.ctl")
        self.boots = 0
        self.proc = None
        self.console_log = None
        self._sock = None
        self._ids = itertools.count(1)
        self._pending = {}
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._hello = threading.Event()
        self._dead = None
        self._jobs = set()
        self.kmsg_log = os.path.join(logdir, f"{name}-kmsg.log")
        self._no_kmemleak = False
        self.boot_time = None
        # The host's monotonic time when the guest's clock read 0, and how
        # far ahead of the host's the guest's clock was at the last look.
        self._clock_zero = None
        self._clock_ahead = 0.0
        self.clock_jump = 0.0

    def __repr__(self):
        return f"Guest({self.name}, {self.ip})"

    # ---- life cycle -------------------------------------------------------

    def qemu_cmdline(self):
        abi = guest_abi()
        append = ["console=ttyS0", "panic=-1", f"benchtop={self.top}", f"benchrole={self.name}",
                  f"benchguest={GUEST_NAME}", f"hugepages={HUGEPAGES}"]
        qemu_smp, kernel_smp = smp_args(self.smp)
        append += kernel_smp
        stream = (f"stream,id=n0,server={'on' if self.link_server else 'off'},"
                  f"addr.type=unix,addr.path={self.link}")
        return [
            QEMU, "-machine", "q35", *qemu_smp, "-cpu", "qemu64",
            "-m", str(self.mem_mb), "-nodefaults", "-no-user-config",
            "-display", "none", "-no-reboot",
            "-kernel", os.path.join(GUEST_DIR, "kernel", "boot", f"vmlinux-{abi}"),
            "-initrd", os.path.join(GUEST_DIR, "initramfs.cpio.gz"),
            "-append", " ".join(append),
            "-serial", f"file:{self.console_log}",
            "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=root,mount_tag=hostroot",
            "-netdev", stream,
            "-device", f"virtio-net-pci,netdev=n0,mac={self.mac},speed=10000,duplex=full",
            "-device", "virtio-serial-pci",
            "-chardev", f"socket,id=ctl,path={self.ctl_path},server=on,wait=off",
            "-device", f"virtserialport,chardev=ctl,name={PORT_NAME}",
            "-device", "virtio-rng-pci",
        ]

    def start(self):
        """Start QEMU (returns at once; see wait_ready). Call from the main thread."""
        assert self.proc is None, "guest already started"
        self.boots += 1
        suffix = "" if self.boots == 1 else f".boot{self.boots}"
        self.console_log = os.path.join(self.logdir, f"{self.name}-console{suffix}.log")
        for path in (self.ctl_path,) + ((self.link,) if self.link_server else ()):
            if os.path.exists(path):
                os.unlink(path)
        self._hello.clear()
        self._dead = None
        self._pending = {}
        self._jobs = set()
        self._no_kmemleak = False
        qlog = open(os.path.join(self.logdir, f"{self.name}-qemu{suffix}.log"), "w")
        self._t0 = time.monotonic()
        self.proc = subprocess.Popen(self.qemu_cmdline(), stdin=subprocess.DEVNULL,
                                     stdout=qlog, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=_qemu_preexec)
        qlog.close()
        with _live_lock:
            _live.add(self.proc)
        self.log(f"[{self.name}] qemu started (pid {self.proc.pid}), console: "
                 f"{os.path.relpath(self.console_log, self.top)}")

    def wait_path(self, path, timeout):
        """Wait until QEMU has created the socket at path (bounded)."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            if self.proc.poll() is not None:
                raise GuestDead(f"[{self.name}] qemu exited with {self.proc.returncode}"
                                f" before creating {path}; see {self.qemu_log_tail()}")
            if time.monotonic() > deadline:
                raise GuestError(f"[{self.name}] {path} not created within {timeout}s")
            time.sleep(0.05)

    def connect(self, timeout=10):
        """Connect to the agent's control socket. QEMU binds the socket's
        path before it listens on it: a connect in between is refused, so
        it is tried again until timeout."""
        deadline = time.monotonic() + timeout
        self.wait_path(self.ctl_path, timeout)
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.ctl_path)
                break
            except ConnectionRefusedError:
                sock.close()
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise GuestError(f"[{self.name}] control socket {self.ctl_path} "
                                     f"refused connections for {timeout}s") from None
                time.sleep(0.05)
        self._sock = sock
        threading.Thread(target=self._reader, args=(self._sock,), daemon=True,
                         name=f"ctl-{self.name}").start()

    def wait_ready(self, timeout=120):
        """Wait for the agent's hello; raise GuestError with the console tail if
        it does not come within timeout seconds."""
        deadline = time.monotonic() + timeout
        while not self._hello.wait(0.2):
            if self._dead:
                raise GuestDead(f"[{self.name}] died while booting: {self._dead}\n"
                                f"{self.console_tail()}")
            if time.monotonic() > deadline:
                raise GuestError(f"[{self.name}] not ready within {timeout}s\n"
                                 f"{self.console_tail()}")
        self.boot_time = time.monotonic() - self._t0
        self.log(f"[{self.name}] ready in {self.boot_time:.1f}s (guest uptime {self._uptime:.1f}s)")

    def boot(self, timeout=120):
        self.start()
        self.connect()
        self.wait_ready(timeout)

    def shutdown(self, timeout=20):
        """Power the guest off; kill QEMU if it is still there after timeout s."""
        if self.proc is None:
            return
        if self.proc.poll() is None and not self._dead:
            try:
                # No init system here: sysrq powers off at once (all state is tmpfs).
                self.request({"cmd": "echo o > /proc/sysrq-trigger", "timeout": 5},
                             timeout=2, expect_reply=False)
            except GuestError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.log(f"[{self.name}] did not power off within {timeout}s: killing qemu")
        self.kill()

    def kill(self):
        """Kill QEMU at once."""
        if self.proc is not None:
            _kill_group(self.proc)
            self.proc = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._mark_dead("killed by host")

    def alive(self, timeout=15):
        """True if QEMU runs and the agent answers a trivial command in time."""
        if self.proc is None or self.proc.poll() is not None or self._dead:
            return False
        try:
            return self.run("true", timeout=timeout, check=False).ok
        except GuestError:
            return False

    # ---- control channel ---------------------------------------------------

    def _reader(self, sock):
        buf = b""
        try:
            while True:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self._dispatch(json.loads(line))
        except OSError:
            pass
        rc = self.proc.poll() if self.proc else None
        self._mark_dead("control channel closed" + (f", qemu exit {rc}" if rc is not None else ""))

    def _dispatch(self, msg):
        if "hello" in msg:
            # Also sent when the agent restarts after a crash; pending requests
            # of the previous agent will never be answered.
            if self._hello.is_set():
                self._fail_pending("agent restarted")
            self._uptime = msg.get("uptime", 0.0)
            self._clock_zero = time.monotonic() - self._uptime
            self._clock_ahead = 0.0
            self._hello.set()
            return
        with self._lock:
            slot = self._pending.pop(msg.get("id"), None)
        if slot is not None:
            slot[1] = msg
            slot[0].set()

    def _mark_dead(self, why):
        if self._dead is None:
            self._dead = why
        self._fail_pending(why)

    def _fail_pending(self, why):
        with self._lock:
            pending, self._pending = self._pending, {}
        for slot in pending.values():
            slot[1] = {"dead": why}
            slot[0].set()

    def request(self, req, timeout, expect_reply=True):
        """Send one request; return the agent's reply dict. timeout bounds the
        request's own work; REPLY_MARGIN more is allowed before GuestHung."""
        if self._dead or self._sock is None:
            raise GuestDead(f"[{self.name}] guest is down ({self._dead})")
        rid = next(self._ids)
        slot = [threading.Event(), None]
        with self._lock:
            self._pending[rid] = slot
        data = (json.dumps(dict(req, id=rid)) + "\n").encode()
        try:
            with self._send_lock:
                self._sock.sendall(data)
        except OSError as e:
            self._mark_dead(f"send failed: {e}")
            raise GuestDead(f"[{self.name}] control channel broken: {e}") from None
        if not expect_reply:
            return None
        if not slot[0].wait(timeout + REPLY_MARGIN):
            with self._lock:
                self._pending.pop(rid, None)
            raise GuestHung(f"[{self.name}] agent did not answer within "
                            f"{timeout + REPLY_MARGIN:.0f}s: {req}")
        reply = slot[1]
        if "dead" in reply:
            raise GuestDead(f"[{self.name}] guest went down during {req}: {reply['dead']}\n"
                            f"{self.console_tail()}")
        if "error" in reply:
            raise GuestError(f"[{self.name}] agent error for {req}:\n{reply['error']}")
        return reply

    @staticmethod
    def _result(cmd, reply):
        return Result(cmd, reply["rc"], reply["out"], reply["err"], reply["t"])

    # ---- commands ------------------------------------------------------------

    def run(self, cmd, timeout=60, check=True):
        """Run cmd with bash -c in the guest (cwd: the repo top) and return a
        Result; raise CommandFailed on non-zero rc when check. A command still
        running after timeout s is killed with its process group (rc 124)."""
        timeout *= TIME_SCALE
        res = self._result(cmd, self.request({"cmd": cmd, "timeout": timeout}, timeout))
        if check and not res.ok:
            raise CommandFailed(self.name, cmd, res)
        return res

    def spawn(self, cmd, timeout=300):
        """Start cmd in the background; it is killed after timeout s."""
        timeout *= TIME_SCALE
        reply = self.request({"cmd": cmd, "timeout": timeout, "bg": True}, 10)
        job = Job(self, reply["job"], cmd, timeout)
        self._jobs.add(job)
        return job

    def kill_jobs(self):
        for job in list(self._jobs):
            job.kill()

    def gid_index(self, dev, addr=None, timeout=30):
        """Index of the RoCE v2 GID for addr (default: this guest's IPv4
        address) in port 1's table of dev, waiting for the RDMA core to add
        it; AssertionError if it never comes as a RoCE v2 entry."""
        ip = ipaddress.ip_address(addr or self.ip)
        if ip.version == 4:
            ip = ipaddress.IPv6Address(f"::ffff:{ip}")
        gid = ip.exploded
        base = f"/sys/class/infiniband/{dev}/ports/1"
        self.wait_for(f"grep -qx {gid} {base}/gids/*", timeout=timeout)
        out = self.run(f"cd {base} && for f in $(grep -lx {gid} gids/*); do "
                       f"echo ${{f#gids/}} $(cat gid_attrs/types/${{f#gids/}}); "
                       f"done").out
        for line in out.splitlines():
            idx, kind = line.split(" ", 1)
            if kind == "RoCE v2":
                return int(idx)
        raise AssertionError(f"[{self.name}] no RoCE v2 GID {gid} on {dev}: {out}")

    def wait_for(self, cmd, timeout=30, interval=0.5):
        """Retry the shell condition cmd until it succeeds; return its Result.
        Raise TimeoutError with the last output if it never does in timeout s."""
        deadline = time.monotonic() + timeout * TIME_SCALE
        while True:
            left = deadline - time.monotonic()
            res = self.run(cmd, timeout=max(left / TIME_SCALE, 5), check=False)
            if res.ok:
                return res
            if time.monotonic() + interval > deadline:
                raise TimeoutError(f"[{self.name}] condition not met within {timeout}s: {cmd}\n"
                                   f"last rc={res.rc}\n{res.out}{res.err}")
            time.sleep(interval)

    def kmsg(self):
        """Kernel log records since the previous call (the first call returns the
        boot log): list of {"level","seq","ts","text"}. Also appended to
        <logdir>/<guest>-kmsg.log."""
        reply = self.request({"op": "kmsg"}, 15)
        records = reply["records"]
        self._look_at_clock(reply["uptime"])
        if records:
            with open(self.kmsg_log, "a") as f:
                for r in records:
                    f.write(f"<{r['level']}>[{r['ts'] / 1e6:12.6f}] {r['text']}\n")
        return records

    def _look_at_clock(self, uptime):
        """Sets clock_jump: how many seconds the guest's clock gained on
        the host's since the previous look. Under TCG the guest's TSC is
        the host's raw TSC, which the host itself may not trust (a VM's,
        after a pause or a migration): it can leap hours ahead, and the
        guest's kernel then sees timers hours late (RCU stall reports)
        and its processes see time fly. A reply's delay only makes the
        guest look behind, by the reply's transit time."""
        ahead = uptime - (time.monotonic() - self._clock_zero)
        self.clock_jump = ahead - self._clock_ahead
        self._clock_ahead = ahead

    def kmemleak(self, timeout=300):
        """Have kmemleak scan now (a debug kernel's, scripts/debug.config;
        a kernel without it has no such file) and return the leaks it
        reports: a list of lists of lines, each "unreferenced object" with
        its backtrace. Those are then cleared, so each is reported once.
        The scan's own kmsg line ("N new suspected memory leaks") goes
        to whoever reads kmsg next: call this before kmsg()."""
        if self._no_kmemleak:
            return []
        res = self.run(KMEMLEAK_SCRIPT, timeout=timeout, check=False)
        # A kernel without kmemleak has no file from boot on (debugfs is
        # mounted before the agent starts): no request after every test.
        self._no_kmemleak = res.rc == KMEMLEAK_ABSENT
        return leaks(res.out)

    # ---- diagnostics ---------------------------------------------------------

    def console_tail(self, lines=40):
        if not self.console_log or not os.path.exists(self.console_log):
            return "(no console log)"
        with open(self.console_log, errors="replace") as f:
            tail = f.read().splitlines()[-lines:]
        return f"--- last {len(tail)} console lines ({self.console_log}) ---\n" + "\n".join(tail)

    def qemu_log_tail(self):
        suffix = "" if self.boots == 1 else f".boot{self.boots}"
        path = os.path.join(self.logdir, f"{self.name}-qemu{suffix}.log")
        with open(path, errors="replace") as f:
            return f"{path}:\n{f.read()[-2000:]}"


# Guest.kmemleak(): the scan is synchronous; reading lists what it found.
# Its exit status when the kernel has no kmemleak.
KMEMLEAK_ABSENT = 3
KMEMLEAK_SCRIPT = r"""
k=/sys/kernel/debug/kmemleak
[ -w $k ] || exit 3
echo scan > $k 2>/dev/null || exit 0
cat $k
echo clear > $k
"""

# Run in a guest between tests: back to the state right after boot. It runs
# after every test, so it forks little (each process costs tens of ms under
# TCG): globs over /sys and /run instead of listing pipelines, and one
# `tc -batch` and one `ip -batch` (-force: every line runs, as when they
# were separate commands).
RESET_SCRIPT = r"""
set -- /sys/class/infiniband/*
if [ -e "$1" ]; then
    for dev in $(rdma link show 2>/dev/null | awk '$1 == "link" { sub("/.*", "", $2); print $2 }' | sort -u); do
        rdma link delete "$dev" 2>/dev/null || true
    done
fi
# The MTU first: deleting a test's root qdisc brings a new default one,
# and fq_codel sizes its quantum from the MTU it is made at.
read -r mtu < /sys/class/net/eth0/mtu
[ "$mtu" = 1500 ] || ip link set eth0 mtu 1500 || true
# A qdisc a test added goes next: the packets it holds keep the module in.
printf 'qdisc del dev eth0 root\nqdisc del dev eth0 ingress\n' |
    tc -force -batch - 2>/dev/null || true
# rdma_rxe's packets waiting for an address to resolve sit in the
# neighbour's queue, their destructor its module's text, and rxe 6.1 does
# not wait for them at rmmod (docs/INTEROP.md): the flush frees them first.
ip neigh flush all 2>/dev/null || true
for m in sroce rdma_rxe; do
    if [ -e /sys/module/$m ]; then rmmod $m || echo "reset: rmmod $m failed" >&2; fi
done
# What `ip netns list` and `ip link show` would list: /run/netns, /sys/class/net.
for ns in /run/netns/*; do
    [ ! -e "$ns" ] || ip netns delete "${ns##*/}" || true
done
# eth0 comes back from a namespace once the namespace's last process is
# gone (the kernel's cleanup runs later); then the RDMA core's shared mode,
# which it refuses while another namespace than init_net remains.
for i in $(seq 150); do [ -e /sys/class/net/eth0 ] && break; sleep 0.2; done
if ! rdma system show netns 2>/dev/null | grep -q shared; then
    for i in $(seq 150); do rdma system set netns shared 2>/dev/null && break; sleep 0.2; done
fi
for dev in /sys/class/net/*; do
    [ -d "$dev" ] || continue  # not a device: bonding_masters
    dev=${dev##*/}
    case "$dev" in lo|eth0) ;; *) ip link delete "$dev" 2>/dev/null || true ;; esac
done
ip -force -batch - <<END
link set eth0 up mtu 1500
addr flush dev eth0 scope global
addr add {ip}/24 dev eth0
addr add {ip6}/64 dev eth0 nodad
END
set -- /sys/class/infiniband/*
[ ! -e "$1" ] || { echo "reset: rdma devices left: ${*##*/}" >&2; exit 1; }
for m in sroce rdma_rxe; do
    [ ! -e /sys/module/$m ] || { echo "reset: module $m still loaded" >&2; exit 1; }
done
"""


class Bench:
    """The pair of guests joined by one link. Use as a context manager or call
    start()/stop(). The guest tests get it as the `bench` fixture
    (tools/testing/guest/conftest.py)."""

    def __init__(self, driver="sroce", logdir=None, top=TOP, log=print, smp=SMP):
        if driver not in ("sroce", "rxe"):
            raise ValueError(f"driver must be sroce or rxe, not {driver!r}")
        self.driver, self.top, self.log = driver, top, log
        self.smp = smp
        self.logdir = logdir or os.path.join(BUILD, "logs", time.strftime("%Y%m%d-%H%M%S"))
        os.makedirs(self.logdir, exist_ok=True)
        self.rundir = self._make_rundir()
        link = os.path.join(self.rundir, "link.sock")
        self.a = Guest("a", 1, self.logdir, self.rundir, link, True, top, log=log, smp=smp)
        self.b = Guest("b", 2, self.logdir, self.rundir, link, False, top, log=log, smp=smp)
        self.guests = (self.a, self.b)

    @staticmethod
    def _make_rundir():
        runs = os.path.join(BUILD, "run")
        # Left by a runner that was SIGKILLed (its QEMUs died with it).
        for name in os.listdir(runs) if os.path.isdir(runs) else ():
            if name.isdigit() and not os.path.exists(f"/proc/{name}"):
                shutil.rmtree(os.path.join(runs, name), ignore_errors=True)
        path = os.path.join(runs, str(os.getpid()))
        # sun_path holds 108 bytes; a deep clone path falls back to /tmp.
        if len(os.path.join(path, "link.sock")) >= 100:
            return tempfile.mkdtemp(prefix="sroce-run-")
        os.makedirs(path, exist_ok=True)
        return path

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self, timeout=180):
        prepare_modules(self.top, self.log)
        # What the guests run from the work tree besides the module.
        for built in ("build/libsroce/libsroce-rdmav34.so",
                      "build/tools/sroce-objects"):
            if not os.path.exists(os.path.join(self.top, built)):
                self.log(f"warning: {built} not found (run make): "
                         "tests that need it will fail")
        self._boot(self.guests, timeout)

    def _boot(self, guests, timeout):
        timeout *= TIME_SCALE
        t0 = time.monotonic()
        # A listens on the link socket, B connects to it (no reconnect in QEMU
        # 7.2), so A's QEMU must be up first; both then boot in parallel.
        for g in guests:
            g.start()
            if g.link_server:
                g.wait_path(g.link, 10)
        for g in guests:
            g.connect()
        for g in guests:
            g.wait_ready(max(1.0, timeout - (time.monotonic() - t0)))
        for g in guests:
            # What leaked while booting is the kernel's, not a test's.
            for leak in g.kmemleak():
                self.log(f"warning: boot leak: [{g.name}] {leak[0]}")
            boot_log = g.kmsg()
            bad = offending(boot_log)
            for r in bad:
                self.log(f"warning: boot log: [{g.name}] <{r['level']}> {r['text']}")
        self.log(f"guests {'+'.join(g.name for g in guests)} ({self.smp} vCPU) ready in "
                 f"{time.monotonic() - t0:.1f}s")

    def reboot(self, guest, timeout=180):
        """Restart a guest. B reconnects to A's link socket; A's restart makes a
        new socket, so B restarts with it."""
        group = self.guests if guest is self.a else (guest,)
        for g in group:
            g.kill()
        self._boot(group, timeout)

    def stop(self):
        for g in self.guests:
            g.shutdown()
        shutil.rmtree(self.rundir, ignore_errors=True)

    # ---- helpers for tests ---------------------------------------------------

    def attach(self, guest, name=None, netdev="eth0", driver=None):
        """rdma link add NAME type DRIVER netdev NETDEV; returns NAME.
        DRIVER: this run's driver unless given (tools/testing/bench/perf.py
        attaches both in turn)."""
        driver = driver or self.driver
        name = name or f"{driver}0"
        if driver == "rxe":
            guest.run("modprobe rdma_rxe")
        # sroce is loaded by the kernel itself (request_module rdma-link-sroce).
        guest.run(f"rdma link add {name} type {driver} netdev {netdev}")
        return name

    def detach(self, guest, name):
        guest.run(f"rdma link delete {name}")

    def reset(self, guest):
        """Back to the post-boot state; raise CommandFailed if that is impossible
        (e.g. the module cannot be unloaded)."""
        guest.kill_jobs()
        guest.run(RESET_SCRIPT.replace("{ip}", guest.ip).replace("{ip6}", guest.ip6),
                  timeout=120)
