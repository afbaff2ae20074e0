/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_PD_H
#define SROCE_PD_H

#include <rdma/ib_verbs.h>

/**
 * struct sroce_pd - a protection domain
 * @ibpd: the core's object, allocated and freed by the core
 *
 * A PD has no state of its own: objects name it, and the responder
 * compares those names.
 */
struct sroce_pd {
	struct ib_pd ibpd;
};

int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* SROCE_PD_H */
