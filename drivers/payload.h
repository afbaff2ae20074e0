/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_PAYLOAD_H
#define SROCE_PAYLOAD_H

#include <linux/skbuff.h>
#include <linux/types.h>
#include <rdma/sroce-abi.h>

struct sroce_dev;
struct sroce_fault;
struct sroce_mr;
struct ib_pd;

/* Below this, copying a payload costs less than attaching its pages. */
#define SROCE_ZCOPY_MIN		256

bool sroce_payload_zcopy(const struct sroce_dev *sdev, const u8 *dmac,
			 u32 len);
int sroce_payload_mr(struct sk_buff *skb, u8 *dst, const struct sroce_mr *mr,
		     u64 va, u32 len);
int sroce_payload_gather(struct sroce_dev *sdev, const struct ib_pd *pd,
			 struct sroce_fault *fault, struct sk_buff *skb, u8 *dst,
			 const struct sroce_sge *sge, u32 nsge, u32 off,
			 u32 len);
int sroce_payload_scatter(struct sroce_dev *sdev, const struct ib_pd *pd,
			  struct sroce_fault *fault,
			  const struct sroce_sge *sge, u32 nsge, u32 off,
			  const struct sk_buff *skb, int skb_off, u32 len);
int sroce_payload_scatter_buf(struct sroce_dev *sdev, const struct ib_pd *pd,
			      struct sroce_fault *fault,
			      const struct sroce_sge *sge, u32 nsge,
			      const void *buf, u32 len);
int sroce_sge_check(struct sroce_dev *sdev, const struct ib_pd *pd,
		    const struct sroce_sge *sge, u32 nsge, u32 access);

#endif /* SROCE_PAYLOAD_H */
