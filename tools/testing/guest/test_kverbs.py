# SPDX-License-Identifier: GPL-2.0
"""Kernel consumers of verbs: NVMe over RDMA across the guests.

Guest B exports a RAM disk with the kernel's NVMe target (nvmet-rdma);
guest A connects with the kernel's NVMe host (nvme-rdma) over sroce. That
exercises everything a storage ULP uses and no user tool does: kernel QPs
posted with ib_post_send()/ib_post_recv(), kernel CQs, rdma_cm in the
kernel, fast-registration MRs (IB_WR_REG_MR), Local Invalidate and Send
with Invalidate, and RDMA READ/WRITE of kernel pages through rdma_rw.

Each run writes 8 MiB of random data with O_DIRECT in 1 MiB I/Os, reads
it back and compares, then does the same with 2 MiB in 4 KiB I/Os (2 and
1 MiB under loss; fio's verified runs are test_nvmeof.py's); it disconnects
and takes the target down, and then the sroce devices and the module
must go away (nothing holds them). The set-up and take-down are
tools/testing/bench/lib/nvmeof.py's (test_nvmeof.py's fio runs share
them). Over IPv4, IPv6 with the target on
kernel SRQs (nvmet-rdma use_srq=1), and IPv4 with 1 % loss on the link.
"""
import pytest

from tools.testing.bench.lib import nvmeof

# make check runs this file on the 6.12 guests too (scripts/check).
pytestmark = [pytest.mark.sroce("runs the kernel's NVMe/RDMA over sroce"),
              pytest.mark.kernel("6.12")]

TIMEOUT = 600

# Random data out and back, by large I/Os (fast-registered, several pages
# each) and by single pages; cmp prints the first difference.
HOST_IO = r"""set -e
head -c {big}M /dev/urandom > /tmp/nvme-pattern
dd if=/tmp/nvme-pattern of=/dev/nvme0n1 bs=1M oflag=direct status=none
dd if=/dev/nvme0n1 of=/tmp/nvme-back bs=1M count={big} iflag=direct status=none
cmp /tmp/nvme-pattern /tmp/nvme-back
head -c {small}M /dev/urandom > /tmp/nvme-pattern
dd if=/tmp/nvme-pattern of=/dev/nvme0n1 bs=4k oflag=direct status=none
dd if=/dev/nvme0n1 of=/tmp/nvme-back bs=4k count=$(({small} * 256)) iflag=direct status=none
cmp /tmp/nvme-pattern /tmp/nvme-back
echo verified
"""


def nvme_over_sroce(bench, ip, loss=None, srq=False):
    a, b = bench.a, bench.b
    dev = {g.name: bench.attach(g) for g in (a, b)}
    nvmeof.target_up(b, "rdma", ip, srq=srq, rd_mib=32)
    if loss:
        a.run(f"tc qdisc add dev eth0 root netem loss {loss}")
    try:
        nvmeof.connect(a, b, "rdma", ip)
        # With use_srq the target receives through kernel SRQs: prove it.
        res = b.run(f"rdma res show {dev['b']}").out
        assert (int(res.split(" srq ")[1].split()[0]) > 0) == srq, res
        # Under loss a drop at a message's tail costs a retransmit
        # timeout (rdma_cm's, about a second): less data.
        big, small = (2, 1) if loss else (8, 2)
        r = a.run(HOST_IO.format(big=big, small=small), timeout=400, check=False)
        assert r.ok and "verified" in r.out, f"I/O failed (rc={r.rc}):\n{r.out}{r.err}"
    finally:
        if loss:
            a.run("tc qdisc del dev eth0 root", check=False)
    nvmeof.disconnect(a, "rdma")
    nvmeof.target_down(b, "rdma")
    # Every kernel object the ULPs made is gone: the devices and the
    # module can go.
    for g in (a, b):
        g.run(f"rdma link delete {dev[g.name]}", timeout=60)
        g.run("modprobe -r sroce", timeout=60)


def test_nvme_rdma_v4(bench):
    nvme_over_sroce(bench, "v4")


def test_nvme_rdma_v6_srq(bench):
    """IPv6, and the target receiving through shared receive queues."""
    nvme_over_sroce(bench, "v6", srq=True)


# Recovery from loss is the driver's own: not again on 6.12.
@pytest.mark.kernel()
def test_nvme_rdma_under_loss(bench):
    nvme_over_sroce(bench, "v4", loss="1%")
