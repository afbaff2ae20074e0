# SPDX-License-Identifier: GPL-2.0
"""Memory windows: a type 2 window over half of an MR, on an RC pair
looped back through the guest's own GID (verbs/mw.py).

Through the window a write lands inside it and nowhere else; a write
outside it, or through its key after a Local Invalidate, is a remote
access error that leaves memory as it was; the MR cannot be deregistered
while the window is bound; and a window's key is refused as an lkey.
"""

import json

import pytest

TIMEOUT = 240

# enum ibv_wc_status, enum ibv_wc_opcode
WC_SUCCESS, WC_LOC_PROT_ERR, WC_REM_ACCESS_ERR = 0, 4, 10
WC_RDMA_WRITE, WC_BIND_MW, WC_LOCAL_INV = 1, 5, 6


@pytest.mark.sroce("checks libsroce, which serves sroce devices only")
def test_type2_window(bench):
    a = bench.a
    dev = bench.attach(a, "sroce0")
    idx = a.gid_index(dev)
    out = a.run(f"/usr/bin/python3 -m tools.testing.guest.verbs.mw {dev} {idx}",
                timeout=180).out
    r = json.loads(out.strip().splitlines()[-1])
    assert r["bind"] == [WC_SUCCESS, WC_BIND_MW], r
    assert r["new_key_index"], r
    assert r["dereg_bound"] == "EBUSY", r
    assert r["inside"] == [WC_SUCCESS, WC_RDMA_WRITE], r
    assert r["inside_landed"] and r["inside_only"], r
    assert r["local_inv"] == [WC_SUCCESS, WC_LOCAL_INV], r
    assert r["after_inv"][0] == WC_REM_ACCESS_ERR, r
    assert r["after_inv_untouched"], r
    assert r["rebind"] == [WC_SUCCESS, WC_BIND_MW], r
    assert r["outside"][0] == WC_REM_ACCESS_ERR, r
    assert r["outside_untouched"], r
    assert r["mw_as_lkey"][0] == WC_LOC_PROT_ERR, r
    assert r["dealloc"] == "ok" and r["dereg_unbound"] == "ok", r
