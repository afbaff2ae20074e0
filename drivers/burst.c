// SPDX-License-Identifier: GPL-2.0
/*
 * Bursts of frames to the netdev. Where nothing stands between sroce and
 * the driver (the qdisc the kernel attached by default, holding nothing;
 * no tc or netfilter egress hook), a burst goes straight to the driver's
 * ndo_start_xmit() under one transmit lock, every frame but the last
 * marked xmit_more, as pktgen and AF_XDP send: the NIC hears one doorbell
 * per burst instead of one per frame, and no frame pays for a qdisc that
 * would only pass it on. Capture taps still see every frame. Otherwise
 * each frame takes dev_queue_xmit(): a qdisc or a hook somebody
 * configured (netem, tbf, a filter) sees all of them, in order.
 */
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <net/sch_generic.h>

#include "burst.h"
#include "counters.h"
#include "device.h"

/* Does a tc or netfilter egress hook want to see the device's frames? */
static bool sroce_burst_hooked(const struct net_device *ndev)
{
#if defined(CONFIG_NET_XGRESS)
	if (rcu_access_pointer(ndev->tcx_egress))
		return true;
#elif defined(CONFIG_NET_CLS_ACT)
	if (rcu_access_pointer(ndev->miniq_egress))
		return true;
#endif
#if defined(CONFIG_NETFILTER_EGRESS)
	if (rcu_access_pointer(ndev->nf_hooks_egress))
		return true;
#endif
	return false;
}

/* The transmit queue for the burst that starts with @skb. */
static u16 sroce_burst_txq(struct net_device *ndev, struct sk_buff *skb)
{
	const struct net_device_ops *ops = ndev->netdev_ops;
	u16 q = 0;

	if (ndev->real_num_tx_queues > 1) {
		q = ops->ndo_select_queue ?
		    ops->ndo_select_queue(ndev, skb, NULL) :
		    netdev_pick_tx(ndev, skb, NULL);
		if (q >= ndev->real_num_tx_queues)
			q = 0;
	}
	return q;
}

/*
 * May the burst skip the qdisc? Only the kernel's default one (it has no
 * handle) may be skipped, and only while it is empty, so that nothing of
 * ours overtakes what it holds. Context: rcu_read_lock_bh held.
 */
static bool sroce_burst_direct_ok(struct net_device *ndev,
				  struct netdev_queue *txq)
{
	const typeof(*txq->qdisc) *q = rcu_dereference_bh(txq->qdisc);

	return netif_running(ndev) && netif_carrier_ok(ndev) &&
	       !q->handle && qdisc_is_empty(q) &&
	       !sroce_burst_hooked(ndev) && !dev_xmit_recursion();
}

/*
 * What dev_queue_xmit() would make of each frame before the driver sees
 * it: linear if the device lost scatter-gather meanwhile, and so on.
 */
static void sroce_burst_validate(struct sroce_dev *sdev,
				 struct sk_buff_head *list)
{
	struct sk_buff_head ok;
	struct sk_buff *skb;
	bool again = false;

	__skb_queue_head_init(&ok);
	while ((skb = __skb_dequeue(list))) {
		skb = validate_xmit_skb_list(skb, sdev->ndev, &again);
		if (unlikely(!skb || skb->next)) {
			/* Never a GSO packet: none is built. */
			kfree_skb_list(skb);
			sroce_count(sdev, SROCE_CNT_TX_DROPPED);
			continue;
		}
		__skb_queue_tail(&ok, skb);
	}
	skb_queue_splice(&ok, list);
}

/*
 * Hands frames to the driver until the list is empty or the queue stops;
 * what is left goes through the qdisc. Context: rcu_read_lock_bh held.
 */
static void sroce_burst_direct(struct sroce_dev *sdev,
			       struct sk_buff_head *list, u16 qidx)
{
	struct net_device *ndev = sdev->ndev;
	struct netdev_queue *txq = netdev_get_tx_queue(ndev, qidx);
	bool taps = dev_nit_active(ndev);
	unsigned int sent = 0;
	struct sk_buff *skb;
	netdev_tx_t rc;

	sroce_burst_validate(sdev, list);
	dev_xmit_recursion_inc();
	HARD_TX_LOCK(ndev, txq, smp_processor_id());
	while ((skb = skb_peek(list))) {
		if (netif_xmit_frozen_or_drv_stopped(txq))
			break;
		__skb_unlink(skb, list);
		skb_set_queue_mapping(skb, qidx);
		if (taps)
			dev_queue_xmit_nit(skb, ndev);
		/* A driver that stops its queue rings the doorbell itself. */
		rc = netdev_start_xmit(skb, ndev, txq, !skb_queue_empty(list));
		if (unlikely(!dev_xmit_complete(rc))) {
			__skb_queue_head(list, skb);
			break;
		}
		if (unlikely(rc != NETDEV_TX_OK))
			sroce_count(sdev, SROCE_CNT_TX_DROPPED);
		sent++;
	}
	HARD_TX_UNLOCK(ndev, txq);
	dev_xmit_recursion_dec();
	if (sent) {
		sroce_count_add(sdev, SROCE_CNT_TX_DIRECT, sent);
		sroce_count(sdev, SROCE_CNT_TX_BURSTS);
	}
}

/*
 * One frame through the qdisc; it may drop it, and that is counted. The
 * result is kept first: net_xmit_eval() is a macro that reads its argument
 * twice, and a send inside it would send twice.
 */
static void sroce_burst_queue(struct sroce_dev *sdev, struct sk_buff *skb)
{
	int rc = dev_queue_xmit(skb);

	if (net_xmit_eval(rc))
		sroce_count(sdev, SROCE_CNT_TX_DROPPED);
}

/**
 * sroce_burst_flush() - hand every frame of a burst to the netdev
 * @sdev: the device whose netdev sends them
 * @burst: the frames; empty when this returns
 *
 * Context: any but hard interrupt; under the lock of the burst's owner.
 */
void sroce_burst_flush(struct sroce_dev *sdev, struct sroce_burst *burst)
{
	struct sk_buff_head *list = &burst->skbs;
	struct net_device *ndev = sdev->ndev;
	struct sk_buff *skb;
	u16 qidx;

	if (skb_queue_empty(list))
		return;
	rcu_read_lock_bh();
	qidx = sroce_burst_txq(ndev, skb_peek(list));
	if (sroce_burst_direct_ok(ndev, netdev_get_tx_queue(ndev, qidx)))
		sroce_burst_direct(sdev, list, qidx);
	rcu_read_unlock_bh();
	while ((skb = __skb_dequeue(list)))
		sroce_burst_queue(sdev, skb);
}

/**
 * sroce_burst_add() - queue a finished frame for the netdev
 * @sdev: the device
 * @burst: the burst it joins; sent once it holds SROCE_BURST_MAX frames
 * @skb: the frame, Ethernet header and ICRC in place
 *
 * Context: as sroce_burst_flush().
 */
void sroce_burst_add(struct sroce_dev *sdev, struct sroce_burst *burst,
		     struct sk_buff *skb)
{
	__skb_queue_tail(&burst->skbs, skb);
	if (skb_queue_len(&burst->skbs) >= SROCE_BURST_MAX)
		sroce_burst_flush(sdev, burst);
}
