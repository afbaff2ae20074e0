# SPDX-License-Identifier: GPL-2.0
"""Memory regions and address handles, from a process through libsroce.

The verbs run in guest A from tools/testing/guest/verbs/mr_ah.py, which
prints what it saw as JSON; every outcome is checked here, exactly: keys,
lengths, the errno of each refused request, counts back to where they
started. The runner fails a test on any kernel warning in either guest.
"""

import json
import os
import time

import pytest

# make check runs this file on the 6.12 guests too (scripts/check), but
# for the limits, which the driver counts itself.
pytestmark = pytest.mark.kernel("6.12")

HERE = os.path.dirname(os.path.abspath(__file__))
VERBS = f"/usr/bin/python3 {HERE}/verbs/mr_ah.py"
SYS = "/sys/class/infiniband"

# drivers/limits.h
MAX_MR = 65536
MAX_AH = 32767

PAGE = 4096


SROCE_ONLY = "checks sroce's own keys, limits and errnos"


def verbs(g, dev, cmd, *args, prefix="", timeout=120):
    out = g.run(f"{prefix}{VERBS} {dev} {cmd} {' '.join(map(str, args))}",
                timeout=timeout).out
    return json.loads(out)


def attach(bench):
    a = bench.attach(bench.a, "sroce0")
    bench.attach(bench.b, "sroce0")
    return a


def kmalloc_objs(g):
    """Objects in use in the kmalloc caches (where the driver's MRs, the
    core's umems and their page lists live)."""
    total = 0
    for line in g.run("cat /proc/slabinfo").out.splitlines():
        f = line.split()
        if f and f[0].startswith("kmalloc-"):
            total += int(f[1])
    return total


@pytest.mark.sroce(SROCE_ONLY)
def test_mr_keys_and_access(bench):
    """Every size and legal access combination registers; keys are unique,
    lkey == rkey, and `rdma resource show mr` shows each with its length."""
    dev = attach(bench)
    r = verbs(bench.a, dev, "keys")
    regs = r["regs"]
    assert len(regs) == 6 * 20 * 2, len(regs)
    lkeys = [x["lkey"] for x in regs]
    assert len(set(lkeys)) == len(lkeys), "duplicate keys"
    for x in regs:
        assert x["lkey"] == x["rkey"], x
        assert x["lkey"] >> 8 != 0, x
        assert r["shown"][str(x["lkey"])] == {"rkey": x["rkey"],
                                              "mrlen": x["size"]}, x
    assert len(r["shown"]) == len(regs), r["shown"]
    assert r["after"] == 0, r
    # Cyclic indices: none of the just-freed keys is handed out again.
    assert not set(r["old"]) & set(r["new"]), r
    assert len(set(r["new"])) == len(r["new"])
    assert r["k1"] != r["k2"] and r["k1"] >> 8 != r["k2"] >> 8, r


@pytest.mark.sroce(SROCE_ONLY)
def test_mr_bad_arguments(bench):
    dev = attach(bench)
    r = verbs(bench.a, dev, "errors")
    # Linux 6.2 taught the core the flush rights: it passes on those the
    # device offers (global visibility: test_flush.py), refuses the rest.
    release = tuple(int(x) for x in bench.a.run("uname -r").out.split(".")[:2])
    old = release < (6, 2)
    assert r == {
        "zero_length": "EINVAL",
        # Memory windows may be bound to the MR (test_mw.py).
        "mw_bind": "ok",
        # Rights sroce does not implement: refused by the driver.
        "zero_based": "EOPNOTSUPP",
        "hugetlb": "EOPNOTSUPP",
        # On-demand paging (test_odp.py), but not for windows (a window's
        # users are counted per CPU, which an invalidation cannot wait
        # for MR by MR) nor zero-based.
        "on_demand": "ok",
        "on_demand_mw_bind": "EOPNOTSUPP",
        "on_demand_zero_based": "EOPNOTSUPP",
        # Unknown to 6.1's core; from 6.2 on, the right to a FLUSH for
        # global visibility is sroce's, to one for persistence refused by
        # the core (the device does not offer it).
        "flush_global": "EINVAL" if old else "ok",
        "flush_persistent": "EINVAL" if old else "EOPNOTSUPP",
        "unknown_bit19": "EINVAL",
        "unknown_bit30": "EINVAL",
        "remote_write_no_local": "EINVAL",
        "remote_atomic_no_local": "EINVAL",
        # A hint the ABI lets a driver ignore.
        "optional_bit21": "ok",
        "unmapped": "EFAULT",
        "prot_none": "EFAULT",
        "max_plus_one": "EINVAL",
        "huge": "EINVAL",
        # max_mr_size itself passes the length check and fails to pin.
        "max_size_unmapped_tail": "EFAULT",
        "wraps": "EINVAL",
        "leftover": 0,
        "pinned_kb": 0,
    }, r


@pytest.mark.sroce(SROCE_ONLY)
def test_mr_iova(bench):
    """reg_mr_iova: the iova is the MR's address on the wire; it may be
    anything with the buffer's page offset, as long as it does not wrap."""
    dev = attach(bench)
    r = verbs(bench.a, dev, "iova")
    for name in ("other", "zero_page", "top"):
        assert r[name][0] == "ok", r
    assert r["other"][1][1] == PAGE and r["top"][1][1] == 0x100, r
    assert r["wraps"] == ["EINVAL", None], r
    assert r["bad_offset"] == ["EINVAL", None], r


@pytest.mark.sroce(SROCE_ONLY)
def test_mr_churn(bench):
    """10,000 register/deregister rounds leave nothing behind."""
    a = bench.a
    dev = attach(bench)
    verbs(a, dev, "churn", 100)
    before = kmalloc_objs(a)
    r = verbs(a, dev, "churn", 10000, timeout=400)
    assert r["distinct_keys"] == 10000, r
    assert r["before"] == 0 and r["after"] == 0, r
    assert r["pinned_kb"] == 0, r
    # A leak of one object a round would be 10,000 at least. The last
    # rounds' objects may still wait for an RCU grace period, which a busy
    # host makes long: look again until they are back, for 30 s at most.
    deadline = time.monotonic() + 30
    while (grown := kmalloc_objs(a) - before) >= 1000 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert grown < 1000, f"kmalloc objects grew by {grown}"


test_mr_churn.TIMEOUT = 600


@pytest.mark.sroce(SROCE_ONLY)
def test_mr_memlock(bench):
    """Without CAP_IPC_LOCK, RLIMIT_MEMLOCK bounds the pages pinned."""
    dev = attach(bench)
    nocap = "setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock "
    r = verbs(bench.a, dev, "memlock",
              prefix=f"prlimit --memlock={16 * PAGE}:{16 * PAGE} {nocap}")
    assert r == {
        "ipc_lock": False, "limit": 16 * PAGE,
        "full_pinned_kb": 64, "one_more": "ENOMEM", "after_release": "ok",
        "second_half": "ok", "past_half": "ENOMEM", "pinned_kb": 0,
    }, r
    r = verbs(bench.a, dev, "memlock", prefix=f"prlimit --memlock=0:0 {nocap}")
    assert r == {"ipc_lock": False, "limit": 0, "one_page": "EPERM"}, r


@pytest.mark.sroce(SROCE_ONLY)
@pytest.mark.kernel()  # the driver's own counts: 6.1 is enough
def test_mr_limit(bench):
    """No more MRs than max_mr; a freed slot can be used again."""
    dev = attach(bench)
    r = verbs(bench.a, dev, "mr-limit", timeout=500)
    # Once the device serves kernel verbs, ib_alloc_pd() of the MAD layer
    # holds one DMA MR of the same budget.
    assert r["registered"] in (MAX_MR, MAX_MR - 1), r
    assert r["error"] == "ENOMEM", r
    assert r["refill"] == "ok" and r["again"] == "ENOMEM", r
    assert r["left"] == 0, r


test_mr_limit.TIMEOUT = 600


@pytest.mark.sroce(SROCE_ONLY)
def test_ah(bench):
    """AHs to the peer's IPv4 and IPv6 addresses; RoCEv2's rules refused."""
    a = bench.a
    dev = attach(bench)
    sgid4 = a.gid_index(dev)
    sgid6 = a.gid_index(dev, a.ip6)
    r = verbs(a, dev, "ah", sgid4, sgid6)
    assert r == {
        "v4": "ok", "v6": "ok", "flow_label_max": "ok",
        # The core requires a GRH on RoCE and a populated source GID.
        "no_grh": "EINVAL", "empty_sgid": "ENODATA",
        # Bits above the GRH's 20 are dropped, as mlx5 does: UCX sets the
        # flow label of every RoCE AH to ~path_index (docs/ENGINES.md).
        "flow_label_21_bits": "ok",
        "v4_sgid_v6_dgid": "EINVAL", "v6_sgid_v4_dgid": "EINVAL",
        # A fresh context numbers its AHs from 1.
        "ah_nums": [1, 2], "destroy": [0, 0],
    }, r


@pytest.mark.sroce(SROCE_ONLY)
@pytest.mark.kernel()  # the driver's own counts: 6.1 is enough
def test_ah_limit(bench):
    """No more AHs than max_ah for a process; and while one holds them
    all, the kernel's connection manager still gets the AHs its MADs
    need (a share kept for kernel consumers): rdma_cm connects."""
    a, b = bench.a, bench.b
    dev = attach(bench)
    sgid4 = a.gid_index(dev)
    for g in (a, b):
        g.run("modprobe rdma_ucm")
    srv = b.spawn("exec timeout 250 rping -s -a 10.77.0.2 -C 3 -v", timeout=300)
    # An rdma_cm server listens on no TCP port: its cm_id says it.
    b.wait_for("rdma res show cm_id | grep -q 'state LISTEN'", timeout=30)
    r = verbs(a, dev, "ah-limit", sgid4, "timeout 60 rping -c -a 10.77.0.2 -C 3 -v",
              timeout=500)
    res = srv.wait(timeout=60, check=False)
    assert (r["created"], r["error"], r["refill"]) == (MAX_AH, "ENOMEM", "ok"), r
    assert r["while_full"] == 0, r["while_full_out"]
    assert res.ok, (res.out, res.err)


test_ah_limit.TIMEOUT = 600
