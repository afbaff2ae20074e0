# SPDX-License-Identifier: GPL-2.0
"""Every verbs object kind, created and destroyed 10,000 times: nothing
may leak, in the RDMA core's resource tracking or in the slab caches."""

import re

import pytest

TIMEOUT = 1800
ITERATIONS = 10000

# Objects each iteration creates: PD, 2 MRs, channel, 2 CQs, SRQ, 3 QPs,
# AH, with their kernel allocations. A leak of even one small object per
# iteration shows as ITERATIONS objects; what else the guest does in the
# meantime moves the slab total by far less.
SLAB_SLACK = ITERATIONS // 4


def resources(g):
    """`rdma resource show` counts per device, e.g. {'pd': 1, 'qp': 0}."""
    out = g.run("rdma resource show sroce0").out
    return dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+)", out))


def slab_objects(g):
    """Active objects over all slab caches."""
    out = g.run("tail -n +3 /proc/slabinfo").out
    return sum(int(line.split()[1]) for line in out.splitlines())


@pytest.mark.sroce("exercises libsroce and sroce's objects")
def test_objects_do_not_leak(bench):
    a = bench.a
    bench.attach(a, "sroce0")
    tool = (f"{bench.top}/build/tools/sroce-objects -d sroce0 "
            f"-g {a.gid_index('sroce0')}")

    # Warm the caches, so that the measured run starts from steady state.
    a.run(f"{tool} -n 100", timeout=300)
    before, slab0 = resources(a), slab_objects(a)
    out = a.run(f"{tool} -n {ITERATIONS}", timeout=1500).out
    assert f"{ITERATIONS} iterations" in out, out
    after, slab1 = resources(a), slab_objects(a)

    assert after == before, f"rdma resource: {before} -> {after}"
    assert slab1 - slab0 < SLAB_SLACK, \
        f"slab objects grew by {slab1 - slab0} over {ITERATIONS} iterations"
