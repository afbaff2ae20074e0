// SPDX-License-Identifier: GPL-2.0
/*
 * The sroce ib_device: creation on a netdev, registration with the RDMA
 * core, the device-wide query verbs, and teardown.
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "ah.h"
#include "counters.h"
#include "cq.h"
#include "device.h"
#include "limits.h"
#include "mcast.h"
#include "mr.h"
#include "msg.h"
#include "mw.h"
#include "net.h"
#include "odp.h"
#include "pd.h"
#include "port.h"
#include "post.h"
#include "qp.h"
#include "req.h"
#include "srq.h"
#include "ucontext.h"

static void sroce_init_attr(struct sroce_dev *sdev)
{
	struct ib_device_attr *attr = &sdev->attr;

	attr->vendor_id = 0xffffff;	/* no IEEE OUI: a software device */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;	/* rdma link delete */
	attr->max_mr_size = SROCE_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_XRC |
				 SROCE_DEVICE_ATOMIC_WRITE |
				 SROCE_DEVICE_FLUSH_GLOBAL;
	attr->max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGES;
	attr->max_qp = SROCE_MAX_QP;
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE;
	attr->max_cq = SROCE_MAX_CQ;
	attr->max_cqe = SROCE_MAX_CQE;
	attr->max_mr = SROCE_MAX_MR;
	attr->max_mw = SROCE_MAX_MR;	/* windows and MRs share one table */
	attr->max_pd = SROCE_MAX_PD;
	attr->max_qp_rd_atom = SROCE_MAX_QP_RD_ATOM;
	attr->max_qp_init_rd_atom = SROCE_MAX_QP_RD_ATOM;
	attr->max_res_rd_atom = SROCE_MAX_QP_RD_ATOM * SROCE_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = SROCE_MAX_AH;
	attr->max_srq = SROCE_MAX_SRQ;
	attr->max_srq_wr = SROCE_MAX_SRQ_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	attr->max_pkeys = SROCE_PKEY_TBL_LEN;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP *
					  SROCE_MAX_MCAST_QP_ATTACH;
	attr->local_ca_ack_delay = SROCE_LOCAL_CA_ACK_DELAY;
	addrconf_addr_eui48((u8 *)&attr->sys_image_guid, sdev->ndev->dev_addr);
	sroce_odp_caps(attr);
}

static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	/* No vendor extension is defined: refuse any, as the core expects. */
	if (udata->inlen || udata->outlen)
		return -EINVAL;
	*attr = to_sdev(ibdev)->attr;
	return 0;
}

/*
 * Called by the core once the device is unregistered and no verb can run
 * any more, just before it frees the memory: release what we hold.
 */
static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	rtnl_lock();
	sroce_net_detach(sdev);
	rtnl_unlock();
	sroce_counters_free(sdev);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	xa_destroy(&sdev->srqs);
	xa_destroy(&sdev->qps);
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = SROCE_DRIVER_ID,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.dealloc_driver = sroce_dealloc_driver,
	.query_device = sroce_query_device,
};

/*
 * Each noun's file owns its verbs; the core merges the tables. One line
 * here per object kind.
 */
static const struct ib_device_ops *const sroce_verbs[] = {
	&sroce_dev_ops,
	&sroce_port_ops,
	&sroce_ucontext_ops,
	&sroce_pd_ops,
	&sroce_cq_ops,
	&sroce_qp_ops,
	&sroce_post_ops,
	&sroce_srq_ops,
	&sroce_mr_ops,
	&sroce_mw_ops,
	&sroce_ah_ops,
	&sroce_mcast_ops,
	&sroce_counters_ops,
};

static void sroce_set_verbs(struct ib_device *ibdev)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sroce_verbs); i++)
		ib_set_device_ops(ibdev, sroce_verbs[i]);
	/*
	 * The core leaves the data-path write commands off by default; the
	 * doorbell is POST_SEND with no work requests.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
}

/*
 * With `rdma system set netns exclusive`, a device belongs to one network
 * namespace: this one is born in its netdev's, the one `rdma link add`
 * ran in (newlink looks the netdev up there), and only processes there
 * see and use it, as they alone see the netdev. The core has no call for
 * a driver to name it; it reads coredev.rdma_net from registration on, and
 * moves a registered device back to init_net when its namespace goes (the
 * netdev's leaving unregisters ours first, see sroce_netdev_event()). In
 * shared mode every namespace sees the device, from init_net as before.
 */
static void sroce_dev_set_netns(struct sroce_dev *sdev, struct net *net)
{
	if (rdma_dev_access_netns(&sdev->ibdev, net))
		return;	/* shared mode, or init_net */
	write_pnet(&sdev->ibdev.coredev.rdma_net, net);
}

/**
 * sroce_dev_add() - create and register a sroce device on a netdev
 * @name: the RDMA device name, already validated
 * @ndev: an Ethernet netdev, held by the caller for the call's duration
 *
 * Context: process; takes RTNL. The caller serialises adds, so that the
 * "one device per netdev" check and the registration are atomic.
 * Return: 0 or a negative errno, with nothing left behind on failure.
 */
int sroce_dev_add(const char *name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	int err;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	sroce_init_attr(sdev);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC);
	INIT_LIST_HEAD(&sdev->mcasts);
	mutex_init(&sdev->mcast_lock);
	xa_init_flags(&sdev->srqs, XA_FLAGS_ALLOC);
	sroce_mr_table_init(&sdev->mrs);

	strscpy(sdev->ibdev.node_desc, "sroce", sizeof(sdev->ibdev.node_desc));
	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = num_possible_cpus();
	addrconf_addr_eui48((u8 *)&sdev->ibdev.node_guid, ndev->dev_addr);
	/*
	 * Under the netdev's own device (a NIC's PCI function), as a
	 * hardware RDMA device is: tools find the netdev through
	 * /sys/class/infiniband/<dev>/device/net. A virtual netdev has none.
	 */
	sdev->ibdev.dev.parent = ndev->dev.parent;
	/*
	 * From here on ib_dealloc_device() calls sroce_dealloc_driver(),
	 * registered or not: it releases all the device holds, whatever
	 * step failed (each of its steps copes with what was never set up).
	 */
	sroce_set_verbs(&sdev->ibdev);

	err = sroce_counters_alloc(sdev);
	if (err)
		goto err_dealloc;
	err = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (err)
		goto err_dealloc;

	/* From here on packets arrive: sroce_rx() copes before registration. */
	rtnl_lock();
	sroce_port_update(sdev, false);
	err = sroce_net_attach(sdev);
	rtnl_unlock();
	if (err)
		goto err_dealloc;

	/*
	 * Once registered, the device can be unregistered and released by a
	 * concurrent `rdma link delete` or netdev removal at any moment: keep
	 * its memory until we are done with it.
	 */
	get_device(&sdev->ibdev.dev);
	sroce_dev_set_netns(sdev, dev_net(ndev));
	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err)
		goto err_put;

	/*
	 * Netdev events between the first read and registration found no
	 * device to update: read again, now announcing any change.
	 */
	if (ib_device_try_get(&sdev->ibdev)) {
		rtnl_lock();
		sroce_port_update(sdev, true);
		rtnl_unlock();
		ib_device_put(&sdev->ibdev);
	}
	put_device(&sdev->ibdev.dev);
	return 0;

err_put:
	/* ib_dealloc_device() holds the device's first reference to its end. */
	put_device(&sdev->ibdev.dev);
err_dealloc:
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

/**
 * sroce_dev_get_by_netdev() - the sroce device on a netdev, if any
 * @ndev: the netdev
 *
 * Return: the device with a registration reference the caller drops with
 * sroce_dev_put(), or NULL.
 */
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(ndev, SROCE_DRIVER_ID);
	return ibdev ? to_sdev(ibdev) : NULL;
}

void sroce_dev_put(struct sroce_dev *sdev)
{
	ib_device_put(&sdev->ibdev);
}

/* Unregister every sroce device, waiting for each to be gone. */
void sroce_dev_unregister_all(void)
{
	ib_unregister_driver(SROCE_DRIVER_ID);
}
