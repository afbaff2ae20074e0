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

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

extern const struct ib_device_ops sroce_pd_ops;

#endif /* SROCE_PD_H */
