/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receive side of a QP: the responder executes requests (sends into
 * receive WQEs, writes, reads, atomics) and answers them.
 */
#ifndef SROCE_RESP_H
#define SROCE_RESP_H

#include <linux/types.h>

struct sroce_pkt;
struct sroce_qp;
struct work_struct;

int sroce_resp_init(struct sroce_qp *qp, u32 rwqe_bytes);
void sroce_resp_stop(struct sroce_qp *qp);
void sroce_resp_fini(struct sroce_qp *qp);
int sroce_resp_set_res(struct sroce_qp *qp, u32 n);
void sroce_resp_start(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_rx_run(struct sroce_qp *qp, struct sroce_pkt **pkts,
		       unsigned int n);
void sroce_resp_rx(struct sroce_qp *qp, struct sroce_pkt *pkt);
void sroce_resp_work(struct work_struct *work);
void sroce_resp_flush(struct sroce_qp *qp);
bool sroce_resp_take_rwqe(struct sroce_qp *qp);

#endif /* SROCE_RESP_H */
