/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_MR_H
#define SROCE_MR_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "odp.h"

struct sroce_dev;
struct sroce_odp;

/*
 * A key is (24-bit index << 8) | 8-bit variant. The index names a slot in
 * the device's table, never 0 so that no key is 0; the variant comes from a
 * per-device counter, so a key that is reused for a new MR differs from the
 * old one unless both the index and the counter have gone round.
 */
/*
 * The right to be the target of a FLUSH for global visibility, of an MR
 * and of a QP: IB_UVERBS_ACCESS_FLUSH_GLOBAL of the uverbs ABI since 6.2,
 * spelt out for 6.1's headers (whose core refuses it in a registration).
 * Persistence is not offered: no memory sroce registers is pmem it could
 * make persistent.
 */
#define SROCE_ACCESS_FLUSH_GLOBAL	BIT(8)

/*
 * The right to a FLUSH for persistence (IB_UVERBS_ACCESS_FLUSH_PERSISTENT):
 * never an MR's here. A QP may hold it, meaning nothing: the core's CM
 * grants a connection both flush rights whenever the device offers either
 * (6.2 on), and its modify_qp must not fail for that.
 */
#define SROCE_ACCESS_FLUSH_PERSISTENT	BIT(9)

/* The rights sroce implements; local read is implied by any MR. */
#define SROCE_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | SROCE_ACCESS_FLUSH_GLOBAL)

#define SROCE_KEY_VARIANT_BITS	8
#define SROCE_KEY_INDEX_MAX	(BIT(32 - SROCE_KEY_VARIANT_BITS) - 1)

static inline u32 sroce_key_make(u32 index, u8 variant)
{
	return index << SROCE_KEY_VARIANT_BITS | variant;
}

static inline u32 sroce_key_index(u32 key)
{
	return key >> SROCE_KEY_VARIANT_BITS;
}

static inline u8 sroce_key_variant(u32 key)
{
	return key & (BIT(SROCE_KEY_VARIANT_BITS) - 1);
}

/**
 * struct sroce_mr_table - a device's memory regions, by key index
 * @xa: index -> struct sroce_mr; readers look up under RCU
 * @next: where the cyclic allocation of indices goes on from
 * @count: MRs registered, bounded by SROCE_MAX_MR
 * @variant: source of the keys' low 8 bits
 */
struct sroce_mr_table {
	struct xarray xa;
	u32 next;
	atomic_t count;
	atomic_t variant;
};

/**
 * enum sroce_mr_type - what memory an MR maps
 * @SROCE_MR_DMA: every kernel virtual address (ib_alloc_pd()'s MR)
 * @SROCE_MR_USER: a process's pages, pinned at registration
 * @SROCE_MR_FAST: a kernel consumer's pages, given by map_mr_sg() and
 *		   made valid by a REG_MR work request, until invalidated
 * @SROCE_MR_MW: a memory window (mw.c): a key for part of a user MR,
 *		 valid between a bind and its invalidation; remote accesses
 *		 only, carried out on the MR it is bound to
 * @SROCE_MR_ODP: a process's pages, not pinned: listed when the data path
 *		  asks for them, taken away when the process's mapping
 *		  changes (odp.c)
 */
enum sroce_mr_type {
	SROCE_MR_DMA,
	SROCE_MR_USER,
	SROCE_MR_FAST,
	SROCE_MR_MW,
	SROCE_MR_ODP,
};

/**
 * struct sroce_mr - a memory region
 * @ibmr: the core's object; lkey and rkey are both @key
 * @pd: the PD the MR was registered in, set before the key is published
 * @type: what it maps
 * @valid: may be used; a fast-registration MR only between its REG_MR
 *	   and its invalidation
 * @max_pages: the most pages map_mr_sg() may give a fast-registration MR
 * @umem: the pinned user pages of a user MR
 * @iova: the address the MR's first byte has on the wire and in SGEs
 * @length: bytes covered from @iova
 * @access: the IB_ACCESS_* bits granted (local read is always allowed)
 * @key: the lkey and rkey
 * @pages: the pinned pages of @umem, in order, so that an address turns
 *	   into a page by an index instead of a walk of the umem's table;
 *	   for a fast-registration MR, the pages map_mr_sg() gave; for an
 *	   ODP MR, the pages faulted in so far, NULL for the others
 * @npages: entries in @pages
 * @page_off: where @iova sits from the start of @pages[0]
 * @odp: what an ODP MR has beyond a pinned one (odp.c); its @pages are
 *	 NULL for an implicit MR, whose pages are found by sroce_odp_page()
 * @borrowed: @umem and @pages belong to another MR (re-registration
 *	      moved them to the MR that replaced this one): not freed with it
 * @nr_mw: memory windows bound to this MR, which may not be deregistered
 *	   or re-registered while there are any; -1 once deregistration (or
 *	   a re-registration replacing it) has begun, so that no bind can
 *	   race with it
 * @mw_lock: a window's binding (@valid, @parent, @mw_qp, @iova, @length,
 *	     @access) changes and is read as one under it
 * @mw_type: a window's IB_MW_TYPE_1 or IB_MW_TYPE_2
 * @mw_qp: the serial (struct sroce_qp) of the QP a bound type 2 window
 *	   is bound to: the QP itself, not its number, which a QP made
 *	   after its destruction may get
 * @parent: the MR a window is bound to; while it is, the MR's @nr_mw
 *	    keeps it registered
 * @busy: data-path users between sroce_mr_enter() and sroce_mr_leave()
 *	  of a fast-registration or ODP MR, whose invalidation waits for
 *	  them
 * @ref: the table's reference plus one per sroce_mr_get() caller
 * @done: completed when @ref drops to zero, which deregistration awaits
 * @rcu: frees the MR after lookups that may still see it have finished
 */
struct sroce_mr {
	struct ib_mr ibmr;
	struct ib_pd *pd;
	enum sroce_mr_type type;
	bool valid;
	u32 max_pages;
	struct ib_umem *umem;
	u64 iova;
	u64 length;
	u32 access;
	u32 key;
	struct page **pages;
	unsigned long npages;
	unsigned int page_off;
	struct sroce_odp *odp;
	bool borrowed;
	atomic_t nr_mw;
	spinlock_t mw_lock;	/* a window's binding */
	enum ib_mw_type mw_type;
	u64 mw_qp;
	struct sroce_mr *parent;
	atomic_t busy;
	refcount_t ref;
	struct completion done;
	struct rcu_head rcu;
};

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

/* A DMA MR's "addresses" are kernel virtual addresses, used as they are. */
static inline bool sroce_mr_is_dma(const struct sroce_mr *mr)
{
	return mr->type == SROCE_MR_DMA;
}

void sroce_mr_table_init(struct sroce_mr_table *t);
int sroce_mr_table_add(struct sroce_mr_table *t, struct sroce_mr *mr);
void sroce_mr_table_del(struct sroce_mr_table *t, struct sroce_mr *mr);
int sroce_mr_table_replace(struct sroce_mr_table *t, struct sroce_mr *old,
			   struct sroce_mr *mr);
struct sroce_mr *sroce_mr_lookup(struct sroce_mr_table *t, u32 key);

struct sroce_mr *sroce_mr_get_index(struct sroce_mr_table *t, u32 key);
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
void sroce_mr_put(struct sroce_mr *mr);
/**
 * sroce_mr_present() - may the pages of a range be used now?
 * @mr: an MR sroce_mr_check() accepted the range for, entered
 * @iova: first byte
 * @length: bytes
 *
 * Always for every MR but an ODP one, whose pages come and go (odp.c).
 *
 * Context: any; between sroce_mr_enter() and sroce_mr_leave().
 * Return: 0, or -EAGAIN when a page must be faulted in first.
 */
static inline int sroce_mr_present(const struct sroce_mr *mr, u64 iova,
				   u64 length)
{
	if (mr->type != SROCE_MR_ODP || sroce_odp_present(mr, iova, length))
		return 0;
	return -EAGAIN;
}

void sroce_mr_enter(struct sroce_mr *mr);
void sroce_mr_leave(struct sroce_mr *mr);
void sroce_mr_wait_idle(struct sroce_mr *mr);
int sroce_mr_check(const struct sroce_mr *mr, const struct ib_pd *pd,
		   u64 iova, u64 length, u32 access);
int sroce_mr_check_access_flags(int access);
int sroce_mr_check_rereg(int flags, u64 start, u64 length, u64 iova,
			 int access);
bool sroce_mr_keeps_pages(bool umem_writable, int access);
int sroce_mr_fast_reg(struct sroce_dev *sdev, const struct ib_pd *pd, u32 key,
		      int access);
int sroce_mr_table_invalidate(struct sroce_mr_table *t, const struct ib_pd *pd,
			      u32 key, const struct ib_qp *rqp);
int sroce_mr_invalidate(struct sroce_dev *sdev, const struct ib_pd *pd,
			u32 key, const struct ib_qp *rqp);

struct page *sroce_mr_page(const struct sroce_mr *mr, u64 iova,
			   unsigned int *off);
bool sroce_mr_aligned(const struct sroce_mr *mr, u64 iova, u32 align);
void sroce_mr_copy_from(const struct sroce_mr *mr, u64 iova, void *dst,
			u32 len);
void sroce_mr_copy_to(const struct sroce_mr *mr, u64 iova, const void *src,
		      u32 len);
int sroce_mr_copy_from_skb(const struct sroce_mr *mr, u64 iova,
			   const struct sk_buff *skb, int offset, u32 len);

extern const struct ib_device_ops sroce_mr_ops;

#endif /* SROCE_MR_H */
