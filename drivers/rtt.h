/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A requester's round trip, measured as TCP's (RFC 6298): one request at a
 * time (an ACK request, a read) is timed to the answer that covers it,
 * first transmissions only (Karn: an answer after a retransmission answers
 * either copy), and the samples are smoothed. The rate limiter's time constants (cc.h) and the
 * retransmit timeout (comp.c) follow it.
 */
#ifndef SROCE_RTT_H
#define SROCE_RTT_H

#include <linux/types.h>

#include "pkt.h"

/**
 * struct sroce_rtt - a requester's measured round trip
 * @srtt: smoothed round trip, ns (0: none measured yet)
 * @rttvar: the samples' smoothed deviation from @srtt, ns
 * @probe_ns: when the ACK request being timed left
 * @probe_psn: its PSN
 * @probing: an ACK request is being timed
 * @backoff: doublings of the timeout since the last sample (see
 *	     sroce_rtt_timed_out())
 * @heard: an acknowledgment made progress since the last timeout
 *
 * Under the QP's sq_lock, as the rest of the requester.
 */
struct sroce_rtt {
	u64 srtt;
	u64 rttvar;
	u64 probe_ns;
	u32 probe_psn;
	bool probing;
	u8 backoff;
	bool heard;
};

/*
 * Does an answer to every PSN before @acked answer the request being
 * timed? Only then is the clock worth reading (sroce_rtt_acked()).
 */
static inline bool sroce_rtt_answers(const struct sroce_rtt *rtt, u32 acked)
{
	return rtt->probing && sroce_psn_cmp(acked, rtt->probe_psn) > 0;
}

void sroce_rtt_reset(struct sroce_rtt *rtt);
void sroce_rtt_probe(struct sroce_rtt *rtt, u32 psn, u64 now);
bool sroce_rtt_acked(struct sroce_rtt *rtt, u32 acked, u64 now);
void sroce_rtt_timed_out(struct sroce_rtt *rtt);
void sroce_rtt_sample(struct sroce_rtt *rtt, u64 ns);
unsigned long sroce_rtt_rto(const struct sroce_rtt *rtt,
			    unsigned long timeout);

#endif /* SROCE_RTT_H */
