// SPDX-License-Identifier: GPL-2.0
/*
 * Protection domains and XRC domains.
 */
#include <rdma/ib_verbs.h>

#include "device.h"
#include "limits.h"
#include "pd.h"

static int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);

	/* The limit query_device advertises, like a device out of slots. */
	if (!sroce_obj_count_get(&sdev->pd_count, SROCE_MAX_PD, udata))
		return -ENOMEM;
	return 0;
}

static int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->pd_count);
	return 0;
}

/* An XRC domain is a domain too: it counts against the PDs' limit. */
static int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibxrcd->device);

	if (!sroce_obj_count_get(&sdev->pd_count, SROCE_MAX_PD, udata))
		return -ENOMEM;
	return 0;
}

static int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibxrcd->device)->pd_count);
	return 0;
}

const struct ib_device_ops sroce_pd_ops = {
	.alloc_pd = sroce_alloc_pd,
	.dealloc_pd = sroce_dealloc_pd,
	.alloc_xrcd = sroce_alloc_xrcd,
	.dealloc_xrcd = sroce_dealloc_xrcd,

	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, sroce_xrcd, ibxrcd),
};
