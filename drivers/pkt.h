/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Packets: the per-opcode table that says what an opcode carries, and a
 * received or built packet's parsed view. Builders and parsers both use
 * the table, so the two cannot disagree.
 */
#ifndef SROCE_PKT_H
#define SROCE_PKT_H

#include <linux/bits.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "wire.h"

/* What follows the BTH, in wire order. */
#define SROCE_HAS_DETH		BIT(0)
#define SROCE_HAS_RETH		BIT(1)
#define SROCE_HAS_ATOMICETH	BIT(2)
#define SROCE_HAS_AETH		BIT(3)
#define SROCE_HAS_ATOMICACKETH	BIT(4)
#define SROCE_HAS_IMMDT		BIT(5)
#define SROCE_HAS_IETH		BIT(6)
#define SROCE_HAS_PAYLOAD	BIT(7)

/* Where the packet sits in its message. ONLY is FIRST | LAST. */
#define SROCE_FIRST		BIT(8)
#define SROCE_MIDDLE		BIT(9)
#define SROCE_LAST		BIT(10)
#define SROCE_ONLY		(SROCE_FIRST | SROCE_LAST)

/* Which operation the message is. */
#define SROCE_SEND		BIT(11)
#define SROCE_WRITE		BIT(12)
#define SROCE_READ		BIT(13)	/* read request or read response */
#define SROCE_ATOMIC		BIT(14)	/* atomic request or atomic ack */
#define SROCE_ACK		BIT(15)	/* ACK/NAK: AETH and nothing else */

/* Which way it goes: requester to responder, or back. */
#define SROCE_REQUEST		BIT(16)
#define SROCE_RESPONSE		BIT(17)

/* Which QP types may send it. */
#define SROCE_QPT_RC		BIT(18)
#define SROCE_QPT_UC		BIT(19)
#define SROCE_QPT_UD		BIT(20)

/**
 * struct sroce_opcode_info - what an opcode means
 * @name: the spec's name, for traces and test output
 * @mask: SROCE_HAS_*, position, operation, direction and QP-type bits;
 *	  0 for an opcode sroce neither sends nor accepts
 * @hdr_len: bytes from the start of the BTH to the payload
 */
struct sroce_opcode_info {
	const char *name;
	u32 mask;
	u8 hdr_len;
};

extern const struct sroce_opcode_info sroce_opcode[256];

/* Offset from the start of the BTH of the extended header @has, or 0. */
unsigned int sroce_hdr_offset(u8 opcode, u32 has);

/* The SROCE_QPT_* bit of an IB QP type, 0 for types sroce does not run. */
u32 sroce_qpt_bit(enum ib_qp_type type);

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
 * @sgid: the sender's GID (an IPv4-mapped address for IPv4)
 * @dgid: the GID the packet was sent to
 * @net_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @smac: the sender's MAC (receive only)
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
	union ib_gid sgid;
	union ib_gid dgid;
	enum rdma_network_type net_type;
	u8 smac[6];
};

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
void sroce_bth_init(struct sroce_bth *bth, u8 opcode, bool se, u8 pad,
		    u16 pkey, u32 qpn, u32 psn, bool ack_req);

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
