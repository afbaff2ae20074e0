// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the ICRC against frames rdma_rxe put on the wire (icrc_vectors.h),
 * which fields it covers and which it masks, and nonlinear packets.
 */
#include <kunit/test.h>
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <asm/unaligned.h>

#include "icrc.h"
#include "icrc_vectors.h"
#include "pkt.h"
#include "wire.h"

#define MAX_FRAME	2048

/* A captured frame as it was on the wire, put back together. */
struct rxe_frame {
	const char *what;
	u8 *frame;
	unsigned int len;
	u8 opcode;
	u8 pad;
};

#define NR_FRAMES	ARRAY_SIZE(sroce_icrc_vectors)

/*
 * icrc_vectors.h keeps each frame as its head, a run of one fill byte and
 * the ICRC: lay them out again, with the pad (zeros) in between.
 */
static void rebuild(const struct sroce_icrc_vector *v, struct rxe_frame *f)
{
	u8 *p = f->frame;

	memcpy(p, v->head, v->head_len);
	p += v->head_len;
	memset(p, v->fill, v->fill_len);
	p += v->fill_len;
	memset(p, 0, v->pad);
	p += v->pad;
	put_unaligned_le32(v->icrc, p);
}

/*
 * The two ways sroce computes the ICRC; the cases that compute one run
 * once with each, whichever the module chose at load.
 */
struct icrc_impl {
	const char *name;
	bool crypto;
};

static const struct icrc_impl icrc_impls[] = {
	{ "crc32_le", false },
	{ "crypto API crc32", true },
};

static void icrc_impl_desc(const struct icrc_impl *impl, char *desc)
{
	strscpy(desc, impl->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(icrc_impl, icrc_impls, icrc_impl_desc);

struct icrc_test {
	struct rxe_frame *frames;
	struct crypto_shash *tfm;	/* NULL: crc32_le */
};

static int icrc_test_frames(struct kunit *test, struct icrc_test *t)
{
	struct rxe_frame *f = kunit_kcalloc(test, NR_FRAMES, sizeof(*f),
					    GFP_KERNEL);
	unsigned int i;

	if (!f)
		return -ENOMEM;
	for (i = 0; i < NR_FRAMES; i++) {
		const struct sroce_icrc_vector *v = &sroce_icrc_vectors[i];

		f[i].what = v->what;
		f[i].opcode = v->opcode;
		f[i].pad = v->pad;
		f[i].len = v->head_len + v->fill_len + v->pad +
			   SROCE_ICRC_BYTES;
		f[i].frame = kunit_kmalloc(test, f[i].len, GFP_KERNEL);
		if (!f[i].frame)
			return -ENOMEM;
		rebuild(v, &f[i]);
	}
	t->frames = f;
	return 0;
}

static int icrc_test_init(struct kunit *test)
{
	const struct icrc_impl *impl = test->param_value;
	struct icrc_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	int err;

	if (!t)
		return -ENOMEM;
	test->priv = t;
	err = icrc_test_frames(test, t);
	if (err || !impl || !impl->crypto)
		return err;
	t->tfm = sroce_icrc_tfm_alloc();
	if (IS_ERR(t->tfm)) {
		err = PTR_ERR(t->tfm);
		t->tfm = NULL;
		kunit_err(test, "no crypto API crc32: %d\n", err);
	}
	return err;
}

static void icrc_test_exit(struct kunit *test)
{
	struct icrc_test *t = test->priv;

	if (t)
		crypto_free_shash(t->tfm);
}

static const struct rxe_frame *frames(struct kunit *test)
{
	return ((struct icrc_test *)test->priv)->frames;
}

/* The ICRC by the implementation the case runs with. */
static __le32 icrc(struct kunit *test, struct sk_buff *skb, unsigned int len)
{
	return sroce_icrc_with(skb, len,
			       ((struct icrc_test *)test->priv)->tfm);
}

static unsigned int iplen_of(const u8 *frame)
{
	return frame[12] == 0x08 && frame[13] == 0x00 ?
		(frame[ETH_HLEN] & 0xf) * 4 : sizeof(struct ipv6hdr);
}

/* Offset of the BTH in an Ethernet frame. */
static unsigned int bth_of(const u8 *frame)
{
	return ETH_HLEN + iplen_of(frame) + sizeof(struct udphdr);
}

/*
 * An skb of a whole frame as the receive path sees it, data at the BTH.
 * The first @linear bytes are in the linear part; the rest, if any, in
 * page fragments of @chunk bytes, each at an odd offset in its own page.
 */
static struct sk_buff *frame_skb(struct kunit *test, const u8 *frame,
				 unsigned int len, unsigned int linear,
				 unsigned int chunk)
{
	unsigned int off = linear, i = 0;
	struct sk_buff *skb;

	linear = min(linear, len);
	skb = alloc_skb(linear, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, frame, linear);
	for (off = linear; off < len; off += chunk, i++) {
		unsigned int n = min(chunk, len - off);
		struct page *page = alloc_page(GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, page);
		KUNIT_ASSERT_LT(test, i, (unsigned int)MAX_SKB_FRAGS);
		KUNIT_ASSERT_LE(test, n + 7, (unsigned int)PAGE_SIZE);
		memcpy(page_address(page) + 7, frame + off, n);
		skb_fill_page_desc(skb, i, page, 7, n);
		skb->len += n;
		skb->data_len += n;
		skb->truesize += PAGE_SIZE;
	}
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, ETH_HLEN);
	skb_set_transport_header(skb, ETH_HLEN + iplen_of(frame));
	skb->protocol = htons(frame[12] << 8 | frame[13]);
	__skb_pull(skb, bth_of(frame));
	return skb;
}

/* The ICRC sroce computes for a whole frame, ICRC included. */
static __le32 icrc_of(struct kunit *test, const u8 *frame, unsigned int len,
		      unsigned int linear, unsigned int chunk)
{
	struct sk_buff *skb = frame_skb(test, frame, len, linear, chunk);
	__le32 crc = icrc(test, skb, skb->len - SROCE_ICRC_BYTES);

	kfree_skb(skb);
	return crc;
}

static __le32 trailer_of(const u8 *frame, unsigned int len)
{
	__le32 icrc;

	memcpy(&icrc, frame + len - SROCE_ICRC_BYTES, sizeof(icrc));
	return icrc;
}

static void seed_is_the_masked_lrh(struct kunit *test)
{
	static const u8 lrh[8] = { 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff };

	KUNIT_EXPECT_EQ(test, crc32_le(~0U, lrh, sizeof(lrh)),
			(u32)SROCE_ICRC_SEED);
}

/*
 * The frames put back together are as long as their IP and UDP headers
 * say: a head, fill or pad of the wrong length in icrc_vectors.h shows
 * here by name, not only as an ICRC mismatch.
 */
static void rxe_frames_lengths(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < NR_FRAMES; i++) {
		const struct rxe_frame *v = &frames(test)[i];
		const u8 *ip = v->frame + ETH_HLEN;
		unsigned int iplen = iplen_of(v->frame);
		unsigned int l3 = v->len - ETH_HLEN;

		if (iplen == sizeof(struct ipv6hdr))
			KUNIT_EXPECT_EQ_MSG(test, get_unaligned_be16(ip + 4),
					    l3 - iplen, "%s", v->what);
		else
			KUNIT_EXPECT_EQ_MSG(test, get_unaligned_be16(ip + 2),
					    l3, "%s", v->what);
		KUNIT_EXPECT_EQ_MSG(test, get_unaligned_be16(ip + iplen + 4),
				    l3 - iplen, "%s", v->what);
	}
}

static void rxe_frames(struct kunit *test)
{
	unsigned int i;
	bool v4 = false, v6 = false;

	KUNIT_ASSERT_GT(test, NR_FRAMES, 0UL);
	for (i = 0; i < NR_FRAMES; i++) {
		const struct rxe_frame *v = &frames(test)[i];

		KUNIT_EXPECT_EQ_MSG(test,
				    le32_to_cpu(icrc_of(test, v->frame, v->len,
							v->len, 0)),
				    le32_to_cpu(trailer_of(v->frame, v->len)),
				    "%s", v->what);
		if (iplen_of(v->frame) == sizeof(struct ipv6hdr))
			v6 = true;
		else
			v4 = true;
	}
	KUNIT_EXPECT_TRUE(test, v4 && v6);
}

/* What the receive path does: ICRC off, then the parser. */
static void rxe_frames_parse(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < NR_FRAMES; i++) {
		const struct rxe_frame *v = &frames(test)[i];
		struct sk_buff *skb = frame_skb(test, v->frame, v->len,
						v->len, 0);
		unsigned int hdr_len = sroce_opcode[v->opcode].hdr_len;
		unsigned int total = v->len - bth_of(v->frame) -
				     SROCE_ICRC_BYTES;
		bool is_v6 = iplen_of(v->frame) == sizeof(struct ipv6hdr);
		struct sroce_pkt pkt;

		skb_trim(skb, total);
		KUNIT_ASSERT_EQ_MSG(test, sroce_pkt_parse(skb, &pkt), 0,
				    "%s", v->what);
		KUNIT_EXPECT_EQ(test, pkt.opcode, v->opcode);
		KUNIT_EXPECT_EQ(test, pkt.paylen, total - hdr_len - v->pad);
		KUNIT_EXPECT_EQ(test, pkt.net_type, is_v6 ? RDMA_NETWORK_IPV6 :
							    RDMA_NETWORK_IPV4);
		if (!is_v6)
			KUNIT_EXPECT_EQ(test, memcmp(&pkt.dgid.raw[12],
						     v->frame + ETH_HLEN + 16,
						     4), 0);
		else
			KUNIT_EXPECT_EQ(test, memcmp(pkt.dgid.raw,
						     v->frame + ETH_HLEN + 24,
						     16), 0);
		KUNIT_EXPECT_EQ(test, icrc(test, skb, skb->len),
				trailer_of(v->frame, v->len));
		kfree_skb(skb);
	}
}

/*
 * The extended headers of each opcode sroce runs, in wire order, as the
 * spec lists them (9.2, table 38; 9.3): written out here, not taken from
 * sroce's opcode table, which is what the next cases test.
 */
static const u32 spec_ext[] = {
	[SROCE_OP_SEND_LAST_IMM]	= SROCE_HAS_IMMDT,
	[SROCE_OP_SEND_ONLY_IMM]	= SROCE_HAS_IMMDT,
	[SROCE_OP_WRITE_FIRST]		= SROCE_HAS_RETH,
	[SROCE_OP_WRITE_LAST_IMM]	= SROCE_HAS_IMMDT,
	[SROCE_OP_WRITE_ONLY]		= SROCE_HAS_RETH,
	[SROCE_OP_WRITE_ONLY_IMM]	= SROCE_HAS_RETH | SROCE_HAS_IMMDT,
	[SROCE_OP_READ_REQ]		= SROCE_HAS_RETH,
	[SROCE_OP_READ_RESP_FIRST]	= SROCE_HAS_AETH,
	[SROCE_OP_READ_RESP_LAST]	= SROCE_HAS_AETH,
	[SROCE_OP_READ_RESP_ONLY]	= SROCE_HAS_AETH,
	[SROCE_OP_ACK]			= SROCE_HAS_AETH,
	[SROCE_OP_ATOMIC_ACK]		= SROCE_HAS_AETH |
					  SROCE_HAS_ATOMICACKETH,
	[SROCE_OP_CMP_SWAP]		= SROCE_HAS_ATOMICETH,
	[SROCE_OP_FETCH_ADD]		= SROCE_HAS_ATOMICETH,
	[SROCE_OP_SEND_LAST_INV]	= SROCE_HAS_IETH,
	[SROCE_OP_SEND_ONLY_INV]	= SROCE_HAS_IETH,
};

/* Wire order and size of the extended headers. */
static const struct {
	u32 has;
	unsigned int bytes;
} spec_order[] = {
	{ SROCE_HAS_DETH, SROCE_DETH_BYTES },
	{ SROCE_HAS_RETH, SROCE_RETH_BYTES },
	{ SROCE_HAS_ATOMICETH, SROCE_ATOMICETH_BYTES },
	{ SROCE_HAS_AETH, SROCE_AETH_BYTES },
	{ SROCE_HAS_ATOMICACKETH, SROCE_ATOMICACKETH_BYTES },
	{ SROCE_HAS_IMMDT, SROCE_IMMDT_BYTES },
	{ SROCE_HAS_IETH, SROCE_IETH_BYTES },
};

static u32 spec_headers(u8 opcode)
{
	u8 op = opcode & ~SROCE_TRANSPORT_MASK;

	if ((opcode & SROCE_TRANSPORT_MASK) == SROCE_TRANSPORT_UD)
		return SROCE_HAS_DETH |
		       (opcode == 0x65 ? SROCE_HAS_IMMDT : 0);
	return op < ARRAY_SIZE(spec_ext) ? spec_ext[op] : 0;
}

/* Offset from the BTH of header @has in an @opcode packet, by the spec. */
static unsigned int spec_offset(u8 opcode, u32 has)
{
	unsigned int off = SROCE_BTH_BYTES, i;

	for (i = 0; i < ARRAY_SIZE(spec_order); i++) {
		if (spec_order[i].has == has)
			break;
		if (spec_headers(opcode) & spec_order[i].has)
			off += spec_order[i].bytes;
	}
	return off;
}

/*
 * sroce's builders, fed with the fields of an rxe frame: sroce_bth_init()
 * and the wire structures at sroce's offsets, written the way req.c and
 * resp.c write them. @out gets the headers from the BTH to the payload.
 * Return: their length, by the spec.
 */
static unsigned int rebuild_headers(const u8 *h, u8 opcode, u8 *out)
{
	u32 has = spec_headers(opcode), apsn = get_unaligned_be32(h + 8);
	const u8 *p;
	u8 *q;

	sroce_bth_init((struct sroce_bth *)out, opcode, h[1] & SROCE_BTH_SE,
		       (h[1] & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT,
		       get_unaligned_be16(h + 2), get_unaligned_be32(h + 4),
		       apsn, apsn & SROCE_BTH_ACKREQ);
	if (has & SROCE_HAS_DETH) {
		struct sroce_deth *d = (void *)(out +
			sroce_hdr_offset(opcode, SROCE_HAS_DETH));

		p = h + spec_offset(opcode, SROCE_HAS_DETH);
		d->qkey = cpu_to_be32(get_unaligned_be32(p));
		d->sqp = cpu_to_be32(get_unaligned_be32(p + 4) &
				     SROCE_BTH_QPN_MASK);
	}
	if (has & SROCE_HAS_RETH) {
		struct sroce_reth *r = (void *)(out +
			sroce_hdr_offset(opcode, SROCE_HAS_RETH));

		p = h + spec_offset(opcode, SROCE_HAS_RETH);
		r->va = cpu_to_be64(get_unaligned_be64(p));
		r->rkey = cpu_to_be32(get_unaligned_be32(p + 8));
		r->len = cpu_to_be32(get_unaligned_be32(p + 12));
	}
	if (has & SROCE_HAS_ATOMICETH) {
		struct sroce_atomic_eth *a = (void *)(out +
			sroce_hdr_offset(opcode, SROCE_HAS_ATOMICETH));

		p = h + spec_offset(opcode, SROCE_HAS_ATOMICETH);
		a->va = cpu_to_be64(get_unaligned_be64(p));
		a->rkey = cpu_to_be32(get_unaligned_be32(p + 8));
		a->swap_add = cpu_to_be64(get_unaligned_be64(p + 12));
		a->compare = cpu_to_be64(get_unaligned_be64(p + 20));
	}
	if (has & SROCE_HAS_AETH) {
		struct sroce_aeth *a = (void *)(out +
			sroce_hdr_offset(opcode, SROCE_HAS_AETH));

		p = h + spec_offset(opcode, SROCE_HAS_AETH);
		a->smsn = cpu_to_be32((u32)p[0] << SROCE_AETH_SYN_SHIFT |
				      (get_unaligned_be32(p) &
				       SROCE_AETH_MSN_MASK));
	}
	if (has & SROCE_HAS_ATOMICACKETH) {
		struct sroce_atomic_ack_eth *a = (void *)(out +
			sroce_hdr_offset(opcode, SROCE_HAS_ATOMICACKETH));

		p = h + spec_offset(opcode, SROCE_HAS_ATOMICACKETH);
		a->orig = cpu_to_be64(get_unaligned_be64(p));
	}
	if (has & (SROCE_HAS_IMMDT | SROCE_HAS_IETH)) {
		u32 which = has & (SROCE_HAS_IMMDT | SROCE_HAS_IETH);

		q = out + sroce_hdr_offset(opcode, which);
		p = h + spec_offset(opcode, which);
		put_unaligned_be32(get_unaligned_be32(p), q);
	}
	return spec_offset(opcode, 0);
}

/*
 * What sroce would put on the wire for the fields of each rxe frame is
 * what rxe put there, byte for byte: the BTH (flags, P_Key, QPN, AckReq,
 * PSN, reserved bits zero) and every extended header, at the offsets the
 * spec gives, with the length the opcode table says.
 */
static void rxe_frames_rebuild_headers(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < NR_FRAMES; i++) {
		const struct rxe_frame *v = &frames(test)[i];
		const u8 *h = v->frame + bth_of(v->frame);
		u8 out[64] = { 0 };
		unsigned int len = rebuild_headers(h, v->opcode, out);

		KUNIT_ASSERT_LE(test, len, (unsigned int)sizeof(out));
		KUNIT_EXPECT_EQ_MSG(test, (unsigned int)
				    sroce_opcode[v->opcode].hdr_len, len,
				    "%s", v->what);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(out, h, len), 0,
				    "%s: %*ph", v->what, len, out);
	}
}

/*
 * A vector of every opcode RC, UC and UD traffic uses, over IPv4 at least,
 * so that a regenerated icrc_vectors.h cannot quietly lose one. Not here:
 * UD Send with Immediate and Send with Invalidate, which no program the
 * capture runs makes rxe send.
 */
static void rxe_frames_every_opcode(struct kunit *test)
{
	static const u8 want[] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
		0x14, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
		0x29, 0x2a, 0x2b, 0x64,
	};
	unsigned int i, w;

	for (w = 0; w < ARRAY_SIZE(want); w++) {
		bool found = false;

		for (i = 0; i < NR_FRAMES; i++)
			if (frames(test)[i].opcode == want[w] &&
			    iplen_of(frames(test)[i].frame) ==
			    sizeof(struct iphdr))
				found = true;
		KUNIT_EXPECT_TRUE_MSG(test, found, "no IPv4 rxe frame of opcode %#04x",
				      want[w]);
	}
}

/* The vector to mutate: the longest, so payload and pad are there. */
static const struct rxe_frame *longest(struct kunit *test, bool v6)
{
	const struct rxe_frame *best = NULL;
	unsigned int i;

	for (i = 0; i < NR_FRAMES; i++) {
		const struct rxe_frame *v = &frames(test)[i];

		if ((iplen_of(v->frame) == sizeof(struct ipv6hdr)) != v6)
			continue;
		if (!best || v->len > best->len)
			best = v;
	}
	return best;
}

/* Flip @mask in byte @at of a copy of @v: is the ICRC still the same? */
static bool same_after_flip(struct kunit *test,
			    const struct rxe_frame *v,
			    unsigned int at, u8 mask)
{
	u8 *copy = kunit_kmalloc(test, v->len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, copy);
	KUNIT_ASSERT_LT(test, at, v->len - SROCE_ICRC_BYTES);
	memcpy(copy, v->frame, v->len);
	copy[at] ^= mask;
	return icrc_of(test, copy, v->len, v->len, 0) ==
	       trailer_of(v->frame, v->len);
}

static void variant_fields_ipv4(struct kunit *test)
{
	const struct rxe_frame *v = longest(test, false);
	const unsigned int ip = ETH_HLEN, udp = ip + 20, bth = udp + 8;

	KUNIT_ASSERT_NOT_NULL(test, v);
	/* Masked: TOS, TTL, IP checksum, UDP checksum, BTH resv8a. */
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, ip + 1, 0xfc));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, ip + 8, 0x01));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, ip + 10, 0x80));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, ip + 11, 0x01));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, udp + 6, 0x12));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, bth + 4, 0xff));
	/* The Ethernet header is not covered at all. */
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, 0, 0x02));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, 11, 0x10));
	/* Covered: version, length, ID, flags, protocol, addresses... */
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 0, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 3, 0x04));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 5, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 6, 0x40));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 9, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 12, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 19, 0x80));
	/* ...the UDP ports and length... */
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, udp + 1, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, udp + 3, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, udp + 5, 0x04));
	/* ...the rest of the BTH, and everything after it. */
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, bth + 0, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, bth + 1, 0x40));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, bth + 7, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, bth + 11, 0x80));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, bth + 12, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v,
						 v->len - SROCE_ICRC_BYTES - 1,
						 0x01));
}

static void variant_fields_ipv6(struct kunit *test)
{
	const struct rxe_frame *v = longest(test, true);
	const unsigned int ip = ETH_HLEN, udp = ip + 40, bth = udp + 8;

	KUNIT_ASSERT_NOT_NULL(test, v);
	/* Masked: traffic class, flow label, hop limit, UDP checksum. */
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, ip + 0, 0x0f));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, ip + 1, 0xff));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, ip + 3, 0x01));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, ip + 7, 0x3f));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, udp + 7, 0x01));
	KUNIT_EXPECT_TRUE(test, same_after_flip(test, v, bth + 4, 0x01));
	/* Covered: version, payload length, next header, addresses. */
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 0, 0x10));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 5, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 6, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 8, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, ip + 39, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, udp + 0, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v, bth + 5, 0x01));
	KUNIT_EXPECT_FALSE(test, same_after_flip(test, v,
						 v->len - SROCE_ICRC_BYTES - 2,
						 0x10));
}

/*
 * Page fragments give the ICRC of the same bytes in the linear part, for
 * every frame, with the BTH's end or its first bytes after it in the
 * linear part and the rest cut in pieces from one byte to a page.
 */
static void nonlinear_same_as_linear(struct kunit *test)
{
	static const unsigned int chunks[] = { 1, 3, 7, 64, 509, 4000 };
	unsigned int i, c, extra;

	for (i = 0; i < NR_FRAMES; i++) {
		const struct rxe_frame *v = &frames(test)[i];
		unsigned int bth = bth_of(v->frame);
		__le32 want = trailer_of(v->frame, v->len);

		for (c = 0; c < ARRAY_SIZE(chunks); c++)
			for (extra = 12; extra <= 14; extra++) {
				unsigned int rest = v->len - bth - extra;

				if (DIV_ROUND_UP(rest, chunks[c]) >
				    MAX_SKB_FRAGS)
					continue;
				KUNIT_EXPECT_EQ_MSG(test,
						    icrc_of(test, v->frame,
							    v->len,
							    bth + extra,
							    chunks[c]),
						    want, "%s chunk %u",
						    v->what, chunks[c]);
			}
	}
}

/* Transmit computes with skb->data at the Ethernet header: same answer. */
static void data_anywhere_before_bth(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < NR_FRAMES; i++) {
		const struct rxe_frame *v = &frames(test)[i];
		struct sk_buff *skb = frame_skb(test, v->frame, v->len,
						v->len, 0);
		unsigned int len = skb->len - SROCE_ICRC_BYTES;

		__skb_push(skb, bth_of(v->frame));
		KUNIT_EXPECT_EQ(test, icrc(test, skb, len),
				trailer_of(v->frame, v->len));
		kfree_skb(skb);
	}
}

/*
 * sroce_icrc() itself, with what the module chose at load: crc32_le for
 * short packets, maybe the crypto API for the others.
 */
static void rxe_frames_as_loaded(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < NR_FRAMES; i++) {
		const struct rxe_frame *v = &frames(test)[i];
		struct sk_buff *skb = frame_skb(test, v->frame, v->len,
						v->len, 0);

		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_icrc(skb, skb->len - SROCE_ICRC_BYTES),
				    trailer_of(v->frame, v->len), "%s", v->what);
		kfree_skb(skb);
	}
}

/* Picoseconds per byte of @skb's ICRC over @len bytes, best of five. */
static unsigned int icrc_ps_per_byte(struct kunit *test, struct sk_buff *skb,
				     unsigned int len)
{
	u64 best = U64_MAX, t;
	unsigned int run, i;

	for (run = 0; run < 5; run++) {
		t = ktime_get_ns();
		for (i = 0; i < 200; i++)
			icrc(test, skb, len);
		best = min(best, ktime_get_ns() - t);
	}
	len += bth_of(skb_mac_header(skb)) - ETH_HLEN;
	return div_u64(best * 1000, 200 * len);
}

/*
 * Not a test: how fast each implementation is, in picoseconds per byte
 * the CRC covers (the LRH of ones aside), for sizes from an ACK to a
 * 4 KiB MTU. Under UML the crypto API's crc32 is crc32-generic, so the
 * figures only compare the overheads; docs/BENCH.md has the real ones.
 */
static void icrc_speed(struct kunit *test)
{
	static const unsigned int sizes[] = { 16, 64, 256, 1024, 4096 };
	const struct rxe_frame *v = longest(test, false);
	struct crypto_shash *tfm = ((struct icrc_test *)test->priv)->tfm;
	unsigned int bth, s;
	u8 *frame;

	KUNIT_ASSERT_NOT_NULL(test, v);
	bth = bth_of(v->frame);
	frame = kunit_kzalloc(test, bth + 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, frame);
	memcpy(frame, v->frame, bth + SROCE_BTH_BYTES);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		struct sk_buff *skb = frame_skb(test, frame, bth + sizes[s],
						bth + sizes[s], 0);

		kunit_info(test, "%s: %u bytes from the BTH: %u ps/B\n",
			   tfm ? crypto_shash_driver_name(tfm) : "crc32_le",
			   sizes[s], icrc_ps_per_byte(test, skb, sizes[s]));
		kfree_skb(skb);
	}
}

/*
 * A FLUSH (opcode 0x1c: FETH, RETH) from guest B to a QP of guest A, with
 * the ICRC of the spec; the ICRC rdma_rxe 6.12 computes for the same
 * frame instead, and answered when sent it (test_flush.py sends both).
 */
static const u8 flush_frame[] = {
	0x52, 0x54, 0x00, 0x77, 0x00, 0x01, 0x52, 0x54, 0x00, 0x77, 0x00, 0x02,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0x11, 0x0a, 0x4d, 0x00, 0x02, 0x0a, 0x4d, 0x00, 0x01, 0xc0, 0x00,
	0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00, 0x1c, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x11, 0x80, 0x65, 0x43, 0x21, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x15, 0xe3, 0xf0, 0x40, 0x00, 0x00, 0x03, 0xba, 0x00, 0x00,
	0x01, 0x00, 0x32, 0x0e, 0x20, 0xed,
};

#define RXE_FLUSH_ICRC	0x3d5c4d3e	/* as it comes, little-endian */

/*
 * rxe's FLUSH ICRC is the masked headers, then the whole packet from the
 * BTH again; sroce takes it for a FLUSH only (net.c), and computes it
 * with crc32_le, so whatever the case's implementation.
 */
static void rxe_flush_icrc(struct kunit *test)
{
	unsigned int len = sizeof(flush_frame);
	struct sk_buff *skb = frame_skb(test, flush_frame, len, 60, 11);

	KUNIT_EXPECT_EQ(test, le32_to_cpu(icrc(test, skb, skb->len - 4)),
			le32_to_cpu(trailer_of(flush_frame, len)));
	KUNIT_EXPECT_EQ(test, le32_to_cpu(sroce_icrc_rxe_flush(skb,
							       skb->len - 4)),
			(u32)RXE_FLUSH_ICRC);
	kfree_skb(skb);
}

static struct kunit_case icrc_cases[] = {
	KUNIT_CASE(seed_is_the_masked_lrh),
	KUNIT_CASE(rxe_frames_lengths),
	KUNIT_CASE_PARAM(rxe_frames, icrc_impl_gen_params),
	KUNIT_CASE_PARAM(rxe_frames_parse, icrc_impl_gen_params),
	KUNIT_CASE(rxe_frames_rebuild_headers),
	KUNIT_CASE(rxe_frames_every_opcode),
	KUNIT_CASE_PARAM(variant_fields_ipv4, icrc_impl_gen_params),
	KUNIT_CASE_PARAM(variant_fields_ipv6, icrc_impl_gen_params),
	KUNIT_CASE_PARAM(nonlinear_same_as_linear, icrc_impl_gen_params),
	KUNIT_CASE_PARAM(data_anywhere_before_bth, icrc_impl_gen_params),
	KUNIT_CASE(rxe_frames_as_loaded),
	KUNIT_CASE_PARAM(rxe_flush_icrc, icrc_impl_gen_params),
	KUNIT_CASE_PARAM(icrc_speed, icrc_impl_gen_params),
	{}
};

static struct kunit_suite icrc_suite = {
	.name = "sroce-icrc",
	.init = icrc_test_init,
	.exit = icrc_test_exit,
	.test_cases = icrc_cases,
};

kunit_test_suite(icrc_suite);
