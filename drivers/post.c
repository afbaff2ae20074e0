// SPDX-License-Identifier: GPL-2.0
/*
 * The post verbs. A process posts by writing its QP's shared rings; the
 * only post_send it makes is the doorbell, with no work requests, when
 * the kernel said it stopped reading the send ring. Kernel consumers
 * (ib_mad's QP1, rdma_cm's users) call ib_post_send() and ib_post_recv()
 * with lists of work requests: those are written into the QP's rings,
 * which are then the kernel's own, in the same format a process writes,
 * so that the requester and the responder need not know who posted.
 */
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "ah.h"
#include "post.h"
#include "qp.h"
#include "req.h"
#include "srq.h"

/* The kernel's WR opcodes and send flags are uverbs' numbers for these. */
static bool sroce_post_opcode_ok(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		return true;
	default:
		/* No memory windows, no signature MRs, no LSO. */
		return false;
	}
}

#define SROCE_POST_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED |	\
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/*
 * Inline data is copied from the SGEs' addresses, which for a kernel
 * consumer are kernel virtual addresses (sroce does virtual DMA).
 */
static int sroce_post_inline(const struct sroce_qp *qp,
			     const struct ib_send_wr *wr,
			     struct sroce_send_wqe *w)
{
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->cap.max_inline_data - len)
			return -EINVAL;
		memcpy(w->inline_data + len, (void *)(uintptr_t)sge->addr,
		       sge->length);
		len += sge->length;
	}
	w->inline_len = len;
	return 0;
}

static void sroce_post_sges(struct sroce_sge *dst, const struct ib_sge *src,
			    int n)
{
	int i;

	for (i = 0; i < n; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
}

/* The parts of a send WQE that depend on the opcode or the QP type. */
static void sroce_post_send_wr(struct sroce_qp *qp,
			       const struct ib_send_wr *wr,
			       struct sroce_send_wqe *w, u32 slot)
{
	const struct ib_atomic_wr *atomic;
	const struct ib_rdma_wr *rdma;
	const struct ib_reg_wr *reg;
	const struct ib_ud_wr *ud;

	w->ex.imm_data = wr->ex.imm_data;
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		rdma = rdma_wr(wr);
		w->wr.rdma.remote_addr = rdma->remote_addr;
		w->wr.rdma.rkey = rdma->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		atomic = atomic_wr(wr);
		w->wr.atomic.remote_addr = atomic->remote_addr;
		w->wr.atomic.compare_add = atomic->compare_add;
		w->wr.atomic.swap = atomic->swap;
		w->wr.atomic.rkey = atomic->rkey;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR:
		/*
		 * Kernel QPs only, so no uapi layout: the new key names the
		 * MR by its index, and the rights ride in the rdma member.
		 */
		reg = reg_wr(wr);
		w->ex.invalidate_rkey = reg->key;
		w->wr.rdma.remote_addr = reg->access;
		break;
	default:
		break;
	}

	if (sroce_qp_is_ud(qp)) {
		ud = ud_wr(wr);
		w->wr.ud.remote_qpn = ud->remote_qpn;
		w->wr.ud.remote_qkey = ud->remote_qkey;
		/* Copied: the requester reads it when it takes the WQE. */
		qp->kav[slot] = to_sah(ud->ah)->av;
	}
}

/* One kernel send WR into the slot at @prod. */
static int sroce_post_send_one(struct sroce_qp *qp,
			       const struct ib_send_wr *wr, u32 prod)
{
	struct sroce_send_wqe *w = sroce_wq_slot(&qp->sq, prod);
	int err;

	if (!w)
		return -ENOMEM;
	if (!sroce_post_opcode_ok(wr->opcode) ||
	    wr->send_flags & ~SROCE_POST_SEND_FLAGS || wr->num_sge < 0 ||
	    (sroce_qp_is_ud(qp) && !ud_wr(wr)->ah))
		return -EINVAL;

	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	if (wr->send_flags & IB_SEND_INLINE) {
		err = sroce_post_inline(qp, wr, w);
		if (err)
			return err;
	} else {
		if (wr->num_sge > qp->cap.max_send_sge)
			return -EINVAL;
		w->num_sge = wr->num_sge;
		sroce_post_sges(w->sge, wr->sg_list, wr->num_sge);
	}
	sroce_post_send_wr(qp, wr, w, sroce_queue_slot(prod, qp->sq.q.slots));
	return 0;
}

/*
 * Runs the requester for what was just posted. ib_mad posts with
 * interrupts disabled, where the requester's bottom-half lock may not be
 * taken: the worker sends then.
 */
static void sroce_post_kick(struct sroce_qp *qp)
{
	u8 state = READ_ONCE(qp->state);

	if (state == IB_QPS_ERR)
		queue_work(sroce_wq, &qp->err_work);
	else if (state < IB_QPS_RTS)
		return;	/* the move to RTS sends it */
	else if (irqs_disabled() || in_hardirq())
		queue_work(sroce_wq, &qp->send_work);
	else
		sroce_req_kick(qp);
}

static int sroce_post_send_kernel(struct sroce_qp *qp,
				  const struct ib_send_wr *wr,
				  const struct ib_send_wr **bad_wr)
{
	unsigned long flags;
	int err = 0;
	u32 prod;

	if (READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq.post_lock, flags);
	prod = READ_ONCE(qp->sq.q.hdr->prod);
	for (; wr; wr = wr->next, prod++) {
		err = sroce_post_send_one(qp, wr, prod);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	sroce_wq_publish(&qp->sq, prod);
	spin_unlock_irqrestore(&qp->sq.post_lock, flags);
	sroce_post_kick(qp);
	return err;
}

/**
 * sroce_post_send() - post send WRs (kernel) or ring the doorbell (process)
 * @ibqp: the QP
 * @wr: a kernel consumer's list; NULL for a process's doorbell
 * @bad_wr: the first WR not posted, on error
 *
 * Context: any, for a kernel QP; process, for the doorbell.
 * Return: 0, or -EINVAL for a malformed WR or a QP in RESET, -ENOMEM for a
 * full send queue, -EOPNOTSUPP for WRs on a process's QP (its ring is the
 * interface). The WRs before @bad_wr are posted.
 */
static int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	/* uverbs may name an XRC target; it has no send queue to post to. */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return wr ? -EINVAL : 0;
	}
	if (sroce_qp_is_kernel(qp))
		return sroce_post_send_kernel(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		queue_work(sroce_wq, &qp->err_work);
	else
		sroce_req_kick(qp);
	return 0;
}

/* Receive WRs into a kernel-owned receive ring; 0 or the first error. */
static int sroce_post_recv_ring(struct sroce_wq *wq, u32 max_sge,
				const struct ib_recv_wr *wr,
				const struct ib_recv_wr **bad_wr)
{
	struct sroce_recv_wqe *w;
	unsigned long flags;
	int err = 0;
	u32 prod;

	spin_lock_irqsave(&wq->post_lock, flags);
	prod = READ_ONCE(wq->q.hdr->prod);
	for (; wr; wr = wr->next, prod++) {
		w = sroce_wq_slot(wq, prod);
		err = !w ? -ENOMEM :
		      wr->num_sge < 0 || wr->num_sge > max_sge ? -EINVAL : 0;
		if (err) {
			*bad_wr = wr;
			break;
		}
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		w->reserved = 0;
		sroce_post_sges(w->sge, wr->sg_list, wr->num_sge);
	}
	sroce_wq_publish(wq, prod);
	spin_unlock_irqrestore(&wq->post_lock, flags);
	return err;
}

/**
 * sroce_post_recv() - post receive WRs of a kernel consumer
 * @ibqp: a kernel QP with its own receive queue
 * @wr: the list
 * @bad_wr: the first WR not posted, on error
 *
 * Context: any.
 * Return: 0, or -EINVAL (malformed WR, QP in RESET or with an SRQ, or a
 * process's QP), -ENOMEM (the queue is full).
 */
static int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err;

	if (!sroce_qp_is_kernel(qp) || !sroce_qp_has_rq(qp) ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = sroce_post_recv_ring(&qp->rq, qp->cap.max_recv_sge, wr, bad_wr);
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		queue_work(sroce_wq, &qp->err_work);
	return err;
}

/**
 * sroce_post_srq_recv() - post receive WRs to a kernel consumer's SRQ
 * @ibsrq: the SRQ
 * @wr: the list
 * @bad_wr: the first WR not posted, on error
 *
 * Context: any.
 * Return: 0, or -EINVAL (malformed WR, or a process's SRQ, whose ring is
 * its interface), -ENOMEM (the queue is full).
 */
static int sroce_post_srq_recv(struct ib_srq *ibsrq,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (!srq->kernel) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return sroce_post_recv_ring(&srq->wq, srq->max_sge, wr, bad_wr);
}

const struct ib_device_ops sroce_post_ops = {
	.post_send = sroce_post_send,
	.post_recv = sroce_post_recv,
	.post_srq_recv = sroce_post_srq_recv,
};
