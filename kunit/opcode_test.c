// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the opcode table against IBTA vol. 1 table 38 and 9.3, written out
 * again here by hand, and the BTH and PSN helpers.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <rdma/ib_verbs.h>

#include "opcode.h"
#include "pkt.h"
#include "wire.h"

#define HDRS	(SROCE_HAS_XRCETH | SROCE_HAS_DETH | SROCE_HAS_FETH | \
		 SROCE_HAS_RETH | SROCE_HAS_ATOMICETH | SROCE_HAS_AETH | \
		 SROCE_HAS_ATOMICACKETH | SROCE_HAS_IMMDT | SROCE_HAS_IETH)
#define POSITION	(SROCE_FIRST | SROCE_MIDDLE | SROCE_LAST)
#define OPERATION	(SROCE_SEND | SROCE_WRITE | SROCE_READ | SROCE_ATOMIC | \
			 SROCE_ACK | SROCE_ATOMIC_WRITE | SROCE_FLUSH)
#define DIRECTION	(SROCE_REQUEST | SROCE_RESPONSE)
#define QPT		(SROCE_QPT_RC | SROCE_QPT_UC | SROCE_QPT_UD | \
			 SROCE_QPT_XRC)
#define X		SROCE_HAS_XRCETH

/* An opcode, its extended headers and its header length, from the spec. */
struct expect {
	u8 opcode;
	u32 hdrs;
	u8 hdr_len;
};

static const struct expect expected[] = {
	{ 0x00, 0, 12 },				/* RC SEND First */
	{ 0x01, 0, 12 },				/* Middle */
	{ 0x02, 0, 12 },				/* Last */
	{ 0x03, SROCE_HAS_IMMDT, 16 },			/* Last w/ Imm */
	{ 0x04, 0, 12 },				/* Only */
	{ 0x05, SROCE_HAS_IMMDT, 16 },			/* Only w/ Imm */
	{ 0x06, SROCE_HAS_RETH, 28 },			/* WRITE First */
	{ 0x07, 0, 12 },				/* Middle */
	{ 0x08, 0, 12 },				/* Last */
	{ 0x09, SROCE_HAS_IMMDT, 16 },			/* Last w/ Imm */
	{ 0x0a, SROCE_HAS_RETH, 28 },			/* Only */
	{ 0x0b, SROCE_HAS_RETH | SROCE_HAS_IMMDT, 32 },	/* Only w/ Imm */
	{ 0x0c, SROCE_HAS_RETH, 28 },			/* READ Request */
	{ 0x0d, SROCE_HAS_AETH, 16 },			/* Response First */
	{ 0x0e, 0, 12 },				/* Middle */
	{ 0x0f, SROCE_HAS_AETH, 16 },			/* Last */
	{ 0x10, SROCE_HAS_AETH, 16 },			/* Only */
	{ 0x11, SROCE_HAS_AETH, 16 },			/* ACK */
	{ 0x12, SROCE_HAS_AETH | SROCE_HAS_ATOMICACKETH, 24 },
	{ 0x13, SROCE_HAS_ATOMICETH, 40 },		/* CmpSwap */
	{ 0x14, SROCE_HAS_ATOMICETH, 40 },		/* FetchAdd */
	{ 0x16, SROCE_HAS_IETH, 16 },			/* SEND Last w/ Inv */
	{ 0x17, SROCE_HAS_IETH, 16 },			/* Only w/ Inv */
	{ 0x1c, SROCE_HAS_FETH | SROCE_HAS_RETH, 32 },	/* FLUSH (1.5) */
	{ 0x1d, SROCE_HAS_RETH, 28 },			/* ATOMIC WRITE (1.5) */
	{ 0x20, 0, 12 },				/* UC SEND First */
	{ 0x21, 0, 12 },
	{ 0x22, 0, 12 },
	{ 0x23, SROCE_HAS_IMMDT, 16 },
	{ 0x24, 0, 12 },
	{ 0x25, SROCE_HAS_IMMDT, 16 },
	{ 0x26, SROCE_HAS_RETH, 28 },			/* UC WRITE First */
	{ 0x27, 0, 12 },
	{ 0x28, 0, 12 },
	{ 0x29, SROCE_HAS_IMMDT, 16 },
	{ 0x2a, SROCE_HAS_RETH, 28 },
	{ 0x2b, SROCE_HAS_RETH | SROCE_HAS_IMMDT, 32 },
	/* XRC (9.2, table 38): requests behind a 4-byte XRCETH (9.3.7). */
	{ 0xa0, X, 16 },				/* XRC SEND First */
	{ 0xa1, X, 16 },
	{ 0xa2, X, 16 },
	{ 0xa3, X | SROCE_HAS_IMMDT, 20 },
	{ 0xa4, X, 16 },
	{ 0xa5, X | SROCE_HAS_IMMDT, 20 },
	{ 0xa6, X | SROCE_HAS_RETH, 32 },		/* XRC WRITE First */
	{ 0xa7, X, 16 },
	{ 0xa8, X, 16 },
	{ 0xa9, X | SROCE_HAS_IMMDT, 20 },
	{ 0xaa, X | SROCE_HAS_RETH, 32 },
	{ 0xab, X | SROCE_HAS_RETH | SROCE_HAS_IMMDT, 36 },
	{ 0xac, X | SROCE_HAS_RETH, 32 },		/* XRC READ Request */
	{ 0xad, SROCE_HAS_AETH, 16 },			/* answers: as RC's */
	{ 0xae, 0, 12 },
	{ 0xaf, SROCE_HAS_AETH, 16 },
	{ 0xb0, SROCE_HAS_AETH, 16 },
	{ 0xb1, SROCE_HAS_AETH, 16 },			/* XRC ACK */
	{ 0xb2, SROCE_HAS_AETH | SROCE_HAS_ATOMICACKETH, 24 },
	{ 0xb3, X | SROCE_HAS_ATOMICETH, 44 },		/* XRC CmpSwap */
	{ 0xb4, X | SROCE_HAS_ATOMICETH, 44 },		/* XRC FetchAdd */
	{ 0xb6, X | SROCE_HAS_IETH, 20 },
	{ 0xb7, X | SROCE_HAS_IETH, 20 },
	{ 0x64, SROCE_HAS_DETH, 20 },			/* UD SEND Only */
	{ 0x65, SROCE_HAS_DETH | SROCE_HAS_IMMDT, 24 },	/* w/ Imm */
};

static const struct expect *find(unsigned int opcode)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(expected); i++)
		if (expected[i].opcode == opcode)
			return &expected[i];
	return NULL;
}

static void exactly_the_spec_opcodes(struct kunit *test)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = &sroce_opcode[op];
		const struct expect *e = find(op);

		if (!e) {
			KUNIT_EXPECT_EQ_MSG(test, info->mask, 0U, "op %#x", op);
			continue;
		}
		KUNIT_EXPECT_NE_MSG(test, info->mask, 0U, "op %#x", op);
		KUNIT_EXPECT_EQ_MSG(test, info->mask & HDRS, e->hdrs,
				    "op %#x %s", op, info->name);
		KUNIT_EXPECT_EQ_MSG(test, info->hdr_len, e->hdr_len,
				    "op %#x %s", op, info->name);
	}
}

static unsigned int hdr_bytes(u32 has)
{
	switch (has) {
	case SROCE_HAS_XRCETH: return SROCE_XRCETH_BYTES;
	case SROCE_HAS_DETH: return SROCE_DETH_BYTES;
	case SROCE_HAS_FETH: return SROCE_FETH_BYTES;
	case SROCE_HAS_RETH: return SROCE_RETH_BYTES;
	case SROCE_HAS_ATOMICETH: return SROCE_ATOMICETH_BYTES;
	case SROCE_HAS_AETH: return SROCE_AETH_BYTES;
	case SROCE_HAS_ATOMICACKETH: return SROCE_ATOMICACKETH_BYTES;
	case SROCE_HAS_IMMDT: return SROCE_IMMDT_BYTES;
	case SROCE_HAS_IETH: return SROCE_IETH_BYTES;
	default: return 0;
	}
}

/* Headers sit back to back after the BTH, the payload right after them. */
static void offsets_follow_wire_order(struct kunit *test)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = &sroce_opcode[op];
		unsigned int at = SROCE_BTH_BYTES;
		u32 has;

		if (!info->mask)
			continue;
		for (has = SROCE_HAS_XRCETH; has <= SROCE_HAS_IETH; has <<= 1) {
			if (!(info->mask & has)) {
				KUNIT_EXPECT_EQ(test, sroce_hdr_offset(op, has), 0U);
				continue;
			}
			KUNIT_EXPECT_EQ_MSG(test, sroce_hdr_offset(op, has), at,
					    "%s header %#x", info->name, has);
			at += hdr_bytes(has);
		}
		KUNIT_EXPECT_EQ_MSG(test, at, (unsigned int)info->hdr_len,
				    "%s", info->name);
		KUNIT_EXPECT_EQ(test, sroce_hdr_offset(op, SROCE_HAS_PAYLOAD),
				info->mask & SROCE_HAS_PAYLOAD ? at : 0);
	}
	/* Two spot checks of the ones with two extended headers. */
	KUNIT_EXPECT_EQ(test, sroce_hdr_offset(0x12, SROCE_HAS_ATOMICACKETH), 16U);
	KUNIT_EXPECT_EQ(test, sroce_hdr_offset(0x65, SROCE_HAS_IMMDT), 20U);
	/* The XRCETH comes first, right after the BTH. */
	KUNIT_EXPECT_EQ(test, sroce_hdr_offset(0xab, SROCE_HAS_XRCETH), 12U);
	KUNIT_EXPECT_EQ(test, sroce_hdr_offset(0xab, SROCE_HAS_RETH), 16U);
	KUNIT_EXPECT_EQ(test, sroce_hdr_offset(0xab, SROCE_HAS_IMMDT), 32U);
	KUNIT_EXPECT_EQ(test, sroce_hdr_offset(0xb3, SROCE_HAS_ATOMICETH), 16U);
	/* A FLUSH's FETH comes before its RETH (A19). */
	KUNIT_EXPECT_EQ(test, sroce_hdr_offset(0x1c, SROCE_HAS_FETH), 12U);
	KUNIT_EXPECT_EQ(test, sroce_hdr_offset(0x1c, SROCE_HAS_RETH), 16U);
}

static void one_of_each_kind(struct kunit *test)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 m = sroce_opcode[op].mask;

		if (!m)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, hweight32(m & OPERATION), 1, "%#x", op);
		KUNIT_EXPECT_EQ_MSG(test, hweight32(m & DIRECTION), 1, "%#x", op);
		KUNIT_EXPECT_EQ_MSG(test, hweight32(m & QPT), 1, "%#x", op);
		KUNIT_EXPECT_NE_MSG(test, m & POSITION, 0U, "%#x", op);
		KUNIT_EXPECT_NE_MSG(test, (m & POSITION), SROCE_MIDDLE | SROCE_LAST,
				    "%#x", op);
		KUNIT_EXPECT_NE_MSG(test, (m & POSITION), SROCE_FIRST | SROCE_MIDDLE,
				    "%#x", op);
		KUNIT_EXPECT_NOT_NULL(test, sroce_opcode[op].name);
	}
}

static void transports(struct kunit *test)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 m = sroce_opcode[op].mask;
		const char *name = sroce_opcode[op].name;

		if (!m)
			continue;
		switch (op & SROCE_TRANSPORT_MASK) {
		case SROCE_TRANSPORT_RC:
			KUNIT_EXPECT_EQ(test, m & QPT, SROCE_QPT_RC);
			KUNIT_EXPECT_EQ(test, strncmp(name, "RC_", 3), 0);
			break;
		case SROCE_TRANSPORT_UC:
			KUNIT_EXPECT_EQ(test, m & QPT, SROCE_QPT_UC);
			KUNIT_EXPECT_EQ(test, strncmp(name, "UC_", 3), 0);
			/* Unreliable: no reads, atomics or acknowledgements. */
			KUNIT_EXPECT_EQ_MSG(test, m & (SROCE_READ | SROCE_ATOMIC |
						       SROCE_ACK | SROCE_RESPONSE |
						       SROCE_HAS_AETH), 0U,
					    "%s", name);
			break;
		case SROCE_TRANSPORT_UD:
			KUNIT_EXPECT_EQ(test, m & QPT, SROCE_QPT_UD);
			KUNIT_EXPECT_EQ(test, strncmp(name, "UD_", 3), 0);
			KUNIT_EXPECT_EQ(test, m & (SROCE_SEND | SROCE_ONLY |
						   SROCE_HAS_DETH),
					(u32)(SROCE_SEND | SROCE_ONLY |
					      SROCE_HAS_DETH));
			break;
		case SROCE_TRANSPORT_XRC:
			/* RC's twin: every request, and only they, name an SRQ. */
			KUNIT_EXPECT_EQ(test, m & QPT, SROCE_QPT_XRC);
			KUNIT_EXPECT_EQ(test, strncmp(name, "XRC_", 4), 0);
			KUNIT_EXPECT_EQ_MSG(test, !!(m & SROCE_HAS_XRCETH),
					    !!(m & SROCE_REQUEST), "%s", name);
			KUNIT_EXPECT_EQ_MSG(test, m & ~(SROCE_HAS_XRCETH | QPT),
					    sroce_opcode[op & ~SROCE_TRANSPORT_MASK].mask &
					    ~QPT, "%s", name);
			break;
		default:
			KUNIT_FAIL(test, "opcode %#x of transport %#x", op,
				   op & SROCE_TRANSPORT_MASK);
		}
	}
}

static void directions_and_payload(struct kunit *test)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 m = sroce_opcode[op].mask;
		bool payload = m & SROCE_HAS_PAYLOAD;

		if (!m)
			continue;
		if (m & (SROCE_SEND | SROCE_WRITE))
			KUNIT_EXPECT_TRUE(test, (m & SROCE_REQUEST) && payload);
		if (m & SROCE_ACK)
			KUNIT_EXPECT_TRUE(test, (m & SROCE_RESPONSE) && !payload &&
					  (m & SROCE_HAS_AETH));
		if (m & SROCE_ATOMIC)
			KUNIT_EXPECT_FALSE(test, payload);
		/* One packet: a RETH and its 8 bytes, RC only (A19). */
		if (m & SROCE_ATOMIC_WRITE)
			KUNIT_EXPECT_EQ(test, m & (SROCE_ONLY | SROCE_REQUEST |
						   SROCE_HAS_RETH | QPT |
						   SROCE_HAS_PAYLOAD),
					(u32)(SROCE_ONLY | SROCE_REQUEST |
					      SROCE_HAS_RETH | SROCE_QPT_RC |
					      SROCE_HAS_PAYLOAD));
		if (m & SROCE_READ)
			/* Requests carry none, responses all of it. */
			KUNIT_EXPECT_EQ(test, payload, !!(m & SROCE_RESPONSE));
		/* Every response but a middle one reports its syndrome. */
		if ((m & SROCE_RESPONSE) && (m & POSITION) != SROCE_MIDDLE)
			KUNIT_EXPECT_TRUE(test, m & SROCE_HAS_AETH);
		if (m & SROCE_REQUEST)
			KUNIT_EXPECT_FALSE(test, m & SROCE_HAS_AETH);
	}
	KUNIT_EXPECT_TRUE(test, sroce_opcode[0x13].mask & SROCE_REQUEST);
	KUNIT_EXPECT_TRUE(test, sroce_opcode[0x12].mask & SROCE_RESPONSE);
}

/* Each multi-packet family of each transport has all four positions. */
static void families_complete(struct kunit *test)
{
	static const u32 families[] = { SROCE_SEND, SROCE_WRITE };
	static const u32 positions[] = {
		SROCE_FIRST, SROCE_MIDDLE, SROCE_LAST, SROCE_ONLY,
	};
	static const u32 qpts[] = { SROCE_QPT_RC, SROCE_QPT_UC, SROCE_QPT_XRC };
	unsigned int f, p, q, op, found;

	for (q = 0; q < ARRAY_SIZE(qpts); q++)
		for (f = 0; f < ARRAY_SIZE(families); f++)
			for (p = 0; p < ARRAY_SIZE(positions); p++) {
				found = 0;
				for (op = 0; op < 256; op++) {
					u32 m = sroce_opcode[op].mask;

					if ((m & qpts[q]) && (m & families[f]) &&
					    (m & POSITION) == positions[p])
						found++;
				}
				KUNIT_EXPECT_GE_MSG(test, found, 1U,
						    "qpt %#x op %#x pos %#x",
						    qpts[q], families[f],
						    positions[p]);
			}
	for (p = 0; p < ARRAY_SIZE(positions); p++) {
		found = 0;
		for (op = 0; op < 256; op++) {
			u32 m = sroce_opcode[op].mask;

			if ((m & SROCE_READ) && (m & SROCE_RESPONSE) &&
			    (m & POSITION) == positions[p])
				found++;
		}
		KUNIT_EXPECT_EQ(test, found, 2U);	/* RC's and XRC's */
	}
}

static void qpt_bits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_qpt_bit(IB_QPT_RC), SROCE_QPT_RC);
	KUNIT_EXPECT_EQ(test, sroce_qpt_bit(IB_QPT_UC), SROCE_QPT_UC);
	KUNIT_EXPECT_EQ(test, sroce_qpt_bit(IB_QPT_UD), SROCE_QPT_UD);
	KUNIT_EXPECT_EQ(test, sroce_qpt_bit(IB_QPT_GSI), SROCE_QPT_UD);
	KUNIT_EXPECT_EQ(test, sroce_qpt_bit(IB_QPT_SMI), 0U);
	KUNIT_EXPECT_EQ(test, sroce_qpt_bit(IB_QPT_XRC_INI), SROCE_QPT_XRC);
	KUNIT_EXPECT_EQ(test, sroce_qpt_bit(IB_QPT_XRC_TGT), SROCE_QPT_XRC);
	KUNIT_EXPECT_EQ(test, sroce_qpt_bit(IB_QPT_RAW_PACKET), 0U);
}

static void bth_fields(struct kunit *test)
{
	struct sroce_bth bth;
	u8 *raw = (u8 *)&bth;

	memset(&bth, 0xa5, sizeof(bth));
	sroce_bth_init(&bth, 0x0a, true, 3, 0xffff, 0xab123456, 0xfe654321,
		       true);
	KUNIT_EXPECT_EQ(test, sizeof(bth), (size_t)SROCE_BTH_BYTES);
	KUNIT_EXPECT_EQ(test, raw[0], 0x0a);
	/* SE, no MigReq, PadCnt 3, TVer 0. */
	KUNIT_EXPECT_EQ(test, raw[1], 0xb0);
	KUNIT_EXPECT_EQ(test, raw[2], 0xff);
	KUNIT_EXPECT_EQ(test, raw[3], 0xff);
	/* resv8a zero, then the QPN's low 24 bits, big-endian. */
	KUNIT_EXPECT_EQ(test, raw[4], 0x00);
	KUNIT_EXPECT_EQ(test, raw[5], 0x12);
	KUNIT_EXPECT_EQ(test, raw[6], 0x34);
	KUNIT_EXPECT_EQ(test, raw[7], 0x56);
	/* AckReq, seven reserved zero bits, the PSN's low 24 bits. */
	KUNIT_EXPECT_EQ(test, raw[8], 0x80);
	KUNIT_EXPECT_EQ(test, raw[9], 0x65);
	KUNIT_EXPECT_EQ(test, raw[10], 0x43);
	KUNIT_EXPECT_EQ(test, raw[11], 0x21);

	sroce_bth_init(&bth, 0x11, false, 0, 0x8001, 1, 2, false);
	KUNIT_EXPECT_EQ(test, raw[1], 0x00);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(bth.pkey), 0x8001);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(bth.qpn), 1U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(bth.apsn), 2U);
}

static void psn_arithmetic(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_cmp(5, 5), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(4, 5), 0);
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(6, 5), 0);
	/* Across the wrap: 0 comes after 0xffffff. */
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0, 0xffffff), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0xffffff, 0), 0);
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0x7fffff, 0), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0x800001, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xfffffe, 5), 3U);
	KUNIT_EXPECT_EQ(test, sroce_pad(0), 0U);
	KUNIT_EXPECT_EQ(test, sroce_pad(1), 3U);
	KUNIT_EXPECT_EQ(test, sroce_pad(13), 3U);
	KUNIT_EXPECT_EQ(test, sroce_pad(4096), 0U);
}

static struct kunit_case opcode_cases[] = {
	KUNIT_CASE(exactly_the_spec_opcodes),
	KUNIT_CASE(offsets_follow_wire_order),
	KUNIT_CASE(one_of_each_kind),
	KUNIT_CASE(transports),
	KUNIT_CASE(directions_and_payload),
	KUNIT_CASE(families_complete),
	KUNIT_CASE(qpt_bits),
	KUNIT_CASE(bth_fields),
	KUNIT_CASE(psn_arithmetic),
	{}
};

static struct kunit_suite opcode_suite = {
	.name = "sroce-opcode",
	.test_cases = opcode_cases,
};

kunit_test_suite(opcode_suite);
