// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: how a netdev's MTU and condition map to the IB port's.
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "port.h"
#include "wire.h"

static void mtu_overhead_is_worst_case(struct kunit *test)
{
	/* IPv6 40 + UDP 8 + BTH 12 + XRCETH 4 + RETH 16 + ImmDt 4 + ICRC 4 */
	KUNIT_EXPECT_EQ(test, SROCE_MAX_OVERHEAD, 88);
}

static void mtu_common_links(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(1500), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(9000), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(4200), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(2048), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(65535), IB_MTU_4096);
}

/* Each IB MTU needs exactly its payload plus the overhead, not a byte less. */
static void mtu_boundaries(struct kunit *test)
{
	static const struct {
		unsigned int payload;
		enum ib_mtu mtu, below;
	} steps[] = {
		{ 512, IB_MTU_512, IB_MTU_256 },
		{ 1024, IB_MTU_1024, IB_MTU_512 },
		{ 2048, IB_MTU_2048, IB_MTU_1024 },
		{ 4096, IB_MTU_4096, IB_MTU_2048 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		unsigned int at = steps[i].payload + SROCE_MAX_OVERHEAD;

		KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(at), steps[i].mtu);
		KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(at - 1),
				steps[i].below);
	}
}

static void mtu_too_small(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(256 + 88), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(256 + 87), 0);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(68), 0);	/* IPv4 minimum */
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(0), 0);
}

static void state_needs_all_three(struct kunit *test)
{
	unsigned int bits;

	for (bits = 0; bits < 8; bits++) {
		bool running = bits & 1, carrier = bits & 2, fits = bits & 4;

		KUNIT_EXPECT_EQ(test,
				sroce_port_state_of(running, carrier, fits),
				bits == 7 ? IB_PORT_ACTIVE : IB_PORT_DOWN);
	}
}

static struct kunit_case port_cases[] = {
	KUNIT_CASE(mtu_overhead_is_worst_case),
	KUNIT_CASE(mtu_common_links),
	KUNIT_CASE(mtu_boundaries),
	KUNIT_CASE(mtu_too_small),
	KUNIT_CASE(state_needs_all_three),
	{}
};

static struct kunit_suite port_suite = {
	.name = "sroce-port",
	.test_cases = port_cases,
};

kunit_test_suite(port_suite);
