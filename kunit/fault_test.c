// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: a QP half's page fault of an ODP MR (fault.c). One fault at a
 * time; a failed one is the answer of the next access by its key to an
 * overlapping range, and only of that one; each fault holds the MR until
 * it is over, and stopping the half gives it back. The suite's kernel has
 * no on-demand paging, so every fault fails: the state machine is what is
 * tested, the paging in guests (test_odp.py).
 */
#include <kunit/test.h>
#include <linux/workqueue.h>

#include "fault.h"
#include "mr.h"

struct fault_fixture {
	struct sroce_fault f;
	struct sroce_mr mr;
	int done;
};

static void count_done(struct sroce_fault *f)
{
	container_of(f, struct fault_fixture, f)->done++;
}

static struct fault_fixture *fault_fixture(struct kunit *test)
{
	struct fault_fixture *fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fx);
	sroce_fault_init(&fx->f, count_done);
	fx->mr.type = SROCE_MR_ODP;
	refcount_set(&fx->mr.ref, 1);
	init_completion(&fx->mr.done);
	return fx;
}

static int ask(struct fault_fixture *fx, u32 key, u64 iova, u32 len)
{
	return sroce_fault_ask(&fx->f, &fx->mr, key, iova, len);
}

/* The work runs in process context; the data path asks with BH off. */
static int ask_bh(struct fault_fixture *fx, u32 key, u64 iova, u32 len)
{
	int ret;

	local_bh_disable();
	ret = ask(fx, key, iova, len);
	local_bh_enable();
	return ret;
}

static void one_at_a_time(struct kunit *test)
{
	struct fault_fixture *fx = fault_fixture(test);

	int first, second;

	/* UML has one CPU: with BH off, the work cannot run in between. */
	local_bh_disable();
	first = ask(fx, 0x100, 0x1000, 4096);
	second = ask(fx, 0x100, 0x9000, 4096);
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, first, -EAGAIN);
	KUNIT_EXPECT_EQ(test, second, -EAGAIN);
	flush_work(&fx->f.work);
	/* The second access waited for the first's fault: one ran. */
	KUNIT_EXPECT_EQ(test, fx->done, 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&fx->mr.ref), 1U);
	KUNIT_EXPECT_EQ(test, fx->f.state, SROCE_FAULT_FAILED);
}

static void failure_answers_its_key_and_range_once(struct kunit *test)
{
	struct fault_fixture *fx = fault_fixture(test);

	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x200, 0x4000, 8192), -EAGAIN);
	flush_work(&fx->f.work);
	/* Another range of the key: a fault of its own. */
	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x200, 0x8000, 64), -EAGAIN);
	flush_work(&fx->f.work);
	KUNIT_EXPECT_EQ(test, fx->done, 2);
	/* Overlapping the one that failed, by its key: told, once. */
	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x200, 0x7ff8, 16), -EFAULT);
	KUNIT_EXPECT_EQ(test, fx->f.state, SROCE_FAULT_IDLE);
	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x200, 0x7ff8, 16), -EAGAIN);
	flush_work(&fx->f.work);
	/* Another key over the same range is not told. */
	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x300, 0x7ff8, 16), -EAGAIN);
	flush_work(&fx->f.work);
	KUNIT_EXPECT_EQ(test, fx->done, 4);
	KUNIT_EXPECT_EQ(test, refcount_read(&fx->mr.ref), 1U);
}

static void stop_gives_the_mr_back(struct kunit *test)
{
	struct fault_fixture *fx = fault_fixture(test);

	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x400, 0x1000, 4096), -EAGAIN);
	sroce_fault_stop(&fx->f);
	KUNIT_EXPECT_EQ(test, refcount_read(&fx->mr.ref), 1U);
	KUNIT_EXPECT_EQ(test, fx->f.state, SROCE_FAULT_IDLE);
	KUNIT_EXPECT_PTR_EQ(test, fx->f.mr, (struct sroce_mr *)NULL);
	KUNIT_EXPECT_LE(test, fx->done, 1);
}

/* RESET: the QP's next life is not told its last life's failure. */
static void reset_forgets_a_failure(struct kunit *test)
{
	struct fault_fixture *fx = fault_fixture(test);

	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x500, 0x1000, 4096), -EAGAIN);
	flush_work(&fx->f.work);
	KUNIT_EXPECT_EQ(test, fx->f.state, SROCE_FAULT_FAILED);
	local_bh_disable();
	sroce_fault_forget(&fx->f);
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x500, 0x1000, 4096), -EAGAIN);

	/* Reset while that fault runs: its failure is not kept either. */
	local_bh_disable();
	sroce_fault_forget(&fx->f);
	local_bh_enable();
	flush_work(&fx->f.work);
	KUNIT_EXPECT_EQ(test, fx->f.state, SROCE_FAULT_IDLE);
	KUNIT_EXPECT_EQ(test, ask_bh(fx, 0x500, 0x1000, 4096), -EAGAIN);
	flush_work(&fx->f.work);
	/* A fault asked after the reset keeps its failure. */
	KUNIT_EXPECT_EQ(test, fx->f.state, SROCE_FAULT_FAILED);
	KUNIT_EXPECT_EQ(test, fx->done, 3);
	KUNIT_EXPECT_EQ(test, refcount_read(&fx->mr.ref), 1U);
}

static struct kunit_case fault_cases[] = {
	KUNIT_CASE(one_at_a_time),
	KUNIT_CASE(failure_answers_its_key_and_range_once),
	KUNIT_CASE(stop_gives_the_mr_back),
	KUNIT_CASE(reset_forgets_a_failure),
	{}
};

static struct kunit_suite fault_suite = {
	.name = "sroce-fault",
	.test_cases = fault_cases,
};

kunit_test_suite(fault_suite);
