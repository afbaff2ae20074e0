// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: memory windows. The kernel keeps the window and its binding;
 * a bind is a send work request (IBV_WR_BIND_MW), carried out by the
 * kernel in the send queue's order and completed like any other.
 */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/driver.h>

#include "sroce.h"

static struct ibv_mw *sroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int sroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	/* On failure the window still exists: keep it. */
	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw(), for type 1 windows: the window's next key differs in its
 * low 8 bits, which the application sees in mw->rkey once the request is
 * posted (the bind itself happens in send queue order, as the verbs say).
 * A type 2 window is bound by posting IBV_WR_BIND_MW, with the key the
 * application chose.
 */
static int sroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			 struct ibv_mw_bind *mw_bind)
{
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = rkey,
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad_wr;
	int ret;

	if (mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	ret = sroce_post_send(qp, &wr, &bad_wr);
	if (ret)
		return ret;
	mw->rkey = rkey;
	return 0;
}

const struct verbs_context_ops sroce_mw_ops = {
	.alloc_mw = sroce_alloc_mw,
	.bind_mw = sroce_bind_mw,
	.dealloc_mw = sroce_dealloc_mw,
};
