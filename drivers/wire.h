/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RoCEv2 wire format (IBTA vol. 1 ch. 9 and Annex A17): the single
 * home of every on-the-wire size and layout sroce uses.
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include <linux/ipv6.h>
#include <linux/udp.h>

/* IANA-assigned UDP destination port of RoCEv2 (A17.2.2). */
#define SROCE_UDP_PORT		4791

/* Base and extended transport header sizes, in bytes (IBTA 9.2, 9.3). */
#define SROCE_BTH_BYTES		12
#define SROCE_RETH_BYTES	16
#define SROCE_AETH_BYTES	4
#define SROCE_ATOMICETH_BYTES	28
#define SROCE_ATOMICACKETH_BYTES 8
#define SROCE_IMMDT_BYTES	4
#define SROCE_IETH_BYTES	4
#define SROCE_DETH_BYTES	8
#define SROCE_ICRC_BYTES	4

/*
 * The most header bytes a payload-carrying packet can need: an IPv6 network
 * header (the larger of the two RoCEv2 allows), UDP, BTH, the largest
 * extended-header combination that still carries payload (RETH + ImmDt,
 * RDMA WRITE Only with Immediate) and the invariant CRC. The link MTU minus
 * this is the room left for payload, which bounds the IB path MTU.
 */
#define SROCE_MAX_OVERHEAD	(sizeof(struct ipv6hdr) + sizeof(struct udphdr) + \
				 SROCE_BTH_BYTES + SROCE_RETH_BYTES +	   \
				 SROCE_IMMDT_BYTES + SROCE_ICRC_BYTES)

#endif /* SROCE_WIRE_H */
