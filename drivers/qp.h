/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "wq.h"

/* The largest 24-bit number: QPNs, PSNs. */
#define SROCE_24BIT_MAX		0xffffff

/**
 * struct sroce_qp_shape - how big a QP's rings are
 * @sq_slots: send queue entries
 * @sq_stride: bytes per send queue entry
 * @rq_slots: receive queue entries, 0 when the QP uses an SRQ
 * @rq_stride: bytes per receive queue entry
 */
struct sroce_qp_shape {
	u32 sq_slots;
	u32 sq_stride;
	u32 rq_slots;
	u32 rq_stride;
};

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the core's object, allocated and freed by the core
 * @lock: serialises modify_qp and query_qp; held while flushing
 * @attr: every attribute modify_qp set, except the path (@av)
 * @av: the primary path, for RC and UC
 * @cap: the capacities the rings really have
 * @sq_sig_type: IB_SIGNAL_ALL_WR or IB_SIGNAL_REQ_WR
 * @sq: the send queue
 * @rq: the receive queue, unused when the QP has an SRQ
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct mutex lock; /* attributes vs concurrent verbs */
	struct ib_qp_attr attr;
	struct sroce_av av;
	struct ib_qp_cap cap;
	enum ib_sig_type sq_sig_type;
	struct sroce_wq sq;
	struct sroce_wq rq;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

int sroce_qp_size(struct ib_qp_cap *cap, bool has_srq,
		  struct sroce_qp_shape *shape);
int sroce_qp_check_attr(const struct sroce_qp *qp,
			const struct ib_qp_attr *attr, int mask);
int sroce_qpn_alloc(struct xarray *xa, u32 *next, struct sroce_qp *qp,
		    u32 *qpn);

extern const struct ib_device_ops sroce_qp_ops;

#endif /* SROCE_QP_H */
