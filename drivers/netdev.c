// SPDX-License-Identifier: GPL-2.0
/*
 * Following the netdevs sroce devices are attached to: their state, MTU
 * and disappearance. (Their IP addresses reach the GID table through the
 * RDMA core's own RoCE GID management, which watches the same netdev.)
 */
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/rtnetlink.h>

#include "device.h"
#include "net.h"
#include "netdev.h"
#include "port.h"

/* Context: netdev notifier chain, RTNL held. */
static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct netdev_notifier_changeupper_info *upper = ptr;
	struct sroce_dev *sdev;

	ASSERT_RTNL();
	sdev = sroce_dev_get_by_netdev(ndev);
	if (!sdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* No more frames from it; dealloc_driver would be too late. */
		sroce_net_detach(sdev);
		/*
		 * The netdev cannot finish unregistering while we hold it,
		 * and unregistering an ib_device takes RTNL: hand that to
		 * the core's workqueue instead of deadlocking here.
		 */
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	case NETDEV_CHANGEUPPER:
		/* A VLAN netdev above ours: its GIDs are the port's too. */
		if (upper->linking)
			sroce_net_attach_upper(sdev, upper->upper_dev);
		else
			sroce_net_detach_upper(sdev, upper->upper_dev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		sroce_port_update(sdev, true);
		break;
	default:
		break;
	}

	sroce_dev_put(sdev);
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

int sroce_netdev_init(void)
{
	return register_netdevice_notifier(&sroce_netdev_notifier);
}

void sroce_netdev_exit(void)
{
	unregister_netdevice_notifier(&sroce_netdev_notifier);
}
