// SPDX-License-Identifier: GPL-2.0
/*
 * Page faults of ODP MRs, asked for by a QP's data path (which cannot
 * sleep) and served in process context.
 */
#include <linux/workqueue.h>

#include "fault.h"
#include "mr.h"
#include "odp.h"
#include "qp.h"

static void sroce_fault_work(struct work_struct *work)
{
	struct sroce_fault *f = container_of(work, struct sroce_fault, work);
	struct sroce_mr *mr;
	u32 length;
	u64 iova;
	int err;

	spin_lock_bh(&f->lock);
	mr = f->mr;
	iova = f->iova;
	length = f->length;
	spin_unlock_bh(&f->lock);
	if (!mr)
		return;

	err = sroce_odp_fault(mr, iova, length, true);

	spin_lock_bh(&f->lock);
	f->state = err && !f->forgotten ? SROCE_FAULT_FAILED : SROCE_FAULT_IDLE;
	f->forgotten = false;
	f->mr = NULL;
	spin_unlock_bh(&f->lock);
	sroce_mr_put(mr);
	f->done(f);
}

/**
 * sroce_fault_init() - set up one half's fault
 * @f: the fault
 * @done: called, in process context, when a fault is over
 */
void sroce_fault_init(struct sroce_fault *f, sroce_fault_done_fn done)
{
	INIT_WORK(&f->work, sroce_fault_work);
	spin_lock_init(&f->lock);
	f->state = SROCE_FAULT_IDLE;
	f->done = done;
}

/**
 * sroce_fault_stop() - forget the fault, if any, and wait until it is
 * @f: the fault
 *
 * Context: process; the QP is unreachable from the data path.
 */
void sroce_fault_stop(struct sroce_fault *f)
{
	struct sroce_mr *mr;

	cancel_work_sync(&f->work);
	spin_lock_bh(&f->lock);
	mr = f->mr;
	f->mr = NULL;
	f->state = SROCE_FAULT_IDLE;
	f->forgotten = false;
	spin_unlock_bh(&f->lock);
	if (mr)
		sroce_mr_put(mr);
}

/**
 * sroce_fault_forget() - the QP half was reset: no access waits any more
 * @f: the fault
 *
 * A failure is the answer of the access that asked; after RESET that
 * access is gone, and telling it to the QP's next life would fail a
 * well-formed request there. A pending fault runs on (its MR stays held
 * until then), but its failure is not kept.
 *
 * Context: BH disabled (a half's reset, sroce_req_reset() or
 * sroce_resp_reset(), which assert their locks).
 */
void sroce_fault_forget(struct sroce_fault *f)
{
	spin_lock(&f->lock);
	if (f->state == SROCE_FAULT_FAILED)
		f->state = SROCE_FAULT_IDLE;
	else if (f->state == SROCE_FAULT_PENDING)
		f->forgotten = true;
	spin_unlock(&f->lock);
}

/**
 * sroce_fault_ask() - an access found part of an ODP MR not faulted in
 * @f: the QP half's fault
 * @mr: the MR, referenced by the caller
 * @key: the key the access named it by
 * @iova: first byte the access needs
 * @length: bytes it needs
 *
 * Queues a fault of the range unless one is pending. A fault that failed
 * for this key and a range overlapping this one is the access's answer:
 * once told, the next access asks again.
 *
 * Context: any; BH disabled or softirq.
 * Return: -EAGAIN: wait and try again (the done callback comes); -EFAULT:
 * the last fault failed there, the access fails.
 */
int sroce_fault_ask(struct sroce_fault *f, struct sroce_mr *mr, u32 key,
		    u64 iova, u32 length)
{
	int ret = -EAGAIN;

	spin_lock(&f->lock);
	switch (f->state) {
	case SROCE_FAULT_PENDING:
		break;
	case SROCE_FAULT_FAILED:
		f->state = SROCE_FAULT_IDLE;
		if (f->key == key && iova < f->iova + f->length &&
		    f->iova < iova + length) {
			ret = -EFAULT;
			break;
		}
		fallthrough;
	case SROCE_FAULT_IDLE:
		refcount_inc(&mr->ref);
		f->mr = mr;
		f->key = key;
		f->iova = iova;
		f->length = length;
		f->state = SROCE_FAULT_PENDING;
		queue_work(sroce_wq, &f->work);
		break;
	}
	spin_unlock(&f->lock);
	return ret;
}
