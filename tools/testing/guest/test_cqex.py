# SPDX-License-Identifier: GPL-2.0
"""Extended CQs and parent domains between the two guests: sroce-cqex
(tools/testing/verbs/cqex.c) reads every ibv_wc_read_*() accessor and the
kernel's wall-clock completion time, and the same completions through
ibv_poll_cq(), on objects all created through a parent domain.

The server runs in guest B, the client in guest A; the tool bounds its own
run (-t) and exits non-zero with the reason on any failure.
"""

import pytest

from tools.testing.bench.lib.rdma import tool_pair

TIMEOUT = 180
CQEX = "build/tools/sroce-cqex"
TOOL_TIMEOUT = 90


@pytest.mark.sroce("libsroce's extended CQ and parent domains")
def test_cqex_accessors(bench):
    cli, res = tool_pair(bench, CQEX, TOOL_TIMEOUT)
    for out in (cli.out, res.out):
        assert out.strip().splitlines()[-1] == "sroce-cqex: OK", out
    # Each side checked its four refusals, its receives or sends both ways
    # and the teardown; a check that did not run is a check that failed.
    assert cli.out.count(" ok\n") == 15, cli.out
    assert res.out.count(" ok\n") == 13, res.out
