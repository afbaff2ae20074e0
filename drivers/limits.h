/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a sroce device advertises in query_device and query_port. Every
 * object-creating verb checks its request against these same numbers, so
 * what a user reads is what the driver honours.
 */
#ifndef SROCE_LIMITS_H
#define SROCE_LIMITS_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/gfp.h>
#include <linux/sizes.h>

/*
 * Memory a verb allocates for its object's rings and tables: charged to
 * the memory cgroup of the task that asked (a maximal QP holds tens of
 * MiB), and refused with -ENOMEM rather than by the OOM killer when that
 * cgroup, or the host, has none left.
 */
#define SROCE_GFP_OBJ	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

enum sroce_limits {
	SROCE_MAX_QP		= SZ_64K,
	SROCE_MAX_QP_WR		= SZ_16K,
	SROCE_MAX_SGE		= 32,
	SROCE_MAX_CQ		= SZ_64K,
	/*
	 * libfabric's verbs;ofi_rxm asks for (128 + 128) * 256 = 64 Ki CQEs
	 * per endpoint by default (FI_OFI_RXM_MSG_TX/RX_SIZE times
	 * FI_UNIVERSE_SIZE); 256 Ki leaves it room for 1024 peers. A ring of
	 * 2^n slots holds 2^n entries, so the limit is a full ring (16 MiB).
	 */
	SROCE_MAX_CQE		= SZ_256K,
	SROCE_MAX_MR		= SZ_64K,
	SROCE_MAX_PD		= SZ_64K,
	SROCE_MAX_AH		= SZ_32K - 1,
	SROCE_MAX_SRQ		= SZ_64K,
	SROCE_MAX_SRQ_WR	= SZ_16K,
	SROCE_MAX_QP_RD_ATOM	= 128,
	SROCE_MAX_INLINE_DATA	= 512,
	SROCE_MAX_FAST_REG_PAGES = 512,
	SROCE_MAX_MCAST_GRP	= 8192,
	SROCE_MAX_MCAST_QP_ATTACH = 56,

	/* RoCE has one partition key, the default full-membership one. */
	SROCE_PKEY_TBL_LEN	= 1,
	SROCE_GID_TBL_LEN	= 1024,

	/* log2(4.096 us * 2^n): the ack delay we promise peers, ~134 ms. */
	SROCE_LOCAL_CA_ACK_DELAY = 15,
};

/*
 * The shortest retransmit timeout used, whatever a QP's timeout asks: a
 * software device's ACKs can be late by a scheduling delay, and a timeout
 * shorter than that only resends what was never lost.
 */
#define SROCE_MIN_ACK_TIMEOUT_MS	10

/* The largest message IBTA allows (9.7.1: the DMA length is 31 bits). */
#define SROCE_MAX_MSG_SZ	BIT(31)

/*
 * The longest MR registration accepted: 1 TiB, far within the UINT_MAX
 * pages ib_umem_get() can pin, so that no length passing this check fails
 * later for a reason the caller could not have known.
 */
#define SROCE_MAX_MR_SIZE	BIT_ULL(40)

/*
 * Kernel consumers (QP1 and the CM's address handles, rdma_cm, NVMe/RDMA)
 * may create up to this fraction of each maximum beyond it: processes can
 * have no more than query_device advertises, so one that takes every slot
 * leaves the kernel's connection management working.
 */
#define SROCE_KERNEL_SHARE	16

/**
 * sroce_obj_count_get() - count one more object of a kind, if allowed
 * @count: the device's count of that kind
 * @max: what query_device advertises for it
 * @user: whether a process asks (else a kernel consumer)
 *
 * Return: true, or false (nothing counted) when the limit is reached.
 */
static inline bool sroce_obj_count_get(atomic_t *count, u32 max, bool user)
{
	u32 limit = user ? max : max + max / SROCE_KERNEL_SHARE;

	if (atomic_inc_return(count) <= limit)
		return true;
	atomic_dec(count);
	return false;
}

#endif /* SROCE_LIMITS_H */
