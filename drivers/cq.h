/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "queue.h"

/**
 * struct sroce_cq - a completion queue
 * @ibcq: the core's object, allocated and freed by the core
 * @lock: orders producers, the kernel consumer, arming and resize
 * @queue: the ring of struct sroce_cqe, shared with the process for a
 *	user CQ
 * @prod: the producer index; the kernel's copy, as the one in the shared
 *	header is writable by the process
 * @capacity: entries the ring may hold, as reported in @ibcq.cqe
 * @error: set once the CQ overflowed or its consumer index was garbage;
 *	completions were lost, so, as on hardware, the CQ stays in error and
 *	accepts no entry after that
 * @kernel: a kernel consumer's CQ, polled with poll_cq
 * @timestamp: each entry gets the wall-clock time it was written, as the
 *	process asked with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION
 * @notify_work: runs a kernel CQ's completion handler (see sroce_cq_post())
 * @error_work: runs a kernel CQ's event handler for IB_EVENT_CQ_ERR
 */
struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* irqsave: completions come from softirq */
	struct sroce_queue queue;
	u32 prod;
	u32 capacity;
	bool error;
	bool kernel;
	bool timestamp;
	struct work_struct notify_work;
	struct work_struct error_work;
};

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

int sroce_cq_init(struct sroce_cq *cq, u32 cqe);
void sroce_cq_fini(struct sroce_cq *cq);
int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited);
u32 sroce_cq_compact(struct sroce_queue *q, u32 cons, u32 prod, u32 qpn);
void sroce_cq_clean(struct sroce_cq *cq, u32 qpn);

extern const struct ib_device_ops sroce_cq_ops;

#endif /* SROCE_CQ_H */
