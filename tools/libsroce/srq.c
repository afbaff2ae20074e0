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

/* @vsrq: an XRC SRQ's number and domain are libibverbs' (verbs_srq). */
struct sroce_srq {
	struct verbs_srq vsrq;
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
	return container_of(ibsrq, struct sroce_srq, vsrq.srq);
}

static struct sroce_srq *sroce_srq_alloc(void)
{
	struct sroce_srq *srq = calloc(1, sizeof(*srq));
	int ret;

	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	return srq;
}

static void sroce_srq_free(struct sroce_srq *srq, int err)
{
	pthread_spin_destroy(&srq->lock);
	free(srq);
	errno = err;
}

/* After the kernel created the SRQ: map its ring, or destroy it again. */
static int sroce_srq_setup(struct sroce_srq *srq, struct ibv_context *ibctx,
			   const struct sroce_create_srq_resp *resp)
{
	int ret = sroce_uqueue_map(&srq->rq, ibctx, &resp->srq);

	if (ret)
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
	return ret;
}

static struct ibv_srq *sroce_create_srq(struct ibv_pd *pd,
					struct ibv_srq_init_attr *attr)
{
	struct sroce_create_srq_uresp resp = {};
	struct ibv_create_srq cmd = {};
	struct sroce_srq *srq;
	int ret;

	srq = sroce_srq_alloc();
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = sroce_srq_setup(srq, pd->context, &resp.drv);
	if (ret) {
		sroce_srq_free(srq, ret);
		return NULL;
	}
	return &srq->vsrq.srq;
}

/*
 * The extended create: a basic SRQ, or an XRC SRQ in an XRC domain whose
 * receives complete on the CQ it names, whichever QP of the domain they
 * came to. Its ring is a basic SRQ's.
 */
static struct ibv_srq *sroce_create_srq_ex(struct ibv_context *ibctx,
					   struct ibv_srq_init_attr_ex *attr)
{
	struct sroce_create_srq_uresp resp = {};
	struct ibv_create_xsrq cmd = {};
	struct sroce_srq *srq;
	int ret;

	if (attr->comp_mask & ~(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ) ||
	    (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE &&
	     attr->srq_type != IBV_SRQT_BASIC &&
	     attr->srq_type != IBV_SRQT_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	srq = sroce_srq_alloc();
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = sroce_srq_setup(srq, ibctx, &resp.drv);
	if (ret) {
		sroce_srq_free(srq, ret);
		return NULL;
	}
	return &srq->vsrq.srq;
}

/* What an XRC initiator's requests name: the kernel gave it at create. */
static int sroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*srq_num = srq->vsrq.srq_num;
	return 0;
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
	.create_srq_ex = sroce_create_srq_ex,
	.get_srq_num = sroce_get_srq_num,
	.modify_srq = sroce_modify_srq,
	.query_srq = sroce_query_srq,
	.destroy_srq = sroce_destroy_srq,
	.post_srq_recv = sroce_post_srq_recv,
};
