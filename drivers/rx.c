// SPDX-License-Identifier: GPL-2.0
/*
 * Receive dispatch: a packet the netdev layer checked (headers, ICRC) is
 * matched to its QP and handed to the responder (requests) or the
 * completer (answers). Nothing here trusts the packet beyond its syntax:
 * a QP number, type, partition or source that does not match is dropped
 * and counted.
 */
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "comp.h"
#include "counters.h"
#include "device.h"
#include "mcast.h"
#include "opcode.h"
#include "pkt.h"
#include "qp.h"
#include "resp.h"
#include "rx.h"
#include "ud.h"

/* The only partition RoCE has: 0x7fff with either membership bit. */
static bool sroce_pkey_ok(const struct sroce_pkt *pkt)
{
	return (be16_to_cpu(pkt->bth->pkey) & 0x7fff) ==
	       (SROCE_DEFAULT_PKEY & 0x7fff);
}

/* Only UD datagrams have groups (IBTA 10.5.1.2). */
static void sroce_rx_mcast(struct sroce_dev *sdev, struct sroce_pkt *pkt)
{
	if (!(pkt->mask & sroce_qpt_bit(IB_QPT_UD)))
		sroce_count(sdev, SROCE_CNT_RX_NO_QP);
	else if (!sroce_pkey_ok(pkt))
		sroce_count(sdev, SROCE_CNT_RX_BAD_PKEY);
	else
		sroce_mcast_rx(sdev, pkt);
	consume_skb(pkt->skb);
}

/**
 * sroce_rx() - deliver a checked packet to its QP
 * @sdev: the device it arrived on
 * @pkt: the packet; its skb is consumed
 *
 * Context: softirq (the netdev's receive path, or loopback).
 */
void sroce_rx(struct sroce_dev *sdev, struct sroce_pkt *pkt)
{
	enum sroce_counter drop = SROCE_CNT_RX_NO_QP;
	struct sroce_qp *qp;

	if (pkt->qpn == SROCE_MCAST_QPN) {
		sroce_rx_mcast(sdev, pkt);
		return;
	}
	qp = sroce_qp_get(sdev, pkt->qpn);
	if (!qp)
		goto out;
	if (!(pkt->mask & sroce_qpt_bit(qp->ibqp.qp_type)))
		goto put;
	if (!sroce_pkey_ok(pkt)) {
		drop = SROCE_CNT_RX_BAD_PKEY;
		goto put;
	}
	if (sroce_qp_is_ud(qp))
		sroce_ud_rx(qp, pkt);
	/* A connected QP hears only from its peer, on its path. */
	else if (!sroce_pkt_from_peer(pkt, &qp->av))
		goto put;
	else if (pkt->mask & SROCE_REQUEST)
		sroce_resp_rx(qp, pkt);
	else if (qp->ibqp.qp_type == IB_QPT_RC)
		sroce_comp_rx(qp, pkt);
	sroce_qp_put(qp);
	consume_skb(pkt->skb);
	return;

put:
	sroce_qp_put(qp);
out:
	sroce_count(sdev, drop);
	kfree_skb(pkt->skb);
}
