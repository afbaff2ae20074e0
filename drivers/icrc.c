// SPDX-License-Identifier: GPL-2.0
/*
 * The invariant CRC (IBTA vol. 1 A17.3.3): a CRC32 over the parts of a
 * RoCEv2 packet no router may change, so that it protects the packet end
 * to end. Fields routers rewrite (TTL, TOS, traffic class, flow label,
 * checksums) and the BTH's reserved byte count as all ones.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "icrc.h"
#include "wire.h"

/* The largest IP header (IPv4 with options), UDP and the BTH. */
#define SROCE_ICRC_HDR_MAX	(60 + sizeof(struct udphdr) + SROCE_BTH_BYTES)

/*
 * Copy the IP, UDP and base transport headers, which are contiguous, and
 * mask the variant fields to ones. Returns the bytes copied, or 0 when the
 * headers are not those of a RoCEv2 packet (a caller's bug).
 */
static unsigned int sroce_icrc_hdrs(const struct sk_buff *skb, u8 *buf,
				    unsigned int size)
{
	unsigned int iplen = skb_transport_header(skb) - skb_network_header(skb);
	unsigned int len = iplen + sizeof(struct udphdr) + SROCE_BTH_BYTES;
	struct sroce_bth *bth;
	struct ipv6hdr *ip6h;
	struct udphdr *udph;
	struct iphdr *iph;

	if (WARN_ON_ONCE(len > size))
		return 0;
	memcpy(buf, skb_network_header(skb), len);
	if (ip_hdr(skb)->version == 4) {
		iph = (struct iphdr *)buf;
		iph->tos = 0xff;
		iph->ttl = 0xff;
		iph->check = CSUM_MANGLED_0;
	} else {
		ip6h = (struct ipv6hdr *)buf;
		/* Traffic class and flow label: the low 28 bits of word 0. */
		ip6h->priority = 0xf;
		memset(ip6h->flow_lbl, 0xff, sizeof(ip6h->flow_lbl));
		ip6h->hop_limit = 0xff;
	}
	udph = (struct udphdr *)(buf + iplen);
	udph->check = CSUM_MANGLED_0;
	bth = (struct sroce_bth *)(udph + 1);
	bth->qpn |= cpu_to_be32(~SROCE_BTH_QPN_MASK);
	return len;
}

/* Continue @crc over @len bytes at @off of @skb, linear or not. */
static u32 sroce_icrc_data(struct sk_buff *skb, unsigned int off,
			   unsigned int len, u32 crc)
{
	struct skb_seq_state st;
	unsigned int done = 0;
	unsigned int n;
	const u8 *p;

	skb_prepare_seq_read(skb, off, off + len, &st);
	/* A block may run past the end asked for: stop there. */
	while (done < len && (n = skb_seq_read(done, &p, &st)) != 0) {
		n = min(n, len - done);
		crc = crc32_le(crc, p, n);
		done += n;
	}
	if (done == len)
		skb_seq_read(done, &p, &st);	/* unmaps what is mapped */
	else
		skb_abort_seq_read(&st);
	return crc;
}

/**
 * sroce_icrc() - the invariant CRC of a RoCEv2 packet
 * @skb: the packet: network and transport headers set and linear, the
 *	 BTH right after the UDP header and linear too, skb->data anywhere
 *	 up to the BTH
 * @len: bytes from the start of the BTH that the CRC covers: the BTH,
 *	 the extended headers, the payload and the pad; not the ICRC itself
 *
 * The IP and UDP headers are taken as they are, lengths included, so on
 * transmit they must be final, and on receive the ICRC may already have
 * been trimmed off. Page fragments are read in place, never linearised.
 *
 * Return: the ICRC as it goes on the wire.
 */
__le32 sroce_icrc(struct sk_buff *skb, unsigned int len)
{
	unsigned int bth = skb_transport_offset(skb) + sizeof(struct udphdr);
	u8 buf[SROCE_ICRC_HDR_MAX];
	u32 crc = SROCE_ICRC_SEED;

	crc = crc32_le(crc, buf, sroce_icrc_hdrs(skb, buf, sizeof(buf)));
	crc = sroce_icrc_data(skb, bth + SROCE_BTH_BYTES,
			      len - SROCE_BTH_BYTES, crc);
	return cpu_to_le32(~crc);
}
