/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_ODP_H
#define SROCE_ODP_H

#include <linux/errno.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sroce_mr;

#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)

struct ib_mr *sroce_odp_reg_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access);
bool sroce_odp_present(const struct sroce_mr *mr, u64 iova, u64 length);
struct page *sroce_odp_page(const struct sroce_mr *mr, u64 iova,
			    unsigned int *off);
void sroce_odp_free(struct sroce_mr *mr);
int sroce_odp_fault(struct sroce_mr *mr, u64 iova, u64 length, bool fault);
void sroce_odp_caps(struct ib_device_attr *attr);
int sroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

#else

static inline struct ib_mr *sroce_odp_reg_mr(struct ib_pd *ibpd, u64 start,
					     u64 length, u64 iova, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline bool sroce_odp_present(const struct sroce_mr *mr, u64 iova,
				     u64 length)
{
	return false;
}

static inline struct page *sroce_odp_page(const struct sroce_mr *mr,
					  u64 iova, unsigned int *off)
{
	return NULL;
}

static inline void sroce_odp_free(struct sroce_mr *mr) {}

static inline int sroce_odp_fault(struct sroce_mr *mr, u64 iova, u64 length,
				  bool fault)
{
	return -EOPNOTSUPP;
}

static inline void sroce_odp_caps(struct ib_device_attr *attr) {}

#define sroce_advise_mr NULL

#endif

#endif /* SROCE_ODP_H */
