# SPDX-License-Identifier: GPL-2.0
"""IBA 1.5 RDMA FLUSH, answered: requests made by hand in guest B (which
has no RDMA device) to RC QPs in guest A (verbs/flush.py), and A's
answers as they come back on the wire.

No requester here can send a FLUSH: rdma-core 44 has no ibv_wr_flush()
and no kernel verb carries a placement type. The frames are what one
sends (rdma_rxe with a newer rdma-core, or a RoCE NIC): BTH (opcode
0x1c), FETH, RETH, ICRC (tools/testing/bench/lib/roce.py computes it).
Each is answered, as A19 has it and rdma_rxe 6.12 does, by a zero-length
RDMA READ Response Only carrying an ACK, or by a NAK:

- global visibility of a range of an MR with the flush right, then of
  the whole MR (the RETH's address and length then mean nothing), then
  the first again: the duplicate is answered again, from the responder's
  resources;
- an MR without the flush right, a range past the MR's end: NAK remote
  access error;
- persistence (sroce registers no persistent memory), a QP without the
  flush right: NAK invalid request;
- no placement type at all: nothing asked for, answered;
- a FLUSH with the ICRC rdma_rxe computes for it (over its headers twice,
  docs/INTEROP.md), which sroce takes from a FLUSH and counts
  (rx_rxe_flush_icrc): rxe (6.12) drops a FLUSH with the spec's ICRC, so
  it is sent its own in every case.

The test runs against rdma_rxe too, with the same expectations, on the
6.12 guests (rxe has FLUSH from 6.2). On 6.1 the core refuses the flush
right in a registration: sroce answers the cases that need no MR with
it, and the registration must fail with EINVAL.
"""
import json
import struct

import pytest

from tools.testing.bench.lib import roce
from tools.testing.bench.lib.rdma import counters, mapped_gid

pytestmark = pytest.mark.kernel("6.12")

TIMEOUT = 240
READ_RESP_ONLY = 0x10
ACK = 0x11
NAK_INVALID = 0x61
NAK_ACCESS = 0x62
GLOBAL, PERSISTENT = 1, 2
RANGE, WHOLE_MR = 0, 1
DUPLICATE = "duplicate"     # any MSN; rxe may leave it unanswered


def release(g):
    return tuple(int(x) for x in g.run("uname -r").out.split(".")[:2])


def flush(bench, qpn, psn, plt, sel, va, rkey, length, rxe_icrc):
    """A FLUSH frame from B to A, with the spec's ICRC or rxe's."""
    a, b = bench.a, bench.b
    t = roce.bth(0x1C, qpn, psn, ack_req=True) + \
        struct.pack("!I", sel << 4 | plt) + struct.pack("!QII", va, rkey, length)
    f = roce.frame(t, a.mac, b.mac, b.ip, a.ip)
    return roce.rxe_flush_icrc(f) if rxe_icrc else f


def answer(hexframe):
    """(opcode, QPN, PSN, AETH syndrome, MSN, payload bytes) of a frame A
    sent back, or None."""
    if hexframe is None:
        return None
    f = bytes.fromhex(hexframe)
    ip = 14 + (f[14] & 0xF) * 4
    udp_len = struct.unpack("!H", f[ip + 4:ip + 6])[0]
    bth = f[ip + 8:ip + 20]
    aeth = struct.unpack("!I", f[ip + 20:ip + 24])[0]
    pad = (bth[1] >> 4) & 3
    return (bth[0], struct.unpack("!I", bth[4:8])[0] & 0xFFFFFF,
            struct.unpack("!I", bth[8:12])[0] & 0xFFFFFF, aeth >> 24,
            aeth & 0xFFFFFF, udp_len - 8 - 12 - 4 - 4 - pad)


def cases(inf):
    """(QP, PSN, placement, selectivity, va, MR, length, rxe's ICRC, what
    comes back: (opcode, AETH syndrome, MSN or None))."""
    p = inf["rq_psn"]
    page = inf["size"]
    have = "flush" in inf["mrs"]
    fl = inf["mrs"].get("flush", [0, 0])
    out = []
    if have:
        out += [
            ("ok", p, GLOBAL, RANGE, fl[0] + 64, "flush", 256, False,
             (READ_RESP_ONLY, 0x1F, 1)),
            # The address is none of the MR's. (rxe refuses a length
            # over 2^31 whatever the selectivity: docs/INTEROP.md.)
            ("ok", p + 1, GLOBAL, WHOLE_MR, 0, "flush", 0, False,
             (READ_RESP_ONLY, 0x1F, 2)),
            # Its answer lost: answered again, not executed again. (rxe
            # 6.12 answers no duplicate FLUSH: docs/INTEROP.md.)
            ("ok", p, GLOBAL, RANGE, fl[0] + 64, "flush", 256, False,
             (READ_RESP_ONLY, 0x1F, DUPLICATE)),
            # As rdma_rxe sends it (docs/INTEROP.md).
            ("ok", p + 2, GLOBAL, RANGE, fl[0], "flush", 8, True,
             (READ_RESP_ONLY, 0x1F, 3)),
            ("past_mr", p, GLOBAL, RANGE, fl[0] + page - 8, "flush", 16, False,
             (ACK, NAK_ACCESS, 0)),
        ]
    mr = "flush" if have else "plain"
    out += [
        ("no_mr_right", p, GLOBAL, RANGE, inf["mrs"]["plain"][0], "plain", 64,
         False, (ACK, NAK_ACCESS, 0)),
        ("persistent", p, PERSISTENT, RANGE, inf["mrs"][mr][0], mr, 64, False,
         (ACK, NAK_INVALID, 0)),
        ("no_qp_right", p, GLOBAL, RANGE, inf["mrs"][mr][0], mr, 64, False,
         (ACK, NAK_INVALID, 0)),
        # Asks for nothing: answered, as rxe does.
        ("no_placement", p, 0, RANGE, inf["mrs"][mr][0], mr, 64, False,
         (READ_RESP_ONLY, 0x1F, 1)),
    ]
    return out


@pytest.mark.sroce("compares sroce's answers with rdma_rxe's")
@pytest.mark.parametrize("driver", ["sroce", "rxe"])
def test_flush_answers(bench, driver):
    a, b = bench.a, bench.b
    rel = release(a)
    if driver == "rxe" and rel < (6, 2):
        pytest.skip("rdma_rxe before 6.2 has no FLUSH")
    dev = bench.attach(a, driver=driver)
    a.run(f"ping -c 1 -W 5 {b.ip}")
    info, go = "/tmp/flush.info", "/tmp/flush.go"
    a.run(f"rm -f {info}* {go}")
    target = a.spawn(f"exec /usr/bin/python3 -m tools.testing.guest.verbs.flush "
                     f"{dev} {a.gid_index(dev)} {mapped_gid(b.ip)} {info} {go}",
                     timeout=TIMEOUT)
    a.wait_for(f"test -e {info}", timeout=120)
    inf = json.loads(a.run(f"cat {info}").out)
    if rel < (6, 2):
        assert inf["flush_refused"] == "Invalid argument", inf
    else:
        assert inf["flush_refused"] is None, inf

    planned = cases(inf)
    # rxe takes no FLUSH but with its own ICRC: it is sent rxe's alone.
    frames = [flush(bench, inf["qps"][qp], psn, plt, sel, va,
                    inf["mrs"][mr][1], length, rxe or driver == "rxe")
              for qp, psn, plt, sel, va, mr, length, rxe, _ in planned]
    tool = f"{bench.top}/tools/testing/bench/lib/roce.py"
    out = b.run(f"/usr/bin/python3 {tool} ask eth0 5 " +
                " ".join(f.hex() for f in frames), timeout=120).out
    got = [answer(json.loads(line)) for line in out.splitlines()]
    assert len(got) == len(planned), out
    for (qp, psn, plt, sel, va, mr, length, _, want), ans in zip(planned, got):
        name = f"{qp} (placement {plt}, selectivity {sel})"
        if ans is None and want[2] == DUPLICATE and driver == "rxe":
            print(f"  {name}: duplicate, not answered")
            continue
        assert ans is not None, f"{name}: no answer"
        opcode, qpn, apsn, syndrome, msn, paylen = ans
        print(f"  {name}: opcode {opcode:#x} PSN {apsn:#x} "
              f"syndrome {syndrome:#x} MSN {msn} payload {paylen}")
        assert qpn == inf["peer_qpn"], f"{name}: to QPN {qpn:#x}"
        assert apsn == psn & 0xFFFFFF, f"{name}: PSN {apsn:#x}, sent {psn:#x}"
        assert (opcode, syndrome) == want[:2], f"{name}: {ans}, want {want}"
        if want[2] != DUPLICATE:
            assert msn == want[2], f"{name}: MSN {msn}, want {want[2]}"
        assert paylen == 0, f"{name}: {paylen} bytes of payload"

    if driver == "sroce":
        taken = counters(a, dev)["rx_rxe_flush_icrc"]
        assert taken == sum(case[7] for case in planned), taken

    a.run(f"touch {go}")
    states = json.loads(target.wait(60).out.strip().splitlines()[-1])["states"]
    # A NAK of these kinds ends the QP (class C/D errors, 9.9.3).
    want = {qp: 3 if qp in ("ok", "no_placement") else 6     # RTS, ERR
            for qp in inf["qps"]}
    if rel < (6, 2):
        want["ok"] = want["past_mr"] = 3    # never aimed at
    assert states == want, states
