// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device counters: one row per CPU, so that counting on the data path
 * never bounces a cache line between CPUs; summed only when read, through
 * the RDMA core's hardware-statistics interface (`rdma statistic`).
 */
#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "device.h"
#include "trace.h"

struct sroce_counters {
	u64 val[SROCE_NUM_COUNTERS];
};

/* Names as `rdma statistic` shows them. */
static const struct rdma_stat_desc sroce_counter_descs[] = {
	[SROCE_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[SROCE_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[SROCE_CNT_RX_BAD_HEADER] = { .name = "rx_bad_header" },
	[SROCE_CNT_RX_BAD_ICRC] = { .name = "rx_bad_icrc" },
	[SROCE_CNT_RX_NO_QP] = { .name = "rx_no_qp" },
	[SROCE_CNT_RX_BAD_PKEY] = { .name = "rx_bad_pkey" },
	[SROCE_CNT_RX_BAD_QKEY] = { .name = "rx_bad_qkey" },
	[SROCE_CNT_RX_DUPLICATE] = { .name = "rx_duplicate" },
	[SROCE_CNT_RX_OUT_OF_SEQ] = { .name = "rx_out_of_seq" },
	[SROCE_CNT_RX_DROPPED] = { .name = "rx_dropped" },
	[SROCE_CNT_TX_DROPPED] = { .name = "tx_dropped" },
	[SROCE_CNT_RETRANSMITS] = { .name = "retransmits" },
	[SROCE_CNT_RETRY_EXCEEDED] = { .name = "retry_exceeded" },
	[SROCE_CNT_RNR_NAK_SENT] = { .name = "rnr_nak_sent" },
	[SROCE_CNT_RNR_NAK_RECEIVED] = { .name = "rnr_nak_received" },
	[SROCE_CNT_RNR_RETRY_EXCEEDED] = { .name = "rnr_retry_exceeded" },
	[SROCE_CNT_NAK_SENT] = { .name = "nak_sent" },
	[SROCE_CNT_NAK_RECEIVED] = { .name = "nak_received" },
	[SROCE_CNT_ACK_SENT] = { .name = "ack_sent" },
	[SROCE_CNT_LOOPBACK] = { .name = "loopback" },
	[SROCE_CNT_TX_ZEROCOPY] = { .name = "tx_zerocopy" },
	[SROCE_CNT_RX_BAD_MAD] = { .name = "rx_bad_mad" },
	[SROCE_CNT_RX_NOT_OURS] = { .name = "rx_not_ours" },
	[SROCE_CNT_TX_DIRECT] = { .name = "tx_direct" },
	[SROCE_CNT_TX_BURSTS] = { .name = "tx_bursts" },
	[SROCE_CNT_RX_RUNS] = { .name = "rx_runs" },
	[SROCE_CNT_RX_ECN_CE] = { .name = "rx_ecn_ce" },
	[SROCE_CNT_CNP_SENT] = { .name = "cnp_sent" },
	[SROCE_CNT_CNP_HANDLED] = { .name = "cnp_handled" },
	[SROCE_CNT_TX_PACED] = { .name = "tx_paced" },
	[SROCE_CNT_ACK_HELD] = { .name = "ack_held" },
	[SROCE_CNT_ODP_FAULTS] = { .name = "odp_faults" },
	[SROCE_CNT_ODP_INVALIDATIONS] = { .name = "odp_invalidations" },
	[SROCE_CNT_RX_RXE_FLUSH] = { .name = "rx_rxe_flush_icrc" },
};

static_assert(ARRAY_SIZE(sroce_counter_descs) == SROCE_NUM_COUNTERS);

/* The counters of packets dropped: each count is also a sroce_drop event. */
#define SROCE_DROPS (BIT_ULL(SROCE_CNT_RX_BAD_HEADER) |			\
		     BIT_ULL(SROCE_CNT_RX_BAD_ICRC) |			\
		     BIT_ULL(SROCE_CNT_RX_NO_QP) |			\
		     BIT_ULL(SROCE_CNT_RX_BAD_PKEY) |			\
		     BIT_ULL(SROCE_CNT_RX_BAD_QKEY) |			\
		     BIT_ULL(SROCE_CNT_RX_DUPLICATE) |			\
		     BIT_ULL(SROCE_CNT_RX_OUT_OF_SEQ) |			\
		     BIT_ULL(SROCE_CNT_RX_DROPPED) |			\
		     BIT_ULL(SROCE_CNT_TX_DROPPED) |			\
		     BIT_ULL(SROCE_CNT_RX_BAD_MAD))

static_assert(SROCE_NUM_COUNTERS <= 64);

/* Context: any; safe against preemption and interrupts. */
void sroce_count(struct sroce_dev *sdev, enum sroce_counter c)
{
	sroce_count_add(sdev, c, 1);
}

void sroce_count_add(struct sroce_dev *sdev, enum sroce_counter c, u64 n)
{
	this_cpu_add(sdev->counters->val[c], n);
	if (trace_sroce_drop_enabled() && SROCE_DROPS & BIT_ULL(c))
		trace_sroce_drop(sdev, c, n);
}

/**
 * sroce_counter_read() - a counter's value, summed over every CPU
 * @sdev: the device
 * @c: the counter
 *
 * Not a snapshot: counts made during the sum may or may not be in it.
 * Return: the sum.
 */
u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->counters, cpu)->val[c]);
	return sum;
}

/* Context: process. Before anything can count, i.e. before attaching. */
int sroce_counters_alloc(struct sroce_dev *sdev)
{
	sdev->counters = alloc_percpu(struct sroce_counters);
	return sdev->counters ? 0 : -ENOMEM;
}

/* After the last count: once detached and no verb can run. */
void sroce_counters_free(struct sroce_dev *sdev)
{
	free_percpu(sdev->counters);
	sdev->counters = NULL;
}

static struct rdma_hw_stats *
sroce_alloc_hw_port_stats(struct ib_device *ibdev, u32 port_num)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_descs,
					  ARRAY_SIZE(sroce_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int sroce_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	int i;

	for (i = 0; i < SROCE_NUM_COUNTERS; i++)
		stats->value[i] = sroce_counter_read(sdev, i);
	return SROCE_NUM_COUNTERS;
}

const struct ib_device_ops sroce_counters_ops = {
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.get_hw_stats = sroce_get_hw_stats,
};
