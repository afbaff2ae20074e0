# SPDX-License-Identifier: GPL-2.0
"""XRC between the guests, one target QP shared by several processes
(sroce-xrc, tools/testing/verbs/xrc.c).

In guest B three processes open one XRC domain by the same file; each has
an XRC SRQ of its own in it, and one XRC target QP serves them all: the
first creates it, the others open it by number. In guest A an XRC
initiator sends to each SRQ in turn (multi-packet messages, each landing
whole in that process's buffers and completing on its CQ with the target
QP's number) and RDMA-writes through the same target. Then the creator
destroys its handle and the target serves the others still. Last, a
second initiator names an SRQ of another XRC domain: the target answers
with a NAK (invalid request), the initiator's WQE completes with
IBV_WC_REM_INV_REQ_ERR and its QP is in error; the kernel log gate of
every guest test keeps the host side quiet.

rdma_rxe has no XRC: sroce only.
"""

import pytest

pytestmark = pytest.mark.kernel("6.12")

TIMEOUT = 240
XRC = "build/tools/sroce-xrc"
TOOL_TIMEOUT = 120
CHECKS = ["sends", "writes", "shared", "foreign"]


@pytest.mark.sroce("rdma_rxe has no XRC")
def test_xrc(bench):
    a, b = bench.a, bench.b
    adev, bdev = bench.attach(a), bench.attach(b)
    args = f"-t {TOOL_TIMEOUT} -p 18532"
    srv = b.spawn(f"exec {XRC} -d {bdev} -g {b.gid_index(bdev)} {args} -P 3",
                  timeout=TOOL_TIMEOUT + 30)
    cli = a.run(f"{XRC} -d {adev} -g {a.gid_index(adev)} {args} {b.ip}",
                timeout=TOOL_TIMEOUT + 30, check=False)
    res = srv.wait(TOOL_TIMEOUT + 30, check=False)
    print(cli.out.strip())
    print(res.out.strip())
    assert cli.ok and res.ok, (f"client rc={cli.rc}\n{cli.out}{cli.err}"
                               f"server rc={res.rc}\n{res.out}{res.err}")
    for out in (cli.out, res.out):
        for name in CHECKS:
            assert any(line.split()[:2] == [name, "ok"]
                       for line in out.splitlines()), (name, out)
    assert "open_qp" in res.out and cli.out.strip().endswith("sroce-xrc: OK")
