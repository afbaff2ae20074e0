/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include <linux/skbuff.h>
#include <linux/types.h>

/*
 * The CRC32 of eight bytes of ones (the LRH an InfiniBand packet would
 * have, all of it variant) from the usual all-ones start: where every
 * RoCEv2 ICRC begins (A17.3.3).
 */
#define SROCE_ICRC_SEED	0xdebb20e3

struct crypto_shash;

__le32 sroce_icrc(struct sk_buff *skb, unsigned int len);
__le32 sroce_icrc_rxe_flush(struct sk_buff *skb, unsigned int len);
void sroce_icrc_init(void);
void sroce_icrc_exit(void);

/* Both implementations, whatever the module chose: for the KUnit suite. */
__le32 sroce_icrc_with(struct sk_buff *skb, unsigned int len,
		       struct crypto_shash *tfm);
struct crypto_shash *sroce_icrc_tfm_alloc(void);

#endif /* SROCE_ICRC_H */
