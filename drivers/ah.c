// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles: RoCEv2 destinations for UD sends, for kernel consumers
 * (who pass the AH itself in a work request) and for processes (whose
 * send WQEs name it by the number create_ah returned).
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "ah.h"
#include "device.h"
#include "limits.h"
#include "ucontext.h"

/*
 * The netdev of a source GID, as the core found it: the attached netdev
 * itself, or a VLAN netdev above it, whose addresses the core adds to the
 * port's table too (as it does for hardware RoCE ports). A GID of a VLAN
 * above that VLAN (QinQ stacked as two netdevs) is not one sroce can send
 * from: it would need two tags. Fills @av's VLAN fields from it, if @av is
 * not NULL.
 *
 * The priority bits are the DSCP's class (its top three bits), the usual
 * mapping of a RoCE traffic class to a priority, so that a switch's PFC
 * and the netdev's queues see the class the application chose.
 */
static bool sroce_av_is_upper(struct net_device *lower,
			      struct net_device *ndev)
{
	struct net_device *upper;
	struct list_head *iter;

	netdev_for_each_upper_dev_rcu(lower, upper, iter)
		if (upper == ndev)
			return true;
	return false;
}

static int sroce_av_netdev(const struct ib_gid_attr *gattr, u8 tclass,
			   struct sroce_av *av)
{
	struct net_device *ndev;
	int err = 0;

	rcu_read_lock();
	/* None: the GID is being deleted, and no peer answers it any more. */
	ndev = rcu_dereference(gattr->ndev);
	if (ndev && ndev != to_sdev(gattr->device)->ndev) {
		if (!is_vlan_dev(ndev) ||
		    !sroce_av_is_upper(to_sdev(gattr->device)->ndev, ndev)) {
			err = -EINVAL;
		} else if (av) {
			av->vlan_proto = vlan_dev_vlan_proto(ndev);
			av->vlan_tci = vlan_dev_vlan_id(ndev) |
				       (tclass >> 5) << VLAN_PRIO_SHIFT;
			ether_addr_copy(av->smac, ndev->dev_addr);
		}
	}
	rcu_read_unlock();
	return err;
}

/**
 * sroce_av_check() - can sroce send to this address?
 * @attr: an AH's attribute or a QP's primary path, with the source GID
 *	  attribute the core looked up (grh.sgid_attr)
 *
 * RoCEv2 alone is spoken: a GRH is required, the source GID must be a
 * RoCEv2 one, of the attached netdev or of a VLAN above it, and the
 * destination must be of the same IP family, as one packet carries both
 * addresses in one IP header.
 *
 * What RoCE ignores is not refused: the DLID and source path bits (the
 * core does not even keep them for a RoCE attribute), and flow label bits
 * above the 20 the GRH has, which sroce_av_set() drops as hardware RoCE
 * devices do. UCX, for one, sets them all (the ones' complement of its
 * path index) on every AH and RC path.
 *
 * Return: 0 or -EINVAL.
 */
int sroce_av_check(const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	enum rdma_network_type net_type;
	bool src_v4, dst_v4;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(attr) != 1 || !grh->sgid_attr)
		return -EINVAL;

	net_type = rdma_gid_attr_network_type(grh->sgid_attr);
	if (net_type != RDMA_NETWORK_IPV4 && net_type != RDMA_NETWORK_IPV6)
		return -EINVAL;
	src_v4 = net_type == RDMA_NETWORK_IPV4;
	dst_v4 = ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw);
	if (src_v4 != dst_v4)
		return -EINVAL;
	return sroce_av_netdev(grh->sgid_attr, grh->traffic_class, NULL) ?
	       -EINVAL : 0;
}

/*
 * Take the address from an attribute sroce_av_check() accepted. Its GID
 * may have been deleted since (the core holds the attribute, not the
 * entry): the AV is then left untagged, and its frames name a source
 * address the host no longer has.
 */
void sroce_av_set(struct sroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);

	memset(av, 0, sizeof(*av));
	av->sgid = grh->sgid_attr->gid;
	av->dgid = grh->dgid;
	ether_addr_copy(av->dmac, attr->roce.dmac);
	av->net_type = rdma_gid_attr_network_type(grh->sgid_attr);
	av->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	av->sgid_index = grh->sgid_attr->index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(attr);
	av->static_rate = rdma_ah_get_static_rate(attr);
	if (sroce_av_netdev(grh->sgid_attr, grh->traffic_class, av))
		av->vlan_proto = 0;
}

/* The attribute an AV was made from, less the GID attribute reference. */
void sroce_av_get(const struct sroce_av *av, struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_static_rate(attr, av->static_rate);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	ether_addr_copy(attr->roce.dmac, av->dmac);
}

/**
 * sroce_ah_lookup_av() - the address a user send WQE's ah_num names
 * @uc: the context of the QP whose WQE it is
 * @pd: the QP's PD: an AH of another PD is not the QP's to use
 * @ah_num: as read from the WQE; any value
 * @av: a copy of the AH's address, on success
 *
 * The AV is copied under the table's lock, which destroy_ah takes to remove
 * the AH: the AH may be destroyed (and freed by the core) right after, and
 * the send goes out to the address it had when the WQE was taken.
 *
 * Context: process or softirq.
 * Return: 0, or -EINVAL when @uc has no AH of that number in @pd.
 */
int sroce_ah_lookup_av(struct sroce_ucontext *uc, const struct ib_pd *pd,
		       u32 ah_num, struct sroce_av *av)
{
	struct sroce_ah *ah;

	xa_lock_bh(&uc->ahs);
	ah = xa_load(&uc->ahs, ah_num);
	if (ah && ah->ibah.pd != pd)
		ah = NULL;
	if (ah)
		*av = ah->av;
	xa_unlock_bh(&uc->ahs);
	return ah ? 0 : -EINVAL;
}

/*
 * Allocates nothing: the core made the AH, with GFP_ATOMIC when the caller
 * may not sleep, so there is no RDMA_CREATE_AH_SLEEPABLE case to honour.
 */
static int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			   struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	int err;

	err = sroce_av_check(init->ah_attr);
	if (err)
		return err;
	sroce_av_set(&to_sah(ibah)->av, init->ah_attr);

	if (!sroce_obj_count_get(&sdev->ah_count, SROCE_MAX_AH, udata))
		return -ENOMEM;
	return 0;
}

static int sroce_create_user_ah(struct ib_ah *ibah,
				struct rdma_ah_init_attr *init,
				struct ib_udata *udata)
{
	struct sroce_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	struct sroce_create_ah_resp resp = {};
	struct sroce_ah *ah = to_sah(ibah);
	int err;

	/* No request is defined, and a provider must learn its ah_num. */
	if ((udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen)) ||
	    udata->outlen < sizeof(resp))
		return -EINVAL;

	err = sroce_create_ah(ibah, init, udata);
	if (err)
		return err;

	err = xa_alloc_bh(&uc->ahs, &ah->ah_num, ah, XA_LIMIT(1, SROCE_MAX_AH),
			  GFP_KERNEL);
	if (err)
		goto err_count;
	ah->uc = uc;

	resp.ah_num = ah->ah_num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_erase;
	return 0;

err_erase:
	xa_erase_bh(&uc->ahs, ah->ah_num);
err_count:
	atomic_dec(&to_sdev(ibah->device)->ah_count);
	return err;
}

static int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_ah *ah = to_sah(ibah);

	if (ah->uc)
		xa_erase_bh(&ah->uc->ahs, ah->ah_num);
	atomic_dec(&to_sdev(ibah->device)->ah_count);
	return 0;
}

static int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	sroce_av_get(&to_sah(ibah)->av, attr);
	return 0;
}

const struct ib_device_ops sroce_ah_ops = {
	.create_ah = sroce_create_ah,
	.create_user_ah = sroce_create_user_ah,
	.destroy_ah = sroce_destroy_ah,
	.query_ah = sroce_query_ah,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
};
