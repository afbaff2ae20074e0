# SPDX-License-Identifier: GPL-2.0
"""rdma-core's ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong between
the guests (server on B, client on A), with -c: the server checks the
first byte of every page the client sent (the client writes 0 there over
a buffer both sides filled with 0x7b) and prints "invalid data in page N"
for each page that did not arrive, yet exits 0, so the output is read.

Each run must: exit 0 on both sides, report size x iterations x 2 bytes
moved in that many round trips, use the RoCEv2 GIDs it was given (IPv4,
and IPv6 for one size), and print no invalid page.
"""
import pytest

from tools.testing.bench.lib.pingpong import pingpong

# make check runs this file on the 6.12 guests too (scripts/check).
pytestmark = pytest.mark.kernel("6.12")

TIMEOUT = 300
SIZES = [1, 100, 4096, 65536, 1000000]
# A UD message fits one packet: at MTU 1500 the port's MTU is 1024 bytes
# (ibv_ud_pingpong refuses more; it receives the 40-byte GRH in front).
UD_SIZES = [1, 100, 1024]


# Not on 6.12, where RC is test_fuzz's, test_cm's and test_kverbs' traffic.
@pytest.mark.kernel()
def test_rc_pingpong(bench):
    pingpong(bench, "ibv_rc_pingpong", [("v4", s) for s in SIZES] + [("v6", 65536)])


def test_uc_pingpong(bench):
    pingpong(bench, "ibv_uc_pingpong", [("v4", s) for s in SIZES] + [("v6", 65536)])


def test_ud_pingpong(bench):
    pingpong(bench, "ibv_ud_pingpong", [(ip, s) for ip in ("v4", "v6") for s in UD_SIZES])
