/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_UCONTEXT_H
#define SROCE_UCONTEXT_H

#include <rdma/ib_verbs.h>

/**
 * struct sroce_ucontext - one process's open of a sroce device
 * @ibuc: the core's object, allocated and freed by the core
 */
struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

extern const struct ib_device_ops sroce_ucontext_ops;

#endif /* SROCE_UCONTEXT_H */
