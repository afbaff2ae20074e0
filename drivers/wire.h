/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RoCEv2 wire format (IBTA vol. 1 ch. 9 and Annex A17): the single
 * home of every on-the-wire size, layout and opcode sroce uses.
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include <linux/bits.h>
#include <linux/ipv6.h>
#include <linux/types.h>
#include <linux/udp.h>

/* IANA-assigned UDP destination port of RoCEv2 (A17.2.2). */
#define SROCE_UDP_PORT		4791

/*
 * Source ports are spread over the dynamic range by QP (A17.2.2 leaves the
 * choice to the sender; entropy here lets ECMP fabrics spread flows).
 */
#define SROCE_UDP_SPORT_MIN	0xc000

/* Base and extended transport header sizes, in bytes (IBTA 9.2, 9.3). */
#define SROCE_BTH_BYTES		12
#define SROCE_RETH_BYTES	16
#define SROCE_AETH_BYTES	4
#define SROCE_ATOMICETH_BYTES	28
#define SROCE_ATOMICACKETH_BYTES 8
#define SROCE_IMMDT_BYTES	4
#define SROCE_IETH_BYTES	4
#define SROCE_DETH_BYTES	8
#define SROCE_XRCETH_BYTES	4
#define SROCE_FETH_BYTES	4
#define SROCE_ICRC_BYTES	4

/* The payload of an ATOMIC WRITE: one 8-byte word (IBA 1.5, oA19-28). */
#define SROCE_ATOMIC_WRITE_BYTES 8

/*
 * The most header bytes a payload-carrying packet can need: an IPv6 network
 * header (the larger of the two RoCEv2 allows), UDP, BTH, the largest
 * extended-header combination that still carries payload (XRCETH + RETH +
 * ImmDt, XRC RDMA WRITE Only with Immediate) and the invariant CRC. The
 * link MTU minus this is the room left for payload, which bounds the IB
 * path MTU.
 */
#define SROCE_MAX_OVERHEAD	(sizeof(struct ipv6hdr) + sizeof(struct udphdr) + \
				 SROCE_BTH_BYTES + SROCE_XRCETH_BYTES +   \
				 SROCE_RETH_BYTES + SROCE_IMMDT_BYTES +	   \
				 SROCE_ICRC_BYTES)

/**
 * struct sroce_bth - base transport header (IBTA 9.2)
 * @opcode: transport (bits 7-5) and operation (bits 4-0)
 * @flags: SE (bit 7), MigReq (bit 6), PadCnt (bits 5-4), TVer (bits 3-0)
 * @pkey: partition key
 * @qpn: 8 reserved bits (byte 4, "resv8a", masked to ones in the ICRC),
 *	 then the 24-bit destination QP
 * @apsn: AckReq (bit 31), 7 reserved bits, the 24-bit PSN
 */
struct sroce_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 apsn;
};

#define SROCE_BTH_SE		BIT(7)
#define SROCE_BTH_MIG		BIT(6)
#define SROCE_BTH_PAD_SHIFT	4
#define SROCE_BTH_PAD_MASK	(3 << SROCE_BTH_PAD_SHIFT)
#define SROCE_BTH_TVER_MASK	0x0f
#define SROCE_BTH_ACKREQ	BIT(31)
#define SROCE_BTH_QPN_MASK	0x00ffffff
#define SROCE_BTH_PSN_MASK	0x00ffffff

/* The default partition key: full membership of the default partition. */
#define SROCE_DEFAULT_PKEY	0xffff

/* RDMA extended transport header (9.3.3): RDMA Write, RDMA Read request. */
struct sroce_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/* ACK extended transport header (9.3.5): syndrome (8 bits) and MSN (24). */
struct sroce_aeth {
	__be32 smsn;
};

#define SROCE_AETH_SYN_SHIFT	24
#define SROCE_AETH_MSN_MASK	0x00ffffff

/*
 * The syndrome's top bits say what an AETH is (9.7.5.2.1, table 43): an
 * ACK carrying a credit count, an RNR NAK carrying a timer, or a NAK
 * carrying one of the codes below in the low five bits.
 */
#define SROCE_SYN_TYPE_MASK	0x60
#define SROCE_SYN_ACK		0x00
#define SROCE_SYN_RNR_NAK	0x20
#define SROCE_SYN_NAK		0x60
#define SROCE_SYN_VALUE_MASK	0x1f

/* "Invalid credit count" (9.7.7.2.5): an ACK that grants no credits. */
#define SROCE_SYN_NO_CREDITS	0x1f

enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ	= 0,
	SROCE_NAK_INVALID_REQ	= 1,
	SROCE_NAK_REMOTE_ACCESS	= 2,
	SROCE_NAK_REMOTE_OP	= 3,
	SROCE_NAK_INVALID_RD	= 4,
};

/* Atomic extended transport header (9.3.4): 28 bytes, unaligned fields. */
struct sroce_atomic_eth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/* Atomic acknowledge extended transport header (9.3.6). */
struct sroce_atomic_ack_eth {
	__be64 orig;
} __packed;

/* Datagram extended transport header (9.3.2). */
struct sroce_deth {
	__be32 qkey;
	__be32 sqp;	/* 8 reserved bits, then the source QP */
};

/*
 * XRC extended transport header (9.3.7): the XRC SRQ a request of an XRC
 * initiator is for. Every XRC request packet carries it, right after the
 * BTH; answers do not.
 */
struct sroce_xrceth {
	__be32 srqn;	/* 8 reserved bits, then the XRC SRQ number */
};

#define SROCE_XRCETH_SRQN_MASK	0x00ffffff

/*
 * Flush extended transport header (IBA 1.5, A19): 26 reserved bits, the
 * selectivity level (bits 5-4) and the placement type (bits 3-0). A
 * FLUSH carries it right after the BTH, and a RETH after it.
 */
struct sroce_feth {
	__be32 bits;
};

#define SROCE_FETH_PLT_MASK	0x0000000f
#define SROCE_FETH_SEL_MASK	0x00000030
#define SROCE_FETH_SEL_SHIFT	4

/* Placement types, one bit each: where the data is to be made to last. */
#define SROCE_FLUSH_GLOBAL	BIT(0)	/* globally visible */
#define SROCE_FLUSH_PERSISTENT	BIT(1)	/* persistent */

/* Selectivity levels: the RETH's range, or the whole MR its rkey names. */
#define SROCE_FLUSH_RANGE	0
#define SROCE_FLUSH_MR		1

/*
 * Opcodes (9.2, table 38): the transport in bits 7-5, the operation in
 * bits 4-0. RC, UC and XRC share operation numbers; UD has two sends.
 */
#define SROCE_TRANSPORT_RC	0x00
#define SROCE_TRANSPORT_UC	0x20
#define SROCE_TRANSPORT_RD	0x40
#define SROCE_TRANSPORT_UD	0x60
#define SROCE_TRANSPORT_CNP	0x80
#define SROCE_TRANSPORT_XRC	0xa0
#define SROCE_TRANSPORT_MASK	0xe0

enum sroce_op {
	SROCE_OP_SEND_FIRST		= 0x00,
	SROCE_OP_SEND_MIDDLE		= 0x01,
	SROCE_OP_SEND_LAST		= 0x02,
	SROCE_OP_SEND_LAST_IMM		= 0x03,
	SROCE_OP_SEND_ONLY		= 0x04,
	SROCE_OP_SEND_ONLY_IMM		= 0x05,
	SROCE_OP_WRITE_FIRST		= 0x06,
	SROCE_OP_WRITE_MIDDLE		= 0x07,
	SROCE_OP_WRITE_LAST		= 0x08,
	SROCE_OP_WRITE_LAST_IMM		= 0x09,
	SROCE_OP_WRITE_ONLY		= 0x0a,
	SROCE_OP_WRITE_ONLY_IMM		= 0x0b,
	SROCE_OP_READ_REQ		= 0x0c,
	SROCE_OP_READ_RESP_FIRST	= 0x0d,
	SROCE_OP_READ_RESP_MIDDLE	= 0x0e,
	SROCE_OP_READ_RESP_LAST		= 0x0f,
	SROCE_OP_READ_RESP_ONLY		= 0x10,
	SROCE_OP_ACK			= 0x11,
	SROCE_OP_ATOMIC_ACK		= 0x12,
	SROCE_OP_CMP_SWAP		= 0x13,
	SROCE_OP_FETCH_ADD		= 0x14,
	SROCE_OP_SEND_LAST_INV		= 0x16,
	SROCE_OP_SEND_ONLY_INV		= 0x17,
	/*
	 * IBA 1.5 (Annex A19), both answered by a zero-length RDMA READ
	 * Response Only. FLUSH: an FETH and a RETH, no payload; makes what
	 * was placed before it last as the FETH asks. ATOMIC WRITE: a RETH
	 * and an 8-byte payload, stored at the target as one atomic write.
	 */
	SROCE_OP_FLUSH			= 0x1c,
	SROCE_OP_ATOMIC_WRITE		= 0x1d,
};

/*
 * The Congestion Notification Packet (Annex A17.9.2): a BTH naming the QP
 * that is to slow down, 16 reserved bytes and the ICRC. It belongs to no
 * transport's opcode table; its receiver finds it by its opcode alone.
 */
#define SROCE_OPCODE_CNP	(SROCE_TRANSPORT_CNP | 0x01)
#define SROCE_CNP_BYTES		16

/* Payload is padded to a multiple of four bytes (9.2: PadCnt). */
static inline unsigned int sroce_pad(unsigned int payload)
{
	return -payload & 3;
}

#endif /* SROCE_WIRE_H */
