// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: protection domains.
 */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/driver.h>

#include "sroce.h"

/*
 * A PD needs no userspace state beyond what libibverbs keeps in struct
 * ibv_pd: the kernel object behind its handle is the whole PD.
 */
static struct ibv_pd *sroce_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

static int sroce_dealloc_pd(struct ibv_pd *pd)
{
	int ret;

	/* On failure the PD is still live in the kernel: keep it. */
	ret = ibv_cmd_dealloc_pd(pd);
	if (ret)
		return ret;

	free(pd);
	return 0;
}

const struct verbs_context_ops sroce_pd_ops = {
	.alloc_pd = sroce_alloc_pd,
	.dealloc_pd = sroce_dealloc_pd,
};
