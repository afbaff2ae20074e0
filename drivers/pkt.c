// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing a received RoCEv2 packet: everything in its transport headers
 * is checked against the opcode table before any of it is believed.
 */
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>

#include "opcode.h"
#include "pkt.h"
#include "wire.h"

/* The GIDs an IP header carries: IPv4 addresses are IPv4-mapped. */
static int sroce_pkt_gids(const struct sk_buff *skb, struct sroce_pkt *pkt)
{
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;

	switch (skb->protocol) {
	case htons(ETH_P_IP):
		iph = ip_hdr(skb);
		ipv6_addr_set_v4mapped(iph->saddr, (struct in6_addr *)pkt->sgid.raw);
		ipv6_addr_set_v4mapped(iph->daddr, (struct in6_addr *)pkt->dgid.raw);
		pkt->net_type = RDMA_NETWORK_IPV4;
		pkt->ce = INET_ECN_is_ce(iph->tos);
		return 0;
	case htons(ETH_P_IPV6):
		ip6h = ipv6_hdr(skb);
		memcpy(pkt->sgid.raw, &ip6h->saddr, sizeof(pkt->sgid.raw));
		memcpy(pkt->dgid.raw, &ip6h->daddr, sizeof(pkt->dgid.raw));
		pkt->net_type = RDMA_NETWORK_IPV6;
		pkt->ce = INET_ECN_is_ce(ipv6_get_dsfield(ip6h));
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * A CNP, as the opcode table would describe it: the BTH, then 16 reserved
 * bytes taken as payload (the receiver checks there are 16), sent to the
 * QPs that send requests.
 */
static const struct sroce_opcode_info sroce_cnp_info = {
	.name = "CNP",
	.mask = SROCE_CNP | SROCE_HAS_PAYLOAD | SROCE_QPT_RC | SROCE_QPT_UC |
		SROCE_QPT_XRC,
	.hdr_len = SROCE_BTH_BYTES,
};

/*
 * After the headers come the payload and PadCnt bytes of pad, which round
 * the payload up to a multiple of four (9.2). Headers are multiples of
 * four themselves, so the packet must be too. First and middle packets
 * carry a full path MTU, which needs no pad; packets of opcodes without
 * payload carry neither.
 */
static int sroce_pkt_check_len(const struct sk_buff *skb, u32 mask,
			       unsigned int hdr_len, unsigned int pad)
{
	unsigned int rest = skb->len - hdr_len;

	if (rest < pad || rest % 4)
		return -EINVAL;
	if (!(mask & SROCE_HAS_PAYLOAD) && rest)
		return -EINVAL;
	if (!(mask & SROCE_LAST) && pad)
		return -EINVAL;
	return 0;
}

/**
 * sroce_pkt_parse() - check a received packet's transport headers and
 *		       fill in its parsed view
 * @skb: the packet: data at the BTH, length through the pad (the ICRC
 *	 already taken off), network header set and in the linear part,
 *	 protocol ETH_P_IP or ETH_P_IPV6
 * @pkt: filled in on success; smac is zeroed, as only the receive path
 *	 knows where the Ethernet header is
 *
 * Checks that the opcode is one sroce runs, that TVer is 0, and that the
 * length leaves room for the opcode's headers and exactly its payload and
 * pad. On success the BTH and every extended header are in the linear part
 * of @skb. The payload may still be in page fragments.
 *
 * Return: 0, or -EINVAL for a malformed packet (which @skb may have been
 * partly linearised for, but is otherwise untouched).
 */
int sroce_pkt_parse(struct sk_buff *skb, struct sroce_pkt *pkt)
{
	const struct sroce_opcode_info *info;
	struct sroce_xrceth *xrceth;
	struct sroce_bth *bth;
	unsigned int pad;
	u32 apsn;

	if (!pskb_may_pull(skb, SROCE_BTH_BYTES))
		return -EINVAL;
	bth = (struct sroce_bth *)skb->data;
	info = bth->opcode == SROCE_OPCODE_CNP ? &sroce_cnp_info :
	       &sroce_opcode[bth->opcode];
	if (!info->mask || (bth->flags & SROCE_BTH_TVER_MASK))
		return -EINVAL;
	if (!pskb_may_pull(skb, info->hdr_len))
		return -EINVAL;
	/* Pulling may have moved the head. */
	bth = (struct sroce_bth *)skb->data;
	pad = (bth->flags & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
	if (sroce_pkt_check_len(skb, info->mask, info->hdr_len, pad))
		return -EINVAL;
	if (sroce_pkt_gids(skb, pkt))
		return -EINVAL;

	apsn = be32_to_cpu(bth->apsn);
	pkt->skb = skb;
	pkt->bth = bth;
	pkt->opcode = bth->opcode;
	pkt->mask = info->mask;
	pkt->qpn = be32_to_cpu(bth->qpn) & SROCE_BTH_QPN_MASK;
	pkt->psn = apsn & SROCE_BTH_PSN_MASK;
	pkt->ack_req = apsn & SROCE_BTH_ACKREQ;
	pkt->se = bth->flags & SROCE_BTH_SE;
	pkt->paylen = skb->len - info->hdr_len - pad;
	pkt->xrc_srqn = 0;
	if (info->mask & SROCE_HAS_XRCETH) {
		/* Right after the BTH, before any other extended header. */
		xrceth = (struct sroce_xrceth *)(bth + 1);
		pkt->xrc_srqn = be32_to_cpu(xrceth->srqn) &
				SROCE_XRCETH_SRQN_MASK;
	}
	eth_zero_addr(pkt->smac);
	return 0;
}
