// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: the libibverbs provider for the sroce soft-RoCE driver.
 *
 * This stage covers what ibv_devices and ibv_devinfo need (matching the
 * device, opening a context, querying the device and its port), then
 * protection domains, completion queues, queue pairs, shared receive
 * queues, memory regions and address handles. Every verb left out here
 * keeps libibverbs' default, which fails with EOPNOTSUPP, so applications
 * see a clean error rather than a crash until the matching kernel support
 * exists.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/array_size.h>
#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/sroce-abi.h>

#include "sroce.h"

struct sroce_device {
	struct verbs_device ibv_dev;
};

static struct sroce_device *to_sdev(struct verbs_device *vdev)
{
	return container_of(vdev, struct sroce_device, ibv_dev);
}

/*
 * The kernel reports the firmware version only as a number; libibverbs
 * leaves turning it into attr->fw_ver to the provider. Use the same
 * 16.16.16 split as the other software drivers (rxe, siw) so tools show
 * sroce the way they show those.
 */
static void sroce_format_fw_ver(struct ibv_device_attr *attr, uint64_t raw)
{
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%u.%u.%u",
		 (unsigned int)(raw >> 32) & 0xffff,
		 (unsigned int)(raw >> 16) & 0xffff,
		 (unsigned int)raw & 0xffff);
}

/*
 * libibverbs routes both ibv_query_device() and ibv_query_device_ex()
 * here; ibv_cmd_query_device_any() picks the extended or the legacy
 * command from attr_size and falls back when the kernel lacks the former.
 */
static int sroce_query_device_ex(struct ibv_context *ibctx,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp = {};
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	sroce_format_fw_ver(&attr->orig_attr, resp.base.fw_ver);
	return 0;
}

static int sroce_query_port(struct ibv_context *ibctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static void sroce_free_context(struct ibv_context *ibctx)
{
	struct sroce_context *sctx = to_sctx(ibctx);

	verbs_uninit_context(&sctx->ibv_ctx);
	free(sctx);
}

static const struct verbs_context_ops sroce_ctx_ops = {
	.free_context = sroce_free_context,
	.query_device_ex = sroce_query_device_ex,
	.query_port = sroce_query_port,
};

/*
 * Each object's file owns its verbs; libibverbs merges the tables. One
 * line here per object kind.
 */
static const struct verbs_context_ops *const sroce_verbs[] = {
	&sroce_ctx_ops,
	&sroce_pd_ops,
	&sroce_cq_ops,
	&sroce_qp_ops,
	&sroce_srq_ops,
	&sroce_mr_ops,
	&sroce_mw_ops,
	&sroce_ah_ops,
};

static void sroce_set_ops(struct sroce_context *sctx)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sroce_verbs); i++)
		verbs_set_ops(&sctx->ibv_ctx, sroce_verbs[i]);
}

/*
 * A context the kernel has answered for (@ret): on success it gets our
 * ops; on failure it is undone, and errno says why, where callers of
 * ibv_open_device() and ibv_import_device() read it.
 */
static struct verbs_context *sroce_context_done(struct sroce_context *sctx,
						int ret)
{
	if (ret) {
		verbs_uninit_context(&sctx->ibv_ctx);
		free(sctx);
		errno = ret;
		return NULL;
	}
	sroce_set_ops(sctx);
	return &sctx->ibv_ctx;
}

static struct verbs_context *sroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd, void *private_data)
{
	struct ib_uverbs_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct sroce_context *sctx;

	/*
	 * The driver id given here goes into every ioctl header, and the
	 * kernel rejects an ioctl whose id is not the device's own.
	 */
	sctx = verbs_init_and_alloc_context(ibdev, cmd_fd, sctx, ibv_ctx,
					    SROCE_DRIVER_ID);
	if (!sctx)
		return NULL;

	return sroce_context_done(sctx, ibv_cmd_get_context(&sctx->ibv_ctx,
							    &cmd, sizeof(cmd),
							    &resp,
							    sizeof(resp)));
}

/*
 * ibv_import_device(): a context on a uverbs file another context made,
 * as a process hands its file to another. The kernel's context is the
 * file's, and libsroce keeps nothing from the kernel in its own: asking
 * the kernel about the context checks the file, and the rest is as for a
 * context of our own.
 */
static struct verbs_context *sroce_import_context(struct ibv_device *ibdev,
						  int cmd_fd)
{
	struct sroce_context *sctx;

	sctx = verbs_init_and_alloc_context(ibdev, cmd_fd, sctx, ibv_ctx,
					    SROCE_DRIVER_ID);
	if (!sctx)
		return NULL;

	return sroce_context_done(sctx,
				  ibv_cmd_query_context(&sctx->ibv_ctx.context,
							NULL));
}

static struct verbs_device *sroce_alloc_device(struct verbs_sysfs_dev *sdev)
{
	struct sroce_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->ibv_dev;
}

static void sroce_uninit_device(struct verbs_device *vdev)
{
	free(to_sdev(vdev));
}

/*
 * Match on the driver id alone: the kernel reports it over netlink, it is
 * unique to sroce (rxe's differs, so librxe keeps its devices), and it does
 * not depend on how the device was named.
 */
static const struct verbs_match_ent sroce_match_table[] = {
	VERBS_DRIVER_ID(SROCE_DRIVER_ID),
	{}
};

static const struct verbs_device_ops sroce_dev_ops = {
	.name = "sroce",
	.match_min_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_table = sroce_match_table,
	.alloc_device = sroce_alloc_device,
	.uninit_device = sroce_uninit_device,
	.alloc_context = sroce_alloc_context,
	.import_context = sroce_import_context,
};

PROVIDER_DRIVER(sroce, sroce_dev_ops);
