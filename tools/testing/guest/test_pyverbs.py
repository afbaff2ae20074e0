# SPDX-License-Identifier: GPL-2.0
"""rdma-core's own pyverbs tests, as Debian ships them, run on sroce.

The whole suite runs in the guest against sroce0 on its RoCEv2 IPv4 GID:
no failure and no error anywhere. A test that needs what sroce does not
have is skipped by pyverbs itself with its reason (EOPNOTSUPP becomes a
skip there); every reason it may give is listed below with why it stays,
and a skip for any other reason fails, as does a skip of a test sroce
supports (MUST_RUN). The counts are printed so the progress is visible
run by run.
"""

import re

import pytest

# make check runs this file on the 6.12 guests too (scripts/check).
pytestmark = pytest.mark.kernel("6.12")

# Tests that sroce implements what they need for: a skip is a failure.
# ParentDomainTrafficTest includes the huge-page test: the guests reserve
# huge pages at boot (tools/testing/bench/guests.py).
MUST_RUN = ["MWTest", "test_qp_ex_rc_bind_mw", "CQEXAPITest",
            "test_rc_traffic_cq_ex", "test_ud_traffic_cq_ex",
            "ParentDomainTrafficTest",
            "TimeStampTest.test_timestamp_real_time_rc_traffic",
            "test_mr_rereg_access", "test_mr_rereg_access_bad_flow",
            "test_mr_rereg_pd", "test_mr_rereg_addr",
            "test_qp_ex_rc_atomic_write",
            # XRC: rdma-core 44 has no test_xrc module; its XRC traffic
            # runs in these (XRCResources, u.xrc_traffic).
            "test_qp_ex_xrc_send", "test_qp_ex_xrc_send_imm",
            "test_xrc_traffic_cq_ex", "test_xrc_atomic_fetch_and_add",
            "test_xrc_atomic_cmp_and_swap",
            # ibv_import_device(), ibv_import_pd(), ibv_import_mr().
            "test_imported_rc_ex_rdma_write",
            # On-demand paging, of ranges and of the whole address space.
            "test_odp_rc_traffic", "test_odp_implicit_rc_traffic",
            "test_odp_implicit_sync_prefetch_rc_traffic",
            "test_odp_implicit_async_prefetch_rc_traffic", "test_odp_rc_atomic_cmp_and_swp",
            "test_odp_rc_atomic_fetch_and_add", "test_odp_rc_rdma_read",
            "test_odp_rc_rdma_write", "test_odp_ud_traffic",
            "test_odp_xrc_traffic", "test_odp_rc_srq_traffic",
            "test_odp_rc_huge_traffic", "test_odp_rc_huge_user_addr_traffic",
            "test_odp_sync_prefetch_rc_traffic",
            "test_odp_async_prefetch_rc_traffic",
            "test_odp_prefetch_sync_no_page_fault_rc_traffic",
            "test_odp_prefetch_async_no_page_fault_rc_traffic"]

TIMEOUT = 900

# Why pyverbs may skip a test on sroce, by the words it says it with: what
# the rest of the suite needs is a vendor's hardware or a device's own
# memory, clock or offloads. The guests have huge pages, so the huge-page
# tests run.
SKIPS = {
    "Can not run the test over non MLX5 device": "mlx5's own features",
    "Could not open mlx5 context": "mlx5's direct verbs",
    "Can not run the test over non EFA device": "EFA's SRD QPs and verbs",
    "Device memory is not supported": "memory on the NIC (ibv_alloc_dm)",
    "Allocating dmabuf is not supported": "a GPU's dma-buf (no DRM device)",
    "cuda-python": "CUDA",
    "PCI device must be passed": "VFIO: a PCI NIC driven from userspace",
    # IBV_QPT_RAW_PACKET: Ethernet frames and flow steering, a NIC's.
    "Create QP type 8 is not supported": "raw packet QPs",
    "Create Raw Packet QP": "raw packet QPs",
    # IBV_WC_EX_WITH_TM_INFO: mlx5's tag-matching offload.
    "Extended CQ is not supported": "tag matching",
    # IBV_WC_EX_WITH_COMPLETION_TIMESTAMP and ibv_query_rt_values_ex():
    # sroce has no clock of its own, only the wall clock (which it does
    # give: the real-time timestamp test runs).
    "Create Extended CQ is not supported": "a device clock's timestamps",
    "Query device real time is not supported": "a device clock",
}

PREP = r"""
set -e
rm -rf /tmp/pyverbs && cp -r /usr/share/doc/rdma-core/tests /tmp/pyverbs
cd /tmp/pyverbs && gunzip -f *.py.gz
"""


@pytest.mark.sroce("runs rdma-core's tests against sroce's provider")
def test_pyverbs(bench):
    a = bench.a
    bench.attach(a, "sroce0")
    a.run("modprobe rdma_ucm")  # test_rdmacm: udev would, in a full system
    gid = a.gid_index("sroce0")
    a.run(PREP)
    r = a.run(f"cd /tmp/pyverbs && /usr/bin/python3 run_tests.py --dev sroce0 "
              f"--port 1 --gid {gid} -v", timeout=800, check=False)
    out = r.err + r.out
    ran = re.search(r"^Ran (\d+) tests?", out, re.M)
    assert ran, out[-3000:]
    # Tests print after unittest's verdict (pyverbs' fork test does).
    verdict = re.search(r"^(OK|FAILED)\b.*$", out, re.M)
    assert verdict, out[-3000:]
    verdict = verdict.group(0)
    # "name (id) ... skipped 'why'"; a docstring's line comes before "...".
    skipped = re.findall(r"^\w+ \((\S+)\)(?:\n[^\n]*?)? \.\.\. skipped (.*)$",
                         out, re.M)
    print(f"pyverbs: ran {ran.group(1)}, passed "
          f"{int(ran.group(1)) - len(skipped)}: {verdict}")
    for name, why in skipped:
        print(f"  skipped {name}: {why}")
    wrong = [n for n, _ in skipped if any(m in n for m in MUST_RUN)]
    assert not wrong, f"skipped, but sroce supports them: {wrong}"
    unknown = [(n, why) for n, why in skipped
               if not any(k in why for k in SKIPS)]
    assert not unknown, f"skipped for a reason not listed: {unknown}"
    assert r.rc == 0 and verdict.startswith("OK"), out[-5000:]
    assert int(ran.group(1)) > 0, out[-3000:]
