/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_UCONTEXT_H
#define SROCE_UCONTEXT_H

#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

/**
 * struct sroce_ucontext - one process's open of a sroce device
 * @ibuc: the core's object, allocated and freed by the core
 * @ahs: the process's address handles, by the ah_num its send WQEs carry;
 *	 per context, so that a process can name only its own
 */
struct sroce_ucontext {
	struct ib_ucontext ibuc;
	struct xarray ahs;
};

static inline struct sroce_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct sroce_ucontext, ibuc);
}

extern const struct ib_device_ops sroce_ucontext_ops;

#endif /* SROCE_UCONTEXT_H */
