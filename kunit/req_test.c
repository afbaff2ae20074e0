// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the requester on a stand-in kernel QP, with no netdev: nothing
 * here sends a packet.
 *
 * The requester's loop, on a UC QP whose send ring holds only local work
 * requests (fast registration and Local Invalidate of one MR, over and
 * over): every run must end within its budget, leaving the rest to the
 * worker.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "counters.h"
#include "cq.h"
#include "device.h"
#include "mr.h"
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
	KUNIT_EXPECT_FALSE(test, READ_ONCE(fx->mr->valid));
	KUNIT_EXPECT_EQ(test, READ_ONCE(qp->state), IB_QPS_RTS);
}

static struct kunit_case req_cases[] = {
	KUNIT_CASE(local_wqes_spend_budget),
	{}
};

static struct kunit_suite req_suite = {
	.name = "sroce_req",
	.exit = req_fixture_exit,
	.test_cases = req_cases,
};

kunit_test_suite(req_suite);
