#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold a device open with live objects while it is taken away:

    hold.py DEV READY GO

Opens DEV, creates a PD, an MR, a CQ and a QP, creates the file READY,
then waits (bounded) for the file GO. After that the device is gone: it
tries one more verb and prints one JSON object with its errno, then
closes everything as a program would.
"""

import errno
import json
import os
import sys
import time

from pyverbs.cq import CQ
from pyverbs.device import Context
import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr


def main():
    dev, ready, go = sys.argv[1:4]
    ctx = Context(name=dev)
    pd = PD(ctx)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    cq = CQ(ctx, 16)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=4)))
    open(ready, "w").close()

    deadline = time.monotonic() + 120
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            sys.exit("hold.py: nobody said go")
        time.sleep(0.1)

    try:
        PD(ctx).close()
        after = 0
    except PyverbsRDMAError as ex:
        after = ex.error_code
    # Closing what the device no longer has must not fail the program.
    for obj in (qp, cq, mr, pd, ctx):
        try:
            obj.close()
        except PyverbsRDMAError:
            pass
    print(json.dumps({"alloc_pd_after": after, "eio": errno.EIO}))


if __name__ == "__main__":
    main()
