// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: creation with their rings, the state machine of modify_qp,
 * query_qp and destruction. The transports that move the rings' work
 * requests over the wire build on this.
 */
#include <linux/hash.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"
#include "device.h"
#include "limits.h"
#include "mcast.h"
#include "mr.h"
#include "msg.h"
#include "qp.h"
#include "req.h"
#include "resp.h"
#include "srq.h"
#include "ucontext.h"

/* Send queue entries start on a cache line (see struct sroce_send_wqe). */
#define SROCE_SEND_WQE_ALIGN	64

/*
 * Local write and on-demand paging are no QP access rights, but
 * applications pass the MR's flags along with the remote ones (rdma-core's
 * ODP tests do; mlx5 permits it): accept and ignore them.
 */
#define SROCE_QP_ACCESS		(IB_ACCESS_LOCAL_WRITE |		\
				 IB_ACCESS_REMOTE_WRITE |		\
				 IB_ACCESS_REMOTE_READ |		\
				 IB_ACCESS_REMOTE_ATOMIC |		\
				 SROCE_ACCESS_FLUSH_GLOBAL |		\
				 SROCE_ACCESS_FLUSH_PERSISTENT |	\
				 IB_ACCESS_ON_DEMAND)

/* IBTA field widths: 5-bit timers, 3-bit retry counters. */
#define SROCE_MAX_TIMER		31
#define SROCE_MAX_RETRY		7

static int sroce_check_cap(const struct ib_qp_cap *cap, bool has_srq)
{
	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE_DATA)
		return -EINVAL;
	/* With an SRQ the receive capacities are the SRQ's, not ours. */
	if (!has_srq && (cap->max_recv_wr > SROCE_MAX_QP_WR ||
			 cap->max_recv_sge > SROCE_MAX_SGE))
		return -EINVAL;
	return 0;
}

/**
 * sroce_qp_size() - check a QP's requested capacities and size its rings
 * @cap: what was asked for; on success, what the rings really hold
 * @has_srq: the QP receives through an SRQ and has no receive queue
 * @shape: the rings to allocate
 *
 * A send entry has room for its SGEs or its inline data, whichever is
 * larger, rounded up to a cache line; whatever the rounding adds is
 * reported as capacity, since the entry holds it. A ring holds at least one
 * entry, so that a QP asking for none still has a valid ring to map.
 *
 * Return: 0, or -EINVAL for a capacity beyond the device's limits, with
 * @cap unchanged.
 */
int sroce_qp_size(struct ib_qp_cap *cap, bool has_srq,
		  struct sroce_qp_shape *shape)
{
	const u32 sge = sizeof(struct sroce_sge);
	u32 room;
	int err;

	err = sroce_check_cap(cap, has_srq);
	if (err)
		return err;

	shape->sq_stride = ALIGN(sizeof(struct sroce_send_wqe) +
				 max(cap->max_send_sge * sge,
				     cap->max_inline_data),
				 SROCE_SEND_WQE_ALIGN);
	shape->sq_slots = sroce_queue_slots(max(cap->max_send_wr, 1U));
	room = shape->sq_stride - sizeof(struct sroce_send_wqe);
	cap->max_send_wr = shape->sq_slots;
	cap->max_send_sge = min_t(u32, room / sge, SROCE_MAX_SGE);
	cap->max_inline_data = min_t(u32, room, SROCE_MAX_INLINE_DATA);

	if (has_srq) {
		shape->rq_slots = 0;
		shape->rq_stride = 0;
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	shape->rq_stride = sizeof(struct sroce_recv_wqe) +
			   cap->max_recv_sge * sge;
	shape->rq_slots = sroce_queue_slots(max(cap->max_recv_wr, 1U));
	cap->max_recv_wr = shape->rq_slots;
	return 0;
}

/**
 * sroce_qpn_alloc() - give a QP its number
 * @xa: the device's QPs, an allocating xarray
 * @next: the device's cyclic cursor
 * @entry: what to file under the number
 * @qpn: the number
 *
 * Numbers are 24 bits and never 0 or 1, which name QP0 and QP1 on every
 * port. They are handed out cyclically, so a destroyed QP's number comes
 * back only after all others have been used: a late packet for it finds
 * no QP, or a QP old enough for its PSNs to have moved on.
 *
 * Return: 0, or -ENOMEM when every number is taken.
 */
int sroce_qpn_alloc(struct xarray *xa, u32 *next, void *entry, u32 *qpn)
{
	int ret;

	ret = xa_alloc_cyclic(xa, qpn, entry, XA_LIMIT(2, SROCE_24BIT_MAX),
			      next, GFP_KERNEL);
	if (ret == -EBUSY)
		return -ENOMEM;
	return ret < 0 ? ret : 0;
}

/*
 * A CQ the QP must have is ours; one it must not have is absent: an XRC
 * initiator only sends, an XRC target's receives complete on its SRQs'.
 */
static bool sroce_cq_ok(const struct ib_cq *cq, bool needed,
			const struct ib_device *dev)
{
	return needed ? cq && cq->device == dev : !cq;
}

static int sroce_check_init(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata)
{
	struct ib_device *dev = ibqp->device;
	bool xrc = false;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		/* ib_mad's, one per port; uverbs cannot ask for it. */
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	case IB_QPT_XRC_INI:
		xrc = true;
		break;
	case IB_QPT_XRC_TGT:
		/* The core makes it without udata, in the XRCD it names. */
		if (!init->xrcd || init->xrcd->device != dev)
			return -EINVAL;
		xrc = true;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	/*
	 * uverbs looks handles up in the caller's own context, but nothing
	 * in the core makes a kernel caller's CQs and SRQ ours.
	 */
	if (!sroce_cq_ok(init->send_cq, init->qp_type != IB_QPT_XRC_TGT, dev) ||
	    !sroce_cq_ok(init->recv_cq, !xrc, dev) ||
	    (init->srq && (xrc || init->srq->device != dev)))
		return -EINVAL;
	if (!udata)
		return 0;
	/* ABI version 1 has no create_qp request. */
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (udata->outlen < sizeof(struct sroce_create_qp_resp))
		return -EINVAL;
	return 0;
}

static int sroce_qp_init_rings(struct sroce_qp *qp,
			       const struct sroce_qp_shape *shape)
{
	int err;

	err = sroce_wq_init(&qp->sq, shape->sq_slots, shape->sq_stride);
	if (err || !shape->rq_slots)
		return err;
	err = sroce_wq_init(&qp->rq, shape->rq_slots, shape->rq_stride);
	if (err)
		sroce_wq_destroy(&qp->sq);
	return err;
}

/* Both rings, whether shared, half shared or private. */
static void sroce_qp_free_rings(struct sroce_qp *qp)
{
	sroce_wq_destroy(&qp->rq);
	sroce_wq_destroy(&qp->sq);
}

static int sroce_qp_share_rings(struct sroce_qp *qp, struct ib_udata *udata)
{
	struct ib_ucontext *ibuc =
		rdma_udata_to_uverbs_attr_bundle(udata)->context;
	struct sroce_create_qp_resp resp = {};
	int err;

	err = sroce_queue_share(&qp->sq.q, ibuc, &resp.sq);
	if (err)
		return err;
	if (sroce_qp_has_rq(qp)) {
		err = sroce_queue_share(&qp->rq.q, ibuc, &resp.rq);
		if (err)
			return err;
	}
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/* Numbers the QP and makes packets for that number find it. */
static int sroce_qp_publish(struct sroce_dev *sdev, struct sroce_qp *qp)
{
	if (qp->ibqp.qp_type != IB_QPT_GSI)
		return sroce_qpn_alloc(&sdev->qps, &sdev->next_qpn, qp->ref,
				       &qp->ibqp.qp_num);
	qp->ibqp.qp_num = 1;
	return xa_insert(&sdev->qps, 1, qp->ref, GFP_KERNEL);
}

/* After this no packet can find @qp, and none that did still holds it. */
static void sroce_qp_unpublish(struct sroce_dev *sdev, struct sroce_qp *qp)
{
	xa_erase(&sdev->qps, qp->ibqp.qp_num);
	sroce_qp_put(qp);
	wait_for_completion(&qp->ref->done);
}

/**
 * sroce_qp_get() - the QP a packet is for, referenced
 * @sdev: the device
 * @qpn: any 24-bit number
 *
 * Context: any.
 * Return: the QP, to be put with sroce_qp_put(), or NULL.
 */
struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp_ref *ref;
	struct sroce_qp *qp = NULL;

	rcu_read_lock();
	ref = xa_load(&sdev->qps, qpn);
	if (ref && refcount_inc_not_zero(&ref->count))
		qp = ref->qp;
	rcu_read_unlock();
	return qp;
}

static void sroce_qp_drained_work(struct work_struct *work);

/* The data path's half of a new QP; undone by sroce_qp_fini_runtime(). */
static int sroce_qp_init_runtime(struct sroce_qp *qp, struct ib_udata *udata,
				 const struct sroce_qp_shape *shape)
{
	u32 rwqe_bytes = qp->ibqp.srq ? to_ssrq(qp->ibqp.srq)->wq.q.stride :
			 shape->rq_stride;
	int err;

	/*
	 * An XRC target takes from whichever SRQ of its domain a request
	 * names: room for the largest WQE any may hold. An initiator takes
	 * none.
	 */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		rwqe_bytes = sizeof(struct sroce_recv_wqe) +
			     SROCE_MAX_SGE * sizeof(struct sroce_sge);
	else if (qp->ibqp.qp_type == IB_QPT_XRC_INI)
		rwqe_bytes = sizeof(struct sroce_recv_wqe);

	if (udata)
		qp->uc = to_suc(rdma_udata_to_uverbs_attr_bundle(udata)->context);
	else if (sroce_qp_is_ud(qp))
		qp->kav = kvcalloc(shape->sq_slots, sizeof(*qp->kav),
				   SROCE_GFP_OBJ);
	if (!qp->uc && sroce_qp_is_ud(qp) && !qp->kav)
		return -ENOMEM;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	INIT_WORK(&qp->err_work, sroce_qp_err_work);
	INIT_WORK(&qp->drained_work, sroce_qp_drained_work);
	qp->ref = kzalloc(sizeof(*qp->ref), GFP_KERNEL);
	if (!qp->ref)
		return -ENOMEM;
	qp->ref->qp = qp;
	refcount_set(&qp->ref->count, 1);
	refcount_set(&qp->ref->mem, 1);
	init_completion(&qp->ref->done);
	err = sroce_req_init(qp);
	if (err)
		goto err_ref;
	err = sroce_resp_init(qp, rwqe_bytes);
	if (err)
		goto err_req;
	err = sroce_resp_set_res(qp, 1);
	if (err)
		goto err_resp;
	spin_lock_bh(&qp->sq_lock);
	sroce_req_reset(qp);
	spin_unlock_bh(&qp->sq_lock);
	return 0;

err_resp:
	sroce_resp_fini(qp);
err_req:
	sroce_req_fini(qp);
err_ref:
	kfree(qp->ref);
	kvfree(qp->kav);
	return err;
}

/*
 * QPs destroyed while packets of theirs still sit in a qdisc or a driver's
 * ring. Those packets' destructor is this module's text, so each such QP
 * holds the module until its last packet is freed: rmmod fails with EBUSY
 * meanwhile. Only sroce_exit(), which runs when the devices' removal
 * destroyed the QPs, waits for the count to drain instead.
 */
static atomic_t sroce_qp_refs_left = ATOMIC_INIT(0);

/* Source of the QPs' @serial: 64 bits never come round. */
static atomic64_t sroce_qp_serials = ATOMIC64_INIT(0);

static void sroce_qp_ref_release(struct sroce_qp_ref *ref)
{
	if (!refcount_dec_and_test(&ref->mem))
		return;
	kfree_rcu(ref, rcu);
	if (atomic_dec_and_test(&sroce_qp_refs_left))
		wake_up_var(&sroce_qp_refs_left);
	/* The last thing done with the module's text in hand. */
	module_put(THIS_MODULE);
}

/**
 * sroce_qp_wait_packets() - wait until no destroyed QP's packet exists
 *
 * For the module's exit, when the devices are gone: the destructors of
 * those packets are the module's text. They run it under RCU, and the
 * module's memory is freed only after a grace period.
 */
void sroce_qp_wait_packets(void)
{
	wait_var_event(&sroce_qp_refs_left, !atomic_read(&sroce_qp_refs_left));
}

/*
 * err_work flushes through the requester's and the responder's memory,
 * and they may queue it (sroce_qp_error()): stop them, then err_work,
 * and only then free what it reads.
 */
static void sroce_qp_fini_runtime(struct sroce_qp *qp)
{
	sroce_req_stop(qp);
	sroce_resp_stop(qp);
	cancel_work_sync(&qp->err_work);
	cancel_work_sync(&qp->drained_work);
	sroce_req_fini(qp);
	sroce_resp_fini(qp);
	/* Released with the reference object, by the QP's last packet. */
	__module_get(THIS_MODULE);
	atomic_inc(&sroce_qp_refs_left);
	sroce_qp_ref_release(qp->ref);
	kvfree(qp->kav);
}

/*
 * A packet of the QP's is freed: sent, dropped, or received back. At the
 * low-water mark the requester and the responder, which may have stopped
 * at the high one, go on. It may be the module's last reference
 * (sroce_qp_ref_release()), and a qdisc may free it in process context:
 * the read-side section makes the module's free wait until it is out.
 */
static void sroce_qp_skb_done(struct sk_buff *skb)
{
	struct sroce_qp_ref *ref = skb_shinfo(skb)->destructor_arg;

	rcu_read_lock();
	if (atomic_dec_return(&ref->inflight) == SROCE_INFLIGHT_LOW &&
	    refcount_inc_not_zero(&ref->count)) {
		queue_work(sroce_wq, &ref->qp->send_work);
		queue_work(sroce_wq, &ref->qp->resp_work);
		sroce_qp_put(ref->qp);
	}
	sroce_qp_ref_release(ref);
	rcu_read_unlock();
}

/**
 * sroce_qp_own_skb() - count a packet against the QP until it is freed
 * @qp: the QP sending it
 * @skb: a packet from sroce_net_alloc(), not yet sent
 *
 * The QP has no socket to charge the packet to; its destructor finds the
 * QP's reference object through the shared info's destructor_arg. The
 * stack reads that field as a struct ubuf_info only through skb_zcopy(),
 * i.e. when SKBFL_ZEROCOPY_ENABLE is set, which sroce never sets (its
 * fragments are only SKBFL_SHARED_FRAG): clones share the shared info and
 * pskb_expand_head() copies it, and GSO's skb_segment() would carry it
 * over, all unread without the flag (checked in net/core/skbuff.c of
 * Linux 6.1 and 6.12); the other readers (af_packet in 6.1, xsk, sctp,
 * xen-netback, mhi_wwan) read it in skbs of their own.
 */
void sroce_qp_own_skb(struct sroce_qp *qp, struct sk_buff *skb)
{
	refcount_inc(&qp->ref->mem);
	atomic_inc(&qp->ref->inflight);
	skb_shinfo(skb)->destructor_arg = qp->ref;
	skb->destructor = sroce_qp_skb_done;
}

static int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			   struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_qp_shape shape;
	int err;

	err = sroce_check_init(ibqp, init, udata);
	if (err)
		return err;
	/* A target has neither queue: a one-slot send ring nobody posts to. */
	if (init->qp_type == IB_QPT_XRC_TGT)
		memset(&init->cap, 0, sizeof(init->cap));
	err = sroce_qp_size(&init->cap, init->srq ||
			    init->qp_type == IB_QPT_XRC_INI ||
			    init->qp_type == IB_QPT_XRC_TGT, &shape);
	if (err)
		return err;
	if (!sroce_obj_count_get(&sdev->qp_count, SROCE_MAX_QP, udata))
		return -ENOMEM;

	mutex_init(&qp->lock);
	qp->cap = init->cap;
	qp->sq_sig_type = init->sq_sig_type;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.cur_qp_state = IB_QPS_RESET;
	qp->attr.path_mig_state = IB_MIG_MIGRATED;
	qp->state = IB_QPS_RESET;
	err = sroce_qp_init_rings(qp, &shape);
	if (err)
		goto err_count;
	err = sroce_qp_init_runtime(qp, udata, &shape);
	if (err)
		goto err_rings;
	/* Published last: from here on packets can find the QP. */
	qp->serial = atomic64_inc_return(&sroce_qp_serials);
	err = sroce_qp_publish(sdev, qp);
	if (err)
		goto err_runtime;
	/*
	 * A UD QP has no peer to mix in: a hash of its own number spreads
	 * UD flows over ECMP paths, as rxe does. RC and UC get theirs at RTR.
	 */
	qp->sport = rdma_flow_label_to_udp_sport(hash_32(ibqp->qp_num, 20));
	if (udata) {
		err = sroce_qp_share_rings(qp, udata);
		if (err)
			goto err_qpn;
	}
	return 0;

err_qpn:
	sroce_qp_unpublish(sdev, qp);
err_runtime:
	sroce_qp_fini_runtime(qp);
err_rings:
	sroce_qp_free_rings(qp);
err_count:
	atomic_dec(&sdev->qp_count);
	return err;
}

static bool sroce_attr_out_of_range(const struct ib_qp_attr *attr, int mask)
{
	return (mask & IB_QP_PORT && attr->port_num != 1) ||
	       (mask & IB_QP_PKEY_INDEX &&
		attr->pkey_index >= SROCE_PKEY_TBL_LEN) ||
	       (mask & IB_QP_PATH_MTU &&
		(attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096)) ||
	       (mask & IB_QP_MAX_QP_RD_ATOMIC &&
		attr->max_rd_atomic > SROCE_MAX_QP_RD_ATOM) ||
	       (mask & IB_QP_MAX_DEST_RD_ATOMIC &&
		attr->max_dest_rd_atomic > SROCE_MAX_QP_RD_ATOM) ||
	       (mask & IB_QP_TIMEOUT && attr->timeout > SROCE_MAX_TIMER) ||
	       (mask & IB_QP_RETRY_CNT && attr->retry_cnt > SROCE_MAX_RETRY) ||
	       (mask & IB_QP_RNR_RETRY && attr->rnr_retry > SROCE_MAX_RETRY) ||
	       (mask & IB_QP_MIN_RNR_TIMER &&
		attr->min_rnr_timer > SROCE_MAX_TIMER) ||
	       (mask & IB_QP_RQ_PSN && attr->rq_psn > SROCE_24BIT_MAX) ||
	       (mask & IB_QP_SQ_PSN && attr->sq_psn > SROCE_24BIT_MAX) ||
	       (mask & IB_QP_DEST_QPN && attr->dest_qp_num > SROCE_24BIT_MAX) ||
	       (mask & IB_QP_ACCESS_FLAGS &&
		attr->qp_access_flags & ~SROCE_QP_ACCESS);
}

/**
 * sroce_qp_check_attr() - may modify_qp apply these attributes?
 * @qp: the QP, whose state and type decide what is legal
 * @attr: the attributes
 * @mask: which of them are given (IB_QP_*)
 *
 * The core's state table decides which transitions and which attributes
 * for each are legal; this adds the device's own ranges.
 *
 * Return: 0, -EINVAL for an illegal transition, mask or value, or
 * -EOPNOTSUPP for alternate paths, path migration and rate limits.
 */
int sroce_qp_check_attr(const struct sroce_qp *qp,
			const struct ib_qp_attr *attr, int mask)
{
	enum ib_qp_state cur = qp->attr.qp_state;
	enum ib_qp_state next = mask & IB_QP_STATE ? attr->qp_state : cur;

	/*
	 * ib_modify_qp_is_ok() indexes its table with the new state unchecked;
	 * uverbs bounds it, kernel callers need not. And the caller's idea of
	 * the current state must be right.
	 */
	if (next > IB_QPS_ERR ||
	    (mask & IB_QP_CUR_STATE && attr->cur_qp_state != cur))
		return -EINVAL;
	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask))
		return -EINVAL;
	if (mask & (IB_QP_ALT_PATH | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	/* Without an alternate path, "migrated" is the only state. */
	if (mask & IB_QP_PATH_MIG_STATE &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EOPNOTSUPP;
	if (sroce_attr_out_of_range(attr, mask))
		return -EINVAL;
	if (mask & IB_QP_AV)
		return sroce_av_check(&attr->ah_attr);
	return 0;
}

/*
 * The path and the UDP source port derived from it are read by both
 * halves of the data path, which run from RTR on; SQD to SQD may change
 * them under traffic (the responder keeps answering): under both locks.
 */
static void sroce_qp_set_path(struct sroce_qp *qp,
			      const struct rdma_ah_attr *ah_attr)
{
	spin_lock_bh(&qp->sq_lock);
	spin_lock(&qp->rq_lock);
	sroce_av_set(&qp->av, ah_attr);
	if (!sroce_qp_is_ud(qp))
		qp->sport = rdma_get_udp_sport(qp->av.flow_label,
					       qp->ibqp.qp_num,
					       qp->attr.dest_qp_num);
	spin_unlock(&qp->rq_lock);
	spin_unlock_bh(&qp->sq_lock);
}

/* Copies what sroce_qp_check_attr() accepted; the state is separate. */
static void sroce_qp_apply(struct sroce_qp *qp, const struct ib_qp_attr *attr,
			   int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV)
		sroce_qp_set_path(qp, &attr->ah_attr);
}

/*
 * Completes every entry of @wq with a flush error on @ibcq. Both WQE kinds
 * start with wr_id, so one header buffer serves.
 */
static void sroce_qp_flush_wq(struct sroce_qp *qp, struct sroce_wq *wq,
			      struct ib_cq *ibcq, bool send)
{
	struct sroce_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
		.port_num = 1,
	};
	union {
		struct sroce_send_wqe send;
		struct sroce_recv_wqe recv;
	} wqe;
	u32 budget = wq->q.slots;
	int ret = 0;

	/*
	 * At most one ring's worth: another thread of the process may keep
	 * posting while we flush, and must not keep this call in the kernel.
	 */
	while (budget-- && (ret = sroce_wq_take(wq, &wqe, sizeof(wqe))) > 0) {
		cqe.wr_id = send ? wqe.send.wr_id : wqe.recv.wr_id;
		cqe.opcode = send ? sroce_msg_wc_opcode(wqe.send.opcode) :
				    IB_WC_RECV;
		/*
		 * A full CQ loses the completion and reports its own overrun;
		 * the WQE is flushed all the same.
		 */
		sroce_cq_post(to_scq(ibcq), &cqe, false);
	}
	if (ret < 0)
		ibdev_warn_ratelimited(qp->ibqp.device,
				       "QP %u: corrupt %s queue index, nothing flushed\n",
				       qp->ibqp.qp_num,
				       send ? "send" : "receive");
}

/* The state the data path sees; both halves agree under both locks. */
static void sroce_qp_set_state(struct sroce_qp *qp, enum ib_qp_state state)
{
	spin_lock_bh(&qp->sq_lock);
	spin_lock(&qp->rq_lock);
	WRITE_ONCE(qp->state, state);
	spin_unlock(&qp->rq_lock);
	spin_unlock_bh(&qp->sq_lock);
}

/*
 * Completes every WQE still queued with a flush error. The requester and
 * the responder may be running in softirq on another CPU: each ring is
 * flushed under its half's lock. An SRQ's WQEs belong to the SRQ: a QP's
 * error does not flush them.
 */
static void sroce_qp_flush(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	spin_lock_bh(&qp->sq_lock);
	del_timer(&qp->req.timer);
	del_timer(&qp->req.rnr_timer);
	if (qp->ibqp.send_cq)
		sroce_qp_flush_wq(qp, &qp->sq, qp->ibqp.send_cq, true);
	sroce_req_reset(qp);
	spin_unlock_bh(&qp->sq_lock);

	sroce_resp_flush(qp);
	if (sroce_qp_has_rq(qp)) {
		spin_lock_bh(&qp->rq_lock);
		sroce_qp_flush_wq(qp, &qp->rq, qp->ibqp.recv_cq, false);
		spin_unlock_bh(&qp->rq_lock);
	}
}

/**
 * sroce_qp_error() - the data path found an error the QP cannot go on from
 * @qp: the QP
 *
 * The data path runs under one of the QP's spinlocks, in softirq; moving
 * the QP's attributes and flushing its queues wants the QP's mutex. The
 * state changes at once, so that nothing more is sent or accepted; the
 * rest is left to a worker.
 *
 * Context: any.
 */
void sroce_qp_error(struct sroce_qp *qp)
{
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	queue_work(sroce_wq, &qp->err_work);
}

/* Makes the attributes say what the data path decided. Under qp->lock. */
static void sroce_qp_sync_error(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (READ_ONCE(qp->state) != IB_QPS_ERR)
		return;
	qp->attr.qp_state = IB_QPS_ERR;
	qp->attr.cur_qp_state = IB_QPS_ERR;
	sroce_qp_flush(qp);
}

void sroce_qp_err_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, err_work);

	mutex_lock(&qp->lock);
	sroce_qp_sync_error(qp);
	mutex_unlock(&qp->lock);
}

void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

static void sroce_qp_drained_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp,
					   drained_work);

	might_sleep();
	sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/**
 * sroce_qp_sq_drained() - tell the consumer its send queue is drained
 * @qp: the QP, in SQD
 *
 * A kernel consumer's handler may post or sleep, so it hears from a
 * worker, not inside the requester's lock; uverbs' handler only queues.
 *
 * Context: sq_lock held.
 */
void sroce_qp_sq_drained(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);

	if (sroce_qp_is_kernel(qp))
		queue_work(sroce_wq, &qp->drained_work);
	else
		sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

static void sroce_qp_to_reset(struct sroce_qp *qp)
{
	sroce_qp_set_state(qp, IB_QPS_RESET);
	spin_lock_bh(&qp->sq_lock);
	del_timer(&qp->req.timer);
	del_timer(&qp->req.rnr_timer);
	sroce_wq_drop_all(&qp->sq);
	sroce_req_reset(qp);
	spin_unlock_bh(&qp->sq_lock);
	spin_lock_bh(&qp->rq_lock);
	if (sroce_qp_has_rq(qp))
		sroce_wq_drop_all(&qp->rq);
	sroce_resp_reset(qp);
	spin_unlock_bh(&qp->rq_lock);
}

/*
 * The effects of a transition, after its attributes are set. A drained
 * notice is asked for with each RTS to SQD transition, not remembered: it
 * comes once the message in progress and those before it completed.
 */
static void sroce_qp_enter(struct sroce_qp *qp, const struct ib_qp_attr *attr,
			   int mask)
{
	enum ib_qp_state cur = qp->attr.qp_state;
	enum ib_qp_state next = attr->qp_state;

	qp->attr.qp_state = next;
	qp->attr.cur_qp_state = next;
	switch (next) {
	case IB_QPS_RESET:
		sroce_qp_to_reset(qp);
		break;
	case IB_QPS_RTR:
		if (cur == IB_QPS_RTR)
			break;
		spin_lock_bh(&qp->rq_lock);
		sroce_resp_start(qp);
		spin_unlock_bh(&qp->rq_lock);
		sroce_qp_set_state(qp, next);
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR) {
			spin_lock_bh(&qp->sq_lock);
			sroce_req_start(qp);
			spin_unlock_bh(&qp->sq_lock);
		}
		sroce_qp_set_state(qp, next);
		/* Anything posted before RTS goes now. */
		sroce_req_kick(qp);
		break;
	case IB_QPS_ERR:
		sroce_qp_set_state(qp, next);
		sroce_qp_flush(qp);
		break;
	case IB_QPS_SQD:
		sroce_qp_set_state(qp, next);
		if (cur == IB_QPS_SQD) {
			/* Timeout and retry counts may have changed. */
			spin_lock_bh(&qp->sq_lock);
			sroce_req_set_retry(qp);
			spin_unlock_bh(&qp->sq_lock);
			break;
		}
		spin_lock_bh(&qp->sq_lock);
		qp->req.sqd_notify = mask & IB_QP_EN_SQD_ASYNC_NOTIFY &&
				     attr->en_sqd_async_notify;
		spin_unlock_bh(&qp->sq_lock);
		/* The message in progress finishes; then, the event. */
		sroce_req_kick(qp);
		break;
	default:
		sroce_qp_set_state(qp, next);
		break;
	}
}

static int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			   int mask, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err;

	/* ABI version 1 has no modify_qp request. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	mutex_lock(&qp->lock);
	sroce_qp_sync_error(qp);
	err = sroce_qp_check_attr(qp, attr, mask);
	/* Only a legal modify may drop the answers the table holds. */
	if (!err && mask & IB_QP_MAX_DEST_RD_ATOMIC)
		err = sroce_resp_set_res(qp, attr->max_dest_rd_atomic);
	if (!err) {
		sroce_qp_apply(qp, attr, mask);
		if (mask & IB_QP_STATE)
			sroce_qp_enter(qp, attr, mask);
	}
	mutex_unlock(&qp->lock);
	return err;
}

static int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	mutex_lock(&qp->lock);
	sroce_qp_sync_error(qp);
	*attr = qp->attr;
	/* Only RC and UC have a path, and only once RTR gave them one. */
	if (qp->av.net_type)
		sroce_av_get(&qp->av, &attr->ah_attr);
	mutex_unlock(&qp->lock);
	attr->cap = qp->cap;

	memset(init, 0, sizeof(*init));
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sq_sig_type;
	init->qp_type = ibqp->qp_type;
	return 0;
}

static int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);

	/* Nothing runs for a QP in RESET, nor re-arms a timer for it. */
	sroce_qp_set_state(qp, IB_QPS_RESET);
	if (ibqp->qp_type == IB_QPT_UD)
		sroce_mcast_detach_qp(qp);
	sroce_qp_unpublish(sdev, qp);
	sroce_qp_fini_runtime(qp);
	/*
	 * Stopped: no completion of the QP's can come after this. An XRC
	 * target's receives were its SRQs' (they stay, as the WQEs were).
	 */
	if (ibqp->send_cq)
		sroce_cq_clean(to_scq(ibqp->send_cq), ibqp->qp_num);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		sroce_cq_clean(to_scq(ibqp->recv_cq), ibqp->qp_num);
	sroce_qp_free_rings(qp);
	mutex_destroy(&qp->lock);
	atomic_dec(&sdev->qp_count);
	return 0;
}

const struct ib_device_ops sroce_qp_ops = {
	.create_qp = sroce_create_qp,
	.modify_qp = sroce_modify_qp,
	.query_qp = sroce_query_qp,
	.destroy_qp = sroce_destroy_qp,

	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
};
