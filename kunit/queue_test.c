// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the shared queues' index math, across the 32-bit wrap.
 */
#include <kunit/test.h>
#include <linux/prandom.h>

#include <sroce/queue.h>

static void slots_round_up(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(0), 0U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(1), 1U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(2), 2U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(3), 4U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(1000), 1024U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(1024), 1024U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(SROCE_QUEUE_MAX_SLOTS),
			SROCE_QUEUE_MAX_SLOTS);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(SROCE_QUEUE_MAX_SLOTS + 1), 0U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(U32_MAX), 0U);
}

static void empty_and_full(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, sroce_queue_empty(5, 5));
	KUNIT_EXPECT_FALSE(test, sroce_queue_full(5, 5, 4));
	KUNIT_EXPECT_EQ(test, sroce_queue_room(5, 5, 4), 4U);
	KUNIT_EXPECT_TRUE(test, sroce_queue_full(9, 5, 4));
	KUNIT_EXPECT_EQ(test, sroce_queue_room(9, 5, 4), 0U);
	KUNIT_EXPECT_FALSE(test, sroce_queue_empty(9, 5));
	/* A one-slot ring is full after one entry. */
	KUNIT_EXPECT_TRUE(test, sroce_queue_full(1, 0, 1));
}

/* The producer has wrapped past zero, the consumer has not. */
static void across_the_wrap(struct kunit *test)
{
	u32 cons = U32_MAX - 1, prod = 2;	/* 4 entries in flight */

	KUNIT_EXPECT_EQ(test, sroce_queue_used(prod, cons), 4U);
	KUNIT_EXPECT_TRUE(test, sroce_queue_full(prod, cons, 4));
	KUNIT_EXPECT_FALSE(test, sroce_queue_full(prod, cons, 8));
	KUNIT_EXPECT_TRUE(test, sroce_queue_sane(prod, cons, 4));
	KUNIT_EXPECT_EQ(test, sroce_queue_slot(cons, 8), 6U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slot(cons + 2, 8), 0U);
	KUNIT_EXPECT_EQ(test, sroce_queue_slot(prod, 8), 2U);
}

/* Indices userspace could write that no real ring produces. */
static void insane_indices(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, sroce_queue_sane(9, 4, 4));	/* overfull */
	KUNIT_EXPECT_FALSE(test, sroce_queue_sane(3, 4, 4));	/* prod < cons */
	KUNIT_EXPECT_FALSE(test, sroce_queue_sane(0, U32_MAX / 2, 1024));
	KUNIT_EXPECT_TRUE(test, sroce_queue_sane(8, 4, 4));
}

/*
 * A producer and a consumer taking random turns over a small ring that
 * starts just short of the wrap: every entry comes out once, in order,
 * and the ring never holds more than its size.
 */
static void producer_consumer_model(struct kunit *test)
{
	enum { SLOTS = 8, STEPS = 20000 };
	u32 ring[SLOTS], prod, cons, next_in = 0, next_out = 0;
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, 4791);
	prod = U32_MAX - 3 * SLOTS;
	cons = prod;
	for (i = 0; i < STEPS; i++) {
		if (prandom_u32_state(&rnd) & 1) {
			if (sroce_queue_full(prod, cons, SLOTS))
				continue;
			ring[sroce_queue_slot(prod, SLOTS)] = next_in++;
			prod++;
		} else {
			if (sroce_queue_empty(prod, cons))
				continue;
			KUNIT_ASSERT_EQ(test,
					ring[sroce_queue_slot(cons, SLOTS)],
					next_out);
			next_out++;
			cons++;
		}
		KUNIT_ASSERT_TRUE(test, sroce_queue_sane(prod, cons, SLOTS));
		KUNIT_ASSERT_EQ(test, sroce_queue_used(prod, cons),
				next_in - next_out);
	}
	/* Both wrapped, and plenty went through. */
	KUNIT_EXPECT_LT(test, prod, (u32)STEPS);
	KUNIT_EXPECT_GT(test, next_out, (u32)(STEPS / 4));
}

static struct kunit_case queue_cases[] = {
	KUNIT_CASE(slots_round_up),
	KUNIT_CASE(empty_and_full),
	KUNIT_CASE(across_the_wrap),
	KUNIT_CASE(insane_indices),
	KUNIT_CASE(producer_consumer_model),
	{}
};

static struct kunit_suite queue_suite = {
	.name = "sroce-queue",
	.test_cases = queue_cases,
};

kunit_test_suite(queue_suite);
