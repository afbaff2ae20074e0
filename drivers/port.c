// SPDX-License-Identifier: GPL-2.0
/*
 * The port: its state and MTU follow the Ethernet netdev the device is
 * attached to, and changes are announced to the RDMA core as port events.
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "device.h"
#include "limits.h"
#include "port.h"
#include "wire.h"

/**
 * sroce_mtu_from_netdev() - the IB MTU a link MTU can carry
 * @ndev_mtu: the netdev's MTU (the IP packet size, in bytes)
 *
 * Return: the largest IB MTU whose payload fits in a RoCEv2 frame of
 * @ndev_mtu bytes with the worst-case headers, or 0 when not even a
 * 256-byte payload fits.
 */
enum ib_mtu sroce_mtu_from_netdev(unsigned int ndev_mtu)
{
	unsigned int room;

	if (ndev_mtu < SROCE_MAX_OVERHEAD + 256)
		return 0;
	room = min_t(unsigned int, ndev_mtu - SROCE_MAX_OVERHEAD, 4096);
	return ib_mtu_int_to_enum(room);
}

/**
 * sroce_port_state_of() - the IB port state a netdev's condition implies
 * @running: the netdev is administratively up
 * @carrier: the netdev has carrier
 * @mtu_fits: the netdev's MTU can carry at least IB_MTU_256
 *
 * A port whose link cannot carry a single RoCE packet is not usable, so it
 * is reported down rather than active with an MTU it cannot honour.
 */
enum ib_port_state sroce_port_state_of(bool running, bool carrier,
				       bool mtu_fits)
{
	return running && carrier && mtu_fits ? IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static void sroce_port_event(struct sroce_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/**
 * sroce_port_update() - re-read the netdev's state and MTU into the port
 * @sdev: the device
 * @notify: dispatch PORT_ACTIVE/PORT_ERR when the state changes; false
 *	    before the device is registered, when nobody can listen yet
 *
 * Context: RTNL held, which orders all updates against each other.
 */
void sroce_port_update(struct sroce_dev *sdev, bool notify)
{
	struct sroce_port *port = &sdev->port;
	struct net_device *ndev = sdev->ndev;
	enum ib_port_state state;
	enum ib_mtu mtu;

	ASSERT_RTNL();
	mtu = sroce_mtu_from_netdev(ndev->mtu);
	state = sroce_port_state_of(netif_running(ndev), netif_carrier_ok(ndev),
				    mtu != 0);

	WRITE_ONCE(port->mtu_fits, mtu != 0);
	WRITE_ONCE(port->active_mtu, mtu ? mtu : IB_MTU_256);
	if (state == port->state)
		return;
	WRITE_ONCE(port->state, state);
	if (notify)
		sroce_port_event(sdev, state == IB_PORT_ACTIVE ?
				 IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
}

static int sroce_query_port(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	struct sroce_port *port = &sdev->port;

	/* The core zeroes *attr; only what RoCE defines is filled in. */
	attr->state = READ_ONCE(port->state);
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = READ_ONCE(port->active_mtu);
	attr->gid_tbl_len = SROCE_GID_TBL_LEN;
	attr->pkey_tbl_len = SROCE_PKEY_TBL_LEN;
	attr->max_msg_sz = SROCE_MAX_MSG_SZ;
	attr->max_vl_num = 1;

	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (netif_running(sdev->ndev) && READ_ONCE(port->mtu_fits))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;

	/*
	 * While the netdev unregisters, the core no longer finds it for the
	 * speed; the core's own cache update queries the port then, and
	 * fails loudly on an error. The port is down: any speed will do.
	 */
	if (ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				    struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SROCE_PKEY_TBL_LEN;
	immutable->gid_tbl_len = SROCE_GID_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int sroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			    u16 *pkey)
{
	if (index >= SROCE_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev,
						 u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

const struct ib_device_ops sroce_port_ops = {
	.get_link_layer = sroce_get_link_layer,
	.get_port_immutable = sroce_get_port_immutable,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
};
