// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: what an address handle accepts and the address it keeps.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "ucontext.h"

static const u8 peer_mac[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x77, 0x00, 0x02 };

/* What create_ah and modify_qp do with an attribute. */
static int av_from(struct sroce_av *av, const struct rdma_ah_attr *attr)
{
	int err = sroce_av_check(attr);

	if (!err)
		sroce_av_set(av, attr);
	return err;
}

static void gid_v4(union ib_gid *gid, __be32 addr)
{
	ipv6_addr_set_v4mapped(addr, (struct in6_addr *)gid->raw);
}

static void gid_v6(union ib_gid *gid, u8 last)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[0] = 0xfd;
	gid->raw[1] = 0x77;
	gid->raw[15] = last;
}

static struct ib_gid_attr sgid_of(enum ib_gid_type type, bool v4)
{
	struct ib_gid_attr sgid = { .gid_type = type, .index = 3 };

	if (v4)
		gid_v4(&sgid.gid, htonl(0x0a4d0001));
	else
		gid_v6(&sgid.gid, 1);
	return sgid;
}

/* A RoCE attribute to the bench's peer, as the core hands it over. */
static struct rdma_ah_attr attr_to(const struct ib_gid_attr *sgid, bool v4)
{
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	union ib_gid dgid;

	if (v4)
		gid_v4(&dgid, htonl(0x0a4d0002));
	else
		gid_v6(&dgid, 2);
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_sl(&attr, 5);
	rdma_ah_set_static_rate(&attr, IB_RATE_10_GBPS);
	rdma_ah_set_grh(&attr, &dgid, 0xabcde, sgid->index, 64, 0x28);
	attr.grh.sgid_attr = sgid;
	ether_addr_copy(attr.roce.dmac, peer_mac);
	return attr;
}

static void ipv4_destination(struct kunit *test)
{
	struct ib_gid_attr sgid = sgid_of(IB_GID_TYPE_ROCE_UDP_ENCAP, true);
	struct rdma_ah_attr attr = attr_to(&sgid, true);
	struct sroce_av av;

	KUNIT_ASSERT_EQ(test, av_from(&av, &attr), 0);
	KUNIT_EXPECT_EQ(test, av.net_type, RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_EQ(test, memcmp(av.sgid.raw, sgid.gid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(av.dgid.raw, attr.grh.dgid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(av.dmac, peer_mac, ETH_ALEN), 0);
	KUNIT_EXPECT_EQ(test, av.flow_label, 0xabcdeU);
	KUNIT_EXPECT_EQ(test, av.hop_limit, 64);
	KUNIT_EXPECT_EQ(test, av.traffic_class, 0x28);
	KUNIT_EXPECT_EQ(test, av.sgid_index, 3);
	KUNIT_EXPECT_EQ(test, av.sl, 5);
	KUNIT_EXPECT_EQ(test, av.static_rate, IB_RATE_10_GBPS);
}

static void ipv6_destination(struct kunit *test)
{
	struct ib_gid_attr sgid = sgid_of(IB_GID_TYPE_ROCE_UDP_ENCAP, false);
	struct rdma_ah_attr attr = attr_to(&sgid, false);
	struct sroce_av av;

	KUNIT_ASSERT_EQ(test, av_from(&av, &attr), 0);
	KUNIT_EXPECT_EQ(test, av.net_type, RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_EQ(test, memcmp(av.dgid.raw, attr.grh.dgid.raw, 16), 0);
}

static void refused(struct kunit *test)
{
	struct ib_gid_attr v4 = sgid_of(IB_GID_TYPE_ROCE_UDP_ENCAP, true);
	struct ib_gid_attr v6 = sgid_of(IB_GID_TYPE_ROCE_UDP_ENCAP, false);
	struct ib_gid_attr v1 = sgid_of(IB_GID_TYPE_ROCE, false);
	struct ib_gid_attr ib = sgid_of(IB_GID_TYPE_IB, false);
	struct rdma_ah_attr attr;
	struct sroce_av av;

	attr = attr_to(&v4, true);
	attr.ah_flags = 0;
	KUNIT_EXPECT_EQ(test, av_from(&av, &attr), -EINVAL);

	attr = attr_to(&v4, true);
	attr.type = RDMA_AH_ATTR_TYPE_IB;
	KUNIT_EXPECT_EQ(test, av_from(&av, &attr), -EINVAL);

	attr = attr_to(&v4, true);
	rdma_ah_set_port_num(&attr, 2);
	KUNIT_EXPECT_EQ(test, av_from(&av, &attr), -EINVAL);

	attr = attr_to(&v4, true);
	attr.grh.sgid_attr = NULL;
	KUNIT_EXPECT_EQ(test, av_from(&av, &attr), -EINVAL);

	/* Only RoCEv2 GIDs. */
	attr = attr_to(&v1, false);
	KUNIT_EXPECT_EQ(test, av_from(&av, &attr), -EINVAL);
	attr = attr_to(&ib, false);
	KUNIT_EXPECT_EQ(test, av_from(&av, &attr), -EINVAL);

	/* One IP header cannot carry addresses of two families. */
	attr = attr_to(&v4, false);
	KUNIT_EXPECT_EQ(test, av_from(&av, &attr), -EINVAL);
	attr = attr_to(&v6, true);
	KUNIT_EXPECT_EQ(test, av_from(&av, &attr), -EINVAL);
}

/*
 * What RoCE has no use for is accepted, as hardware RoCE devices do: UCX
 * sets a DLID of 0xc000 and a flow label of ~0 on every AH it creates.
 */
static void roce_ignores(struct kunit *test)
{
	struct ib_gid_attr v4 = sgid_of(IB_GID_TYPE_ROCE_UDP_ENCAP, true);
	struct ib_gid_attr v6 = sgid_of(IB_GID_TYPE_ROCE_UDP_ENCAP, false);
	struct rdma_ah_attr attr;
	struct sroce_av av;

	/* The GRH's flow label has 20 bits: the rest are dropped. */
	attr = attr_to(&v4, true);
	attr.grh.flow_label = ~0U;
	KUNIT_ASSERT_EQ(test, av_from(&av, &attr), 0);
	KUNIT_EXPECT_EQ(test, av.flow_label, IB_GRH_FLOWLABEL_MASK);
	attr = attr_to(&v6, false);
	attr.grh.flow_label = 0x1abcde;
	KUNIT_ASSERT_EQ(test, av_from(&av, &attr), 0);
	KUNIT_EXPECT_EQ(test, av.flow_label, 0xabcdeU);

	/* UCX's traffic class: DSCP 26 with ECT(0). */
	attr = attr_to(&v4, true);
	attr.grh.traffic_class = 106;
	KUNIT_ASSERT_EQ(test, av_from(&av, &attr), 0);
	KUNIT_EXPECT_EQ(test, av.traffic_class, 106);
}

/* query_ah gives back what create_ah was given, less the GID reference. */
static void round_trip(struct kunit *test)
{
	struct ib_gid_attr sgid = sgid_of(IB_GID_TYPE_ROCE_UDP_ENCAP, false);
	struct rdma_ah_attr in = attr_to(&sgid, false), out;
	struct sroce_av av;

	KUNIT_ASSERT_EQ(test, av_from(&av, &in), 0);
	memset(&out, 0xa5, sizeof(out));
	sroce_av_get(&av, &out);
	KUNIT_EXPECT_EQ(test, out.type, RDMA_AH_ATTR_TYPE_ROCE);
	KUNIT_EXPECT_EQ(test, out.ah_flags, IB_AH_GRH);
	KUNIT_EXPECT_EQ(test, out.port_num, 1U);
	KUNIT_EXPECT_EQ(test, out.sl, 5);
	KUNIT_EXPECT_EQ(test, out.static_rate, IB_RATE_10_GBPS);
	KUNIT_EXPECT_EQ(test, memcmp(out.grh.dgid.raw, in.grh.dgid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, out.grh.flow_label, in.grh.flow_label);
	KUNIT_EXPECT_EQ(test, out.grh.sgid_index, in.grh.sgid_index);
	KUNIT_EXPECT_EQ(test, out.grh.hop_limit, in.grh.hop_limit);
	KUNIT_EXPECT_EQ(test, out.grh.traffic_class, in.grh.traffic_class);
	KUNIT_EXPECT_NULL(test, out.grh.sgid_attr);
	KUNIT_EXPECT_EQ(test, memcmp(out.roce.dmac, peer_mac, ETH_ALEN), 0);
}

/*
 * A user UD send names its AH by number in the process's table: one of
 * another of the process's PDs must not be taken for the QP's.
 */
static void lookup_by_pd(struct kunit *test)
{
	struct sroce_ucontext *uc = kunit_kzalloc(test, sizeof(*uc),
						  GFP_KERNEL);
	struct sroce_ah *ah = kunit_kzalloc(test, sizeof(*ah), GFP_KERNEL);
	struct ib_pd pd_a, pd_b;
	struct sroce_av av;
	u32 num;

	KUNIT_ASSERT_NOT_NULL(test, uc);
	KUNIT_ASSERT_NOT_NULL(test, ah);
	xa_init_flags(&uc->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	ah->ibah.pd = &pd_a;
	ah->av.net_type = RDMA_NETWORK_IPV4;
	KUNIT_ASSERT_EQ(test, xa_alloc_bh(&uc->ahs, &num, ah, xa_limit_32b,
					  GFP_KERNEL), 0);

	memset(&av, 0, sizeof(av));
	KUNIT_EXPECT_EQ(test, sroce_ah_lookup_av(uc, &pd_a, num, &av), 0);
	KUNIT_EXPECT_EQ(test, av.net_type, RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_EQ(test, sroce_ah_lookup_av(uc, &pd_b, num, &av),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_ah_lookup_av(uc, &pd_a, num + 1, &av),
			-EINVAL);
	xa_destroy(&uc->ahs);
}

static struct kunit_case ah_cases[] = {
	KUNIT_CASE(ipv4_destination),
	KUNIT_CASE(ipv6_destination),
	KUNIT_CASE(refused),
	KUNIT_CASE(roce_ignores),
	KUNIT_CASE(round_trip),
	KUNIT_CASE(lookup_by_pd),
	{}
};

static struct kunit_suite ah_suite = {
	.name = "sroce-ah",
	.test_cases = ah_cases,
};

kunit_test_suite(ah_suite);
