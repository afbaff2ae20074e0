# SPDX-License-Identifier: GPL-2.0
"""RC QPs and MRs for hand-made FLUSH requests to aim at, run inside a
guest (test_flush.py):

    python3 -m tools.testing.guest.verbs.flush DEV GID_INDEX DGID INFO GO

(from the repo top: it imports verbs/qp.py as part of the package)

One RC QP in RTS per case of test_flush.py (QPS), whose peer is DGID (a
host with no RDMA device, which sends the frames): each with the flush
right (IB_ACCESS_FLUSH_GLOBAL) but "no_qp_right"'s. Two MRs of one page
each: "flush" grants the flush right, "plain" remote write and read
only. Linux 6.1's core refuses the flush right in a registration: there
"flush" is null in INFO, with the error. Writes INFO (JSON: QPNs, PSN,
MRs), then waits for the file GO and prints, as one JSON line, each QP's
state.
"""

import json
import mmap
import os
import sys
import time

from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr
import pyverbs.enums as e

from tools.testing.guest.verbs.qp import Bench, state

# IB_UVERBS_ACCESS_FLUSH_GLOBAL (Linux 6.2); rdma-core 44 has no name for it.
ACCESS_FLUSH_GLOBAL = 1 << 8
PEER_QPN = 0xabcde
RQ_PSN = 0x654321
PAGE = mmap.PAGESIZE
QPS = ("ok", "no_mr_right", "past_mr", "persistent", "no_qp_right", "no_placement")
REMOTE = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ)


def connect(b, qp, access):
    b.to_init(qp, "rc")
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.qp_access_flags = access
    qp.modify(a, e.IBV_QP_ACCESS_FLAGS)
    a, mask = b.rtr_attr("rc")
    a.dest_qp_num = PEER_QPN
    a.rq_psn = RQ_PSN
    qp.modify(a, mask)
    a, mask = b.rts_attr("rc")
    qp.modify(a, mask)


def main():
    dev, gid_index, dgid, info, go = sys.argv[1:6]
    b = Bench(dev, int(gid_index), dgid)
    mrs = {"plain": MR(b.pd, PAGE, REMOTE)}
    try:
        mrs["flush"] = MR(b.pd, PAGE, REMOTE | ACCESS_FLUSH_GLOBAL)
        refused = None
    except PyverbsRDMAError as ex:
        refused = os.strerror(ex.error_code)
    qps = {}
    for name in QPS:
        qps[name] = b.qp("rc")
        access = REMOTE if name == "no_qp_right" else REMOTE | ACCESS_FLUSH_GLOBAL
        connect(b, qps[name], access)
    with open(info + ".tmp", "w") as f:
        json.dump({
            "qps": {n: qp.qp_num for n, qp in qps.items()},
            "rq_psn": RQ_PSN, "peer_qpn": PEER_QPN, "size": PAGE,
            "mrs": {n: [mr.buf, mr.rkey] for n, mr in mrs.items()},
            "flush_refused": refused,
        }, f)
    os.rename(info + ".tmp", info)
    deadline = time.monotonic() + 600
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.1)
    print(json.dumps({"states": {n: int(state(qp)) for n, qp in qps.items()}}))


if __name__ == "__main__":
    main()
