/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The completer: the answers to a QP's requests (ACKs, NAKs, read
 * responses, atomic ACKs) and its timeouts turn into completions and
 * retransmissions. The requester's other half (req.h).
 */
#ifndef SROCE_COMP_H
#define SROCE_COMP_H

#include <linux/types.h>

struct sroce_pkt;
struct sroce_qp;
struct sroce_swqe;
struct timer_list;

void sroce_comp_rx_run(struct sroce_qp *qp, struct sroce_pkt **pkts,
		       unsigned int n);
void sroce_comp_rx(struct sroce_qp *qp, struct sroce_pkt *pkt);
void sroce_comp_complete(struct sroce_qp *qp);
void sroce_comp_arm_timer(struct sroce_qp *qp);
void sroce_comp_timeout(struct timer_list *t);
void sroce_comp_rnr_timeout(struct timer_list *t);
void sroce_comp_fault_done(struct sroce_qp *qp);
void sroce_comp_fail(struct sroce_qp *qp, struct sroce_swqe *swqe,
		     u8 status);

#endif /* SROCE_COMP_H */
