/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A burst: the frames one run of a QP's requester or responder built,
 * handed to the netdev together, so that the NIC is told once (one
 * doorbell, one virtio kick) for all of them.
 */
#ifndef SROCE_BURST_H
#define SROCE_BURST_H

#include <linux/skbuff.h>

struct sroce_dev;

/*
 * Frames held before the netdev is given them: a doorbell per this many.
 * A 64 KiB message at MTU 1024, or what one ACK lets go: about what one
 * TCP GSO skb hands the driver in one xmit_more run.
 */
#define SROCE_BURST_MAX		64

/**
 * struct sroce_burst - finished frames waiting for the netdev
 * @skbs: in the order they were built, which is the order they are sent
 *
 * Each QP has one for its requester and one for its responder, used under
 * the lock of that side (sq_lock, rq_lock), and flushed before the lock is
 * dropped: a frame never waits for a later run.
 */
struct sroce_burst {
	struct sk_buff_head skbs;
};

static inline void sroce_burst_init(struct sroce_burst *burst)
{
	__skb_queue_head_init(&burst->skbs);
}

void sroce_burst_add(struct sroce_dev *sdev, struct sroce_burst *burst,
		     struct sk_buff *skb);
void sroce_burst_flush(struct sroce_dev *sdev, struct sroce_burst *burst);

#endif /* SROCE_BURST_H */
