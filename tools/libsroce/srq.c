// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: shared receive queues, a ring of receive requests several
 * QPs draw from.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <infiniband/driver.h>

#include "sroce.h"

struct sroce_srq {
	struct ibv_srq ibv_srq;
	struct sroce_uqueue rq;
	pthread_spinlock_t lock;
};

/* What the kernel answers create_srq with: its part, then ours. */
struct sroce_create_srq_uresp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct sroce_create_srq_resp drv;
};

static struct sroce_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibv_srq);
}

static struct ibv_srq *sroce_create_srq(struct ibv_pd *pd,
					struct ibv_srq_init_attr *attr)
{
	struct sroce_create_srq_uresp resp = {};
	struct ibv_create_srq cmd = {};
	struct sroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_free;

	ret = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_lock;
	ret = sroce_uqueue_map(&srq->rq, pd->context, &resp.drv.srq);
	if (ret)
		goto err_destroy;
	return &srq->ibv_srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_lock:
	pthread_spin_destroy(&srq->lock);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

static int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			    int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

static int sroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int sroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret;

	/* On failure the SRQ is still live in the kernel: keep it. */
	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	sroce_uqueue_unmap(&srq->rq);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

static int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret;

	pthread_spin_lock(&srq->lock);
	ret = sroce_post_recv_ring(&srq->rq, wr, bad_wr);
	pthread_spin_unlock(&srq->lock);
	return ret;
}

const struct verbs_context_ops sroce_srq_ops = {
	.create_srq = sroce_create_srq,
	.modify_srq = sroce_modify_srq,
	.query_srq = sroce_query_srq,
	.destroy_srq = sroce_destroy_srq,
	.post_srq_recv = sroce_post_srq_recv,
};
