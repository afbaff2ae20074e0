# SPDX-License-Identifier: GPL-2.0
"""On-demand paging: an ODP MR follows the process's mapping under traffic
(verbs/odp.py, an RC pair looped back through the guest's own GID), for
an MR of a range (explicit) and for the whole address space (implicit).

Each round maps another memory file over the MR's addresses while reads
of every page are outstanding; afterwards the peer reads the new file's
bytes, a peer's write lands in the new file, and the MR as a source sends
the new file. A pinned MR would go on with the old pages. Once the range
is unmapped, a read through the MR is a remote access error, and so is a
32 MiB read whose range is unmapped while it is being answered. The kernel
counts the faults and invalidations it served, and nothing is left
behind.
"""

import json

import pytest

from tools.testing.bench.lib import rdma

# The core's ODP and the mm's notifiers differ between kernels: make check
# runs this file on the 6.12 guests too (scripts/check).
pytestmark = pytest.mark.kernel("6.12")

TIMEOUT = 300
ROUNDS = 6

WC_SUCCESS, WC_REM_ACCESS_ERR = 0, 10


@pytest.mark.sroce("checks libsroce, which serves sroce devices only")
@pytest.mark.parametrize("kind", ["explicit", "implicit"])
def test_odp_follows_remap(bench, kind):
    a = bench.a
    dev = bench.attach(a, "sroce0")
    idx = a.gid_index(dev)
    before = rdma.counters(a, dev)
    out = a.run(f"/usr/bin/python3 -m tools.testing.guest.verbs.odp {dev} "
                f"{idx} {ROUNDS} {kind}", timeout=240).out
    r = json.loads(out.strip().splitlines()[-1])
    after = rdma.counters(a, dev)

    assert r["bad_status"] == [], r
    assert len(r["rounds"]) == ROUNDS, r
    for res in r["rounds"]:
        assert res == {"inflight_done": 16, "reads_new": True,
                       "write_lands": True, "source_new": True}, r
    assert r["unmapped_read"] == [WC_REM_ACCESS_ERR], r
    # Unmapped while answered: the responder says so (a NAK in place of
    # the next response) instead of falling silent.
    assert r["unmapped_mid_read"] == {"status": [WC_REM_ACCESS_ERR],
                                      "mid": True}, r
    # Every remap took the pages away, and each round faulted them in.
    assert after["odp_invalidations"] - before["odp_invalidations"] >= ROUNDS
    assert after["odp_faults"] - before["odp_faults"] >= ROUNDS
    assert rdma.res_counts(a, dev).get("mr", 0) == 0
