/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_AH_H
#define SROCE_AH_H

#include <linux/if_ether.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "ucontext.h"

/**
 * struct sroce_av - where packets go: an AH's address, or the primary path
 *		     of a connected QP; what a RoCEv2 header is built from
 * @sgid: source GID (an IPv4-mapped address for IPv4)
 * @dgid: destination GID, of the same family as @sgid
 * @dmac: the next hop's MAC, as the core resolved it
 * @smac: the source GID's netdev's MAC, used when @vlan_proto is set
 * @vlan_proto: the 802.1Q or 802.1ad tag sroce puts on frames to a GID of
 *		a VLAN netdev above the attached one; 0: the frame goes as the
 *		attached netdev sends it
 * @vlan_tci: that tag's VLAN ID and priority
 * @net_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6, from the source GID
 * @flow_label: IPv6 flow label (20 bits)
 * @sgid_index: the source GID's index in the port's table
 * @hop_limit: IPv6 hop limit or IPv4 TTL
 * @traffic_class: IPv6 traffic class or IPv4 TOS (DSCP and ECN bits)
 * @sl: service level, kept to report it back
 * @static_rate: kept to report it back
 */
struct sroce_av {
	union ib_gid sgid;
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	u8 smac[ETH_ALEN];
	__be16 vlan_proto;
	u16 vlan_tci;
	enum rdma_network_type net_type;
	u32 flow_label;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u8 sl;
	u8 static_rate;
};

/**
 * struct sroce_ah - an address handle
 * @ibah: the core's object, allocated and freed by the core
 * @av: the address
 * @uc: the owning user context, or NULL for a kernel AH
 * @ah_num: a user AH's name in @uc's table, given to the provider
 */
struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_av av;
	struct sroce_ucontext *uc;
	u32 ah_num;
};

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

int sroce_av_check(const struct rdma_ah_attr *attr);
void sroce_av_set(struct sroce_av *av, const struct rdma_ah_attr *attr);
void sroce_av_get(const struct sroce_av *av, struct rdma_ah_attr *attr);
int sroce_ah_lookup_av(struct sroce_ucontext *uc, const struct ib_pd *pd,
		       u32 ah_num, struct sroce_av *av);

extern const struct ib_device_ops sroce_ah_ops;

#endif /* SROCE_AH_H */
