/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_WQ_H
#define SROCE_WQ_H

#include <linux/spinlock.h>
#include <linux/types.h>

#include "queue.h"

/**
 * struct sroce_wq - a ring of work requests the kernel consumes
 * @q: the ring; its producer is the process, or for a kernel QP the
 *     post verbs
 * @cons: the consumer index, the kernel's own copy
 * @post_lock: serialises kernel producers (ib_post_send() and
 *	       ib_post_recv() may be called concurrently on one QP)
 *
 * A send queue, a receive queue or a shared receive queue. The process
 * can write anything to the ring header at any time, so the kernel never
 * reads its own index back from there: @cons is the truth and the header
 * only a copy published for the producer.
 */
struct sroce_wq {
	struct sroce_queue q;
	u32 cons;
	spinlock_t post_lock;	/* irqsave: kernel ULPs post from any context */
};

int sroce_wq_init(struct sroce_wq *wq, u32 slots, u32 stride);
int sroce_wq_take(struct sroce_wq *wq, void *wqe, size_t len);
void sroce_wq_drop_all(struct sroce_wq *wq);
int sroce_wq_peek(struct sroce_wq *wq, u32 idx, void *wqe, size_t len);
void sroce_wq_release(struct sroce_wq *wq);
void *sroce_wq_slot(struct sroce_wq *wq, u32 prod);
void sroce_wq_publish(struct sroce_wq *wq, u32 prod);

static inline void sroce_wq_destroy(struct sroce_wq *wq)
{
	sroce_queue_destroy(&wq->q);
}

#endif /* SROCE_WQ_H */
