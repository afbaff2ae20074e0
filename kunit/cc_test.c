// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the rate limiter's arithmetic (cc.c) at the module parameters'
 * defaults: the first cut, alpha, recovery, its end, and pacing.
 */
#include <kunit/test.h>
#include <net/inet_ecn.h>

#include "cc.h"
#include "opcode.h"
#include "wire.h"

#define US	1000ULL			/* ns */
#define T0	(1000000 * US)		/* any time but 0 */
#define PERIOD	(300 * US)		/* cc_period_us */
#define RATE	(100 * 125000ULL)	/* 100 Mbit/s, in bytes per second */

/* A QP that has been sending RATE and gets its first CNP at T0. */
static void limited(struct sroce_cc *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->est = RATE;
	sroce_cc_cut(cc, T0, 0);
}

static void first_cnp_halves_the_rate(struct kunit *test)
{
	struct sroce_cc cc;

	limited(&cc);
	KUNIT_EXPECT_EQ(test, cc.rate, RATE / 2);
	KUNIT_EXPECT_EQ(test, cc.target, RATE);
	KUNIT_EXPECT_EQ(test, cc.alpha, (u32)SROCE_CC_ONE);
	KUNIT_EXPECT_EQ(test, cc.stage, 0U);
}

static void cuts_at_most_once_per_interval(struct kunit *test)
{
	struct sroce_cc cc;

	limited(&cc);
	cc.stage = 3;
	sroce_cc_cut(&cc, T0 + 10 * US, 0);
	KUNIT_EXPECT_EQ(test, cc.rate, RATE / 2);
	/* Not a cut, but no time to go faster: recovery starts over. */
	KUNIT_EXPECT_EQ(test, cc.stage, 0U);
	KUNIT_EXPECT_EQ(test, cc.inc_ns, T0 + 10 * US);
	/* 50 us on: cut again, by alpha / 2 with alpha still about 1. */
	sroce_cc_cut(&cc, T0 + 50 * US, 0);
	KUNIT_EXPECT_EQ(test, cc.target, RATE / 2);
	KUNIT_EXPECT_GE(test, cc.rate, RATE / 4);
	KUNIT_EXPECT_LE(test, cc.rate, RATE / 4 + RATE / 400);
}

/* A round trip longer than the CNP interval spaces the cuts. */
static void cuts_at_most_once_per_round_trip(struct kunit *test)
{
	const u64 srtt = 10000 * US;
	struct sroce_cc cc;

	u64 t;

	limited(&cc);
	/* A CNP every 200 us: none cuts within the round trip ... */
	for (t = 200 * US; t < srtt; t += 200 * US) {
		sroce_cc_cut(&cc, T0 + t, srtt);
		KUNIT_ASSERT_EQ(test, cc.rate, RATE / 2);
	}
	/* ... and none lets the rate rise; the first after it cuts. */
	sroce_cc_cut(&cc, T0 + srtt, srtt);
	KUNIT_EXPECT_LT(test, cc.rate, RATE / 2);
	KUNIT_EXPECT_EQ(test, cc.target, RATE / 2);
}

static void alpha_decays_without_cnps(struct kunit *test)
{
	struct sroce_cc cc;
	u32 half = (u32)SROCE_CC_ONE / 2;

	limited(&cc);
	/* (1 - 1/256)^177 is within 1 % of a half; its period is 50 us. */
	sroce_cc_update(&cc, T0 + 177 * 50 * US);
	KUNIT_EXPECT_GE(test, cc.alpha, half - half / 100);
	KUNIT_EXPECT_LE(test, cc.alpha, half + half / 100);
	/* A later cut takes less: alpha / 2 of the rate, about a quarter. */
	cc.cut_ns = 0;
	cc.inc_ns = T0 + 177 * 50 * US;
	cc.rate = RATE;
	sroce_cc_cut(&cc, T0 + 177 * 50 * US, 0);
	KUNIT_EXPECT_GE(test, cc.rate, RATE * 74 / 100);
	KUNIT_EXPECT_LE(test, cc.rate, RATE * 76 / 100);
}

static void recovers_halfway_then_adds(struct kunit *test)
{
	struct sroce_cc cc;
	u64 gap = RATE / 2;
	int i;

	limited(&cc);
	/* Fast recovery: each period halves the distance to the target. */
	for (i = 1; i <= 5; i++) {
		sroce_cc_update(&cc, T0 + i * PERIOD);
		gap /= 2;
		/* Halving in integers: a byte per second either way. */
		KUNIT_EXPECT_GE_MSG(test, cc.rate, RATE - gap - 1, "step %d", i);
		KUNIT_EXPECT_LE_MSG(test, cc.rate, RATE - gap + 1, "step %d", i);
		KUNIT_EXPECT_EQ(test, cc.target, RATE);
	}
	/* Then additive increase: the target moves by 5 Mbit/s a step. */
	sroce_cc_update(&cc, T0 + 6 * PERIOD);
	KUNIT_EXPECT_EQ(test, cc.target, RATE + 5 * 125000ULL);
	KUNIT_EXPECT_EQ(test, cc.stage, 6U);
}

static void recovery_ends_limiting(struct kunit *test)
{
	struct sroce_cc cc;
	int i;

	limited(&cc);
	for (i = 1; i <= 100 && cc.rate; i++)
		sroce_cc_update(&cc, T0 + i * PERIOD);
	/* 64 periods without a CNP, the last step taken: not limited. */
	KUNIT_EXPECT_EQ(test, cc.rate, 0ULL);
	KUNIT_EXPECT_EQ(test, i, 65);

	/* An idle QP is not limited when it comes back, whatever the gap. */
	limited(&cc);
	sroce_cc_update(&cc, T0 + 3600ULL * 1000000 * US);
	KUNIT_EXPECT_EQ(test, cc.rate, 0ULL);
}

static void paces_packets_at_the_rate(struct kunit *test)
{
	struct sroce_cc cc;
	u64 now = T0, gap;
	int i;

	limited(&cc);
	/* 1000 bytes at RATE / 2 (6.25 MB/s): 160 us apart. */
	gap = 1000 * 1000000000ULL / cc.rate;
	KUNIT_EXPECT_EQ(test, gap, 160 * US);
	/* Right after the cut, one packet, then the next waits its turn. */
	sroce_cc_pace(&cc, now, 1000);
	KUNIT_EXPECT_EQ(test, cc.next_ns, now + gap);
	/* After a pause, a burst of 16 KiB goes at once ... */
	now += 10000 * US;
	for (i = 0; i < 100 && cc.next_ns <= now; i++)
		sroce_cc_pace(&cc, now, 1000);
	KUNIT_EXPECT_GE(test, i, 16);
	KUNIT_EXPECT_LE(test, i, 17);
	/* ... and then one packet per gap. */
	now = cc.next_ns;
	sroce_cc_pace(&cc, now, 1000);
	KUNIT_EXPECT_EQ(test, cc.next_ns, now + gap);
}

static void cnp_is_not_ecn_capable(struct kunit *test)
{
	u8 send = SROCE_TRANSPORT_RC | SROCE_OP_SEND_ONLY;

	KUNIT_EXPECT_EQ(test, sroce_cc_tos(0x68 | INET_ECN_ECT_0,
					   SROCE_OPCODE_CNP), 0x68);
	KUNIT_EXPECT_EQ(test, sroce_cc_tos(0x68 | INET_ECN_CE,
					   SROCE_OPCODE_CNP), 0x68);
	/* The ecn parameter is off by default: the class stands as given. */
	KUNIT_EXPECT_EQ(test, sroce_cc_tos(0x68, send), 0x68);
	KUNIT_EXPECT_EQ(test, sroce_cc_tos(0x6a, send), 0x6a);
}

static struct kunit_case cc_cases[] = {
	KUNIT_CASE(first_cnp_halves_the_rate),
	KUNIT_CASE(cuts_at_most_once_per_interval),
	KUNIT_CASE(cuts_at_most_once_per_round_trip),
	KUNIT_CASE(alpha_decays_without_cnps),
	KUNIT_CASE(recovers_halfway_then_adds),
	KUNIT_CASE(recovery_ends_limiting),
	KUNIT_CASE(paces_packets_at_the_rate),
	KUNIT_CASE(cnp_is_not_ecn_capable),
	{}
};

static struct kunit_suite cc_suite = {
	.name = "sroce-cc",
	.test_cases = cc_cases,
};

kunit_test_suite(cc_suite);
