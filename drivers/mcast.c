// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast for UD QPs. A group is a multicast GID, which on RoCEv2 is a
 * multicast IP address (IPv4-mapped for IPv4); its datagrams carry the
 * destination QPN 0xffffff and reach every QP attached to the group on
 * this device. The first attach to a group subscribes the netdev to the
 * matching Ethernet multicast address, the last detach unsubscribes it.
 *
 * The receive path looks groups up under RCU. Attach and detach, which are
 * rare, replace a group's entry with an updated copy, so that a reader
 * sees each QP of the group exactly once.
 */
#include <linux/etherdevice.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <net/if_inet6.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "device.h"
#include "limits.h"
#include "mcast.h"
#include "pkt.h"
#include "qp.h"
#include "ud.h"

/**
 * struct sroce_mcast - a multicast group with QPs attached on this device
 * @node: in the device's list, under RCU
 * @mgid: the group's GID
 * @mac: the Ethernet multicast address the netdev is subscribed to
 * @nqp: entries in @qps
 * @rcu: frees a replaced copy after readers are done with it
 * @qps: the attached QPs' reference objects
 */
struct sroce_mcast {
	struct list_head node;
	union ib_gid mgid;
	u8 mac[ETH_ALEN];
	u32 nqp;
	struct rcu_head rcu;
	struct sroce_qp_ref *qps[];
};

/* The Ethernet address IP multicast to @mgid goes to (RFC 1112, 2464). */
static void sroce_mcast_mac(const union ib_gid *mgid, u8 *mac)
{
	const struct in6_addr *a = (const struct in6_addr *)mgid->raw;

	if (ipv6_addr_v4mapped(a))
		ip_eth_mc_map(a->s6_addr32[3], mac);
	else
		ipv6_eth_mc_map(a, mac);
}

/* Only IP multicast addresses name groups. */
static bool sroce_mcast_gid_ok(const union ib_gid *mgid)
{
	const struct in6_addr *a = (const struct in6_addr *)mgid->raw;

	if (ipv6_addr_v4mapped(a))
		return ipv4_is_multicast(a->s6_addr32[3]);
	return ipv6_addr_is_multicast(a);
}

static struct sroce_mcast *sroce_mcast_find(struct sroce_dev *sdev,
					    const union ib_gid *mgid)
{
	struct sroce_mcast *g;

	list_for_each_entry_rcu(g, &sdev->mcasts, node,
				lockdep_is_held(&sdev->mcast_lock))
		if (!memcmp(g->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return g;
	return NULL;
}

/* A copy of @old (or a new group, if NULL) with room for @nqp QPs. */
static struct sroce_mcast *sroce_mcast_copy(const struct sroce_mcast *old,
					    const union ib_gid *mgid, u32 nqp)
{
	struct sroce_mcast *g;

	g = kzalloc(struct_size(g, qps, nqp), GFP_KERNEL);
	if (!g)
		return NULL;
	g->mgid = *mgid;
	if (old) {
		ether_addr_copy(g->mac, old->mac);
		g->nqp = old->nqp;
		memcpy(g->qps, old->qps, old->nqp * sizeof(old->qps[0]));
	} else {
		sroce_mcast_mac(mgid, g->mac);
	}
	return g;
}

static int sroce_mcast_index(const struct sroce_mcast *g,
			     const struct sroce_qp *qp)
{
	u32 i;

	for (i = 0; g && i < g->nqp; i++)
		if (g->qps[i] == qp->ref)
			return i;
	return -1;
}

static int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcast *old, *g;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD || !sroce_mcast_gid_ok(mgid))
		return -EINVAL;

	mutex_lock(&sdev->mcast_lock);
	old = sroce_mcast_find(sdev, mgid);
	if (sroce_mcast_index(old, qp) >= 0)
		goto unlock;	/* attached already: nothing changes */
	if (old ? old->nqp >= SROCE_MAX_MCAST_QP_ATTACH :
		  sdev->nmcast >= SROCE_MAX_MCAST_GRP) {
		err = -ENOMEM;
		goto unlock;
	}
	g = sroce_mcast_copy(old, mgid, old ? old->nqp + 1 : 1);
	if (!g) {
		err = -ENOMEM;
		goto unlock;
	}
	g->qps[g->nqp++] = qp->ref;
	if (old) {
		list_replace_rcu(&old->node, &g->node);
		kfree_rcu(old, rcu);
	} else {
		err = dev_mc_add(sdev->ndev, g->mac);
		if (err) {
			kfree(g);
			goto unlock;
		}
		list_add_rcu(&g->node, &sdev->mcasts);
		sdev->nmcast++;
	}
unlock:
	mutex_unlock(&sdev->mcast_lock);
	return err;
}

/* Takes the QP at @i out of group @old; under mcast_lock. */
static int sroce_mcast_remove(struct sroce_dev *sdev, struct sroce_mcast *old,
			      int i)
{
	struct sroce_mcast *g;

	lockdep_assert_held(&sdev->mcast_lock);

	if (old->nqp == 1) {
		list_del_rcu(&old->node);
		sdev->nmcast--;
		dev_mc_del(sdev->ndev, old->mac);
		kfree_rcu(old, rcu);
		return 0;
	}
	g = sroce_mcast_copy(old, &old->mgid, old->nqp);
	if (!g)
		return -ENOMEM;
	g->qps[i] = g->qps[--g->nqp];
	list_replace_rcu(&old->node, &g->node);
	kfree_rcu(old, rcu);
	return 0;
}

static int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_mcast *g;
	int i, err = -EINVAL;

	mutex_lock(&sdev->mcast_lock);
	g = sroce_mcast_find(sdev, mgid);
	i = sroce_mcast_index(g, to_sqp(ibqp));
	if (i >= 0)
		err = sroce_mcast_remove(sdev, g, i);
	mutex_unlock(&sdev->mcast_lock);
	return err;
}

/**
 * sroce_mcast_detach_qp() - take a QP being destroyed out of every group
 * @qp: the QP
 *
 * uverbs detaches a process's QP before destroying it; a kernel consumer
 * may not have, and a group must never keep a destroyed QP.
 *
 * Context: process.
 */
void sroce_mcast_detach_qp(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_mcast *g, *next;
	int i;

	mutex_lock(&sdev->mcast_lock);
	list_for_each_entry_safe(g, next, &sdev->mcasts, node) {
		i = sroce_mcast_index(g, qp);
		/*
		 * Without memory for a smaller copy, the entry is cleared in
		 * place: a reader sees the QP or NULL, both handled.
		 */
		if (i >= 0 && sroce_mcast_remove(sdev, g, i))
			WRITE_ONCE(g->qps[i], NULL);
	}
	mutex_unlock(&sdev->mcast_lock);
}

/**
 * sroce_mcast_rx() - a datagram to a multicast group
 * @sdev: the device
 * @pkt: a UD packet with the destination QPN 0xffffff; not consumed
 *
 * Every QP of the group gets its own copy, each taken from the one skb.
 *
 * Context: softirq.
 */
void sroce_mcast_rx(struct sroce_dev *sdev, struct sroce_pkt *pkt)
{
	struct sroce_qp_ref *ref;
	struct sroce_mcast *g;
	bool any = false;
	u32 i;

	rcu_read_lock();
	g = sroce_mcast_find(sdev, &pkt->dgid);
	for (i = 0; g && i < g->nqp; i++) {
		ref = READ_ONCE(g->qps[i]);
		if (!ref || !refcount_inc_not_zero(&ref->count))
			continue;
		sroce_ud_rx(ref->qp, pkt);
		sroce_qp_put(ref->qp);
		any = true;
	}
	rcu_read_unlock();
	if (!any)
		sroce_count(sdev, SROCE_CNT_RX_NO_QP);
}

/**
 * sroce_mcast_local() - does a QP of this device listen to this group?
 * @sdev: the device
 * @mgid: a destination GID
 *
 * The IP stack loops multicast back to the host's own members; sroce
 * sends below it and must do the same itself.
 *
 * Context: any.
 */
bool sroce_mcast_local(struct sroce_dev *sdev, const union ib_gid *mgid)
{
	bool found;

	if (list_empty(&sdev->mcasts))
		return false;
	rcu_read_lock();
	found = sroce_mcast_find(sdev, mgid);
	rcu_read_unlock();
	return found;
}

const struct ib_device_ops sroce_mcast_ops = {
	.attach_mcast = sroce_attach_mcast,
	.detach_mcast = sroce_detach_mcast,
};
