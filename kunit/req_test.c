// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the requester and the completer on a stand-in kernel QP, with no
 * netdev: nothing here sends a packet.
 *
 * The requester's loop, on a UC QP whose send ring holds only local work
 * requests (fast registration and Local Invalidate of one MR, over and
 * over): every run must end within its budget, leaving the rest to the
 * worker. The completer, on an RC QP with one request outstanding: a NAK
 * or RNR NAK for a PSN outside the outstanding window changes nothing, and
 * an ACK after a rewind sends nothing it covers again; with two reads
 * outstanding, a response to the second sends the requester back to the
 * rest of the first at once, and is kept; a response that overtook
 * another of its read is kept, up to the third past the same gap.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "comp.h"
#include "counters.h"
#include "cq.h"
#include "device.h"
#include "mr.h"
#include "opcode.h"
#include "pkt.h"
#include "qp.h"
#include "req.h"
#include "wq.h"

#define REQ_SLOTS	64
#define REQ_STRIDE	128

struct req_fixture {
	struct sroce_dev *sdev;
	struct sroce_qp *qp;
	struct sroce_mr *mr;
	struct sroce_cq *cq;
	struct ib_pd pd;
};

static void req_fixture_exit(struct kunit *test)
{
	struct req_fixture *fx = test->priv;

	if (!fx)
		return;
	if (fx->qp->req.wqes) {
		sroce_req_stop(fx->qp);
		sroce_req_fini(fx->qp);
	}
	sroce_queue_destroy(&fx->qp->sq.q);
	if (fx->mr) {
		sroce_mr_table_del(&fx->sdev->mrs, fx->mr);
		kfree_rcu(fx->mr, rcu);
	}
	if (fx->cq)
		sroce_cq_fini(fx->cq);
	cancel_work_sync(&fx->qp->err_work);
	sroce_counters_free(fx->sdev);
}

/* sroce_qp_error() queues it; what it would do is qp.c's business. */
static void no_err_work(struct work_struct *work)
{
}

/* A kernel UC QP in RTS with an empty send ring, and one FRMR of its PD. */
static struct req_fixture *req_fixture(struct kunit *test)
{
	struct req_fixture *fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	struct sroce_qp *qp;

	KUNIT_ASSERT_NOT_NULL(test, fx);
	test->priv = fx;
	fx->sdev = kunit_kzalloc(test, sizeof(*fx->sdev), GFP_KERNEL);
	fx->qp = kunit_kzalloc(test, sizeof(*fx->qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->sdev);
	KUNIT_ASSERT_NOT_NULL(test, fx->qp);
	sroce_mr_table_init(&fx->sdev->mrs);
	KUNIT_ASSERT_EQ(test, sroce_counters_alloc(fx->sdev), 0);

	qp = fx->qp;
	qp->ibqp.device = &fx->sdev->ibdev;
	qp->ibqp.pd = &fx->pd;
	qp->ibqp.qp_type = IB_QPT_UC;
	qp->sq_sig_type = IB_SIGNAL_REQ_WR;
	qp->state = IB_QPS_RTS;
	spin_lock_init(&qp->sq_lock);
	INIT_WORK(&qp->err_work, no_err_work);
	KUNIT_ASSERT_EQ(test, sroce_wq_init(&qp->sq, REQ_SLOTS, REQ_STRIDE), 0);
	KUNIT_ASSERT_EQ(test, sroce_req_init(qp), 0);
	qp->req.mtu = 1024;

	fx->mr = kzalloc(sizeof(*fx->mr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->mr);
	KUNIT_ASSERT_EQ(test, sroce_mr_table_add(&fx->sdev->mrs, fx->mr), 0);
	fx->mr->type = SROCE_MR_FAST;
	fx->mr->pd = &fx->pd;
	fx->mr->npages = 1;
	return fx;
}

/* Posts @n WQEs, registering and invalidating the MR in turn. */
static void post_local(struct req_fixture *fx, u32 n)
{
	struct sroce_wq *sq = &fx->qp->sq;
	u32 prod = READ_ONCE(sq->q.hdr->prod);
	struct sroce_send_wqe *w;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&sq->post_lock, flags);
	for (i = 0; i < n; i++, prod++) {
		w = sroce_wq_slot(sq, prod);
		memset(w, 0, sizeof(*w));
		w->wr_id = prod;
		w->ex.invalidate_rkey = fx->mr->key;
		w->opcode = prod % 2 ? IB_UVERBS_WR_LOCAL_INV : IB_WR_REG_MR;
	}
	sroce_wq_publish(sq, prod);
	spin_unlock_irqrestore(&sq->post_lock, flags);
}

static enum sroce_req_stop run(struct sroce_qp *qp, unsigned int budget)
{
	enum sroce_req_stop stop;

	spin_lock_bh(&qp->sq_lock);
	stop = sroce_req_run(qp, budget);
	spin_unlock_bh(&qp->sq_lock);
	return stop;
}

/*
 * Local work requests spend budget like packets do: a process that posts
 * nothing else cannot hold the requester (and its CPU, under sq_lock with
 * bottom halves off) for as long as it keeps posting.
 */
static void local_wqes_spend_budget(struct kunit *test)
{
	struct req_fixture *fx = req_fixture(test);
	struct sroce_qp *qp = fx->qp;

	post_local(fx, 32);
	KUNIT_EXPECT_EQ(test, run(qp, 8), SROCE_REQ_BUDGET);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 8U);
	/* The rest, a budget at a time, then the queue is idle. */
	KUNIT_EXPECT_EQ(test, run(qp, 8), SROCE_REQ_BUDGET);
	KUNIT_EXPECT_EQ(test, run(qp, 8), SROCE_REQ_BUDGET);
	KUNIT_EXPECT_EQ(test, run(qp, 16), SROCE_REQ_IDLE);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 32U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 32U);
	/* Every registration and invalidation was carried out, in order. */
	KUNIT_EXPECT_FALSE(test, fx->mr->valid);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RTS);
}

/* ---- the completer: NAKs outside the outstanding window ---- */

#define OUT_PSN		100	/* the one request outstanding */

/*
 * The fixture's QP made RC, with one Send at OUT_PSN sent and not yet
 * acknowledged: [acked, max_psn) = [OUT_PSN, OUT_PSN + 1).
 */
static struct req_fixture *rc_fixture(struct kunit *test)
{
	struct req_fixture *fx = req_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *swqe;

	fx->cq = kunit_kzalloc(test, sizeof(*fx->cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->cq);
	KUNIT_ASSERT_EQ(test, sroce_cq_init(fx->cq, 8), 0);
	fx->cq->ibcq.device = &fx->sdev->ibdev;
	qp->ibqp.send_cq = &fx->cq->ibcq;
	qp->ibqp.qp_type = IB_QPT_RC;

	post_local(fx, 1);
	swqe = sroce_swqe_at(qp, 0);
	memset(swqe, 0, sizeof(*swqe));
	swqe->wqe.opcode = IB_UVERBS_WR_SEND;
	swqe->wire_op = SROCE_OP_SEND_FIRST;
	swqe->first_psn = OUT_PSN;
	swqe->last_psn = OUT_PSN;
	swqe->numbered = true;
	swqe->sent = true;
	qp->req.head = 1;
	qp->req.cur = 1;
	qp->req.acked = OUT_PSN;
	qp->req.psn = OUT_PSN + 1;
	qp->req.max_psn = OUT_PSN + 1;
	qp->req.retry = 7;
	qp->req.rnr_retry = 7;
	return fx;
}

/* An ACK-opcode packet at @psn with AETH syndrome @syn, to the completer. */
static void answer(struct req_fixture *fx, u32 psn, u8 syn)
{
	struct {
		struct sroce_bth bth;
		struct sroce_aeth aeth;
	} hdr = {
		.aeth.smsn = cpu_to_be32((u32)syn << SROCE_AETH_SYN_SHIFT),
	};
	struct sroce_pkt pkt = {
		.bth = &hdr.bth,
		.opcode = SROCE_OP_ACK,
		.mask = SROCE_HAS_AETH,
		.psn = psn,
	};

	sroce_comp_rx(fx->qp, &pkt);
}

/* Nothing happened to the one outstanding request, nor to the QP. */
static void expect_untouched(struct kunit *test, struct req_fixture *fx)
{
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *swqe = sroce_swqe_at(qp, 0);

	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, swqe->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, swqe->done);
	KUNIT_EXPECT_FALSE(test, qp->req.rnr_wait);
	KUNIT_EXPECT_EQ(test, qp->req.acked, (u32)OUT_PSN);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 0U);
}

static void stale_nak_ignored(struct kunit *test)
{
	struct req_fixture *fx = rc_fixture(test);
	static const u32 psns[] = { OUT_PSN - 1, OUT_PSN - 1000,
				    OUT_PSN + 1, OUT_PSN + 5000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(psns); i++) {
		answer(fx, psns[i], SROCE_SYN_NAK | SROCE_NAK_REMOTE_ACCESS);
		answer(fx, psns[i], SROCE_SYN_NAK | SROCE_NAK_INVALID_REQ);
		answer(fx, psns[i], SROCE_SYN_RNR_NAK | 0);
		expect_untouched(test, fx);
	}
}

/*
 * The same NAKs at the outstanding PSN do act: the window is not empty.
 * RNR timer 0 is the longest wait (655 ms): the test is over, and the timer
 * stopped, long before it would send anything.
 */
static void outstanding_rnr_nak_acts(struct kunit *test)
{
	struct req_fixture *fx = rc_fixture(test);

	answer(fx, OUT_PSN, SROCE_SYN_RNR_NAK | 0);
	KUNIT_EXPECT_TRUE(test, fx->qp->req.rnr_wait);
	KUNIT_EXPECT_EQ(test, fx->qp->state, IB_QPS_RTS);
}

static void outstanding_nak_fails(struct kunit *test)
{
	struct req_fixture *fx = rc_fixture(test);

	answer(fx, OUT_PSN, SROCE_SYN_NAK | SROCE_NAK_REMOTE_ACCESS);
	KUNIT_EXPECT_EQ(test, fx->qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, fx->qp->sq.cons, 1U);
}

/*
 * SQD to SQD may change an RC QP's ACK timeout and retry counts (the
 * core's table allows it): the requester takes the new ones, not only
 * the attributes query_qp returns.
 */
static void sqd_to_sqd_takes_new_retries(struct kunit *test)
{
	struct req_fixture *fx = req_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_SQD,
		.timeout = 20,
		.retry_cnt = 3,
		.rnr_retry = 5,
	};

	qp->ibqp.qp_type = IB_QPT_RC;
	mutex_init(&qp->lock);
	spin_lock_init(&qp->rq_lock);
	qp->state = IB_QPS_SQD;
	qp->attr.qp_state = IB_QPS_SQD;
	qp->attr.retry_cnt = 7;
	qp->attr.rnr_retry = 7;
	spin_lock_bh(&qp->sq_lock);
	sroce_req_set_retry(qp);
	spin_unlock_bh(&qp->sq_lock);
	KUNIT_ASSERT_EQ(test, qp->req.timeout, 0UL);

	KUNIT_ASSERT_EQ(test, sroce_qp_ops.modify_qp(&qp->ibqp, &attr,
						     IB_QP_STATE |
						     IB_QP_TIMEOUT |
						     IB_QP_RETRY_CNT |
						     IB_QP_RNR_RETRY, NULL), 0);
	KUNIT_EXPECT_EQ(test, (u32)qp->req.retry, 3U);
	KUNIT_EXPECT_EQ(test, (u32)qp->req.rnr_retry, 5U);
	/* 4.096 us << 20: about 4.3 s. */
	KUNIT_EXPECT_GE(test, qp->req.timeout, msecs_to_jiffies(4000));
}

/*
 * The retransmit timer fires while the ACK for the one outstanding Send is
 * on its way; behind the Send, a fast registration was already carried
 * out. When the ACK comes, neither is done again: no packet of the Send
 * (the netdev here is full, so a requester that tried would stop at the
 * Send) and no second registration of the now valid MR (which would fail
 * the QP).
 */
static void acked_wqes_not_sent_again(struct kunit *test)
{
	struct req_fixture *fx = rc_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *reg;

	qp->ref = kunit_kzalloc(test, sizeof(*qp->ref), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->ref);
	atomic_set(&qp->ref->inflight, SROCE_INFLIGHT_HIGH);
	post_local(fx, 1);
	reg = sroce_swqe_at(qp, 1);
	memset(reg, 0, sizeof(*reg));
	reg->wqe.opcode = IB_WR_REG_MR;
	reg->wire_op = SROCE_REQ_LOCAL;
	reg->done = true;
	reg->sent = true;
	fx->mr->valid = true;
	qp->req.head = 2;
	qp->req.cur = 2;

	spin_lock_bh(&qp->sq_lock);
	sroce_req_rewind(qp);
	spin_unlock_bh(&qp->sq_lock);
	KUNIT_ASSERT_EQ(test, qp->req.cur, 0U);

	answer(fx, OUT_PSN, SROCE_SYN_ACK | SROCE_SYN_NO_CREDITS);
	/* It went idle: it did not stop at the Send, waiting to send it. */
	KUNIT_EXPECT_FALSE(test, qp->req.blocked);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 2U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 2U);
	KUNIT_EXPECT_EQ(test, reg->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, fx->mr->valid);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RTS);
}

#define RD_PSN		200	/* the first of two 4 KiB reads, 4 packets each */

/*
 * Two reads of 4 KiB outstanding, the first answered up to its half.
 * The netdev is full: a requester that sends stops before the first
 * packet, and what it would send shows in req.cur and req.off.
 */
static struct req_fixture *rd_fixture(struct kunit *test)
{
	struct req_fixture *fx = rc_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *swqe;
	u32 i;

	qp->ref = kunit_kzalloc(test, sizeof(*qp->ref), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->ref);
	atomic_set(&qp->ref->inflight, SROCE_INFLIGHT_HIGH);
	post_local(fx, 1);
	for (i = 0; i < 2; i++) {
		swqe = sroce_swqe_at(qp, i);
		memset(swqe, 0, sizeof(*swqe));
		swqe->wqe.opcode = IB_WR_RDMA_READ;
		swqe->wire_op = SROCE_OP_READ_REQ;
		swqe->len = 4096;
		swqe->first_psn = RD_PSN + 4 * i;
		swqe->last_psn = RD_PSN + 4 * i + 3;
		swqe->rewind_off = U32_MAX;
		swqe->numbered = true;
		swqe->sent = true;
	}
	sroce_swqe_at(qp, 0)->resp_off = 2048;
	qp->req.head = 2;
	qp->req.cur = 2;
	qp->req.acked = RD_PSN + 2;
	qp->req.psn = RD_PSN + 8;
	qp->req.max_psn = RD_PSN + 8;
	qp->req.rd_out = 2;
	qp->attr.max_rd_atomic = 2;
	return fx;
}

/* A read response header-only packet at @psn, to the completer. */
static void read_response(struct req_fixture *fx, u8 opcode, u32 psn)
{
	struct {
		struct sroce_bth bth;
		struct sroce_aeth aeth;
	} hdr = {};
	struct sroce_pkt pkt = {
		.bth = &hdr.bth,
		.opcode = opcode,
		.mask = sroce_opcode[opcode].mask,
		.psn = psn,
	};

	sroce_comp_rx(fx->qp, &pkt);
}

/*
 * Responses come in PSN order: the first response to the second read
 * says the last two of the first were lost. The requester goes back to
 * the first read's third packet at once, not when the transport timer
 * fires, and only once for this gap: the second read's next response
 * changes nothing.
 */
static void read_tail_lost_asked_again_at_once(struct kunit *test)
{
	struct req_fixture *fx = rd_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *first = sroce_swqe_at(qp, 0);

	read_response(fx, SROCE_OP_READ_RESP_FIRST, RD_PSN + 4);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 2048U);
	KUNIT_EXPECT_EQ(test, first->rewind_off, 2048U);
	KUNIT_EXPECT_FALSE(test, first->done);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_RETRANSMITS), 1ULL);

	read_response(fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 5);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_RETRANSMITS), 1ULL);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RTS);
}

/* A response past everything sent is no news of a loss. */
static void read_response_past_window_ignored(struct kunit *test)
{
	struct req_fixture *fx = rd_fixture(test);
	struct sroce_qp *qp = fx->qp;

	read_response(fx, SROCE_OP_READ_RESP_FIRST, RD_PSN + 8);
	read_response(fx, SROCE_OP_READ_RESP_FIRST, RD_PSN + 5000);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 2U);
	KUNIT_EXPECT_EQ(test, sroce_swqe_at(qp, 0)->rewind_off, U32_MAX);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_RETRANSMITS), 0ULL);
}

/*
 * The two reads of rd_fixture() with somewhere to put their answers: one
 * SGE each, 4 KiB of @fx's buffer, through a DMA MR of the QP's PD.
 */
static u8 *rd_buffers(struct kunit *test, struct req_fixture *fx)
{
	u8 *buf = kunit_kzalloc(test, 2 * 4096, GFP_KERNEL);
	struct sroce_swqe *swqe;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_LE(test, offsetof(struct sroce_send_wqe, sge) +
			sizeof(struct sroce_sge), (size_t)REQ_STRIDE);
	fx->mr->type = SROCE_MR_DMA;
	fx->mr->access = IB_ACCESS_LOCAL_WRITE;
	fx->mr->valid = true;
	for (i = 0; i < 2; i++) {
		swqe = sroce_swqe_at(fx->qp, i);
		swqe->wqe.num_sge = 1;
		swqe->wqe.sge[0].addr = (uintptr_t)(buf + 4096 * i);
		swqe->wqe.sge[0].length = 4096;
		swqe->wqe.sge[0].lkey = fx->mr->key;
	}
	return buf;
}

/* A read response at @psn with 1 KiB of @fill, to the completer. */
static void read_data(struct kunit *test, struct req_fixture *fx, u8 opcode,
		      u32 psn, u8 fill)
{
	u32 hdr = sroce_opcode[opcode].hdr_len;
	struct sk_buff *skb = alloc_skb(hdr + 1024, GFP_KERNEL);
	struct sroce_pkt pkt = {
		.opcode = opcode,
		.mask = sroce_opcode[opcode].mask,
		.psn = psn,
		.paylen = 1024,
	};

	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(skb_put(skb, hdr), 0, hdr);
	memset(skb_put(skb, 1024), fill, 1024);
	pkt.skb = skb;
	pkt.bth = (struct sroce_bth *)skb->data;
	sroce_comp_rx(fx->qp, &pkt);
	kfree_skb(skb);
}

static u64 retransmits(struct req_fixture *fx)
{
	return sroce_counter_read(fx->sdev, SROCE_CNT_RETRANSMITS);
}

/*
 * The first read's last half is lost; the second read's answer, which
 * says so, is kept all the same: after the go-back only the first read's
 * rest is asked for, and once it is in, both complete, in order, and the
 * second is not asked for again.
 */
static void later_read_kept_behind_a_gap(struct kunit *test)
{
	struct req_fixture *fx = rd_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *first = sroce_swqe_at(qp, 0);
	struct sroce_swqe *second = sroce_swqe_at(qp, 1);
	u8 *buf = rd_buffers(test, fx);

	read_data(test, fx, SROCE_OP_READ_RESP_FIRST, RD_PSN + 4, 0xb0);
	KUNIT_EXPECT_EQ(test, second->resp_off, 1024U);
	KUNIT_EXPECT_EQ(test, buf[4096], 0xb0);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 2048U);
	KUNIT_EXPECT_EQ(test, retransmits(fx), 1ULL);

	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 5, 0xb1);
	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 6, 0xb2);
	read_data(test, fx, SROCE_OP_READ_RESP_LAST, RD_PSN + 7, 0xb3);
	KUNIT_EXPECT_EQ(test, second->resp_off, 4096U);
	/* Whole, but it completes after the first. */
	KUNIT_EXPECT_FALSE(test, second->done);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);

	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 2, 0xa2);
	read_data(test, fx, SROCE_OP_READ_RESP_LAST, RD_PSN + 3, 0xa3);
	KUNIT_EXPECT_TRUE(test, first->done);
	KUNIT_EXPECT_TRUE(test, second->done);
	KUNIT_EXPECT_EQ(test, qp->req.acked, RD_PSN + 8);
	KUNIT_EXPECT_EQ(test, qp->req.rd_out, 0U);
	KUNIT_EXPECT_EQ(test, buf[3072], 0xa3);
	KUNIT_EXPECT_EQ(test, buf[4096 + 3072], 0xb3);
	KUNIT_EXPECT_EQ(test, retransmits(fx), 1ULL);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RTS);
}

/*
 * Half of the second read came behind the gap: sent again, it is asked
 * for from its third packet, not from its first.
 */
static void later_read_asked_from_what_is_missing(struct kunit *test)
{
	struct req_fixture *fx = rd_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *second = sroce_swqe_at(qp, 1);

	rd_buffers(test, fx);
	read_data(test, fx, SROCE_OP_READ_RESP_FIRST, RD_PSN + 4, 0xb0);
	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 5, 0xb1);
	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 2, 0xa2);
	read_data(test, fx, SROCE_OP_READ_RESP_LAST, RD_PSN + 3, 0xa3);
	KUNIT_EXPECT_TRUE(test, sroce_swqe_at(qp, 0)->done);
	KUNIT_EXPECT_FALSE(test, second->done);
	KUNIT_EXPECT_EQ(test, second->resp_off, 2048U);

	/* The netdev is full: the requester stops where it would send. */
	run(qp, 8);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 1U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 2048U);
}

/*
 * A link that reorders: the first read's last response overtakes the one
 * before it. It is kept, nothing is asked for again, and the read
 * completes when the other comes.
 */
static void reordered_read_response_kept(struct kunit *test)
{
	struct req_fixture *fx = rd_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *first = sroce_swqe_at(qp, 0);
	u8 *buf = rd_buffers(test, fx);

	read_data(test, fx, SROCE_OP_READ_RESP_LAST, RD_PSN + 3, 0xa3);
	KUNIT_EXPECT_EQ(test, retransmits(fx), 0ULL);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 2U);
	KUNIT_EXPECT_EQ(test, first->resp_off, 2048U);
	KUNIT_EXPECT_EQ(test, buf[3072], 0xa3);

	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 2, 0xa2);
	KUNIT_EXPECT_TRUE(test, first->done);
	KUNIT_EXPECT_EQ(test, first->resp_off, 4096U);
	KUNIT_EXPECT_EQ(test, buf[2048], 0xa2);
	KUNIT_EXPECT_EQ(test, retransmits(fx), 0ULL);
}

/* The same in the piece of a read asked for again after a loss. */
static void reordered_response_kept_in_a_piece(struct kunit *test)
{
	struct req_fixture *fx = rd_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *first = sroce_swqe_at(qp, 0);

	rd_buffers(test, fx);
	first->rewind_off = 2048;
	read_data(test, fx, SROCE_OP_READ_RESP_LAST, RD_PSN + 3, 0xa3);
	KUNIT_EXPECT_EQ(test, first->ahead, 1ULL);
	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 2, 0xa2);
	KUNIT_EXPECT_TRUE(test, first->done);
	KUNIT_EXPECT_EQ(test, retransmits(fx), 0ULL);
}

/*
 * A read asked for again in pieces asks, from a byte within a piece, only
 * for the rest of that piece: the responder may know the read only as a
 * request for that piece (its first request lost), and answers a repeated
 * one only within it.
 */
static void read_pieces_cut_at_fixed_offsets(struct kunit *test)
{
	struct req_fixture *fx = rc_fixture(test);
	struct sroce_qp *qp = fx->qp;
	u32 piece = SROCE_RD_RETRY_PKTS * qp->req.mtu;
	struct sroce_swqe swqe = {
		.len = 2 * piece + 44 * qp->req.mtu,
		.rewind_off = U32_MAX,
	};

	/* The first request asks for the whole read. */
	KUNIT_EXPECT_EQ(test, sroce_req_rd_len(qp, &swqe, 0), swqe.len);
	swqe.rewind_off = 0;
	KUNIT_EXPECT_EQ(test, sroce_req_rd_len(qp, &swqe, 0), piece);
	KUNIT_EXPECT_EQ(test, sroce_req_rd_len(qp, &swqe, 5 * qp->req.mtu),
			piece - 5 * qp->req.mtu);
	KUNIT_EXPECT_EQ(test, sroce_req_rd_len(qp, &swqe, piece), piece);
	KUNIT_EXPECT_EQ(test, sroce_req_rd_len(qp, &swqe, 2 * piece),
			44 * qp->req.mtu);
	KUNIT_EXPECT_EQ(test,
			sroce_req_rd_len(qp, &swqe, 2 * piece + qp->req.mtu),
			43 * qp->req.mtu);
}

/*
 * Responses past a gap are kept only so far: the third past the same
 * gap says it was a loss, and the requester goes back.
 */
static void third_past_a_gap_is_a_loss(struct kunit *test)
{
	struct req_fixture *fx = rd_fixture(test);
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *first = sroce_swqe_at(qp, 0);

	rd_buffers(test, fx);
	first->resp_off = 0;
	qp->req.acked = RD_PSN;
	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 1, 0xa1);
	read_data(test, fx, SROCE_OP_READ_RESP_MIDDLE, RD_PSN + 2, 0xa2);
	KUNIT_EXPECT_EQ(test, retransmits(fx), 0ULL);
	read_data(test, fx, SROCE_OP_READ_RESP_LAST, RD_PSN + 3, 0xa3);
	KUNIT_EXPECT_EQ(test, retransmits(fx), 1ULL);
	KUNIT_EXPECT_EQ(test, first->rewind_off, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
}

static struct kunit_case req_cases[] = {
	KUNIT_CASE(local_wqes_spend_budget),
	KUNIT_CASE(stale_nak_ignored),
	KUNIT_CASE(outstanding_rnr_nak_acts),
	KUNIT_CASE(outstanding_nak_fails),
	KUNIT_CASE(sqd_to_sqd_takes_new_retries),
	KUNIT_CASE(acked_wqes_not_sent_again),
	KUNIT_CASE(read_tail_lost_asked_again_at_once),
	KUNIT_CASE(read_response_past_window_ignored),
	KUNIT_CASE(later_read_kept_behind_a_gap),
	KUNIT_CASE(later_read_asked_from_what_is_missing),
	KUNIT_CASE(reordered_read_response_kept),
	KUNIT_CASE(reordered_response_kept_in_a_piece),
	KUNIT_CASE(read_pieces_cut_at_fixed_offsets),
	KUNIT_CASE(third_past_a_gap_is_a_loss),
	{}
};

static struct kunit_suite req_suite = {
	.name = "sroce-req",
	.exit = req_fixture_exit,
	.test_cases = req_cases,
};

kunit_test_suite(req_suite);
