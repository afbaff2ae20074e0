// SPDX-License-Identifier: GPL-2.0
/*
 * `rdma link add NAME type sroce netdev DEV`: the rdma link type through
 * which users attach sroce to a netdev. Deletion needs nothing here: the
 * core unregisters the device, and the device's dealloc_driver cleans up.
 */
#include <linux/ctype.h>
#include <linux/if_arp.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "device.h"
#include "link.h"

/* Makes "is there a device on this netdev?" and the add one step. */
static DEFINE_MUTEX(sroce_link_lock);

/**
 * sroce_link_check_name() - may a new RDMA device take this name?
 * @name: the requested name, NUL-terminated by the netlink layer
 *
 * The core rejects empty names and '%' templates. Beyond that, the name
 * becomes a sysfs directory and shows in every tool's output, so refuse
 * what would be mangled there ('/') or be unreadable (spaces, control
 * characters) rather than register a device nobody can name.
 *
 * The core copies the name into IB_DEVICE_NAME_MAX bytes and silently
 * truncates a longer one, so a name that fills the buffer may have been
 * cut: refuse it instead of registering a name the user never asked for.
 *
 * Return: 0, -EINVAL for a malformed name, -ENAMETOOLONG for one of
 * SROCE_NAME_MAX + 1 characters or more, -EEXIST when an RDMA device (of
 * any driver) already has it.
 */
int sroce_link_check_name(const char *name)
{
	struct ib_device *other;
	const char *c;

	if (!*name)
		return -EINVAL;
	if (strnlen(name, IB_DEVICE_NAME_MAX) > SROCE_NAME_MAX)
		return -ENAMETOOLONG;
	for (c = name; *c; c++)
		if (!isgraph(*c) || *c == '/' || *c == '%')
			return -EINVAL;

	other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		return -EEXIST;
	}
	return 0;
}

/**
 * sroce_link_check_netdev() - can sroce run on this netdev?
 * @ndev: the netdev
 *
 * RoCEv2 frames are Ethernet frames: the netdev must be an Ethernet device
 * with a unicast MAC. Loopback is refused even though it speaks Ethernet
 * framing in places, since frames sent on it never reach a peer.
 *
 * Return: 0 or -EOPNOTSUPP.
 */
int sroce_link_check_netdev(const struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN ||
	    (ndev->flags & IFF_LOOPBACK))
		return -EOPNOTSUPP;
	return 0;
}

static int sroce_newlink(const char *name, struct net_device *ndev)
{
	struct sroce_dev *other;
	int err;

	err = sroce_link_check_netdev(ndev);
	if (err) {
		pr_info("cannot attach to %s: not an Ethernet device\n",
			ndev->name);
		return err;
	}

	mutex_lock(&sroce_link_lock);
	err = sroce_link_check_name(name);
	if (err) {
		pr_info("cannot name a device \"%s\": %pe\n", name,
			ERR_PTR(err));
		goto out;
	}

	other = sroce_dev_get_by_netdev(ndev);
	if (other) {
		pr_info("%s already has sroce device %s\n", ndev->name,
			dev_name(&other->ibdev.dev));
		sroce_dev_put(other);
		err = -EEXIST;
		goto out;
	}

	err = sroce_dev_add(name, ndev);
	if (err)
		pr_info("adding %s on %s failed: %d\n", name, ndev->name, err);
out:
	mutex_unlock(&sroce_link_lock);
	return err;
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

void sroce_link_register(void)
{
	rdma_link_register(&sroce_link_ops);
}

void sroce_link_unregister(void)
{
	rdma_link_unregister(&sroce_link_ops);
}
