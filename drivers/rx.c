// SPDX-License-Identifier: GPL-2.0
/*
 * Receive dispatch: a packet the netdev layer checked (headers, ICRC) is
 * matched to its QP and handed to the responder (requests) or the
 * completer (answers). Nothing here trusts the packet beyond its syntax:
 * a QP number, type, partition or source that does not match is dropped
 * and counted.
 *
 * A packet in the middle of a message that asks for no ACK is one nobody
 * waits for, and so is an RC send or write packet that asks for none: it
 * waits, in its CPU's batch, for the packets after it. The first packet
 * anybody waits for (an ACK request, an answer that ends a message,
 * anything else) takes the batch with it, and
 * consecutive packets for one QP go to it as a run: one lookup, one lock,
 * one look at what the answers allow (resp.c, comp.c), as a listified
 * receive path does for the stack. A bulk transfer so moves in runs of up
 * to 64 packets, while a lone packet is dispatched as soon as it arrives:
 * no round trip waits for a batch. Should the packets after a waiting one
 * not come (a loss), a NAPI context of sroce's own, scheduled by the
 * first packet that waits, dispatches the batch once the netdev's poll is
 * over.
 */
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "cc.h"
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

/* As many packets as one NAPI poll of the netdev may hand over. */
#define SROCE_RX_BATCH	NAPI_POLL_WEIGHT

/**
 * struct sroce_rx_batch - one CPU's received packets, not yet dispatched
 * @napi: dispatches them once the netdev's poll is over
 * @n: packets in @pkt
 * @sdev: the device each packet arrived on
 * @pkt: the packets, in the order they arrived; each holds its skb
 *
 * Only the CPU's receive softirq touches a batch (or, once the CPU is
 * gone, the CPU its NAPI context moved to).
 */
struct sroce_rx_batch {
	struct napi_struct napi;
	unsigned int n;
	struct sroce_dev *sdev[SROCE_RX_BATCH];
	struct sroce_pkt pkt[SROCE_RX_BATCH];
};

static DEFINE_PER_CPU(struct sroce_rx_batch, sroce_rx_batches);

/* NAPI contexts need a netdev: a dummy one, never registered. */
static struct net_device *sroce_rx_napi_dev;

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

/*
 * May @pkt go to @qp? If not, it is dropped and counted here. A UD packet
 * is delivered here too: datagrams have nothing to gain from a run.
 */
static bool sroce_rx_admit(struct sroce_dev *sdev, struct sroce_qp *qp,
			   struct sroce_pkt *pkt)
{
	enum sroce_counter drop = SROCE_CNT_RX_NO_QP;

	if (!(pkt->mask & sroce_qpt_bit(qp->ibqp.qp_type)))
		goto drop;
	/*
	 * An XRC initiator takes only answers and CNPs, an XRC target
	 * requests.
	 */
	if ((qp->ibqp.qp_type == IB_QPT_XRC_INI && pkt->mask & SROCE_REQUEST) ||
	    (qp->ibqp.qp_type == IB_QPT_XRC_TGT &&
	     pkt->mask & (SROCE_RESPONSE | SROCE_CNP)))
		goto drop;
	if (!sroce_pkey_ok(pkt)) {
		drop = SROCE_CNT_RX_BAD_PKEY;
		goto drop;
	}
	if (sroce_qp_is_ud(qp)) {
		sroce_ud_rx(qp, pkt);
		consume_skb(pkt->skb);
		return false;
	}
	/* A connected QP hears only from its peer, on its path. */
	if (!sroce_pkt_from_peer(pkt, &qp->av))
		goto drop;
	if (unlikely(pkt->mask & SROCE_CNP)) {
		sroce_cc_cnp(qp, pkt);
		consume_skb(pkt->skb);
		return false;
	}
	if (unlikely(pkt->ce) && pkt->mask & SROCE_REQUEST)
		sroce_cc_ce(qp, pkt);
	return true;
drop:
	sroce_count(sdev, drop);
	kfree_skb(pkt->skb);
	return false;
}

/*
 * Requests go to the responder and answers to the completer, each as a
 * run of consecutive packets of the same kind; UC answers do not exist.
 */
static void sroce_rx_deliver(struct sroce_qp *qp, struct sroce_pkt **pkts,
			     unsigned int n)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	unsigned int i, j;
	bool req;

	for (i = 0; i < n; i = j) {
		req = pkts[i]->mask & SROCE_REQUEST;
		for (j = i + 1; j < n; j++)
			if (!(pkts[j]->mask & SROCE_REQUEST) != !req)
				break;
		sroce_count(sdev, SROCE_CNT_RX_RUNS);
		if (req)
			sroce_resp_rx_run(qp, pkts + i, j - i);
		else if (sroce_qp_req_rc(qp))
			sroce_comp_rx_run(qp, pkts + i, j - i);
	}
	for (i = 0; i < n; i++)
		consume_skb(pkts[i]->skb);
}

/* Packets @pkt[0..@n) all of @sdev, to one QP number, not the groups'. */
static void sroce_rx_qp(struct sroce_dev *sdev, struct sroce_pkt *pkt,
			unsigned int n)
{
	struct sroce_pkt *ok[SROCE_RX_BATCH];
	unsigned int i, nok = 0;
	struct sroce_qp *qp;

	qp = sroce_qp_get(sdev, pkt->qpn);
	if (!qp) {
		sroce_count_add(sdev, SROCE_CNT_RX_NO_QP, n);
		for (i = 0; i < n; i++)
			kfree_skb(pkt[i].skb);
		return;
	}
	for (i = 0; i < n; i++)
		if (sroce_rx_admit(sdev, qp, &pkt[i]))
			ok[nok++] = &pkt[i];
	if (nok)
		sroce_rx_deliver(qp, ok, nok);
	sroce_qp_put(qp);
}

/* Dispatches a batch, a run of packets for one QP at a time. */
static void sroce_rx_dispatch(struct sroce_rx_batch *b)
{
	struct sroce_pkt *pkt = b->pkt;
	unsigned int i, j;

	for (i = 0; i < b->n; i = j) {
		if (pkt[i].qpn == SROCE_MCAST_QPN) {
			sroce_rx_mcast(b->sdev[i], &pkt[i]);
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < b->n; j++)
			if (b->sdev[j] != b->sdev[i] ||
			    pkt[j].qpn != pkt[i].qpn)
				break;
		sroce_rx_qp(b->sdev[i], &pkt[i], j - i);
	}
	b->n = 0;
}

/*
 * The netdev's poll is over: what still waits goes on now. The frames
 * were the netdev's work and were counted against its budget; this adds
 * none.
 */
static int sroce_rx_poll(struct napi_struct *napi, int budget)
{
	struct sroce_rx_batch *b = container_of(napi, struct sroce_rx_batch,
						 napi);

	sroce_rx_dispatch(b);
	napi_complete_done(napi, 0);
	return 0;
}

/*
 * Does nobody wait for @pkt? A first or middle packet of a message, to a
 * connected QP, that asks for no ACK: neither its requester nor the
 * process reading the message can go on before the message's later
 * packets arrive, and they take it with them. Nor an RC send or write
 * that asks for no ACK, even a message's last: its requester asks on a
 * later packet of the same run (req.c), which follows it at once and
 * takes it along.
 */
static bool sroce_rx_may_wait(const struct sroce_pkt *pkt)
{
	if (pkt->ack_req || pkt->qpn == SROCE_MCAST_QPN)
		return false;
	if (pkt->mask & SROCE_QPT_RC && pkt->mask & SROCE_REQUEST &&
	    pkt->mask & (SROCE_SEND | SROCE_WRITE))
		return true;
	return pkt->mask & (SROCE_FIRST | SROCE_MIDDLE) &&
	       !(pkt->mask & SROCE_LAST);
}

/**
 * sroce_rx() - deliver a checked packet to its QP
 * @sdev: the device it arrived on
 * @pkt: the packet; its skb is consumed
 *
 * The packet joins this CPU's batch. It waits there if nobody waits for
 * it (sroce_rx_may_wait()); otherwise the batch is dispatched at once, it
 * last, and so it is when it is full.
 *
 * Context: softirq (the netdev's receive path, or loopback).
 */
void sroce_rx(struct sroce_dev *sdev, struct sroce_pkt *pkt)
{
	struct sroce_rx_batch *b = this_cpu_ptr(&sroce_rx_batches);

	lockdep_assert_in_softirq();
	/* Alone, as in a round trip: straight to its QP. */
	if (!b->n && !sroce_rx_may_wait(pkt)) {
		if (pkt->qpn == SROCE_MCAST_QPN)
			sroce_rx_mcast(sdev, pkt);
		else
			sroce_rx_qp(sdev, pkt, 1);
		return;
	}
	b->sdev[b->n] = sdev;
	b->pkt[b->n] = *pkt;
	if (++b->n == SROCE_RX_BATCH || !sroce_rx_may_wait(pkt))
		sroce_rx_dispatch(b);
	else if (b->n == 1)
		napi_schedule(&b->napi);
}

/**
 * sroce_rx_drain() - wait until no batch holds a packet
 *
 * The caller made sure none arrives any more (its rx handler is gone):
 * then every packet already taken has reached its QP, or been dropped,
 * when this returns.
 *
 * Context: process; sleeps.
 */
void sroce_rx_drain(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		napi_synchronize(&per_cpu_ptr(&sroce_rx_batches, cpu)->napi);
}

/*
 * Embedded in memory of its own rather than alloc_netdev_dummy()'s (6.10
 * on), so that one way serves 6.1 and 6.12: it is never registered and
 * has no private area, and init_dummy_netdev() sets up all NAPI needs.
 */
static struct net_device *sroce_rx_dummy_alloc(void)
{
	struct net_device *dev = kzalloc(sizeof(*dev), GFP_KERNEL);

	if (dev)
		init_dummy_netdev(dev);
	return dev;
}

/**
 * sroce_rx_init() - set up each CPU's batch
 *
 * Context: module load, before any device exists.
 * Return: 0 or -ENOMEM.
 */
int sroce_rx_init(void)
{
	struct sroce_rx_batch *b;
	int cpu;

	sroce_rx_napi_dev = sroce_rx_dummy_alloc();
	if (!sroce_rx_napi_dev)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		b = per_cpu_ptr(&sroce_rx_batches, cpu);
		b->n = 0;
		netif_napi_add(sroce_rx_napi_dev, &b->napi, sroce_rx_poll);
		napi_enable(&b->napi);
	}
	return 0;
}

/**
 * sroce_rx_exit() - undo sroce_rx_init()
 *
 * Context: module unload, once every device is gone (sroce_rx_drain()
 * ran for each).
 */
void sroce_rx_exit(void)
{
	struct sroce_rx_batch *b;
	int cpu;

	for_each_possible_cpu(cpu) {
		b = per_cpu_ptr(&sroce_rx_batches, cpu);
		napi_disable(&b->napi);
		netif_napi_del(&b->napi);
	}
	kfree(sroce_rx_napi_dev);
}
