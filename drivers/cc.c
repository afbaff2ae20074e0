// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion control (cc.h), in two halves.
 *
 * The notification point, the responder: a request that arrives marked
 * Congestion Experienced is answered with a CNP to its requester, at most
 * one per cnp_interval_us for each QP.
 *
 * The reaction point, the requester: a QP starts unlimited. Its first CNP
 * sets its rate to what it was sending and cuts it by alpha / 2 (alpha
 * starts at 1); every later CNP raises alpha by g = 1/256 and starts
 * recovery over, and cuts again at most once per cnp_interval_us (or
 * round trip, below); alpha decays by g every cnp_interval_us without a
 * CNP (DCQCN's 55 us against its 50 us between CNPs: a QP marked without
 * pause keeps alpha near 1). While
 * no CNP comes, every cc_period_us the rate goes halfway back to the rate
 * of the last cut (five times), then the target itself rises by
 * cc_rai_mbps, then by growing multiples of cc_rhai_mbps; after
 * SROCE_CC_MAX_STEPS periods without a CNP, limiting ends (the rate is far
 * past anything the QP could send by then). DCQCN's byte
 * counter is left out: time alone paces recovery, so a QP that sends
 * little does not recover more slowly than one that sends much.
 *
 * Those are DCQCN's time constants for round trips of microseconds. A
 * soft device runs over paths of any length, and under a queue that
 * marks, the round trip is mostly that queue: the feedback to a cut comes
 * one round trip later, and a limiter that cuts again sooner cuts for
 * congestion it already answered: from a rate far too high to one far too
 * low. So an RC requester times one ACK request at a time (Karn's rule:
 * never a retransmitted one) and cuts at most once per smoothed round trip,
 * as TCP answers congestion once per window. Recovery keeps the same pace
 * for every QP (cc_period_us): QPs that share a bottleneck share its
 * round trip, but not their samples of it, and a QP that recovered more
 * slowly for a longer sample would keep less than its share.
 *
 * Nothing runs on a timer but the wake-up of a requester the limiter
 * holds back: alpha's decay and the increase steps are caught up with
 * whenever the requester or a CNP next looks. An unlimited QP pays one
 * test per packet and a window's byte count.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <net/inet_ecn.h>

#include "cc.h"
#include "counters.h"
#include "device.h"
#include "net.h"
#include "opcode.h"
#include "pkt.h"
#include "qp.h"
#include "trace.h"
#include "wire.h"

static bool ecn;
module_param(ecn, bool, 0644);
MODULE_PARM_DESC(ecn,
		 "Mark RC, UC and XRC packets ECN-capable (ECT(0)) when their traffic class leaves the ECN bits clear, so that a marking queue slows the QP down through CNPs rather than drops; for peers that answer CE with CNPs (default: off)");

static unsigned int cnp_interval_us = 50;
module_param(cnp_interval_us, uint, 0644);
MODULE_PARM_DESC(cnp_interval_us,
		 "At most one CNP sent, and one rate cut taken, per QP in this many microseconds, and alpha's period (default: 50)");

static unsigned int cc_period_us = 300;
module_param(cc_period_us, uint, 0644);
MODULE_PARM_DESC(cc_period_us,
		 "Microseconds without a CNP after which a limited QP raises its rate one step (default: 300)");

static unsigned int cc_rai_mbps = 5;
module_param(cc_rai_mbps, uint, 0644);
MODULE_PARM_DESC(cc_rai_mbps, "Additive increase, Mbit/s (default: 5)");

static unsigned int cc_rhai_mbps = 50;
module_param(cc_rhai_mbps, uint, 0644);
MODULE_PARM_DESC(cc_rhai_mbps, "Hyper increase, Mbit/s (default: 50)");

static unsigned int cc_min_mbps = 1;
module_param(cc_min_mbps, uint, 0644);
MODULE_PARM_DESC(cc_min_mbps, "No CNP cuts a QP's rate below this, Mbit/s (default: 1)");

#define SROCE_CC_MBPS		125000ULL	/* bytes per second */
#define SROCE_CC_FAST_STEPS	5		/* DCQCN's F */
#define SROCE_CC_G_SHIFT	8		/* g = 1/256 */
#define SROCE_CC_HALF_LIFE	177		/* (1 - g)^177 ~= 1/2 */
/* Periods without a CNP after which a QP is no longer limited. */
#define SROCE_CC_MAX_STEPS	64
/* What a paused QP may send at once: a few packets, not a window. */
#define SROCE_CC_BURST		(16 * 1024)
/* Per packet on the wire besides its payload: Ethernet to ICRC. */
#define SROCE_CC_WIRE_BYTES	(ETH_HLEN + 20 + 8 + SROCE_BTH_BYTES + \
				 SROCE_ICRC_BYTES)
/* The sending rate is measured over windows of about 10 ms. */
#define SROCE_CC_WINDOW		(HZ / 100 ?: 1)

static u64 sroce_cc_mbps(const unsigned int *param)
{
	return READ_ONCE(*param) * SROCE_CC_MBPS;
}

static void sroce_cc_set_rate(struct sroce_cc *cc, u64 rate)
{
	cc->rate = max3(rate, sroce_cc_mbps(&cc_min_mbps), 1ULL);
	cc->burst_ns = div64_u64((u64)SROCE_CC_BURST * NSEC_PER_SEC, cc->rate);
}

/* The CNP interval: at least 1 us. */
static u64 sroce_cc_interval(void)
{
	return (u64)max(READ_ONCE(cnp_interval_us), 1U) * NSEC_PER_USEC;
}

/* Alpha decays by g every CNP interval it did not rise. */
static void sroce_cc_decay(struct sroce_cc *cc, u64 now)
{
	u64 period = sroce_cc_interval(), n, halves;
	u32 rest;

	if (now <= cc->alpha_ns)
		return;
	n = div64_u64(now - cc->alpha_ns, period);
	cc->alpha_ns += n * period;
	halves = div_u64_rem(n, SROCE_CC_HALF_LIFE, &rest);
	cc->alpha = halves >= 32 ? 0 : cc->alpha >> halves;
	while (rest--)
		cc->alpha -= cc->alpha >> SROCE_CC_G_SHIFT;
}

/* One increase step; true when it ended limiting. */
static bool sroce_cc_step(struct sroce_cc *cc)
{
	const u32 f = SROCE_CC_FAST_STEPS;

	cc->stage++;
	if (cc->stage > 2 * f)
		cc->target += (cc->stage - 2 * f) * sroce_cc_mbps(&cc_rhai_mbps);
	else if (cc->stage > f)
		cc->target += sroce_cc_mbps(&cc_rai_mbps);
	sroce_cc_set_rate(cc, cc->rate / 2 + cc->target / 2);
	if (cc->stage < SROCE_CC_MAX_STEPS)
		return false;
	cc->rate = 0;
	return true;
}

/**
 * sroce_cc_update() - catch up with the time that passed without a CNP
 * @cc: a QP's state
 * @now: ktime_get_ns()
 *
 * Decays alpha and takes the increase steps due since they were last
 * taken; limiting may end.
 */
void sroce_cc_update(struct sroce_cc *cc, u64 now)
{
	u64 period = (u64)max(READ_ONCE(cc_period_us), 1U) * NSEC_PER_USEC;
	u64 n;

	if (!cc->rate)
		return;
	sroce_cc_decay(cc, now);
	if (now <= cc->inc_ns)
		return;
	n = div64_u64(now - cc->inc_ns, period);
	cc->inc_ns += n * period;
	if (n > SROCE_CC_MAX_STEPS) {
		cc->rate = 0;
		return;
	}
	while (n-- && !sroce_cc_step(cc))
		;
}

/* Bytes per second the QP sent lately. */
static u64 sroce_cc_estimate(const struct sroce_cc *cc)
{
	unsigned long j = jiffies - cc->win_start;

	if (cc->est)
		return cc->est;
	return div64_u64(cc->win_bytes * HZ, max(j, 1UL));
}

/**
 * sroce_cc_cut() - a CNP came: cut the rate
 * @cc: a QP's state
 * @now: ktime_get_ns()
 * @srtt: the requester's smoothed round trip, ns (rtt.h), 0 if unknown
 *
 * An unlimited QP starts limiting at the rate it was sending. Every CNP
 * raises alpha and starts recovery over; a cut within cnp_interval_us (or
 * a round trip, as the feedback of a cut takes that long to come) of the
 * last one is not taken.
 */
void sroce_cc_cut(struct sroce_cc *cc, u64 now, u64 srtt)
{
	u64 interval = max(sroce_cc_interval(), srtt);

	sroce_cc_update(cc, now);
	if (!cc->rate) {
		sroce_cc_set_rate(cc, sroce_cc_estimate(cc));
		cc->alpha = SROCE_CC_ONE;
		cc->alpha_ns = now;
		cc->next_ns = now;
	} else {
		/*
		 * Every CNP says how congested, and that it is no time to
		 * go faster; not every one cuts.
		 */
		cc->alpha += (SROCE_CC_ONE - cc->alpha) >> SROCE_CC_G_SHIFT;
		cc->stage = 0;
		cc->inc_ns = now;
		if (now - cc->cut_ns < interval)
			return;
	}
	cc->target = cc->rate;
	/* rate * (1 - alpha / 2) */
	sroce_cc_set_rate(cc, cc->rate - mul_u64_u32_shr(cc->rate, cc->alpha,
							 SROCE_CC_ONE_SHIFT + 1));
	cc->stage = 0;
	cc->cut_ns = now;
	cc->inc_ns = now;
}

/**
 * sroce_cc_pace() - a packet of @bytes left at @now: when may the next?
 * @cc: a limited QP's state
 * @now: ktime_get_ns()
 * @bytes: the packet's bytes on the wire
 */
void sroce_cc_pace(struct sroce_cc *cc, u64 now, unsigned int bytes)
{
	u64 start = cc->next_ns;

	if (now > cc->burst_ns && start < now - cc->burst_ns)
		start = now - cc->burst_ns;
	cc->next_ns = start + div64_u64((u64)bytes * NSEC_PER_SEC, cc->rate);
}

/* The rule the Context lines below state. */
static void sroce_cc_assert_locked(struct sroce_cc *cc)
{
	lockdep_assert_held(&container_of(cc, struct sroce_qp, cc)->sq_lock);
}

/**
 * sroce_cc_sent() - count a packet the requester sent
 * @cc: the QP's state
 * @bytes: its payload
 *
 * Context: sq_lock held.
 */
void sroce_cc_sent(struct sroce_cc *cc, unsigned int bytes)
{
	unsigned long j = jiffies - cc->win_start;

	sroce_cc_assert_locked(cc);
	bytes += SROCE_CC_WIRE_BYTES;
	if (j >= SROCE_CC_WINDOW) {
		cc->est = div64_u64(cc->win_bytes * HZ, j);
		cc->win_start += j;
		cc->win_bytes = 0;
	}
	cc->win_bytes += bytes;
	if (unlikely(cc->rate))
		sroce_cc_pace(cc, ktime_get_ns(), bytes);
}

/**
 * sroce_cc_may_send() - may the requester send its next packet now?
 * @qp: the QP
 *
 * When it may not, the limiter's timer runs the requester again once it
 * may.
 *
 * Context: sq_lock held.
 */
bool sroce_cc_may_send(struct sroce_qp *qp)
{
	struct sroce_cc *cc = &qp->cc;
	u64 now;

	lockdep_assert_held(&qp->sq_lock);

	if (likely(!cc->rate))
		return true;
	now = ktime_get_ns();
	sroce_cc_update(cc, now);
	if (!cc->rate || now >= cc->next_ns)
		return true;
	if (!hrtimer_is_queued(&cc->timer))
		hrtimer_start(&cc->timer, ns_to_ktime(cc->next_ns),
			      HRTIMER_MODE_ABS);
	sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_TX_PACED);
	return false;
}

static enum hrtimer_restart sroce_cc_timer(struct hrtimer *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp, cc.timer);

	queue_work(sroce_wq, &qp->send_work);
	return HRTIMER_NORESTART;
}

void sroce_cc_init(struct sroce_qp *qp)
{
	qp->cc.win_start = jiffies;
	hrtimer_init(&qp->cc.timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	qp->cc.timer.function = sroce_cc_timer;
}

/* A QP back in RESET starts unlimited again, toward whatever peer. */
void sroce_cc_reset(struct sroce_qp *qp)
{
	struct sroce_cc *cc = &qp->cc;

	cc->rate = 0;
	cc->est = 0;
	cc->win_bytes = 0;
	cc->win_start = jiffies;
	WRITE_ONCE(cc->cnp_ns, 0);
}

/* The timer fires no more; the caller cancels the work it may have queued. */
void sroce_cc_stop(struct sroce_qp *qp)
{
	hrtimer_cancel(&qp->cc.timer);
}

/**
 * sroce_cc_tos() - the IP header's TOS or traffic class for a packet
 * @tclass: the traffic class of its path
 * @opcode: its BTH opcode
 *
 * Every packet of the QP types that take CNPs is made ECN-capable when the
 * ecn parameter asks for it and the traffic class does not say otherwise:
 * requests, which CNPs pace, and answers too. A marking queue keeps
 * dropping early what is not ECN-capable, and once ECN-capable requests
 * hold it above its threshold it drops every such packet: read responses
 * and ACKs left Not-ECT would starve behind the requests. A CNP itself is
 * never ECN-capable.
 */
u8 sroce_cc_tos(u8 tclass, u8 opcode)
{
	const u32 qpts = SROCE_QPT_RC | SROCE_QPT_UC | SROCE_QPT_XRC;

	if (opcode == SROCE_OPCODE_CNP)
		return tclass & ~INET_ECN_MASK;
	if (likely(!READ_ONCE(ecn)) || tclass & INET_ECN_MASK)
		return tclass;
	if (sroce_opcode[opcode].mask & qpts)
		return tclass | INET_ECN_ECT_0;
	return tclass;
}

/* Context: rq_lock held: the path is read under it (qp.c). */
static void sroce_cc_send_cnp(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sk_buff *skb;

	lockdep_assert_held(&qp->rq_lock);
	skb = sroce_net_alloc(sdev, &qp->av, SROCE_BTH_BYTES + SROCE_CNP_BYTES,
			      GFP_ATOMIC);
	if (!skb)
		return;
	sroce_qp_own_skb(qp, skb);
	sroce_bth_init((struct sroce_bth *)skb->data, SROCE_OPCODE_CNP, false,
		       0, SROCE_DEFAULT_PKEY, qp->attr.dest_qp_num, 0, false);
	memset(skb->data + SROCE_BTH_BYTES, 0, SROCE_CNP_BYTES);
	if (!sroce_net_xmit(sdev, &qp->av, skb, qp->sport))
		sroce_count(sdev, SROCE_CNT_CNP_SENT);
}

/**
 * sroce_cc_ce() - a request arrived marked Congestion Experienced
 * @qp: the QP it was admitted to
 * @pkt: the request
 *
 * Context: softirq, no QP lock held; takes rq_lock.
 */
void sroce_cc_ce(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u64 interval = sroce_cc_interval();
	u64 now = ktime_get_ns();
	u64 last = READ_ONCE(qp->cc.cnp_ns);
	u8 state = READ_ONCE(qp->state);

	sroce_count(to_sdev(qp->ibqp.device), SROCE_CNT_RX_ECN_CE);
	/* Its path is known from RTR on; in ERR nobody listens. */
	if (state < IB_QPS_RTR || state == IB_QPS_ERR)
		return;
	if (now - last < interval || cmpxchg64(&qp->cc.cnp_ns, last, now) != last)
		return;
	spin_lock_bh(&qp->rq_lock);
	sroce_cc_send_cnp(qp);
	spin_unlock_bh(&qp->rq_lock);
}

/**
 * sroce_cc_cnp() - a CNP arrived for @qp from its peer: slow down
 * @qp: the QP it names
 * @pkt: the CNP
 *
 * Context: softirq; takes sq_lock.
 */
void sroce_cc_cnp(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);

	if (pkt->paylen != SROCE_CNP_BYTES) {
		sroce_count(sdev, SROCE_CNT_RX_DROPPED);
		return;
	}
	sroce_count(sdev, SROCE_CNT_CNP_HANDLED);
	spin_lock_bh(&qp->sq_lock);
	sroce_cc_cut(&qp->cc, ktime_get_ns(), qp->req.rtt.srtt);
	trace_sroce_cc_rate(qp, qp->cc.rate, qp->cc.alpha, qp->req.rtt.srtt);
	spin_unlock_bh(&qp->sq_lock);
}
