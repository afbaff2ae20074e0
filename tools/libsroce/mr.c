// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: memory regions.
 */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/driver.h>

#include "sroce.h"

/* A new verbs_mr, or NULL with errno set. */
static struct verbs_mr *sroce_mr_alloc(void)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));

	if (!vmr)
		errno = ENOMEM;
	return vmr;
}

/* @vmr once the kernel has answered for it (@ret), or NULL with errno. */
static struct ibv_mr *sroce_mr_done(struct verbs_mr *vmr, int ret)
{
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * The kernel pins the pages and picks the keys; the MR needs nothing in
 * userspace beyond what libibverbs keeps in struct verbs_mr. @iova is the
 * address the MR's first byte has in work requests, which libibverbs sets
 * to @addr unless the application asked for another (ibv_reg_mr_iova).
 */
static struct ibv_mr *sroce_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t iova, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr = sroce_mr_alloc();

	if (!vmr)
		return NULL;
	return sroce_mr_done(vmr, ibv_cmd_reg_mr(pd, addr, length, iova,
						 access, vmr, &cmd,
						 sizeof(cmd), &resp,
						 sizeof(resp)));
}

static int sroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	/* On failure the MR is still registered: keep it. */
	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(vmr);
	return 0;
}

/*
 * The kernel makes a new MR with new keys, which ibv_cmd_rereg_mr() copies
 * into @vmr; libibverbs updates the PD, address and length. As for a
 * registration, the MR's address in work requests is @addr. On failure the
 * MR is unchanged and errno says why.
 */
static int sroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct ibv_rereg_mr cmd = {};
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

/*
 * An MR of an imported context's file, by its handle (ibv_import_mr()):
 * the kernel tells its keys and length. Its address is not the kernel's
 * to tell: libibverbs leaves it NULL, and the application knows it.
 */
static struct ibv_mr *sroce_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct verbs_mr *vmr = sroce_mr_alloc();

	if (!vmr)
		return NULL;
	return sroce_mr_done(vmr, ibv_cmd_query_mr(pd, vmr, mr_handle));
}

/* The kernel's MR stays: the context that registered it deregisters it. */
static void sroce_unimport_mr(struct ibv_mr *ibmr)
{
	free(verbs_get_mr(ibmr));
}

/*
 * ibv_advise_mr(): bring ranges of on-demand paging MRs in before traffic
 * needs them. The kernel does it (at once with IBV_ADVISE_MR_FLAG_FLUSH,
 * else in the background); nothing of an MR lives in userspace.
 */
static int sroce_advise_mr(struct ibv_pd *pd,
			   enum ibv_advise_mr_advice advice, uint32_t flags,
			   struct ibv_sge *sg_list, uint32_t num_sge)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

const struct verbs_context_ops sroce_mr_ops = {
	.advise_mr = sroce_advise_mr,
	.reg_mr = sroce_reg_mr,
	.rereg_mr = sroce_rereg_mr,
	.dereg_mr = sroce_dereg_mr,
	.import_mr = sroce_import_mr,
	.unimport_mr = sroce_unimport_mr,
};
