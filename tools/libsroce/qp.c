// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: queue pairs. The kernel owns the state machine; this side
 * maps the QP's rings and posts work requests into them (send.c, recv.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <infiniband/driver.h>

#include "sroce.h"

/* What the kernel answers create_qp with: its part, then ours. */
struct sroce_create_qp_uresp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct sroce_create_qp_resp drv;
};

struct sroce_create_qp_ex_uresp {
	struct ib_uverbs_ex_create_qp_resp ibv_resp;
	struct sroce_create_qp_resp drv;
};

static int sroce_qp_map(struct sroce_qp *qp, struct ibv_context *ibctx,
			const struct sroce_create_qp_resp *resp, bool has_rq)
{
	int ret;

	ret = sroce_uqueue_map(&qp->sq, ibctx, &resp->sq);
	if (ret || !has_rq)
		return ret;
	ret = sroce_uqueue_map(&qp->rq, ibctx, &resp->rq);
	if (ret)
		sroce_uqueue_unmap(&qp->sq);
	return ret;
}

/*
 * What a send entry holds, as the kernel granted it in @cap, but never
 * more than the entry's stride has room for: a kernel that said otherwise
 * must not make this process write past a slot of its own mapping.
 */
static void sroce_qp_set_caps(struct sroce_qp *qp,
			      const struct ibv_qp_cap *cap)
{
	uint32_t room = 0;

	if (qp->sq.stride > sizeof(struct sroce_send_wqe))
		room = qp->sq.stride - sizeof(struct sroce_send_wqe);
	qp->max_send_sge = room / sizeof(struct sroce_sge);
	if (cap->max_send_sge < qp->max_send_sge)
		qp->max_send_sge = cap->max_send_sge;
	qp->max_inline = room;
	if (cap->max_inline_data < qp->max_inline)
		qp->max_inline = cap->max_inline_data;
}

static struct sroce_qp *sroce_qp_alloc(void)
{
	struct sroce_qp *qp = calloc(1, sizeof(*qp));
	int ret;

	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_free;
	ret = pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_sq_lock;
	return qp;

err_sq_lock:
	pthread_spin_destroy(&qp->sq_lock);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

static void sroce_qp_free(struct sroce_qp *qp)
{
	pthread_spin_destroy(&qp->rq_lock);
	pthread_spin_destroy(&qp->sq_lock);
	free(qp);
}

/*
 * After the kernel created the QP: map its rings and note what a send
 * entry holds. On failure the QP is destroyed again.
 */
static int sroce_qp_setup(struct sroce_qp *qp,
			  const struct sroce_create_qp_resp *resp,
			  const struct ibv_qp_cap *cap)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;
	bool xrc = ibqp->qp_type == IBV_QPT_XRC_SEND ||
		   ibqp->qp_type == IBV_QPT_XRC_RECV;
	int ret;

	/*
	 * An XRC target is the kernel's alone (the core makes it for the XRC
	 * domain, not for this process): no ring. An initiator only sends.
	 */
	if (ibqp->qp_type == IBV_QPT_XRC_RECV)
		return 0;
	ret = sroce_qp_map(qp, ibqp->context, resp, !ibqp->srq && !xrc);
	if (ret) {
		ibv_cmd_destroy_qp(ibqp);
		return ret;
	}
	sroce_qp_set_caps(qp, cap);
	return 0;
}

static struct ibv_qp *sroce_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct sroce_create_qp_uresp resp = {};
	struct ibv_create_qp cmd = {};
	struct sroce_qp *qp;
	int ret;

	qp = sroce_qp_alloc();
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = sroce_qp_setup(qp, &resp.drv, &attr->cap);
	if (ret) {
		sroce_qp_free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

/*
 * The extended create takes a PD (an XRC domain for an XRC target) and,
 * for the extended send API, the opcodes to be posted that way; no
 * creation flags, which the kernel refuses anyway.
 */
static int sroce_qp_ex_check(const struct ibv_qp_init_attr_ex *attr)
{
	uint32_t domain = attr->qp_type == IBV_QPT_XRC_RECV ?
			  IBV_QP_INIT_ATTR_XRCD : IBV_QP_INIT_ATTR_PD;

	if (!(attr->comp_mask & domain))
		return EINVAL;
	if (attr->comp_mask & ~(domain | IBV_QP_INIT_ATTR_CREATE_FLAGS |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS &&
	    (attr->send_ops_flags & ~sroce_qp_ex_ops(attr->qp_type) ||
	     !sroce_qp_ex_supported()))
		return EOPNOTSUPP;
	return 0;
}

static struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ibctx,
					 struct ibv_qp_init_attr_ex *attr)
{
	struct sroce_create_qp_ex_uresp resp = {};
	struct ibv_create_qp_ex cmd = {};
	struct sroce_qp *qp;
	int ret;

	ret = sroce_qp_ex_check(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = sroce_qp_alloc();
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = sroce_qp_setup(qp, &resp.drv, &attr->cap);
	if (ret) {
		sroce_qp_free(qp);
		errno = ret;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		sroce_qp_ex_init(qp, attr->send_ops_flags);
	return &qp->vqp.qp;
}

/*
 * Drops the QP's completions from its own CQs. An XRC initiator has no
 * receive CQ; an XRC target has neither (its receives are its SRQs').
 */
static void sroce_qp_clean_cqs(struct ibv_qp *ibqp)
{
	if (ibqp->send_cq)
		sroce_cq_clean(ibqp->send_cq, ibqp->qp_num);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		sroce_cq_clean(ibqp->recv_cq, ibqp->qp_num);
}

/*
 * A QP moved to RESET starts a new life: as mlx5's provider does, the
 * completions of its old one that are still in its CQs go (flushed
 * receives, mostly), so that they are not polled as the new life's. The
 * kernel has stopped the QP's producers when the command returns.
 */
static int sroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			   int attr_mask)
{
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE) ||
	    attr->qp_state != IBV_QPS_RESET)
		return ret;
	sroce_qp_clean_cqs(ibqp);
	return 0;
}

static int sroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int sroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret;

	/* On failure the QP is still live in the kernel: keep it. */
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	/* The kernel leaves a process's rings to the process. */
	sroce_qp_clean_cqs(ibqp);
	sroce_uqueue_unmap(&qp->rq);
	sroce_uqueue_unmap(&qp->sq);
	sroce_qp_free(qp);
	return 0;
}

static int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret;

	/* No receive queue to post to, or one not yet initialised. */
	if (ibqp->srq || ibqp->state == IBV_QPS_RESET ||
	    ibqp->qp_type == IBV_QPT_XRC_SEND ||
	    ibqp->qp_type == IBV_QPT_XRC_RECV) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->rq_lock);
	ret = sroce_post_recv_ring(&qp->rq, wr, bad_wr);
	pthread_spin_unlock(&qp->rq_lock);
	return ret;
}

/*
 * Another process's XRC target QP, opened in a shared XRC domain: a
 * handle for modify, query and events; the QP has no rings to map, and
 * the kernel destroys it when its last handle goes.
 */
static struct ibv_qp *sroce_open_qp(struct ibv_context *ibctx,
				    struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct sroce_qp *qp;
	int ret;

	qp = sroce_qp_alloc();
	if (!qp)
		return NULL;
	ret = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		sroce_qp_free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

/* Group membership is the kernel's: it filters what the netdev hears. */
static int sroce_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
			      uint16_t lid)
{
	return ibv_cmd_attach_mcast(ibqp, gid, lid);
}

static int sroce_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
			      uint16_t lid)
{
	return ibv_cmd_detach_mcast(ibqp, gid, lid);
}

const struct verbs_context_ops sroce_qp_ops = {
	.attach_mcast = sroce_attach_mcast,
	.detach_mcast = sroce_detach_mcast,
	.create_qp = sroce_create_qp,
	.create_qp_ex = sroce_create_qp_ex,
	.open_qp = sroce_open_qp,
	.modify_qp = sroce_modify_qp,
	.query_qp = sroce_query_qp,
	.destroy_qp = sroce_destroy_qp,
	.post_send = sroce_post_send,
	.post_recv = sroce_post_recv,
};
