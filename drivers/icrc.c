// SPDX-License-Identifier: GPL-2.0
/*
 * The invariant CRC (IBTA vol. 1 A17.3.3): a CRC32 over the parts of a
 * RoCEv2 packet no router may change, so that it protects the packet end
 * to end. Fields routers rewrite (TTL, TOS, traffic class, flow label,
 * checksums) and the BTH's reserved byte count as all ones.
 *
 * Two ways to compute the same CRC, chosen once at load: crc32_le, which
 * on x86 in 6.1 and 6.12 is a slice-by-8 table (~0.5 ns/B), and the crypto
 * API's "crc32", which there is crc32-pclmul (~0.07 ns/B) when the CPU has
 * PCLMULQDQ. docs/BENCH.md has the figures.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/udp.h>

#include "icrc.h"
#include "wire.h"

/* The largest IP header (IPv4 with options), UDP and the BTH. */
#define SROCE_ICRC_HDR_MAX	(60 + sizeof(struct udphdr) + SROCE_BTH_BYTES)

/*
 * Packets shorter than this, from the BTH on, go to crc32_le even when
 * the crypto API is faster: crc32-pclmul itself hands blocks under 79
 * bytes to crc32_le, and on a few hundred bytes its gain does not pay for
 * the indirect calls and kernel_fpu_begin() (docs/BENCH.md).
 */
#define SROCE_ICRC_CRYPTO_MIN	256

/* Long enough for crc32-pclmul's folding loop, not only its tail. */
#define SROCE_ICRC_CHECK_BYTES	160

static char *icrc = "auto";
module_param(icrc, charp, 0444);
MODULE_PARM_DESC(icrc,
		 "ICRC implementation: auto (default: the crypto API's crc32 when it is accelerated), crc32_le, or crypto (the crypto API's crc32 whatever it is)");

/* The crypto API's crc32, keyed with the ICRC seed; NULL: crc32_le. */
static struct crypto_shash *sroce_icrc_tfm;

/* Where the CRC of a packet is accumulated, by one or the other. */
struct sroce_icrc_acc {
	struct shash_desc *desc;	/* NULL: crc32_le into @crc */
	u32 crc;
	int err;
};

static void sroce_icrc_add(struct sroce_icrc_acc *acc, const u8 *p,
			   unsigned int len)
{
	if (!acc->desc)
		acc->crc = crc32_le(acc->crc, p, len);
	else if (!acc->err)
		acc->err = crypto_shash_update(acc->desc, p, len);
}

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

/* Continue @acc over @len bytes at @off of @skb, linear or not. */
static void sroce_icrc_data(struct sk_buff *skb, unsigned int off,
			    unsigned int len, struct sroce_icrc_acc *acc)
{
	struct skb_seq_state st;
	unsigned int done = 0;
	unsigned int n;
	const u8 *p;

	skb_prepare_seq_read(skb, off, off + len, &st);
	/* A block may run past the end asked for: stop there. */
	while (done < len && (n = skb_seq_read(done, &p, &st)) != 0) {
		n = min(n, len - done);
		sroce_icrc_add(acc, p, n);
		done += n;
	}
	if (done == len)
		skb_seq_read(done, &p, &st);	/* unmaps what is mapped */
	else
		skb_abort_seq_read(&st);
}

/*
 * The CRC of the packet, not yet inverted, into @acc: the masked headers,
 * then what follows the BTH.
 */
static void sroce_icrc_packet(struct sk_buff *skb, unsigned int len,
			      struct sroce_icrc_acc *acc)
{
	unsigned int bth = skb_transport_offset(skb) + sizeof(struct udphdr);
	u8 buf[SROCE_ICRC_HDR_MAX];

	sroce_icrc_add(acc, buf, sroce_icrc_hdrs(skb, buf, sizeof(buf)));
	sroce_icrc_data(skb, bth + SROCE_BTH_BYTES, len - SROCE_BTH_BYTES,
			acc);
}

static __le32 sroce_icrc_lib(struct sk_buff *skb, unsigned int len)
{
	struct sroce_icrc_acc acc = { .crc = SROCE_ICRC_SEED };

	sroce_icrc_packet(skb, len, &acc);
	return cpu_to_le32(~acc.crc);
}

/*
 * The descriptor is on the stack, and nothing here sleeps: safe in
 * softirq. The tfm's key is the seed, so crypto_shash_init() starts there;
 * crc32's digest is the CRC, little-endian, not inverted.
 */
static __le32 sroce_icrc_crypto(struct sk_buff *skb, unsigned int len,
				struct crypto_shash *tfm)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	struct sroce_icrc_acc acc = { .desc = desc };
	__le32 crc;

	desc->tfm = tfm;
	acc.err = crypto_shash_init(desc);
	sroce_icrc_packet(skb, len, &acc);
	if (!acc.err)
		acc.err = crypto_shash_final(desc, (u8 *)&crc);
	/* Not shash_desc_zero(): a CRC's state is no secret. */
	/* crc32 has no way to fail once keyed; should it, be right anyway. */
	if (WARN_ON_ONCE(acc.err))
		return sroce_icrc_lib(skb, len);
	return ~crc;
}

/**
 * sroce_icrc_with() - the invariant CRC, by a given implementation
 * @skb: the packet, as for sroce_icrc()
 * @len: as for sroce_icrc()
 * @tfm: from sroce_icrc_tfm_alloc(), or NULL for crc32_le
 *
 * For the KUnit suite, which tests both implementations whatever the
 * module chose; everything else calls sroce_icrc().
 *
 * Return: the ICRC as it goes on the wire.
 */
__le32 sroce_icrc_with(struct sk_buff *skb, unsigned int len,
		       struct crypto_shash *tfm)
{
	return tfm ? sroce_icrc_crypto(skb, len, tfm) : sroce_icrc_lib(skb, len);
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
	if (sroce_icrc_tfm && len >= SROCE_ICRC_CRYPTO_MIN)
		return sroce_icrc_crypto(skb, len, sroce_icrc_tfm);
	return sroce_icrc_lib(skb, len);
}

/**
 * sroce_icrc_rxe_flush() - a FLUSH's ICRC as rdma_rxe computes it
 * @skb: the packet, as for sroce_icrc()
 * @len: as for sroce_icrc()
 *
 * rdma_rxe's opcode table (6.2 on; 6.12 still) gives FLUSH no payload
 * offset, so its CRC runs over the masked headers as it should, and then
 * again over the whole packet from the BTH, unmasked, as if that were the
 * payload (docs/INTEROP.md). Only a receiver needs it: rare, so crc32_le.
 *
 * Return: that ICRC, as it comes on the wire.
 */
__le32 sroce_icrc_rxe_flush(struct sk_buff *skb, unsigned int len)
{
	unsigned int bth = skb_transport_offset(skb) + sizeof(struct udphdr);
	struct sroce_icrc_acc acc = { .crc = SROCE_ICRC_SEED };

	sroce_icrc_packet(skb, len, &acc);
	sroce_icrc_data(skb, bth, len, &acc);
	return cpu_to_le32(~acc.crc);
}

/*
 * Does @tfm compute crc32_le from the ICRC seed? Over a block long enough,
 * and misaligned enough, for an accelerated driver's own path, not its
 * fallback to crc32_le.
 */
static bool sroce_icrc_tfm_ok(struct crypto_shash *tfm)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u8 buf[SROCE_ICRC_CHECK_BYTES + 1];
	__le32 out;
	unsigned int i;
	int err;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i * 37 + 11;
	desc->tfm = tfm;
	err = crypto_shash_digest(desc, buf + 1, sizeof(buf) - 1, (u8 *)&out);
	return !err && crypto_shash_digestsize(tfm) == sizeof(out) &&
	       le32_to_cpu(out) ==
	       crc32_le(SROCE_ICRC_SEED, buf + 1, sizeof(buf) - 1);
}

/**
 * sroce_icrc_tfm_alloc() - the crypto API's crc32, ready for the ICRC
 *
 * Keyed with the ICRC seed, and checked against crc32_le.
 *
 * Return: the tfm, to free with crypto_free_shash(), or an ERR_PTR().
 */
struct crypto_shash *sroce_icrc_tfm_alloc(void)
{
	__le32 seed = cpu_to_le32(SROCE_ICRC_SEED);
	struct crypto_shash *tfm;
	int err;

	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	err = crypto_shash_setkey(tfm, (const u8 *)&seed, sizeof(seed));
	if (!err && !sroce_icrc_tfm_ok(tfm))
		err = -EINVAL;
	if (err) {
		crypto_free_shash(tfm);
		return ERR_PTR(err);
	}
	return tfm;
}

/*
 * crc32-generic is crc32_le behind indirect calls (and, where the arch
 * accelerates crc32_le, so is crc32_le): no gain, only the cost.
 */
static bool sroce_icrc_tfm_fast(struct crypto_shash *tfm)
{
	return strcmp(crypto_shash_driver_name(tfm), "crc32-generic");
}

/**
 * sroce_icrc_init() - choose how the ICRC is computed, once, at load
 *
 * The crypto API's crc32 if it is more than crc32_le under another name
 * (or if the icrc parameter asks for it), else crc32_le, which is also
 * what any failure leaves. Never fails the load.
 */
void sroce_icrc_init(void)
{
	bool forced = !strcmp(icrc, "crypto");
	struct crypto_shash *tfm;

	if (forced || !strcmp(icrc, "auto")) {
		tfm = sroce_icrc_tfm_alloc();
		if (IS_ERR(tfm))
			pr_info("ICRC: no crypto API crc32: %pe\n", tfm);
		else if (forced || sroce_icrc_tfm_fast(tfm))
			sroce_icrc_tfm = tfm;
		else
			crypto_free_shash(tfm);
	} else if (strcmp(icrc, "crc32_le")) {
		pr_warn("ICRC: unknown icrc=%s, using crc32_le\n", icrc);
	}
	if (sroce_icrc_tfm)
		pr_info("ICRC by %s from %u bytes, crc32_le below\n",
			crypto_shash_driver_name(sroce_icrc_tfm),
			SROCE_ICRC_CRYPTO_MIN);
	else
		pr_info("ICRC by crc32_le\n");
}

void sroce_icrc_exit(void)
{
	crypto_free_shash(sroce_icrc_tfm);
	sroce_icrc_tfm = NULL;
}
