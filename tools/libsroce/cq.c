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

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/sroce-abi.h>

#include "sroce.h"

/**
 * struct sroce_cq - a CQ and its mapped ring
 * @ibv_cq: what libibverbs hands the application
 * @lock: serialises pollers, and keeps them and arming off the ring while
 *	resize swaps it
 * @queue: the ring; this process writes only its consumer index and the
 *	arm flags
 */
struct sroce_cq {
	struct ibv_cq ibv_cq;
	pthread_spinlock_t lock;
	struct sroce_uqueue queue;
};

static struct sroce_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibv_cq);
}

struct sroce_ucreate_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
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

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->ibv_cq,
				NULL, 0, &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = sroce_cq_map(&cq->queue, ibctx, &resp.drv.cq);
	if (ret)
		goto err_destroy;

	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;
	return &cq->ibv_cq;

err_unmap:
	sroce_uqueue_unmap(&cq->queue);
err_destroy:
	ibv_cmd_destroy_cq(&cq->ibv_cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
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
	wc->sl = cqe->sl;
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
	/* Release: the kernel reuses the slots only once they are read. */
	__atomic_store_n(&hdr->cons, cons, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	return n;
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
	.destroy_cq = sroce_destroy_cq,
	.poll_cq = sroce_poll_cq,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,
};
