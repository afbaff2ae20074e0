// SPDX-License-Identifier: GPL-2.0
/*
 * Work queues: the kernel's consuming side of the rings processes post
 * work requests to (send, receive and shared receive queues).
 */
#include <linux/minmax.h>
#include <linux/string.h>

#include "wq.h"

/**
 * sroce_wq_init() - allocate an empty work queue
 * @wq: the work queue
 * @slots: entries, a power of two (sroce_queue_slots())
 * @stride: bytes per entry, a multiple of 8
 *
 * Return: 0, -EINVAL for a shape no ring can have, or -ENOMEM.
 */
int sroce_wq_init(struct sroce_wq *wq, u32 slots, u32 stride)
{
	wq->cons = 0;
	spin_lock_init(&wq->post_lock);
	return sroce_queue_init(&wq->q, slots, stride);
}

/**
 * sroce_wq_take() - copy out and consume the oldest posted entry
 * @wq: the work queue
 * @wqe: where the entry goes
 * @len: bytes to copy, at most the stride
 *
 * The entry is copied before the slot is handed back to the producer, so
 * what the caller uses cannot change under it. A producer index that no
 * real producer could have written (more entries than the ring holds,
 * or behind the consumer) leaves the queue untouched.
 *
 * Return: 1 when an entry was taken, 0 when the queue is empty, -EIO when
 * the producer index is garbage.
 */
int sroce_wq_take(struct sroce_wq *wq, void *wqe, size_t len)
{
	/* Pairs with the producer's release store: the entry is complete. */
	u32 prod = smp_load_acquire(&wq->q.hdr->prod);

	if (!sroce_queue_sane(prod, wq->cons, wq->q.slots))
		return -EIO;
	if (sroce_queue_empty(prod, wq->cons))
		return 0;

	memcpy(wqe, sroce_queue_at(&wq->q, wq->cons),
	       min_t(size_t, len, wq->q.stride));
	wq->cons++;
	/* The copy is done before the producer may reuse the slot. */
	smp_store_release(&wq->q.hdr->cons, wq->cons);
	return 1;
}

/**
 * sroce_wq_drop_all() - empty the queue without completing anything
 * @wq: the work queue
 *
 * Whatever the producer index says becomes the consumer index: no entry
 * is read, so even a garbage index leaves a consistent, empty ring.
 */
void sroce_wq_drop_all(struct sroce_wq *wq)
{
	wq->cons = READ_ONCE(wq->q.hdr->prod);
	/* Pairs with the producer's acquire of cons: no entry is in use. */
	smp_store_release(&wq->q.hdr->cons, wq->cons);
}

/**
 * sroce_wq_peek() - copy out a posted entry without consuming it
 * @wq: the work queue
 * @idx: the entry, at or after the consumer index
 * @wqe: where the entry goes
 * @len: bytes to copy, at most the stride
 *
 * The send queue's entries stay in the ring, counted against the
 * producer's room, until they complete; the requester reads ahead of the
 * consumer index with this.
 *
 * Return: 1 when @idx holds a posted entry, 0 when it is not posted yet,
 * -EIO when the producer index is garbage.
 */
int sroce_wq_peek(struct sroce_wq *wq, u32 idx, void *wqe, size_t len)
{
	/* Pairs with the producer's release store: the entry is complete. */
	u32 prod = smp_load_acquire(&wq->q.hdr->prod);

	if (!sroce_queue_sane(prod, wq->cons, wq->q.slots) ||
	    sroce_queue_used(idx, wq->cons) > sroce_queue_used(prod, wq->cons))
		return -EIO;
	if (idx == prod)
		return 0;
	memcpy(wqe, sroce_queue_at(&wq->q, idx),
	       min_t(size_t, len, wq->q.stride));
	return 1;
}

/* Hands the oldest entry's slot back to the producer. */
void sroce_wq_release(struct sroce_wq *wq)
{
	wq->cons++;
	/* The slot's last use is over before the producer may reuse it. */
	smp_store_release(&wq->q.hdr->cons, wq->cons);
}

/**
 * sroce_wq_slot() - where a kernel producer writes its next entry
 * @wq: a queue of a kernel QP, under @wq->post_lock
 * @prod: the producer index the entry will have
 *
 * The ring is the kernel's own, so its header holds only what the kernel
 * wrote there.
 *
 * Return: the slot, or NULL when every slot is in use.
 */
void *sroce_wq_slot(struct sroce_wq *wq, u32 prod)
{
	/* Pairs with the consumer's release: its copy of the slot is done. */
	u32 cons = smp_load_acquire(&wq->q.hdr->cons);

	lockdep_assert_held(&wq->post_lock);
	if (sroce_queue_used(prod, cons) >= wq->q.slots)
		return NULL;
	return sroce_queue_at(&wq->q, prod);
}

/* Hands the entries before @prod to the consumer; under post_lock. */
void sroce_wq_publish(struct sroce_wq *wq, u32 prod)
{
	lockdep_assert_held(&wq->post_lock);
	/* Pairs with the consumer's acquire: the entries are complete. */
	smp_store_release(&wq->q.hdr->prod, prod);
}
