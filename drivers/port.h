/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_PORT_H
#define SROCE_PORT_H

#include <rdma/ib_verbs.h>

struct sroce_dev;

/**
 * struct sroce_port - the one RoCE port of a sroce device
 * @state: IB_PORT_ACTIVE or IB_PORT_DOWN, following the netdev
 * @active_mtu: the IB MTU the netdev's MTU can carry
 * @mtu_fits: false when the netdev MTU is too small for any IB MTU
 *
 * Written only under RTNL (netdev events and device add), read locklessly
 * by the query verbs.
 */
struct sroce_port {
	enum ib_port_state state;
	enum ib_mtu active_mtu;
	bool mtu_fits;
};

enum ib_mtu sroce_mtu_from_netdev(unsigned int ndev_mtu);
enum ib_port_state sroce_port_state_of(bool running, bool carrier,
				       bool mtu_fits);

void sroce_port_update(struct sroce_dev *sdev, bool notify);

extern const struct ib_device_ops sroce_port_ops;

#endif /* SROCE_PORT_H */
