/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Congestion control for RoCEv2 (Annex A17.9), in the spirit of DCQCN: a
 * requester marks its packets ECN-capable, a queue on the path marks them
 * Congestion Experienced instead of dropping them, the responder answers
 * with a CNP, and the requester's rate limiter cuts its rate, then
 * recovers it while no CNP comes.
 */
#ifndef SROCE_CC_H
#define SROCE_CC_H

#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/types.h>

struct sroce_pkt;
struct sroce_qp;

/* Fixed point for alpha: SROCE_CC_ONE is 1. */
#define SROCE_CC_ONE_SHIFT	20
#define SROCE_CC_ONE		BIT(SROCE_CC_ONE_SHIFT)

/**
 * struct sroce_cc - a QP's congestion state
 * @rate: the current rate (DCQCN's Rc), bytes per second; 0 while nothing
 *	  limits the QP, which is the state it starts in and goes back to
 * @target: the rate it recovers toward (Rt)
 * @alpha: how congested the path seems, in 1/SROCE_CC_ONE
 * @stage: increase steps since the last cut
 * @next_ns: the earliest time the next packet may leave
 * @burst_ns: how far @next_ns may fall behind the clock: the burst a QP
 *	      that paused may send at once
 * @cut_ns: when the rate was last cut
 * @alpha_ns: when alpha last decayed
 * @inc_ns: when the rate was last increased, or cut
 * @win_start: jiffies at the start of the sending rate's window
 * @win_bytes: bytes sent in the window
 * @est: bytes per second sent in the last whole window
 * @cnp_ns: when this QP, as a responder, last sent a CNP
 * @timer: runs the requester once the limiter lets the next packet go
 *
 * All but @cnp_ns under the QP's sq_lock.
 */
struct sroce_cc {
	u64 rate;
	u64 target;
	u32 alpha;
	u32 stage;
	u64 next_ns;
	u64 burst_ns;
	u64 cut_ns;
	u64 alpha_ns;
	u64 inc_ns;
	unsigned long win_start;
	u64 win_bytes;
	u64 est;
	u64 cnp_ns;
	struct hrtimer timer;
};

void sroce_cc_init(struct sroce_qp *qp);
void sroce_cc_reset(struct sroce_qp *qp);
void sroce_cc_stop(struct sroce_qp *qp);
u8 sroce_cc_tos(u8 tclass, u8 opcode);
bool sroce_cc_may_send(struct sroce_qp *qp);
void sroce_cc_sent(struct sroce_cc *cc, unsigned int bytes);
void sroce_cc_ce(struct sroce_qp *qp, const struct sroce_pkt *pkt);
void sroce_cc_cnp(struct sroce_qp *qp, const struct sroce_pkt *pkt);

/* The limiter's arithmetic, for KUnit. */
void sroce_cc_cut(struct sroce_cc *cc, u64 now, u64 srtt);
void sroce_cc_update(struct sroce_cc *cc, u64 now);
void sroce_cc_pace(struct sroce_cc *cc, u64 now, unsigned int bytes);

#endif /* SROCE_CC_H */
