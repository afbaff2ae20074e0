/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_MW_H
#define SROCE_MW_H

#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "mr.h"

struct sroce_qp;

/**
 * struct sroce_mw - a memory window
 * @ibmw: the core's object, freed by the core as soon as dealloc_mw returns
 * @mr: what the data path finds by the window's key: a struct sroce_mr of
 *	type SROCE_MR_MW in the device's MR table, allocated on its own so
 *	that lookups still under RCU never read freed memory
 */
struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_mr *mr;
};

static inline struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *w);
struct sroce_mr *sroce_mw_get_mr(struct sroce_mr *mw, const struct ib_qp *qp,
				 u32 rkey, u64 iova, u64 length, u32 access);
void sroce_mw_cpu_enter(void);
void sroce_mw_cpu_leave(void);
int sroce_mw_invalidate(struct sroce_mr *mw, const struct ib_pd *pd,
			const struct ib_qp *rqp);

extern const struct ib_device_ops sroce_mw_ops;

#endif /* SROCE_MW_H */
