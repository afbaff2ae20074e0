// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues: a ring of struct sroce_cqe the data path produces
 * into and the consumer (libsroce, or a kernel ULP through poll_cq) drains.
 *
 * A user CQ's ring is mapped by its process, which polls and arms it
 * without a system call: the uverbs POLL_CQ and REQ_NOTIFY_CQ commands stay
 * out of the device's uverbs_cmd_mask, and poll_cq and req_notify_cq below
 * serve kernel CQs only. Everything the process can write (the consumer
 * index, the arm flags) is read once, checked, and never trusted as an
 * index or a size.
 */
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"
#include "device.h"
#include "limits.h"
#include "qp.h"
#include "queue.h"
#include "trace.h"

#define SROCE_CQ_ARM_ANY	(SROCE_QUEUE_F_ARM_NEXT | \
				 SROCE_QUEUE_F_ARM_SOLICITED)

/*
 * The ring for at least @cqe entries, and the capacity to report: a power
 * of two may exceed what query_device advertises, and a CQ never holds
 * more than that.
 */
static int sroce_cq_alloc_ring(struct sroce_queue *q, u32 cqe, u32 *capacity)
{
	int err;

	BUILD_BUG_ON(sizeof(struct sroce_cqe) != 64);
	err = sroce_queue_init(q, cqe, sizeof(struct sroce_cqe));
	if (err)
		return err;
	*capacity = min_t(u32, q->slots, SROCE_MAX_CQE);
	return 0;
}

static void sroce_cq_error_work(struct work_struct *work);

/**
 * sroce_cq_init() - set up a CQ's ring and state
 * @cq: the CQ, zeroed by the core
 * @cqe: entries asked for, 1 to SROCE_MAX_CQE, checked by the caller
 *
 * Return: 0 or a negative errno, with nothing allocated on failure.
 */
int sroce_cq_init(struct sroce_cq *cq, u32 cqe)
{
	int err;

	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->error_work, sroce_cq_error_work);
	err = sroce_cq_alloc_ring(&cq->queue, cqe, &cq->capacity);
	if (err)
		return err;
	cq->prod = 0;
	cq->error = false;
	cq->ibcq.cqe = cq->capacity;
	return 0;
}

void sroce_cq_fini(struct sroce_cq *cq)
{
	sroce_queue_destroy(&cq->queue);
}

/*
 * Entries waiting for the consumer, from the consumer index read once;
 * false when that index cannot belong to this ring.
 */
static bool sroce_cq_pending(struct sroce_cq *cq, u32 *cons, u32 *pending)
{
	*cons = READ_ONCE(cq->queue.hdr->cons);
	if (!sroce_queue_sane(cq->prod, *cons, cq->queue.slots))
		return false;
	*pending = sroce_queue_used(cq->prod, *cons);
	return true;
}

/*
 * Takes the arm flags if this completion is one they ask an event for.
 * The process sets them with an atomic OR at any moment and only the
 * kernel clears them, so the exchange returns every arm made so far, and
 * one event answers them all: the consumer re-arms after draining.
 */
static bool sroce_cq_take_arm(struct sroce_queue_hdr *hdr, bool solicited)
{
	u32 want = SROCE_QUEUE_F_ARM_NEXT;

	if (solicited)
		want |= SROCE_QUEUE_F_ARM_SOLICITED;
	if (!(READ_ONCE(hdr->flags) & want))
		return false;
	return xchg(&hdr->flags, 0) & want;
}

static void sroce_cq_report_error(struct sroce_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * A kernel consumer's event handler may sleep or post: it must not run
 * inside the poster's QP lock.
 */
static void sroce_cq_error_work(struct work_struct *work)
{
	struct sroce_cq *cq = container_of(work, struct sroce_cq, error_work);

	might_sleep();
	sroce_cq_report_error(cq);
}

/**
 * sroce_cq_post() - add a completion to a CQ
 * @cq: the CQ; the caller keeps it from being destroyed during the call
 * @cqe: the completion, copied into the ring
 * @solicited: the completion is for a solicited message, which an arm
 *	for solicited completions waits for
 *
 * A full ring, or one whose consumer index is garbage, loses the
 * completion: the CQ goes into error, its event handler hears
 * IB_EVENT_CQ_ERR once, and no entry is ever overwritten. The completion
 * handler runs if the consumer armed for this completion, outside the CQ
 * lock so that it may poll and re-arm. A kernel consumer's handlers may
 * also post to the QP whose lock the caller holds, or sleep: they run
 * from a worker.
 *
 * Context: any, softirq and hardirq included.
 * Return: 0, or -EOVERFLOW when the completion was not added.
 */
int sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		  bool solicited)
{
	bool report = false, fire = false;
	struct sroce_queue *q = &cq->queue;
	struct sroce_cqe *entry;
	unsigned long flags;
	u32 cons, pending;
	int err = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (unlikely(cq->error)) {
		err = -EOVERFLOW;
		goto unlock;
	}
	if (unlikely(!sroce_cq_pending(cq, &cons, &pending) ||
		     pending >= cq->capacity)) {
		cq->error = true;
		report = true;
		err = -EOVERFLOW;
		goto unlock;
	}

	entry = sroce_queue_at(q, cq->prod);
	memcpy(entry, cqe, sizeof(*cqe));
	if (cq->timestamp)
		entry->timestamp = ktime_get_real_ns();
	cq->prod++;
	/* The entry is whole before the consumer can see it counted. */
	smp_store_release(&q->hdr->prod, cq->prod);
	trace_sroce_cqe(cq, entry);
	/*
	 * The consumer arms, then polls; we publish, then read the arm. A
	 * full barrier on each side lets at least one of the two see the
	 * other, so that a completion is never left without an event.
	 */
	smp_mb();
	fire = sroce_cq_take_arm(q->hdr, solicited);
unlock:
	spin_unlock_irqrestore(&cq->lock, flags);

	if (report && cq->kernel)
		queue_work(sroce_wq, &cq->error_work);
	else if (report)
		sroce_cq_report_error(cq);
	if (fire && cq->kernel)
		queue_work(sroce_wq, &cq->notify_work);
	else if (fire && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return err;
}

static void sroce_cq_notify_work(struct work_struct *work)
{
	struct sroce_cq *cq = container_of(work, struct sroce_cq, notify_work);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * sroce_cq_compact() - drop one QP's entries from a ring, keeping the order
 * @q: the ring
 * @cons: the consumer index
 * @prod: the producer index; [@cons, @prod) holds at most @q->slots entries
 * @qpn: the number of the QP whose entries go
 *
 * Walks from the newest entry back to the oldest, moving each entry kept
 * over the ones dropped so far, as mlx5's CQ clean does: the kept entries
 * end up at the producer's end, in their order, and the dropped ones'
 * slots at the consumer's end, which the new consumer index hands back.
 *
 * Return: the new consumer index.
 */
u32 sroce_cq_compact(struct sroce_queue *q, u32 cons, u32 prod, u32 qpn)
{
	struct sroce_cqe *cqe;
	u32 idx = prod, dropped = 0;

	while (idx != cons) {
		cqe = sroce_queue_at(q, --idx);
		if (cqe->qp_num == qpn)
			dropped++;
		else if (dropped)
			memcpy(sroce_queue_at(q, idx + dropped), cqe,
			       sizeof(*cqe));
	}
	return cons + dropped;
}

/**
 * sroce_cq_clean() - forget a destroyed QP's completions not yet polled
 * @cq: a CQ the QP completed into
 * @qpn: the QP's number
 *
 * QP numbers come back (sroce_qpn_alloc()): an entry left behind would be
 * handed to a kernel consumer with wc->qp set to whichever QP holds the
 * number by then. The QP's producers have stopped, so none of its entries
 * can come after this. Only kernel CQs: the kernel never rewrites a ring a
 * process polls without a lock; libsroce cleans its own CQs the same way
 * once destroy_qp has returned.
 *
 * Context: process; no CQ lock held.
 */
void sroce_cq_clean(struct sroce_cq *cq, u32 qpn)
{
	unsigned long flags;
	u32 cons, pending;

	if (!cq->kernel)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	if (sroce_cq_pending(cq, &cons, &pending)) {
		cons = sroce_cq_compact(&cq->queue, cons, cq->prod, qpn);
		/* As poll_cq: the slots go back once their entries moved. */
		smp_store_release(&cq->queue.hdr->cons, cons);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* Refuses a udata that is not ours: no request, a response that fits. */
static int sroce_cq_check_udata(struct ib_udata *udata, size_t resp_len)
{
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (udata->outlen < resp_len)
		return -EINVAL;
	return 0;
}

static int sroce_cq_share(struct sroce_queue *q, struct ib_udata *udata,
			  struct sroce_queue_info *info)
{
	struct uverbs_attr_bundle *attrs;

	attrs = rdma_udata_to_uverbs_attr_bundle(udata);
	return sroce_queue_share(q, attrs->context, info);
}

static int sroce_create_cq(struct ib_cq *ibcq,
			   const struct ib_cq_init_attr *attr,
			   struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_create_cq_resp resp = {};
	struct sroce_cq *cq = to_scq(ibcq);
	int err;

	/*
	 * A completion timestamp is the wall-clock time the kernel wrote the
	 * entry, which only a process can ask for: a kernel consumer's
	 * ib_wc has no field for it.
	 */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION ||
	    (attr->flags && !udata))
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > SROCE_MAX_CQE)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata) {
		err = sroce_cq_check_udata(udata, sizeof(resp));
		if (err)
			return err;
	}

	/* The limit query_device advertises, like a device out of slots. */
	if (!sroce_obj_count_get(&sdev->cq_count, SROCE_MAX_CQ, udata))
		return -ENOMEM;
	err = sroce_cq_init(cq, attr->cqe);
	if (err)
		goto err_count;
	if (!udata) {
		cq->kernel = true;
		INIT_WORK(&cq->notify_work, sroce_cq_notify_work);
		return 0;
	}

	cq->timestamp = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	err = sroce_cq_share(&cq->queue, udata, &resp.cq);
	if (err)
		goto err_fini;
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_fini;
	return 0;

err_fini:
	sroce_cq_fini(cq);
err_count:
	atomic_dec(&sdev->cq_count);
	return err;
}

#ifdef SROCE_CREATE_CQ_TAKES_BUNDLE
/*
 * From 6.11 the core hands create_cq the whole uverbs bundle (NULL for a
 * kernel CQ) instead of its driver data (see Kbuild).
 */
static int sroce_create_cq_bundle(struct ib_cq *ibcq,
				  const struct ib_cq_init_attr *attr,
				  struct uverbs_attr_bundle *attrs)
{
	return sroce_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#endif

/*
 * The core refuses to destroy a CQ that a QP still uses, so no producer
 * can be running: the ring goes (a mapped one once the process unmaps it).
 */
static int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	if (cq->kernel) {
		cancel_work_sync(&cq->notify_work);
		cancel_work_sync(&cq->error_work);
	}
	sroce_cq_fini(cq);
	atomic_dec(&to_sdev(ibcq->device)->cq_count);
	return 0;
}

/*
 * Moves the completions not yet consumed into @nq, in order, and makes it
 * the CQ's ring, along with any arm not yet answered; refuses when more
 * than the @want entries asked for are pending, as rxe does. On success
 * @nq holds the old ring for the caller to destroy, outside the lock.
 */
static int sroce_cq_swap_ring(struct sroce_cq *cq, struct sroce_queue *nq,
			      u32 want, u32 capacity)
{
	struct sroce_queue *q = &cq->queue;
	struct sroce_queue old;
	unsigned long flags;
	u32 cons, pending, i;
	int err = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (!sroce_cq_pending(cq, &cons, &pending) || pending > want) {
		err = -EINVAL;
		goto unlock;
	}
	for (i = 0; i < pending; i++)
		memcpy(sroce_queue_at(nq, i), sroce_queue_at(q, cons + i),
		       sizeof(struct sroce_cqe));
	nq->hdr->prod = pending;
	nq->hdr->cons = 0;
	nq->hdr->flags = READ_ONCE(q->hdr->flags) & SROCE_CQ_ARM_ANY;

	old = *q;
	*q = *nq;
	*nq = old;
	cq->prod = pending;
	cq->capacity = capacity;
	cq->ibcq.cqe = capacity;
unlock:
	spin_unlock_irqrestore(&cq->lock, flags);
	return err;
}

static int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_resize_cq_resp resp = {};
	struct sroce_queue nq;
	u32 capacity;
	int err;

	if (cqe < 1 || cqe > SROCE_MAX_CQE)
		return -EINVAL;
	if (udata) {
		err = sroce_cq_check_udata(udata, sizeof(resp));
		if (err)
			return err;
	}

	err = sroce_cq_alloc_ring(&nq, cqe, &capacity);
	if (err)
		return err;
	/*
	 * The response goes out before the swap: once the CQ uses the new
	 * ring, nothing may fail any more.
	 */
	if (udata) {
		err = sroce_cq_share(&nq, udata, &resp.cq);
		if (err)
			goto out;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto out;
	}

	err = sroce_cq_swap_ring(cq, &nq, cqe, capacity);
out:
	/* The new ring on failure, the old one once swapped. */
	sroce_queue_destroy(&nq);
	return err;
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ib_wc *wc)
{
	/*
	 * The CQE holds the core's own values (enum ib_wc_status and
	 * ib_wc_opcode, IB_WC_* flags, RDMA_NETWORK_* header types): see
	 * sroce-abi.h. RoCE has no LIDs and no path bits.
	 */
	BUILD_BUG_ON((SROCE_WC_GRH ^ IB_WC_GRH) |
		     (SROCE_WC_WITH_IMM ^ IB_WC_WITH_IMM) |
		     (SROCE_WC_WITH_INVALIDATE ^ IB_WC_WITH_INVALIDATE) |
		     (SROCE_WC_IP_CSUM_OK ^ IB_WC_IP_CSUM_OK) |
		     (SROCE_WC_WITH_SMAC ^ IB_WC_WITH_SMAC) |
		     (SROCE_WC_WITH_VLAN ^ IB_WC_WITH_VLAN) |
		     (SROCE_WC_WITH_NETWORK_HDR_TYPE ^
		      IB_WC_WITH_NETWORK_HDR_TYPE));
	*wc = (struct ib_wc) {
		.wr_id = cqe->wr_id,
		.status = cqe->status,
		.opcode = cqe->opcode,
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		.ex.imm_data = cqe->ex.imm_data,
		.src_qp = cqe->src_qp,
		.wc_flags = cqe->wc_flags,
		.pkey_index = cqe->pkey_index,
		.sl = cqe->sl,
		.port_num = cqe->port_num,
		.network_hdr_type = cqe->network_hdr_type,
		.vlan_id = cqe->vlan_id,
	};
	memcpy(wc->smac, cqe->smac, ETH_ALEN);
}

/*
 * wc->qp, from the number the CQE carries. destroy_qp cleans a QP's
 * entries out of its kernel CQs (sroce_cq_clean()), so the number still
 * names the QP that completed; an entry of no QP is dropped all the same.
 */
static struct ib_qp *sroce_cqe_qp(struct ib_cq *ibcq, u32 qpn)
{
	struct sroce_qp *qp = sroce_qp_get(to_sdev(ibcq->device), qpn);

	if (!qp)
		return NULL;
	sroce_qp_put(qp);
	return &qp->ibqp;
}

/* Kernel CQs only: a user CQ is polled from its mapping. */
static int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue *q = &cq->queue;
	const struct sroce_cqe *cqe;
	unsigned long flags;
	u32 cons, pending;
	struct ib_qp *qp;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (!sroce_cq_pending(cq, &cons, &pending))
		pending = 0;
	for (; pending && n < num_entries; pending--, cons++) {
		cqe = sroce_queue_at(q, cons);
		qp = sroce_cqe_qp(ibcq, cqe->qp_num);
		if (!qp)
			continue;
		sroce_cqe_to_wc(cqe, &wc[n]);
		wc[n++].qp = qp;
	}
	/* The slots go back to the producer once read. */
	smp_store_release(&q->hdr->cons, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * Kernel CQs only: a process arms its CQ in the shared header itself. The
 * arm and sroce_cq_post() both run under the CQ lock, so a completion
 * cannot slip between the arm and the check for missed ones.
 */
static int sroce_req_notify_cq(struct ib_cq *ibcq,
			       enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue_hdr *hdr;
	unsigned long irqflags;
	u32 arm, cons, pending;
	int ret = 0;

	switch (flags & IB_CQ_SOLICITED_MASK) {
	case IB_CQ_SOLICITED:
		arm = SROCE_QUEUE_F_ARM_SOLICITED;
		break;
	case IB_CQ_NEXT_COMP:
		arm = SROCE_QUEUE_F_ARM_NEXT;
		break;
	default:
		return -EINVAL;
	}

	spin_lock_irqsave(&cq->lock, irqflags);
	hdr = cq->queue.hdr;
	WRITE_ONCE(hdr->flags, READ_ONCE(hdr->flags) | arm);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    sroce_cq_pending(cq, &cons, &pending) && pending)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

const struct ib_device_ops sroce_cq_ops = {
#ifdef SROCE_CREATE_CQ_TAKES_BUNDLE
	.create_cq = sroce_create_cq_bundle,
#else
	.create_cq = sroce_create_cq,
#endif
	.destroy_cq = sroce_destroy_cq,
	.poll_cq = sroce_poll_cq,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
};
