# SPDX-License-Identifier: GPL-2.0
"""Capture RoCEv2 frames that rdma_rxe sends and receives between the two
guests, over IPv4 and IPv6, and write them as the ICRC known-answer vectors
of the KUnit suite (kunit/icrc_vectors.h):

  /usr/bin/python3 -m tools.testing.bench.capture_rxe [--out kunit/icrc_vectors.h]

Traffic: ibv_rc_pingpong, ibv_ud_pingpong, perftest's write, read and
atomic tests, and sroce-integrity over RC and UC (sends and writes with
immediate), with sizes that give single- and multi-packet messages and a
three-byte pad. Frames are taken with an AF_PACKET socket on guest A's eth0
(tools/testing/bench/lib/roce.py), at most two per (IP version, opcode,
pad); each is checked against the ICRC computed independently in Python
before it is kept.
"""
import argparse
import datetime
import json
import os
import sys

from .guests import TOP, Bench, install_signal_handlers
from .lib import roce

OPNAMES = {
    0x00: "RC_SEND_FIRST", 0x01: "RC_SEND_MIDDLE", 0x02: "RC_SEND_LAST",
    0x04: "RC_SEND_ONLY", 0x06: "RC_WRITE_FIRST", 0x07: "RC_WRITE_MIDDLE",
    0x08: "RC_WRITE_LAST", 0x0a: "RC_WRITE_ONLY", 0x0c: "RC_READ_REQ",
    0x0d: "RC_READ_RESP_FIRST", 0x0e: "RC_READ_RESP_MIDDLE",
    0x0f: "RC_READ_RESP_LAST", 0x10: "RC_READ_RESP_ONLY", 0x11: "RC_ACK",
    0x12: "RC_ATOMIC_ACK", 0x13: "RC_CMP_SWAP", 0x14: "RC_FETCH_ADD",
    0x03: "RC_SEND_LAST_IMM", 0x05: "RC_SEND_ONLY_IMM",
    0x09: "RC_WRITE_LAST_IMM", 0x0b: "RC_WRITE_ONLY_IMM",
    0x20: "UC_SEND_FIRST", 0x21: "UC_SEND_MIDDLE", 0x22: "UC_SEND_LAST",
    0x23: "UC_SEND_LAST_IMM", 0x24: "UC_SEND_ONLY", 0x25: "UC_SEND_ONLY_IMM",
    0x26: "UC_WRITE_FIRST", 0x27: "UC_WRITE_MIDDLE", 0x28: "UC_WRITE_LAST",
    0x29: "UC_WRITE_LAST_IMM", 0x2a: "UC_WRITE_ONLY", 0x2b: "UC_WRITE_ONLY_IMM",
    0x64: "UD_SEND_ONLY", 0x65: "UD_SEND_ONLY_IMM",
}

PERF = "-d rxe0 -x {gid} -F -n 5 -m 1024"
INTEGRITY = "build/tools/sroce-integrity"

# (server command, client command): {gid} and {peer} are filled in.
RUNS = [
    ("ibv_rc_pingpong -d rxe0 -g {gid} -s 13 -n 1 -m 1024",
     "ibv_rc_pingpong -d rxe0 -g {gid} -s 13 -n 1 -m 1024 {peer}"),
    ("ibv_rc_pingpong -d rxe0 -g {gid} -s 2500 -n 1 -m 1024",
     "ibv_rc_pingpong -d rxe0 -g {gid} -s 2500 -n 1 -m 1024 {peer}"),
    ("ibv_ud_pingpong -d rxe0 -g {gid} -s 100 -n 1",
     "ibv_ud_pingpong -d rxe0 -g {gid} -s 100 -n 1 {peer}"),
    (f"ib_write_lat {PERF} -s 13", f"ib_write_lat {PERF} -s 13 {{peer}}"),
    (f"ib_write_bw {PERF} -s 2500", f"ib_write_bw {PERF} -s 2500 {{peer}}"),
    (f"ib_read_lat {PERF} -s 13", f"ib_read_lat {PERF} -s 13 {{peer}}"),
    (f"ib_read_lat {PERF} -s 2500", f"ib_read_lat {PERF} -s 2500 {{peer}}"),
    (f"ib_atomic_lat {PERF} -A FETCH_AND_ADD",
     f"ib_atomic_lat {PERF} -A FETCH_AND_ADD {{peer}}"),
    (f"ib_atomic_lat {PERF} -A CMP_AND_SWAP",
     f"ib_atomic_lat {PERF} -A CMP_AND_SWAP {{peer}}"),
    # Sends and writes with immediate, inline sends, and the same over UC:
    # the opcodes no perftest or pingpong program sends.
    (f"{INTEGRITY} -d rxe0 -g {{gid}} -p 18517 -t 60",
     f"{INTEGRITY} -d rxe0 -g {{gid}} -p 18517 -t 60 -q 1 -n 2 -S 5,2500 {{peer}}"),
    (f"{INTEGRITY} -d rxe0 -g {{gid}} -p 18517 -t 60",
     f"{INTEGRITY} -d rxe0 -g {{gid}} -p 18517 -t 60 -u -q 1 -n 2 -S 5,2500 {{peer}}"),
]


def run_pair(bench, server, client, gid_b, gid_a):
    a, b = bench.a, bench.b
    srv = b.spawn(server.format(gid=gid_b), timeout=120)
    port = 18517 if "-p 18517" in server else 18515
    try:
        b.wait_for(f"ss -ltn | grep -q ':{port} '", timeout=60)
    except TimeoutError:
        res = srv.kill()
        raise RuntimeError(f"server did not listen: {server}\n{res.out}{res.err}")
    a.run(client.format(gid=gid_a, peer=b.ip), timeout=120)
    srv.wait(60)


def capture(bench):
    a, b = bench.a, bench.b
    for g in (a, b):
        bench.attach(g)
        g.wait_for("rdma link show rxe0/1 | grep -q 'state ACTIVE'", timeout=60)
    gids = {g.name: (g.gid_index("rxe0"), g.gid_index("rxe0", g.ip6))
            for g in (a, b)}
    sniffer = f"{TOP}/tools/testing/bench/lib/roce.py"
    a.run("rm -f /tmp/sniff.stop")
    job = a.spawn(f"exec /usr/bin/python3 {sniffer} sniff eth0 /tmp/sniff.stop 2",
                  timeout=1800)
    for v in (0, 1):
        for server, client in RUNS:
            run_pair(bench, server, client, gids["b"][v], gids["a"][v])
    a.run("touch /tmp/sniff.stop")
    out = job.wait(60).out
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def c_array(name, data):
    lines = [f"static const u8 {name}[] = {{"]
    for i in range(0, len(data), 12):
        lines.append("\t" + ", ".join(f"0x{x:02x}" for x in data[i:i + 12]) + ",")
    lines.append("};")
    return "\n".join(lines)


# The shortest run of one byte written as a count rather than as bytes.
FILL_MIN = 16


def split_frame(f):
    """(head, fill byte, fill length) of a captured frame, less its pad and
    ICRC: ibv_*_pingpong payloads are one byte (0x7b) repeated, kept as a
    count instead of rows of the same byte; other payloads stay in the
    head as they are. The pad is zeros and the ICRC is kept as a number."""
    raw = bytes.fromhex(f["hex"])
    end = len(raw) - 4 - f["pad"]
    if raw[end:end + f["pad"]] != bytes(f["pad"]):
        sys.exit(f"pad bytes of a captured frame are not zero: {f}")
    start = end
    while start > 0 and raw[start - 1] == raw[end - 1]:
        start -= 1
    if end - start < FILL_MIN:
        return raw[:end], 0, 0
    return raw[:start], raw[end - 1], end - start


def write_header(path, frames, kernel, day=None):
    day = day or datetime.date.today().isoformat()
    out = [
        "/* SPDX-License-Identifier: GPL-2.0 */",
        "/*",
        " * ICRC known answers: RoCEv2 frames rdma_rxe sent between the two",
        f" * bench guests (Debian kernel {kernel}), captured on {day} by",
        " * tools/testing/bench/capture_rxe.py with an AF_PACKET socket on guest A's",
        " * eth0. Regenerate with that script; do not edit.",
        " *",
        " * Each frame is stored as its head (Ethernet header to the payload,",
        " * and the payload too unless it is one byte repeated), then @fill_len",
        " * bytes of @fill, @pad zero bytes and the ICRC, which the suite puts",
        " * back together into the frame as captured, byte for byte.",
        " */",
        "#ifndef SROCE_ICRC_VECTORS_H",
        "#define SROCE_ICRC_VECTORS_H",
        "",
        "#include <linux/types.h>",
        "",
    ]
    entries = []
    for i, f in enumerate(frames):
        name = f"rxe_head_{i}"
        head, fill, fill_len = split_frame(f)
        out += [c_array(name, head), ""]
        entries.append((name, f, fill, fill_len, bytes.fromhex(f["hex"])[-4:]))
    out += [
        "struct sroce_icrc_vector {",
        "\tconst char *what;",
        "\tu8 opcode;",
        "\tu8 pad;",
        "\tunsigned int fill_len;",
        "\tu8 fill;",
        "\tu32 icrc;\t\t/* the frame's last four bytes, little-endian */",
        "\tconst u8 *head;",
        "\tunsigned int head_len;",
        "};",
        "",
        "static const struct sroce_icrc_vector sroce_icrc_vectors[] = {",
    ]
    for name, f, fill, fill_len, icrc in entries:
        what = f"IPv{f['ver']} {OPNAMES.get(f['opcode'], hex(f['opcode']))}"
        out += [f"\t{{ \"{what}\", 0x{f['opcode']:02x}, {f['pad']}, "
                f"{fill_len}, 0x{fill:02x}, "
                f"0x{int.from_bytes(icrc, 'little'):08x},",
                f"\t  {name}, sizeof({name}) }},"]
    out += ["};", "", "#endif /* SROCE_ICRC_VECTORS_H */", ""]
    with open(path, "w") as fh:
        fh.write("\n".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(TOP, "kunit", "icrc_vectors.h"))
    args = ap.parse_args()
    install_signal_handlers()
    with Bench(driver="rxe") as bench:
        kernel = bench.a.run("uname -r").out.strip()
        frames = capture(bench)
    kept = []
    for f in frames:
        raw = bytes.fromhex(f["hex"])
        if roce.icrc(raw) != raw[-4:]:
            sys.exit(f"ICRC of a captured frame does not check: {f}")
        # One of each (IP version, opcode, pad): the first seen.
        if not any((k["ver"], k["opcode"], k["pad"]) ==
                   (f["ver"], f["opcode"], f["pad"]) for k in kept):
            kept.append(f)
    kept.sort(key=lambda f: (f["ver"], f["opcode"], f["pad"]))
    write_header(args.out, kept, kernel)
    for f in kept:
        print(f"IPv{f['ver']} {OPNAMES.get(f['opcode'], hex(f['opcode']))} "
              f"pad {f['pad']}: {len(f['hex']) // 2} bytes")
    print(f"{len(kept)} frames written to {args.out}")


if __name__ == "__main__":
    main()
