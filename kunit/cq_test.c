// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: completion queues on a stand-in device whose QP table holds one
 * QP. The data path's producer, the kernel consumer's verbs, arming,
 * resize, and what a process can scribble over in the shared header.
 * Test doubles stand in for the core's completion and event handlers and
 * count what they hear.
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "cq.h"
#include "device.h"
#include "limits.h"
#include "qp.h"

/* The one QP of the stand-in device; completions name it. */
#define FIXTURE_QPN	17

struct cq_fixture {
	struct sroce_dev *sdev;
	struct sroce_qp *qp;
	struct sroce_cq *cq;
	int comp_events;
	int err_events;
	struct ib_event last;
};

static void count_comp(struct ib_cq *ibcq, void *ctx)
{
	struct cq_fixture *fx = ctx;

	fx->comp_events++;
}

static void count_event(struct ib_event *ev, void *ctx)
{
	struct cq_fixture *fx = ctx;

	fx->err_events++;
	fx->last = *ev;
}

/* A device whose QP table holds one QP, FIXTURE_QPN, for wc->qp. */
static void fixture_device(struct kunit *test, struct cq_fixture *fx)
{
	struct sroce_qp_ref *ref;

	fx->sdev = kunit_kzalloc(test, sizeof(*fx->sdev), GFP_KERNEL);
	fx->qp = kunit_kzalloc(test, sizeof(*fx->qp), GFP_KERNEL);
	ref = kunit_kzalloc(test, sizeof(*ref), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->sdev);
	KUNIT_ASSERT_NOT_NULL(test, fx->qp);
	KUNIT_ASSERT_NOT_NULL(test, ref);
	xa_init_flags(&fx->sdev->qps, XA_FLAGS_ALLOC);
	ref->qp = fx->qp;
	refcount_set(&ref->count, 1);
	init_completion(&ref->done);
	fx->qp->ref = ref;
	fx->qp->ibqp.qp_num = FIXTURE_QPN;
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&fx->sdev->qps, FIXTURE_QPN, ref,
					      GFP_KERNEL)), 0);
}

/* A CQ for at least @cqe entries, wired to the test doubles. */
static struct cq_fixture *cq_fixture(struct kunit *test, u32 cqe)
{
	struct cq_fixture *fx;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx);
	fixture_device(test, fx);
	fx->cq = kunit_kzalloc(test, sizeof(*fx->cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->cq);
	KUNIT_ASSERT_EQ(test, sroce_cq_init(fx->cq, cqe), 0);
	fx->cq->ibcq.device = &fx->sdev->ibdev;
	fx->cq->ibcq.comp_handler = count_comp;
	fx->cq->ibcq.event_handler = count_event;
	fx->cq->ibcq.cq_context = fx;
	test->priv = fx;
	return fx;
}

static void cq_test_exit(struct kunit *test)
{
	struct cq_fixture *fx = test->priv;

	if (fx) {
		sroce_cq_fini(fx->cq);
		xa_destroy(&fx->sdev->qps);
	}
}

/* Both indices at @idx: an empty ring that has already come this far. */
static void start_at(struct sroce_cq *cq, u32 idx)
{
	cq->prod = idx;
	cq->queue.hdr->prod = idx;
	cq->queue.hdr->cons = idx;
}

static int post(struct sroce_cq *cq, u64 wr_id, bool solicited)
{
	struct sroce_cqe cqe = {
		.wr_id = wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = (u32)wr_id * 3,
		.qp_num = FIXTURE_QPN,
	};

	return sroce_cq_post(cq, &cqe, solicited);
}

static int poll(struct sroce_cq *cq, struct ib_wc *wc, int n)
{
	return sroce_cq_ops.poll_cq(&cq->ibcq, n, wc);
}

static int arm(struct sroce_cq *cq, enum ib_cq_notify_flags flags)
{
	return sroce_cq_ops.req_notify_cq(&cq->ibcq, flags);
}

static int resize(struct sroce_cq *cq, int cqe)
{
	return sroce_cq_ops.resize_cq(&cq->ibcq, cqe, NULL);
}

/* Polls for @n entries, and expects them all, as @first, @first + 1, ... */
static void expect_in_order(struct kunit *test, struct sroce_cq *cq,
			    int n, u64 first)
{
	struct ib_wc wc[16];
	int i;

	KUNIT_ASSERT_LE(test, n, (int)ARRAY_SIZE(wc));
	KUNIT_ASSERT_EQ(test, poll(cq, wc, n), n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, first + i);
		KUNIT_EXPECT_EQ(test, wc[i].byte_len, (u32)(first + i) * 3);
	}
}

static void capacity_reported(struct kunit *test)
{
	static const struct {
		u32 want, slots, cqe;
	} sizes[] = {
		{ 1, 1, 1 }, { 2, 2, 2 }, { 3, 4, 4 }, { 1000, 1024, 1024 },
		{ SZ_64K - 1, SZ_64K, SZ_64K },
		/* The largest CQ fills every slot of its ring. */
		{ SROCE_MAX_CQE, SZ_256K, SROCE_MAX_CQE },
	};
	struct sroce_cq *cq;
	unsigned int i;

	cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cq);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		KUNIT_ASSERT_EQ(test, sroce_cq_init(cq, sizes[i].want), 0);
		KUNIT_EXPECT_EQ(test, cq->queue.slots, sizes[i].slots);
		KUNIT_EXPECT_EQ(test, cq->queue.stride, 64U);
		KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, (int)sizes[i].cqe);
		sroce_cq_fini(cq);
	}
}

/* Every field of the CQE reaches the kernel consumer's ib_wc. */
static void fields_reach_the_wc(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 4);
	struct sroce_cq *cq = fx->cq;
	struct sroce_cqe cqe = {
		.wr_id = 0x1122334455667788ULL,
		.status = IB_WC_REM_ACCESS_ERR,
		.opcode = IB_WC_RECV_RDMA_WITH_IMM,
		.vendor_err = 0x42,
		.byte_len = 4096,
		.ex.imm_data = cpu_to_be32(0xdeadbeef),
		.qp_num = FIXTURE_QPN,
		.src_qp = 0xabcdef,
		.wc_flags = IB_WC_WITH_IMM | IB_WC_GRH | IB_WC_WITH_SMAC,
		.pkey_index = 0,
		.sl = 3,
		.network_hdr_type = RDMA_NETWORK_IPV4,
		.smac = { 0x52, 0x54, 0x00, 0x77, 0x00, 0x02 },
		.port_num = 1,
	};
	struct ib_wc wc;

	memset(&wc, 0xa5, sizeof(wc));
	KUNIT_ASSERT_EQ(test, sroce_cq_post(cq, &cqe, false), 0);
	KUNIT_ASSERT_EQ(test, poll(cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, cqe.wr_id);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.vendor_err, 0x42U);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 4096U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xdeadbeefU);
	KUNIT_EXPECT_EQ(test, wc.src_qp, 0xabcdefU);
	KUNIT_EXPECT_EQ(test, wc.wc_flags,
			IB_WC_WITH_IMM | IB_WC_GRH | IB_WC_WITH_SMAC);
	KUNIT_EXPECT_EQ(test, wc.sl, 3);
	KUNIT_EXPECT_EQ(test, wc.slid, 0U);
	KUNIT_EXPECT_EQ(test, wc.dlid_path_bits, 0);
	KUNIT_EXPECT_EQ(test, wc.vlan_id, 0);
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_EQ(test, wc.port_num, 1U);
	KUNIT_EXPECT_EQ(test, memcmp(wc.smac, cqe.smac, ETH_ALEN), 0);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, &fx->qp->ibqp);
	KUNIT_EXPECT_EQ(test, poll(cq, &wc, 1), 0);
}

/*
 * An entry of a QP destroyed since has no wc->qp to give a kernel
 * consumer: it is dropped, and the entries around it still come.
 */
static void entries_of_gone_qps_dropped(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 16);
	struct sroce_cqe gone = { .wr_id = 99, .qp_num = FIXTURE_QPN + 1 };
	struct ib_wc wc[4];

	KUNIT_ASSERT_EQ(test, post(fx->cq, 1, false), 0);
	KUNIT_ASSERT_EQ(test, sroce_cq_post(fx->cq, &gone, false), 0);
	KUNIT_ASSERT_EQ(test, post(fx->cq, 2, false), 0);
	KUNIT_ASSERT_EQ(test, poll(fx->cq, wc, 4), 2);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 1ULL);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 2ULL);
	KUNIT_EXPECT_EQ(test, poll(fx->cq, wc, 4), 0);
	/* All three slots went back to the producer. */
	KUNIT_EXPECT_EQ(test, fx->cq->queue.hdr->cons, fx->cq->prod);
}

/* A completion of QP @qpn, numbered @wr_id. */
static int post_for(struct sroce_cq *cq, u32 qpn, u64 wr_id)
{
	struct sroce_cqe cqe = {
		.wr_id = wr_id,
		.opcode = IB_WC_RECV,
		.byte_len = (u32)wr_id * 3,
		.qp_num = qpn,
	};

	return sroce_cq_post(cq, &cqe, false);
}

/*
 * A QP destroyed with completions still queued in a CQ it shares: its
 * number comes back on a new QP, and a kernel consumer polling the CQ
 * must not get the old QP's completions credited to the new one. The
 * clean at destroy_qp removes them; the others stay, in order.
 */
static void clean_spares_new_qp_with_same_number(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 16);
	const u32 gone = FIXTURE_QPN + 1;
	struct ib_wc wc[8];
	int i, n;

	fx->cq->kernel = true;
	KUNIT_ASSERT_EQ(test, post(fx->cq, 1, false), 0);
	KUNIT_ASSERT_EQ(test, post_for(fx->cq, gone, 90), 0);
	KUNIT_ASSERT_EQ(test, post(fx->cq, 2, false), 0);
	KUNIT_ASSERT_EQ(test, post_for(fx->cq, gone, 91), 0);
	KUNIT_ASSERT_EQ(test, post_for(fx->cq, gone, 92), 0);
	KUNIT_ASSERT_EQ(test, post(fx->cq, 3, false), 0);

	sroce_cq_clean(fx->cq, gone);
	/* The number is given again: the table names a live QP under it. */
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&fx->sdev->qps, gone,
					      fx->qp->ref, GFP_KERNEL)), 0);

	n = poll(fx->cq, wc, ARRAY_SIZE(wc));
	KUNIT_ASSERT_EQ(test, n, 3);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, (u64)i + 1);
		KUNIT_EXPECT_EQ(test, wc[i].byte_len, (u32)(i + 1) * 3);
	}
	KUNIT_EXPECT_EQ(test, fx->cq->queue.hdr->cons, fx->cq->prod);
}

/*
 * The clean over a full 8-entry ring whose entries straddle the 32-bit
 * wrap: the kept entries come out in order, and the slots of the ones
 * dropped go back to the producer, which can fill the ring again.
 */
static void clean_keeps_order_across_wrap(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 8);
	struct sroce_cq *cq = fx->cq;
	const u32 gone = FIXTURE_QPN + 1;
	u64 kept = 0;
	int i;

	cq->kernel = true;
	start_at(cq, U32_MAX - 4);
	for (i = 0; i < 8; i++) {
		if (i % 3 == 1)
			KUNIT_ASSERT_EQ(test, post_for(cq, gone, 100 + i), 0);
		else
			KUNIT_ASSERT_EQ(test, post(cq, kept++, false), 0);
	}

	sroce_cq_clean(cq, gone);
	KUNIT_EXPECT_EQ(test, cq->prod - cq->queue.hdr->cons, (u32)kept);
	while (cq->prod - cq->queue.hdr->cons < cq->capacity)
		KUNIT_ASSERT_EQ(test, post(cq, kept++, false), 0);
	KUNIT_EXPECT_EQ(test, kept, 8ULL);
	expect_in_order(test, cq, kept, 0);
}

/*
 * A process polls its CQ's mapping without any lock the kernel could
 * take: the kernel leaves a user CQ's ring alone (libsroce cleans it).
 */
static void clean_leaves_user_ring_alone(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 8);
	struct sroce_cq *cq = fx->cq;

	KUNIT_ASSERT_EQ(test, post_for(cq, FIXTURE_QPN + 1, 7), 0);
	sroce_cq_clean(cq, FIXTURE_QPN + 1);
	KUNIT_EXPECT_EQ(test, cq->queue.hdr->cons, 0U);
	KUNIT_EXPECT_EQ(test, cq->queue.hdr->prod, 1U);
	KUNIT_EXPECT_EQ(test, ((struct sroce_cqe *)
			       sroce_queue_at(&cq->queue, 0))->wr_id, 7ULL);
}

/*
 * Producer and consumer take turns over an 8-entry ring whose indices
 * start just short of the 32-bit wrap: every entry comes out once, in
 * order, in slots past the wrap too.
 */
static void order_across_wrap(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 8);
	struct sroce_cq *cq = fx->cq;
	u64 next_in = 0, next_out = 0;
	struct ib_wc wc;
	int round, i;

	start_at(cq, U32_MAX - 20);
	for (round = 0; round < 20; round++) {
		int burst = 1 + round % 8;

		for (i = 0; i < burst; i++)
			KUNIT_ASSERT_EQ(test, post(cq, next_in++, false), 0);
		expect_in_order(test, cq, burst, next_out);
		next_out += burst;
		KUNIT_ASSERT_EQ(test, poll(cq, &wc, 1), 0);
	}
	KUNIT_EXPECT_LT(test, cq->prod, 200U);	/* wrapped */
	KUNIT_EXPECT_EQ(test, cq->queue.hdr->prod, cq->prod);
	KUNIT_EXPECT_EQ(test, cq->queue.hdr->cons, cq->prod);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 0);
	KUNIT_EXPECT_EQ(test, fx->err_events, 0);
}

/*
 * A full CQ refuses the next completion rather than overwrite one; the
 * event handler hears of it once, and the CQ stays in error.
 */
static void overflow_refused_and_reported(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 4);
	struct sroce_cq *cq = fx->cq;
	struct ib_wc wc;
	int i;

	start_at(cq, U32_MAX - 1);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, post(cq, i, false), 0);
	KUNIT_EXPECT_EQ(test, fx->err_events, 0);

	KUNIT_EXPECT_EQ(test, post(cq, 100, true), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, fx->err_events, 1);
	KUNIT_EXPECT_EQ(test, fx->last.event, IB_EVENT_CQ_ERR);
	KUNIT_EXPECT_PTR_EQ(test, fx->last.element.cq, &cq->ibcq);
	KUNIT_EXPECT_EQ(test, post(cq, 101, false), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, fx->err_events, 1);

	expect_in_order(test, cq, 4, 0);
	KUNIT_EXPECT_EQ(test, poll(cq, &wc, 1), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 102, false), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, fx->err_events, 1);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 0);
}

/* The largest CQ holds what query_device promises, and not one more. */
static void largest_cq_holds_max_cqe(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, SROCE_MAX_CQE);
	u32 i;

	for (i = 0; i < SROCE_MAX_CQE; i++)
		KUNIT_ASSERT_EQ(test, post(fx->cq, i, false), 0);
	KUNIT_EXPECT_EQ(test, post(fx->cq, i, false), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, fx->err_events, 1);
}

static void arm_next_fires_once(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 16);
	struct sroce_cq *cq = fx->cq;

	KUNIT_EXPECT_EQ(test, post(cq, 0, true), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 0);	/* not armed */

	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 1, false), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 1);
	KUNIT_EXPECT_EQ(test, post(cq, 2, true), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 1);	/* one per arm */
	KUNIT_EXPECT_EQ(test, cq->queue.hdr->flags, 0U);

	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 3, false), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 4, false), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 2);
}

static void arm_solicited_waits_for_solicited(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 16);
	struct sroce_cq *cq = fx->cq;

	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_SOLICITED), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 0, false), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 1, false), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 0);
	KUNIT_EXPECT_EQ(test, post(cq, 2, true), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 1);
	KUNIT_EXPECT_EQ(test, post(cq, 3, true), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 1);

	/* An arm for any completion covers an earlier solicited-only one. */
	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_SOLICITED), 0);
	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 4, false), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 2);
	KUNIT_EXPECT_EQ(test, post(cq, 5, true), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 2);
}

static void report_missed_events(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 16);
	struct sroce_cq *cq = fx->cq;
	enum ib_cq_notify_flags next = IB_CQ_NEXT_COMP |
				       IB_CQ_REPORT_MISSED_EVENTS;
	struct ib_wc wc[2];

	KUNIT_EXPECT_EQ(test, arm(cq, next), 0);	/* empty: nothing missed */
	KUNIT_EXPECT_EQ(test, post(cq, 0, false), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 1);
	/* Re-armed before polling: the entry is there, poll again. */
	KUNIT_EXPECT_EQ(test, arm(cq, next), 1);
	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_SOLICITED |
				  IB_CQ_REPORT_MISSED_EVENTS), 1);
	/* Without the flag the answer is 0 whatever is pending. */
	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, poll(cq, wc, 2), 1);
	KUNIT_EXPECT_EQ(test, arm(cq, next), 0);

	/* Exactly one of SOLICITED and NEXT_COMP, as ib_verbs.h requires. */
	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_REPORT_MISSED_EVENTS), -EINVAL);
	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_SOLICITED_MASK), -EINVAL);
}

/*
 * A process arms by ORing into the shared header; the kernel clears the
 * arm when it fires and ignores bits it does not know.
 */
static void arm_from_shared_header(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 16);
	struct sroce_cq *cq = fx->cq;
	struct sroce_queue_hdr *hdr = cq->queue.hdr;

	WRITE_ONCE(hdr->flags, 0xfffffff0);
	KUNIT_EXPECT_EQ(test, post(cq, 0, true), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 0);

	WRITE_ONCE(hdr->flags, SROCE_QUEUE_F_ARM_SOLICITED);
	KUNIT_EXPECT_EQ(test, post(cq, 1, false), 0);
	KUNIT_EXPECT_EQ(test, hdr->flags, SROCE_QUEUE_F_ARM_SOLICITED);
	KUNIT_EXPECT_EQ(test, post(cq, 2, true), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 1);
	KUNIT_EXPECT_EQ(test, hdr->flags, 0U);

	WRITE_ONCE(hdr->flags, SROCE_QUEUE_F_ARM_NEXT);
	KUNIT_EXPECT_EQ(test, post(cq, 3, false), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 2);
	KUNIT_EXPECT_EQ(test, hdr->flags, 0U);
	KUNIT_EXPECT_EQ(test, fx->err_events, 0);
}

/*
 * A consumer index no real consumer can have written: the ring is broken,
 * the completion is refused and reported, and nothing is indexed with it.
 */
static void consumer_index_garbage(struct kunit *test)
{
	static const u32 bad[] = { 1000, U32_MAX / 2, 5 /* one past prod */ };
	struct ib_wc wc[4];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cq_fixture *fx = cq_fixture(test, 4);
		struct sroce_cq *cq = fx->cq;
		struct sroce_cqe *slot;

		start_at(cq, 0);
		KUNIT_ASSERT_EQ(test, post(cq, 0, false), 0);
		KUNIT_ASSERT_EQ(test, post(cq, 1, false), 0);
		KUNIT_ASSERT_EQ(test, post(cq, 2, false), 0);
		KUNIT_ASSERT_EQ(test, post(cq, 3, false), 0);
		KUNIT_ASSERT_EQ(test, poll(cq, wc, 1), 1);
		WRITE_ONCE(cq->queue.hdr->cons, bad[i]);

		KUNIT_EXPECT_EQ(test, post(cq, 9, false), -EOVERFLOW);
		KUNIT_EXPECT_EQ(test, fx->err_events, 1);
		KUNIT_EXPECT_EQ(test, fx->last.event, IB_EVENT_CQ_ERR);
		KUNIT_EXPECT_EQ(test, poll(cq, wc, 4), 0);
		KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);
		KUNIT_EXPECT_EQ(test, resize(cq, 64), -EINVAL);
		/* Slot 0 was consumed, but not overwritten. */
		slot = sroce_queue_at(&cq->queue, 0);
		KUNIT_EXPECT_EQ(test, slot->wr_id, 0ULL);
		KUNIT_EXPECT_EQ(test, cq->prod, 4U);
		sroce_cq_fini(cq);
		test->priv = NULL;
	}
}

static void resize_moves_pending_in_order(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 4);
	struct sroce_cq *cq = fx->cq;
	struct ib_wc wc;
	u64 i;

	start_at(cq, U32_MAX - 1);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, post(cq, i, false), 0);
	KUNIT_ASSERT_EQ(test, poll(cq, &wc, 1), 1);

	/* Three pending, across the wrap, into a larger ring. */
	KUNIT_ASSERT_EQ(test, resize(cq, 16), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 16);
	KUNIT_EXPECT_EQ(test, cq->queue.slots, 16U);
	for (i = 4; i < 17; i++)
		KUNIT_ASSERT_EQ(test, post(cq, i, false), 0);

	/* 16 pending: asking for fewer is refused, and nothing is lost. */
	KUNIT_EXPECT_EQ(test, resize(cq, 15), -EINVAL);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 16);
	expect_in_order(test, cq, 10, 1);
	/* Six left: they fit in 6, and come out in order. */
	KUNIT_ASSERT_EQ(test, resize(cq, 6), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 8);
	KUNIT_EXPECT_EQ(test, post(cq, 17, false), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 18, false), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 19, false), -EOVERFLOW);
	expect_in_order(test, cq, 8, 11);
	KUNIT_EXPECT_EQ(test, poll(cq, &wc, 1), 0);
	KUNIT_EXPECT_EQ(test, fx->err_events, 1);

	KUNIT_EXPECT_EQ(test, resize(cq, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, resize(cq, -1), -EINVAL);
	KUNIT_EXPECT_EQ(test, resize(cq, SROCE_MAX_CQE + 1), -EINVAL);
}

/* An arm not yet answered moves to the new ring with the entries. */
static void resize_keeps_the_arm(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 2);
	struct sroce_cq *cq = fx->cq;
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, arm(cq, IB_CQ_SOLICITED), 0);
	KUNIT_ASSERT_EQ(test, resize(cq, 100), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 128);
	KUNIT_EXPECT_EQ(test, post(cq, 0, false), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 0);
	KUNIT_EXPECT_EQ(test, post(cq, 1, true), 0);
	KUNIT_EXPECT_EQ(test, fx->comp_events, 1);
	expect_in_order(test, cq, 2, 0);
	KUNIT_EXPECT_EQ(test, poll(cq, &wc, 1), 0);
}

static void note_event_context(struct ib_event *ev, void *ctx)
{
	struct cq_fixture *fx = ctx;

	/* Anything but a process context that may sleep counts against it. */
	fx->err_events += in_softirq() || in_hardirq() || irqs_disabled() ?
			  100 : 1;
	fx->last = *ev;
}

/*
 * A kernel consumer's CQ_ERR handler may sleep or post to the QP whose
 * lock the data path holds when the CQ overflows: it runs from a worker,
 * never inside that lock.
 */
static void kernel_error_event_outside_locks(struct kunit *test)
{
	struct cq_fixture *fx = cq_fixture(test, 1);
	struct sroce_cq *cq = fx->cq;
	spinlock_t qp_lock;	/* stands in for the QP's */
	u32 i;

	spin_lock_init(&qp_lock);
	cq->kernel = true;
	cq->ibcq.event_handler = note_event_context;
	spin_lock_bh(&qp_lock);
	for (i = 0; i <= cq->capacity; i++)
		post(cq, i, false);
	spin_unlock_bh(&qp_lock);
	flush_work(&cq->error_work);
	KUNIT_EXPECT_EQ(test, fx->err_events, 1);
	KUNIT_EXPECT_EQ(test, fx->last.event, IB_EVENT_CQ_ERR);
}

static struct kunit_case cq_cases[] = {
	KUNIT_CASE(kernel_error_event_outside_locks),
	KUNIT_CASE(capacity_reported),
	KUNIT_CASE(fields_reach_the_wc),
	KUNIT_CASE(entries_of_gone_qps_dropped),
	KUNIT_CASE(clean_spares_new_qp_with_same_number),
	KUNIT_CASE(clean_keeps_order_across_wrap),
	KUNIT_CASE(clean_leaves_user_ring_alone),
	KUNIT_CASE(order_across_wrap),
	KUNIT_CASE(overflow_refused_and_reported),
	KUNIT_CASE(largest_cq_holds_max_cqe),
	KUNIT_CASE(arm_next_fires_once),
	KUNIT_CASE(arm_solicited_waits_for_solicited),
	KUNIT_CASE(report_missed_events),
	KUNIT_CASE(arm_from_shared_header),
	KUNIT_CASE(consumer_index_garbage),
	KUNIT_CASE(resize_moves_pending_in_order),
	KUNIT_CASE(resize_keeps_the_arm),
	{}
};

static struct kunit_suite cq_suite = {
	.name = "sroce-cq",
	.exit = cq_test_exit,
	.test_cases = cq_cases,
};

kunit_test_suite(cq_suite);
