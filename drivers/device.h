/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_DEVICE_H
#define SROCE_DEVICE_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mr.h"
#include "port.h"

struct sroce_counters;

/**
 * struct sroce_dev - a sroce RDMA device bound to one Ethernet netdev
 * @ibdev: the RDMA core's device; first, as ib_alloc_device() requires
 * @ndev: the netdev, held (with @ndev_tracker) until dealloc_driver
 * @ndev_tracker: reference tracker for @ndev
 * @port: port 1, the only port
 * @attr: the limits query_device reports, fixed at creation
 * @pd_count: protection domains allocated, bounded by attr.max_pd
 * @cq_count: completion queues allocated, bounded by attr.max_cq
 * @qps: live QPs by number (see sroce_qpn_alloc())
 * @next_qpn: where the cyclic search for a free QPN resumes
 * @qp_count: QPs allocated, bounded by attr.max_qp
 * @srqs: live SRQs by number
 * @next_srqn: where the cyclic search for a free SRQ number resumes
 * @srq_count: SRQs allocated, bounded by attr.max_srq
 * @mrs: memory regions, by key
 * @ah_count: address handles, bounded by attr.max_ah
 * @mcasts: multicast groups with QPs attached (mcast.c), under RCU
 * @mcast_lock: serialises attach and detach
 * @nmcast: groups in @mcasts, bounded by attr.max_mcast_grp
 * @counters: per-CPU packet counters (counters.c), from creation until
 *	      dealloc_driver
 *
 * Owned by the RDMA core once registered: it is freed by the core after
 * sroce_dealloc_driver(), whether removal came from `rdma link delete`,
 * the netdev going away or the module unloading.
 */
struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct sroce_port port;
	struct ib_device_attr attr;
	atomic_t pd_count;
	atomic_t cq_count;
	struct xarray qps;
	u32 next_qpn;
	atomic_t qp_count;
	struct xarray srqs;
	u32 next_srqn;
	atomic_t srq_count;
	struct sroce_mr_table mrs;
	atomic_t ah_count;
	struct list_head mcasts;
	struct mutex mcast_lock; /* attach and detach; readers use RCU */
	u32 nmcast;
	struct sroce_counters __percpu *counters;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

int sroce_dev_add(const char *name, struct net_device *ndev);
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev);
void sroce_dev_put(struct sroce_dev *sdev);
void sroce_dev_unregister_all(void);

#endif /* SROCE_DEVICE_H */
