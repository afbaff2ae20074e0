/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_MCAST_H
#define SROCE_MCAST_H

#include <rdma/ib_verbs.h>

struct sroce_dev;
struct sroce_pkt;
struct sroce_qp;

/* The destination QPN of a multicast datagram (IBTA 10.5.1.2). */
#define SROCE_MCAST_QPN		0xffffff

void sroce_mcast_rx(struct sroce_dev *sdev, struct sroce_pkt *pkt);
void sroce_mcast_detach_qp(struct sroce_qp *qp);
bool sroce_mcast_local(struct sroce_dev *sdev, const union ib_gid *mgid);

extern const struct ib_device_ops sroce_mcast_ops;

#endif /* SROCE_MCAST_H */
