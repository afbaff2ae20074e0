// SPDX-License-Identifier: GPL-2.0
/*
 * The opcode table: for each BTH opcode, which extended headers follow the
 * BTH, whether payload may, where the packet sits in its message, what
 * operation and direction it is, and which QP types send it (IBTA 9.2,
 * table 38; 9.3). Opcodes absent here are refused on receive.
 */
#include <linux/bitops.h>
#include <linux/log2.h>
#include <rdma/ib_verbs.h>

#include "opcode.h"
#include "wire.h"

/* Every extended-header bit, in wire order from the lowest. */
#define SROCE_HAS_HDRS	(SROCE_HAS_XRCETH | SROCE_HAS_DETH | SROCE_HAS_FETH | \
			 SROCE_HAS_RETH | SROCE_HAS_ATOMICETH | SROCE_HAS_AETH |		\
			 SROCE_HAS_ATOMICACKETH | SROCE_HAS_IMMDT |	\
			 SROCE_HAS_IETH)

/*
 * An opcode's entry. The extended headers' bytes are spelt out beside the
 * bits that name them, for the reader; the KUnit suite checks that the two
 * agree.
 */
#define SROCE_OPCODE(qpt, op, m, ext)					\
	[SROCE_TRANSPORT_##qpt | SROCE_OP_##op] = {			\
		.name = #qpt "_" #op,					\
		.mask = (m) | SROCE_QPT_##qpt,				\
		.hdr_len = SROCE_BTH_BYTES + (ext),			\
	}

/* What every packet of one kind of message has in common. */
#define SEND_REQ	(SROCE_SEND | SROCE_REQUEST | SROCE_HAS_PAYLOAD)
#define WRITE_REQ	(SROCE_WRITE | SROCE_REQUEST | SROCE_HAS_PAYLOAD)
#define READ_RESP	(SROCE_READ | SROCE_RESPONSE | SROCE_HAS_PAYLOAD)
#define ATOMIC_REQ	(SROCE_ATOMIC | SROCE_REQUEST | SROCE_ONLY |	\
			 SROCE_HAS_ATOMICETH)

/* An XRC request: its RC twin's headers behind an XRCETH (9.3.7). */
#define XRC_REQ(op, m, ext)						\
	SROCE_OPCODE(XRC, op, (m) | SROCE_HAS_XRCETH, SROCE_XRCETH_BYTES + (ext))

const struct sroce_opcode_info sroce_opcode[256] = {
	SROCE_OPCODE(RC, SEND_FIRST, SEND_REQ | SROCE_FIRST, 0),
	SROCE_OPCODE(RC, SEND_MIDDLE, SEND_REQ | SROCE_MIDDLE, 0),
	SROCE_OPCODE(RC, SEND_LAST, SEND_REQ | SROCE_LAST, 0),
	SROCE_OPCODE(RC, SEND_LAST_IMM, SEND_REQ | SROCE_LAST | SROCE_HAS_IMMDT,
		     SROCE_IMMDT_BYTES),
	SROCE_OPCODE(RC, SEND_ONLY, SEND_REQ | SROCE_ONLY, 0),
	SROCE_OPCODE(RC, SEND_ONLY_IMM, SEND_REQ | SROCE_ONLY | SROCE_HAS_IMMDT,
		     SROCE_IMMDT_BYTES),
	SROCE_OPCODE(RC, WRITE_FIRST, WRITE_REQ | SROCE_FIRST | SROCE_HAS_RETH,
		     SROCE_RETH_BYTES),
	SROCE_OPCODE(RC, WRITE_MIDDLE, WRITE_REQ | SROCE_MIDDLE, 0),
	SROCE_OPCODE(RC, WRITE_LAST, WRITE_REQ | SROCE_LAST, 0),
	SROCE_OPCODE(RC, WRITE_LAST_IMM,
		     WRITE_REQ | SROCE_LAST | SROCE_HAS_IMMDT,
		     SROCE_IMMDT_BYTES),
	SROCE_OPCODE(RC, WRITE_ONLY, WRITE_REQ | SROCE_ONLY | SROCE_HAS_RETH,
		     SROCE_RETH_BYTES),
	SROCE_OPCODE(RC, WRITE_ONLY_IMM,
		     WRITE_REQ | SROCE_ONLY | SROCE_HAS_RETH | SROCE_HAS_IMMDT,
		     SROCE_RETH_BYTES + SROCE_IMMDT_BYTES),
	SROCE_OPCODE(RC, READ_REQ,
		     SROCE_READ | SROCE_REQUEST | SROCE_ONLY | SROCE_HAS_RETH,
		     SROCE_RETH_BYTES),
	SROCE_OPCODE(RC, READ_RESP_FIRST,
		     READ_RESP | SROCE_FIRST | SROCE_HAS_AETH,
		     SROCE_AETH_BYTES),
	/* Only a middle response goes without its AETH (9.3.5). */
	SROCE_OPCODE(RC, READ_RESP_MIDDLE, READ_RESP | SROCE_MIDDLE, 0),
	SROCE_OPCODE(RC, READ_RESP_LAST,
		     READ_RESP | SROCE_LAST | SROCE_HAS_AETH,
		     SROCE_AETH_BYTES),
	SROCE_OPCODE(RC, READ_RESP_ONLY,
		     READ_RESP | SROCE_ONLY | SROCE_HAS_AETH,
		     SROCE_AETH_BYTES),
	SROCE_OPCODE(RC, ACK,
		     SROCE_ACK | SROCE_RESPONSE | SROCE_ONLY | SROCE_HAS_AETH,
		     SROCE_AETH_BYTES),
	SROCE_OPCODE(RC, ATOMIC_ACK,
		     SROCE_ATOMIC | SROCE_RESPONSE | SROCE_ONLY |
		     SROCE_HAS_AETH | SROCE_HAS_ATOMICACKETH,
		     SROCE_AETH_BYTES + SROCE_ATOMICACKETH_BYTES),
	SROCE_OPCODE(RC, CMP_SWAP, ATOMIC_REQ, SROCE_ATOMICETH_BYTES),
	SROCE_OPCODE(RC, FETCH_ADD, ATOMIC_REQ, SROCE_ATOMICETH_BYTES),
	SROCE_OPCODE(RC, SEND_LAST_INV, SEND_REQ | SROCE_LAST | SROCE_HAS_IETH,
		     SROCE_IETH_BYTES),
	SROCE_OPCODE(RC, SEND_ONLY_INV, SEND_REQ | SROCE_ONLY | SROCE_HAS_IETH,
		     SROCE_IETH_BYTES),
	/*
	 * One packet each, answered from the responder's read/atomic
	 * resources like a read; an atomic write carries a payload like a
	 * write.
	 */
	SROCE_OPCODE(RC, FLUSH,
		     SROCE_FLUSH | SROCE_REQUEST | SROCE_ONLY |
		     SROCE_HAS_FETH | SROCE_HAS_RETH,
		     SROCE_FETH_BYTES + SROCE_RETH_BYTES),
	SROCE_OPCODE(RC, ATOMIC_WRITE,
		     SROCE_ATOMIC_WRITE | SROCE_REQUEST | SROCE_ONLY |
		     SROCE_HAS_RETH | SROCE_HAS_PAYLOAD, SROCE_RETH_BYTES),

	/* UC: sends and writes, never acknowledged (9.7.3). */
	SROCE_OPCODE(UC, SEND_FIRST, SEND_REQ | SROCE_FIRST, 0),
	SROCE_OPCODE(UC, SEND_MIDDLE, SEND_REQ | SROCE_MIDDLE, 0),
	SROCE_OPCODE(UC, SEND_LAST, SEND_REQ | SROCE_LAST, 0),
	SROCE_OPCODE(UC, SEND_LAST_IMM, SEND_REQ | SROCE_LAST | SROCE_HAS_IMMDT,
		     SROCE_IMMDT_BYTES),
	SROCE_OPCODE(UC, SEND_ONLY, SEND_REQ | SROCE_ONLY, 0),
	SROCE_OPCODE(UC, SEND_ONLY_IMM, SEND_REQ | SROCE_ONLY | SROCE_HAS_IMMDT,
		     SROCE_IMMDT_BYTES),
	SROCE_OPCODE(UC, WRITE_FIRST, WRITE_REQ | SROCE_FIRST | SROCE_HAS_RETH,
		     SROCE_RETH_BYTES),
	SROCE_OPCODE(UC, WRITE_MIDDLE, WRITE_REQ | SROCE_MIDDLE, 0),
	SROCE_OPCODE(UC, WRITE_LAST, WRITE_REQ | SROCE_LAST, 0),
	SROCE_OPCODE(UC, WRITE_LAST_IMM,
		     WRITE_REQ | SROCE_LAST | SROCE_HAS_IMMDT,
		     SROCE_IMMDT_BYTES),
	SROCE_OPCODE(UC, WRITE_ONLY, WRITE_REQ | SROCE_ONLY | SROCE_HAS_RETH,
		     SROCE_RETH_BYTES),
	SROCE_OPCODE(UC, WRITE_ONLY_IMM,
		     WRITE_REQ | SROCE_ONLY | SROCE_HAS_RETH | SROCE_HAS_IMMDT,
		     SROCE_RETH_BYTES + SROCE_IMMDT_BYTES),

	/*
	 * XRC (9.2, table 38): RC's operations and answers, the requests
	 * naming their XRC SRQ. Atomic write and flush are RC's alone here.
	 */
	XRC_REQ(SEND_FIRST, SEND_REQ | SROCE_FIRST, 0),
	XRC_REQ(SEND_MIDDLE, SEND_REQ | SROCE_MIDDLE, 0),
	XRC_REQ(SEND_LAST, SEND_REQ | SROCE_LAST, 0),
	XRC_REQ(SEND_LAST_IMM, SEND_REQ | SROCE_LAST | SROCE_HAS_IMMDT,
		SROCE_IMMDT_BYTES),
	XRC_REQ(SEND_ONLY, SEND_REQ | SROCE_ONLY, 0),
	XRC_REQ(SEND_ONLY_IMM, SEND_REQ | SROCE_ONLY | SROCE_HAS_IMMDT,
		SROCE_IMMDT_BYTES),
	XRC_REQ(WRITE_FIRST, WRITE_REQ | SROCE_FIRST | SROCE_HAS_RETH,
		SROCE_RETH_BYTES),
	XRC_REQ(WRITE_MIDDLE, WRITE_REQ | SROCE_MIDDLE, 0),
	XRC_REQ(WRITE_LAST, WRITE_REQ | SROCE_LAST, 0),
	XRC_REQ(WRITE_LAST_IMM, WRITE_REQ | SROCE_LAST | SROCE_HAS_IMMDT,
		SROCE_IMMDT_BYTES),
	XRC_REQ(WRITE_ONLY, WRITE_REQ | SROCE_ONLY | SROCE_HAS_RETH,
		SROCE_RETH_BYTES),
	XRC_REQ(WRITE_ONLY_IMM,
		WRITE_REQ | SROCE_ONLY | SROCE_HAS_RETH | SROCE_HAS_IMMDT,
		SROCE_RETH_BYTES + SROCE_IMMDT_BYTES),
	XRC_REQ(READ_REQ,
		SROCE_READ | SROCE_REQUEST | SROCE_ONLY | SROCE_HAS_RETH,
		SROCE_RETH_BYTES),
	SROCE_OPCODE(XRC, READ_RESP_FIRST,
		     READ_RESP | SROCE_FIRST | SROCE_HAS_AETH,
		     SROCE_AETH_BYTES),
	SROCE_OPCODE(XRC, READ_RESP_MIDDLE, READ_RESP | SROCE_MIDDLE, 0),
	SROCE_OPCODE(XRC, READ_RESP_LAST,
		     READ_RESP | SROCE_LAST | SROCE_HAS_AETH,
		     SROCE_AETH_BYTES),
	SROCE_OPCODE(XRC, READ_RESP_ONLY,
		     READ_RESP | SROCE_ONLY | SROCE_HAS_AETH,
		     SROCE_AETH_BYTES),
	SROCE_OPCODE(XRC, ACK,
		     SROCE_ACK | SROCE_RESPONSE | SROCE_ONLY | SROCE_HAS_AETH,
		     SROCE_AETH_BYTES),
	SROCE_OPCODE(XRC, ATOMIC_ACK,
		     SROCE_ATOMIC | SROCE_RESPONSE | SROCE_ONLY |
		     SROCE_HAS_AETH | SROCE_HAS_ATOMICACKETH,
		     SROCE_AETH_BYTES + SROCE_ATOMICACKETH_BYTES),
	XRC_REQ(CMP_SWAP, ATOMIC_REQ, SROCE_ATOMICETH_BYTES),
	XRC_REQ(FETCH_ADD, ATOMIC_REQ, SROCE_ATOMICETH_BYTES),
	XRC_REQ(SEND_LAST_INV, SEND_REQ | SROCE_LAST | SROCE_HAS_IETH,
		SROCE_IETH_BYTES),
	XRC_REQ(SEND_ONLY_INV, SEND_REQ | SROCE_ONLY | SROCE_HAS_IETH,
		SROCE_IETH_BYTES),

	/* UD: single-packet sends, each naming its sender in a DETH. */
	SROCE_OPCODE(UD, SEND_ONLY, SEND_REQ | SROCE_ONLY | SROCE_HAS_DETH,
		     SROCE_DETH_BYTES),
	SROCE_OPCODE(UD, SEND_ONLY_IMM,
		     SEND_REQ | SROCE_ONLY | SROCE_HAS_DETH | SROCE_HAS_IMMDT,
		     SROCE_DETH_BYTES + SROCE_IMMDT_BYTES),
};

/* The bytes taken by the extended headers in @m. */
static unsigned int sroce_ext_len(u32 m)
{
	static const u8 bytes[] = {
		[ilog2(SROCE_HAS_XRCETH)] = SROCE_XRCETH_BYTES,
		[ilog2(SROCE_HAS_DETH)] = SROCE_DETH_BYTES,
		[ilog2(SROCE_HAS_FETH)] = SROCE_FETH_BYTES,
		[ilog2(SROCE_HAS_RETH)] = SROCE_RETH_BYTES,
		[ilog2(SROCE_HAS_ATOMICETH)] = SROCE_ATOMICETH_BYTES,
		[ilog2(SROCE_HAS_AETH)] = SROCE_AETH_BYTES,
		[ilog2(SROCE_HAS_ATOMICACKETH)] = SROCE_ATOMICACKETH_BYTES,
		[ilog2(SROCE_HAS_IMMDT)] = SROCE_IMMDT_BYTES,
		[ilog2(SROCE_HAS_IETH)] = SROCE_IETH_BYTES,
	};
	unsigned int len = 0;
	unsigned long bit;
	unsigned long bits = m;

	for_each_set_bit(bit, &bits, ARRAY_SIZE(bytes))
		len += bytes[bit];
	return len;
}

/**
 * sroce_hdr_offset() - where an extended header sits in a packet
 * @opcode: the BTH opcode
 * @has: one SROCE_HAS_* bit; SROCE_HAS_PAYLOAD gives the payload's offset
 *
 * Extended headers follow the BTH in the order of their bits, so the
 * offset of one is the BTH plus every header of a lower bit the opcode has.
 *
 * Return: bytes from the start of the BTH, or 0 when @opcode carries no
 * such header.
 */
unsigned int sroce_hdr_offset(u8 opcode, u32 has)
{
	u32 mask = sroce_opcode[opcode].mask;

	if (!(mask & has))
		return 0;
	return SROCE_BTH_BYTES + sroce_ext_len(mask & SROCE_HAS_HDRS & (has - 1));
}

/*
 * GSI (QP1) sends UD packets; SMI (QP0) does not exist on RoCE. An XRC
 * initiator and an XRC target are the two halves of one XRC connection.
 */
u32 sroce_qpt_bit(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return SROCE_QPT_RC;
	case IB_QPT_UC:
		return SROCE_QPT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SROCE_QPT_UD;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return SROCE_QPT_XRC;
	default:
		return 0;
	}
}

/**
 * sroce_bth_init() - fill in a BTH
 * @bth: where it goes
 * @opcode: the BTH opcode
 * @se: solicited event
 * @pad: PadCnt, the bytes after the payload that round it up to four
 * @pkey: partition key
 * @qpn: destination QP (24 bits)
 * @psn: packet sequence number (24 bits)
 * @ack_req: ask the responder to acknowledge this packet
 *
 * TVer, MigReq and the reserved bits are zero: sroce neither migrates
 * paths nor speaks another transport version.
 */
void sroce_bth_init(struct sroce_bth *bth, u8 opcode, bool se, u8 pad,
		    u16 pkey, u32 qpn, u32 psn, bool ack_req)
{
	bth->opcode = opcode;
	bth->flags = (se ? SROCE_BTH_SE : 0) |
		     ((pad << SROCE_BTH_PAD_SHIFT) & SROCE_BTH_PAD_MASK);
	bth->pkey = cpu_to_be16(pkey);
	bth->qpn = cpu_to_be32(qpn & SROCE_BTH_QPN_MASK);
	bth->apsn = cpu_to_be32((psn & SROCE_BTH_PSN_MASK) |
				(ack_req ? SROCE_BTH_ACKREQ : 0));
}
