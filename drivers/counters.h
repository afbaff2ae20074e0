/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-device counters, read with `rdma statistic show`: every packet that
 * is dropped is counted under the reason it was dropped for.
 */
#ifndef SROCE_COUNTERS_H
#define SROCE_COUNTERS_H

#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

enum sroce_counter {
	SROCE_CNT_RX_PACKETS,
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_RX_BAD_HEADER,	/* IP/UDP/BTH/extended header malformed */
	SROCE_CNT_RX_BAD_ICRC,
	SROCE_CNT_RX_NO_QP,		/* no such QP, or wrong type/state */
	SROCE_CNT_RX_BAD_PKEY,
	SROCE_CNT_RX_BAD_QKEY,
	SROCE_CNT_RX_DUPLICATE,		/* duplicate request, re-answered */
	SROCE_CNT_RX_OUT_OF_SEQ,	/* PSN sequence error */
	SROCE_CNT_RX_DROPPED,		/* dropped by the transport (UC loss, ...) */
	SROCE_CNT_TX_DROPPED,		/* the netdev refused it */
	SROCE_CNT_RETRANSMITS,		/* retransmit timer or NAK went back */
	SROCE_CNT_RETRY_EXCEEDED,
	SROCE_CNT_RNR_NAK_SENT,
	SROCE_CNT_RNR_NAK_RECEIVED,
	SROCE_CNT_RNR_RETRY_EXCEEDED,
	SROCE_CNT_NAK_SENT,		/* every NAK but RNR */
	SROCE_CNT_NAK_RECEIVED,
	SROCE_CNT_ACK_SENT,
	SROCE_CNT_LOOPBACK,		/* sent to ourselves without the wire */
	SROCE_CNT_TX_ZEROCOPY,		/* sent with payload in MR page frags */
	SROCE_CNT_RX_BAD_MAD,		/* a datagram to QP1 that is no MAD */
	SROCE_CNT_RX_NOT_OURS,		/* RoCEv2 to no GID of ours: the stack's */
	SROCE_CNT_TX_DIRECT,		/* handed to the driver past the qdisc */
	SROCE_CNT_TX_BURSTS,		/* doorbells those frames needed */
	SROCE_CNT_RX_RUNS,		/* runs of packets a QP took at once */
	SROCE_CNT_RX_ECN_CE,		/* requests marked CE on the path */
	SROCE_CNT_CNP_SENT,		/* CNPs sent for them */
	SROCE_CNT_CNP_HANDLED,		/* CNPs received: rate cuts asked for */
	SROCE_CNT_TX_PACED,		/* times the rate limiter held one back */
	SROCE_CNT_ACK_HELD,		/* ACK requests a later ACK answered */
	SROCE_CNT_ODP_FAULTS,		/* ranges of ODP MRs brought in */
	SROCE_CNT_ODP_INVALIDATIONS,	/* ranges of ODP MRs taken away */
	SROCE_CNT_RX_RXE_FLUSH,		/* FLUSHes with rdma_rxe's own ICRC */
	SROCE_NUM_COUNTERS,
};

struct sroce_dev;

void sroce_count(struct sroce_dev *sdev, enum sroce_counter c);
void sroce_count_add(struct sroce_dev *sdev, enum sroce_counter c, u64 n);
u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c);

int sroce_counters_alloc(struct sroce_dev *sdev);
void sroce_counters_free(struct sroce_dev *sdev);

extern const struct ib_device_ops sroce_counters_ops;

#endif /* SROCE_COUNTERS_H */
