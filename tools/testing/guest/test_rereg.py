# SPDX-License-Identifier: GPL-2.0
"""ibv_rereg_mr() seen from the other guest (sroce-rereg).

The server in guest B re-registers one MR onto a new buffer, into another
PD and back, without and with remote write, and while a memory window is
bound to it (refused with EBUSY, the MR unchanged). After each step the
client in guest A writes with the key the server names: the MR's new key
lands in the new buffer; the old key, the MR while in the other PD, or
without remote write, is a remote access error that changes no byte.
"""

import pytest

from tools.testing.bench.lib.rdma import tool_pair

pytestmark = pytest.mark.kernel("6.12")

TIMEOUT = 240
REREG = "build/tools/sroce-rereg"
TOOL_TIMEOUT = 180


@pytest.mark.sroce("rdma_rxe 6.1 has no rereg_user_mr")
def test_rereg_seen_by_peer(bench):
    cli, _ = tool_pair(bench, REREG, TOOL_TIMEOUT, "-p 18519")
    last = cli.out.strip().splitlines()[-1]
    assert last.startswith("sroce-rereg: OK: 13 of 13"), cli.out
