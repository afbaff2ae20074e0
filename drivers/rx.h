/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receive dispatch: the netdev layer hands each checked packet here, and
 * it goes on to its QP's responder or completer.
 */
#ifndef SROCE_RX_H
#define SROCE_RX_H

struct sroce_dev;
struct sroce_pkt;

void sroce_rx(struct sroce_dev *sdev, struct sroce_pkt *pkt);

#endif /* SROCE_RX_H */
