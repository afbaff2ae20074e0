# SPDX-License-Identifier: GPL-2.0
"""IBA 1.5 atomic write (IBV_WR_ATOMIC_WRITE) between the guests
(sroce-awrite, tools/testing/verbs/awrite.c).

The client in guest A posts atomic writes into the server's MR in guest B,
through ibv_post_send and ibv_wr_atomic_write(): each completes as
IBV_WC_ATOMIC_WRITE and lands as its 8 bytes, a run to one word leaves the
last; a bad rkey, a misaligned word and an MR without remote write are
refused with the NAK rdma_rxe 6.12 sends (remote access, invalid request)
and change nothing. The duplicate case drops B's RoCE frames (tc) until
the word has landed, then stores another value there locally: the
client's retransmission must be answered from the responder's resources
and not executed again.

test_atomic_write_interop pairs sroce with rdma_rxe, both ways: rxe has
atomic write from 6.2, so it runs on the 6.12 guests only
(SROCE_GUEST=guest-6.12).
"""

import pytest

pytestmark = pytest.mark.kernel("6.12")

TIMEOUT = 240
AWRITE = "build/tools/sroce-awrite"
TOOL_TIMEOUT = 120
CASES = 7


def run_pair(bench, client, server, cdev, sdev, rxe_client=False):
    """sroce-awrite, server on @server, client on @client. rdma-core's rxe
    provider posts atomic writes through ibv_wr_atomic_write() only (its
    ibv_post_send() leaves the rkey out): -L leaves that case out."""
    args = f"-t {TOOL_TIMEOUT} -p 18531"
    cases = CASES - 1 if rxe_client else CASES
    srv = server.spawn(f"exec {AWRITE} -d {sdev} -g {server.gid_index(sdev)} "
                       f"{args} -n {server.netdev}", timeout=TOOL_TIMEOUT + 30)
    cli = client.run(f"{AWRITE} -d {cdev} -g {client.gid_index(cdev)} {args} "
                     f"{'-L ' if rxe_client else ''}{server.ip}",
                     timeout=TOOL_TIMEOUT + 30, check=False)
    res = srv.wait(TOOL_TIMEOUT + 30, check=False)
    print(cli.out.strip())
    assert cli.ok and res.ok, (f"client rc={cli.rc}\n{cli.out}{cli.err}"
                               f"server rc={res.rc}\n{res.out}{res.err}")
    last = cli.out.strip().splitlines()[-1]
    assert last.startswith(f"sroce-awrite: OK: {cases} of {cases}"), cli.out


@pytest.mark.sroce("rdma_rxe 6.1 has no atomic write")
def test_atomic_write(bench):
    a, b = bench.a, bench.b
    run_pair(bench, a, b, bench.attach(a), bench.attach(b))


def rxe_has_atomic_write(g):
    major, minor = g.run("uname -r").out.strip().split(".")[:2]
    return (int(major), int(minor)) >= (6, 2)


@pytest.mark.sroce("interop pairs sroce with rdma_rxe")
@pytest.mark.parametrize("direction", ["sroce->rxe", "rxe->sroce"])
def test_atomic_write_interop(bench, direction):
    a, b = bench.a, bench.b
    if not rxe_has_atomic_write(b):
        pytest.skip("rdma_rxe before 6.2 has no atomic write")
    sdev = bench.attach(a, "roce0", driver="sroce")
    rdev = bench.attach(b, "roce0", driver="rxe")
    if direction == "sroce->rxe":
        run_pair(bench, a, b, sdev, rdev)
    else:
        run_pair(bench, b, a, rdev, sdev, rxe_client=True)
