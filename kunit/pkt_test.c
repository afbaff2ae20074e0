// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: packets built by hand, for every opcode, over IPv4 and IPv6, and
 * what sroce_pkt_parse() makes of them, malformed ones included.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ipv6.h>

#include "pkt.h"
#include "wire.h"

#define HEADROOM	64

/* A packet as the tests describe it; the bytes are made from this. */
struct spec {
	u8 opcode;
	bool v6;
	bool se;
	bool ack_req;
	u8 pad;			/* PadCnt written in the BTH */
	unsigned int paylen;	/* payload bytes */
	unsigned int extra;	/* bytes after the payload: usually the pad */
	u8 flags_or;		/* ORed into the BTH flags byte */
	u32 qpn;
	u32 psn;
};

static const u8 v6_src[16] = { 0xfd, 0x77, [15] = 1 };
static const u8 v6_dst[16] = { 0xfd, 0x77, [15] = 2 };
static const __be32 v4_src = htonl(0x0a4d0001);
static const __be32 v4_dst = htonl(0x0a4d0002);

/* Bytes from the IP header to the end of the pad; returns the IP length. */
static unsigned int make_bytes(const struct spec *s, u8 *buf, unsigned int *len)
{
	unsigned int iplen = s->v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	unsigned int hdr_len = sroce_opcode[s->opcode].hdr_len ?: SROCE_BTH_BYTES;
	unsigned int tlen = hdr_len + s->paylen + s->extra;
	struct udphdr *uh = (struct udphdr *)(buf + iplen);
	struct sroce_bth *bth = (struct sroce_bth *)(uh + 1);
	u8 *p = (u8 *)bth;
	unsigned int i;

	memset(buf, 0, iplen + sizeof(*uh));
	if (s->v6) {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)buf;

		ip6h->version = 6;
		ip6h->payload_len = htons(sizeof(*uh) + tlen + 4);
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = 64;
		memcpy(&ip6h->saddr, v6_src, 16);
		memcpy(&ip6h->daddr, v6_dst, 16);
	} else {
		struct iphdr *iph = (struct iphdr *)buf;

		iph->version = 4;
		iph->ihl = 5;
		iph->tot_len = htons(iplen + sizeof(*uh) + tlen + 4);
		iph->ttl = 64;
		iph->protocol = IPPROTO_UDP;
		iph->saddr = v4_src;
		iph->daddr = v4_dst;
	}
	uh->source = htons(0xc000);
	uh->dest = htons(SROCE_UDP_PORT);
	uh->len = htons(sizeof(*uh) + tlen + 4);

	sroce_bth_init(bth, s->opcode, s->se, s->pad, 0xffff, s->qpn, s->psn,
		       s->ack_req);
	bth->flags |= s->flags_or;
	for (i = SROCE_BTH_BYTES; i < hdr_len; i++)
		p[i] = 0x40 + i;
	for (i = 0; i < s->paylen; i++)
		p[hdr_len + i] = 0x80 ^ i;
	memset(p + hdr_len + s->paylen, 0, s->extra);
	*len = iplen + sizeof(*uh) + tlen;
	return iplen;
}

/*
 * The packet as the receive path hands it to the parser: data at the BTH,
 * network and transport headers set. With @split, only the first @split
 * bytes from the IP header on are linear, the rest is in a page fragment.
 */
static struct sk_buff *make_skb(struct kunit *test, const struct spec *s,
				unsigned int split)
{
	unsigned int len, iplen;
	struct sk_buff *skb;
	struct page *page;
	u8 *buf;

	buf = kunit_kzalloc(test, 8192, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	iplen = make_bytes(s, buf, &len);
	if (!split || split > len)
		split = len;

	skb = alloc_skb(HEADROOM + split, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, HEADROOM);
	skb_put_data(skb, buf, split);
	if (split < len) {
		page = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, page);
		KUNIT_ASSERT_LE(test, len - split, (unsigned int)PAGE_SIZE);
		memcpy(page_address(page), buf + split, len - split);
		skb_fill_page_desc(skb, 0, page, 0, len - split);
		skb->len += len - split;
		skb->data_len += len - split;
		skb->truesize += PAGE_SIZE;
	}
	skb->protocol = htons(s->v6 ? ETH_P_IPV6 : ETH_P_IP);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, iplen);
	__skb_pull(skb, iplen + sizeof(struct udphdr));
	return skb;
}

static int parse(struct kunit *test, const struct spec *s,
		 struct sroce_pkt *pkt)
{
	struct sk_buff *skb = make_skb(test, s, 0);
	int err = sroce_pkt_parse(skb, pkt);

	kfree_skb(skb);
	return err;
}

static void expect_fields(struct kunit *test, const struct spec *s,
			  const struct sroce_pkt *pkt, struct sk_buff *skb)
{
	const struct sroce_opcode_info *info = &sroce_opcode[s->opcode];
	const u8 *hdr = (const u8 *)pkt->bth;
	union ib_gid sgid, dgid;
	unsigned int i;

	if (s->v6) {
		memcpy(sgid.raw, v6_src, 16);
		memcpy(dgid.raw, v6_dst, 16);
	} else {
		ipv6_addr_set_v4mapped(v4_src, (struct in6_addr *)sgid.raw);
		ipv6_addr_set_v4mapped(v4_dst, (struct in6_addr *)dgid.raw);
	}
	KUNIT_EXPECT_PTR_EQ(test, pkt->skb, skb);
	KUNIT_EXPECT_PTR_EQ(test, (void *)pkt->bth, (void *)skb->data);
	KUNIT_EXPECT_EQ(test, pkt->opcode, s->opcode);
	KUNIT_EXPECT_EQ(test, pkt->mask, info->mask);
	KUNIT_EXPECT_EQ(test, pkt->qpn, s->qpn & SROCE_BTH_QPN_MASK);
	KUNIT_EXPECT_EQ(test, pkt->psn, s->psn & SROCE_BTH_PSN_MASK);
	KUNIT_EXPECT_EQ(test, pkt->ack_req, s->ack_req);
	KUNIT_EXPECT_EQ(test, pkt->se, s->se);
	KUNIT_EXPECT_EQ(test, pkt->paylen, s->paylen);
	KUNIT_EXPECT_EQ(test, sroce_pkt_payoff(pkt), (unsigned int)info->hdr_len);
	KUNIT_EXPECT_EQ(test, memcmp(pkt->sgid.raw, sgid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(pkt->dgid.raw, dgid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, pkt->net_type,
			s->v6 ? RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_TRUE(test, is_zero_ether_addr(pkt->smac));
	/*
	 * An XRC request's XRCETH is the 4 bytes after the BTH (0x4c..0x4f
	 * here): the reserved top byte is not part of the SRQ number.
	 */
	KUNIT_EXPECT_EQ(test, pkt->xrc_srqn,
			info->mask & SROCE_HAS_XRCETH ? 0x4d4e4fU : 0U);
	/* Every extended header is in the linear part, as it was built. */
	KUNIT_ASSERT_GE(test, skb_headlen(skb), (unsigned int)info->hdr_len);
	for (i = SROCE_BTH_BYTES; i < info->hdr_len; i++)
		KUNIT_EXPECT_EQ(test, hdr[i], (u8)(0x40 + i));
}

/* The payload lengths worth trying for an opcode. */
static unsigned int paylens(u32 mask, unsigned int *out)
{
	if (!(mask & SROCE_HAS_PAYLOAD)) {
		out[0] = 0;
		return 1;
	}
	if (!(mask & SROCE_LAST)) {
		out[0] = 256;
		out[1] = 4096;
		return 2;
	}
	out[0] = 0;
	out[1] = 1;
	out[2] = 2;
	out[3] = 3;
	out[4] = 4;
	out[5] = 1023;
	return 6;
}

static void round_trip_every_opcode(struct kunit *test)
{
	unsigned int op, v6, i, n, lens[6], tried = 0;

	for (op = 0; op < 256; op++) {
		if (!sroce_opcode[op].mask)
			continue;
		n = paylens(sroce_opcode[op].mask, lens);
		for (v6 = 0; v6 < 2; v6++)
			for (i = 0; i < n; i++) {
				struct spec s = {
					.opcode = op, .v6 = v6,
					.se = (op + i) & 1,
					.ack_req = (op + i + v6) & 1,
					.paylen = lens[i],
					.pad = sroce_pad(lens[i]),
					.extra = sroce_pad(lens[i]),
					.qpn = 0x123456 ^ op,
					.psn = 0xfedcba - op - i,
				};
				struct sk_buff *skb = make_skb(test, &s, 0);
				struct sroce_pkt pkt;

				KUNIT_ASSERT_EQ_MSG(test,
						    sroce_pkt_parse(skb, &pkt), 0,
						    "%s v6=%u paylen %u",
						    sroce_opcode[op].name, v6,
						    lens[i]);
				expect_fields(test, &s, &pkt, skb);
				kfree_skb(skb);
				tried++;
			}
	}
	KUNIT_EXPECT_GT(test, tried, 200U);
}

/* Headers split between the linear part and a page: pulled on parsing. */
static void nonlinear_headers(struct kunit *test)
{
	static const u8 ops[] = { 0x06, 0x0b, 0x12, 0x13, 0x65 };
	unsigned int i, split;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		for (split = 0; split < 2; split++) {
			u32 mask = sroce_opcode[ops[i]].mask;
			unsigned int paylen = mask & SROCE_HAS_PAYLOAD ? 300 : 0;
			struct spec s = {
				.opcode = ops[i], .v6 = split, .paylen = paylen,
				.qpn = 77, .psn = 5,
			};
			unsigned int iplen = split ? 40 : 20;
			/* Linear up to a few bytes into the BTH or beyond. */
			unsigned int at = iplen + 8 + (split ? 14 : 5);
			struct sk_buff *skb = make_skb(test, &s, at);
			struct sroce_pkt pkt;

			KUNIT_ASSERT_TRUE(test, skb_is_nonlinear(skb));
			KUNIT_ASSERT_EQ(test, sroce_pkt_parse(skb, &pkt), 0);
			expect_fields(test, &s, &pkt, skb);
			kfree_skb(skb);
		}
}

/* An XRC SRQ number as an initiator writes it, and a split XRCETH. */
static void xrceth_srqn(struct kunit *test)
{
	static const u8 ops[] = { 0xa4, 0xaa, 0xac, 0xb3 };
	unsigned int i, split;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		for (split = 0; split < 2; split++) {
			u32 mask = sroce_opcode[ops[i]].mask;
			struct spec s = {
				.opcode = ops[i],
				.paylen = mask & SROCE_HAS_PAYLOAD ? 300 : 0,
				.qpn = 9, .psn = 1,
			};
			/* IPv4 20 + UDP 8 + BTH 12, and 2 bytes of XRCETH. */
			struct sk_buff *skb = make_skb(test, &s,
						       split ? 42 : 0);
			struct sroce_xrceth *x;
			struct sroce_pkt pkt;

			KUNIT_ASSERT_EQ(test, sroce_pkt_parse(skb, &pkt), 0);
			x = (struct sroce_xrceth *)(pkt.bth + 1);
			x->srqn = cpu_to_be32(0xff000000 | 0xabcdef);
			KUNIT_ASSERT_EQ(test, sroce_pkt_parse(skb, &pkt), 0);
			KUNIT_EXPECT_EQ(test, pkt.xrc_srqn, 0xabcdefU);
			kfree_skb(skb);
		}
	/* The same operation over RC names no SRQ. */
	KUNIT_EXPECT_FALSE(test, sroce_opcode[0x04].mask & SROCE_HAS_XRCETH);
	KUNIT_EXPECT_EQ(test, sroce_opcode[0xa4].hdr_len,
			SROCE_BTH_BYTES + SROCE_XRCETH_BYTES);
}

static void unknown_opcodes(struct kunit *test)
{
	struct sroce_pkt pkt;
	unsigned int op;

	for (op = 0; op < 256; op++) {
		struct spec s = { .opcode = op, .paylen = 64 };

		if (sroce_opcode[op].mask || op == SROCE_OPCODE_CNP)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, parse(test, &s, &pkt), -EINVAL,
				    "opcode %#x", op);
	}
}

/* A CNP is outside the table, its 16 reserved bytes taken as payload. */
static void cnp(struct kunit *test)
{
	struct spec s = { .opcode = SROCE_OPCODE_CNP, .paylen = SROCE_CNP_BYTES };
	struct spec odd = { .opcode = SROCE_OPCODE_CNP, .paylen = 6 };
	struct sroce_pkt pkt;

	KUNIT_ASSERT_EQ(test, parse(test, &s, &pkt), 0);
	KUNIT_EXPECT_EQ(test, pkt.mask & (SROCE_CNP | SROCE_REQUEST |
					  SROCE_RESPONSE), (u32)SROCE_CNP);
	KUNIT_EXPECT_EQ(test, pkt.paylen, (u32)SROCE_CNP_BYTES);
	KUNIT_EXPECT_FALSE(test, pkt.mask & SROCE_QPT_UD);
	/* No pad on a CNP: a length not a multiple of four is refused. */
	KUNIT_EXPECT_EQ(test, parse(test, &odd, &pkt), -EINVAL);
}

static void transport_version(struct kunit *test)
{
	struct sroce_pkt pkt;
	unsigned int tver;

	for (tver = 1; tver < 16; tver++) {
		struct spec s = { .opcode = 0x04, .paylen = 8,
				  .flags_or = tver };

		KUNIT_EXPECT_EQ(test, parse(test, &s, &pkt), -EINVAL);
	}
	/* MigReq is not TVer: accepted. */
	{
		struct spec s = { .opcode = 0x04, .paylen = 8,
				  .flags_or = SROCE_BTH_MIG };

		KUNIT_EXPECT_EQ(test, parse(test, &s, &pkt), 0);
	}
}

static void truncated(struct kunit *test)
{
	struct sroce_pkt pkt;
	unsigned int op, cut;

	for (op = 0; op < 256; op++) {
		unsigned int hdr_len = sroce_opcode[op].hdr_len;
		struct spec s = { .opcode = op };

		if (!sroce_opcode[op].mask)
			continue;
		/* Every length short of the headers, down to nothing. */
		for (cut = 1; cut <= hdr_len; cut++) {
			struct sk_buff *skb = make_skb(test, &s, 0);

			skb_trim(skb, hdr_len - cut);
			KUNIT_EXPECT_EQ_MSG(test, sroce_pkt_parse(skb, &pkt),
					    -EINVAL, "%s cut %u",
					    sroce_opcode[op].name, cut);
			kfree_skb(skb);
		}
	}
}

static void bad_pad(struct kunit *test)
{
	/* opcode, paylen, PadCnt, bytes after the payload. */
	static const struct { u8 op; u16 paylen; u8 pad, extra; } bad[] = {
		{ 0x04, 13, 0, 0 },	/* not a multiple of four */
		{ 0x04, 13, 2, 2 },	/* still not */
		{ 0x04, 0, 3, 0 },	/* pad without payload */
		{ 0x04, 0, 3, 1 },
		{ 0x00, 253, 3, 3 },	/* first packet with pad */
		{ 0x01, 253, 3, 3 },	/* middle packet with pad */
		{ 0x07, 1021, 3, 3 },
		{ 0x0e, 1, 3, 3 },
		{ 0x64, 1, 2, 2 },
	};
	struct sroce_pkt pkt;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct spec s = { .opcode = bad[i].op, .paylen = bad[i].paylen,
				  .pad = bad[i].pad, .extra = bad[i].extra };

		KUNIT_EXPECT_EQ_MSG(test, parse(test, &s, &pkt), -EINVAL,
				    "case %u", i);
	}
}

static void payload_where_none_goes(struct kunit *test)
{
	static const u8 ops[] = { 0x0c, 0x11, 0x12, 0x13, 0x14 };
	struct sroce_pkt pkt;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		struct spec s = { .opcode = ops[i], .paylen = 4 };
		struct spec none = { .opcode = ops[i] };

		KUNIT_EXPECT_EQ_MSG(test, parse(test, &s, &pkt), -EINVAL,
				    "%s", sroce_opcode[ops[i]].name);
		KUNIT_EXPECT_EQ(test, parse(test, &none, &pkt), 0);
	}
}

static void not_ip(struct kunit *test)
{
	struct spec s = { .opcode = 0x04, .paylen = 4 };
	struct sk_buff *skb = make_skb(test, &s, 0);
	struct sroce_pkt pkt;

	skb->protocol = htons(ETH_P_ARP);
	KUNIT_EXPECT_EQ(test, sroce_pkt_parse(skb, &pkt), -EINVAL);
	kfree_skb(skb);
}

/*
 * A connected QP's peer is its path's two addresses in its path's family:
 * an IPv6 frame between the IPv4-mapped forms of an IPv4 path's addresses
 * is not from that peer.
 */
static void peer_by_family(struct kunit *test)
{
	struct sroce_av av = { .net_type = RDMA_NETWORK_IPV4 };
	struct sroce_pkt pkt = { .net_type = RDMA_NETWORK_IPV4 };

	ipv6_addr_set_v4mapped(htonl(0x0a4d0001),
			       (struct in6_addr *)av.sgid.raw);
	ipv6_addr_set_v4mapped(htonl(0x0a4d0002),
			       (struct in6_addr *)av.dgid.raw);
	pkt.sgid = av.dgid;
	pkt.dgid = av.sgid;
	KUNIT_EXPECT_TRUE(test, sroce_pkt_from_peer(&pkt, &av));
	pkt.net_type = RDMA_NETWORK_IPV6;
	KUNIT_EXPECT_FALSE(test, sroce_pkt_from_peer(&pkt, &av));
	pkt.net_type = RDMA_NETWORK_IPV4;
	pkt.sgid = av.sgid;
	KUNIT_EXPECT_FALSE(test, sroce_pkt_from_peer(&pkt, &av));
	pkt.sgid = av.dgid;
	pkt.dgid = av.dgid;
	KUNIT_EXPECT_FALSE(test, sroce_pkt_from_peer(&pkt, &av));
}

static struct kunit_case pkt_cases[] = {
	KUNIT_CASE(round_trip_every_opcode),
	KUNIT_CASE(nonlinear_headers),
	KUNIT_CASE(xrceth_srqn),
	KUNIT_CASE(unknown_opcodes),
	KUNIT_CASE(cnp),
	KUNIT_CASE(transport_version),
	KUNIT_CASE(truncated),
	KUNIT_CASE(bad_pad),
	KUNIT_CASE(payload_where_none_goes),
	KUNIT_CASE(not_ip),
	KUNIT_CASE(peer_by_family),
	{}
};

static struct kunit_suite pkt_suite = {
	.name = "sroce-pkt",
	.test_cases = pkt_cases,
};

kunit_test_suite(pkt_suite);
