// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: address handles.
 */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/driver.h>
#include <rdma/sroce-abi.h>

#include "sroce.h"

/* The core's response, then sroce's, as the kernel writes them. */
struct sroce_create_ah_uresp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct sroce_create_ah_resp drv;
};

/*
 * The kernel keeps the address (it resolves the destination MAC and checks
 * the GIDs); what the provider keeps is the number its send WQEs name the
 * AH by.
 */
static struct ibv_ah *sroce_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct sroce_create_ah_uresp resp = {};
	struct sroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.drv.ah_num;
	return &ah->ibv_ah;
}

static int sroce_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	/* On failure the AH still exists in the kernel: keep it. */
	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(to_sah(ibah));
	return 0;
}

const struct verbs_context_ops sroce_ah_ops = {
	.create_ah = sroce_create_ah,
	.destroy_ah = sroce_destroy_ah,
};
