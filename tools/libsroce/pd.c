// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: protection domains and parent domains.
 *
 * A parent domain is a userspace object only: an ibv_pd that carries the
 * kernel handle of the PD it was made from, so that every verb taking a
 * PD (QP, SRQ, MR, MW, AH) works on it unchanged and the kernel sees the
 * underlying PD. What it adds is the application's memory allocators and
 * its pd_context.
 *
 * Those allocators are for the buffers a provider owns and hands the
 * device. libsroce owns none: every ring (send, receive, SRQ, CQ) is
 * kernel memory the process maps (sroce-abi.h), because the kernel must
 * be able to check and use it without trusting the process. So libsroce
 * keeps the allocators and never calls them; the provider's own
 * bookkeeping (the structures behind each object) stays on malloc, as
 * for any PD.
 */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/driver.h>

#include "sroce.h"

static struct ibv_pd *sroce_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct sroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibv_pd;
}

/*
 * Only a plain PD can be a parent domain's: a parent domain of a parent
 * domain would be the same PD under two sets of allocators.
 */
static struct ibv_pd *
sroce_alloc_parent_domain(struct ibv_context *ibctx,
			  struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct sroce_pd *under, *pd;

	if (ibv_check_alloc_parent_domain(attr))
		return NULL;
	under = to_spd(attr->pd);
	if (attr->pd->context != ibctx || under->protection_domain) {
		errno = EINVAL;
		return NULL;
	}
	/* sroce has no thread domains: ibv_alloc_td() cannot have made one. */
	if (attr->comp_mask & ~known || attr->td) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS &&
	    (!attr->alloc || !attr->free)) {
		errno = EINVAL;
		return NULL;
	}

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ibv_initialize_parent_domain(&pd->ibv_pd, &under->ibv_pd);
	pd->protection_domain = under;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	__atomic_fetch_add(&under->users, 1, __ATOMIC_RELAXED);
	return &pd->ibv_pd;
}

/*
 * A PD in use by a parent domain, or a parent domain in use by a CQ,
 * stays (EBUSY), as a PD that QPs use does in the kernel.
 */
static int sroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sroce_pd *pd = to_spd(ibpd);
	int ret;

	if (__atomic_load_n(&pd->users, __ATOMIC_RELAXED))
		return EBUSY;
	if (pd->protection_domain) {
		__atomic_fetch_sub(&pd->protection_domain->users, 1,
				   __ATOMIC_RELAXED);
		free(pd);
		return 0;
	}

	/* On failure the PD is still live in the kernel: keep it. */
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(pd);
	return 0;
}

/*
 * A PD of an imported context's file, by its handle (ibv_import_pd()): the
 * kernel's PD is the file's already, and libsroce keeps nothing of it but
 * the handle, which the kernel checks whenever a verb names it.
 */
static struct ibv_pd *sroce_import_pd(struct ibv_context *ibctx,
				      uint32_t pd_handle)
{
	struct sroce_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = pd_handle;
	return &pd->ibv_pd;
}

/* The kernel's PD stays: the context that made it deallocates it. */
static void sroce_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_spd(ibpd));
}

/**
 * sroce_parent_domain_get() - take a reference on a parent domain
 * @ibpd: what the application passed as one
 *
 * Return: the parent domain, which cannot be deallocated until
 * sroce_parent_domain_put(), or NULL if @ibpd is a plain PD.
 */
struct sroce_pd *sroce_parent_domain_get(struct ibv_pd *ibpd)
{
	struct sroce_pd *pd = to_spd(ibpd);

	if (!pd->protection_domain)
		return NULL;
	__atomic_fetch_add(&pd->users, 1, __ATOMIC_RELAXED);
	return pd;
}

void sroce_parent_domain_put(struct sroce_pd *pd)
{
	if (pd)
		__atomic_fetch_sub(&pd->users, 1, __ATOMIC_RELAXED);
}

/*
 * An XRC domain: the kernel's object, shared between processes through
 * the file the application names (libibverbs passes its fd and flags).
 */
static struct ibv_xrcd *sroce_open_xrcd(struct ibv_context *ibctx,
					struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int sroce_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd,
					       xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (!ret)
		free(xrcd);
	return ret;
}

const struct verbs_context_ops sroce_pd_ops = {
	.alloc_pd = sroce_alloc_pd,
	.alloc_parent_domain = sroce_alloc_parent_domain,
	.dealloc_pd = sroce_dealloc_pd,
	.import_pd = sroce_import_pd,
	.unimport_pd = sroce_unimport_pd,
	.open_xrcd = sroce_open_xrcd,
	.close_xrcd = sroce_close_xrcd,
};
