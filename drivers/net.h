/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The netdev layer: RoCEv2 frames are claimed from the attached netdev
 * before the IP stack sees them and are sent in bursts (burst.h), with no
 * socket anywhere.
 */
#ifndef SROCE_NET_H
#define SROCE_NET_H

#include <linux/skbuff.h>

struct sroce_av;
struct sroce_burst;
struct net_device;
struct sroce_dev;

int sroce_net_attach(struct sroce_dev *sdev);
void sroce_net_detach(struct sroce_dev *sdev);
void sroce_net_attach_upper(struct sroce_dev *sdev, struct net_device *upper);
void sroce_net_detach_upper(struct sroce_dev *sdev, struct net_device *upper);

struct sk_buff *sroce_net_alloc(struct sroce_dev *sdev,
				const struct sroce_av *av,
				unsigned int len, gfp_t gfp);
bool sroce_net_add_frag(struct sk_buff *skb, struct page *page,
			unsigned int off, unsigned int len);
int sroce_net_send(struct sroce_dev *sdev, struct sroce_burst *burst,
		   const struct sroce_av *av, struct sk_buff *skb, u16 sport);

/* A packet on its own: see sroce_net_send(). */
static inline int sroce_net_xmit(struct sroce_dev *sdev,
				 const struct sroce_av *av,
				 struct sk_buff *skb, u16 sport)
{
	return sroce_net_send(sdev, NULL, av, skb, sport);
}

#endif /* SROCE_NET_H */
