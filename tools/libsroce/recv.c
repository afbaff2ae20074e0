// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: receive work requests, written into a QP's receive queue or
 * an SRQ. Posting is a store to shared memory, never a system call.
 */
#include <errno.h>

#include <sroce/queue.h>

#include "sroce.h"

/* The SGEs one entry of @q has room for. */
static uint32_t sroce_recv_max_sge(const struct sroce_uqueue *q)
{
	return (q->stride - sizeof(struct sroce_recv_wqe)) /
	       sizeof(struct sroce_sge);
}

static void sroce_recv_wqe_fill(struct sroce_recv_wqe *wqe,
				const struct ibv_recv_wr *wr)
{
	int i;

	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/**
 * sroce_post_recv_ring() - write a chain of receive requests into a ring
 * @q: the receive ring; the caller serialises posters
 * @wr: the chain
 * @bad_wr: set to the first request not posted
 *
 * Requests before a failing one stay posted, as the verbs require.
 *
 * Return: 0, EINVAL for a request with more SGEs than an entry holds, or
 * ENOMEM when the ring is full.
 */
int sroce_post_recv_ring(struct sroce_uqueue *q, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	uint32_t max_sge = sroce_recv_max_sge(q);
	uint32_t prod = q->hdr->prod;	/* only this side writes it */
	uint32_t cons;
	int ret = 0;

	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			ret = EINVAL;
			break;
		}
		/* The kernel copied an entry out before moving past it. */
		cons = __atomic_load_n(&q->hdr->cons, __ATOMIC_ACQUIRE);
		if (sroce_queue_full(prod, cons, q->slots)) {
			ret = ENOMEM;
			break;
		}
		sroce_recv_wqe_fill(sroce_uqueue_at(q, prod), wr);
		prod++;
	}
	if (ret)
		*bad_wr = wr;
	/* The entries are complete before the kernel can see them. */
	__atomic_store_n(&q->hdr->prod, prod, __ATOMIC_RELEASE);
	return ret;
}
