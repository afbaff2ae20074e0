/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packets: a received or built packet's parsed view. Builders and parsers
 * both read the opcode table (opcode.h), so the two cannot disagree.
 */
#ifndef SROCE_PKT_H
#define SROCE_PKT_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "opcode.h"
#include "wire.h"

/**
 * struct sroce_pkt - a packet's parsed view
 * @skb: the packet; skb->data is at the BTH, the network header is set;
 *	 received ones end with the pad (the ICRC is checked and trimmed
 *	 off), may be cloned (read them only) and may carry the payload in
 *	 page fragments
 * @bth: the BTH, in the skb's linear data, followed by every extended header
 * @opcode: BTH opcode
 * @mask: sroce_opcode[opcode].mask
 * @qpn: destination QP
 * @psn: packet sequence number (AckReq masked off)
 * @ack_req: AckReq bit
 * @se: solicited event bit
 * @paylen: payload bytes, pad excluded
 * @xrc_srqn: an XRC request's XRC SRQ, from its XRCETH; 0 for the others
 * @sgid: the sender's GID (an IPv4-mapped address for IPv4)
 * @dgid: the GID the packet was sent to
 * @net_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @smac: the sender's MAC (receive only)
 * @vlan_id: the VLAN of the netdev it was received on, or SROCE_NO_VLAN
 *	     (receive only)
 * @ce: the IP header's ECN field says Congestion Experienced
 *
 * A received packet is handed to the transport only after its IP and UDP
 * headers, its BTH and extended headers, its pad and its ICRC have been
 * checked: what this says is what the bytes say.
 */
struct sroce_pkt {
	struct sk_buff *skb;
	struct sroce_bth *bth;
	u8 opcode;
	u32 mask;
	u32 qpn;
	u32 psn;
	bool ack_req;
	bool se;
	u32 paylen;
	u32 xrc_srqn;
	union ib_gid sgid;
	union ib_gid dgid;
	enum rdma_network_type net_type;
	u8 smac[6];
	u16 vlan_id;
	bool ce;
};

#define SROCE_NO_VLAN	0xffff

/* A pointer to extended header @has of a parsed or built packet. */
static inline void *sroce_pkt_hdr(const struct sroce_pkt *pkt, u32 has)
{
	return (u8 *)pkt->bth + sroce_hdr_offset(pkt->opcode, has);
}

/* Offset of the payload from skb->data. */
static inline unsigned int sroce_pkt_payoff(const struct sroce_pkt *pkt)
{
	return sroce_opcode[pkt->opcode].hdr_len;
}

int sroce_pkt_parse(struct sk_buff *skb, struct sroce_pkt *pkt);

/* 24-bit serial arithmetic (9.7.1): is @a before, at or after @b? */
static inline int sroce_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_BTH_PSN_MASK;
}

/*
 * Is @pkt from the peer @av leads to, at the address the path starts from?
 * The GIDs alone do not say: an IPv4 path's GIDs are IPv4-mapped IPv6
 * addresses, which an IPv6 frame can carry too.
 */
static inline bool sroce_pkt_from_peer(const struct sroce_pkt *pkt,
				       const struct sroce_av *av)
{
	return pkt->net_type == av->net_type &&
	       !memcmp(&pkt->sgid, &av->dgid, sizeof(pkt->sgid)) &&
	       !memcmp(&pkt->dgid, &av->sgid, sizeof(pkt->dgid));
}

#endif /* SROCE_PKT_H */
