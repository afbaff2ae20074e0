/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The send side of a QP: the requester turns send WQEs into packets; its
 * other half, the completer (comp.h), turns the answers and timeouts into
 * completions and retransmissions.
 */
#ifndef SROCE_REQ_H
#define SROCE_REQ_H

#include <linux/types.h>

struct sroce_qp;
struct sroce_swqe;
struct work_struct;

/* Unacknowledged packets a QP may have on the wire. */
#define SROCE_MAX_INFLIGHT	256
/*
 * The window after a retransmit timeout: whatever was in flight is sent
 * again from the oldest packet, but only this many at first, and the
 * window grows back by what each acknowledgment covers (TCP's slow start
 * after its retransmit timeout). A timeout fired either for a loss or for
 * a path slower than the timeout; in the second case a whole window sent
 * again reaches the responder as duplicates it must wade through before
 * it can acknowledge anything new, which costs the next timeout too: on
 * a slow enough path the retries run out with nothing lost.
 */
#define SROCE_MIN_INFLIGHT	16
/*
 * A requester asks for an ACK on the last packet of a message that nothing
 * queued follows, and once in this many packets: as rdma_rxe does within a
 * message, so a 64-packet message costs the responder one ACK and the
 * requester one interrupt.
 */
#define SROCE_ACK_EVERY		64
/* Response packets a read asked for again may ask for at once. */
#define SROCE_RD_RETRY_PKTS	128

/*
 * Not an opcode family: the wire_op of a WQE that sends nothing (see
 * sroce_req_local()).
 */
#define SROCE_REQ_LOCAL		0xfe

/* What a run of the requester stopped on. */
enum sroce_req_stop {
	SROCE_REQ_IDLE,		/* nothing posted: the doorbell is armed */
	SROCE_REQ_BLOCKED,	/* window, reads, fence, RNR: an answer kicks */
	SROCE_REQ_BUDGET,	/* more to send: the worker goes on */
};

int sroce_req_init(struct sroce_qp *qp);
void sroce_req_stop(struct sroce_qp *qp);
void sroce_req_fini(struct sroce_qp *qp);
void sroce_req_start(struct sroce_qp *qp);
void sroce_req_set_retry(struct sroce_qp *qp);
void sroce_req_reset(struct sroce_qp *qp);
enum sroce_req_stop sroce_req_run(struct sroce_qp *qp, unsigned int budget);
void sroce_req_kick(struct sroce_qp *qp);
void sroce_req_work(struct work_struct *work);
void sroce_req_rewind(struct sroce_qp *qp);
u32 sroce_req_rd_len(const struct sroce_qp *qp,
		     const struct sroce_swqe *swqe, u32 off);

#endif /* SROCE_REQ_H */
