// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the requester's round trip (rtt.c): one ACK request timed at a
 * time, the samples smoothed, and the retransmit timeout they ask for,
 * backed off by timeouts until the next sample.
 */
#include <kunit/test.h>
#include <linux/jiffies.h>

#include "qp.h"
#include "rtt.h"

#define MS	1000000ULL		/* ns */

/* A QP with nothing but the lock the requester's calls assert. */
static struct sroce_qp *new_qp(struct kunit *test)
{
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	spin_lock_init(&qp->sq_lock);
	sroce_rtt_reset(&qp->req.rtt);
	return qp;
}

/* The requester's calls, under the lock they are made with. */
static void probe(struct sroce_qp *qp, u32 psn, u64 now)
{
	spin_lock_bh(&qp->sq_lock);
	sroce_rtt_probe(&qp->req.rtt, psn, now);
	spin_unlock_bh(&qp->sq_lock);
}

static bool acked(struct sroce_qp *qp, u32 psn, u64 now)
{
	bool sampled;

	spin_lock_bh(&qp->sq_lock);
	sampled = sroce_rtt_acked(&qp->req.rtt, psn, now);
	spin_unlock_bh(&qp->sq_lock);
	return sampled;
}

/* One ACK request timed at a time, until an ACK covers it. */
static void one_probe_at_a_time(struct kunit *test)
{
	struct sroce_qp *qp = new_qp(test);
	struct sroce_rtt *rtt = &qp->req.rtt;

	probe(qp, 0xffffff, 1 * MS);
	KUNIT_EXPECT_TRUE(test, rtt->probing);
	probe(qp, 5, 2 * MS);
	KUNIT_EXPECT_EQ(test, rtt->probe_psn, 0xffffffU);
	/* An ACK of the packets before it does not end the probe. */
	KUNIT_EXPECT_FALSE(test, acked(qp, 0xffffff, 3 * MS));
	KUNIT_EXPECT_TRUE(test, rtt->probing);
	/* PSNs wrap: 0 comes after 0xffffff. */
	KUNIT_EXPECT_TRUE(test, acked(qp, 0, 4 * MS));
	KUNIT_EXPECT_FALSE(test, rtt->probing);
	KUNIT_EXPECT_EQ(test, rtt->srtt, 3 * MS);
	/* Nothing is timed now: a later ACK takes no sample. */
	KUNIT_EXPECT_FALSE(test, acked(qp, 1, 9 * MS));
	KUNIT_EXPECT_EQ(test, rtt->srtt, 3 * MS);
	probe(qp, 5, 10 * MS);
	KUNIT_EXPECT_EQ(test, rtt->probe_psn, 5U);
}

/* The first sample is the mean, half of it the deviation; then RFC 6298. */
static void samples_smoothed(struct kunit *test)
{
	struct sroce_rtt rtt = {};

	int i;

	sroce_rtt_sample(&rtt, 8 * MS);
	KUNIT_EXPECT_EQ(test, rtt.srtt, 8 * MS);
	KUNIT_EXPECT_EQ(test, rtt.rttvar, 4 * MS);
	sroce_rtt_sample(&rtt, 16 * MS);
	KUNIT_EXPECT_EQ(test, rtt.srtt, 9 * MS);
	KUNIT_EXPECT_EQ(test, rtt.rttvar, 5 * MS);
	/* A steady path: the mean goes to it, the deviation toward 0. */
	for (i = 0; i < 100; i++)
		sroce_rtt_sample(&rtt, 20 * MS);
	KUNIT_EXPECT_LT(test, 20 * MS - rtt.srtt, MS / 1000);
	KUNIT_EXPECT_LT(test, rtt.rttvar, MS / 1000);
	/* A zero sample (a clock that did not move) still counts as measured. */
	rtt = (struct sroce_rtt){};
	sroce_rtt_sample(&rtt, 0);
	KUNIT_EXPECT_NE(test, rtt.srtt, 0ULL);
}

/* The QP's timeout until measured; then the round trip, within bounds. */
static void timeout_follows_round_trip(struct kunit *test)
{
	unsigned long timeout = msecs_to_jiffies(100);
	struct sroce_rtt rtt = {};

	unsigned long rto;

	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(&rtt, timeout), timeout);
	/* 0 is "wait forever", whatever was measured. */
	sroce_rtt_sample(&rtt, 1 * MS);
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(&rtt, 0), 0UL);
	/* A path faster than the timeout: the timeout. */
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(&rtt, timeout), timeout);
	/* A path slower: its round trip and four deviations, and a jiffy. */
	rtt.srtt = 150 * MS;
	rtt.rttvar = 40 * MS;
	rto = sroce_rtt_rto(&rtt, timeout);
	KUNIT_EXPECT_EQ(test, rto, nsecs_to_jiffies(310 * MS) + 1);
	KUNIT_EXPECT_GT(test, rto, timeout);
	/* A steady one: never less than twice its round trip. */
	rtt.rttvar = 10 * MS;
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(&rtt, timeout),
			nsecs_to_jiffies(300 * MS) + 1);
	/* Never more than four times the QP's own. */
	rtt.srtt = 1000 * MS;
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(&rtt, timeout), 4 * timeout);
}

static void timed_out(struct sroce_qp *qp)
{
	spin_lock_bh(&qp->sq_lock);
	sroce_rtt_timed_out(&qp->req.rtt);
	spin_unlock_bh(&qp->sq_lock);
}

/*
 * Each timeout doubles the next, up to four times, while ACKs still come
 * between them; until a sample, or a timeout after silence.
 */
static void timeouts_back_off(struct kunit *test)
{
	unsigned long timeout = msecs_to_jiffies(10);
	struct sroce_qp *qp = new_qp(test);
	struct sroce_rtt *rtt = &qp->req.rtt;

	probe(qp, 7, 1 * MS);
	timed_out(qp);
	/* The probe's packet goes again: its ACK times nothing (Karn). */
	KUNIT_EXPECT_FALSE(test, rtt->probing);
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(rtt, timeout), 2 * timeout);
	KUNIT_EXPECT_FALSE(test, acked(qp, 8, 2 * MS));
	timed_out(qp);
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(rtt, timeout), 4 * timeout);
	KUNIT_EXPECT_FALSE(test, acked(qp, 9, 3 * MS));
	timed_out(qp);
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(rtt, timeout), 4 * timeout);
	/* A round trip measured at last: the timeout follows it again. */
	probe(qp, 9, 4 * MS);
	KUNIT_EXPECT_TRUE(test, acked(qp, 10, 5 * MS));
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(rtt, timeout), timeout);
}

/* Timeouts with nothing heard between them: the QP's own timeout. */
static void silence_does_not_back_off(struct kunit *test)
{
	unsigned long timeout = msecs_to_jiffies(10);
	struct sroce_qp *qp = new_qp(test);
	struct sroce_rtt *rtt = &qp->req.rtt;

	timed_out(qp);
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(rtt, timeout), 2 * timeout);
	timed_out(qp);
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(rtt, timeout), timeout);
	timed_out(qp);
	KUNIT_EXPECT_EQ(test, sroce_rtt_rto(rtt, timeout), timeout);
}

static struct kunit_case rtt_cases[] = {
	KUNIT_CASE(one_probe_at_a_time),
	KUNIT_CASE(samples_smoothed),
	KUNIT_CASE(timeout_follows_round_trip),
	KUNIT_CASE(timeouts_back_off),
	KUNIT_CASE(silence_does_not_back_off),
	{}
};

static struct kunit_suite rtt_suite = {
	.name = "sroce-rtt",
	.test_cases = rtt_cases,
};

kunit_test_suite(rtt_suite);
