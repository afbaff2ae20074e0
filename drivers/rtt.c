// SPDX-License-Identifier: GPL-2.0
/*
 * The requester's round trip and the retransmit timeout it asks for.
 */

#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/minmax.h>

#include "pkt.h"
#include "qp.h"
#include "rtt.h"

/*
 * How far past the QP's own timeout the measured round trip may push the
 * retransmit timeout: a peer or a ULP that chose the timeout still sees
 * a lost packet sent again within a small factor of it.
 */
#define SROCE_RTO_MAX_FACTOR	4

/* The rule the Context lines below state. */
static void sroce_rtt_assert_locked(struct sroce_rtt *rtt)
{
	lockdep_assert_held(&container_of(rtt, struct sroce_qp,
					  req.rtt)->sq_lock);
}

/* A QP back in RESET has measured nothing toward its next peer. */
void sroce_rtt_reset(struct sroce_rtt *rtt)
{
	rtt->srtt = 0;
	rtt->rttvar = 0;
	rtt->probing = false;
	rtt->backoff = 0;
	rtt->heard = true;
}

/**
 * sroce_rtt_probe() - a request left: time it, unless one is timed
 * @rtt: an RC requester's round trip
 * @psn: the PSN of an ACK request or a read, a first transmission
 * @now: ktime_get_ns()
 *
 * Context: sq_lock held.
 */
void sroce_rtt_probe(struct sroce_rtt *rtt, u32 psn, u64 now)
{
	sroce_rtt_assert_locked(rtt);
	if (rtt->probing)
		return;
	rtt->probe_psn = psn;
	rtt->probe_ns = now;
	rtt->probing = true;
}

/**
 * sroce_rtt_sample() - take one measured round trip into the estimate
 * @rtt: the estimate
 * @ns: the round trip measured
 *
 * RFC 6298's gains: an eighth of each sample into the mean, a quarter of
 * its distance from the mean into the deviation.
 */
void sroce_rtt_sample(struct sroce_rtt *rtt, u64 ns)
{
	u64 dev;

	rtt->backoff = 0;
	if (!rtt->srtt) {
		rtt->srtt = max(ns, 1ULL);
		rtt->rttvar = ns / 2;
		return;
	}
	dev = ns > rtt->srtt ? ns - rtt->srtt : rtt->srtt - ns;
	rtt->rttvar = rtt->rttvar - rtt->rttvar / 4 + dev / 4;
	rtt->srtt = max(rtt->srtt - rtt->srtt / 8 + ns / 8, 1ULL);
}

/**
 * sroce_rtt_acked() - PSNs before @acked are acknowledged
 * @rtt: an RC requester's round trip
 * @acked: the oldest PSN not acknowledged
 * @now: ktime_get_ns()
 *
 * Return: true when this took a new sample.
 *
 * Context: sq_lock held.
 */
bool sroce_rtt_acked(struct sroce_rtt *rtt, u32 acked, u64 now)
{
	sroce_rtt_assert_locked(rtt);
	rtt->heard = true;
	if (!sroce_rtt_answers(rtt, acked))
		return false;
	rtt->probing = false;
	sroce_rtt_sample(rtt, now > rtt->probe_ns ? now - rtt->probe_ns : 0);
	return true;
}

/**
 * sroce_rtt_timed_out() - the retransmit timer fired
 * @rtt: an RC requester's round trip
 *
 * What it sends again is not timed (Karn), so on a path slower than the
 * timeout no sample would ever come: every probe would be cancelled by
 * the timeout before its ACK (RFC 6298, 5.5). So a timeout doubles the
 * next, until a sample comes; but only while the peer is heard from: a
 * timeout with no progress since the last one is a peer gone or a path
 * lost, whose error the ULP must see after retry_cnt timeouts of about
 * the QP's timeout, not of four times it.
 *
 * Context: sq_lock held.
 */
void sroce_rtt_timed_out(struct sroce_rtt *rtt)
{
	sroce_rtt_assert_locked(rtt);
	rtt->probing = false;
	if (!rtt->heard)
		rtt->backoff = 0;
	else if (rtt->backoff < ilog2(SROCE_RTO_MAX_FACTOR))
		rtt->backoff++;
	rtt->heard = false;
}

/**
 * sroce_rtt_rto() - the retransmit timeout, in jiffies
 * @rtt: the measured round trip
 * @timeout: the QP's own timeout in jiffies, 0 for none
 *
 * The timer waits for silence: no acknowledgment for this long. The QP's
 * timeout is what a path is expected to need; a path that measurably
 * needs longer (a slow or loaded host, a long queue before a bottleneck)
 * would otherwise have its timer fire for packets that are only late, and
 * each such timeout sends the window again, which the responder must
 * drop as duplicates before it acknowledges anything new: on a path slow
 * enough, the retries run out with nothing lost. So the timeout is the
 * round trip plus four deviations (RFC 6298), but at least twice the
 * round trip, doubled for timeouts since the last sample, never less
 * than the QP's and never more than SROCE_RTO_MAX_FACTOR times it. The
 * floor of twice the round trip is TCP's minimum RTO in another form:
 * on a steady path the deviation decays toward nothing, and a loaded
 * host then stretches one answer in a dozen past the mean plus its
 * small deviation (measured: 7 timeouts in 100 reads of a 100 ms path
 * without it, 1 with it).
 *
 * Return: 0 when @timeout is 0 (wait forever, 9.7.6.1.3).
 */
unsigned long sroce_rtt_rto(const struct sroce_rtt *rtt,
			    unsigned long timeout)
{
	unsigned long rto;

	if (!timeout)
		return 0;
	rto = timeout;
	/* One jiffy more: a timer fires up to a jiffy early. */
	if (rtt->srtt)
		rto = max(rto, nsecs_to_jiffies(rtt->srtt +
						max(4 * rtt->rttvar,
						    rtt->srtt)) + 1);
	rto <<= rtt->backoff;
	return min(rto, SROCE_RTO_MAX_FACTOR * timeout);
}
