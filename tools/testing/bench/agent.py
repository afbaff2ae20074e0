#!/usr/bin/python3
"""Bench guest agent: serves the host over the virtio-serial port
org.sroce.ctl with line-delimited JSON.

Requests (each carries an integer "id", echoed in its reply):
  {"id":N, "cmd":"<bash>", "timeout":S}            -> {"id","rc","out","err","t"}
  {"id":N, "cmd":"<bash>", "timeout":S, "bg":true} -> {"id","job":J}
  {"id":N, "op":"wait", "job":J, "timeout":S}      -> result as above, or {"id","running":true}
  {"id":N, "op":"kill", "job":J}                   -> result of the killed job
  {"id":N, "op":"kmsg"}                            -> {"id","records":[{"level","seq","ts","text"}],"uptime":U}
On start it sends {"hello":"sroce-agent","uptime":U}; U is /proc/uptime's
first field, the guest's clock, which the host compares with its own. A
command that outlives its timeout has its whole process group killed and
gets rc 124.
Each request runs in its own thread; no request can take the agent down.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

PORT_NAME = "org.sroce.ctl"
OUT_LIMIT = 4 << 20  # bytes kept per stream; more is cut with a marker
TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def find_port():
    for name_file in glob.glob("/sys/class/virtio-ports/*/name"):
        with open(name_file) as f:
            if f.read().strip() == PORT_NAME:
                return "/dev/" + os.path.basename(os.path.dirname(name_file))
    raise SystemExit(f"agent: no virtio port named {PORT_NAME}")


class Job:
    """One bash command. stdout/stderr go to files, not pipes, so a daemon the
    command leaves behind cannot keep us waiting for EOF."""

    def __init__(self, cmd, timeout):
        self.timeout = timeout
        self.out = tempfile.TemporaryFile(dir="/tmp")
        self.err = tempfile.TemporaryFile(dir="/tmp")
        self.start = time.monotonic()
        self.proc = subprocess.Popen(["bash", "-c", cmd], stdin=subprocess.DEVNULL,
                                     stdout=self.out, stderr=self.err, cwd=TOP,
                                     start_new_session=True)
        self.done = threading.Event()
        self.killed = False
        self.result = None
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self):
        # Blocked in waitpid(), with a timer for the timeout: Popen.wait()
        # with a timeout polls every 50 ms, twenty wake-ups a second in
        # each guest, for nothing, while a test measures.
        timer = None
        if self.timeout is not None:
            timer = threading.Timer(self.timeout, self._expire)
            timer.daemon = True
            timer.start()
        rc = self.proc.wait()
        if timer is not None:
            timer.cancel()
        if self.killed:
            rc = 124 if rc is None or rc < 0 else rc
        self.result = {"rc": rc, "out": self._read(self.out), "err": self._read(self.err),
                       "t": round(time.monotonic() - self.start, 3)}
        if self.killed:
            self.result["killed"] = True
        self.done.set()

    def _expire(self):
        if self.proc.returncode is None:
            self.kill()

    def kill(self):
        self.killed = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    @staticmethod
    def _read(f):
        f.seek(0)
        data = f.read(OUT_LIMIT + 1)
        f.close()
        text = data[:OUT_LIMIT].decode("utf-8", "replace")
        return text + "\n[agent: output truncated]\n" if len(data) > OUT_LIMIT else text


class Kmsg:
    """Reads /dev/kmsg without blocking; the open fd is the cursor, so each
    call returns the records logged since the previous call (boot log first)."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        self.lock = threading.Lock()

    def read(self):
        records = []
        with self.lock:
            while True:
                try:
                    raw = os.read(self.fd, 16384)
                except BlockingIOError:
                    break
                except BrokenPipeError:
                    # Ring buffer overran our cursor; the read resumes at the oldest record.
                    records.append({"level": 4, "seq": -1, "ts": 0,
                                    "text": "agent: kmsg records lost (ring buffer overrun)"})
                    continue
                if not raw:
                    break
                head, _, body = raw.decode("utf-8", "replace").partition(";")
                fields = head.split(",")
                # Continuation lines ("\n KEY=value") are dictionary data: drop them.
                text = body.split("\n")[0]
                records.append({"level": int(fields[0]) & 7, "seq": int(fields[1]),
                                "ts": int(fields[2]), "text": text})
        return records


class Agent:
    def __init__(self, port):
        self.port = port
        # A virtio port admits a single open file: read and write through it.
        self.fd = os.open(port, os.O_RDWR)
        self.wlock = threading.Lock()
        self.jobs = {}
        self.next_job = 1
        self.jobs_lock = threading.Lock()
        self.kmsg = Kmsg()

    def send(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        with self.wlock:
            while data:
                data = data[os.write(self.fd, data):]

    def serve(self):
        self.send({"hello": "sroce-agent", "uptime": uptime()})
        buf = b""
        while True:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                # Host side not connected (yet, or any more): wait for it.
                time.sleep(0.2)
                continue
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.strip():
                    threading.Thread(target=self.handle, args=(line,), daemon=True).start()

    def handle(self, line):
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            reply = self.dispatch(req)
        except Exception:
            reply = {"error": traceback.format_exc()}
        reply["id"] = rid
        try:
            self.send(reply)
        except OSError:
            traceback.print_exc()

    def dispatch(self, req):
        op = req.get("op", "run")
        if op == "run":
            job = Job(req["cmd"], float(req.get("timeout", 60)))
            if req.get("bg"):
                with self.jobs_lock:
                    jid = self.next_job
                    self.next_job += 1
                    self.jobs[jid] = job
                return {"job": jid}
            job.done.wait()
            return dict(job.result)
        if op == "wait":
            job = self.jobs[req["job"]]
            if not job.done.wait(float(req.get("timeout", 60))):
                return {"running": True}
            with self.jobs_lock:
                self.jobs.pop(req["job"], None)
            return dict(job.result)
        if op == "kill":
            job = self.jobs[req["job"]]
            job.kill()
            job.done.wait()
            with self.jobs_lock:
                self.jobs.pop(req["job"], None)
            return dict(job.result)
        if op == "kmsg":
            return {"records": self.kmsg.read(), "uptime": uptime()}
        raise ValueError(f"unknown op {op!r}")


def uptime():
    """Seconds since boot by the guest's clock."""
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def main():
    Agent(find_port()).serve()


if __name__ == "__main__":
    sys.exit(main())
