// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues: a ring of receive WQEs that several QPs draw
 * from, and its limit.
 */
#include <linux/minmax.h>
#include <linux/rcupdate.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "device.h"
#include "limits.h"
#include "qp.h"
#include "srq.h"

static int sroce_check_srq_init(const struct ib_srq_init_attr *init,
				struct ib_udata *udata)
{
	const struct ib_srq_attr *attr = &init->attr;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	/* The core set the XRC SRQ's domain and CQ; they must be ours. */
	if (init->srq_type == IB_SRQT_XRC &&
	    (!init->ext.cq || !init->ext.xrc.xrcd ||
	     init->ext.cq->device != init->ext.xrc.xrcd->device))
		return -EINVAL;
	if (attr->max_wr > SROCE_MAX_SRQ_WR || attr->max_sge > SROCE_MAX_SGE ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (!udata)
		return 0;	/* a kernel SRQ: posted with ib_post_srq_recv() */
	/* ABI version 1 has no create_srq request. */
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (udata->outlen < sizeof(struct sroce_create_srq_resp))
		return -EINVAL;
	return 0;
}

static int sroce_srq_share(struct sroce_srq *srq, struct ib_udata *udata)
{
	struct ib_ucontext *ibuc =
		rdma_udata_to_uverbs_attr_bundle(udata)->context;
	struct sroce_create_srq_resp resp = {};
	int err;

	err = sroce_queue_share(&srq->wq.q, ibuc, &resp.srq);
	if (err)
		return err;
	resp.srq_num = srq->srq_num;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

static int sroce_srq_num_alloc(struct sroce_dev *sdev, struct sroce_srq *srq)
{
	int ret;

	ret = xa_alloc_cyclic(&sdev->srqs, &srq->srq_num, srq,
			      XA_LIMIT(1, SROCE_24BIT_MAX), &sdev->next_srqn,
			      GFP_KERNEL);
	if (ret == -EBUSY)
		return -ENOMEM;
	return ret < 0 ? ret : 0;
}

static void sroce_srq_limit_work(struct work_struct *work);

/**
 * sroce_srq_init() - set up an SRQ's ring and state
 * @srq: the SRQ, zeroed by the core
 * @max_wr: entries asked for, checked by the caller
 * @max_sge: SGEs each entry holds
 * @limit: the limit to arm, 0 for none
 * @kernel: whether a kernel consumer owns it
 *
 * Return: 0 or a negative errno, with nothing allocated on failure.
 */
int sroce_srq_init(struct sroce_srq *srq, u32 max_wr, u32 max_sge, u32 limit,
		   bool kernel)
{
	mutex_init(&srq->lock);
	spin_lock_init(&srq->wq_lock);
	INIT_WORK(&srq->limit_work, sroce_srq_limit_work);
	srq->max_wr = sroce_queue_slots(max(max_wr, 1U));
	srq->max_sge = max_sge;
	srq->limit = limit;
	srq->kernel = kernel;
	return sroce_wq_init(&srq->wq, srq->max_wr,
			     sizeof(struct sroce_recv_wqe) +
			     max_sge * sizeof(struct sroce_sge));
}

static int sroce_create_srq(struct ib_srq *ibsrq,
			    struct ib_srq_init_attr *init,
			    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	int err;

	err = sroce_check_srq_init(init, udata);
	if (err)
		return err;
	if (!sroce_obj_count_get(&sdev->srq_count, SROCE_MAX_SRQ, udata))
		return -ENOMEM;

	err = sroce_srq_init(srq, attr->max_wr, attr->max_sge, attr->srq_limit,
			     !udata);
	if (err)
		goto err_count;
	err = sroce_srq_num_alloc(sdev, srq);
	if (err)
		goto err_wq;
	if (udata) {
		err = sroce_srq_share(srq, udata);
		if (err)
			goto err_num;
	}

	/* uverbs answers with it; initiators name it in their XRCETHs. */
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srq_num;
	attr->max_wr = srq->max_wr;
	return 0;

err_num:
	xa_erase(&sdev->srqs, srq->srq_num);
err_wq:
	sroce_wq_destroy(&srq->wq);
err_count:
	atomic_dec(&sdev->srq_count);
	return err;
}

/*
 * Only the limit can change: resizing would move a ring the process has
 * mapped and is posting to.
 */
static int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	/* max_wr is fixed at creation: no lock needed to read it. */
	if (attr->srq_limit > srq->max_wr)
		return -EINVAL;

	mutex_lock(&srq->lock);
	WRITE_ONCE(srq->limit, attr->srq_limit);
	mutex_unlock(&srq->lock);
	return 0;
}

static int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	mutex_lock(&srq->lock);
	attr->srq_limit = READ_ONCE(srq->limit);
	mutex_unlock(&srq->lock);
	return 0;
}

static void sroce_srq_report_limit(struct sroce_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/*
 * The responder takes WQEs with its QP's lock held; a kernel consumer's
 * handler may post receives to this SRQ or sleep, so it runs from here.
 */
static void sroce_srq_limit_work(struct work_struct *work)
{
	struct sroce_srq *srq = container_of(work, struct sroce_srq,
					     limit_work);

	might_sleep();
	sroce_srq_report_limit(srq);
}

/*
 * The limit is armed while non-zero: the first take that leaves fewer
 * WQEs than it fires the event once and disarms it (11.2.3.5).
 */
static void sroce_srq_check_limit(struct sroce_srq *srq, u32 left)
{
	u32 limit = READ_ONCE(srq->limit);

	if (!limit || left >= limit || cmpxchg(&srq->limit, limit, 0) != limit)
		return;
	if (srq->kernel)
		queue_work(sroce_wq, &srq->limit_work);
	else
		sroce_srq_report_limit(srq);
}

/**
 * sroce_srq_take() - take the oldest WQE of an SRQ for a QP's message
 * @srq: the SRQ
 * @wqe: where the WQE goes
 * @len: its size
 *
 * Context: softirq or process.
 * Return: as sroce_wq_take().
 */
int sroce_srq_take(struct sroce_srq *srq, void *wqe, size_t len)
{
	u32 left = 0;
	int ret;

	spin_lock_bh(&srq->wq_lock);
	ret = sroce_wq_take(&srq->wq, wqe, len);
	if (ret > 0)
		left = sroce_queue_used(READ_ONCE(srq->wq.q.hdr->prod),
					srq->wq.cons);
	spin_unlock_bh(&srq->wq_lock);
	if (ret > 0)
		sroce_srq_check_limit(srq, left);
	return ret;
}

/**
 * sroce_srq_xrc_get() - the XRC SRQ an XRC request names
 * @sdev: the device
 * @srqn: the XRCETH's SRQ number
 * @xrcd: the XRC domain of the target QP the request came to
 *
 * A target QP serves the SRQs of its own domain only: any other number,
 * a basic SRQ's included, is as good as none.
 *
 * Context: an RCU read-side section (the receive softirq, or BH off),
 * which the SRQ outlives: sroce_destroy_srq() waits for it.
 * Return: the SRQ or NULL.
 */
struct sroce_srq *sroce_srq_xrc_get(struct sroce_dev *sdev, u32 srqn,
				    const struct ib_xrcd *xrcd)
{
	struct sroce_srq *srq;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held(),
			 "sroce XRC SRQ looked up outside RCU");
	srq = xa_load(&sdev->srqs, srqn);
	if (!srq || srq->ibsrq.srq_type != IB_SRQT_XRC ||
	    srq->ibsrq.ext.xrc.xrcd != xrcd)
		return NULL;
	return srq;
}

static int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);

	xa_erase(&sdev->srqs, srq->srq_num);
	/*
	 * Target QPs find an XRC SRQ by number for each packet, under RCU
	 * (sroce_srq_xrc_get()); the core frees it as soon as this returns.
	 */
	if (ibsrq->srq_type == IB_SRQT_XRC)
		synchronize_rcu();
	/* No QP uses it any more (the core checks): nothing queues this. */
	cancel_work_sync(&srq->limit_work);
	sroce_wq_destroy(&srq->wq);
	mutex_destroy(&srq->lock);
	atomic_dec(&sdev->srq_count);
	return 0;
}

const struct ib_device_ops sroce_srq_ops = {
	.create_srq = sroce_create_srq,
	.modify_srq = sroce_modify_srq,
	.query_srq = sroce_query_srq,
	.destroy_srq = sroce_destroy_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
};
