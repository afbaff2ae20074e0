// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: memory region keys, their lookup across deregistration, and the
 * access check the data path applies to every SGE and remote access.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "device.h"
#include "limits.h"
#include "mr.h"
#include "mw.h"
#include "qp.h"

static void key_encode_decode(struct kunit *test)
{
	u32 key = sroce_key_make(0x123456, 0xab);

	KUNIT_EXPECT_EQ(test, key, 0x123456abU);
	KUNIT_EXPECT_EQ(test, sroce_key_index(key), 0x123456U);
	KUNIT_EXPECT_EQ(test, sroce_key_variant(key), 0xab);
	KUNIT_EXPECT_EQ(test, sroce_key_make(SROCE_KEY_INDEX_MAX, 0xff),
			U32_MAX);
	KUNIT_EXPECT_EQ(test, sroce_key_index(U32_MAX), SROCE_KEY_INDEX_MAX);
	KUNIT_EXPECT_EQ(test, sroce_key_make(1, 0), 0x100U);
	/* Enough indices for every MR the device advertises. */
	KUNIT_EXPECT_GE(test, SROCE_KEY_INDEX_MAX, (u32)SROCE_MAX_MR);
}

static int mr_test_init(struct kunit *test)
{
	struct sroce_mr_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	sroce_mr_table_init(t);
	test->priv = t;
	return 0;
}

static struct sroce_mr *add_mr(struct kunit *test)
{
	struct sroce_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mr);
	KUNIT_ASSERT_EQ(test, sroce_mr_table_add(test->priv, mr), 0);
	return mr;
}

static void del_mr(struct kunit *test, struct sroce_mr *mr)
{
	sroce_mr_table_del(test->priv, mr);
	kfree_rcu(mr, rcu);
}

static void keys_unique_and_findable(struct kunit *test)
{
	struct sroce_mr *a = add_mr(test), *b = add_mr(test), *found;

	KUNIT_EXPECT_NE(test, a->key, b->key);
	KUNIT_EXPECT_NE(test, sroce_key_index(a->key), 0U);
	KUNIT_EXPECT_NE(test, sroce_key_index(a->key),
			sroce_key_index(b->key));
	KUNIT_EXPECT_EQ(test, a->ibmr.lkey, a->key);
	KUNIT_EXPECT_EQ(test, a->ibmr.rkey, a->key);

	found = sroce_mr_lookup(test->priv, b->key);
	KUNIT_EXPECT_PTR_EQ(test, found, b);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), 2U);
	sroce_mr_put(found);

	KUNIT_EXPECT_NULL(test, sroce_mr_lookup(test->priv, 0));
	KUNIT_EXPECT_NULL(test, sroce_mr_lookup(test->priv, U32_MAX));
	del_mr(test, a);
	del_mr(test, b);
}

/* Right index, wrong variant: a key from before the slot was reused. */
static void stale_key_fails(struct kunit *test)
{
	struct sroce_mr *a = add_mr(test), *b;
	u32 old = a->key;

	del_mr(test, a);
	KUNIT_EXPECT_NULL(test, sroce_mr_lookup(test->priv, old));

	b = add_mr(test);
	KUNIT_EXPECT_NE(test, b->key, old);
	KUNIT_EXPECT_NE(test, sroce_key_index(b->key), sroce_key_index(old));
	KUNIT_EXPECT_NULL(test, sroce_mr_lookup(test->priv, old));
	KUNIT_EXPECT_NULL(test, sroce_mr_lookup(test->priv, b->key ^ 1));
	KUNIT_EXPECT_NULL(test,
			  sroce_mr_lookup(test->priv,
					  sroce_key_make(sroce_key_index(b->key),
							 sroce_key_variant(old))));
	del_mr(test, b);
}

/* Indices go round the whole space before one is used again. */
static void index_reuse_is_cyclic(struct kunit *test)
{
	struct sroce_mr_table *t = test->priv;
	struct sroce_mr *a, *b;
	u32 first;

	a = add_mr(test);
	first = sroce_key_index(a->key);
	del_mr(test, a);

	t->next = SROCE_KEY_INDEX_MAX;
	a = add_mr(test);
	KUNIT_EXPECT_EQ(test, sroce_key_index(a->key), SROCE_KEY_INDEX_MAX);
	b = add_mr(test);
	/* Wrapped past the top, skipping 0. */
	KUNIT_EXPECT_EQ(test, sroce_key_index(b->key), 1U);
	KUNIT_EXPECT_EQ(test, first, 1U);
	del_mr(test, a);
	del_mr(test, b);
}

static void count_bounded(struct kunit *test)
{
	struct sroce_mr_table *t = test->priv;
	struct sroce_mr **mrs, *extra;
	unsigned int i;

	mrs = kunit_kcalloc(test, SROCE_MAX_MR, sizeof(*mrs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mrs);
	for (i = 0; i < SROCE_MAX_MR; i++)
		mrs[i] = add_mr(test);

	extra = kzalloc(sizeof(*extra), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, extra);
	KUNIT_EXPECT_EQ(test, sroce_mr_table_add(t, extra), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->count), SROCE_MAX_MR);

	del_mr(test, mrs[0]);
	KUNIT_EXPECT_EQ(test, sroce_mr_table_add(t, extra), 0);
	del_mr(test, extra);
	for (i = 1; i < SROCE_MAX_MR; i++)
		del_mr(test, mrs[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->count), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&t->xa));
}

struct del_ctx {
	struct sroce_mr_table *t;
	struct sroce_mr *mr;
	struct completion returned;
};

static int del_thread(void *arg)
{
	struct del_ctx *ctx = arg;

	sroce_mr_table_del(ctx->t, ctx->mr);
	complete(&ctx->returned);
	return 0;
}

/* Deregistration returns only once a data-path user has let go. */
static void del_waits_for_users(struct kunit *test)
{
	struct del_ctx ctx = { .t = test->priv };
	struct task_struct *task;
	struct sroce_mr *held;
	u32 key;

	ctx.mr = add_mr(test);
	key = ctx.mr->key;
	init_completion(&ctx.returned);
	held = sroce_mr_lookup(ctx.t, key);
	KUNIT_ASSERT_PTR_EQ(test, held, ctx.mr);

	task = kthread_run(del_thread, &ctx, "sroce-mr-del");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	msleep(100);
	KUNIT_EXPECT_FALSE(test, completion_done(&ctx.returned));
	/* Already unfindable while it waits. */
	KUNIT_EXPECT_NULL(test, sroce_mr_lookup(ctx.t, key));

	sroce_mr_put(held);
	KUNIT_EXPECT_NE(test,
			wait_for_completion_timeout(&ctx.returned, 10 * HZ),
			0UL);
	kfree_rcu(ctx.mr, rcu);
}

/*
 * A responder still copying into a fast-registration MR on another CPU
 * when the MR is invalidated. The "other CPU" is a timer interrupt that
 * ends the copy (UML has one CPU): the invalidation must not return
 * before it, or data could land after the consumer was told the MR is
 * invalid.
 */
struct inv_ctx {
	struct hrtimer timer;
	struct sroce_mr *mr;
	bool left;
};

static enum hrtimer_restart inv_copy_done(struct hrtimer *timer)
{
	struct inv_ctx *ctx = container_of(timer, struct inv_ctx, timer);

	WRITE_ONCE(ctx->left, true);
	sroce_mr_leave(ctx->mr);
	return HRTIMER_NORESTART;
}

/* The other CPU's copy of @ctx->mr ends 50 ms from now. */
static void inv_copy_ends_later(struct inv_ctx *ctx)
{
	hrtimer_init(&ctx->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	ctx->timer.function = inv_copy_done;
	hrtimer_start(&ctx->timer, ms_to_ktime(50), HRTIMER_MODE_REL_HARD);
}

static void invalidate_waits_for_copies(struct kunit *test)
{
	struct inv_ctx ctx = {};
	struct ib_pd pd;
	int err;

	ctx.mr = add_mr(test);
	ctx.mr->type = SROCE_MR_FAST;
	ctx.mr->pd = &pd;
	ctx.mr->iova = 0x1000;
	ctx.mr->length = 0x1000;
	ctx.mr->access = IB_ACCESS_REMOTE_WRITE;
	ctx.mr->valid = true;

	local_bh_disable();
	sroce_mr_enter(ctx.mr);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(ctx.mr, &pd, 0x1000, 8,
					     IB_ACCESS_REMOTE_WRITE), 0);
	local_bh_enable();

	inv_copy_ends_later(&ctx);
	local_bh_disable();
	err = sroce_mr_table_invalidate(test->priv, &pd, ctx.mr->key, NULL);
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(ctx.left));
	hrtimer_cancel(&ctx.timer);

	/* A copy that starts after it finds the MR invalid. */
	local_bh_disable();
	sroce_mr_enter(ctx.mr);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(ctx.mr, &pd, 0x1000, 8,
					     IB_ACCESS_REMOTE_WRITE), -EACCES);
	sroce_mr_leave(ctx.mr);
	local_bh_enable();
	/* Nothing left to wait for: a second invalidation fails at once. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx.mr->busy), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_table_invalidate(test->priv, &pd,
							ctx.mr->key, NULL),
			-EINVAL);
	del_mr(test, ctx.mr);
}

static struct ib_umem fake_umem;

static struct sroce_mr user_mr(struct ib_pd *pd, u64 iova, u64 length,
			       u32 access)
{
	return (struct sroce_mr) {
		.pd = pd, .type = SROCE_MR_USER, .valid = true,
		.umem = &fake_umem,
		.iova = iova, .length = length, .access = access,
	};
}

/* A user MR of @pd on [0x1000, 0x2000) that windows may be bound to. */
static struct sroce_mr window_parent(struct ib_pd *pd)
{
	return user_mr(pd, 0x1000, 0x1000, IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND);
}

/*
 * Makes @mw a valid type 2 window of @pd on [0x1000, 0x1100) of @parent,
 * with remote write, bound to the QP whose serial is @serial.
 */
static void bind_type2(struct sroce_mr *mw, struct sroce_mr *parent,
		       struct ib_pd *pd, u64 serial)
{
	refcount_set(&parent->ref, 1);
	init_completion(&parent->done);
	atomic_set(&parent->nr_mw, 1);
	spin_lock_init(&mw->mw_lock);
	mw->type = SROCE_MR_MW;
	mw->mw_type = IB_MW_TYPE_2;
	mw->pd = pd;
	mw->parent = parent;
	mw->iova = 0x1000;
	mw->length = 0x100;
	mw->access = IB_ACCESS_REMOTE_WRITE;
	mw->mw_qp = serial;
	mw->valid = true;
}

/*
 * A type 2 window bound to a QP that was destroyed, and a new QP that got
 * the same number: the window is the old QP's, not the number's.
 */
static void mw_type2_bound_to_qp_not_number(struct kunit *test)
{
	struct sroce_qp *old = kunit_kzalloc(test, sizeof(*old), GFP_KERNEL);
	struct sroce_qp *new = kunit_kzalloc(test, sizeof(*new), GFP_KERNEL);
	struct sroce_mr *mw = add_mr(test), *got;
	struct ib_pd pd;
	struct sroce_mr parent = window_parent(&pd);

	KUNIT_ASSERT_NOT_NULL(test, old);
	KUNIT_ASSERT_NOT_NULL(test, new);
	old->ibqp.qp_num = 0x42;
	old->ibqp.pd = &pd;
	old->serial = 7;
	new->ibqp.qp_num = 0x42;
	new->ibqp.pd = &pd;
	new->serial = 8;
	bind_type2(mw, &parent, &pd, old->serial);

	local_bh_disable();
	got = sroce_mw_get_mr(sroce_mr_lookup(test->priv, mw->key),
			      &new->ibqp, mw->key, 0x1000, 8,
			      IB_ACCESS_REMOTE_WRITE);
	local_bh_enable();
	KUNIT_EXPECT_NULL(test, got);
	KUNIT_EXPECT_EQ(test, sroce_mw_invalidate(mw, &pd, &new->ibqp),
			-EINVAL);

	local_bh_disable();
	got = sroce_mw_get_mr(sroce_mr_lookup(test->priv, mw->key),
			      &old->ibqp, mw->key, 0x1000, 8,
			      IB_ACCESS_REMOTE_WRITE);
	if (got) {
		sroce_mr_leave(got);
		sroce_mr_put(got);
	}
	local_bh_enable();
	KUNIT_EXPECT_PTR_EQ(test, got, &parent);
	KUNIT_EXPECT_EQ(test, sroce_mw_invalidate(mw, &pd, &old->ibqp), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&parent.nr_mw), 0);
	del_mr(test, mw);
}

/*
 * The same for a type 2 window: a responder still copying through it on
 * another CPU (the timer again) when a Local Invalidate of its rkey comes.
 * The copy runs on the MR the window is bound to, a user MR whose own key
 * stays valid: the invalidation must still wait for it.
 */
static void mw_invalidate_waits_for_copies(struct kunit *test)
{
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct sroce_mr *mw = add_mr(test);
	struct inv_ctx ctx = {};
	struct ib_pd pd;
	struct sroce_mr parent = window_parent(&pd);
	int err;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->ibqp.pd = &pd;
	qp->serial = 7;
	bind_type2(mw, &parent, &pd, qp->serial);

	local_bh_disable();
	ctx.mr = sroce_mw_get_mr(sroce_mr_lookup(test->priv, mw->key),
				 &qp->ibqp, mw->key, 0x1000, 8,
				 IB_ACCESS_REMOTE_WRITE);
	local_bh_enable();
	KUNIT_ASSERT_PTR_EQ(test, ctx.mr, &parent);

	inv_copy_ends_later(&ctx);
	local_bh_disable();
	err = sroce_mr_table_invalidate(test->priv, &pd, mw->key, NULL);
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(ctx.left));
	hrtimer_cancel(&ctx.timer);
	sroce_mr_put(&parent);

	/* An access that starts after it finds the window invalid. */
	local_bh_disable();
	KUNIT_EXPECT_NULL(test,
			  sroce_mw_get_mr(sroce_mr_lookup(test->priv, mw->key),
					  &qp->ibqp, mw->key, 0x1000, 8,
					  IB_ACCESS_REMOTE_WRITE));
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, atomic_read(&parent.nr_mw), 0);
	KUNIT_EXPECT_EQ(test, refcount_read(&parent.ref), 1U);
	/* Nothing left to wait for: a second invalidation fails at once. */
	local_bh_disable();
	KUNIT_EXPECT_EQ(test, sroce_mr_table_invalidate(test->priv, &pd,
							mw->key, NULL),
			-EINVAL);
	local_bh_enable();
	del_mr(test, mw);
}

/*
 * A type 1 window bound to nothing (a zero-length bind) while a responder
 * on another CPU (the timer) still copies through its old binding: the
 * bind must not complete before the copy ends.
 */
static void mw_type1_unbind_waits_for_copies(struct kunit *test)
{
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct sroce_send_wqe w = {};
	struct inv_ctx ctx = {};
	struct sroce_mr *mw;
	struct ib_pd pd;
	struct sroce_mr parent = window_parent(&pd);
	int err;

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	sroce_mr_table_init(&sdev->mrs);
	mw = kzalloc(sizeof(*mw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mw);
	KUNIT_ASSERT_EQ(test, sroce_mr_table_add(&sdev->mrs, mw), 0);
	bind_type2(mw, &parent, &pd, 0);
	mw->mw_type = IB_MW_TYPE_1;
	qp->ibqp.device = &sdev->ibdev;
	qp->ibqp.pd = &pd;
	spin_lock_init(&qp->sq_lock);

	local_bh_disable();
	ctx.mr = sroce_mw_get_mr(sroce_mr_lookup(&sdev->mrs, mw->key),
				 &qp->ibqp, mw->key, 0x1000, 8,
				 IB_ACCESS_REMOTE_WRITE);
	local_bh_enable();
	KUNIT_ASSERT_PTR_EQ(test, ctx.mr, &parent);

	w.opcode = IB_UVERBS_WR_BIND_MW;
	w.wr.bind.mw_rkey = mw->key;
	w.wr.bind.new_rkey = mw->key;
	inv_copy_ends_later(&ctx);
	spin_lock_bh(&qp->sq_lock);
	err = sroce_mw_bind(qp, &w);
	spin_unlock_bh(&qp->sq_lock);
	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(ctx.left));
	hrtimer_cancel(&ctx.timer);
	sroce_mr_put(&parent);

	KUNIT_EXPECT_FALSE(test, mw->valid);
	KUNIT_EXPECT_EQ(test, atomic_read(&parent.nr_mw), 0);
	sroce_mr_table_del(&sdev->mrs, mw);
	kfree_rcu(mw, rcu);
}

static void check_range_edges(struct kunit *test)
{
	struct ib_pd pd;
	struct sroce_mr mr = user_mr(&pd, 0x1000, 0x2000, 0);

	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 0x2000, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x2fff, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x3000, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 0x2001, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0xfff, 1, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x3000, 1, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x3001, 0, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x2000, U64_MAX, 0),
			-ERANGE);
	/* iova + length wraps to inside the MR. */
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x2000,
					     U64_MAX - 0xfff, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, U64_MAX, 2, 0),
			-ERANGE);
}

/* An MR ending at the very top of the address space. */
static void check_range_at_top(struct kunit *test)
{
	struct ib_pd pd;
	struct sroce_mr mr = user_mr(&pd, U64_MAX - 0xfff, 0x1000, 0);

	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, U64_MAX, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, U64_MAX - 0xfff,
					     0x1000, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, U64_MAX, 2, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, U64_MAX - 0xfff,
					     0x1001, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0, 1, 0), -ERANGE);
}

static void check_dma_mr(struct kunit *test)
{
	struct ib_pd pd;
	struct sroce_mr mr = {
		.pd = &pd, .type = SROCE_MR_DMA, .valid = true,
		.access = IB_ACCESS_LOCAL_WRITE,
	};

	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0, U64_MAX, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, U64_MAX, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, U64_MAX, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, U64_MAX, 2, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 1, U64_MAX, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 2, U64_MAX, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 8,
					     IB_ACCESS_REMOTE_READ), -EACCES);
}

static void check_access_bits(struct kunit *test)
{
	static const u32 rights[] = {
		IB_ACCESS_LOCAL_WRITE, IB_ACCESS_REMOTE_WRITE,
		IB_ACCESS_REMOTE_READ, IB_ACCESS_REMOTE_ATOMIC,
	};
	struct ib_pd pd, other;
	unsigned int granted, i;

	for (granted = 0; granted < 16; granted++) {
		u32 have = 0;
		struct sroce_mr mr;

		for (i = 0; i < ARRAY_SIZE(rights); i++)
			if (granted & BIT(i))
				have |= rights[i];
		mr = user_mr(&pd, 0x1000, 0x1000, have);

		/* A local read needs no right. */
		KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 8, 0),
				0);
		for (i = 0; i < ARRAY_SIZE(rights); i++)
			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_mr_check(&mr, &pd, 0x1000, 8,
							   rights[i]),
					    have & rights[i] ? 0 : -EACCES,
					    "granted %#x, need %#x", have,
					    rights[i]);
		KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 8, have),
				0);
		/* The right key in the wrong PD is refused whatever it grants. */
		KUNIT_EXPECT_EQ(test,
				sroce_mr_check(&mr, &other, 0x1000, 8, 0),
				-EACCES);
	}
}

/*
 * A fast-registration MR is refused until registered and after it is
 * invalidated, whatever it would grant; so is a user MR never made valid.
 */
static void check_fast_reg_validity(struct kunit *test)
{
	struct ib_pd pd;
	struct sroce_mr mr = user_mr(&pd, 0x1000, 0x1000,
				     IB_ACCESS_REMOTE_WRITE);

	mr.type = SROCE_MR_FAST;
	mr.valid = false;
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 8, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 8,
					     IB_ACCESS_REMOTE_WRITE), -EACCES);
	mr.valid = true;
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x1000, 8,
					     IB_ACCESS_REMOTE_WRITE), 0);
	/* Bounds still hold for it: it is no DMA MR. */
	KUNIT_EXPECT_EQ(test, sroce_mr_check(&mr, &pd, 0x2000, 8, 0), -ERANGE);
}

/*
 * An atomic's iova is checked for alignment on the wire; the memory under
 * it must be aligned too, and a user MR may put an aligned iova anywhere.
 */
static void check_memory_alignment(struct kunit *test)
{
	struct ib_pd pd;
	struct sroce_mr mr = user_mr(&pd, 0x10000, 0x2000,
				     IB_ACCESS_REMOTE_ATOMIC);

	mr.page_off = 0;
	KUNIT_EXPECT_TRUE(test, sroce_mr_aligned(&mr, 0x10000, 8));
	KUNIT_EXPECT_TRUE(test, sroce_mr_aligned(&mr, 0x10ff8, 8));
	KUNIT_EXPECT_FALSE(test, sroce_mr_aligned(&mr, 0x10004, 8));
	/* The iova aligned, the memory not: refused. */
	mr.page_off = 4;
	KUNIT_EXPECT_FALSE(test, sroce_mr_aligned(&mr, 0x10000, 8));
	KUNIT_EXPECT_FALSE(test, sroce_mr_aligned(&mr, 0x10ff8, 8));
	KUNIT_EXPECT_TRUE(test, sroce_mr_aligned(&mr, 0x10004, 8));
	/* A DMA MR's iova is the kernel address itself. */
	mr.type = SROCE_MR_DMA;
	KUNIT_EXPECT_TRUE(test, sroce_mr_aligned(&mr, 0x10000, 8));
	KUNIT_EXPECT_FALSE(test, sroce_mr_aligned(&mr, 0x10004, 8));
}

#define COPY_PAGES	3
#define COPY_PAGE_OFF	100

/* The byte at MR offset @i: a pattern no page-sized shift repeats. */
static u8 copy_byte(u32 i)
{
	return i * 7 + i / 251;
}

/* A user MR over COPY_PAGES pages starting COPY_PAGE_OFF into the first. */
static struct sroce_mr copy_mr(struct kunit *test, struct ib_pd *pd,
			       struct page **pages)
{
	struct sroce_mr mr = user_mr(pd, 0x10000,
				     COPY_PAGES * PAGE_SIZE - COPY_PAGE_OFF, 0);
	unsigned int i;

	for (i = 0; i < COPY_PAGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
	}
	mr.pages = pages;
	mr.npages = COPY_PAGES;
	mr.page_off = COPY_PAGE_OFF;
	return mr;
}

static void free_copy_mr(struct page **pages)
{
	unsigned int i;

	for (i = 0; i < COPY_PAGES; i++)
		if (pages[i])
			__free_page(pages[i]);
}

/*
 * The three copies walk a user MR's pages alike: a range that starts near
 * a page's end and crosses two page boundaries lands at the right bytes of
 * the right pages, in both directions, and from a packet.
 */
static void copy_across_pages(struct kunit *test)
{
	struct page *pages[COPY_PAGES] = {};
	u32 start = PAGE_SIZE - COPY_PAGE_OFF - 10, len = PAGE_SIZE + 20;
	struct ib_pd pd;
	struct sroce_mr mr = copy_mr(test, &pd, pages);
	struct sk_buff *skb;
	u8 *buf, *back;
	u32 i;

	buf = kunit_kmalloc(test, len, GFP_KERNEL);
	back = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, back);
	for (i = 0; i < len; i++)
		buf[i] = copy_byte(i);

	sroce_mr_copy_to(&mr, mr.iova + start, buf, len);
	for (i = 0; i < len; i++) {
		u32 pos = COPY_PAGE_OFF + start + i;
		u8 *mem = page_address(pages[pos / PAGE_SIZE]);

		KUNIT_EXPECT_EQ_MSG(test, mem[pos % PAGE_SIZE], buf[i],
				    "byte %u", i);
	}
	/* Nothing outside the range was touched. */
	KUNIT_EXPECT_EQ(test, ((u8 *)page_address(pages[0]))[COPY_PAGE_OFF +
			start - 1], 0);
	KUNIT_EXPECT_EQ(test, ((u8 *)page_address(pages[2]))[(COPY_PAGE_OFF +
			start + len) % PAGE_SIZE], 0);

	sroce_mr_copy_from(&mr, mr.iova + start, back, len);
	KUNIT_EXPECT_EQ(test, memcmp(back, buf, len), 0);

	/* From a packet, at an offset in it; a short packet is -EFAULT. */
	skb = alloc_skb(len + 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_zero(skb, 8);
	for (i = 0; i < len; i++)
		skb_put_u8(skb, ~copy_byte(i));
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_from_skb(&mr, mr.iova + start,
						     skb, 8, len), 0);
	sroce_mr_copy_from(&mr, mr.iova + start, back, len);
	for (i = 0; i < len; i++)
		KUNIT_EXPECT_EQ_MSG(test, back[i], (u8)~copy_byte(i),
				    "byte %u", i);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_from_skb(&mr, mr.iova + start,
						     skb, 9, len), -EFAULT);
	kfree_skb(skb);
	free_copy_mr(pages);
}

/* A DMA MR's iova is the kernel address: one piece, no page walk. */
static void copy_dma_mr(struct kunit *test)
{
	struct ib_pd pd;
	struct sroce_mr mr = user_mr(&pd, 0, U64_MAX, 0);
	u8 src[64], dst[64] = {};
	unsigned int i;

	mr.type = SROCE_MR_DMA;
	for (i = 0; i < sizeof(src); i++)
		src[i] = copy_byte(i);
	sroce_mr_copy_to(&mr, (uintptr_t)dst, src, sizeof(src));
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, sizeof(src)), 0);
	memset(src, 0, sizeof(src));
	sroce_mr_copy_from(&mr, (uintptr_t)dst, src, sizeof(src));
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, sizeof(src)), 0);
}

static void registration_flags(struct kunit *test)
{
	static const int ok[] = {
		0,
		IB_ACCESS_LOCAL_WRITE,
		IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC,
		IB_ACCESS_REMOTE_READ | IB_ACCESS_RELAXED_ORDERING,
		IB_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_OPTIONAL_LAST,
		/* Memory windows may be bound to it. */
		IB_ACCESS_MW_BIND,
		IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND,
		/* FLUSH for global visibility may aim at it. */
		IB_ACCESS_REMOTE_WRITE | SROCE_ACCESS_FLUSH_GLOBAL,
	};
	static const int refused[] = {
		IB_ZERO_BASED, IB_ACCESS_ON_DEMAND,
		IB_ACCESS_HUGETLB, BIT(9), BIT(19), BIT(30),
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ok); i++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_mr_check_access_flags(ok[i]), 0,
				    "flags %#x", ok[i]);
	for (i = 0; i < ARRAY_SIZE(refused); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_mr_check_access_flags(refused[i]),
				    -EOPNOTSUPP, "flags %#x", refused[i]);
}

/*
 * Re-registration without a new translation: the successor takes the key
 * in one store. Users that found the old MR keep it; lookups find the new
 * one; deleting the old leaves the slot, the key and the count to the new.
 */
static void replace_keeps_key(struct kunit *test)
{
	struct sroce_mr_table *t = test->priv;
	struct sroce_mr *old = add_mr(test), *mr, *held, *found;
	u32 key = old->key;

	held = sroce_mr_lookup(t, key);
	KUNIT_ASSERT_PTR_EQ(test, held, old);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	KUNIT_ASSERT_EQ(test, sroce_mr_table_replace(t, old, mr), 0);
	KUNIT_EXPECT_EQ(test, mr->key, key);
	KUNIT_EXPECT_EQ(test, mr->ibmr.lkey, key);
	KUNIT_EXPECT_EQ(test, mr->ibmr.rkey, key);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->count), 2);

	found = sroce_mr_lookup(t, key);
	KUNIT_EXPECT_PTR_EQ(test, found, mr);
	if (found)
		sroce_mr_put(found);
	/* The old one is still whole for its user. */
	KUNIT_EXPECT_EQ(test, held->key, key);
	sroce_mr_put(held);

	del_mr(test, old);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->count), 1);
	found = sroce_mr_lookup(t, key);
	KUNIT_EXPECT_PTR_EQ(test, found, mr);
	if (found)
		sroce_mr_put(found);

	del_mr(test, mr);
	KUNIT_EXPECT_NULL(test, sroce_mr_lookup(t, key));
	KUNIT_EXPECT_EQ(test, atomic_read(&t->count), 0);
}

/* What sroce_mr_check_rereg() lets through, and with which errno not. */
static void rereg_arguments(struct kunit *test)
{
	const int lw = IB_ACCESS_LOCAL_WRITE, rw = IB_ACCESS_REMOTE_WRITE;
	const int trans = IB_MR_REREG_TRANS, acc = IB_MR_REREG_ACCESS;
	const u64 max = SROCE_MAX_MR_SIZE;

	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(0, 0, 0, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(BIT(3), 0, 0, 0, 0),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test,
			sroce_mr_check_rereg(IB_MR_REREG_PD, 0, 0, 0, 0), 0);
	/* Arguments a flag does not select are not looked at. */
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(IB_MR_REREG_PD, 1, 0,
						   U64_MAX, BIT(30)), 0);

	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(acc, 0, 0, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(acc, 0, 0, 0, lw | rw), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(acc, 0, 0, 0, rw), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(acc, 0, 0, 0,
						   IB_ACCESS_REMOTE_ATOMIC),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(acc, 0, 0, 0,
						   IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(acc, 0, 0, 0,
						   lw | IB_ZERO_BASED),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(acc, 0, 0, 0,
						   IB_ACCESS_ON_DEMAND),
			-EOPNOTSUPP);

	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans, 0x1000, 0x1000,
						   0x7000, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans, 0x1010, 8, 0x5010,
						   0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans, 0x1000, 0, 0x1000,
						   0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans, 0x1010, 8, 0x1020,
						   0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans, 0, max, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans, 0, max + 1, 0, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans, U64_MAX & PAGE_MASK,
						   PAGE_SIZE, 0, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans, 0, PAGE_SIZE,
						   U64_MAX & PAGE_MASK, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check_rereg(trans | acc, 0x1000,
						   0x1000, 0x1000, rw),
			-EINVAL);

	/* Pages pinned for reading are pinned again before any write. */
	KUNIT_EXPECT_TRUE(test, sroce_mr_keeps_pages(true, lw | rw));
	KUNIT_EXPECT_TRUE(test, sroce_mr_keeps_pages(false, 0));
	KUNIT_EXPECT_TRUE(test,
			  sroce_mr_keeps_pages(false, IB_ACCESS_REMOTE_READ));
	KUNIT_EXPECT_FALSE(test, sroce_mr_keeps_pages(false, lw));
	KUNIT_EXPECT_FALSE(test,
			   sroce_mr_keeps_pages(false, IB_ACCESS_MW_BIND));
}

static struct kunit_case mr_cases[] = {
	KUNIT_CASE(key_encode_decode),
	KUNIT_CASE(keys_unique_and_findable),
	KUNIT_CASE(stale_key_fails),
	KUNIT_CASE(index_reuse_is_cyclic),
	KUNIT_CASE(count_bounded),
	KUNIT_CASE(del_waits_for_users),
	KUNIT_CASE(replace_keeps_key),
	KUNIT_CASE(rereg_arguments),
	KUNIT_CASE(invalidate_waits_for_copies),
	KUNIT_CASE(mw_type2_bound_to_qp_not_number),
	KUNIT_CASE(mw_invalidate_waits_for_copies),
	KUNIT_CASE(mw_type1_unbind_waits_for_copies),
	KUNIT_CASE(check_range_edges),
	KUNIT_CASE(check_range_at_top),
	KUNIT_CASE(check_dma_mr),
	KUNIT_CASE(check_access_bits),
	KUNIT_CASE(check_fast_reg_validity),
	KUNIT_CASE(check_memory_alignment),
	KUNIT_CASE(registration_flags),
	KUNIT_CASE(copy_across_pages),
	KUNIT_CASE(copy_dma_mr),
	{}
};

static struct kunit_suite mr_suite = {
	.name = "sroce-mr",
	.init = mr_test_init,
	.test_cases = mr_cases,
};

kunit_test_suite(mr_suite);
