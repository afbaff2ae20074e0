// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: completion queues.
 *
 * The kernel writes completions into a ring this process maps; polling
 * and arming are loads and stores on that mapping, never a system call.
 * Completion events still come the usual way: the kernel raises one on
 * the CQ's completion channel when a completion meets the arm.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/sroce-abi.h>

#include "sroce.h"

/**
 * struct sroce_cq - a CQ and its mapped ring
 * @vcq: what libibverbs hands the application, the extended CQ included
 * @lock: serialises pollers, and keeps them and arming off the ring while
 *	resize swaps it; held from ibv_start_poll() to ibv_end_poll()
 * @queue: the ring; this process writes only its consumer index and the
 *	arm flags
 * @cur: the entry the extended API's read_*() calls look at, or NULL
 * @cur_idx: its index
 * @parent_domain: the parent domain the CQ was created with, held until
 *	it is destroyed, or NULL
 */
struct sroce_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct sroce_uqueue queue;
	const struct sroce_cqe *cur;
	uint32_t cur_idx;
	struct sroce_pd *parent_domain;
};

static struct sroce_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, vcq.cq);
}

struct sroce_ucreate_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct sroce_create_cq_resp drv;
};

struct sroce_ucreate_cq_ex_resp {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct sroce_create_cq_resp drv;
};

struct sroce_uresize_cq_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct sroce_resize_cq_resp drv;
};

static int sroce_cq_map(struct sroce_uqueue *q, struct ibv_context *ibctx,
			const struct sroce_queue_info *info)
{
	if (info->stride < sizeof(struct sroce_cqe))
		return EPROTO;
	return sroce_uqueue_map(q, ibctx, info);
}

/*
 * After the kernel created the CQ: map its ring and ready the lock. On
 * failure the CQ is destroyed again.
 */
static int sroce_cq_setup(struct sroce_cq *cq,
			  const struct sroce_queue_info *info)
{
	int ret;

	ret = sroce_cq_map(&cq->queue, cq->vcq.cq.context, info);
	if (ret)
		goto err_destroy;
	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;
	return 0;

err_unmap:
	sroce_uqueue_unmap(&cq->queue);
err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	return ret;
}

static struct ibv_cq *sroce_create_cq(struct ibv_context *ibctx, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct sroce_ucreate_cq_resp resp = {};
	struct sroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				NULL, 0, &resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = sroce_cq_setup(cq, &resp.drv.cq);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	return &cq->vcq.cq;
}

static int sroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int ret;

	/* On failure the CQ is still live in the kernel: keep it. */
	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	sroce_uqueue_unmap(&cq->queue);
	pthread_spin_destroy(&cq->lock);
	sroce_parent_domain_put(cq->parent_domain);
	free(cq);
	return 0;
}

/*
 * The CQE carries the kernel's IB_WC_* flags (sroce-abi.h), which number
 * invalidation and checksum differently from libibverbs.
 */
static unsigned int sroce_wc_flags(uint32_t flags)
{
	unsigned int out = 0;

	if (flags & SROCE_WC_GRH)
		out |= IBV_WC_GRH;
	if (flags & SROCE_WC_WITH_IMM)
		out |= IBV_WC_WITH_IMM;
	if (flags & SROCE_WC_WITH_INVALIDATE)
		out |= IBV_WC_WITH_INV;
	if (flags & SROCE_WC_IP_CSUM_OK)
		out |= IBV_WC_IP_CSUM_OK;
	return out;
}

/*
 * wc.sl. RoCE has no service level on the wire (a VLAN tag's priority
 * comes from the traffic class, not from an SL), so the CQE's sl is 0;
 * the kernel's consumers get that, and the frame's type in
 * ib_wc.network_hdr_type, as mlx5_ib gives them. For a UD
 * receive a process gets what mlx5's provider gives it: the sl bits of
 * mlx5's CQE, which on RoCE carry the frame's type (bit 3 set for RoCEv2,
 * bits 2:0 the L3 header: 0 GRH, 1 IPv6, 2 IPv4). UCX's UD transport reads
 * them to find the destination address among the 40 bytes before the
 * payload (A17.4.5.2); told anything but IPv4, it reads bytes 24..39 as a
 * GID, which for IPv4 are the IP header's, and drops every datagram
 * (docs/ENGINES.md).
 */
#define SROCE_WC_SL_ROCE_V2	0x8
#define SROCE_WC_SL_IPV6	0x1
#define SROCE_WC_SL_IPV4	0x2

static uint8_t sroce_wc_sl(const struct sroce_cqe *cqe)
{
	if (!(cqe->wc_flags & SROCE_WC_WITH_NETWORK_HDR_TYPE))
		return cqe->sl;
	switch (cqe->network_hdr_type) {
	case SROCE_NETWORK_IPV4:
		return SROCE_WC_SL_ROCE_V2 | SROCE_WC_SL_IPV4;
	case SROCE_NETWORK_IPV6:
		return SROCE_WC_SL_ROCE_V2 | SROCE_WC_SL_IPV6;
	}
	return cqe->sl;
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ibv_wc *wc)
{
	/* Status and opcode numbers are the same on both sides. */
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->ex.imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = sroce_wc_flags(cqe->wc_flags);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = 0;		/* RoCE has no LIDs */
	wc->sl = sroce_wc_sl(cqe);
	wc->dlid_path_bits = 0;
}

static int sroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue_hdr *hdr;
	uint32_t prod, cons;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	hdr = cq->queue.hdr;
	/* Acquire: an entry counted in prod is whole. */
	prod = __atomic_load_n(&hdr->prod, __ATOMIC_ACQUIRE);
	cons = hdr->cons;
	for (; n < ne && cons != prod; n++, cons++)
		sroce_cqe_to_wc(sroce_uqueue_at(&cq->queue, cons), &wc[n]);
	/*
	 * Release: the kernel reuses the slots only once they are read. An
	 * empty poll stores nothing: a busy poller would keep the line the
	 * kernel reads cons from dirty in its own cache.
	 */
	if (n)
		__atomic_store_n(&hdr->cons, cons, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/**
 * sroce_cq_clean() - forget a destroyed or reset QP's completions not yet
 *		      polled
 * @ibcq: a CQ the QP completed into
 * @qpn: the QP's number
 *
 * QP numbers come back: left in the ring, the entries would be polled as
 * completions of whichever QP gets the number next (or, after a reset,
 * of the QP's next life). Called once the kernel has destroyed the QP or
 * moved it to RESET, so none of its entries can come after the producer
 * index read here. As mlx5's provider does, each entry kept is
 * moved, newest first, over the ones dropped so far; the kernel writes
 * only the slots past the producer index, and may reuse the dropped ones'
 * only once the consumer index, stored last, hands them back. The lock
 * keeps pollers, the extended API's included, off the ring meanwhile.
 */
void sroce_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue_hdr *hdr;
	uint32_t prod, cons, idx, dropped = 0;
	const struct sroce_cqe *cqe;

	pthread_spin_lock(&cq->lock);
	hdr = cq->queue.hdr;
	/* Acquire: an entry counted in prod is whole. */
	prod = __atomic_load_n(&hdr->prod, __ATOMIC_ACQUIRE);
	cons = hdr->cons;
	/* Indices no ring can have (a scribbled header): nothing to clean. */
	if (prod - cons > cq->queue.slots)
		goto unlock;
	for (idx = prod; idx != cons;) {
		cqe = sroce_uqueue_at(&cq->queue, --idx);
		if (cqe->qp_num == qpn)
			dropped++;
		else if (dropped)
			memcpy(sroce_uqueue_at(&cq->queue, idx + dropped), cqe,
			       sizeof(*cqe));
	}
	/* Release: the moves are done before the kernel may reuse a slot. */
	__atomic_store_n(&hdr->cons, cons + dropped, __ATOMIC_RELEASE);
unlock:
	pthread_spin_unlock(&cq->lock);
}

/*
 * The extended polling API: ibv_start_poll() takes the lock and shows the
 * oldest entry, ibv_next_poll() consumes it and shows the next one,
 * ibv_end_poll() consumes the one shown and drops the lock. The read_*()
 * accessors read the entry in place: the kernel does not reuse its slot
 * before the consumer index has passed it.
 */
static struct sroce_cq *ex_to_scq(struct ibv_cq_ex *ibcqx)
{
	return container_of(ibcqx, struct sroce_cq, vcq.cq_ex);
}

static const struct sroce_cqe *sroce_cq_cur(struct ibv_cq_ex *ibcqx)
{
	return ex_to_scq(ibcqx)->cur;
}

/* Shows the entry at @idx, if the kernel has written it yet. */
static int sroce_cq_show(struct sroce_cq *cq, uint32_t idx)
{
	/* Acquire: an entry counted in prod is whole. */
	uint32_t prod = __atomic_load_n(&cq->queue.hdr->prod,
					__ATOMIC_ACQUIRE);

	cq->cur_idx = idx;
	if (idx == prod) {
		cq->cur = NULL;
		return ENOENT;
	}
	cq->cur = sroce_uqueue_at(&cq->queue, idx);
	cq->vcq.cq_ex.wr_id = cq->cur->wr_id;
	cq->vcq.cq_ex.status = (enum ibv_wc_status)cq->cur->status;
	return 0;
}

/* Hands the entry shown back to the kernel, once read. */
static void sroce_cq_consume(struct sroce_cq *cq)
{
	if (!cq->cur)
		return;
	cq->cur = NULL;
	cq->cur_idx++;
	__atomic_store_n(&cq->queue.hdr->cons, cq->cur_idx, __ATOMIC_RELEASE);
}

static int sroce_start_poll(struct ibv_cq_ex *ibcqx,
			    struct ibv_poll_cq_attr *attr)
{
	struct sroce_cq *cq = ex_to_scq(ibcqx);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	ret = sroce_cq_show(cq, cq->queue.hdr->cons);
	/* ENOENT ends the poll: no ibv_end_poll() follows. */
	if (ret)
		pthread_spin_unlock(&cq->lock);
	return ret;
}

static int sroce_next_poll(struct ibv_cq_ex *ibcqx)
{
	struct sroce_cq *cq = ex_to_scq(ibcqx);

	sroce_cq_consume(cq);
	return sroce_cq_show(cq, cq->cur_idx);
}

static void sroce_end_poll(struct ibv_cq_ex *ibcqx)
{
	struct sroce_cq *cq = ex_to_scq(ibcqx);

	sroce_cq_consume(cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode sroce_read_opcode(struct ibv_cq_ex *ibcqx)
{
	return (enum ibv_wc_opcode)sroce_cq_cur(ibcqx)->opcode;
}

static uint32_t sroce_read_vendor_err(struct ibv_cq_ex *ibcqx)
{
	return sroce_cq_cur(ibcqx)->vendor_err;
}

static uint32_t sroce_read_byte_len(struct ibv_cq_ex *ibcqx)
{
	return sroce_cq_cur(ibcqx)->byte_len;
}

/* Also what ibv_wc_read_invalidated_rkey() reads. */
static __be32 sroce_read_imm_data(struct ibv_cq_ex *ibcqx)
{
	return sroce_cq_cur(ibcqx)->ex.imm_data;
}

static uint32_t sroce_read_qp_num(struct ibv_cq_ex *ibcqx)
{
	return sroce_cq_cur(ibcqx)->qp_num;
}

static uint32_t sroce_read_src_qp(struct ibv_cq_ex *ibcqx)
{
	return sroce_cq_cur(ibcqx)->src_qp;
}

static unsigned int sroce_read_wc_flags(struct ibv_cq_ex *ibcqx)
{
	return sroce_wc_flags(sroce_cq_cur(ibcqx)->wc_flags);
}

/* RoCE has no LIDs. */
static uint32_t sroce_read_slid(struct ibv_cq_ex *ibcqx)
{
	return 0;
}

static uint8_t sroce_read_sl(struct ibv_cq_ex *ibcqx)
{
	return sroce_wc_sl(sroce_cq_cur(ibcqx));
}

static uint8_t sroce_read_dlid_path_bits(struct ibv_cq_ex *ibcqx)
{
	return 0;
}

/* Written by the kernel as it posted the entry (sroce-abi.h). */
static uint64_t sroce_read_completion_wallclock_ns(struct ibv_cq_ex *ibcqx)
{
	return sroce_cq_cur(ibcqx)->timestamp;
}

static void sroce_cq_ex_init(struct sroce_cq *cq)
{
	struct ibv_cq_ex *x = &cq->vcq.cq_ex;

	x->start_poll = sroce_start_poll;
	x->next_poll = sroce_next_poll;
	x->end_poll = sroce_end_poll;
	x->read_opcode = sroce_read_opcode;
	x->read_vendor_err = sroce_read_vendor_err;
	x->read_byte_len = sroce_read_byte_len;
	x->read_imm_data = sroce_read_imm_data;
	x->read_qp_num = sroce_read_qp_num;
	x->read_src_qp = sroce_read_src_qp;
	x->read_wc_flags = sroce_read_wc_flags;
	x->read_slid = sroce_read_slid;
	x->read_sl = sroce_read_sl;
	x->read_dlid_path_bits = sroce_read_dlid_path_bits;
	x->read_completion_wallclock_ns = sroce_read_completion_wallclock_ns;
}

/*
 * What the extended create may ask for: the standard completion fields
 * and the wall-clock time the kernel wrote the entry. Not the device-clock
 * timestamp: a software device has no clock of its own to count in
 * (query_device_ex reports no hca_core_clock), and a wall-clock time
 * passed off as one would mislead. No flag but the single-threaded hint,
 * which changes nothing here; and a parent domain, which the CQ holds
 * while it lives.
 */
#define SROCE_CQ_WC_FLAGS	((uint64_t)IBV_WC_STANDARD_FLAGS | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static int sroce_cq_ex_check(struct ibv_context *ibctx,
			     const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->wc_flags & ~SROCE_CQ_WC_FLAGS ||
	    attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				IBV_CQ_INIT_ATTR_MASK_PD))
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS &&
	    attr->flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED)
		return EOPNOTSUPP;
	/* Only a parent domain may be given, as in every provider. */
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD &&
	    (!attr->parent_domain || attr->parent_domain->context != ibctx ||
	     !to_spd(attr->parent_domain)->protection_domain))
		return EINVAL;
	return 0;
}

static struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ibctx,
					    struct ibv_cq_init_attr_ex *attr)
{
	struct sroce_ucreate_cq_ex_resp resp = {};
	struct ibv_create_cq_ex cmd = {};
	struct sroce_cq *cq;
	int ret;

	ret = sroce_cq_ex_check(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	/* The wall-clock flag asks the kernel for the timestamp. */
	ret = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp), 0);
	if (!ret)
		ret = sroce_cq_setup(cq, &resp.drv.cq);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	sroce_cq_ex_init(cq);
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		cq->parent_domain =
			sroce_parent_domain_get(attr->parent_domain);
	return &cq->vcq.cq_ex;
}

/*
 * The kernel clears the arm flags when it raises the event, possibly at
 * this very moment: an atomic OR loses neither side's change. The fence
 * pairs with the kernel's between publishing an entry and reading the
 * arm, so that a poll after this call sees any completion that raised no
 * event.
 */
static int sroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct sroce_cq *cq = to_scq(ibcq);
	uint32_t arm = solicited_only ? SROCE_QUEUE_F_ARM_SOLICITED :
					SROCE_QUEUE_F_ARM_NEXT;

	pthread_spin_lock(&cq->lock);
	__atomic_fetch_or(&cq->queue.hdr->flags, arm, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/*
 * The kernel moves the pending completions and any arm into a new ring
 * and gives it back in the response; no poller may look at either ring
 * until this thread has switched the mapping.
 */
static int sroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sroce_uresize_cq_resp resp = {};
	struct sroce_cq *cq = to_scq(ibcq);
	struct ibv_resize_cq cmd = {};
	struct sroce_uqueue nq = {};
	int ret;

	pthread_spin_lock(&cq->lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto unlock;
	/*
	 * Past this point the kernel writes only the new ring: failing to
	 * map it leaves a CQ that cannot be polled, as after a lost device.
	 */
	ret = sroce_cq_map(&nq, ibcq->context, &resp.drv.cq);
	if (ret)
		goto unlock;
	sroce_uqueue_unmap(&cq->queue);
	cq->queue = nq;
unlock:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

const struct verbs_context_ops sroce_cq_ops = {
	.create_cq = sroce_create_cq,
	.create_cq_ex = sroce_create_cq_ex,
	.destroy_cq = sroce_destroy_cq,
	.poll_cq = sroce_poll_cq,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,
};
