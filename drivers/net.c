// SPDX-License-Identifier: GPL-2.0
/*
 * The wire: RoCEv2 frames are taken from the attached netdev by an rx
 * handler, before the IP stack sees them, checked and handed to the
 * transport; packets the transport builds get their UDP, IP and Ethernet
 * headers and their ICRC here and leave in bursts (burst.c). No
 * socket is involved, so nothing else on the host can receive port 4791
 * at the netdev's own addresses while sroce is attached; RoCEv2 to any
 * other address goes on to the stack.
 */
#include <linux/etherdevice.h>
#include <linux/hash.h>
#include <linux/if_vlan.h>
#include <linux/if_ether.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "ah.h"
#include "burst.h"
#include "cc.h"
#include "counters.h"
#include "device.h"
#include "icrc.h"
#include "mcast.h"
#include "net.h"
#include "opcode.h"
#include "pkt.h"
#include "rx.h"
#include "trace.h"
#include "wire.h"

/* What follows a packet's payload: at most three pad bytes, the ICRC. */
#define SROCE_TRAILER_MAX	(3 + SROCE_ICRC_BYTES)

/*
 * The IP header length of a RoCEv2 frame (UDP to port 4791, not an IP
 * fragment), or 0 for any other frame. Only looks: a frame that is not
 * ours must reach the stack untouched. skb->data is at the IP header.
 */
static unsigned int sroce_rx_roce_iplen(const struct sk_buff *skb)
{
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} ipbuf;
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;
	const struct udphdr *uh;
	struct udphdr ubuf;
	unsigned int iplen;

	switch (skb->protocol) {
	case htons(ETH_P_IP):
		iph = skb_header_pointer(skb, 0, sizeof(*iph), &ipbuf.v4);
		if (!iph || iph->version != 4 || iph->ihl < 5 ||
		    iph->protocol != IPPROTO_UDP || ip_is_fragment(iph))
			return 0;
		iplen = iph->ihl * 4;
		break;
	case htons(ETH_P_IPV6):
		/* Extension headers (fragments among them) are not RoCEv2. */
		ip6h = skb_header_pointer(skb, 0, sizeof(*ip6h), &ipbuf.v6);
		if (!ip6h || ip6h->version != 6 || ip6h->nexthdr != IPPROTO_UDP)
			return 0;
		iplen = sizeof(*ip6h);
		break;
	default:
		return 0;
	}
	uh = skb_header_pointer(skb, iplen, sizeof(*uh), &ubuf);
	if (!uh || uh->dest != htons(SROCE_UDP_PORT))
		return 0;
	return iplen;
}

/*
 * Check the IP and UDP headers of a RoCEv2 frame, drop the link layer's
 * padding, and leave skb->data at the BTH with the network and transport
 * headers set. The UDP checksum is not checked: the ICRC covers more, and
 * RoCEv2 senders leave it zero.
 */
static int sroce_rx_strip(struct sk_buff *skb, unsigned int iplen)
{
	unsigned int hlen = iplen + sizeof(struct udphdr);
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;
	const struct udphdr *uh;
	unsigned int len;

	/* Merged by GRO (rx-gro-list, rx-udp-gro-forwarding): not ours. */
	if (skb_is_gso(skb) || !pskb_may_pull(skb, hlen))
		return -EINVAL;
	if (skb->protocol == htons(ETH_P_IP)) {
		iph = (const struct iphdr *)skb->data;
		if (ip_fast_csum(iph, iph->ihl))
			return -EINVAL;
		len = ntohs(iph->tot_len);
	} else {
		ip6h = (const struct ipv6hdr *)skb->data;
		len = sizeof(*ip6h) + ntohs(ip6h->payload_len);
	}
	if (len < hlen || len > skb->len || pskb_trim_rcsum(skb, len))
		return -EINVAL;
	uh = (const struct udphdr *)(skb->data + iplen);
	if (ntohs(uh->len) != len - iplen)
		return -EINVAL;

	skb_reset_network_header(skb);
	skb_set_transport_header(skb, iplen);
	__skb_pull(skb, hlen);
	return 0;
}

/* Take the ICRC off the end of a frame at its BTH, into @icrc. */
static int sroce_rx_trim_icrc(struct sk_buff *skb, __le32 *icrc)
{
	unsigned int len = skb->len - SROCE_ICRC_BYTES;

	if (skb->len < SROCE_BTH_BYTES + SROCE_ICRC_BYTES ||
	    skb_copy_bits(skb, len, icrc, sizeof(*icrc)) ||
	    pskb_trim_rcsum(skb, len))
		return -EINVAL;
	return 0;
}

/*
 * A FLUSH whose ICRC is the one rdma_rxe computes (sroce_icrc_rxe_flush()):
 * refused, rxe's FLUSH would reach no peer but rxe. Taken, and counted.
 */
static bool sroce_rx_rxe_flush(struct sroce_dev *sdev, struct sk_buff *skb,
			       const struct sroce_pkt *pkt, __le32 icrc)
{
	if (!(pkt->mask & SROCE_FLUSH) ||
	    sroce_icrc_rxe_flush(skb, skb->len) != icrc)
		return false;
	sroce_count(sdev, SROCE_CNT_RX_RXE_FLUSH);
	return true;
}

/*
 * A RoCEv2 frame, ours now: check it, from the IP header to the ICRC, and
 * hand it to the transport, or drop it and count why.
 */
static void sroce_rx_frame(struct sroce_dev *sdev, struct sk_buff *skb,
			   unsigned int iplen)
{
	struct sroce_pkt pkt;
	__le32 icrc;

	/* Memory reserves are for swap over the network, not for RDMA. */
	if (unlikely(skb_pfmemalloc(skb))) {
		sroce_count(sdev, SROCE_CNT_RX_DROPPED);
		goto drop;
	}
	if (sroce_rx_strip(skb, iplen) || sroce_rx_trim_icrc(skb, &icrc) ||
	    sroce_pkt_parse(skb, &pkt)) {
		sroce_count(sdev, SROCE_CNT_RX_BAD_HEADER);
		goto drop;
	}
	if (sroce_icrc(skb, skb->len) != icrc &&
	    !sroce_rx_rxe_flush(sdev, skb, &pkt, icrc)) {
		sroce_count(sdev, SROCE_CNT_RX_BAD_ICRC);
		goto drop;
	}
	ether_addr_copy(pkt.smac, eth_hdr(skb)->h_source);
	/* A VLAN netdev received it: the core finds a UD reply's GID by it. */
	pkt.vlan_id = is_vlan_dev(skb->dev) ? vlan_dev_vlan_id(skb->dev) :
					      SROCE_NO_VLAN;
	sroce_count(sdev, SROCE_CNT_RX_PACKETS);
	trace_sroce_rx(sdev, pkt.bth, skb->len);
	sroce_rx(sdev, &pkt);
	return;
drop:
	kfree_skb(skb);
}

/*
 * The port's default GID: fe80::/64 and the MAC's EUI-64, as the core
 * makes it, whatever link-local address the netdev itself has.
 */
static bool sroce_rx_default_gid(const struct in6_addr *daddr,
				 struct net_device *ndev)
{
	u8 eui[8];

	return daddr->s6_addr32[0] == htonl(0xfe800000) &&
	       !daddr->s6_addr32[1] && !addrconf_ifid_eui48(eui, ndev) &&
	       !memcmp(&daddr->s6_addr[8], eui, sizeof(eui));
}

/*
 * Is a RoCEv2 frame for one of the device's GIDs, or for a group a QP of
 * it joined? The GIDs are the netdev's addresses (and the default GID),
 * so the stack's own RCU-hashed address lists answer for the GID table,
 * without its lock and linear search per packet.
 *
 * Context: softirq, rcu_read_lock held.
 */
static bool sroce_rx_for_us(struct sroce_dev *sdev, const struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} buf;
	union ib_gid gid;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "sroce rx outside RCU");
	if (skb->protocol == htons(ETH_P_IP)) {
		iph = skb_header_pointer(skb, 0, sizeof(*iph), &buf.v4);
		if (!iph)
			return false;
		if (!ipv4_is_multicast(iph->daddr))
			return __ip_dev_find(dev_net(ndev), iph->daddr,
					     false) == ndev;
		ipv6_addr_set_v4mapped(iph->daddr, (struct in6_addr *)gid.raw);
	} else {
		ip6h = skb_header_pointer(skb, 0, sizeof(*ip6h), &buf.v6);
		if (!ip6h)
			return false;
		if (!ipv6_addr_is_multicast(&ip6h->daddr))
			/* strict: a global address of another netdev's. */
			return ipv6_chk_addr(dev_net(ndev), &ip6h->daddr, ndev,
					     1) ||
			       sroce_rx_default_gid(&ip6h->daddr, ndev);
		memcpy(gid.raw, &ip6h->daddr, sizeof(gid.raw));
	}
	return sroce_mcast_local(sdev, &gid);
}

/*
 * Context: softirq, rcu_read_lock held, for every frame the netdev
 * receives. Whatever is not RoCEv2 to one of the device's GIDs or to a
 * group it joined passes on untouched (routed RoCE, another address of
 * the host's); RoCEv2 frames to us are always consumed.
 */
static rx_handler_result_t sroce_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct sroce_dev *sdev;
	unsigned int iplen;

	/*
	 * A VLAN the host has no netdev for arrives here still tagged; the
	 * stack drops it after us. A priority tag (VLAN 0) is no VLAN.
	 */
	if ((skb->pkt_type != PACKET_HOST &&
	     skb->pkt_type != PACKET_MULTICAST) ||
	    (skb_vlan_tag_present(skb) && skb_vlan_tag_get_id(skb)))
		return RX_HANDLER_PASS;
	iplen = sroce_rx_roce_iplen(skb);
	if (!iplen)
		return RX_HANDLER_PASS;

	sdev = rcu_dereference(skb->dev->rx_handler_data);
	if (!sroce_rx_for_us(sdev, skb)) {
		sroce_count(sdev, SROCE_CNT_RX_NOT_OURS);
		return RX_HANDLER_PASS;
	}
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		sroce_count(sdev, SROCE_CNT_RX_DROPPED);
	else
		sroce_rx_frame(sdev, skb, iplen);
	return RX_HANDLER_CONSUMED;
}

static bool sroce_net_handles(struct net_device *ndev, struct sroce_dev *sdev)
{
	return rtnl_dereference(ndev->rx_handler) == sroce_rx_handler &&
	       rtnl_dereference(ndev->rx_handler_data) == sdev;
}

/**
 * sroce_net_attach_upper() - take the frames of a VLAN netdev above ours
 * @sdev: the device
 * @upper: a netdev just linked right above the device's netdev
 *
 * A tagged frame reaches the rx handler of its VLAN's netdev, not the one
 * of the netdev below: the core puts the addresses of VLAN netdevs above
 * the port's into its GID table (as for a hardware RoCE port), so sroce
 * takes their frames there too. Other uppers, and a VLAN netdev whose
 * handler is taken (a bridge port), are left alone: their GIDs can send,
 * and what comes back goes to the stack.
 *
 * Context: RTNL held.
 */
void sroce_net_attach_upper(struct sroce_dev *sdev, struct net_device *upper)
{
	ASSERT_RTNL();
	if (!is_vlan_dev(upper))
		return;
	/* A sroce device attached to the VLAN netdev itself keeps it. */
	if (rtnl_dereference(upper->rx_handler) == sroce_rx_handler)
		return;
	if (netdev_rx_handler_register(upper, sroce_rx_handler, sdev))
		netdev_warn(upper, "sroce: receive handler taken: RoCEv2 frames of this VLAN go to the stack\n");
}

/*
 * A VLAN netdev whose frames the sroce device of the netdev below it took
 * (sroce_net_attach_upper()) is taken over by a device attached to it,
 * and given back when that one goes, unless the VLAN netdev goes too.
 */
static void sroce_net_take_over(struct net_device *ndev)
{
	if (rtnl_dereference(ndev->rx_handler) != sroce_rx_handler)
		return;
	netdev_rx_handler_unregister(ndev);
	sroce_rx_drain();
}

static void sroce_net_give_back(struct net_device *ndev)
{
	struct net_device *ldev;
	struct sroce_dev *lower;
	struct list_head *iter;

	if (!is_vlan_dev(ndev) || ndev->reg_state != NETREG_REGISTERED)
		return;
	netdev_for_each_lower_dev(ndev, ldev, iter) {
		lower = sroce_dev_get_by_netdev(ldev);
		if (lower) {
			sroce_net_attach_upper(lower, ndev);
			sroce_dev_put(lower);
		}
	}
}

static bool sroce_net_release(struct sroce_dev *sdev, struct net_device *ndev)
{
	if (!sroce_net_handles(ndev, sdev))
		return false;
	netdev_rx_handler_unregister(ndev);
	return true;
}

/**
 * sroce_net_detach_upper() - stop taking the frames of an upper netdev
 * @sdev: the device
 * @upper: a netdev being unlinked from above the device's netdev
 *
 * Context: RTNL held; sleeps.
 */
void sroce_net_detach_upper(struct sroce_dev *sdev, struct net_device *upper)
{
	ASSERT_RTNL();
	if (sroce_net_release(sdev, upper))
		/* What the handler took is delivered, or dropped, by now. */
		sroce_rx_drain();
}

/**
 * sroce_net_attach() - start taking RoCEv2 frames from the device's netdev
 * @sdev: the device, whose counters are allocated
 *
 * And from the VLAN netdevs above it (sroce_net_attach_upper()); from a
 * VLAN netdev whose frames the device below took, instead of that one
 * (sroce_net_take_over()). A netdev has one rx handler. A bridge port, a bond or team member and a
 * macvlan's lower device already have theirs: sroce can run on the upper
 * device instead, and says so.
 *
 * Context: RTNL held.
 * Return: 0, -EBUSY when the rx handler is taken, or -EINVAL for a netdev
 * that refuses rx handlers.
 */
int sroce_net_attach(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	struct net_device *upper;
	struct list_head *iter;
	int err;

	ASSERT_RTNL();
	sroce_net_take_over(ndev);
	err = netdev_rx_handler_register(ndev, sroce_rx_handler, sdev);
	if (err == -EBUSY)
		netdev_warn(ndev, "sroce: cannot attach: the receive handler is taken (bridge port, bond or team member, macvlan lower device?); attach to the upper device\n");
	else if (err)
		netdev_warn(ndev, "sroce: cannot attach: the device takes no receive handler\n");
	else
		netdev_for_each_upper_dev_rcu(ndev, upper, iter)
			sroce_net_attach_upper(sdev, upper);
	return err;
}

/**
 * sroce_net_detach() - stop taking frames from the device's netdev
 * @sdev: the device
 *
 * And from the VLAN netdevs above it; a VLAN netdev goes back to the
 * device below it, if any. Once this returns, no rx handler call for
 * @sdev runs or will run, and every packet it took has been
 * dispatched (sroce_rx_drain()). Idempotent: it is called when the netdev
 * goes away and again, for every way a device goes, from dealloc_driver.
 *
 * Context: RTNL held; sleeps.
 */
void sroce_net_detach(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	struct net_device *upper;
	struct list_head *iter;
	bool any;

	ASSERT_RTNL();
	any = sroce_net_release(sdev, ndev);
	/* RTNL keeps the adjacency lists still, without RCU. */
	netdev_for_each_upper_dev_rcu(ndev, upper, iter)
		any |= sroce_net_release(sdev, upper);
	if (!any)
		return;
	sroce_rx_drain();
	sroce_net_give_back(ndev);
}

static unsigned int sroce_net_iplen(const struct sroce_av *av)
{
	return av->net_type == RDMA_NETWORK_IPV4 ? sizeof(struct iphdr) :
						   sizeof(struct ipv6hdr);
}

/**
 * sroce_net_alloc() - an skb for one packet
 * @sdev: the device
 * @av: where the packet goes (for the IP header's size)
 * @len: bytes of BTH, extended headers and linear payload
 * @gfp: allocation flags
 *
 * skb->data is at the BTH and @len bytes are put, not initialised: the
 * caller writes every one of them. Room is left in front for the UDP, IP
 * and link-layer headers and behind for the pad and the ICRC. More payload
 * may follow in page fragments (sroce_net_add_frag()).
 *
 * Return: the skb, or NULL.
 */
struct sk_buff *sroce_net_alloc(struct sroce_dev *sdev,
				const struct sroce_av *av,
				unsigned int len, gfp_t gfp)
{
	struct net_device *ndev = sdev->ndev;
	unsigned int head = LL_RESERVED_SPACE(ndev) + sroce_net_iplen(av) +
			    sizeof(struct udphdr) +
			    (av->vlan_proto ? VLAN_HLEN : 0);
	struct sk_buff *skb;

	skb = alloc_skb(head + len + SROCE_TRAILER_MAX, gfp);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, head);
	__skb_put(skb, len);
	skb->dev = ndev;
	return skb;
}

/**
 * sroce_net_add_frag() - append payload from a page, without copying it
 * @skb: from sroce_net_alloc()
 * @page: the page, of which the skb takes a reference
 * @off: offset of the payload in @page
 * @len: bytes of payload
 *
 * Bytes that continue the previous fragment in the same page extend it.
 * The page's contents are read when the packet is sent, and again at
 * every retransmission: the ICRC covers what they were at that moment.
 *
 * Return: false, leaving @skb unchanged, when the skb has no fragment left
 * (one is kept for the trailer sroce_net_xmit() may need).
 */
bool sroce_net_add_frag(struct sk_buff *skb, struct page *page,
			unsigned int off, unsigned int len)
{
	unsigned int i = skb_shinfo(skb)->nr_frags;

	if (i && skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], len);
	} else {
		if (i >= MAX_SKB_FRAGS - 1)
			return false;
		get_page(page);
		skb_fill_page_desc(skb, i, page, off, len);
	}
	/* Others may write the page meanwhile: no checksum may be trusted. */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return true;
}

/*
 * Append @pad zero bytes and room for the ICRC: in the linear part when the
 * packet is all there, in a fragment of its own after the payload's page
 * fragments otherwise. Returns where the ICRC goes, or NULL.
 */
static u8 *sroce_net_put_trailer(struct sk_buff *skb, unsigned int pad)
{
	unsigned int len = pad + SROCE_ICRC_BYTES;
	unsigned int i = skb_shinfo(skb)->nr_frags;
	struct page *page;
	u8 *p;

	if (!skb_is_nonlinear(skb)) {
		if (unlikely(skb_tailroom(skb) < len))
			return NULL;
		return (u8 *)skb_put_zero(skb, len) + pad;
	}
	if (unlikely(i >= MAX_SKB_FRAGS || skb_has_frag_list(skb)))
		return NULL;
	p = netdev_alloc_frag(SROCE_TRAILER_MAX);
	if (unlikely(!p))
		return NULL;
	memset(p, 0, len);
	page = virt_to_head_page(p);
	skb_fill_page_desc(skb, i, page, p - (u8 *)page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += SROCE_TRAILER_MAX;
	return p + pad;
}

static void sroce_net_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh = skb_push(skb, sizeof(*uh));

	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(SROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

static void sroce_net_push_ipv4(struct sk_buff *skb, const struct sroce_av *av,
				u8 tos)
{
	struct iphdr *iph = skb_push(skb, sizeof(*iph));

	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = tos;
	iph->tot_len = htons(skb->len);
	/*
	 * Never fragmented, so the ID identifies nothing (RFC 6864): zero,
	 * as the stack itself sends DF datagrams that have no socket.
	 */
	iph->id = 0;
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit;
	iph->protocol = IPPROTO_UDP;
	memcpy(&iph->saddr, &av->sgid.raw[12], sizeof(iph->saddr));
	memcpy(&iph->daddr, &av->dgid.raw[12], sizeof(iph->daddr));
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
}

static void sroce_net_push_ipv6(struct sk_buff *skb, const struct sroce_av *av,
				u8 tclass)
{
	struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tclass,
		     htonl(av->flow_label) & IPV6_FLOWLABEL_MASK);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit;
	memcpy(&ip6h->saddr, av->sgid.raw, sizeof(ip6h->saddr));
	memcpy(&ip6h->daddr, av->dgid.raw, sizeof(ip6h->daddr));
	skb->protocol = htons(ETH_P_IPV6);
}

/*
 * The Ethernet header, from the attached netdev's MAC, or from the MAC of
 * the VLAN netdev above it whose GID the packet is sent from: that one's
 * tag goes with the frame as a NIC's offload would insert it (the netdev
 * inserts it itself when it cannot), and its priority picks the queue. A
 * VLAN netdev sroce is attached to tags its frames itself.
 */
static const u8 *sroce_net_push_eth(struct sk_buff *skb,
				    struct net_device *ndev,
				    const struct sroce_av *av)
{
	struct ethhdr *eth = skb_push(skb, ETH_HLEN);
	const u8 *smac = av->vlan_proto ? av->smac : ndev->dev_addr;

	skb_reset_mac_header(skb);
	ether_addr_copy(eth->h_dest, av->dmac);
	ether_addr_copy(eth->h_source, smac);
	eth->h_proto = skb->protocol;
	if (av->vlan_proto) {
		__vlan_hwaccel_put_tag(skb, av->vlan_proto, av->vlan_tci);
		skb->priority = av->vlan_tci >> VLAN_PRIO_SHIFT;
	}
	return smac;
}

/*
 * To a GID of our own: the frame is received as if from the wire, by our
 * own rx handler, from the backlog of this CPU.
 */
static int sroce_net_loopback(struct sroce_dev *sdev, struct sk_buff *skb)
{
	skb->protocol = eth_type_trans(skb, sdev->ndev);
	if (netif_rx(skb) == NET_RX_DROP) {
		sroce_count(sdev, SROCE_CNT_TX_DROPPED);
		return -ENOBUFS;
	}
	sroce_count(sdev, SROCE_CNT_LOOPBACK);
	return 0;
}

/* A copy of a multicast frame for this host's own members of the group. */
static void sroce_net_mcast_loop(struct sroce_dev *sdev,
				 const struct sroce_av *av, struct sk_buff *skb)
{
	struct sk_buff *copy;

	if (!sroce_mcast_local(sdev, &av->dgid))
		return;
	copy = skb_clone(skb, GFP_ATOMIC);
	if (!copy)
		sroce_count(sdev, SROCE_CNT_TX_DROPPED);
	else
		sroce_net_loopback(sdev, copy);
}

/*
 * A flow hash from the QP's UDP source port, so that neither a qdisc nor
 * the choice of a transmit queue dissects the frame to find one.
 */
static void sroce_net_set_hash(struct sk_buff *skb, u16 sport)
{
	skb_set_hash(skb, hash_32(sport, 32), PKT_HASH_TYPE_L4);
}

/**
 * sroce_net_send() - finish a packet and send it, or add it to a burst
 * @sdev: the device
 * @burst: where a frame for the wire waits for the rest of its run; NULL
 *	   to send it at once
 * @av: where it goes
 * @skb: from sroce_net_alloc(), data at the BTH, whose PadCnt says how many
 *	 pad bytes follow the payload; always consumed
 * @sport: UDP source port
 *
 * Appends the pad and the ICRC, pushes the UDP, IP and Ethernet headers,
 * and hands the frame to the netdev (sroce_burst_flush()), or loops it
 * back to our own rx handler when it is addressed to our own MAC; a
 * multicast frame goes both ways when a QP of ours is in the group.
 *
 * Context: process or softirq, no spinlock held unless bottom halves are
 * off: a looped-back packet may be received, sroce_rx() included, before
 * this returns.
 * Return: 0, or a negative errno when the packet was dropped here.
 */
int sroce_net_send(struct sroce_dev *sdev, struct sroce_burst *burst,
		   const struct sroce_av *av, struct sk_buff *skb, u16 sport)
{
	struct sroce_bth *bth = (struct sroce_bth *)skb->data;
	unsigned int pad = (bth->flags & SROCE_BTH_PAD_MASK) >>
			   SROCE_BTH_PAD_SHIFT;
	struct net_device *ndev = sdev->ndev;
	unsigned int len = skb->len + pad;
	struct sroce_burst one;
	const u8 *smac;
	__le32 icrc;
	u8 *trailer;
	int err;
	u8 tos;

	trace_sroce_tx(sdev, bth, skb->len);
	trailer = sroce_net_put_trailer(skb, pad);
	if (unlikely(!trailer)) {
		err = -ENOMEM;
		goto drop;
	}
	sroce_net_push_udp(skb, sport);
	tos = sroce_cc_tos(av->traffic_class, bth->opcode);
	if (av->net_type == RDMA_NETWORK_IPV4)
		sroce_net_push_ipv4(skb, av, tos);
	else
		sroce_net_push_ipv6(skb, av, tos);
	if (unlikely(skb->len > READ_ONCE(ndev->mtu))) {
		err = -EMSGSIZE;
		goto drop;
	}
	icrc = sroce_icrc(skb, len);
	memcpy(trailer, &icrc, sizeof(icrc));
	smac = sroce_net_push_eth(skb, ndev, av);
	sroce_net_set_hash(skb, sport);
	skb->dev = ndev;
	sroce_count(sdev, SROCE_CNT_TX_PACKETS);

	if (ether_addr_equal(av->dmac, smac))
		return sroce_net_loopback(sdev, skb);
	if (is_multicast_ether_addr(av->dmac))
		sroce_net_mcast_loop(sdev, av, skb);
	if (burst) {
		sroce_burst_add(sdev, burst, skb);
		return 0;
	}
	sroce_burst_init(&one);
	sroce_burst_add(sdev, &one, skb);
	sroce_burst_flush(sdev, &one);
	return 0;

drop:
	kfree_skb(skb);
	sroce_count(sdev, SROCE_CNT_TX_DROPPED);
	return err;
}
