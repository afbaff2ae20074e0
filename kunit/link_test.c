// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: what `rdma link add` accepts as a device name and as a netdev.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "link.h"

static void name_accepts_ordinary(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_link_check_name("sroce0"), 0);
	KUNIT_EXPECT_EQ(test, sroce_link_check_name("r-0_a.b"), 0);
	KUNIT_EXPECT_EQ(test, sroce_link_check_name("x"), 0);
}

static void name_rejects_malformed(struct kunit *test)
{
	static const char * const bad[] = {
		"", "a b", "a/b", "sroce%d", "tab\there", "nl\n", "\x7f",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_link_check_name(bad[i]),
				    -EINVAL, "name #%u", i);
}

/*
 * The core hands over at most IB_DEVICE_NAME_MAX - 1 characters, cutting
 * longer names silently: a name that long may have been cut, so it is
 * refused, and the longest accepted is one shorter.
 */
static void name_length_limit(struct kunit *test)
{
	char name[IB_DEVICE_NAME_MAX];

	memset(name, 'n', sizeof(name));
	name[SROCE_NAME_MAX] = '\0';
	KUNIT_EXPECT_EQ(test, sroce_link_check_name(name), 0);
	name[SROCE_NAME_MAX] = 'n';
	name[SROCE_NAME_MAX + 1] = '\0';
	KUNIT_EXPECT_EQ(test, sroce_link_check_name(name), -ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, SROCE_NAME_MAX + 1, IB_DEVICE_NAME_MAX - 1);
}

static struct net_device *test_netdev(struct kunit *test)
{
	struct net_device *ndev = alloc_etherdev(0);

	KUNIT_ASSERT_NOT_NULL(test, ndev);
	return ndev;
}

static void netdev_ethernet_accepted(struct kunit *test)
{
	struct net_device *ndev = test_netdev(test);

	KUNIT_EXPECT_EQ(test, sroce_link_check_netdev(ndev), 0);
	free_netdev(ndev);
}

static void netdev_loopback_refused(struct kunit *test)
{
	struct net_device *ndev = test_netdev(test);

	ndev->flags |= IFF_LOOPBACK;
	KUNIT_EXPECT_EQ(test, sroce_link_check_netdev(ndev), -EOPNOTSUPP);
	ndev->flags &= ~IFF_LOOPBACK;
	ndev->type = ARPHRD_LOOPBACK;
	KUNIT_EXPECT_EQ(test, sroce_link_check_netdev(ndev), -EOPNOTSUPP);
	free_netdev(ndev);
}

static void netdev_not_ethernet_refused(struct kunit *test)
{
	struct net_device *ndev = test_netdev(test);

	ndev->type = ARPHRD_NONE;	/* a tun device */
	ndev->addr_len = 0;
	KUNIT_EXPECT_EQ(test, sroce_link_check_netdev(ndev), -EOPNOTSUPP);
	ndev->type = ARPHRD_INFINIBAND;	/* IPoIB */
	ndev->addr_len = 20;
	KUNIT_EXPECT_EQ(test, sroce_link_check_netdev(ndev), -EOPNOTSUPP);
	ndev->type = ARPHRD_ETHER;	/* claims Ethernet, odd address */
	ndev->addr_len = 8;
	KUNIT_EXPECT_EQ(test, sroce_link_check_netdev(ndev), -EOPNOTSUPP);
	free_netdev(ndev);
}

static struct kunit_case link_cases[] = {
	KUNIT_CASE(name_accepts_ordinary),
	KUNIT_CASE(name_rejects_malformed),
	KUNIT_CASE(name_length_limit),
	KUNIT_CASE(netdev_ethernet_accepted),
	KUNIT_CASE(netdev_loopback_refused),
	KUNIT_CASE(netdev_not_ethernet_refused),
	{}
};

static struct kunit_suite link_suite = {
	.name = "sroce-link",
	.test_cases = link_cases,
};

kunit_test_suite(link_suite);
