// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the responder's read and atomic resources, and its ACKs, on a
 * stand-in RC QP.
 *
 * The stand-in netdev has an MTU of 0: every packet the responder builds
 * goes through sroce_net_xmit() and is dropped there, counted, before it
 * could reach a queue. The count is what the responder sent. Requests are
 * queued while the QP's transmit is "full" (the in-flight mark high), then
 * served by one receive softirq's budget.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "counters.h"
#include "device.h"
#include "mr.h"
#include "pkt.h"
#include "qp.h"
#include "resp.h"
#include "wire.h"

#define MTU		256
#define RX_BUDGET	32		/* SROCE_RESP_BUDGET_RX */
#define BUF_BYTES	(2 * RX_BUDGET * MTU)

struct resp_fixture {
	struct sroce_dev *sdev;
	struct sroce_qp *qp;
	struct sroce_mr *mr;
	struct ib_pd pd;
	u8 *buf;
};

/* The worker and the error path are not what these tests look at. */
static void no_work(struct work_struct *work)
{
}

static void resp_fixture_exit(struct kunit *test)
{
	struct resp_fixture *fx = test->priv;

	if (!fx)
		return;
	sroce_resp_stop(fx->qp);
	cancel_work_sync(&fx->qp->err_work);
	sroce_resp_fini(fx->qp);
	if (fx->mr) {
		sroce_mr_table_del(&fx->sdev->mrs, fx->mr);
		kfree_rcu(fx->mr, rcu);
	}
	if (fx->sdev->ndev)
		free_netdev(fx->sdev->ndev);
	sroce_counters_free(fx->sdev);
}

/* An RC QP in RTS granting remote reads and atomics, @nres resources. */
static struct resp_fixture *resp_fixture(struct kunit *test, u32 nres)
{
	struct resp_fixture *fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	static const u8 peer[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x02 };
	struct sroce_qp *qp;

	KUNIT_ASSERT_NOT_NULL(test, fx);
	fx->sdev = kunit_kzalloc(test, sizeof(*fx->sdev), GFP_KERNEL);
	fx->qp = kunit_kzalloc(test, sizeof(*fx->qp), GFP_KERNEL);
	fx->buf = kunit_kzalloc(test, BUF_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->sdev);
	KUNIT_ASSERT_NOT_NULL(test, fx->qp);
	KUNIT_ASSERT_NOT_NULL(test, fx->buf);
	KUNIT_ASSERT_EQ(test, sroce_counters_alloc(fx->sdev), 0);
	test->priv = fx;
	sroce_mr_table_init(&fx->sdev->mrs);
	fx->sdev->ndev = alloc_etherdev(0);
	KUNIT_ASSERT_NOT_NULL(test, fx->sdev->ndev);
	fx->sdev->ndev->mtu = 0;

	qp = fx->qp;
	qp->ibqp.device = &fx->sdev->ibdev;
	qp->ibqp.pd = &fx->pd;
	qp->ibqp.qp_type = IB_QPT_RC;
	qp->attr.qp_access_flags = IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_ATOMIC;
	qp->attr.path_mtu = IB_MTU_256;
	qp->av.net_type = RDMA_NETWORK_IPV4;
	ether_addr_copy(qp->av.dmac, peer);
	qp->ref = kunit_kzalloc(test, sizeof(*qp->ref), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->ref);
	qp->ref->qp = qp;
	refcount_set(&qp->ref->mem, 1);
	mutex_init(&qp->lock);
	spin_lock_init(&qp->rq_lock);
	INIT_WORK(&qp->err_work, no_work);
	KUNIT_ASSERT_EQ(test, sroce_resp_init(qp, 64), 0);
	INIT_WORK(&qp->resp_work, no_work);
	KUNIT_ASSERT_EQ(test, sroce_resp_set_res(qp, nres), 0);
	spin_lock_bh(&qp->rq_lock);
	sroce_resp_start(qp);
	spin_unlock_bh(&qp->rq_lock);
	qp->state = IB_QPS_RTS;
	qp->attr.qp_state = IB_QPS_RTS;

	/* All of kernel memory, of the QP's PD: the buffer is in it. */
	fx->mr = kzalloc(sizeof(*fx->mr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->mr);
	KUNIT_ASSERT_EQ(test, sroce_mr_table_add(&fx->sdev->mrs, fx->mr), 0);
	fx->mr->type = SROCE_MR_DMA;
	fx->mr->pd = &fx->pd;
	fx->mr->access = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
	fx->mr->valid = true;
	return fx;
}

static void tx_full(struct resp_fixture *fx, bool full)
{
	atomic_set(&fx->qp->ref->inflight, full ? SROCE_INFLIGHT_HIGH : 0);
}

static u64 sent(struct resp_fixture *fx)
{
	return sroce_counter_read(fx->sdev, SROCE_CNT_TX_DROPPED);
}

/* A request packet, its headers in @hdr. */
struct req_pkt {
	u8 hdr[64] __aligned(8);
	struct sroce_pkt pkt;
};

/* Builds a request of opcode @op at @psn in @r. */
static struct sroce_pkt *req_build(struct req_pkt *r, u8 op, u32 psn,
				   u32 rkey, u64 va, u32 len)
{
	struct sroce_pkt *pkt = &r->pkt;
	struct sroce_atomic_eth *aeth;
	struct sroce_reth *reth;

	memset(r, 0, sizeof(*r));
	pkt->bth = (struct sroce_bth *)r->hdr;
	pkt->opcode = op;
	pkt->mask = sroce_opcode[op].mask;
	pkt->psn = psn;
	if (pkt->mask & SROCE_HAS_RETH) {
		reth = sroce_pkt_hdr(pkt, SROCE_HAS_RETH);
		reth->va = cpu_to_be64(va);
		reth->rkey = cpu_to_be32(rkey);
		reth->len = cpu_to_be32(len);
	}
	if (pkt->mask & SROCE_HAS_ATOMICETH) {
		aeth = sroce_pkt_hdr(pkt, SROCE_HAS_ATOMICETH);
		aeth->va = cpu_to_be64(va);
		aeth->rkey = cpu_to_be32(rkey);
		aeth->swap_add = cpu_to_be64(1);
	}
	return pkt;
}

/* A request of opcode @op at @psn, to the responder. */
static void request(struct resp_fixture *fx, u8 op, u32 psn, u32 rkey,
		    u64 va, u32 len)
{
	struct req_pkt r;

	sroce_resp_rx(fx->qp, req_build(&r, op, psn, rkey, va, len));
}

static u64 acks(struct resp_fixture *fx)
{
	return sroce_counter_read(fx->sdev, SROCE_CNT_ACK_SENT);
}

/* ACK requests answered by another's ACK. */
static u64 held(struct resp_fixture *fx)
{
	return sroce_counter_read(fx->sdev, SROCE_CNT_ACK_HELD);
}

/*
 * An ACK a stream held leaves by its timer: in four of the stream's gaps,
 * 1 ms at most. 100 ms is the test's patience, not the driver's bound.
 */
static void wait_ack_sent(struct kunit *test, struct resp_fixture *fx)
{
	unsigned long end = jiffies + msecs_to_jiffies(100);

	while (READ_ONCE(fx->qp->resp.ack_pending) && time_before(jiffies, end))
		usleep_range(500, 1000);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(fx->qp->resp.ack_pending));
}

static void read_req(struct resp_fixture *fx, u32 psn, u64 va, u32 len)
{
	request(fx, SROCE_OP_READ_REQ, psn, fx->mr->key, va, len);
}

/* A duplicate Send nobody asked an ACK for: only runs the responder. */
static void poke(struct resp_fixture *fx)
{
	request(fx, SROCE_OP_SEND_ONLY, sroce_psn_add(fx->qp->resp.psn,
						      SROCE_BTH_PSN_MASK),
		0, 0, 0);
}

/*
 * A read that spends the softirq's budget to the last packet, then an
 * atomic, then another read: the atomic ACK waits for the worker, and so
 * does everything behind it.
 */
static void atomic_ack_within_budget(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);
	u64 va = (uintptr_t)fx->buf;

	tx_full(fx, true);
	read_req(fx, 0, va, RX_BUDGET * MTU);
	request(fx, SROCE_OP_FETCH_ADD, RX_BUDGET, fx->mr->key,
		va + RX_BUDGET * MTU, 8);
	read_req(fx, RX_BUDGET + 1, va, RX_BUDGET * MTU);
	KUNIT_ASSERT_EQ(test, fx->qp->state, IB_QPS_RTS);
	KUNIT_ASSERT_EQ(test, sent(fx), 0ULL);

	tx_full(fx, false);
	poke(fx);
	KUNIT_EXPECT_EQ(test, sent(fx), (u64)RX_BUDGET);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res_send, 1U);
}

/*
 * A read asked for again is queued to be answered again when the peer
 * sends a new read behind it, and the one resource the QP has is the
 * repeated read's: the new read is taken all the same, not refused as one
 * too many. With one read outstanding at most, the peer sent it because
 * it had the answer after all: that one is not sent a third time.
 */
static void new_read_behind_answer_again(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 1);
	u64 va = (uintptr_t)fx->buf;

	read_req(fx, 0, va, MTU);
	KUNIT_ASSERT_EQ(test, sent(fx), 1ULL);

	tx_full(fx, true);
	read_req(fx, 0, va, MTU);		/* its response was lost */
	KUNIT_ASSERT_TRUE(test, fx->qp->resp.res[0].again);
	KUNIT_ASSERT_EQ(test, fx->qp->resp.res_send, 0U);
	read_req(fx, 1, va + MTU, MTU);		/* pipelined behind it */
	KUNIT_EXPECT_EQ(test, fx->qp->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.psn, 2U);

	tx_full(fx, false);
	poke(fx);
	KUNIT_EXPECT_EQ(test, sent(fx), 2ULL);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_NAK_SENT),
			0ULL);
}

/* A peer that sends more reads than it agreed to is refused. */
static void more_reads_than_agreed(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 1);
	u64 va = (uintptr_t)fx->buf;

	tx_full(fx, true);
	read_req(fx, 0, va, MTU);
	read_req(fx, 1, va, MTU);
	KUNIT_EXPECT_EQ(test, fx->qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_NAK_SENT),
			1ULL);
}

/*
 * A duplicate read that comes while later answers are still queued sends
 * the answers back to it, at once: not dropped, to be asked for again
 * when the requester's timer fires. The reads between it and the queue
 * are not sent again unless asked for.
 */
static void dup_read_goes_back(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);
	u64 va = (uintptr_t)fx->buf;

	read_req(fx, 0, va, MTU);			/* A, PSN 0 */
	read_req(fx, 1, va, 2 * MTU);			/* B, PSNs 1-2 */
	KUNIT_ASSERT_EQ(test, sent(fx), 3ULL);

	tx_full(fx, true);
	read_req(fx, 3, va, MTU);			/* C, queued */
	read_req(fx, 0, va, MTU);			/* A again */
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res_send, 0U);
	KUNIT_EXPECT_EQ(test, fx->qp->state, IB_QPS_RTS);

	tx_full(fx, false);
	poke(fx);
	KUNIT_EXPECT_EQ(test, sent(fx), 5ULL);		/* A, C */
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res_send, 3U);

	/* Asked for again while it is queued: once is enough. */
	tx_full(fx, true);
	read_req(fx, 1, va, 2 * MTU);
	read_req(fx, 1, va, 2 * MTU);
	tx_full(fx, false);
	poke(fx);
	KUNIT_EXPECT_EQ(test, sent(fx), 7ULL);
}

/*
 * A duplicate for a piece of a read (SROCE_RD_RETRY_PKTS at a time) is
 * answered with that piece, ending in a LAST: not with the rest of the
 * read's PSNs.
 */
static void dup_read_piece(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 1);
	u64 va = (uintptr_t)fx->buf;

	read_req(fx, 0, va, 4 * MTU);
	KUNIT_ASSERT_EQ(test, sent(fx), 4ULL);
	read_req(fx, 1, va + MTU, MTU);
	KUNIT_EXPECT_EQ(test, sent(fx), 5ULL);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res[0].stop_psn, 1U);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res[0].psn, 2U);
}

/*
 * A repeated read is answered only within the range the read it repeats
 * asked for: not elsewhere in the MR, however large the MR is.
 */
static void dup_read_out_of_range(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 1);
	u64 va = (uintptr_t)fx->buf;

	read_req(fx, 0, va, 2 * MTU);
	KUNIT_ASSERT_EQ(test, sent(fx), 2ULL);
	read_req(fx, 0, va + 8 * MTU, 2 * MTU);	/* elsewhere */
	read_req(fx, 0, va, 4 * MTU);			/* more */
	KUNIT_EXPECT_EQ(test, sent(fx), 2ULL);
	KUNIT_EXPECT_FALSE(test, fx->qp->resp.res[0].again);
	/* The rest of the same read is answered. */
	read_req(fx, 1, va + MTU, MTU);
	KUNIT_EXPECT_EQ(test, sent(fx), 3ULL);
}

/*
 * A modify_qp the QP refuses (max_dest_rd_atomic may change only on the
 * way to RTR) leaves the reads being answered as they were.
 */
static void refused_modify_keeps_the_reads(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);
	struct ib_qp_attr attr = { .max_dest_rd_atomic = 8 };
	u64 va = (uintptr_t)fx->buf;
	struct sroce_rd_res *res;

	tx_full(fx, true);
	read_req(fx, 0, va, 4 * MTU);
	res = fx->qp->resp.res;
	KUNIT_EXPECT_EQ(test, sroce_qp_ops.modify_qp(&fx->qp->ibqp, &attr,
						     IB_QP_MAX_DEST_RD_ATOMIC,
						     NULL), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, fx->qp->resp.res, res);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.nres, 4U);

	tx_full(fx, false);
	poke(fx);
	KUNIT_EXPECT_EQ(test, sent(fx), 4ULL);
}

/* Zero-length writes, each asking for an ACK: a run of them. */
static void write_run(struct resp_fixture *fx, u32 psn, unsigned int n)
{
	struct sroce_pkt *pkts[4];
	struct req_pkt r[4];
	unsigned int i;

	for (i = 0; i < n; i++) {
		pkts[i] = req_build(&r[i], SROCE_OP_WRITE_ONLY, psn + i, 0,
				    0, 0);
		pkts[i]->ack_req = true;
	}
	sroce_resp_rx_run(fx->qp, pkts, n);
}

/*
 * Four requests asking for an ACK in one run get one ACK, for the last:
 * at once, or, the run's requests being a stream, by the hold's timer.
 */
static void one_ack_per_run(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);

	fx->qp->attr.qp_access_flags |= IB_ACCESS_REMOTE_WRITE;
	write_run(fx, 0, 4);
	wait_ack_sent(test, fx);
	KUNIT_EXPECT_EQ(test, acks(fx), 1ULL);
	KUNIT_EXPECT_EQ(test, held(fx), 3ULL);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.ack_psn, 3U);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.psn, 4U);
}

/*
 * Requests one at a time, microseconds apart, nothing sent back: a
 * stream, whose ACKs wait for the next requests but never past the
 * timer. Each request is answered by an ACK of its own or counted held.
 */
static void stream_acks_held(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);
	unsigned int i;

	fx->qp->attr.qp_access_flags |= IB_ACCESS_REMOTE_WRITE;
	for (i = 0; i < 8; i++)
		write_run(fx, i, 1);
	wait_ack_sent(test, fx);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.ack_psn, 7U);
	KUNIT_EXPECT_EQ(test, acks(fx) + held(fx), 8ULL);
	KUNIT_EXPECT_LT(test, acks(fx), 8ULL);
}

/*
 * In a ping-pong we send the peer a request between two of its own, and
 * it waits for each ACK before its next: every ACK goes at once.
 */
static void ping_pong_acks_at_once(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);
	unsigned int i;

	fx->qp->attr.qp_access_flags |= IB_ACCESS_REMOTE_WRITE;
	for (i = 0; i < 4; i++) {
		fx->qp->req.max_psn++;	/* our pong */
		write_run(fx, i, 1);
		KUNIT_EXPECT_FALSE(test, fx->qp->resp.ack_pending);
	}
	KUNIT_EXPECT_EQ(test, acks(fx), 4ULL);
	KUNIT_EXPECT_EQ(test, held(fx), 0ULL);
}

/*
 * A run's ACK goes out before a read the run also holds is answered,
 * not behind its responses: with the netdev full, the read waits and the
 * ACK has left all the same.
 */
static void ack_before_read_in_run(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);
	u64 va = (uintptr_t)fx->buf;
	struct sroce_pkt *pkts[2];
	struct req_pkt r[2];

	fx->qp->attr.qp_access_flags |= IB_ACCESS_REMOTE_WRITE;
	tx_full(fx, true);
	pkts[0] = req_build(&r[0], SROCE_OP_WRITE_ONLY, 0, 0, 0, 0);
	pkts[0]->ack_req = true;
	pkts[1] = req_build(&r[1], SROCE_OP_READ_REQ, 1, fx->mr->key, va, MTU);
	sroce_resp_rx_run(fx->qp, pkts, 2);
	KUNIT_EXPECT_EQ(test, acks(fx), 1ULL);
	KUNIT_EXPECT_EQ(test, sent(fx), 1ULL);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res_head, 1U);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res_send, 0U);
}

/*
 * A read accepted, then its MR invalidated before its responses could
 * go: the next response is a remote access NAK and the QP ends, not a
 * silence the requester would retry into the ground.
 */
static void read_refused_when_mr_goes(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);
	u64 va = (uintptr_t)fx->buf;

	tx_full(fx, true);
	read_req(fx, 0, va, 4 * MTU);
	KUNIT_ASSERT_EQ(test, fx->qp->resp.res_head, 1U);
	WRITE_ONCE(fx->mr->valid, false);
	tx_full(fx, false);
	poke(fx);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_NAK_SENT),
			1ULL);
	KUNIT_EXPECT_EQ(test, sent(fx), 1ULL);		/* the NAK alone */
	KUNIT_EXPECT_EQ(test, fx->qp->state, IB_QPS_ERR);
}

/* A FLUSH (FETH: @feth) at @psn through @rkey, to the responder. */
static void flush_req(struct resp_fixture *fx, u32 psn, u32 feth, u32 rkey,
		      u64 va, u32 len)
{
	struct req_pkt r;
	struct sroce_pkt *pkt = req_build(&r, SROCE_OP_FLUSH, psn, rkey, va,
					  len);
	struct sroce_feth *f = sroce_pkt_hdr(pkt, SROCE_HAS_FETH);

	f->bits = cpu_to_be32(feth);
	sroce_resp_rx(fx->qp, pkt);
}

#define FLUSH_GLOBAL_RANGE	SROCE_FLUSH_GLOBAL
#define FLUSH_GLOBAL_MR		(SROCE_FLUSH_MR << SROCE_FETH_SEL_SHIFT | \
				 SROCE_FLUSH_GLOBAL)

/*
 * FLUSH for global visibility, of a range and of a whole MR (whose
 * address then means nothing), is answered by one response each, from
 * the resources; a duplicate is answered again.
 */
static void flush_answered(struct kunit *test)
{
	struct resp_fixture *fx = resp_fixture(test, 4);
	u64 va = (uintptr_t)fx->buf;

	fx->qp->attr.qp_access_flags |= SROCE_ACCESS_FLUSH_GLOBAL;
	fx->mr->access |= SROCE_ACCESS_FLUSH_GLOBAL;
	flush_req(fx, 0, FLUSH_GLOBAL_RANGE, fx->mr->key, va, MTU);
	flush_req(fx, 1, FLUSH_GLOBAL_MR, fx->mr->key, 0, U32_MAX);
	KUNIT_EXPECT_EQ(test, sent(fx), 2ULL);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res_head, 2U);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.psn, 2U);
	flush_req(fx, 0, FLUSH_GLOBAL_RANGE, fx->mr->key, va, MTU);
	KUNIT_EXPECT_EQ(test, sent(fx), 3ULL);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res_head, 2U);
	KUNIT_EXPECT_EQ(test, fx->qp->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_NAK_SENT),
			0ULL);
}

/* FLUSHes refused: the rights of the QP and of the MR, and the FETH. */
struct flush_refusal {
	const char *why;
	u32 qp_access;
	u32 mr_access;
	u32 feth;
};

static const struct flush_refusal flush_refusals[] = {
	{ "no right on the QP", 0, SROCE_ACCESS_FLUSH_GLOBAL,
	  FLUSH_GLOBAL_RANGE },
	{ "no right on the MR", SROCE_ACCESS_FLUSH_GLOBAL, 0,
	  FLUSH_GLOBAL_RANGE },
	{ "persistence", SROCE_ACCESS_FLUSH_GLOBAL, SROCE_ACCESS_FLUSH_GLOBAL,
	  SROCE_FLUSH_PERSISTENT },
	{ "an unknown level", SROCE_ACCESS_FLUSH_GLOBAL,
	  SROCE_ACCESS_FLUSH_GLOBAL,
	  2 << SROCE_FETH_SEL_SHIFT | SROCE_FLUSH_GLOBAL },
};

static void flush_refusal_desc(const struct flush_refusal *r, char *desc)
{
	strscpy(desc, r->why, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(flush_refusal, flush_refusals, flush_refusal_desc);

/* Each is NAKed and ends the QP; no resource is taken. */
static void flush_refused(struct kunit *test)
{
	const struct flush_refusal *r = test->param_value;
	struct resp_fixture *fx = resp_fixture(test, 4);

	fx->qp->attr.qp_access_flags |= r->qp_access;
	fx->mr->access |= r->mr_access;
	flush_req(fx, 0, r->feth, fx->mr->key, (uintptr_t)fx->buf, MTU);
	KUNIT_EXPECT_EQ(test, fx->qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_NAK_SENT),
			1ULL);
	KUNIT_EXPECT_EQ(test, fx->qp->resp.res_head, 0U);
}

static struct kunit_case resp_cases[] = {
	KUNIT_CASE(one_ack_per_run),
	KUNIT_CASE(stream_acks_held),
	KUNIT_CASE(ping_pong_acks_at_once),
	KUNIT_CASE(ack_before_read_in_run),
	KUNIT_CASE(atomic_ack_within_budget),
	KUNIT_CASE(new_read_behind_answer_again),
	KUNIT_CASE(more_reads_than_agreed),
	KUNIT_CASE(dup_read_goes_back),
	KUNIT_CASE(dup_read_piece),
	KUNIT_CASE(dup_read_out_of_range),
	KUNIT_CASE(refused_modify_keeps_the_reads),
	KUNIT_CASE(read_refused_when_mr_goes),
	KUNIT_CASE(flush_answered),
	KUNIT_CASE_PARAM(flush_refused, flush_refusal_gen_params),
	{}
};

static struct kunit_suite resp_suite = {
	.name = "sroce-resp",
	.exit = resp_fixture_exit,
	.test_cases = resp_cases,
};

kunit_test_suite(resp_suite);
