# SPDX-License-Identifier: GPL-2.0
"""What `rdma` tells about a device, for tests that compare before and
after (test_cm, test_fuzz): restrack's object counts and the port's
counters."""
import re

RES_KINDS = ("pd", "cq", "qp", "cm_id", "mr", "ctx")


def res_counts(g, dev):
    """rdma restrack's object counts for the device."""
    out = g.run(f"rdma res show {dev}").out
    return {k: int(v) for k, v in re.findall(r"\b(\w+) (\d+)", out) if k in RES_KINDS}


def counters(g, dev):
    """The device's port 1 counters, by name, from `rdma statistic`."""
    words = g.run(f"rdma statistic show link {dev}/1").out.split()
    return {words[i]: int(words[i + 1]) for i in range(len(words) - 1)
            if words[i + 1].isdigit() and words[i].islower()}
