/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opcodes: the per-opcode table that says what each BTH opcode carries,
 * where its packet sits in a message, which way it goes and which QP types
 * send it; and the BTH every packet starts with.
 */
#ifndef SROCE_OPCODE_H
#define SROCE_OPCODE_H

#include <linux/bits.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "wire.h"

/*
 * What follows the BTH, in wire order: an extended header's offset is the
 * sum of those of lower bits (sroce_hdr_offset()).
 */
#define SROCE_HAS_XRCETH	BIT(0)
#define SROCE_HAS_DETH		BIT(1)
#define SROCE_HAS_FETH		BIT(2)
#define SROCE_HAS_RETH		BIT(3)
#define SROCE_HAS_ATOMICETH	BIT(4)
#define SROCE_HAS_AETH		BIT(5)
#define SROCE_HAS_ATOMICACKETH	BIT(6)
#define SROCE_HAS_IMMDT		BIT(7)
#define SROCE_HAS_IETH		BIT(8)
#define SROCE_HAS_PAYLOAD	BIT(9)

/* Where the packet sits in its message. ONLY is FIRST | LAST. */
#define SROCE_FIRST		BIT(10)
#define SROCE_MIDDLE		BIT(11)
#define SROCE_LAST		BIT(12)
#define SROCE_ONLY		(SROCE_FIRST | SROCE_LAST)

/* Which operation the message is. */
#define SROCE_SEND		BIT(13)
#define SROCE_WRITE		BIT(14)
#define SROCE_READ		BIT(15)	/* read request or read response */
#define SROCE_ATOMIC		BIT(16)	/* atomic request or atomic ack */
#define SROCE_ACK		BIT(17)	/* ACK/NAK: AETH and nothing else */
#define SROCE_ATOMIC_WRITE	BIT(18)	/* atomic write request (IBA 1.5) */
#define SROCE_FLUSH		BIT(19)	/* flush request (IBA 1.5) */
/*
 * A CNP (Annex A17.9.2), outside the table: pkt.c parses it with its 16
 * reserved bytes as payload, for the QPs that send requests.
 */
#define SROCE_CNP		BIT(20)

/* Which way it goes: requester to responder, or back. */
#define SROCE_REQUEST		BIT(21)
#define SROCE_RESPONSE		BIT(22)

/*
 * Which QP types may send it. XRC initiators send the requests and XRC
 * targets the answers of SROCE_QPT_XRC (rx.c keeps each to its half).
 */
#define SROCE_QPT_RC		BIT(23)
#define SROCE_QPT_UC		BIT(24)
#define SROCE_QPT_UD		BIT(25)
#define SROCE_QPT_XRC		BIT(26)

/**
 * struct sroce_opcode_info - what an opcode means
 * @name: the spec's name, for traces and test output
 * @mask: SROCE_HAS_*, position, operation, direction and QP-type bits;
 *	  0 for an opcode sroce neither sends nor accepts
 * @hdr_len: bytes from the start of the BTH to the payload
 */
struct sroce_opcode_info {
	const char *name;
	u32 mask;
	u8 hdr_len;
};

extern const struct sroce_opcode_info sroce_opcode[256];

/* Offset from the start of the BTH of the extended header @has, or 0. */
unsigned int sroce_hdr_offset(u8 opcode, u32 has);

/* The SROCE_QPT_* bit of an IB QP type, 0 for types sroce does not run. */
u32 sroce_qpt_bit(enum ib_qp_type type);

void sroce_bth_init(struct sroce_bth *bth, u8 opcode, bool se, u8 pad,
		    u16 pkey, u32 qpn, u32 psn, bool ack_req);

#endif /* SROCE_OPCODE_H */
