// SPDX-License-Identifier: GPL-2.0
/*
 * sroce: RDMA over Converged Ethernet v2, in software, on any Ethernet
 * netdev.
 */
#include <linux/module.h>

#include "device.h"
#include "link.h"
#include "netdev.h"

static int __init sroce_init(void)
{
	int err;

	err = sroce_netdev_init();
	if (err)
		return err;
	sroce_link_register();
	return 0;
}

/*
 * Stop new links first, then remove the devices while the netdev notifier
 * still runs, so a netdev vanishing meanwhile is still let go of.
 */
static void __exit sroce_exit(void)
{
	sroce_link_unregister();
	sroce_dev_unregister_all();
	sroce_netdev_exit();
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_DESCRIPTION("Soft RoCE: RDMA over Converged Ethernet v2 in software");
MODULE_AUTHOR("The sroce developers");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("sroce");
