/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_LINK_H
#define SROCE_LINK_H

#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

/* One less than the core keeps, so that its silent truncation shows. */
#define SROCE_NAME_MAX	(IB_DEVICE_NAME_MAX - 2)

int sroce_link_check_name(const char *name);
int sroce_link_check_netdev(const struct net_device *ndev);

void sroce_link_register(void);
void sroce_link_unregister(void);

#endif /* SROCE_LINK_H */
