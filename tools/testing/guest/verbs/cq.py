#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Completion queue verbs through pyverbs and libsroce, run in a guest.

    cq.py DEV sizes            create/destroy across sizes, and the errors
    cq.py DEV resize           grow and shrink one CQ
    cq.py DEV channel          a CQ on a completion channel, armed both ways
    cq.py DEV cycles N         N create/destroy pairs
    cq.py DEV abandon SIZE...  create and arm CQs, then exit without a word
    cq.py DEV hold SIZE...     hold CQs and print `rdma -j resource show cq`
                               and the rings allocated
    cq.py rings                the rings allocated (vmallocinfo)

Each prints one JSON object for the test to check; a verb failing where
it should not raises, and the script exits non-zero.
"""

import fcntl
import json
import os
import select
import subprocess
import sys

from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.pyverbs_error import PyverbsRDMAError


def error_of(fn):
    """The errno a verb fails with, or None when it succeeds."""
    try:
        obj = fn()
    except PyverbsRDMAError as e:
        return e.error_code
    if hasattr(obj, "close"):
        obj.close()
    return None


def sizes(ctx):
    attr = ctx.query_device()
    top = attr.max_cqe
    asked = [1, 2, 3, 4, 5, 63, 64, 65, 1000, 4096, top // 2, top // 2 + 1,
             top // 2 + 2, top - 1, top]
    got = {}
    for n in asked:
        cq = CQ(ctx, n)
        got[n] = cq.cqe
        npolled, _ = cq.poll(4)
        assert npolled == 0, (n, npolled)
        cq.close()
    vectors = ctx.num_comp_vectors
    return {
        "max_cqe": top,
        "num_comp_vectors": vectors,
        "cqe": got,
        "errors": {
            "cqe 0": error_of(lambda: CQ(ctx, 0)),
            "cqe max+1": error_of(lambda: CQ(ctx, top + 1)),
            "cqe -1": error_of(lambda: CQ(ctx, -1)),
            "comp_vector num": error_of(lambda: CQ(ctx, 8, None, None,
                                                   vectors)),
            "comp_vector last": error_of(lambda: CQ(ctx, 8, None, None,
                                                    vectors - 1)),
        },
    }


def resize(ctx):
    top = ctx.query_device().max_cqe
    cq = CQ(ctx, 10)
    steps = [("create 10", cq.cqe)]
    for n in (1000, 1, 3, top, 17):
        cq.resize(n)
        steps.append((f"resize {n}", cq.cqe))
        npolled, _ = cq.poll(2)
        assert npolled == 0, (n, npolled)
    errors = {
        "resize 0": error_of(lambda: cq.resize(0)),
        "resize max+1": error_of(lambda: cq.resize(top + 1)),
        "resize -5": error_of(lambda: cq.resize(-5)),
    }
    steps.append(("after errors", cq.cqe))
    cq.close()
    return {"steps": steps, "errors": errors}


def event_fds():
    """The uverbs event files this process has open."""
    fds = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:	# listdir's own, closed since
            continue
        if target == "anon_inode:[infinibandevent]":
            fds.add(int(fd))
    return fds


def channel(ctx):
    before = event_fds()
    ch = CompChannel(ctx)
    new = event_fds() - before
    assert len(new) == 1, new
    fd = new.pop()
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) |
                os.O_NONBLOCK)
    cqs = [CQ(ctx, 8, None, ch, 0), CQ(ctx, 100, None, ch, 0)]
    for cq in cqs:
        cq.req_notify(False)
        cq.req_notify(True)
        cq.req_notify(False)
    polled = [cq.poll(1)[0] for cq in cqs]
    # Armed, but nothing completed: no event may be waiting.
    readable, _, _ = select.select([fd], [], [], 0.5)
    get_event = error_of(lambda: ch.get_cq_event(cqs[0]))
    # Arming survives a resize and the CQ still closes cleanly.
    cqs[1].resize(300)
    cqs[1].req_notify(True)
    out = {
        "cqe": [cq.cqe for cq in cqs],
        "polled": polled,
        "readable": bool(readable),
        "get_cq_event": get_event,
    }
    for cq in cqs:
        cq.close()
    ch.close()
    return out


def cycles(ctx, n):
    for i in range(n):
        CQ(ctx, 1 + i % 256).close()
    return {"cycles": n}


def rings():
    """The sizes of the sroce rings allocated now, from /proc/vmallocinfo.

    Only areas mappable by a process (" user"): vmalloc files the page
    array of a large area under the same caller.
    """
    with open("/proc/vmallocinfo") as f:
        return sorted(int(line.split()[1]) for line in f
                      if "sroce_queue_init" in line and
                      " user" in line.split("pages=")[-1])


def hold(ctx, dev, wanted):
    cqs = [CQ(ctx, n) for n in wanted]
    res = subprocess.run(["rdma", "-j", "resource", "show", "cq", "dev", dev],
                         check=True, capture_output=True, text=True)
    out = {"pid": os.getpid(), "cqe": [cq.cqe for cq in cqs],
           "rdma": json.loads(res.stdout), "rings": rings()}
    for cq in cqs:
        cq.close()
    return out


def abandon(ctx, wanted):
    """Leaves the CQs, armed and mapped, for the kernel to clean up."""
    cqs = [CQ(ctx, n) for n in wanted]
    for cq in cqs:
        cq.req_notify(False)
    print(json.dumps({"cqe": [cq.cqe for cq in cqs]}), flush=True)
    os._exit(0)


def main():
    if sys.argv[1:] == ["rings"]:
        print(json.dumps({"rings": rings()}))
        return
    dev, what = sys.argv[1], sys.argv[2]
    with Context(name=dev) as ctx:
        if what == "sizes":
            out = sizes(ctx)
        elif what == "resize":
            out = resize(ctx)
        elif what == "channel":
            out = channel(ctx)
        elif what == "cycles":
            out = cycles(ctx, int(sys.argv[3]))
        elif what == "abandon":
            out = abandon(ctx, [int(n) for n in sys.argv[3:]])
        elif what == "hold":
            out = hold(ctx, dev, [int(n) for n in sys.argv[3:]])
        else:
            sys.exit(f"unknown command {what!r}")
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
