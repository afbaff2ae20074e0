/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages and their packets (IBTA 9.7.2, 9.7.5.1.2): how a message is cut
 * by the path MTU, which opcode each of its packets carries, and which
 * packet may follow which. Pure functions, shared by the requester and the
 * responder and tested on their own.
 */
#ifndef SROCE_MSG_H
#define SROCE_MSG_H

#include <linux/bits.h>
#include <linux/kernel.h>
#include <rdma/ib_user_verbs.h>

#include "opcode.h"
#include "pkt.h"
#include "wire.h"

/*
 * Atomic write's numbers in the uverbs ABI: IB_UVERBS_WR_ATOMIC_WRITE,
 * IB_UVERBS_WC_ATOMIC_WRITE and IB_UVERBS_DEVICE_ATOMIC_WRITE of
 * include/uapi/rdma/ib_user_verbs.h since Linux 6.2, which rdma-core 44
 * (IBV_WR_ATOMIC_WRITE, IBV_WC_ATOMIC_WRITE) already speaks. 6.1's header
 * lacks them; being ABI, the values cannot change, so they are spelt out
 * here, under sroce's names (no clash where the header has them), for
 * every kernel: one source, no version test.
 */
#define SROCE_WR_ATOMIC_WRITE		15
#define SROCE_WC_ATOMIC_WRITE		9
#define SROCE_DEVICE_ATOMIC_WRITE	BIT_ULL(40)

/*
 * FLUSH's, likewise (IB_UVERBS_DEVICE_FLUSH_GLOBAL, since 6.2). sroce
 * answers FLUSH but does not send it: rdma-core 44 has no ibv_wr_flush(),
 * and no kernel verb carries a placement type.
 */
#define SROCE_DEVICE_FLUSH_GLOBAL	BIT_ULL(38)

/* Packets a message of @len bytes takes at @mtu: at least one. */
static inline u32 sroce_msg_npkts(u32 len, u32 mtu)
{
	return len ? DIV_ROUND_UP(len, mtu) : 1;
}

/**
 * sroce_msg_opcode() - the opcode of one packet of a send or write
 * @family: SROCE_OP_SEND_FIRST or SROCE_OP_WRITE_FIRST
 * @wr: the WR opcode (enum ib_uverbs_wr_opcode): with immediate, with
 *	invalidate or plain
 * @first: the packet is the message's first
 * @last: the packet is the message's last
 *
 * Return: the operation bits of the opcode (no transport bits).
 */
static inline u8 sroce_msg_opcode(u8 family, u32 wr, bool first, bool last)
{
	bool imm = wr == IB_UVERBS_WR_SEND_WITH_IMM ||
		   wr == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	bool inv = wr == IB_UVERBS_WR_SEND_WITH_INV;

	if (family == SROCE_OP_SEND_FIRST) {
		if (first && last)
			return imm ? SROCE_OP_SEND_ONLY_IMM :
			       inv ? SROCE_OP_SEND_ONLY_INV : SROCE_OP_SEND_ONLY;
		if (first)
			return SROCE_OP_SEND_FIRST;
		if (!last)
			return SROCE_OP_SEND_MIDDLE;
		return imm ? SROCE_OP_SEND_LAST_IMM :
		       inv ? SROCE_OP_SEND_LAST_INV : SROCE_OP_SEND_LAST;
	}
	if (family == SROCE_OP_WRITE_FIRST) {
		if (first && last)
			return imm ? SROCE_OP_WRITE_ONLY_IMM : SROCE_OP_WRITE_ONLY;
		if (first)
			return SROCE_OP_WRITE_FIRST;
		if (!last)
			return SROCE_OP_WRITE_MIDDLE;
		return imm ? SROCE_OP_WRITE_LAST_IMM : SROCE_OP_WRITE_LAST;
	}
	return family;
}

/**
 * sroce_msg_in_sequence() - may a request packet come now?
 * @op: the message in progress at the responder: 0, SROCE_SEND or
 *	SROCE_WRITE
 * @mask: the packet's opcode mask
 *
 * A message is a first packet, middles, and a last packet of the same
 * operation; a new message starts only when the last one ended.
 */
static inline bool sroce_msg_in_sequence(u32 op, u32 mask)
{
	if (op)
		return !(mask & SROCE_FIRST) && (mask & op);
	return mask & SROCE_FIRST;
}

/* Is @op (a WQE's operation, no transport bits) an atomic request? */
static inline bool sroce_msg_is_atomic(u8 op)
{
	return op == SROCE_OP_CMP_SWAP || op == SROCE_OP_FETCH_ADD;
}

/*
 * Is @op a request the responder answers from its read/atomic resources
 * (max_dest_rd_atomic of them): a read, an atomic, an atomic write or a
 * flush? Each
 * one outstanding holds a resource, and its answer is a read response or
 * an atomic ACK, not an ACK; a duplicate is answered again, not executed.
 */
static inline bool sroce_msg_is_rd(u8 op)
{
	return op == SROCE_OP_READ_REQ || sroce_msg_is_atomic(op) ||
	       op == SROCE_OP_ATOMIC_WRITE || op == SROCE_OP_FLUSH;
}

/* The completion opcode of a send WQE (enum ib_wc_opcode). */
static inline u32 sroce_msg_wc_opcode(u32 wr)
{
	switch (wr) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_WC_ATOMIC_WRITE;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:	/* kernel QPs only */
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

#endif /* SROCE_MSG_H */
