// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: a QP's capacities and ring shapes, modify_qp's checks at every
 * range edge, QP numbering, and consuming a ring whose producer index the
 * process may have garbled.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "limits.h"
#include "mr.h"
#include "qp.h"
#include "wire.h"
#include "wq.h"

/* ---- capacities and ring shapes ---- */

static void cap_limits(struct kunit *test)
{
	static const struct {
		u32 send_wr, recv_wr, send_sge, recv_sge, inl;
		bool srq;
		int err;
	} cases[] = {
		{ SROCE_MAX_QP_WR, SROCE_MAX_QP_WR, SROCE_MAX_SGE,
		  SROCE_MAX_SGE, SROCE_MAX_INLINE_DATA, false, 0 },
		{ SROCE_MAX_QP_WR + 1, 1, 1, 1, 0, false, -EINVAL },
		{ 1, SROCE_MAX_QP_WR + 1, 1, 1, 0, false, -EINVAL },
		{ 1, 1, SROCE_MAX_SGE + 1, 1, 0, false, -EINVAL },
		{ 1, 1, 1, SROCE_MAX_SGE + 1, 0, false, -EINVAL },
		{ 1, 1, 1, 1, SROCE_MAX_INLINE_DATA + 1, false, -EINVAL },
		{ U32_MAX, 1, 1, 1, 0, false, -EINVAL },
		/* With an SRQ the receive capacities are not ours to judge. */
		{ 1, SROCE_MAX_QP_WR + 1, 1, SROCE_MAX_SGE + 1, 0, true, 0 },
		{ SROCE_MAX_QP_WR + 1, 1, 1, 1, 0, true, -EINVAL },
	};
	struct sroce_qp_shape shape;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ib_qp_cap cap = {
			.max_send_wr = cases[i].send_wr,
			.max_recv_wr = cases[i].recv_wr,
			.max_send_sge = cases[i].send_sge,
			.max_recv_sge = cases[i].recv_sge,
			.max_inline_data = cases[i].inl,
		};
		struct ib_qp_cap orig = cap;

		KUNIT_EXPECT_EQ_MSG(test, sroce_qp_size(&cap, cases[i].srq,
							&shape),
				    cases[i].err, "case %u", i);
		if (cases[i].err)
			KUNIT_EXPECT_EQ_MSG(test, memcmp(&cap, &orig,
							 sizeof(cap)), 0,
					    "case %u changed cap", i);
	}
}

static void sq_shapes(struct kunit *test)
{
	static const struct {
		u32 wr, sge, inl;		/* asked */
		u32 slots, stride;		/* ring */
		u32 r_wr, r_sge, r_inl;		/* reported */
	} cases[] = {
		{ 0, 0, 0, 1, 64, 1, 0, 0 },
		{ 1, 1, 0, 1, 128, 1, 4, 64 },
		{ 3, 4, 0, 4, 128, 4, 4, 64 },
		{ 5, 5, 0, 8, 192, 8, 8, 128 },
		{ 100, 0, 100, 128, 192, 128, 8, 128 },
		{ 16, 0, 64, 16, 128, 16, 4, 64 },
		{ 16, 0, 65, 16, 192, 16, 8, 128 },
		{ SROCE_MAX_QP_WR, SROCE_MAX_SGE, 0, SROCE_MAX_QP_WR, 576,
		  SROCE_MAX_QP_WR, SROCE_MAX_SGE, SROCE_MAX_INLINE_DATA },
		{ 1, 0, SROCE_MAX_INLINE_DATA, 1, 576, 1, SROCE_MAX_SGE,
		  SROCE_MAX_INLINE_DATA },
	};
	struct sroce_qp_shape shape;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, sizeof(struct sroce_send_wqe), 64);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ib_qp_cap cap = {
			.max_send_wr = cases[i].wr,
			.max_send_sge = cases[i].sge,
			.max_inline_data = cases[i].inl,
			.max_recv_wr = 1,
		};

		KUNIT_ASSERT_EQ(test, sroce_qp_size(&cap, false, &shape), 0);
		KUNIT_EXPECT_EQ_MSG(test, shape.sq_slots, cases[i].slots,
				    "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, shape.sq_stride, cases[i].stride,
				    "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, cap.max_send_wr, cases[i].r_wr,
				    "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, cap.max_send_sge, cases[i].r_sge,
				    "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, cap.max_inline_data, cases[i].r_inl,
				    "case %u", i);
		/* What is reported fits the entry. */
		KUNIT_EXPECT_LE(test, 64 + cap.max_send_sge * 16,
				shape.sq_stride);
		KUNIT_EXPECT_LE(test, 64 + cap.max_inline_data,
				shape.sq_stride);
	}
}

static void rq_shapes(struct kunit *test)
{
	struct ib_qp_cap cap = { .max_recv_wr = 0, .max_recv_sge = 0 };
	struct sroce_qp_shape shape;

	KUNIT_ASSERT_EQ(test, sroce_qp_size(&cap, false, &shape), 0);
	KUNIT_EXPECT_EQ(test, shape.rq_slots, 1U);
	KUNIT_EXPECT_EQ(test, shape.rq_stride, 16U);
	KUNIT_EXPECT_EQ(test, cap.max_recv_wr, 1U);
	KUNIT_EXPECT_EQ(test, cap.max_recv_sge, 0U);

	cap = (struct ib_qp_cap){ .max_recv_wr = 1000, .max_recv_sge = 3 };
	KUNIT_ASSERT_EQ(test, sroce_qp_size(&cap, false, &shape), 0);
	KUNIT_EXPECT_EQ(test, shape.rq_slots, 1024U);
	KUNIT_EXPECT_EQ(test, shape.rq_stride, 64U);
	KUNIT_EXPECT_EQ(test, cap.max_recv_wr, 1024U);
	KUNIT_EXPECT_EQ(test, cap.max_recv_sge, 3U);

	cap = (struct ib_qp_cap){ .max_recv_wr = SROCE_MAX_QP_WR,
				  .max_recv_sge = SROCE_MAX_SGE };
	KUNIT_ASSERT_EQ(test, sroce_qp_size(&cap, false, &shape), 0);
	KUNIT_EXPECT_EQ(test, shape.rq_slots, (u32)SROCE_MAX_QP_WR);
	KUNIT_EXPECT_EQ(test, shape.rq_stride, 16U + 16 * SROCE_MAX_SGE);

	/* An SRQ's QP has no receive queue at all. */
	cap = (struct ib_qp_cap){ .max_recv_wr = 8, .max_recv_sge = 2 };
	KUNIT_ASSERT_EQ(test, sroce_qp_size(&cap, true, &shape), 0);
	KUNIT_EXPECT_EQ(test, shape.rq_slots, 0U);
	KUNIT_EXPECT_EQ(test, cap.max_recv_wr, 0U);
	KUNIT_EXPECT_EQ(test, cap.max_recv_sge, 0U);
}

/* ---- modify_qp's checks ---- */

struct attr_ctx {
	struct sroce_qp qp;
	struct ib_gid_attr sgid;
	struct ib_qp_attr attr;
};

static struct attr_ctx *attr_ctx(struct kunit *test, enum ib_qp_type type,
				 enum ib_qp_state state)
{
	struct attr_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->qp.ibqp.qp_type = type;
	c->qp.attr.qp_state = state;
	/* ::ffff:10.77.0.1 as a RoCEv2 GID. */
	c->sgid.gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP;
	ipv6_addr_set_v4mapped(htonl(0x0a4d0001),
			       (struct in6_addr *)c->sgid.gid.raw);
	c->sgid.index = 3;
	return c;
}

/* A valid RC/UC INIT to RTR: path to ::ffff:10.77.0.2. */
static int init_to_rtr(struct attr_ctx *c)
{
	struct ib_qp_attr *a = &c->attr;

	memset(a, 0, sizeof(*a));
	a->qp_state = IB_QPS_RTR;
	a->path_mtu = IB_MTU_1024;
	a->dest_qp_num = 0x12;
	a->rq_psn = 0;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a->ah_attr, 1);
	rdma_ah_set_grh(&a->ah_attr, NULL, 0, 3, 64, 0);
	ipv6_addr_set_v4mapped(htonl(0x0a4d0002),
			       (struct in6_addr *)a->ah_attr.grh.dgid.raw);
	a->ah_attr.grh.sgid_attr = &c->sgid;
	return IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
	       IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
}

static int check(struct attr_ctx *c, int mask)
{
	return sroce_qp_check_attr(&c->qp, &c->attr, mask);
}

static void reset_to_init(struct kunit *test)
{
	struct attr_ctx *c = attr_ctx(test, IB_QPT_RC, IB_QPS_RESET);
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
		   IB_QP_ACCESS_FLAGS;

	c->attr.qp_state = IB_QPS_INIT;
	c->attr.port_num = 1;
	c->attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_REMOTE_READ |
				  IB_ACCESS_REMOTE_ATOMIC;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	/* A required attribute missing, one that is not allowed. */
	KUNIT_EXPECT_EQ(test, check(c, mask & ~IB_QP_PORT), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(c, mask | IB_QP_QKEY), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(c, mask | IB_QP_CAP), -EINVAL);

	c->attr.port_num = 0;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.port_num = 2;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.port_num = 1;
	c->attr.pkey_index = 1;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.pkey_index = 0;
	/* What the core's CM grants when the device offers FLUSH (6.2 on). */
	c->attr.qp_access_flags |= SROCE_ACCESS_FLUSH_GLOBAL |
				   SROCE_ACCESS_FLUSH_PERSISTENT;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	c->attr.qp_access_flags |= IB_ACCESS_MW_BIND;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.qp_access_flags = 0;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);

	/* UD needs a Q_Key instead of access flags. */
	c->qp.ibqp.qp_type = IB_QPT_UD;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.qkey = 0x11111111;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE | IB_QP_PKEY_INDEX |
				       IB_QP_PORT | IB_QP_QKEY), 0);
}

static void rtr_ranges(struct kunit *test)
{
	struct attr_ctx *c = attr_ctx(test, IB_QPT_RC, IB_QPS_INIT);
	int mask = init_to_rtr(c);

	KUNIT_EXPECT_EQ(test, check(c, mask), 0);

	c->attr.path_mtu = IB_MTU_4096;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	c->attr.path_mtu = IB_MTU_4096 + 1;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.path_mtu = 0;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.path_mtu = IB_MTU_256;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);

	c->attr.dest_qp_num = SROCE_24BIT_MAX;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	c->attr.dest_qp_num = SROCE_24BIT_MAX + 1;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.dest_qp_num = 1;

	c->attr.rq_psn = SROCE_24BIT_MAX;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	c->attr.rq_psn = SROCE_24BIT_MAX + 1;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.rq_psn = 0;

	c->attr.max_dest_rd_atomic = SROCE_MAX_QP_RD_ATOM;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	c->attr.max_dest_rd_atomic = SROCE_MAX_QP_RD_ATOM + 1;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.max_dest_rd_atomic = 0;

	c->attr.min_rnr_timer = 31;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	c->attr.min_rnr_timer = 32;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->attr.min_rnr_timer = 0;

	/* Alternate paths are not supported, but legal here. */
	KUNIT_EXPECT_EQ(test, check(c, mask | IB_QP_ALT_PATH), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, check(c, mask & ~IB_QP_AV), -EINVAL);
}

static void rtr_paths(struct kunit *test)
{
	struct attr_ctx *c = attr_ctx(test, IB_QPT_UC, IB_QPS_INIT);
	struct rdma_ah_attr *ah = &c->attr.ah_attr;
	int mask = init_to_rtr(c) & ~(IB_QP_MAX_DEST_RD_ATOMIC |
				      IB_QP_MIN_RNR_TIMER);

	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	/* UC has no RDMA reads: a responder depth is not allowed. */
	KUNIT_EXPECT_EQ(test, check(c, mask | IB_QP_MAX_DEST_RD_ATOMIC),
			-EINVAL);

	ah->grh.flow_label = IB_GRH_FLOWLABEL_MASK;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	/* Bits above the GRH's 20 are dropped, not refused (UCX sets ~0). */
	ah->grh.flow_label = ~0U;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);
	ah->grh.flow_label = 0;

	rdma_ah_set_port_num(ah, 2);
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	rdma_ah_set_port_num(ah, 1);

	ah->ah_flags = 0;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	ah->ah_flags = IB_AH_GRH;

	ah->type = RDMA_AH_ATTR_TYPE_IB;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;

	/* An IPv4 source cannot reach an IPv6 destination. */
	ah->grh.dgid.raw[10] = 0;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	ah->grh.dgid.raw[10] = 0xff;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);

	/* RoCEv1 and IB source GIDs are not ours. */
	c->sgid.gid_type = IB_GID_TYPE_ROCE;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->sgid.gid_type = IB_GID_TYPE_IB;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	c->sgid.gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP;

	ah->grh.sgid_attr = NULL;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
}

static void rts_ranges(struct kunit *test)
{
	struct attr_ctx *c = attr_ctx(test, IB_QPT_RC, IB_QPS_RTR);
	struct ib_qp_attr *a = &c->attr;
	int mask = IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |
		   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_TIMEOUT;

	a->qp_state = IB_QPS_RTS;
	a->timeout = 31;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->max_rd_atomic = SROCE_MAX_QP_RD_ATOM;
	a->sq_psn = SROCE_24BIT_MAX;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);

	a->timeout = 32;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	a->timeout = 0;
	a->retry_cnt = 8;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	a->retry_cnt = 0;
	a->rnr_retry = 8;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	a->rnr_retry = 0;
	a->max_rd_atomic = SROCE_MAX_QP_RD_ATOM + 1;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	a->max_rd_atomic = 0;
	a->sq_psn = SROCE_24BIT_MAX + 1;
	KUNIT_EXPECT_EQ(test, check(c, mask), -EINVAL);
	a->sq_psn = 0;
	KUNIT_EXPECT_EQ(test, check(c, mask), 0);

	a->path_mig_state = IB_MIG_MIGRATED;
	KUNIT_EXPECT_EQ(test, check(c, mask | IB_QP_PATH_MIG_STATE), 0);
	a->path_mig_state = IB_MIG_ARMED;
	KUNIT_EXPECT_EQ(test, check(c, mask | IB_QP_PATH_MIG_STATE),
			-EOPNOTSUPP);
}

static void transitions(struct kunit *test)
{
	struct attr_ctx *c = attr_ctx(test, IB_QPT_RC, IB_QPS_RESET);

	c->attr.qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE), -EINVAL);
	/* The state table has no RESET to ERR. */
	c->attr.qp_state = IB_QPS_ERR;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE), -EINVAL);
	/* Beyond the table: ib_modify_qp_is_ok() would read past it. */
	c->attr.qp_state = IB_QPS_ERR + 1;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE), -EINVAL);
	c->attr.qp_state = 100;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE), -EINVAL);
	/* Nothing to change is fine; a lie about the state is not. */
	KUNIT_EXPECT_EQ(test, check(c, 0), 0);
	c->qp.attr.qp_state = IB_QPS_RTS;
	c->attr.qp_state = IB_QPS_RTS;
	c->attr.cur_qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE | IB_QP_CUR_STATE), 0);
	c->attr.cur_qp_state = IB_QPS_SQE;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE | IB_QP_CUR_STATE),
			-EINVAL);
	c->attr.qp_state = IB_QPS_SQD;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE), 0);
	c->attr.qp_state = IB_QPS_RESET;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE), 0);
	c->attr.qp_state = IB_QPS_INIT;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE), -EINVAL);
	/* UD never takes a path. */
	c->qp.ibqp.qp_type = IB_QPT_UD;
	c->qp.attr.qp_state = IB_QPS_INIT;
	c->attr.qp_state = IB_QPS_RTR;
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(test, check(c, IB_QP_STATE | IB_QP_AV), -EINVAL);
}

/* ---- QP numbers ---- */

static void qpn_numbering(struct kunit *test)
{
	struct sroce_qp *qp = (struct sroce_qp *)test; /* any non-NULL entry */
	struct xarray xa;
	u32 next = 0, a, b, c;

	xa_init_flags(&xa, XA_FLAGS_ALLOC);
	KUNIT_ASSERT_EQ(test, sroce_qpn_alloc(&xa, &next, qp, &a), 0);
	KUNIT_EXPECT_EQ(test, a, 2U);
	xa_erase(&xa, a);
	/* Freed, but not handed out again at once. */
	KUNIT_ASSERT_EQ(test, sroce_qpn_alloc(&xa, &next, qp, &b), 0);
	KUNIT_EXPECT_EQ(test, b, 3U);

	/* At the top of 24 bits the numbers wrap, past 0 and 1. */
	next = SROCE_24BIT_MAX;
	KUNIT_ASSERT_EQ(test, sroce_qpn_alloc(&xa, &next, qp, &c), 0);
	KUNIT_EXPECT_EQ(test, c, (u32)SROCE_24BIT_MAX);
	KUNIT_ASSERT_EQ(test, sroce_qpn_alloc(&xa, &next, qp, &a), 0);
	KUNIT_EXPECT_EQ(test, a, 2U);
	/* 3 is still taken. */
	KUNIT_ASSERT_EQ(test, sroce_qpn_alloc(&xa, &next, qp, &a), 0);
	KUNIT_EXPECT_EQ(test, a, 4U);
	xa_destroy(&xa);
}

/* ---- consuming a ring ---- */

static struct sroce_wq *test_wq(struct kunit *test, u32 slots, u32 cons)
{
	struct sroce_wq *wq = kunit_kzalloc(test, sizeof(*wq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, wq);
	KUNIT_ASSERT_EQ(test, sroce_wq_init(wq, slots,
					    sizeof(struct sroce_recv_wqe)), 0);
	wq->cons = cons;
	wq->q.hdr->cons = cons;
	wq->q.hdr->prod = cons;
	return wq;
}

/* Posts like a process would: an entry, then the producer index. */
static void post(struct sroce_wq *wq, u64 wr_id)
{
	u32 prod = wq->q.hdr->prod;
	struct sroce_recv_wqe *wqe = sroce_queue_at(&wq->q, prod);

	wqe->wr_id = wr_id;
	wq->q.hdr->prod = prod + 1;
}

static void take_in_order_across_wrap(struct kunit *test)
{
	struct sroce_wq *wq = test_wq(test, 4, U32_MAX - 1);
	struct sroce_recv_wqe wqe;
	u64 id;

	for (id = 100; id < 104; id++)
		post(wq, id);
	for (id = 100; id < 104; id++) {
		KUNIT_ASSERT_EQ(test, sroce_wq_take(wq, &wqe, sizeof(wqe)), 1);
		KUNIT_EXPECT_EQ(test, wqe.wr_id, id);
	}
	KUNIT_EXPECT_EQ(test, sroce_wq_take(wq, &wqe, sizeof(wqe)), 0);
	KUNIT_EXPECT_EQ(test, wq->cons, 2U);
	KUNIT_EXPECT_EQ(test, wq->q.hdr->cons, 2U);
	sroce_wq_destroy(wq);
}

static void take_garbage_prod(struct kunit *test)
{
	struct sroce_wq *wq = test_wq(test, 4, 10);
	struct sroce_recv_wqe wqe;
	static const u32 garbage[] = { 16, 9, 0, U32_MAX, 10 + 0x80000000U };
	unsigned int i;

	post(wq, 7);
	KUNIT_ASSERT_EQ(test, sroce_wq_take(wq, &wqe, sizeof(wqe)), 1);
	for (i = 0; i < ARRAY_SIZE(garbage); i++) {
		wq->q.hdr->prod = garbage[i];
		KUNIT_EXPECT_EQ_MSG(test, sroce_wq_take(wq, &wqe, sizeof(wqe)),
				    -EIO, "prod %u", garbage[i]);
		/* Nothing consumed, nothing published. */
		KUNIT_EXPECT_EQ(test, wq->cons, 11U);
		KUNIT_EXPECT_EQ(test, wq->q.hdr->cons, 11U);
	}
	/* A full ring is not garbage: exactly 4 come out. */
	wq->q.hdr->prod = 15;
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, sroce_wq_take(wq, &wqe, sizeof(wqe)), 1);
	KUNIT_EXPECT_EQ(test, sroce_wq_take(wq, &wqe, sizeof(wqe)), 0);
	sroce_wq_destroy(wq);
}

/* The process can also scribble on the consumer index it only reads. */
static void take_ignores_shared_cons(struct kunit *test)
{
	struct sroce_wq *wq = test_wq(test, 4, 0);
	struct sroce_recv_wqe wqe;

	post(wq, 1);
	post(wq, 2);
	wq->q.hdr->cons = 12345;
	KUNIT_ASSERT_EQ(test, sroce_wq_take(wq, &wqe, sizeof(wqe)), 1);
	KUNIT_EXPECT_EQ(test, wqe.wr_id, 1ULL);
	KUNIT_EXPECT_EQ(test, wq->q.hdr->cons, 1U);
	sroce_wq_destroy(wq);
}

static void drop_all_with_garbage(struct kunit *test)
{
	struct sroce_wq *wq = test_wq(test, 4, 0);
	struct sroce_recv_wqe wqe;

	post(wq, 1);
	wq->q.hdr->prod = 0xdeadbeef;
	sroce_wq_drop_all(wq);
	KUNIT_EXPECT_EQ(test, wq->cons, 0xdeadbeefU);
	KUNIT_EXPECT_EQ(test, sroce_wq_take(wq, &wqe, sizeof(wqe)), 0);
	/* The ring works from there on. */
	post(wq, 9);
	KUNIT_ASSERT_EQ(test, sroce_wq_take(wq, &wqe, sizeof(wqe)), 1);
	KUNIT_EXPECT_EQ(test, wqe.wr_id, 9ULL);
	sroce_wq_destroy(wq);
}

/* ---- a repeated read request ---- */

/* Only the rest of the read it repeats, through the same rkey. */
static void dup_read_confined(struct kunit *test)
{
	static const struct {
		u32 rkey;
		u64 va;
		u32 len;
		bool ok;
	} cases[] = {
		{ 0x105, 0x1000, 0x3000, true },	/* the same read */
		{ 0x105, 0x2000, 0x2000, true },	/* its rest */
		{ 0x105, 0x3fff, 1, true },
		{ 0x106, 0x1000, 0x3000, false },	/* another rkey */
		{ 0x205, 0x2000, 0x2000, false },
		{ 0x105, 0xfff, 0x10, false },		/* before it */
		{ 0x105, 0x2000, 0x2001, false },	/* past its end */
		{ 0x105, 0x1000, U32_MAX, false },
		{ 0x105, 0x4001, 0, false },
		{ 0x105, 0x1000 + BIT_ULL(32), 0, false },
		{ 0x105, U64_MAX, 1, false },
	};
	struct sroce_rd_res res = {
		.op = SROCE_OP_READ_REQ, .rkey = 0x105,
		.start = 0x1000, .total = 0x3000,
		/* Half sent already: the original range still rules. */
		.va = 0x2800, .len = 0x1800,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_rd_res_covers(&res,
							      cases[i].rkey,
							      cases[i].va,
							      cases[i].len),
				    cases[i].ok, "case %u", i);
}

static struct kunit_case qp_cases[] = {
	KUNIT_CASE(cap_limits),
	KUNIT_CASE(sq_shapes),
	KUNIT_CASE(rq_shapes),
	KUNIT_CASE(reset_to_init),
	KUNIT_CASE(rtr_ranges),
	KUNIT_CASE(rtr_paths),
	KUNIT_CASE(rts_ranges),
	KUNIT_CASE(transitions),
	KUNIT_CASE(qpn_numbering),
	KUNIT_CASE(take_in_order_across_wrap),
	KUNIT_CASE(take_garbage_prod),
	KUNIT_CASE(take_ignores_shared_cons),
	KUNIT_CASE(drop_all_with_garbage),
	KUNIT_CASE(dup_read_confined),
	{}
};

static struct kunit_suite qp_suite = {
	.name = "sroce-qp",
	.test_cases = qp_cases,
};

kunit_test_suite(qp_suite);
