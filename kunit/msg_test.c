// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: how messages become packets (segmentation by the path MTU, the
 * opcode of each packet) and which packet may follow which; PSN arithmetic
 * across the 24-bit wrap.
 */
#include <kunit/test.h>

#include "msg.h"
#include "pkt.h"

static void npkts_by_mtu(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_msg_npkts(0, 1024), 1U);
	KUNIT_EXPECT_EQ(test, sroce_msg_npkts(1, 1024), 1U);
	KUNIT_EXPECT_EQ(test, sroce_msg_npkts(1024, 1024), 1U);
	KUNIT_EXPECT_EQ(test, sroce_msg_npkts(1025, 1024), 2U);
	KUNIT_EXPECT_EQ(test, sroce_msg_npkts(8 << 20, 4096), 2048U);
	KUNIT_EXPECT_EQ(test, sroce_msg_npkts(8 << 20, 256), 32768U);
	KUNIT_EXPECT_EQ(test, sroce_msg_npkts(BIT(31), 256), BIT(23));
}

/* Cuts @len at @mtu and checks the opcode of every packet. */
static void check_segments(struct kunit *test, u8 family, u32 wr, u32 len,
			   u32 mtu, u8 only, u8 first, u8 middle, u8 last)
{
	u32 n = sroce_msg_npkts(len, mtu), i;
	u8 op;

	for (i = 0; i < n; i++) {
		op = sroce_msg_opcode(family, wr, i == 0, i == n - 1);
		if (n == 1)
			KUNIT_EXPECT_EQ(test, op, only);
		else if (i == 0)
			KUNIT_EXPECT_EQ(test, op, first);
		else if (i == n - 1)
			KUNIT_EXPECT_EQ(test, op, last);
		else
			KUNIT_EXPECT_EQ(test, op, middle);
		/* What the table says agrees with the place. */
		KUNIT_EXPECT_EQ(test, !!(sroce_opcode[op].mask & SROCE_FIRST),
				i == 0);
		KUNIT_EXPECT_EQ(test, !!(sroce_opcode[op].mask & SROCE_LAST),
				i == n - 1);
	}
}

static void send_opcodes(struct kunit *test)
{
	const u32 lens[] = { 0, 1, 1024, 1025, 4096, 10000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		check_segments(test, SROCE_OP_SEND_FIRST, IB_UVERBS_WR_SEND,
			       lens[i], 1024, SROCE_OP_SEND_ONLY,
			       SROCE_OP_SEND_FIRST, SROCE_OP_SEND_MIDDLE,
			       SROCE_OP_SEND_LAST);
		check_segments(test, SROCE_OP_SEND_FIRST,
			       IB_UVERBS_WR_SEND_WITH_IMM, lens[i], 1024,
			       SROCE_OP_SEND_ONLY_IMM, SROCE_OP_SEND_FIRST,
			       SROCE_OP_SEND_MIDDLE, SROCE_OP_SEND_LAST_IMM);
		check_segments(test, SROCE_OP_SEND_FIRST,
			       IB_UVERBS_WR_SEND_WITH_INV, lens[i], 1024,
			       SROCE_OP_SEND_ONLY_INV, SROCE_OP_SEND_FIRST,
			       SROCE_OP_SEND_MIDDLE, SROCE_OP_SEND_LAST_INV);
	}
}

static void write_opcodes(struct kunit *test)
{
	const u32 lens[] = { 0, 1, 256, 257, 4096, 65536 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		check_segments(test, SROCE_OP_WRITE_FIRST,
			       IB_UVERBS_WR_RDMA_WRITE, lens[i], 256,
			       SROCE_OP_WRITE_ONLY, SROCE_OP_WRITE_FIRST,
			       SROCE_OP_WRITE_MIDDLE, SROCE_OP_WRITE_LAST);
		check_segments(test, SROCE_OP_WRITE_FIRST,
			       IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, lens[i], 256,
			       SROCE_OP_WRITE_ONLY_IMM, SROCE_OP_WRITE_FIRST,
			       SROCE_OP_WRITE_MIDDLE, SROCE_OP_WRITE_LAST_IMM);
	}
}

/* Reads, atomics and atomic writes are one request packet each. */
static void one_packet_requests(struct kunit *test)
{
	const u8 ops[] = { SROCE_OP_READ_REQ, SROCE_OP_CMP_SWAP,
			   SROCE_OP_FETCH_ADD, SROCE_OP_ATOMIC_WRITE };
	unsigned int i;
	u32 mask;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		KUNIT_EXPECT_EQ(test, sroce_msg_opcode(ops[i], 0, true, true),
				ops[i]);
		KUNIT_EXPECT_EQ(test, sroce_opcode[ops[i]].mask & SROCE_ONLY,
				(u32)SROCE_ONLY);
		mask = sroce_opcode[ops[i]].mask;
		KUNIT_EXPECT_TRUE(test, sroce_msg_in_sequence(0, mask));
	}
}

static void sequence_rules(struct kunit *test)
{
	u32 first = sroce_opcode[SROCE_OP_SEND_FIRST].mask;
	u32 middle = sroce_opcode[SROCE_OP_SEND_MIDDLE].mask;
	u32 last = sroce_opcode[SROCE_OP_SEND_LAST].mask;
	u32 only = sroce_opcode[SROCE_OP_SEND_ONLY].mask;
	u32 wmiddle = sroce_opcode[SROCE_OP_WRITE_MIDDLE].mask;
	u32 wfirst = sroce_opcode[SROCE_OP_WRITE_FIRST].mask;
	u32 read = sroce_opcode[SROCE_OP_READ_REQ].mask;

	/* Between messages: only a first (or only) packet. */
	KUNIT_EXPECT_TRUE(test, sroce_msg_in_sequence(0, first));
	KUNIT_EXPECT_TRUE(test, sroce_msg_in_sequence(0, only));
	KUNIT_EXPECT_FALSE(test, sroce_msg_in_sequence(0, middle));
	KUNIT_EXPECT_FALSE(test, sroce_msg_in_sequence(0, last));
	/* Inside a send: its middles and last, nothing else. */
	KUNIT_EXPECT_TRUE(test, sroce_msg_in_sequence(SROCE_SEND, middle));
	KUNIT_EXPECT_TRUE(test, sroce_msg_in_sequence(SROCE_SEND, last));
	KUNIT_EXPECT_FALSE(test, sroce_msg_in_sequence(SROCE_SEND, first));
	KUNIT_EXPECT_FALSE(test, sroce_msg_in_sequence(SROCE_SEND, only));
	KUNIT_EXPECT_FALSE(test, sroce_msg_in_sequence(SROCE_SEND, wmiddle));
	KUNIT_EXPECT_FALSE(test, sroce_msg_in_sequence(SROCE_SEND, wfirst));
	KUNIT_EXPECT_FALSE(test, sroce_msg_in_sequence(SROCE_SEND, read));
	/* Inside a write: not a send's middle. */
	KUNIT_EXPECT_TRUE(test, sroce_msg_in_sequence(SROCE_WRITE, wmiddle));
	KUNIT_EXPECT_FALSE(test, sroce_msg_in_sequence(SROCE_WRITE, middle));
}

static void psn_wrap(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xfffff0, 0x20), 0x10U);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0xffffff, 0), 0);
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0, 0xffffff), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_cmp(0x123456, 0x123456), 0);
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0x10, 0xfffff0), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0xfffff0, 0x10), 0);
	/* Half the space apart is the turning point (9.7.1). */
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0x7fffff, 0), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0x800000, 0), 0);
	/* The AckReq bit and reserved bits do not take part. */
	KUNIT_EXPECT_EQ(test, sroce_psn_cmp(0x80000005 & SROCE_BTH_PSN_MASK, 5),
			0);
}

static void wc_opcodes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_msg_wc_opcode(IB_UVERBS_WR_SEND),
			(u32)IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, sroce_msg_wc_opcode(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM),
			(u32)IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, sroce_msg_wc_opcode(IB_UVERBS_WR_RDMA_READ),
			(u32)IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test,
			sroce_msg_wc_opcode(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP),
			(u32)IB_WC_COMP_SWAP);
	KUNIT_EXPECT_EQ(test,
			sroce_msg_wc_opcode(IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD),
			(u32)IB_WC_FETCH_ADD);
	/* rdma-core's IBV_WR_ATOMIC_WRITE and IBV_WC_ATOMIC_WRITE. */
	KUNIT_EXPECT_EQ(test, sroce_msg_wc_opcode(15), 9U);
}

/*
 * Reads, atomics, atomic writes and flushes are exactly the RC requests
 * the opcode table calls so; atomics the atomic ones (an atomic write
 * returns no value).
 */
static void rd_and_atomic_ops(struct kunit *test)
{
	unsigned int op;
	u32 mask;

	for (op = 0; op <= (u8)~SROCE_TRANSPORT_MASK; op++) {
		mask = sroce_opcode[SROCE_TRANSPORT_RC | op].mask;
		if (!(mask & SROCE_REQUEST))
			mask = 0;
		KUNIT_EXPECT_EQ_MSG(test, sroce_msg_is_rd(op),
				    !!(mask & (SROCE_READ | SROCE_ATOMIC |
					       SROCE_ATOMIC_WRITE | SROCE_FLUSH)),
				    "opcode %#x", op);
		KUNIT_EXPECT_EQ_MSG(test, sroce_msg_is_atomic(op),
				    !!(mask & SROCE_ATOMIC), "opcode %#x", op);
	}
}

static struct kunit_case msg_cases[] = {
	KUNIT_CASE(npkts_by_mtu),
	KUNIT_CASE(send_opcodes),
	KUNIT_CASE(write_opcodes),
	KUNIT_CASE(one_packet_requests),
	KUNIT_CASE(rd_and_atomic_ops),
	KUNIT_CASE(sequence_rules),
	KUNIT_CASE(psn_wrap),
	KUNIT_CASE(wc_opcodes),
	{}
};

static struct kunit_suite msg_suite = {
	.name = "sroce-msg",
	.test_cases = msg_cases,
};

kunit_test_suite(msg_suite);
