// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: a shared receive queue's limit event (11.2.3.5), and where it is
 * delivered. The responder takes WQEs with its QP's receive lock held; a
 * kernel consumer's handler may post receives to the SRQ or sleep, so it
 * must hear the event from a worker.
 */
#include <kunit/test.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "srq.h"
#include "wq.h"

struct srq_fixture {
	struct sroce_srq *srq;
	int events;
	int atomic_events;
	enum ib_event_type last;
};

static void note_event(struct ib_event *ev, void *ctx)
{
	struct srq_fixture *fx = ctx;

	fx->events++;
	if (in_softirq() || in_hardirq() || irqs_disabled())
		fx->atomic_events++;
	fx->last = ev->event;
}

static void srq_test_exit(struct kunit *test)
{
	struct srq_fixture *fx = test->priv;

	if (fx) {
		cancel_work_sync(&fx->srq->limit_work);
		sroce_wq_destroy(&fx->srq->wq);
	}
}

static struct srq_fixture *srq_fixture(struct kunit *test, u32 limit,
				       bool kernel)
{
	struct srq_fixture *fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fx);
	fx->srq = kunit_kzalloc(test, sizeof(*fx->srq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->srq);
	KUNIT_ASSERT_EQ(test, sroce_srq_init(fx->srq, 4, 1, limit, kernel), 0);
	test->priv = fx;
	fx->srq->ibsrq.event_handler = note_event;
	fx->srq->ibsrq.srq_context = fx;
	return fx;
}

/* Posts @n receive WQEs as ib_post_srq_recv() would. */
static void post(struct kunit *test, struct sroce_srq *srq, u32 n)
{
	struct sroce_wq *wq = &srq->wq;
	struct sroce_recv_wqe *wqe;
	unsigned long flags;
	u32 prod, i;

	spin_lock_irqsave(&wq->post_lock, flags);
	prod = READ_ONCE(wq->q.hdr->prod);
	for (i = 0; i < n; i++, prod++) {
		wqe = sroce_wq_slot(wq, prod);
		KUNIT_ASSERT_NOT_NULL(test, wqe);
		wqe->wr_id = prod;
		wqe->num_sge = 0;
	}
	sroce_wq_publish(wq, prod);
	spin_unlock_irqrestore(&wq->post_lock, flags);
}

/* Takes one WQE as the responder does, inside a QP's receive lock. */
static void take(struct kunit *test, struct sroce_srq *srq)
{
	spinlock_t rq_lock;	/* stands in for the QP's */
	struct sroce_recv_wqe wqe;

	spin_lock_init(&rq_lock);
	spin_lock_bh(&rq_lock);
	KUNIT_EXPECT_EQ(test, sroce_srq_take(srq, &wqe, sizeof(wqe)), 1);
	spin_unlock_bh(&rq_lock);
}

static void kernel_limit_event_outside_locks(struct kunit *test)
{
	struct srq_fixture *fx = srq_fixture(test, 3, true);

	post(test, fx->srq, 4);
	take(test, fx->srq);	/* 3 left: not below the limit */
	flush_work(&fx->srq->limit_work);
	KUNIT_EXPECT_EQ(test, fx->events, 0);
	take(test, fx->srq);	/* 2 left */
	flush_work(&fx->srq->limit_work);
	KUNIT_EXPECT_EQ(test, fx->events, 1);
	KUNIT_EXPECT_EQ(test, fx->atomic_events, 0);
	KUNIT_EXPECT_EQ(test, fx->last, IB_EVENT_SRQ_LIMIT_REACHED);
}

/* uverbs' handler only queues the event: it is delivered at once. */
static void user_limit_fires_once_and_disarms(struct kunit *test)
{
	struct srq_fixture *fx = srq_fixture(test, 4, false);

	post(test, fx->srq, 4);
	take(test, fx->srq);
	KUNIT_EXPECT_EQ(test, fx->events, 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(fx->srq->limit), 0U);
	take(test, fx->srq);
	KUNIT_EXPECT_EQ(test, fx->events, 1);
}

static struct kunit_case srq_cases[] = {
	KUNIT_CASE(kernel_limit_event_outside_locks),
	KUNIT_CASE(user_limit_fires_once_and_disarms),
	{}
};

static struct kunit_suite srq_suite = {
	.name = "sroce-srq",
	.exit = srq_test_exit,
	.test_cases = srq_cases,
};

kunit_test_suite(srq_suite);
