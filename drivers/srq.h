/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "wq.h"

/**
 * struct sroce_srq - a shared receive queue
 * @ibsrq: the core's object, allocated and freed by the core
 * @lock: serialises modify_srq and query_srq
 * @wq: the ring of receive WQEs
 * @srq_num: the SRQ's number, unique on the device; an XRC SRQ's is the
 *	     one XRC requests name (struct sroce_xrceth)
 * @max_wr: entries the ring holds
 * @max_sge: SGEs each entry holds
 * @limit: the armed limit, 0 when not armed
 * @kernel: a kernel consumer's, posted to with ib_post_srq_recv()
 * @limit_work: reports a kernel SRQ's limit outside the responder's locks
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	struct mutex lock; /* attributes vs concurrent verbs */
	spinlock_t wq_lock; /* bh: QPs take WQEs in softirq */
	struct sroce_wq wq;
	u32 srq_num;
	u32 max_wr;
	u32 max_sge;
	u32 limit;
	bool kernel;
	struct work_struct limit_work;
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

int sroce_srq_init(struct sroce_srq *srq, u32 max_wr, u32 max_sge, u32 limit,
		   bool kernel);
int sroce_srq_take(struct sroce_srq *srq, void *wqe, size_t len);

struct sroce_dev;

struct sroce_srq *sroce_srq_xrc_get(struct sroce_dev *sdev, u32 srqn,
				    const struct ib_xrcd *xrcd);

extern const struct ib_device_ops sroce_srq_ops;

#endif /* SROCE_SRQ_H */
