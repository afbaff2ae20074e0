# SPDX-License-Identifier: GPL-2.0
"""Kernel consumers of verbs: NVMe over RDMA across the guests.

Guest B exports a RAM disk with the kernel's NVMe target (nvmet-rdma);
guest A connects with the kernel's NVMe host (nvme-rdma) over sroce. That
exercises everything a storage ULP uses and no user tool does: kernel QPs
posted with ib_post_send()/ib_post_recv(), kernel CQs, rdma_cm in the
kernel, fast-registration MRs (IB_WR_REG_MR), Local Invalidate and Send
with Invalidate, and RDMA READ/WRITE of kernel pages through rdma_rw.

Each run writes 16 MiB of random data with O_DIRECT in 1 MiB I/Os, reads
it back and compares, then does the same with 4 MiB in 4 KiB I/Os (4 and
1 MiB under loss); it disconnects
and takes the target down, and then the sroce devices and the module
must go away (nothing holds them). Over IPv4, IPv6 with the target on
kernel SRQs (nvmet-rdma use_srq=1), and IPv4 with 1 % loss on the link.
"""
import pytest

# make check runs this file on the 6.12 guests too (scripts/check).
pytestmark = [pytest.mark.sroce("runs the kernel's NVMe/RDMA over sroce"),
              pytest.mark.kernel("6.12")]

TIMEOUT = 600
NQN = "sroce-test"

TARGET_UP = r"""set -e
modprobe brd rd_nr=1 rd_size=32768
modprobe nvmet-rdma use_srq={srq}
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
cd /sys/kernel/config/nvmet
mkdir subsystems/{nqn}
echo 1 > subsystems/{nqn}/attr_allow_any_host
mkdir subsystems/{nqn}/namespaces/1
echo /dev/ram0 > subsystems/{nqn}/namespaces/1/device_path
echo 1 > subsystems/{nqn}/namespaces/1/enable
mkdir ports/1
echo rdma > ports/1/addr_trtype
echo {family} > ports/1/addr_adrfam
echo {addr} > ports/1/addr_traddr
echo 4420 > ports/1/addr_trsvcid
ln -s /sys/kernel/config/nvmet/subsystems/{nqn} ports/1/subsystems/{nqn}
"""

TARGET_DOWN = r"""set -e
cd /sys/kernel/config/nvmet
rm ports/1/subsystems/{nqn}
rmdir ports/1
echo 0 > subsystems/{nqn}/namespaces/1/enable
rmdir subsystems/{nqn}/namespaces/1
rmdir subsystems/{nqn}
modprobe -r nvmet-rdma nvmet brd
"""

HOST_CONNECT = r"""set -e
modprobe nvme-rdma
echo "transport=rdma,traddr={addr},trsvcid=4420,nqn={nqn}" > /dev/nvme-fabrics
for i in $(seq 100); do [ -b /dev/nvme0n1 ] && exit 0; sleep 0.2; done
echo "no /dev/nvme0n1 after connecting" >&2; exit 1
"""

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

HOST_DISCONNECT = r"""set -e
echo 1 > /sys/class/nvme/nvme0/delete_controller
for i in $(seq 100); do [ -e /sys/class/nvme/nvme0 ] || break; sleep 0.2; done
modprobe -r nvme-rdma
"""


def nvme_over_sroce(bench, ip, loss=None, srq=False):
    a, b = bench.a, bench.b
    dev = {g.name: bench.attach(g) for g in (a, b)}
    addr = b.ip if ip == "v4" else b.ip6
    family = "ipv4" if ip == "v4" else "ipv6"
    b.run(TARGET_UP.format(nqn=NQN, family=family, addr=addr, srq=int(srq)),
          timeout=60)
    if loss:
        a.run(f"tc qdisc add dev eth0 root netem loss {loss}")
    try:
        a.run(HOST_CONNECT.format(nqn=NQN, addr=addr), timeout=120)
        # With use_srq the target receives through kernel SRQs: prove it.
        res = b.run(f"rdma res show {dev['b']}").out
        assert (int(res.split(" srq ")[1].split()[0]) > 0) == srq, res
        # Under loss every drop costs a retransmit timeout: less data.
        big, small = (4, 1) if loss else (16, 4)
        r = a.run(HOST_IO.format(big=big, small=small), timeout=400, check=False)
        assert r.ok and "verified" in r.out, f"I/O failed (rc={r.rc}):\n{r.out}{r.err}"
    finally:
        if loss:
            a.run("tc qdisc del dev eth0 root", check=False)
    a.run(HOST_DISCONNECT, timeout=120)
    b.run(TARGET_DOWN.format(nqn=NQN), timeout=120)
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


def test_nvme_rdma_under_loss(bench):
    nvme_over_sroce(bench, "v4", loss="1%")
