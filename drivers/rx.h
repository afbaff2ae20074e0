/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receive dispatch: the netdev layer hands each checked packet here, and
 * it goes on to its QP's responder or completer, in a run with the
 * packets before it for the same QP that nobody waited for.
 */
#ifndef SROCE_RX_H
#define SROCE_RX_H

struct sroce_dev;
struct sroce_pkt;

void sroce_rx(struct sroce_dev *sdev, struct sroce_pkt *pkt);
void sroce_rx_drain(void);
int sroce_rx_init(void);
void sroce_rx_exit(void);

#endif /* SROCE_RX_H */
