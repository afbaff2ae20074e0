/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_UD_H
#define SROCE_UD_H

struct sroce_pkt;
struct sroce_qp;

void sroce_ud_rx(struct sroce_qp *qp, struct sroce_pkt *pkt);

#endif /* SROCE_UD_H */
