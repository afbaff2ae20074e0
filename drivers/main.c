// SPDX-License-Identifier: GPL-2.0
/*
 * sroce: RDMA over Converged Ethernet v2, in software, on any Ethernet
 * netdev.
 */
#include <linux/module.h>
#include <linux/workqueue.h>

#include "device.h"
#include "icrc.h"
#include "link.h"
#include "netdev.h"
#include "qp.h"
#include "rx.h"

/*
 * Where QPs send what their posting context or softirq left over, and
 * flush after errors: per CPU, so that a QP's work runs where it was
 * queued, near its data; high priority, as it is latency that waits.
 */
struct workqueue_struct *sroce_wq;

static int __init sroce_init(void)
{
	int err;

	sroce_wq = alloc_workqueue("sroce", WQ_HIGHPRI, 0);
	if (!sroce_wq)
		return -ENOMEM;
	sroce_icrc_init();
	err = sroce_rx_init();
	if (err)
		goto err_icrc;
	err = sroce_netdev_init();
	if (err)
		goto err_rx;
	sroce_link_register();
	return 0;

err_rx:
	sroce_rx_exit();
err_icrc:
	sroce_icrc_exit();
	destroy_workqueue(sroce_wq);
	return err;
}

/*
 * Stop new links first, then remove the devices while the netdev notifier
 * still runs, so a netdev vanishing meanwhile is still let go of. The
 * destroyed QPs' packets still in a qdisc call back into the module when
 * freed: wait for them before anything they use goes.
 */
static void __exit sroce_exit(void)
{
	sroce_link_unregister();
	sroce_dev_unregister_all();
	sroce_qp_wait_packets();
	sroce_netdev_exit();
	sroce_rx_exit();
	destroy_workqueue(sroce_wq);
	sroce_icrc_exit();
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_DESCRIPTION("Soft RoCE: RDMA over Converged Ethernet v2 in software");
MODULE_AUTHOR("The sroce developers");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("sroce");
