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

/**
 * struct sroce_xrcd - an XRC domain
 * @ibxrcd: the core's object, allocated and freed by the core
 *
 * Like a PD, a name: XRC SRQs and XRC target QPs are made in one, and
 * a target QP puts a send only into an SRQ of its own XRCD. Processes
 * share it through the core (a file's inode), which counts its users.
 */
struct sroce_xrcd {
	struct ib_xrcd ibxrcd;
};

extern const struct ib_device_ops sroce_pd_ops;

#endif /* SROCE_PD_H */
