// SPDX-License-Identifier: GPL-2.0
/*
 * The responder: requests arriving for an RC or UC QP are checked in the
 * order IBTA 9.7.5 gives (PSN, opcode sequence, resources, rights) and
 * executed in the softirq that received them: sends are copied into the
 * receive WQE's buffers, writes into the target MR, atomics done on the
 * target's memory; reads and atomics are answered from a small table of
 * resources (max_dest_rd_atomic entries) that also answers duplicates.
 *
 * Answers leave in PSN order: read responses and atomic ACKs are queued
 * first in, first out, and an ACK for a later request waits behind them.
 * Read responses past a budget are left to a worker. A duplicate read or
 * atomic sends the answers back to the entry it repeats, as the
 * requester's go-back-N does with requests.
 *
 * In a stream of small messages every one asks for an ACK, and an ACK
 * each doubles the frames on the link and the work at both ends. While
 * the requests come close together and we send the peer nothing, the
 * ACK may wait for the next few (ACKs are cumulative); a timer sends it
 * when the stream pauses. A ping-pong, a lone request and a duplicate
 * are answered at once.
 */
#include <linux/atomic.h>
#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "cq.h"
#include "device.h"
#include "fault.h"
#include "limits.h"
#include "mr.h"
#include "mw.h"
#include "msg.h"
#include "net.h"
#include "opcode.h"
#include "payload.h"
#include "pkt.h"
#include "qp.h"
#include "resp.h"
#include "srq.h"
#include "trace.h"

/* Answer packets sent from the softirq before the worker takes over. */
#define SROCE_RESP_BUDGET_RX	32
#define SROCE_RESP_BUDGET_WORK	256

/* ACK requests one ACK may answer at most, beyond its own. */
#define SROCE_ACK_HOLD_MAX	16
/* The longest an ACK is held: well within any requester's ACK timeout. */
#define SROCE_ACK_HOLD_MAX_NS	(1000 * NSEC_PER_USEC)

static unsigned int ack_hold_us = 200;
module_param(ack_hold_us, uint, 0644);
MODULE_PARM_DESC(ack_hold_us,
		 "ACK requests closer together than this (us) are a stream whose ACKs are coalesced, held for at most four times their gap, this, and 1 ms (0: never)");

static enum hrtimer_restart sroce_resp_ack_timeout(struct hrtimer *timer);

/* What executing a request came to. */
enum sroce_verdict {
	SROCE_ACCEPT,
	SROCE_RNR,
	SROCE_NAK_INV,
	SROCE_NAK_ACCESS,
	SROCE_NAK_OP,
};

/* A page is in (or could not be): answers held back for it go on. */
static void sroce_resp_fault_done(struct sroce_fault *f)
{
	struct sroce_qp *qp = container_of(f, struct sroce_qp, resp.fault);

	queue_work(sroce_wq, &qp->resp_work);
}

int sroce_resp_init(struct sroce_qp *qp, u32 rwqe_bytes)
{
	qp->resp.rwqe = kzalloc(rwqe_bytes, SROCE_GFP_OBJ);
	if (!qp->resp.rwqe)
		return -ENOMEM;
	qp->resp.rwqe_bytes = rwqe_bytes;
	qp->resp.max_sge = (rwqe_bytes - sizeof(struct sroce_recv_wqe)) /
			   sizeof(struct sroce_sge);
	sroce_burst_init(&qp->resp.burst);
	INIT_WORK(&qp->resp_work, sroce_resp_work);
	sroce_fault_init(&qp->resp.fault, sroce_resp_fault_done);
	hrtimer_init(&qp->resp.ack_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_SOFT);
	qp->resp.ack_timer.function = sroce_resp_ack_timeout;
	return 0;
}

/* Nothing of the responder's timer and worker runs after this. */
void sroce_resp_stop(struct sroce_qp *qp)
{
	/* First: when done, a fault queues the worker. */
	sroce_fault_stop(&qp->resp.fault);
	hrtimer_cancel(&qp->resp.ack_timer);
	cancel_work_sync(&qp->resp_work);
}

/* After sroce_resp_stop(), or before anything could run. */
void sroce_resp_fini(struct sroce_qp *qp)
{
	kfree(qp->resp.res);
	kfree(qp->resp.rwqe);
}

/**
 * sroce_resp_set_res() - size the table of read and atomic resources
 * @qp: the QP
 * @n: max_dest_rd_atomic
 *
 * Context: modify_qp, process.
 * Return: 0 or -ENOMEM.
 */
int sroce_resp_set_res(struct sroce_qp *qp, u32 n)
{
	struct sroce_rd_res *res, *old;

	n = max(n, 1U);
	res = kcalloc(n, sizeof(*res), SROCE_GFP_OBJ);
	if (!res)
		return -ENOMEM;
	spin_lock_bh(&qp->rq_lock);
	old = qp->resp.res;
	qp->resp.res = res;
	qp->resp.nres = n;
	qp->resp.res_head = 0;
	qp->resp.res_send = 0;
	spin_unlock_bh(&qp->rq_lock);
	kfree(old);
	return 0;
}

/* Context: rq_lock held. */
void sroce_resp_reset(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->rq_lock);

	resp->op = 0;
	resp->has_rwqe = false;
	resp->nak_sent = false;
	resp->uc_drop = false;
	resp->ack_pending = false;
	resp->ack_hold = false;
	resp->ack_held = 0;
	resp->ack_hold_max = 2;
	resp->ackreq_ns = 0;
	resp->res_head = 0;
	resp->res_send = 0;
	sroce_fault_forget(&resp->fault);
	if (resp->res)
		memset(resp->res, 0, resp->nres * sizeof(*resp->res));
}

/* Context: modify_qp to RTR, rq_lock held. */
void sroce_resp_start(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->rq_lock);

	sroce_resp_reset(qp);
	/* An XRC target has none: each request's SRQ gives it. */
	resp->pd = qp->ibqp.pd;
	resp->psn = qp->attr.rq_psn;
	resp->msn = 0;
	resp->mtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
}

/*
 * An answer packet of @paylen payload bytes, @linear of them to be copied
 * into the skb (the others come as page fragments): the pad is the
 * payload's, wherever it sits.
 */
static struct sk_buff *sroce_resp_alloc(struct sroce_qp *qp, u8 opcode,
					u32 psn, u32 paylen, u32 linear)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sk_buff *skb;

	skb = sroce_net_alloc(sdev, &qp->av,
			      sroce_opcode[opcode].hdr_len + linear, GFP_ATOMIC);
	if (!skb)
		return NULL;
	sroce_qp_own_skb(qp, skb);
	/* An XRC target answers with XRC's opcodes, laid out as RC's. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		opcode |= SROCE_TRANSPORT_XRC;
	sroce_bth_init((struct sroce_bth *)skb->data, opcode, false,
		       sroce_pad(paylen), SROCE_DEFAULT_PKEY,
		       qp->attr.dest_qp_num, psn, false);
	return skb;
}

static void sroce_resp_aeth(struct sroce_qp *qp, struct sk_buff *skb,
			    u8 opcode, u8 syn)
{
	struct sroce_aeth *aeth;

	aeth = (void *)(skb->data + sroce_hdr_offset(opcode, SROCE_HAS_AETH));
	aeth->smsn = cpu_to_be32((u32)syn << SROCE_AETH_SYN_SHIFT |
				 (qp->resp.msn & SROCE_AETH_MSN_MASK));
}

/* Sends an ACK, RNR NAK or NAK (@syn) for @psn. */
static void sroce_resp_send_ack(struct sroce_qp *qp, u8 syn, u32 psn)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sk_buff *skb;

	skb = sroce_resp_alloc(qp, SROCE_OP_ACK, psn, 0, 0);
	if (!skb)
		return;	/* as if lost: the requester retransmits */
	sroce_resp_aeth(qp, skb, SROCE_OP_ACK, syn);
	sroce_net_send(sdev, &qp->resp.burst, &qp->av, skb, qp->sport);
	switch (syn & SROCE_SYN_TYPE_MASK) {
	case SROCE_SYN_ACK:
		sroce_count(sdev, SROCE_CNT_ACK_SENT);
		sroce_count_add(sdev, SROCE_CNT_ACK_HELD, qp->resp.ack_held);
		qp->resp.ack_held = 0;
		break;
	case SROCE_SYN_RNR_NAK:
		sroce_count(sdev, SROCE_CNT_RNR_NAK_SENT);
		trace_sroce_rnr_nak_sent(qp, psn, syn & SROCE_SYN_VALUE_MASK);
		break;
	default:
		sroce_count(sdev, SROCE_CNT_NAK_SENT);
	}
}

/*
 * An ACK for @psn. It goes out when the run of packets it came in is
 * done (sroce_resp_serve()), after any answers queued before it, and a
 * later one in the run replaces it: ACKs are cumulative, and one for the
 * run's last request says all a string of them would.
 */
static void sroce_resp_ack(struct sroce_qp *qp, u32 psn)
{
	qp->resp.ack_psn = psn;
	qp->resp.ack_pending = true;
	qp->resp.ack_hold = false;
}

/*
 * Whether the ACK a new request asks for may wait for the next ones: the
 * request came within ack_hold_us of the last that asked, we sent the
 * peer nothing in between (in a ping-pong the peer waits for this ACK
 * before its next ping), and fewer than ack_hold_max are waiting.
 */
static bool sroce_resp_may_hold(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	u32 sent = READ_ONCE(qp->req.max_psn);
	u64 limit = (u64)READ_ONCE(ack_hold_us) * NSEC_PER_USEC;
	u64 now;

	/*
	 * A ping-pong is no stream and needs no clock: with its time
	 * forgotten, a stream can start at the next request at the earliest.
	 */
	if (!limit || sent != resp->ackreq_sent) {
		resp->ackreq_sent = sent;
		resp->ackreq_ns = 0;
		return false;
	}
	now = ktime_get_ns();
	resp->ack_gap_ns = now - resp->ackreq_ns;
	resp->ackreq_ns = now;
	if (resp->ack_gap_ns >= limit)
		return false;
	if (resp->ack_held >= resp->ack_hold_max) {
		/* The peer had that many queued: it may have more. */
		resp->ack_hold_max = min(resp->ack_hold_max * 2,
					 SROCE_ACK_HOLD_MAX);
		return false;
	}
	return true;
}

/* An ACK for the new request @psn of an RC stream, which may wait. */
static void sroce_resp_ack_stream(struct sroce_qp *qp, u32 psn)
{
	struct sroce_resp *resp = &qp->resp;

	/* The ACK pending, held or of the same run, answers this one too. */
	if (resp->ack_pending)
		resp->ack_held++;
	sroce_resp_ack(qp, psn);
	resp->ack_hold = sroce_resp_may_hold(qp);
}

/* The ACK waiting for its run to end, or held, if any, goes now. */
static void sroce_resp_send_held_ack(struct sroce_qp *qp)
{
	if (!qp->resp.ack_pending)
		return;
	qp->resp.ack_pending = false;
	sroce_resp_send_ack(qp, SROCE_SYN_ACK | SROCE_SYN_NO_CREDITS,
			    qp->resp.ack_psn);
}

/*
 * A deferred ACK that no answer is queued before goes out now, before an
 * answer or NAK about a later PSN would overtake it.
 */
static void sroce_resp_ack_now(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	if (resp->res_send == resp->res_head)
		sroce_resp_send_held_ack(qp);
}

/* A NAK or RNR NAK (@syn) for @psn, after the ACK it follows. */
static void sroce_resp_nak(struct sroce_qp *qp, u8 syn, u32 psn)
{
	sroce_resp_ack_now(qp);
	sroce_resp_send_ack(qp, syn, psn);
}

/*
 * Looks up @rkey for @len bytes at @va with @access, the first @need of
 * them to be used now. An rkey may name a memory window: the access then
 * goes to the MR it is bound to, so what follows is the same either way.
 * The MR is entered (sroce_mr_enter()) until sroce_resp_mr_put(): an
 * invalidation waits for the copy in between. Returns the MR, or
 * ERR_PTR(-EAGAIN) while a page of an ODP MR is being faulted in (the
 * fault is for all @len), or another ERR_PTR() when the access is refused.
 */
static struct sroce_mr *sroce_resp_mr(struct sroce_qp *qp,
				      const struct ib_pd *pd, u32 rkey, u64 va,
				      u32 len, u32 need, u32 access)
{
	struct sroce_mr *mr = sroce_mr_get(to_sdev(qp->ibqp.device), rkey);
	int err;

	if (!mr)
		return ERR_PTR(-EACCES);
	if (mr->type == SROCE_MR_MW) {
		/* The window is entered there, before its binding is read. */
		return sroce_mw_get_mr(mr, &qp->ibqp, rkey, va, len, access) ?:
		       ERR_PTR(-EACCES);
	}
	sroce_mr_enter(mr);
	err = sroce_mr_check(mr, pd, va, len, access);
	if (!err)
		err = sroce_mr_present(mr, va, need);
	if (err == -EAGAIN)
		err = sroce_fault_ask(&qp->resp.fault, mr, rkey, va, len);
	if (err) {
		sroce_mr_leave(mr);
		sroce_mr_put(mr);
		return ERR_PTR(err);
	}
	return mr;
}

static void sroce_resp_mr_put(struct sroce_mr *mr)
{
	sroce_mr_leave(mr);
	sroce_mr_put(mr);
}

/*
 * One read response packet of @res: 0; -EAGAIN while its page is faulted
 * in; another errno when it cannot be built.
 */
static int sroce_resp_read_packet(struct sroce_qp *qp,
				  struct sroce_rd_res *res)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	u32 len = min(res->len, qp->resp.mtu);
	bool first = res->psn == res->first_psn;
	bool last = res->psn == res->stop_psn;
	bool zcopy = sroce_payload_zcopy(sdev, qp->av.dmac, len);
	struct sroce_mr *mr = NULL;
	struct sk_buff *skb;
	u8 op;
	int err = 0;

	op = first && last ? SROCE_OP_READ_RESP_ONLY :
	     first ? SROCE_OP_READ_RESP_FIRST :
	     last ? SROCE_OP_READ_RESP_LAST : SROCE_OP_READ_RESP_MIDDLE;
	if (len) {
		mr = sroce_resp_mr(qp, res->pd, res->rkey, res->va, len, len,
				   IB_ACCESS_REMOTE_READ);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
	}
again:
	skb = sroce_resp_alloc(qp, op, res->psn, len, zcopy ? 0 : len);
	if (!skb) {
		err = -ENOMEM;
		goto err_put;
	}
	if (sroce_opcode[op].mask & SROCE_HAS_AETH)
		sroce_resp_aeth(qp, skb, op, SROCE_SYN_ACK |
				SROCE_SYN_NO_CREDITS);
	if (len)
		err = sroce_payload_mr(skb, zcopy ? NULL :
				       skb->data + sroce_opcode[op].hdr_len,
				       mr, res->va, len);
	if (err) {
		kfree_skb(skb);
		zcopy = false;
		goto again;
	}
	if (mr)
		sroce_resp_mr_put(mr);
	if (zcopy && len)
		sroce_count(sdev, SROCE_CNT_TX_ZEROCOPY);
	sroce_net_send(sdev, &qp->resp.burst, &qp->av, skb, qp->sport);
	res->psn = sroce_psn_add(res->psn, 1);
	res->va += len;
	res->len -= len;
	return 0;

err_put:
	if (mr)
		sroce_resp_mr_put(mr);
	return err;
}

static void sroce_resp_atomic_ack(struct sroce_qp *qp,
				  const struct sroce_rd_res *res)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_atomic_ack_eth *ack;
	struct sk_buff *skb;

	skb = sroce_resp_alloc(qp, SROCE_OP_ATOMIC_ACK, res->first_psn, 0,
			       0);
	if (!skb)
		return;
	sroce_resp_aeth(qp, skb, SROCE_OP_ATOMIC_ACK,
			SROCE_SYN_ACK | SROCE_SYN_NO_CREDITS);
	ack = (void *)(skb->data + sroce_hdr_offset(SROCE_OP_ATOMIC_ACK,
						    SROCE_HAS_ATOMICACKETH));
	ack->orig = cpu_to_be64(res->orig);
	sroce_net_send(sdev, &qp->resp.burst, &qp->av, skb, qp->sport);
}

/* How far sroce_resp_answer() got. */
enum sroce_serve {
	SROCE_SERVE_DONE,	/* every answer of the entry is sent */
	SROCE_SERVE_BUDGET,	/* the budget ran out: the worker goes on */
	/* The netdev is full (its frees kick us), or a page is faulted in. */
	SROCE_SERVE_BLOCKED,
};

/* Has @res answers left to send? */
static bool sroce_rd_res_pending(const struct sroce_rd_res *res)
{
	return sroce_psn_cmp(res->psn, res->stop_psn) <= 0;
}

/*
 * The rest of a read accepted earlier can no longer be read: its MR was
 * invalidated or deregistered, or a page of an ODP MR could not be
 * brought back. A remote access error (9.7.5.2.4) for @psn, the response
 * that cannot be sent or the duplicate that asked for it, and the QP is
 * done for, as for one found at the request; giving the entry up
 * silently would have the requester ask again until its retries ran out.
 */
static void sroce_resp_read_refused(struct sroce_qp *qp,
				    struct sroce_rd_res *res, u32 psn)
{
	res->psn = sroce_psn_add(res->stop_psn, 1);
	sroce_resp_send_ack(qp, SROCE_SYN_NAK | SROCE_NAK_REMOTE_ACCESS, psn);
	sroce_qp_error(qp);
}

/* Sends what is left of one entry's answers, within @budget. */
static enum sroce_serve sroce_resp_answer(struct sroce_qp *qp,
					  struct sroce_rd_res *res,
					  unsigned int *budget)
{
	int err;

	while (sroce_rd_res_pending(res)) {
		/* An earlier entry may have spent it all: this one waits. */
		if (!*budget)
			return SROCE_SERVE_BUDGET;
		if (sroce_qp_tx_full(qp))
			return SROCE_SERVE_BLOCKED;
		/* An atomic write's or flush's: a read response, empty. */
		if (sroce_msg_is_atomic(res->op)) {
			sroce_resp_atomic_ack(qp, res);
			res->psn = sroce_psn_add(res->psn, 1);
		} else {
			err = sroce_resp_read_packet(qp, res);
			if (err == -EAGAIN)
				return SROCE_SERVE_BLOCKED;
			/* Memory for the packet: the requester asks again. */
			if (err == -ENOMEM) {
				res->psn = sroce_psn_add(res->stop_psn, 1);
				break;
			}
			if (err) {
				sroce_resp_read_refused(qp, res, res->psn);
				return SROCE_SERVE_BLOCKED;
			}
		}
		--*budget;
	}
	return SROCE_SERVE_DONE;
}

/*
 * Whether the pending ACK waits: it may (sroce_resp_may_hold()), and the
 * timer will send it if no later request does within four gaps.
 *
 * Context: rq_lock held.
 */
static bool sroce_resp_hold(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	u64 wait;

	lockdep_assert_held(&qp->rq_lock);

	if (!resp->ack_hold)
		return false;
	if (!hrtimer_is_queued(&resp->ack_timer)) {
		wait = min3(resp->ack_gap_ns * 4,
			    (u64)READ_ONCE(ack_hold_us) * NSEC_PER_USEC,
			    (u64)SROCE_ACK_HOLD_MAX_NS);
		hrtimer_start(&resp->ack_timer, ns_to_ktime(wait),
			      HRTIMER_MODE_REL_SOFT);
	}
	return true;
}

/**
 * sroce_resp_serve() - send queued answers, oldest first, within a budget
 * @qp: the QP
 * @budget: packets at most
 *
 * Context: rq_lock held.
 * Return: true when the budget ran out with answers left to send.
 */
static bool sroce_resp_serve(struct sroce_qp *qp, unsigned int budget)
{
	struct sroce_resp *resp = &qp->resp;
	enum sroce_serve st;

	lockdep_assert_held(&qp->rq_lock);

	while (resp->res_send != resp->res_head) {
		st = sroce_resp_answer(qp, &resp->res[resp->res_send %
						      resp->nres], &budget);
		if (st != SROCE_SERVE_DONE)
			return st == SROCE_SERVE_BUDGET;
		resp->res_send++;
	}
	if (resp->ack_pending && !sroce_resp_hold(qp))
		sroce_resp_send_held_ack(qp);
	return false;
}

/*
 * The timer sent the held ACK: the stream paused for four gaps, so the
 * peer had fewer requests queued than were held (or none left to send):
 * hold fewer next time.
 */
static enum hrtimer_restart sroce_resp_ack_timeout(struct hrtimer *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp,
					   resp.ack_timer);
	struct sroce_resp *resp = &qp->resp;
	u8 state;

	spin_lock_bh(&qp->rq_lock);
	state = READ_ONCE(qp->state);
	if (resp->ack_pending && resp->ack_hold &&
	    resp->res_send == resp->res_head &&
	    state >= IB_QPS_RTR && state != IB_QPS_ERR) {
		resp->ack_hold_max = max(resp->ack_hold_max / 2, 1);
		sroce_resp_send_held_ack(qp);
		sroce_burst_flush(to_sdev(qp->ibqp.device), &resp->burst);
	}
	spin_unlock_bh(&qp->rq_lock);
	return HRTIMER_NORESTART;
}

void sroce_resp_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, resp_work);
	bool more;

	do {
		spin_lock_bh(&qp->rq_lock);
		more = READ_ONCE(qp->state) >= IB_QPS_RTR &&
		       READ_ONCE(qp->state) != IB_QPS_ERR &&
		       sroce_resp_serve(qp, SROCE_RESP_BUDGET_WORK);
		sroce_burst_flush(to_sdev(qp->ibqp.device), &qp->resp.burst);
		spin_unlock_bh(&qp->rq_lock);
		cond_resched();
	} while (more);
}

/*
 * A new entry in the resource table; NULL when all are still answering.
 *
 * When every entry is queued, the oldest one is given up if a duplicate
 * queued it again (or it is answered): a peer keeps at most as many reads
 * and atomics outstanding as we have entries, and completes them in
 * order, so a new one proves it has the oldest answer already. A peer
 * that asks for more than it agreed to is refused.
 */
static struct sroce_rd_res *sroce_resp_new_res(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rd_res *res;

	if (resp->res_head - resp->res_send >= resp->nres) {
		res = &resp->res[resp->res_send % resp->nres];
		if (!res->again && sroce_rd_res_pending(res))
			return NULL;
		resp->res_send++;
	}
	sroce_resp_ack_now(qp);
	res = &resp->res[resp->res_head % resp->nres];
	memset(res, 0, sizeof(*res));
	res->pd = resp->pd;
	return res;
}

/* Takes the next receive WQE; false when there is none (RNR). */
bool sroce_resp_take_rwqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	int ret;

	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		ret = sroce_srq_take(resp->xsrq, resp->rwqe, resp->rwqe_bytes);
		resp->rwqe_srqn = resp->xsrq->srq_num;
	} else if (qp->ibqp.srq) {
		ret = sroce_srq_take(to_ssrq(qp->ibqp.srq), resp->rwqe,
				     resp->rwqe_bytes);
	} else {
		ret = sroce_wq_take(&qp->rq, resp->rwqe, qp->rq.q.stride);
	}
	if (ret <= 0)
		return false;
	/* The SGE count is the process's word: bound it by the buffer. */
	if (resp->rwqe->num_sge > resp->max_sge)
		resp->rwqe->num_sge = 0;
	resp->has_rwqe = true;
	resp->off = 0;
	return true;
}

static u32 sroce_resp_ieth(const struct sroce_pkt *pkt)
{
	return be32_to_cpu(*(__be32 *)sroce_pkt_hdr(pkt, SROCE_HAS_IETH));
}

/*
 * The CQ the receive WQE in use completes on: an XRC target's is that of
 * the SRQ the WQE came from, if it still exists. Context: BH disabled (an
 * RCU read-side section, which the SRQ outlives).
 */
static struct sroce_cq *sroce_resp_rcq(struct sroce_qp *qp)
{
	struct sroce_srq *srq;

	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return to_scq(qp->ibqp.recv_cq);
	srq = sroce_srq_xrc_get(to_sdev(qp->ibqp.device), qp->resp.rwqe_srqn,
				qp->ibqp.xrcd);
	return srq ? to_scq(srq->ibsrq.ext.cq) : NULL;
}

/* Completes the receive WQE in use with @status. */
static void sroce_resp_complete(struct sroce_qp *qp, struct sroce_pkt *pkt,
				u8 status, u32 opcode, u32 byte_len)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_cqe cqe = {
		.wr_id = resp->rwqe->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->attr.dest_qp_num,
		.port_num = 1,
	};
	struct sroce_cq *cq;

	if (!status && pkt->mask & SROCE_HAS_IMMDT) {
		cqe.ex.imm_data = *(__be32 *)sroce_pkt_hdr(pkt, SROCE_HAS_IMMDT);
		cqe.wc_flags |= SROCE_WC_WITH_IMM;
	}
	if (!status && pkt->mask & SROCE_HAS_IETH) {
		cqe.ex.invalidate_rkey = sroce_resp_ieth(pkt);
		cqe.wc_flags |= SROCE_WC_WITH_INVALIDATE;
	}
	cq = sroce_resp_rcq(qp);
	resp->has_rwqe = false;
	if (cq)
		sroce_cq_post(cq, &cqe, pkt->se);
}

/* The packet's payload is one MTU unless it is the message's last. */
static bool sroce_resp_len_ok(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	if (pkt->mask & SROCE_LAST)
		return pkt->paylen <= qp->resp.mtu;
	return pkt->paylen == qp->resp.mtu;
}

static enum sroce_verdict sroce_resp_send(struct sroce_qp *qp,
					  struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	int err;

	if (!sroce_resp_len_ok(qp, pkt))
		return SROCE_NAK_INV;
	/* The rest of an XRC send goes where its first packet went. */
	if (resp->has_rwqe && resp->xsrq &&
	    resp->rwqe_srqn != resp->xsrq->srq_num)
		return SROCE_NAK_INV;
	if (pkt->mask & SROCE_FIRST && !resp->has_rwqe &&
	    !sroce_resp_take_rwqe(qp))
		return SROCE_RNR;
	if (pkt->mask & SROCE_FIRST)
		resp->off = 0;
	err = sroce_payload_scatter(sdev, resp->pd, &resp->fault,
				    resp->rwqe->sge, resp->rwqe->num_sge,
				    resp->off, pkt->skb, sroce_pkt_payoff(pkt),
				    pkt->paylen);
	/* The receive WQE stays: the packet comes again after the wait. */
	if (err == -EAGAIN)
		return SROCE_RNR;
	if (err) {
		sroce_resp_complete(qp, pkt, err == -EMSGSIZE ?
				    IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR,
				    IB_WC_RECV, resp->off);
		return err == -EMSGSIZE ? SROCE_NAK_INV : SROCE_NAK_OP;
	}
	resp->off += pkt->paylen;
	resp->op = SROCE_SEND;
	if (pkt->mask & SROCE_LAST) {
		/*
		 * Send with Invalidate: a key we cannot invalidate is a bad
		 * request, and the QP's end.
		 */
		if (pkt->mask & SROCE_HAS_IETH &&
		    sroce_mr_invalidate(sdev, resp->pd, sroce_resp_ieth(pkt),
					&qp->ibqp))
			return SROCE_NAK_INV;
		sroce_resp_complete(qp, pkt, IB_WC_SUCCESS, IB_WC_RECV,
				    resp->off);
		resp->op = 0;
	}
	return SROCE_ACCEPT;
}

/*
 * Is a read's rkey good for the range its RETH asks for? An RNR NAK while
 * a page of an ODP MR is faulted in: the request comes again after the
 * wait, and is refused then if the fault failed.
 */
static enum sroce_verdict sroce_resp_mr_ok(struct sroce_qp *qp,
					   const struct sroce_reth *reth)
{
	u32 len = be32_to_cpu(reth->len);
	struct sroce_mr *mr;

	if (!len)
		return SROCE_ACCEPT;
	mr = sroce_resp_mr(qp, qp->resp.pd, be32_to_cpu(reth->rkey),
			   be64_to_cpu(reth->va), len, len, IB_ACCESS_REMOTE_READ);
	if (IS_ERR(mr))
		return PTR_ERR(mr) == -EAGAIN ? SROCE_RNR : SROCE_NAK_ACCESS;
	sroce_resp_mr_put(mr);
	return SROCE_ACCEPT;
}

/* The write's MR is let go of: its message or its run is over. */
static void sroce_resp_put_wr_mr(struct sroce_qp *qp)
{
	if (qp->resp.wr_mr) {
		sroce_resp_mr_put(qp->resp.wr_mr);
		qp->resp.wr_mr = NULL;
	}
}

/*
 * The MR the rest of the write message lands in, checked for all of it
 * at once and kept entered until the message or the run ends: the
 * packets after the first of a run need no lookup of their own. Its next
 * @need bytes are to be written now: an ODP MR's pages for them must be
 * there. The verdict when they cannot be: an RNR NAK while a page is
 * faulted in (the requester sends the packet again after the wait), else
 * refused.
 */
static enum sroce_verdict sroce_resp_wr_mr(struct sroce_qp *qp, u32 need)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_mr *mr;
	int err = 0;

	if (!resp->remaining)
		return SROCE_ACCEPT;
	if (!resp->wr_mr) {
		mr = sroce_resp_mr(qp, resp->pd, resp->rkey, resp->va,
				   resp->remaining, need,
				   IB_ACCESS_REMOTE_WRITE);
		if (IS_ERR(mr))
			err = PTR_ERR(mr);
		else
			resp->wr_mr = mr;
	} else {
		/* Per packet: a page may have gone since the last. */
		err = sroce_mr_present(resp->wr_mr, resp->va, need);
		if (err)
			err = sroce_fault_ask(&resp->fault, resp->wr_mr,
					      resp->rkey, resp->va,
					      resp->remaining);
	}
	if (!err)
		return SROCE_ACCEPT;
	return err == -EAGAIN ? SROCE_RNR : SROCE_NAK_ACCESS;
}

static enum sroce_verdict sroce_resp_write(struct sroce_qp *qp,
					   struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_reth *reth;
	enum sroce_verdict v;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
		return SROCE_NAK_INV;
	if (pkt->mask & SROCE_FIRST) {
		reth = sroce_pkt_hdr(pkt, SROCE_HAS_RETH);
		resp->va = be64_to_cpu(reth->va);
		resp->rkey = be32_to_cpu(reth->rkey);
		resp->len = be32_to_cpu(reth->len);
		resp->remaining = resp->len;
		/* The whole range is checked once, before any byte lands. */
		v = sroce_resp_wr_mr(qp, 0);
		if (v != SROCE_ACCEPT)
			return v;
	}
	if (!sroce_resp_len_ok(qp, pkt) || pkt->paylen > resp->remaining ||
	    (pkt->mask & SROCE_LAST && pkt->paylen != resp->remaining))
		return SROCE_NAK_INV;
	/* The immediate needs a receive WQE: none is an RNR, before writing. */
	if (pkt->mask & SROCE_HAS_IMMDT && !resp->has_rwqe &&
	    !sroce_resp_take_rwqe(qp))
		return SROCE_RNR;
	if (pkt->paylen) {
		v = sroce_resp_wr_mr(qp, pkt->paylen);
		if (v != SROCE_ACCEPT)
			return v;
		if (sroce_mr_copy_from_skb(resp->wr_mr, resp->va, pkt->skb,
					   sroce_pkt_payoff(pkt), pkt->paylen))
			return SROCE_NAK_INV;
	}
	resp->va += pkt->paylen;
	resp->remaining -= pkt->paylen;
	resp->op = SROCE_WRITE;
	if (pkt->mask & SROCE_LAST) {
		sroce_resp_put_wr_mr(qp);
		if (pkt->mask & SROCE_HAS_IMMDT)
			sroce_resp_complete(qp, pkt, IB_WC_SUCCESS,
					    IB_WC_RECV_RDMA_WITH_IMM, resp->len);
		resp->op = 0;
	}
	return SROCE_ACCEPT;
}

static enum sroce_verdict sroce_resp_read(struct sroce_qp *qp,
					  struct sroce_pkt *pkt)
{
	struct sroce_reth *reth = sroce_pkt_hdr(pkt, SROCE_HAS_RETH);
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rd_res *res;
	u32 len = be32_to_cpu(reth->len);
	u64 va = be64_to_cpu(reth->va);
	enum sroce_verdict v;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ) ||
	    len > SROCE_MAX_MSG_SZ)
		return SROCE_NAK_INV;
	v = sroce_resp_mr_ok(qp, reth);
	if (v != SROCE_ACCEPT)
		return v;
	res = sroce_resp_new_res(qp);
	if (!res)
		return SROCE_NAK_INV;	/* more reads than agreed */
	res->op = SROCE_OP_READ_REQ;
	res->first_psn = pkt->psn;
	res->last_psn = sroce_psn_add(pkt->psn,
				      sroce_msg_npkts(len, resp->mtu) - 1);
	res->stop_psn = res->last_psn;
	res->psn = pkt->psn;
	res->va = va;
	res->rkey = be32_to_cpu(reth->rkey);
	res->len = len;
	res->start = va;
	res->total = len;
	resp->res_head++;
	/* The responses take the PSNs up to the last one. */
	resp->psn = res->last_psn;
	return SROCE_ACCEPT;
}

/* The word an atomic acts on, mapped until sroce_resp_unmap(). */
static atomic64_t *sroce_resp_map(struct sroce_mr *mr, u64 va, void **kva)
{
	unsigned int off;

	*kva = NULL;
	if (sroce_mr_is_dma(mr))
		return (atomic64_t *)(uintptr_t)va;
	*kva = kmap_local_page(sroce_mr_page(mr, va, &off));
	return *kva + off;
}

static void sroce_resp_unmap(void *kva)
{
	if (kva)
		kunmap_local(kva);
}

/*
 * The MR an atomic or atomic write at @va acts on, entered, and the
 * resource entry that will answer it. The memory must be aligned as the
 * address is, for the CPU's atomics (split locks otherwise).
 */
static enum sroce_verdict sroce_resp_word(struct sroce_qp *qp, u32 rkey,
					  u64 va, u32 access,
					  struct sroce_mr **mr,
					  struct sroce_rd_res **res)
{
	*mr = sroce_resp_mr(qp, qp->resp.pd, rkey, va, sizeof(u64),
			    sizeof(u64), access);
	if (IS_ERR(*mr))
		return PTR_ERR(*mr) == -EAGAIN ? SROCE_RNR : SROCE_NAK_ACCESS;
	*res = sroce_mr_aligned(*mr, va, sizeof(u64)) ?
	       sroce_resp_new_res(qp) : NULL;
	if (*res)
		return SROCE_ACCEPT;
	/* Misaligned, or more than max_dest_rd_atomic at once. */
	sroce_resp_mr_put(*mr);
	return SROCE_NAK_INV;
}

/* Does the atomic on 8 bytes of an MR page, atomically with the CPUs. */
static u64 sroce_resp_do_atomic(struct sroce_mr *mr, u64 va, u8 op,
				u64 swap_add, u64 compare)
{
	atomic64_t *p;
	void *kva;
	u64 orig;

	p = sroce_resp_map(mr, va, &kva);
	if (op == SROCE_OP_CMP_SWAP)
		orig = atomic64_cmpxchg(p, compare, swap_add);
	else
		orig = atomic64_fetch_add(swap_add, p);
	sroce_resp_unmap(kva);
	return orig;
}

static enum sroce_verdict sroce_resp_atomic(struct sroce_qp *qp,
					    struct sroce_pkt *pkt)
{
	struct sroce_atomic_eth *aeth = sroce_pkt_hdr(pkt, SROCE_HAS_ATOMICETH);
	u64 va = be64_to_cpu(aeth->va);
	struct sroce_rd_res *res;
	enum sroce_verdict v;
	struct sroce_mr *mr;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC))
		return SROCE_NAK_INV;
	/* 9.4.5: the address must be naturally aligned. */
	if (va & (sizeof(u64) - 1))
		return SROCE_NAK_INV;
	v = sroce_resp_word(qp, be32_to_cpu(aeth->rkey), va,
			    IB_ACCESS_REMOTE_ATOMIC, &mr, &res);
	if (v != SROCE_ACCEPT)
		return v;
	res->op = pkt->opcode & ~SROCE_TRANSPORT_MASK;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->stop_psn = pkt->psn;
	res->psn = pkt->psn;
	res->orig = sroce_resp_do_atomic(mr, va, res->op,
					 be64_to_cpu(aeth->swap_add),
					 be64_to_cpu(aeth->compare));
	sroce_resp_mr_put(mr);
	qp->resp.res_head++;
	return SROCE_ACCEPT;
}

/*
 * Takes @res for @pkt, a one-packet request answered by one empty read
 * response (atomic write, flush), with what a duplicate must name to be
 * answered again: the rkey (and, for the record, the range).
 */
static void sroce_resp_take_empty(struct sroce_qp *qp,
				  struct sroce_rd_res *res,
				  const struct sroce_pkt *pkt, u32 rkey,
				  u64 va, u32 total)
{
	res->op = pkt->opcode & ~SROCE_TRANSPORT_MASK;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->stop_psn = pkt->psn;
	res->psn = pkt->psn;
	res->rkey = rkey;
	res->start = va;
	res->total = total;
	res->va = va;
	res->len = 0;
	qp->resp.res_head++;
}

/**
 * sroce_resp_atomic_write() - execute an ATOMIC WRITE (IBA 1.5, A19)
 * @qp: an RC QP
 * @pkt: the request: a RETH and 8 bytes of payload
 *
 * The 8 bytes land as one store to a naturally aligned word, never seen
 * in part by the CPUs, and after everything this QP placed before them
 * (a release): the use is a flag or pointer published after its data.
 * The rights asked for are a write's, of the QP and of the rkey. The
 * answer, a zero-length RDMA READ Response Only, comes from an entry of
 * the read/atomic resources, as a read's does, so that a duplicate is
 * answered from it again and not executed twice: a later write to the
 * word may have come in between.
 *
 * Return: the verdict.
 */
static enum sroce_verdict sroce_resp_atomic_write(struct sroce_qp *qp,
						  struct sroce_pkt *pkt)
{
	struct sroce_reth *reth = sroce_pkt_hdr(pkt, SROCE_HAS_RETH);
	u64 va = be64_to_cpu(reth->va);
	u32 rkey = be32_to_cpu(reth->rkey);
	struct sroce_rd_res *res;
	enum sroce_verdict v;
	struct sroce_mr *mr;
	atomic64_t *word;
	void *kva;
	u64 val;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
		return SROCE_NAK_INV;
	/* oA19-28: exactly one word; A19.4.2: naturally aligned. */
	if (be32_to_cpu(reth->len) != SROCE_ATOMIC_WRITE_BYTES ||
	    pkt->paylen != SROCE_ATOMIC_WRITE_BYTES ||
	    va & (SROCE_ATOMIC_WRITE_BYTES - 1))
		return SROCE_NAK_INV;
	if (skb_copy_bits(pkt->skb, sroce_pkt_payoff(pkt), &val, sizeof(val)))
		return SROCE_NAK_INV;
	v = sroce_resp_word(qp, rkey, va, IB_ACCESS_REMOTE_WRITE, &mr, &res);
	if (v != SROCE_ACCEPT)
		return v;
	word = sroce_resp_map(mr, va, &kva);
	/* The bytes as they came: memory order, not a number. */
	atomic64_set_release(word, (s64)val);
	sroce_resp_unmap(kva);
	sroce_resp_mr_put(mr);
	sroce_resp_take_empty(qp, res, pkt, rkey, va, SROCE_ATOMIC_WRITE_BYTES);
	return SROCE_ACCEPT;
}

/*
 * The first byte of what @rkey names, for a FLUSH of all of it: the
 * rights are checked there, for no bytes (a window bound elsewhere in
 * between is refused by sroce_resp_mr(), as any access outside it).
 */
static u64 sroce_resp_key_start(struct sroce_qp *qp, u32 rkey)
{
	struct sroce_mr *mr = sroce_mr_get(to_sdev(qp->ibqp.device), rkey);
	u64 iova;

	if (!mr)
		return 0;
	iova = READ_ONCE(mr->iova);
	sroce_mr_put(mr);
	return iova;
}

/**
 * sroce_resp_flush_req() - execute a FLUSH (IBA 1.5, A19)
 * @qp: an RC QP
 * @pkt: the request: an FETH and a RETH
 *
 * What this QP placed before the FLUSH is in memory already: each
 * request is executed by CPU stores, in order, before the next. Making
 * it globally visible is a write barrier before the answer goes out, so
 * that no agent told of the answer (another CPU, a device reading the
 * memory) sees older data. Only that placement is offered: persistence
 * would need MRs of persistent memory, which sroce does not register.
 *
 * The placement type must not ask for persistence (nor name an unknown
 * placement) and the selectivity level must be a defined one; the QP must
 * grant the flush right, else the request is invalid. The MR must grant
 * it for the RETH's range or, at the MR selectivity level, for the whole
 * MR the rkey names (the address and length then mean nothing), else it
 * is a remote access error. A placement type of 0 asks for nothing: no
 * right is needed, the key and range are checked and it is answered, as
 * rdma_rxe does. The answer, a zero-length RDMA READ Response Only, comes
 * from a resource entry as an atomic write's does.
 *
 * Return: the verdict.
 */
static enum sroce_verdict sroce_resp_flush_req(struct sroce_qp *qp,
					       struct sroce_pkt *pkt)
{
	u32 feth = be32_to_cpu(((struct sroce_feth *)
				sroce_pkt_hdr(pkt, SROCE_HAS_FETH))->bits);
	struct sroce_reth *reth = sroce_pkt_hdr(pkt, SROCE_HAS_RETH);
	u32 sel = (feth & SROCE_FETH_SEL_MASK) >> SROCE_FETH_SEL_SHIFT;
	u32 plt = feth & SROCE_FETH_PLT_MASK;
	u32 need = plt ? SROCE_ACCESS_FLUSH_GLOBAL : 0;
	u32 rkey = be32_to_cpu(reth->rkey);
	u64 va = be64_to_cpu(reth->va);
	u32 len = be32_to_cpu(reth->len);
	struct sroce_rd_res *res;
	struct sroce_mr *mr;

	if (plt & ~SROCE_FLUSH_GLOBAL || sel > SROCE_FLUSH_MR ||
	    (qp->attr.qp_access_flags & need) != need)
		return SROCE_NAK_INV;
	if (sel == SROCE_FLUSH_MR) {
		va = sroce_resp_key_start(qp, rkey);
		len = 0;
	}
	mr = sroce_resp_mr(qp, qp->resp.pd, rkey, va, len, 0, need);
	if (IS_ERR(mr))
		return PTR_ERR(mr) == -EAGAIN ? SROCE_RNR : SROCE_NAK_ACCESS;
	res = sroce_resp_new_res(qp);
	if (!res) {
		sroce_resp_mr_put(mr);
		return SROCE_NAK_INV;	/* more outstanding than agreed */
	}
	/* Every store placed before, ahead of the answer. */
	wmb();
	sroce_resp_mr_put(mr);
	sroce_resp_take_empty(qp, res, pkt, rkey, va, len);
	return SROCE_ACCEPT;
}

/*
 * An XRC request is for the XRC SRQ its XRCETH names, which must be of the
 * target QP's domain: its receive WQEs take a send, its PD checks every
 * rkey and SGE (the target QP has none of its own).
 */
static bool sroce_resp_xrc_srq(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;

	resp->xsrq = sroce_srq_xrc_get(to_sdev(qp->ibqp.device),
				       pkt->xrc_srqn, qp->ibqp.xrcd);
	resp->pd = resp->xsrq ? resp->xsrq->ibsrq.pd : NULL;
	return resp->xsrq;
}

static enum sroce_verdict sroce_resp_execute(struct sroce_qp *qp,
					     struct sroce_pkt *pkt)
{
	/*
	 * Anything but the rest of a write lets its MR go first: a Send
	 * with Invalidate of this run waits for the MR's users to leave.
	 */
	if (!(pkt->mask & SROCE_WRITE) || pkt->mask & SROCE_FIRST)
		sroce_resp_put_wr_mr(qp);
	if (!sroce_msg_in_sequence(qp->resp.op, pkt->mask))
		return SROCE_NAK_INV;
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT && !sroce_resp_xrc_srq(qp, pkt))
		return SROCE_NAK_INV;
	if (pkt->mask & SROCE_SEND)
		return sroce_resp_send(qp, pkt);
	if (pkt->mask & SROCE_WRITE)
		return sroce_resp_write(qp, pkt);
	if (pkt->mask & SROCE_READ)
		return sroce_resp_read(qp, pkt);
	if (pkt->mask & SROCE_ATOMIC_WRITE)
		return sroce_resp_atomic_write(qp, pkt);
	if (pkt->mask & SROCE_FLUSH)
		return sroce_resp_flush_req(qp, pkt);
	return sroce_resp_atomic(qp, pkt);
}

static const u8 sroce_verdict_nak[] = {
	[SROCE_NAK_INV] = SROCE_NAK_INVALID_REQ,
	[SROCE_NAK_ACCESS] = SROCE_NAK_REMOTE_ACCESS,
	[SROCE_NAK_OP] = SROCE_NAK_REMOTE_OP,
};

/* Class C/D errors (9.9.3): NAK, and the QP is done for. */
static void sroce_resp_fatal(struct sroce_qp *qp, struct sroce_pkt *pkt,
			     enum sroce_verdict v)
{
	struct sroce_resp *resp = &qp->resp;

	if (resp->has_rwqe)
		sroce_resp_complete(qp, pkt, v == SROCE_NAK_ACCESS ?
				    IB_WC_REM_ACCESS_ERR : IB_WC_REM_INV_REQ_ERR,
				    IB_WC_RECV, resp->off);
	sroce_resp_nak(qp, SROCE_SYN_NAK | sroce_verdict_nak[v], pkt->psn);
	sroce_qp_error(qp);
}

/* The entry of the read or atomic @psn belongs to, and its index; or NULL. */
static struct sroce_rd_res *sroce_resp_find_res(struct sroce_qp *qp, u32 psn,
						u32 *index)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rd_res *res;
	u32 n, idx;

	for (n = 0; n < min(resp->nres, resp->res_head); n++) {
		idx = resp->res_head - 1 - n;
		res = &resp->res[idx % resp->nres];
		if (res->op && sroce_psn_cmp(psn, res->first_psn) >= 0 &&
		    sroce_psn_cmp(psn, res->last_psn) <= 0) {
			*index = idx;
			return res;
		}
	}
	return NULL;
}

/*
 * Will the answers queued for @res (entry @idx) bring what a duplicate
 * asks for, @first to @stop? Then it asks for what is coming.
 */
static bool sroce_resp_coming(struct sroce_qp *qp, struct sroce_rd_res *res,
			      u32 idx, u32 first, u32 stop)
{
	return (s32)(idx - qp->resp.res_send) >= 0 &&
	       sroce_rd_res_pending(res) &&
	       sroce_psn_cmp(first, res->psn) >= 0 &&
	       sroce_psn_cmp(stop, res->stop_psn) <= 0;
}

/*
 * Queues entry @idx (@res) to be answered again, @psn to @stop, and sends
 * the answers back to it if they had gone past.
 */
static void sroce_resp_queue_again(struct sroce_qp *qp,
				   struct sroce_rd_res *res, u32 idx, u32 psn,
				   u32 stop)
{
	res->again = true;
	res->psn = psn;
	res->stop_psn = stop;
	if ((s32)(idx - qp->resp.res_send) < 0)
		qp->resp.res_send = idx;
}

/**
 * sroce_resp_dup_empty() - an atomic write or a flush came again
 * @qp: the QP
 * @pkt: the duplicate
 *
 * Its answer was lost: the entry it left is answered again, and the
 * answers go back to it as for a read (sroce_resp_answer_again()); the
 * request is not executed again (a later write to an atomic write's word
 * may have come in between). One no entry remembers any more (or with
 * another operation or rkey than the entry's) is dropped, as 9.7.5.1.1
 * allows; the requester times out and fails it rather than have it done
 * twice. The address is not compared: rdma_rxe (6.12) sends its
 * retransmissions of an atomic write with a RETH address of 0
 * (docs/INTEROP.md), and an answer without payload gives nothing away.
 */
static void sroce_resp_dup_empty(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_reth *reth = sroce_pkt_hdr(pkt, SROCE_HAS_RETH);
	struct sroce_rd_res *res;
	u32 idx;

	res = sroce_resp_find_res(qp, pkt->psn, &idx);
	if (!res || res->op != (pkt->opcode & ~SROCE_TRANSPORT_MASK) ||
	    pkt->psn != res->first_psn ||
	    res->rkey != be32_to_cpu(reth->rkey))
		return;
	if (sroce_resp_coming(qp, res, idx, pkt->psn, pkt->psn))
		return;
	sroce_resp_queue_again(qp, res, idx, pkt->psn, pkt->psn);
}

/*
 * A read or atomic already executed came again: its answer, or part of
 * it, was lost. Unless the answers still queued bring it, the entry is
 * answered again, from where the requester says it lacks data, and the
 * answers go back to it: a requester that lost an answer drops the later
 * ones until it has that one, and asks for them again too (go-back-N),
 * each duplicate queueing its own entry again. An atomic is not done
 * again: its ACK carries the value it found the first time.
 */
static void sroce_resp_answer_again(struct sroce_qp *qp,
				    struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_reth *reth = NULL;
	struct sroce_rd_res *res;
	u32 idx, stop = pkt->psn;
	bool is_read;

	res = sroce_resp_find_res(qp, pkt->psn, &idx);
	if (!res)
		return;	/* too old to answer: dropped, as 9.7.5.1.1 allows */
	is_read = res->op == SROCE_OP_READ_REQ;
	if (!(pkt->mask & SROCE_ATOMIC) != is_read)
		return;
	if (pkt->mask & SROCE_ATOMIC) {
		if (pkt->psn != res->first_psn)
			return;
	} else {
		reth = sroce_pkt_hdr(pkt, SROCE_HAS_RETH);
		if (!sroce_rd_res_covers(res, be32_to_cpu(reth->rkey),
					 be64_to_cpu(reth->va),
					 be32_to_cpu(reth->len)))
			return;
		/* Pages being faulted in: the answer waits for them. */
		if (sroce_resp_mr_ok(qp, reth) == SROCE_NAK_ACCESS) {
			sroce_resp_read_refused(qp, res, pkt->psn);
			return;
		}
		stop = sroce_psn_add(pkt->psn,
				     sroce_msg_npkts(be32_to_cpu(reth->len),
						     resp->mtu) - 1);
		if (sroce_psn_cmp(stop, res->last_psn) > 0)
			return;
	}
	if (sroce_resp_coming(qp, res, idx, pkt->psn, stop))
		return;
	if (reth) {
		res->va = be64_to_cpu(reth->va);
		res->len = be32_to_cpu(reth->len);
	}
	sroce_resp_queue_again(qp, res, idx, pkt->psn, stop);
}

/* A request already executed came again: its answer was lost. */
static void sroce_resp_duplicate(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;

	sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_RX_DUPLICATE);
	if (pkt->mask & (SROCE_ATOMIC_WRITE | SROCE_FLUSH)) {
		sroce_resp_dup_empty(qp, pkt);
		return;
	}
	if (pkt->mask & (SROCE_READ | SROCE_ATOMIC)) {
		sroce_resp_answer_again(qp, pkt);
		return;
	}
	/* Send or write: say again how far we got. */
	if (pkt->ack_req)
		sroce_resp_ack(qp, sroce_psn_add(resp->psn, SROCE_BTH_PSN_MASK));
}

static void sroce_resp_rc(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	int d = sroce_psn_cmp(pkt->psn, resp->psn);
	enum sroce_verdict v;

	if (d < 0) {
		sroce_resp_duplicate(qp, pkt);
		return;
	}
	if (d > 0) {
		/* A gap: one NAK says where to go back to (9.7.5.1.1). */
		sroce_count(sdev, SROCE_CNT_RX_OUT_OF_SEQ);
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			sroce_resp_nak(qp, SROCE_SYN_NAK |
					    SROCE_NAK_PSN_SEQ, resp->psn);
		}
		return;
	}
	v = sroce_resp_execute(qp, pkt);
	if (v == SROCE_RNR) {
		sroce_resp_nak(qp, SROCE_SYN_RNR_NAK |
				    qp->attr.min_rnr_timer, pkt->psn);
		return;
	}
	if (v != SROCE_ACCEPT) {
		sroce_resp_fatal(qp, pkt, v);
		return;
	}
	resp->nak_sent = false;
	resp->psn = sroce_psn_add(resp->psn, 1);
	if (pkt->mask & SROCE_LAST && !(pkt->mask & SROCE_ACK))
		resp->msn++;
	/* Those are answered from their resource entry. */
	if (pkt->mask & (SROCE_READ | SROCE_ATOMIC | SROCE_ATOMIC_WRITE |
			 SROCE_FLUSH))
		return;
	if (pkt->ack_req)
		sroce_resp_ack_stream(qp, pkt->psn);
}

/*
 * UC: nothing is acknowledged, nothing retransmitted. A lost packet costs
 * the message it was in; the responder waits for the next first packet.
 */
static void sroce_resp_uc(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;

	if (pkt->psn != resp->psn) {
		sroce_count(sdev, SROCE_CNT_RX_OUT_OF_SEQ);
		resp->op = 0;
	}
	resp->psn = sroce_psn_add(pkt->psn, 1);
	if (sroce_resp_execute(qp, pkt) != SROCE_ACCEPT) {
		sroce_count(sdev, SROCE_CNT_RX_DROPPED);
		resp->op = 0;
	}
}

/**
 * sroce_resp_rx_run() - requests for this QP, in the order they arrived
 * @qp: an RC or UC QP
 * @pkts: request packets, their headers checked for the QP's type
 * @n: how many
 *
 * The run is executed under one hold of the lock; what it is to be
 * answered with (one ACK at most, read responses, atomic ACKs) leaves
 * when it is done, in one burst.
 *
 * Context: softirq.
 */
void sroce_resp_rx_run(struct sroce_qp *qp, struct sroce_pkt **pkts,
		       unsigned int n)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	unsigned int i;
	u8 state;
	bool more;

	spin_lock_bh(&qp->rq_lock);
	for (i = 0; i < n; i++) {
		/* A packet of the run may have ended the QP. */
		state = READ_ONCE(qp->state);
		if (state < IB_QPS_RTR || state == IB_QPS_ERR) {
			sroce_count_add(sdev, SROCE_CNT_RX_DROPPED, n - i);
			break;
		}
		if (sroce_qp_resp_rc(qp))
			sroce_resp_rc(qp, pkts[i]);
		else
			sroce_resp_uc(qp, pkts[i]);
		qp->resp.xsrq = NULL;
	}
	sroce_resp_put_wr_mr(qp);
	more = sroce_resp_serve(qp, SROCE_RESP_BUDGET_RX);
	sroce_burst_flush(sdev, &qp->resp.burst);
	spin_unlock_bh(&qp->rq_lock);
	if (more)
		queue_work(sroce_wq, &qp->resp_work);
}

/**
 * sroce_resp_rx() - a request for this QP: a run of one
 * @qp: an RC or UC QP
 * @pkt: a request packet, its headers checked for the QP's type
 *
 * Context: softirq.
 */
void sroce_resp_rx(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	sroce_resp_rx_run(qp, &pkt, 1);
}

/* Flushes the receive WQE in use and the receive ring. Context: process. */
void sroce_resp_flush(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
		.port_num = 1,
	};
	struct sroce_cq *cq;

	spin_lock_bh(&qp->rq_lock);
	if (resp->has_rwqe) {
		cqe.wr_id = resp->rwqe->wr_id;
		resp->has_rwqe = false;
		cq = sroce_resp_rcq(qp);
		if (cq)
			sroce_cq_post(cq, &cqe, false);
	}
	resp->op = 0;
	resp->res_send = resp->res_head;
	resp->ack_pending = false;
	spin_unlock_bh(&qp->rq_lock);
}
