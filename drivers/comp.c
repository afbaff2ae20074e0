// SPDX-License-Identifier: GPL-2.0
/*
 * The completer: what comes back for a QP's requests (ACKs and NAKs, read
 * responses, atomic ACKs) marks WQEs done, places read data and atomic
 * results, and completes WQEs in order; timeouts and NAKs send the
 * requester back (go-back-N), within retry_cnt and rnr_retry.
 *
 * Everything here runs in the softirq that received the answer or in a
 * timer, under the QP's sq_lock, and sends what the answer made possible
 * right there within a small budget.
 */
#include <linux/bitops.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <rdma/ib_verbs.h>

#include "comp.h"
#include "counters.h"
#include "cq.h"
#include "device.h"
#include "msg.h"
#include "opcode.h"
#include "payload.h"
#include "pkt.h"
#include "qp.h"
#include "req.h"
#include "rtt.h"
#include "trace.h"

/*
 * Packets sent from the softirq an answer arrived in: as many as one ACK
 * opens of the window, so a requester that waited on it goes on without
 * waking its worker.
 */
#define SROCE_COMP_BUDGET	SROCE_ACK_EVERY

/* RNR NAK timer field (9.7.5.2.8, table 45), in microseconds. */
static const u32 sroce_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static void sroce_comp_cqe(const struct sroce_qp *qp,
			   const struct sroce_swqe *swqe, struct sroce_cqe *cqe)
{
	*cqe = (struct sroce_cqe) {
		.wr_id = swqe->wqe.wr_id,
		.status = swqe->status,
		.opcode = sroce_msg_wc_opcode(swqe->wqe.opcode),
		.byte_len = swqe->len,
		.qp_num = qp->ibqp.qp_num,
		.port_num = 1,
	};
}

/**
 * sroce_comp_complete() - complete the done WQEs at the head of the queue
 * @qp: the QP
 *
 * In order, as the spec wants: a WQE done early waits for those before it.
 * Unsignaled WQEs free their slot without a completion; a WQE that failed
 * completes with its status, always, and takes the QP to the error state.
 *
 * The slot is handed back before the completion is posted: a process
 * that sees the completion (on another CPU, at once) may post again, and
 * must find the slot free, as perftest does with a full send queue.
 *
 * Context: sq_lock held.
 */
void sroce_comp_complete(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *swqe;
	struct sroce_cqe cqe;
	bool signaled;
	u8 status;

	lockdep_assert_held(&qp->sq_lock);

	while (qp->sq.cons != req->head) {
		swqe = sroce_swqe_at(qp, qp->sq.cons);
		if (!swqe->done)
			break;
		status = swqe->status;
		signaled = status || qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
			   swqe->wqe.send_flags & IB_SEND_SIGNALED;
		/* The kernel's copy, which only a fetch under sq_lock reuses. */
		if (signaled)
			sroce_comp_cqe(qp, swqe, &cqe);
		if (req->cur == qp->sq.cons) {
			req->cur++;
			req->off = 0;
		}
		sroce_wq_release(&qp->sq);
		if (signaled)
			sroce_cq_post(to_scq(qp->ibqp.send_cq), &cqe, false);
		if (status) {
			sroce_qp_error(qp);
			break;
		}
	}
}

/* Fails a WQE with @status; it completes in turn. Context: sq_lock. */
void sroce_comp_fail(struct sroce_qp *qp, struct sroce_swqe *swqe, u8 status)
{
	lockdep_assert_held(&qp->sq_lock);
	swqe->status = status;
	swqe->done = true;
	sroce_comp_complete(qp);
}

/* The oldest WQE not done, or NULL. */
static struct sroce_swqe *sroce_comp_oldest(struct sroce_qp *qp)
{
	u32 idx;

	for (idx = qp->sq.cons; idx != qp->req.head; idx++)
		if (!sroce_swqe_at(qp, idx)->done)
			return sroce_swqe_at(qp, idx);
	return NULL;
}

/* Starts, restarts or stops the retransmit timer. Context: sq_lock. */
void sroce_comp_arm_timer(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->sq_lock);

	if (!sroce_qp_req_rc(qp) || !req->rto ||
	    READ_ONCE(qp->state) != IB_QPS_RTS)
		return;
	if (req->acked == req->max_psn)
		del_timer(&req->timer);
	else if (!timer_pending(&req->timer))
		mod_timer(&req->timer, jiffies + req->rto);
}

/* The peer made progress: the retry budget is whole again. */
static void sroce_comp_progress(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->retry = qp->attr.retry_cnt;
	req->rnr_retry = qp->attr.rnr_retry;
	if (req->rto && req->acked != req->max_psn)
		mod_timer(&req->timer, jiffies + req->rto);
}

/*
 * The peer answered every PSN before @next: it is heard from, and a timed
 * request among them gives the round trip, which the timeout follows.
 */
static void sroce_comp_heard(struct sroce_qp *qp, u32 next)
{
	struct sroce_req *req = &qp->req;
	/* A clock read only for the sample, not for every read response. */
	u64 now = sroce_rtt_answers(&req->rtt, next) ? ktime_get_ns() : 0;

	if (sroce_rtt_acked(&req->rtt, next, now))
		req->rto = sroce_rtt_rto(&req->rtt, req->timeout);
}

/* Has every response of a read been placed (sroce_comp_rd_later())? */
static bool sroce_comp_rd_whole(const struct sroce_swqe *swqe)
{
	return swqe->wire_op == SROCE_OP_READ_REQ && swqe->sent &&
	       !swqe->done && swqe->len && swqe->resp_off == swqe->len;
}

/* A read or atomic is done: one fewer outstanding. */
static void sroce_comp_rd_out_done(struct sroce_req *req,
				   struct sroce_swqe *swqe)
{
	swqe->done = true;
	if (req->rd_out)
		req->rd_out--;
}

static void sroce_comp_rd_mark(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_req *req = &qp->req;

	sroce_comp_rd_out_done(req, swqe);
	if (sroce_psn_cmp(sroce_psn_add(swqe->last_psn, 1), req->acked) > 0)
		req->acked = sroce_psn_add(swqe->last_psn, 1);
}

/*
 * Reads whose answers all came while an older WQE waited are done once
 * nothing older is left: completions keep the queue's order, and so does
 * req->acked, which the timer and the go-back rules read.
 */
static void sroce_comp_rd_catch_up(struct sroce_qp *qp)
{
	struct sroce_swqe *swqe;
	bool any = false;

	while ((swqe = sroce_comp_oldest(qp)) && sroce_comp_rd_whole(swqe)) {
		sroce_comp_rd_mark(qp, swqe);
		any = true;
	}
	if (any) {
		sroce_comp_heard(qp, qp->req.acked);
		sroce_comp_progress(qp);
	}
}

/**
 * sroce_comp_acked() - mark done what an acknowledgment of @psn covers
 * @qp: the QP
 * @psn: the last PSN acknowledged
 * @nak_reads: a read or atomic the peer went past without our having its
 *	       answer had its answer lost: send it again
 *
 * Return: true when the acknowledgment was new.
 */
static bool sroce_comp_acked(struct sroce_qp *qp, u32 psn, bool nak_reads)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *swqe;
	u32 next = sroce_psn_add(psn, 1);
	u32 idx;

	/* Nothing past what was sent, nothing before what was acked. */
	if (sroce_psn_cmp(next, req->max_psn) > 0 ||
	    sroce_psn_cmp(next, req->acked) <= 0)
		return false;

	for (idx = qp->sq.cons; idx != req->head; idx++) {
		swqe = sroce_swqe_at(qp, idx);
		if (swqe->done)
			continue;
		if (!swqe->numbered)
			break;
		if (sroce_comp_rd_whole(swqe)) {
			/* Its answers all came (sroce_comp_rd_later()). */
			sroce_comp_rd_out_done(req, swqe);
			continue;
		}
		if (sroce_msg_is_rd(swqe->wire_op)) {
			if (!nak_reads ||
			    sroce_psn_cmp(psn, swqe->first_psn) < 0)
				break;
			/*
			 * Once per gap: a responder that answers a repeated
			 * request with the whole rest behind what it already
			 * queued sends many acknowledgments past the gap
			 * before the answer to our first request comes; each
			 * must not ask for yet another copy. A lost request
			 * is the timer's to send again. (docs/INTEROP.md,
			 * "Bugs interop found", 2.)
			 */
			if (swqe->rewind_off == swqe->resp_off)
				return false;
			swqe->rewind_off = swqe->resp_off;
			req->acked = swqe->first_psn;
			sroce_req_rewind(qp);
			return true;
		}
		if (sroce_psn_cmp(swqe->last_psn, psn) > 0)
			break;
		swqe->done = true;
	}
	/* Slow start: each acknowledged packet opens the window by one. */
	req->cwnd = min_t(u32, req->cwnd + ((next - req->acked) &
					    SROCE_BTH_PSN_MASK),
			  SROCE_MAX_INFLIGHT);
	req->acked = next;
	sroce_comp_heard(qp, next);
	sroce_comp_rd_catch_up(qp);
	return true;
}

static void sroce_comp_fail_oldest(struct sroce_qp *qp, u8 status)
{
	struct sroce_swqe *swqe = sroce_comp_oldest(qp);

	if (swqe)
		sroce_comp_fail(qp, swqe, status);
}

/* A NAK that says "send again from @psn", within the retry budget. */
static void sroce_comp_retry(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *swqe;

	if (!req->retry) {
		sroce_count(sdev, SROCE_CNT_RETRY_EXCEEDED);
		sroce_comp_fail_oldest(qp, IB_WC_RETRY_EXC_ERR);
		return;
	}
	req->retry--;
	/* See SROCE_MIN_INFLIGHT. */
	req->cwnd = SROCE_MIN_INFLIGHT;
	sroce_rtt_timed_out(&req->rtt);
	req->rto = sroce_rtt_rto(&req->rtt, req->timeout);
	sroce_count(sdev, SROCE_CNT_RETRANSMITS);
	trace_sroce_retransmit(qp, req->acked, SROCE_RESEND_TIMEOUT);
	/* A read or atomic asked for again: see sroce_req_rd_limit(). */
	swqe = sroce_comp_oldest(qp);
	if (swqe && sroce_msg_is_rd(swqe->wire_op))
		swqe->rewind_off = swqe->resp_off;
	sroce_req_rewind(qp);
}

/*
 * "Send again from @psn". Only news counts: a NAK delayed behind the ACKs
 * that followed it, or the copy of one already acted on, would send the
 * requester back over what the responder already has. It costs no retry:
 * the responder is there and answering.
 */
static void sroce_comp_seq_nak(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;

	if (sroce_psn_cmp(psn, req->acked) < 0 ||
	    (req->nak_seen && psn == req->nak_psn))
		return;
	req->nak_seen = true;
	req->nak_psn = psn;
	if (sroce_comp_acked(qp, sroce_psn_add(psn, SROCE_BTH_PSN_MASK), true))
		sroce_comp_progress(qp);
	sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_RETRANSMITS);
	trace_sroce_retransmit(qp, psn, SROCE_RESEND_SEQ_NAK);
	sroce_req_rewind(qp);
}

static void sroce_comp_rnr(struct sroce_qp *qp, u32 psn, u8 timer)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;

	sroce_count(sdev, SROCE_CNT_RNR_NAK_RECEIVED);
	trace_sroce_rnr_nak_received(qp, psn, timer);
	sroce_comp_acked(qp, sroce_psn_add(psn, SROCE_BTH_PSN_MASK), true);
	if (!req->rnr_retry) {
		sroce_count(sdev, SROCE_CNT_RNR_RETRY_EXCEEDED);
		sroce_comp_fail_oldest(qp, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	/* Seven means try for ever (9.7.5.2.8). */
	if (req->rnr_retry != 7)
		req->rnr_retry--;
	/*
	 * The responder is there and answering: while the requester waits
	 * as asked, the transport timer has nothing to time, and must not
	 * spend retry_cnt on an RNR wait that rnr_retry 7 makes endless. It
	 * starts again with the packets sent when the wait is over.
	 */
	req->retry = qp->attr.retry_cnt;
	del_timer(&req->timer);
	req->rnr_wait = true;
	trace_sroce_retransmit(qp, psn, SROCE_RESEND_RNR_NAK);
	sroce_req_rewind(qp);
	mod_timer(&req->rnr_timer,
		  jiffies + usecs_to_jiffies(sroce_rnr_usecs[timer & 31]));
}

/* The completion status a NAK code reports. */
static u8 sroce_nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REMOTE_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_INVALID_RD:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/*
 * Is @psn that of a request sent and not yet acknowledged? A NAK names the
 * request the responder stopped at, which it has not acknowledged: one
 * outside [acked, max_psn) is stale (delayed, duplicated) or forged, and
 * must not fail the QP or stall it.
 */
static bool sroce_comp_outstanding(const struct sroce_qp *qp, u32 psn)
{
	return sroce_psn_cmp(psn, qp->req.acked) >= 0 &&
	       sroce_psn_cmp(psn, qp->req.max_psn) < 0;
}

static void sroce_comp_ack(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_aeth *aeth = sroce_pkt_hdr(pkt, SROCE_HAS_AETH);
	u8 syn = be32_to_cpu(aeth->smsn) >> SROCE_AETH_SYN_SHIFT;
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	u32 before = sroce_psn_add(pkt->psn, SROCE_BTH_PSN_MASK);

	switch (syn & SROCE_SYN_TYPE_MASK) {
	case SROCE_SYN_ACK:
		if (sroce_comp_acked(qp, pkt->psn, true))
			sroce_comp_progress(qp);
		break;
	case SROCE_SYN_RNR_NAK:
		if (sroce_comp_outstanding(qp, pkt->psn))
			sroce_comp_rnr(qp, pkt->psn,
				       syn & SROCE_SYN_VALUE_MASK);
		break;
	case SROCE_SYN_NAK:
		sroce_count(sdev, SROCE_CNT_NAK_RECEIVED);
		if (!sroce_comp_outstanding(qp, pkt->psn))
			break;
		if ((syn & SROCE_SYN_VALUE_MASK) == SROCE_NAK_PSN_SEQ) {
			sroce_comp_seq_nak(qp, pkt->psn);
			break;
		}
		sroce_comp_acked(qp, before, true);
		sroce_comp_fail_oldest(qp, sroce_nak_status(syn &
					SROCE_SYN_VALUE_MASK));
		break;
	default:
		/* Reserved syndrome: drop. */
		break;
	}
}

/* The read or atomic WQE an answer at @psn is for, if it is expected. */
/* The requester went back because a response was missing, from @psn. */
static void sroce_comp_resend(struct sroce_qp *qp, u32 psn)
{
	sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_RETRANSMITS);
	trace_sroce_retransmit(qp, psn, SROCE_RESEND_LOST_RESPONSE);
}

static struct sroce_swqe *sroce_comp_rd_wqe(struct sroce_qp *qp, u32 psn)
{
	u32 before = sroce_psn_add(psn, SROCE_BTH_PSN_MASK);
	struct sroce_swqe *swqe;

	/* An answer to nothing sent is news of nothing. */
	if (sroce_psn_cmp(psn, qp->req.max_psn) >= 0)
		return NULL;
	/*
	 * The answer to a request after the oldest read or atomic: the
	 * responder answers in PSN order, so what was left of that one's
	 * answer was lost. Ask again now, once per gap, rather than when the
	 * transport timer fires: a responder answers a repeated read or
	 * atomic from its resources, whenever it comes.
	 */
	swqe = sroce_comp_oldest(qp);
	if (swqe && swqe->sent && sroce_msg_is_rd(swqe->wire_op) &&
	    sroce_psn_cmp(psn, swqe->last_psn) > 0) {
		if (sroce_comp_acked(qp, before, true))
			sroce_comp_resend(qp, swqe->first_psn);
		return NULL;
	}
	/* An answer acknowledges every request before it. */
	sroce_comp_acked(qp, before, false);
	swqe = sroce_comp_oldest(qp);
	if (!swqe || !swqe->sent || !sroce_msg_is_rd(swqe->wire_op))
		return NULL;
	if (sroce_psn_cmp(psn, swqe->first_psn) < 0 ||
	    sroce_psn_cmp(psn, swqe->last_psn) > 0)
		return NULL;
	return swqe;
}

static void sroce_comp_rd_done(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	sroce_comp_rd_mark(qp, swqe);
	sroce_comp_heard(qp, qp->req.acked);
	sroce_comp_progress(qp);
	sroce_comp_rd_catch_up(qp);
}

/**
 * sroce_comp_busy() - restart the transport timer, keep the retry budget
 * @qp: the QP
 *
 * A read response that brings nothing new (a duplicate, one past a gap we
 * already asked to have filled, or one for a later read while an earlier
 * one has a gap) still shows the responder at work on our reads. A
 * responder that answers a repeated read request with a second burst
 * behind the first can have seconds of stale responses queued on a slow
 * link; timing out while they drain would ask for yet another copy of
 * the rest and spend a retry each time. So the timer measures silence;
 * a responder that stops answering still times out. (docs/INTEROP.md,
 * "Bugs interop found", 1.)
 *
 * Context: sq_lock held.
 */
static void sroce_comp_busy(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->sq_lock);

	if (req->rto && req->acked != req->max_psn)
		mod_timer(&req->timer, jiffies + req->rto);
}

/*
 * An atomic write is answered by an RDMA READ Response Only without
 * payload (IBA 1.5, A19): the word is stored. Any other response for it
 * is not one.
 */
static void sroce_comp_atomic_write_resp(struct sroce_qp *qp,
					 struct sroce_swqe *swqe,
					 struct sroce_pkt *pkt)
{
	if (swqe->done)
		return;
	if ((pkt->mask & SROCE_ONLY) != SROCE_ONLY || pkt->paylen) {
		sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_RX_DROPPED);
		return;
	}
	sroce_comp_rd_done(qp, swqe);
}

/*
 * Where the answer @swqe waits for ends: the read's end, or that of the
 * piece asked for again after a loss (sroce_req_rd_len()).
 */
static u32 sroce_comp_rd_piece_end(struct sroce_qp *qp,
				   const struct sroce_swqe *swqe)
{
	if (swqe->rewind_off == U32_MAX)
		return swqe->len;
	return swqe->rewind_off + sroce_req_rd_len(qp, swqe, swqe->rewind_off);
}

/*
 * Does @pkt fit at @off of @swqe's answer, which ends at @piece: a whole
 * packet, a LAST only where the read ends? (A piece's own end comes in
 * order, to ask for the next.)
 */
static bool sroce_comp_rd_fits(const struct sroce_qp *qp,
			       const struct sroce_swqe *swqe,
			       const struct sroce_pkt *pkt, u32 off, u32 piece)
{
	u32 end = off + pkt->paylen;
	bool final = end == swqe->len;

	return pkt->paylen && end <= piece && (end < piece || final) &&
	       final == !!(pkt->mask & SROCE_LAST) &&
	       (final || pkt->paylen == qp->req.mtu);
}

/* Copies a read response's payload to @off of its WQE's buffers. */
static int sroce_comp_rd_place(struct sroce_qp *qp, struct sroce_swqe *swqe,
			       struct sroce_pkt *pkt, u32 off)
{
	return sroce_payload_scatter(to_sdev(qp->ibqp.device), qp->ibqp.pd,
				     &qp->req.fault, swqe->wqe.sge,
				     swqe->wqe.num_sge, off, pkt->skb,
				     sroce_pkt_payoff(pkt), pkt->paylen);
}

#define SROCE_RD_REORDER	3

/*
 * A read response past the one expected may be early rather than news of
 * a loss: a link can reorder frames (two paths, a queue that lets some
 * overtake), and then the missing ones come right after it. Going back at
 * once would ask for the whole rest of the read again, in pieces, one
 * read at a time, for packets that were never lost; on netem's reorder
 * profile that was most reads. So a response inside what was asked for
 * is placed where it belongs and kept in @swqe->ahead, as TCP keeps what
 * comes past a hole; the SROCE_RD_REORDER-th one past the same gap, or
 * one too far to keep, is taken as a loss. Placing is safe whatever
 * happens next: the bytes are those of the same offset, and asked for
 * again they are written again.
 *
 * Return: true when @pkt is kept (or was), and the gap may wait.
 */
static bool sroce_comp_rd_ahead(struct sroce_qp *qp, struct sroce_swqe *swqe,
				struct sroce_pkt *pkt, u32 expect)
{
	u32 dist = (pkt->psn - expect) & SROCE_BTH_PSN_MASK;
	u32 off = swqe->resp_off + dist * qp->req.mtu;
	int err;

	if (dist > BITS_PER_TYPE(swqe->ahead))
		return false;
	if (swqe->ahead & BIT_ULL(dist - 1))
		return true;
	if (!sroce_comp_rd_fits(qp, swqe, pkt, off,
				sroce_comp_rd_piece_end(qp, swqe)) ||
	    hweight64(swqe->ahead) + 1 >= SROCE_RD_REORDER)
		return false;
	err = sroce_comp_rd_place(qp, swqe, pkt, off);
	/* A page being faulted in: not kept, and asked for when missed. */
	if (err)
		return err == -EAGAIN;
	swqe->ahead |= BIT_ULL(dist - 1);
	return true;
}

/*
 * The expected response of @swqe was just placed: the kept ones that are
 * next in order now are taken as if they had just come. Return: how many.
 */
static u32 sroce_comp_rd_take_ahead(struct sroce_qp *qp,
				    struct sroce_swqe *swqe)
{
	u32 piece = sroce_comp_rd_piece_end(qp, swqe);
	u32 n = 0, next;

	while (swqe->ahead & 1) {
		next = min(swqe->resp_off + qp->req.mtu, swqe->len);
		/* Not the end of a piece: that one asks for the next. */
		if (next == piece && piece != swqe->len)
			break;
		swqe->ahead >>= 1;
		swqe->resp_off = next;
		n++;
	}
	/* Bit i is the (i + 2)th packet from @resp_off again. */
	swqe->ahead >>= 1;
	return n;
}

/*
 * A response to a later read than the oldest: the oldest one's rest was
 * lost (or is only late), and it will be asked for again. The later
 * read's own responses are as good as ever, though, and the responder
 * goes on sending them: one that is next in order for its read is placed
 * now, so that the go-back asks again only for what is missing (the
 * requester starts a read sent again from its @resp_off, and passes over
 * one that is whole; sroce_req_skip_acked()), not for every read behind
 * a lost packet, each answered again in full. It completes in its turn.
 */
static void sroce_comp_rd_later(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_swqe *oldest = sroce_comp_oldest(qp), *swqe;
	struct sroce_req *req = &qp->req;
	u32 idx;

	/* Only where sroce_comp_rd_wqe() goes back for the oldest. */
	if (!oldest || !oldest->sent || !sroce_msg_is_rd(oldest->wire_op) ||
	    sroce_psn_cmp(pkt->psn, oldest->last_psn) <= 0 ||
	    sroce_psn_cmp(pkt->psn, req->max_psn) >= 0)
		return;
	for (idx = qp->sq.cons; idx != req->head; idx++) {
		swqe = sroce_swqe_at(qp, idx);
		if (!swqe->numbered)
			return;
		if (sroce_psn_cmp(pkt->psn, swqe->first_psn) >= 0 &&
		    sroce_psn_cmp(pkt->psn, swqe->last_psn) <= 0)
			break;
	}
	if (idx == req->head)
		return;
	if (swqe->wire_op != SROCE_OP_READ_REQ || !swqe->sent || swqe->done ||
	    swqe->rewind_off != U32_MAX ||
	    pkt->psn != sroce_psn_add(swqe->first_psn,
				      swqe->resp_off / req->mtu) ||
	    !sroce_comp_rd_fits(qp, swqe, pkt, swqe->resp_off, swqe->len) ||
	    sroce_comp_rd_place(qp, swqe, pkt, swqe->resp_off))
		return;
	swqe->resp_off += pkt->paylen;
}

/*
 * Return: false when @pkt was kept ahead of a gap in its read: its AETH
 * (a LAST's) speaks for a read not yet whole, and is not an ACK of it.
 */
static bool sroce_comp_read_resp(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *swqe;
	bool last = pkt->mask & SROCE_LAST;
	u32 expect, end, piece, n;
	int err;

	/* A response to any read we sent, in order or not, ours to take or not. */
	if (sroce_psn_cmp(pkt->psn, req->max_psn) < 0)
		sroce_comp_busy(qp);
	sroce_comp_rd_later(qp, pkt);
	swqe = sroce_comp_rd_wqe(qp, pkt->psn);
	if (swqe && swqe->wire_op == SROCE_OP_ATOMIC_WRITE) {
		sroce_comp_atomic_write_resp(qp, swqe, pkt);
		return true;
	}
	if (!swqe || swqe->wire_op != SROCE_OP_READ_REQ)
		return true;
	expect = sroce_psn_add(swqe->first_psn, swqe->resp_off / req->mtu);
	if (pkt->psn != expect) {
		sroce_count(sdev, SROCE_CNT_RX_OUT_OF_SEQ);
		if (sroce_psn_cmp(pkt->psn, expect) < 0)
			return true;
		if (sroce_comp_rd_ahead(qp, swqe, pkt, expect))
			return false;
		/* A gap: ask again for the rest, once per gap. */
		if (swqe->rewind_off != swqe->resp_off) {
			swqe->rewind_off = swqe->resp_off;
			sroce_req_rewind(qp);
			sroce_comp_resend(qp, expect);
		}
		return true;
	}
	/*
	 * Every response but the last is exactly one MTU (9.7.4.1.4); the
	 * last ends the read, or the piece of it asked for again. A full
	 * LAST that ends neither is one of an older request for the same
	 * bytes (a piece asked for twice): its data is as good as any.
	 */
	end = swqe->resp_off + pkt->paylen;
	piece = sroce_comp_rd_piece_end(qp, swqe);
	last = last && (end == swqe->len || end == piece);
	if (end > swqe->len || (!last && pkt->paylen != req->mtu)) {
		sroce_count(sdev, SROCE_CNT_RX_DROPPED);
		return true;
	}
	err = sroce_comp_rd_place(qp, swqe, pkt, swqe->resp_off);
	if (err == -EAGAIN) {
		/* Dropped: asked for again once the page is in. */
		qp->req.fault_rewind = true;
		return true;
	}
	if (err) {
		sroce_comp_fail(qp, swqe, err == -EMSGSIZE ?
				IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
		return true;
	}
	swqe->resp_off = end;
	n = sroce_comp_rd_take_ahead(qp, swqe);
	/* A read is timed to its first response (sroce_req_send_rd()). */
	sroce_comp_heard(qp, sroce_psn_add(pkt->psn, n + 1));
	if (swqe->resp_off == swqe->len && (last || n)) {
		sroce_comp_rd_done(qp, swqe);
		return true;
	}
	sroce_comp_progress(qp);
	if (last) {
		/* A piece asked for again is in: ask for the next one. */
		swqe->rewind_off = end;
		sroce_req_rewind(qp);
	}
	return true;
}

static void sroce_comp_atomic_ack(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_atomic_ack_eth *ack;
	struct sroce_swqe *swqe;
	u64 orig;
	int err;

	swqe = sroce_comp_rd_wqe(qp, pkt->psn);
	if (!swqe || !sroce_msg_is_atomic(swqe->wire_op) || swqe->done)
		return;
	ack = sroce_pkt_hdr(pkt, SROCE_HAS_ATOMICACKETH);
	/* The original value lands in memory in the host's byte order. */
	orig = be64_to_cpu(ack->orig);
	err = sroce_payload_scatter_buf(to_sdev(qp->ibqp.device), qp->ibqp.pd,
					&qp->req.fault, swqe->wqe.sge,
					swqe->wqe.num_sge, &orig,
					sizeof(orig));
	if (err == -EAGAIN) {
		/* The responder answers the repeated request from its table. */
		qp->req.fault_rewind = true;
		return;
	}
	if (err) {
		sroce_comp_fail(qp, swqe, IB_WC_LOC_PROT_ERR);
		return;
	}
	sroce_comp_rd_done(qp, swqe);
}

/* One answer; false when the QP no longer takes any. */
static bool sroce_comp_one(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	bool aeth = pkt->mask & SROCE_HAS_AETH &&
		    !(pkt->mask & SROCE_READ && !(pkt->mask & SROCE_LAST));

	if (READ_ONCE(qp->state) != IB_QPS_RTS &&
	    READ_ONCE(qp->state) != IB_QPS_SQD)
		return false;
	if (pkt->mask & SROCE_READ)
		aeth &= sroce_comp_read_resp(qp, pkt);
	else if (pkt->mask & SROCE_ATOMIC)
		sroce_comp_atomic_ack(qp, pkt);
	if (aeth)
		sroce_comp_ack(qp, pkt);
	return true;
}

/**
 * sroce_comp_rx_run() - answers to this QP's requests, in arrival order
 * @qp: an RC QP
 * @pkts: ACKs, NAKs, read responses or atomic ACKs
 * @n: how many
 *
 * The run is taken under one hold of the lock, and what it allows
 * (completions, new packets) is done once, after its last answer.
 *
 * Context: softirq.
 */
void sroce_comp_rx_run(struct sroce_qp *qp, struct sroce_pkt **pkts,
		       unsigned int n)
{
	enum sroce_req_stop stop;
	unsigned int i;

	spin_lock_bh(&qp->sq_lock);
	for (i = 0; i < n; i++)
		if (!sroce_comp_one(qp, pkts[i]))
			break;
	if (!i) {
		spin_unlock_bh(&qp->sq_lock);
		return;
	}
	/*
	 * An idle requester is rung by the provider and a busy one has its
	 * worker queued: only one that waited for an answer goes on here.
	 * Completions the answer allowed are made either way.
	 */
	stop = SROCE_REQ_IDLE;
	if (qp->req.blocked) {
		stop = sroce_req_run(qp, SROCE_COMP_BUDGET);
	} else {
		sroce_comp_complete(qp);
		sroce_comp_arm_timer(qp);
	}
	spin_unlock_bh(&qp->sq_lock);
	if (stop == SROCE_REQ_BUDGET)
		queue_work(sroce_wq, &qp->send_work);
}

/**
 * sroce_comp_rx() - an answer to this QP's requests: a run of one
 * @qp: an RC QP
 * @pkt: an ACK, NAK, read response or atomic ACK
 *
 * Context: softirq.
 */
void sroce_comp_rx(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	sroce_comp_rx_run(qp, &pkt, 1);
}

/* The retransmit timer: nothing was acknowledged for a whole timeout. */
void sroce_comp_timeout(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, req.timer);
	struct sroce_req *req = &qp->req;

	bool run;

	spin_lock_bh(&qp->sq_lock);
	run = READ_ONCE(qp->state) == IB_QPS_RTS;
	if (run && req->acked != req->max_psn)
		sroce_comp_retry(qp);
	spin_unlock_bh(&qp->sq_lock);
	if (run)
		queue_work(sroce_wq, &qp->send_work);
}

/**
 * sroce_comp_fault_done() - a page the requester or completer waited for
 * is in (or could not be brought in)
 * @qp: the QP
 *
 * An answer dropped for want of it is asked for again: the oldest read or
 * atomic not done goes again from the first byte that did not arrive (a
 * fault that failed then fails it, when the answer comes again). Then
 * the requester goes on with the packet it held back.
 *
 * Context: process (the fault's work).
 */
void sroce_comp_fault_done(struct sroce_qp *qp)
{
	struct sroce_swqe *swqe;

	spin_lock_bh(&qp->sq_lock);
	if (qp->req.fault_rewind && READ_ONCE(qp->state) == IB_QPS_RTS) {
		swqe = sroce_comp_oldest(qp);
		if (swqe && sroce_msg_is_rd(swqe->wire_op) && swqe->sent) {
			swqe->rewind_off = swqe->resp_off;
			sroce_req_rewind(qp);
		}
	}
	qp->req.fault_rewind = false;
	spin_unlock_bh(&qp->sq_lock);
	sroce_req_kick(qp);
}

/* The wait an RNR NAK asked for is over: send again. */
void sroce_comp_rnr_timeout(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, req.rnr_timer);

	bool run;

	spin_lock_bh(&qp->sq_lock);
	qp->req.rnr_wait = false;
	run = READ_ONCE(qp->state) == IB_QPS_RTS;
	spin_unlock_bh(&qp->sq_lock);
	if (run)
		queue_work(sroce_wq, &qp->send_work);
}
