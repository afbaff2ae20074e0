#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mpirun's launcher between the guests, instead of an ssh server.

    mpi_rsh.py --serve ADDR PORT     on guest B: run the command lines sent
    mpi_rsh.py HOST COMMAND...       mpirun's plm_rsh_agent, on guest A

Open MPI's rsh launcher starts its daemon (orted) on another node by
running `AGENT HOST COMMAND...`, as it would `ssh HOST COMMAND...`: the
words after the host joined by spaces are one shell command line. As the
agent, this script sends that line to the server on HOST:PORT (PORT from
MPI_RSH_PORT) and relays the command's stdout, stderr and exit status as
its own, as ssh does; mpirun then talks to orted over its own TCP
connection. The server runs each line with /bin/sh -c in its own process
group, stdin from /dev/null (orted reads none), and kills the group when
the agent goes away (mpirun killed it).

It runs whatever it is sent, as root: the test starts it on the guests'
private link address only, as a bench job, and the guests' reset kills it.

The wire: the agent sends the command line and a newline, then keeps its
side open (its closing means "gone"); the server answers with frames of a
kind byte (o: stdout, e: stderr, x: exit status as decimal text) and a
4-byte big-endian length.
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import threading

PORT_ENV = "MPI_RSH_PORT"
DEFAULT_PORT = 7410


def send_frame(sock, lock, kind, data):
    with lock:
        sock.sendall(kind + struct.pack(">I", len(data)) + data)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def serve_one(conn):
    lock = threading.Lock()
    with conn:
        f = conn.makefile("rb")
        line = f.readline()
        if not line.endswith(b"\n"):
            return
        proc = subprocess.Popen(["/bin/sh", "-c", line[:-1].decode()],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)

        def pump(pipe, kind):
            for chunk in iter(lambda: os.read(pipe.fileno(), 65536), b""):
                try:
                    send_frame(conn, lock, kind, chunk)
                except OSError:
                    break

        def watch_peer():
            # The agent never sends more: EOF or an error means it is gone.
            try:
                conn.recv(1)
            except OSError:
                pass
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass

        pumps = [threading.Thread(target=pump, args=(proc.stdout, b"o")),
                 threading.Thread(target=pump, args=(proc.stderr, b"e"))]
        for t in pumps:
            t.start()
        threading.Thread(target=watch_peer, daemon=True).start()
        rc = proc.wait()
        for t in pumps:
            t.join()
        # A signal's death as a shell reports it.
        rc = 128 - rc if rc < 0 else rc
        try:
            send_frame(conn, lock, b"x", str(rc).encode())
        except OSError:
            pass


def serve(addr, port):
    srv = socket.create_server((addr, port), reuse_port=False)
    print(f"mpi_rsh: serving on {addr}:{port}", flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve_one, args=(conn,), daemon=True).start()


def agent(host, words):
    port = int(os.environ.get(PORT_ENV, DEFAULT_PORT))
    sock = socket.create_connection((host, port), timeout=30)
    sock.settimeout(None)
    sock.sendall(" ".join(words).encode() + b"\n")
    out = {b"o": sys.stdout.buffer, b"e": sys.stderr.buffer}
    while True:
        head = recv_exact(sock, 5)
        if head is None:
            sys.stderr.write(f"mpi_rsh: {host}:{port} closed without an exit status\n")
            return 255
        kind, length = head[:1], struct.unpack(">I", head[1:])[0]
        data = recv_exact(sock, length) if length else b""
        if data is None:
            return 255
        if kind == b"x":
            return int(data)
        out[kind].write(data)
        out[kind].flush()


def main(argv):
    if len(argv) == 4 and argv[1] == "--serve":
        serve(argv[2], int(argv[3]))
        return 0
    # ssh-like options mpirun might pass before the host: none expected.
    if len(argv) < 3 or argv[1].startswith("-"):
        sys.stderr.write(f"usage: {argv[0]} --serve ADDR PORT | HOST COMMAND...\n")
        return 2
    return agent(argv[1], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
