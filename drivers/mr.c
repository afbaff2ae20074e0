// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: registration, their keys, and the lookup and access
 * check the data path uses to turn a key and an address into memory.
 */
#include <linux/highmem.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "device.h"
#include "limits.h"
#include "mr.h"
#include "mw.h"
#include "odp.h"

void sroce_mr_table_init(struct sroce_mr_table *t)
{
	xa_init_flags(&t->xa, XA_FLAGS_ALLOC1);
}

/**
 * sroce_mr_table_add() - give an MR its key and make it findable
 * @t: the device's table
 * @mr: a filled-in MR, not yet visible to anyone
 *
 * Indices are handed out cyclically, so a freed one is reused only after
 * all the others have been: a stale key keeps failing lookups for as long
 * as possible. The slot is reserved first and the MR stored once its key
 * is set, so a lookup never sees a half-made MR.
 *
 * Context: process; may sleep.
 * Return: 0, -ENOMEM past SROCE_MAX_MR MRs or when out of memory.
 */
int sroce_mr_table_add(struct sroce_mr_table *t, struct sroce_mr *mr)
{
	u32 index;
	int err;

	if (atomic_inc_return(&t->count) > SROCE_MAX_MR) {
		err = -ENOMEM;
		goto err_count;
	}

	err = xa_alloc_cyclic(&t->xa, &index, NULL,
			      XA_LIMIT(1, SROCE_KEY_INDEX_MAX), &t->next,
			      GFP_KERNEL);
	if (err < 0)
		goto err_count;

	mr->key = sroce_key_make(index, atomic_inc_return(&t->variant));
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->done);

	err = xa_err(xa_store(&t->xa, index, mr, GFP_KERNEL));
	if (err) {
		xa_release(&t->xa, index);
		goto err_count;
	}
	return 0;

err_count:
	atomic_dec(&t->count);
	return err;
}

/**
 * sroce_mr_table_del() - make an MR unfindable and wait until it is unused
 * @t: the device's table
 * @mr: an MR sroce_mr_table_add() succeeded on
 *
 * On return no lookup can find @mr and every reference taken by one has
 * been put. The slot is freed only if it still holds @mr: a successor
 * sroce_mr_table_replace() put there keeps it, and the key. Lookups may
 * still be reading the memory under RCU: the caller frees it with
 * kfree_rcu().
 *
 * Context: process; sleeps until in-flight users are done.
 */
void sroce_mr_table_del(struct sroce_mr_table *t, struct sroce_mr *mr)
{
	/* Unless a re-registration put its successor in the slot. */
	xa_cmpxchg(&t->xa, sroce_key_index(mr->key), mr, NULL, 0);
	sroce_mr_put(mr);
	wait_for_completion(&mr->done);
	atomic_dec(&t->count);
}

/**
 * sroce_mr_table_replace() - give a new MR an old one's key, in its place
 * @t: the device's table
 * @old: an MR sroce_mr_table_add() succeeded on
 * @mr: a filled-in MR, not yet visible to anyone
 *
 * One store switches the slot: from then on a lookup of the key finds @mr,
 * whole, and never @old; users that found @old before keep their
 * reference, and sroce_mr_table_del() of @old, which must follow, waits
 * for them without freeing the slot. @mr counts as registered meanwhile,
 * beyond SROCE_MAX_MR if it must: @old gives its count back when deleted.
 *
 * Context: process.
 * Return: 0, or -EINVAL (and a warning) when @old is not in its slot.
 */
int sroce_mr_table_replace(struct sroce_mr_table *t, struct sroce_mr *old,
			   struct sroce_mr *mr)
{
	void *curr;

	mr->key = old->key;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->done);
	atomic_inc(&t->count);

	/* Replaces a present entry: nothing to allocate, nothing to fail. */
	curr = xa_cmpxchg(&t->xa, sroce_key_index(old->key), old, mr,
			  GFP_KERNEL);
	if (WARN_ON_ONCE(curr != old)) {
		atomic_dec(&t->count);
		return -EINVAL;
	}
	return 0;
}

/**
 * sroce_mr_lookup() - the MR a key names, referenced
 * @t: the device's table
 * @key: an lkey or rkey as received; any value
 *
 * Context: any.
 * Return: the MR, to be released with sroce_mr_put(), or NULL when no live
 * MR has exactly this key (never registered, or deregistered).
 */
struct sroce_mr *sroce_mr_lookup(struct sroce_mr_table *t, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&t->xa, sroce_key_index(key));
	if (mr && (READ_ONCE(mr->key) != key ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/* The lookup the data path uses: see sroce_mr_lookup(). */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	return sroce_mr_lookup(&sdev->mrs, key);
}

void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

/**
 * DOC: invalidation waits for the copies it overtakes
 *
 * A Local Invalidate or a received Send with Invalidate of a
 * fast-registration MR is reported to the consumer (its completion, or the
 * receive's) once sroce_mr_invalidate() returns, and from then on the
 * consumer owns the pages again (it unmaps them, hands them to the block
 * layer). A responder or requester on another CPU may have checked the MR
 * just before and still be copying a packet into it: the invalidation must
 * wait for that copy.
 *
 * Every data-path use of an MR's memory is bracketed by sroce_mr_enter()
 * before its sroce_mr_check() and sroce_mr_leave() after its last byte;
 * for a fast-registration MR these count in @busy. The invalidation clears
 * @valid with xchg() (a full barrier) and then waits for @busy to reach
 * zero. This is the store-buffer pattern: a user increments @busy, then
 * (smp_mb__after_atomic()) reads @valid; the invalidation writes @valid,
 * then reads @busy. Either the user sees the MR invalid and copies
 * nothing, or the invalidation sees it and waits for its sroce_mr_leave(),
 * whose release orders the copy before the decrement.
 *
 * The wait spins, because invalidations run where nothing may sleep: a
 * Send with Invalidate in the receive softirq, a Local Invalidate in the
 * requester under the send queue's BH lock. Spinning is bounded because
 * every user holds @busy only in BH-disabled context (asserted), for one
 * packet's copy (an MTU at most) or an 8-byte atomic: it cannot be
 * preempted, nor interrupted by a softirq invalidation on its own CPU, so
 * the invalidation waits only for copies already running on other CPUs.
 * Users that come after the invalidation find @valid false in
 * sroce_mr_check() and leave at once. A dedicated count and not @ref:
 * references are also held in process context (registration, binds,
 * work-request checks), which a softirq spinning on the same CPU would
 * never let finish.
 *
 * A type 2 window's invalidation owes its consumer the same, but the
 * copies through a window run on the MR it is bound to, and a count on
 * that MR would make its invalidation wait for every direct access too,
 * possibly forever. Window users count per CPU instead (see "window users
 * per CPU" in mw.c): a window, and an MR that may carry one (registered
 * with IB_ACCESS_MW_BIND, fixed for its life), enter and leave through
 * sroce_mw_cpu_enter() and sroce_mw_cpu_leave(). A plain user MR, the
 * perftest case, still pays no atomic and no barrier.
 */

/* May a window be bound to this MR, or is it one? Fixed for its life. */
static bool sroce_mr_windowed(const struct sroce_mr *mr)
{
	return mr->type == SROCE_MR_MW ||
	       (mr->type == SROCE_MR_USER && mr->access & IB_ACCESS_MW_BIND);
}

/* Are its users counted in @busy? Fixed for its life. */
static bool sroce_mr_counted(const struct sroce_mr *mr)
{
	return mr->type == SROCE_MR_FAST || mr->type == SROCE_MR_ODP;
}

/**
 * sroce_mr_enter() - start using an MR's memory on the data path
 * @mr: an MR the caller holds a reference to, not yet checked
 *
 * Call before sroce_mr_check() and the copy it allows, and
 * sroce_mr_leave() once the copy is done, with BH disabled throughout.
 *
 * Context: softirq or BH disabled.
 */
void sroce_mr_enter(struct sroce_mr *mr)
{
	if (!sroce_mr_counted(mr)) {
		if (sroce_mr_windowed(mr))
			sroce_mw_cpu_enter();
		return;
	}
	lockdep_assert_in_softirq();
	atomic_inc(&mr->busy);
	/* Pairs with the xchg() of @valid in sroce_mr_invalidate(). */
	smp_mb__after_atomic();
}

/**
 * sroce_mr_leave() - end a use sroce_mr_enter() started
 * @mr: the MR
 *
 * Context: softirq or BH disabled.
 */
void sroce_mr_leave(struct sroce_mr *mr)
{
	if (!sroce_mr_counted(mr)) {
		if (sroce_mr_windowed(mr))
			sroce_mw_cpu_leave();
		return;
	}
	/* The copy is done before an invalidation can see it done. */
	smp_mb__before_atomic();
	atomic_dec(&mr->busy);
}

/*
 * Waits for the users that entered before @valid was cleared (or an ODP
 * MR's pages were taken away).
 */
void sroce_mr_wait_idle(struct sroce_mr *mr)
{
	while (atomic_read_acquire(&mr->busy))
		cpu_relax();
}

/**
 * sroce_mr_check() - may this access go through this MR?
 * @mr: the MR a key named
 * @pd: the PD of the QP making or receiving the access
 * @iova: first byte accessed
 * @length: bytes accessed; 0 is allowed anywhere in or at the end of the MR
 * @access: the IB_ACCESS_* bits the access needs (0 for a local read)
 *
 * A memory window is never used directly: only a responder resolves its
 * key, to the MR it is bound to (sroce_mw_get_mr()).
 *
 * Whether an ODP MR's pages are there is sroce_mr_present()'s to say.
 *
 * Return: 0; -EACCES when @mr is in another PD, lacks a needed right or
 * is a window; -ERANGE when [@iova, @iova + @length) is not all inside @mr.
 */
int sroce_mr_check(const struct sroce_mr *mr, const struct ib_pd *pd,
		   u64 iova, u64 length, u32 access)
{
	if (mr->pd != pd || (access & ~mr->access) || !READ_ONCE(mr->valid) ||
	    mr->type == SROCE_MR_MW)
		return -EACCES;

	/* A DMA MR covers all of memory: only wrapping past the end is out. */
	if (sroce_mr_is_dma(mr))
		return length && iova + (length - 1) < iova ? -ERANGE : 0;

	if (iova < mr->iova || length > mr->length ||
	    iova - mr->iova > mr->length - length)
		return -ERANGE;
	return 0;
}

/**
 * sroce_mr_check_access_flags() - does sroce implement these MR rights?
 * @access: IB_ACCESS_* flags of a registration
 *
 * The core has already refused unknown bits. Bits in the optional range
 * are hints the ABI lets a driver ignore (relaxed ordering is the only one
 * defined, and means nothing to a CPU copy). Anything else sroce does not
 * implement (zero-based or pinned huge-page MRs, the right to a persistent
 * flush since 6.2) is refused the way EFA refuses what its hardware lacks. A
 * process's registration with IB_ACCESS_ON_DEMAND (and IB_ACCESS_HUGETLB
 * with it) goes to odp.c, which checks the rest with this.
 *
 * Return: 0 or -EOPNOTSUPP.
 */
int sroce_mr_check_access_flags(int access)
{
	return access & ~(SROCE_MR_ACCESS | IB_ACCESS_OPTIONAL) ?
	       -EOPNOTSUPP : 0;
}

static struct sroce_mr *sroce_mr_alloc(struct ib_pd *ibpd, int access,
				       enum sroce_mr_type type)
{
	struct sroce_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return NULL;
	mr->pd = ibpd;
	mr->type = type;
	mr->valid = type != SROCE_MR_FAST;
	mr->access = access & SROCE_MR_ACCESS;
	return mr;
}

static void sroce_mr_free(struct sroce_mr *mr)
{
	if (mr->type == SROCE_MR_ODP) {
		sroce_odp_free(mr);
	} else if (!mr->borrowed) {
		kvfree(mr->pages);
		if (mr->umem)
			ib_umem_release(mr->umem);
	}
	kfree_rcu(mr, rcu);
}

/*
 * The MR ib_alloc_pd() makes for kernel consumers: the device does virtual
 * DMA, so "DMA addresses" are kernel virtual addresses and the MR spans
 * them all.
 */
static struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	err = sroce_mr_check_access_flags(access);
	if (err)
		return ERR_PTR(err);

	mr = sroce_mr_alloc(ibpd, access, SROCE_MR_DMA);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	err = sroce_mr_table_add(&sdev->mrs, mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/*
 * The data path turns an address into a page by arithmetic: list the
 * umem's pages once, at registration.
 */
static int sroce_mr_list_pages(struct sroce_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter it;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   SROCE_GFP_OBJ);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (WARN_ON_ONCE(i >= mr->npages))
			return -EFAULT;
		mr->pages[i++] = sg_page_iter_page(&it);
	}
	mr->page_off = ib_umem_offset(umem);
	return i == mr->npages ? 0 : -EFAULT;
}

/**
 * sroce_mr_page() - the page an address of an MR is in
 * @mr: a user, fast-registration or ODP MR (entered, for ODP)
 * @iova: an address sroce_mr_check() accepted for @mr
 * @off: where @iova is in the page
 *
 * Context: any.
 * Return: the page; the bytes from @off to the page's end are the MR's.
 */
struct page *sroce_mr_page(const struct sroce_mr *mr, u64 iova,
			   unsigned int *off)
{
	u64 pos = iova - mr->iova + mr->page_off;

	if (unlikely(!mr->pages))
		return sroce_odp_page(mr, iova, off);
	*off = offset_in_page(pos);
	return mr->pages[pos >> PAGE_SHIFT];
}

/**
 * sroce_mr_aligned() - is an address of an MR aligned where it lies in memory
 * @mr: the MR
 * @iova: an address sroce_mr_check() accepted for @mr
 * @align: a power of two
 *
 * A user MR's iova is the consumer's choice (ibv_reg_mr_iova()): an
 * aligned iova may sit at any offset in its page. What the CPU's atomics
 * need aligned is the memory.
 *
 * Context: any.
 */
bool sroce_mr_aligned(const struct sroce_mr *mr, u64 iova, u32 align)
{
	u64 pos = iova;

	if (!sroce_mr_is_dma(mr))
		pos = iova - mr->iova + mr->page_off;
	return !(pos & (align - 1));
}

/*
 * What to do with one piece of an MR's memory: @n bytes mapped at @mem,
 * @done bytes of the range before them. Returns 0, or an errno that ends
 * the walk.
 */
typedef int (*sroce_mr_chunk_fn)(void *mem, u32 done, u32 n, void *arg);

/*
 * sroce_mr_walk() - visit an MR's range one mapped piece at a time
 *
 * A DMA MR's range is one piece of kernel memory; a user MR's is split at
 * page boundaries, each page mapped only while @fn runs. The walk and
 * each @fn are always inlined: every copy below compiles to its own loop,
 * with no call per piece on the data path.
 */
static __always_inline int sroce_mr_walk(const struct sroce_mr *mr, u64 iova,
					 u32 len, sroce_mr_chunk_fn fn,
					 void *arg)
{
	unsigned int off, n;
	struct page *page;
	u32 done = 0;
	void *va;
	int err;

	if (sroce_mr_is_dma(mr))
		return fn((void *)(uintptr_t)iova, 0, len, arg);
	while (done < len) {
		page = sroce_mr_page(mr, iova + done, &off);
		n = min_t(u32, len - done, PAGE_SIZE - off);
		va = kmap_local_page(page);
		err = fn(va + off, done, n, arg);
		kunmap_local(va);
		if (err)
			return err;
		done += n;
	}
	return 0;
}

static __always_inline int
sroce_mr_chunk_from(void *mem, u32 done, u32 n, void *dst)
{
	memcpy(dst + done, mem, n);
	return 0;
}

/**
 * sroce_mr_copy_from() - copy bytes out of an MR
 * @mr: the MR
 * @iova: first byte, checked with sroce_mr_check()
 * @dst: where the bytes go
 * @len: bytes to copy
 *
 * Context: any.
 */
void sroce_mr_copy_from(const struct sroce_mr *mr, u64 iova, void *dst,
			u32 len)
{
	sroce_mr_walk(mr, iova, len, sroce_mr_chunk_from, dst);
}

/* @src points at the source pointer: the walk's argument is not const. */
static __always_inline int
sroce_mr_chunk_to(void *mem, u32 done, u32 n, void *src)
{
	memcpy(mem, *(const u8 **)src + done, n);
	return 0;
}

/**
 * sroce_mr_copy_to() - copy bytes into an MR
 * @mr: the MR
 * @iova: first byte, checked with sroce_mr_check()
 * @src: the bytes
 * @len: bytes to copy
 *
 * Context: any.
 */
void sroce_mr_copy_to(const struct sroce_mr *mr, u64 iova, const void *src,
		      u32 len)
{
	sroce_mr_walk(mr, iova, len, sroce_mr_chunk_to, &src);
}

/* Where the payload sroce_mr_copy_from_skb() copies is in its packet. */
struct sroce_mr_skb_src {
	const struct sk_buff *skb;
	int offset;
};

static __always_inline int
sroce_mr_chunk_from_skb(void *mem, u32 done, u32 n, void *arg)
{
	const struct sroce_mr_skb_src *src = arg;

	return skb_copy_bits(src->skb, src->offset + done, mem, n);
}

/**
 * sroce_mr_copy_from_skb() - copy received payload into an MR
 * @mr: the MR
 * @iova: first byte written, checked with sroce_mr_check()
 * @skb: the packet
 * @offset: where the bytes are in @skb, from skb->data
 * @len: bytes to copy
 *
 * The one copy on receive: from the packet straight into the pages the
 * application registered.
 *
 * Context: any.
 * Return: 0, or -EFAULT when @skb is shorter than it said.
 */
int sroce_mr_copy_from_skb(const struct sroce_mr *mr, u64 iova,
			   const struct sk_buff *skb, int offset, u32 len)
{
	struct sroce_mr_skb_src src = { .skb = skb, .offset = offset };

	return sroce_mr_walk(mr, iova, len, sroce_mr_chunk_from_skb, &src);
}

/* Refuse what cannot be pinned or addressed before pinning anything. */
static int sroce_mr_check_range(u64 start, u64 length, u64 iova)
{
	u64 end;

	if (!length || length > SROCE_MAX_MR_SIZE)
		return -EINVAL;
	if (check_add_overflow(start, length, &end) ||
	    check_add_overflow(iova, length, &end))
		return -EINVAL;
	return 0;
}

/*
 * A user MR of @ibpd over @umem, mapped at @iova, not yet published. It
 * holds @umem but does not own it until published: on failure, and if it
 * is never published, the caller releases @umem and sroce_mr_unbuild()s it.
 */
static struct sroce_mr *sroce_mr_build_user(struct ib_pd *ibpd, int access,
					    struct ib_umem *umem, u64 iova,
					    u64 length)
{
	struct sroce_mr *mr;
	int err;

	mr = sroce_mr_alloc(ibpd, access, SROCE_MR_USER);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = umem;
	mr->iova = iova;
	mr->length = length;

	err = sroce_mr_list_pages(mr);
	if (err) {
		kvfree(mr->pages);
		kfree(mr);
		return ERR_PTR(err);
	}
	return mr;
}

/* Frees an MR no lookup has ever seen, but not its umem. */
static void sroce_mr_unbuild(struct sroce_mr *mr)
{
	if (!mr->borrowed)
		kvfree(mr->pages);
	kfree(mr);
}

static struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start,
				       u64 length, u64 iova, int access,
				       struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct ib_umem *umem;
	struct sroce_mr *mr;
	int err;

	/* ABI version 1 defines no driver-specific request. */
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EINVAL);

	/* Address 0, length U64_MAX: an implicit ODP MR (odp.c). */
	if (access & IB_ACCESS_ON_DEMAND && !start && length == U64_MAX)
		return sroce_odp_reg_mr(ibpd, start, length, iova, access);
	err = sroce_mr_check_range(start, length, iova);
	if (err)
		return ERR_PTR(err);
	if (access & IB_ACCESS_ON_DEMAND)
		return sroce_odp_reg_mr(ibpd, start, length, iova, access);
	err = sroce_mr_check_access_flags(access);
	if (err)
		return ERR_PTR(err);

	/* Pins the pages, charging them against RLIMIT_MEMLOCK. */
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);

	mr = sroce_mr_build_user(ibpd, access, umem, iova, length);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto err_umem;
	}
	err = sroce_mr_table_add(&sdev->mrs, mr);
	if (err) {
		sroce_mr_unbuild(mr);
		goto err_umem;
	}
	return &mr->ibmr;

err_umem:
	ib_umem_release(umem);
	return ERR_PTR(err);
}

/**
 * sroce_mr_check_rereg() - may a user MR be re-registered with these?
 * @flags: IB_MR_REREG_* bits
 * @start: with IB_MR_REREG_TRANS, the new first byte in the process
 * @length: with IB_MR_REREG_TRANS, the new length
 * @iova: with IB_MR_REREG_TRANS, the address the first byte has in work
 *	  requests
 * @access: with IB_MR_REREG_ACCESS, the new IB_ACCESS_* rights
 *
 * The core checks most of this before the driver is called; the driver
 * checks it again, as it does for a registration, so that no kernel's
 * core and no caller has to be trusted for what the data path relies on.
 * Arguments a flag does not select are ignored, as the ABI says.
 *
 * Return: 0; -EOPNOTSUPP for unknown flags or rights sroce does not
 * implement; -EINVAL for no flags, remote write or atomic rights without
 * local write, or a range that is empty, too large, wraps, or whose offset
 * in its page differs between @start and @iova (the core's errnos).
 */
int sroce_mr_check_rereg(int flags, u64 start, u64 length, u64 iova,
			 int access)
{
	int err;

	if (!flags)
		return -EINVAL;
	if (flags & ~IB_MR_REREG_SUPPORTED)
		return -EOPNOTSUPP;
	if (flags & IB_MR_REREG_ACCESS) {
		err = sroce_mr_check_access_flags(access);
		if (err)
			return err;
		/* What ib_check_mr_access() refuses at registration. */
		if (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC) &&
		    !(access & IB_ACCESS_LOCAL_WRITE))
			return -EINVAL;
	}
	if (flags & IB_MR_REREG_TRANS) {
		err = sroce_mr_check_range(start, length, iova);
		if (err)
			return err;
		if (offset_in_page(start) != offset_in_page(iova))
			return -EINVAL;
	}
	return 0;
}

/**
 * sroce_mr_keeps_pages() - may a re-registration keep the MR's pinned pages?
 * @umem_writable: the pages were pinned for writing
 * @access: the rights the MR is to have
 *
 * Pages pinned for reading only may be the shared zero page or a page
 * still shared copy-on-write with another process: an MR that may write
 * must pin the process's own, writable, pages again.
 */
bool sroce_mr_keeps_pages(bool umem_writable, int access)
{
	return umem_writable || !ib_access_writable(access);
}

/*
 * The MR that takes over from @old, over the same pages, not yet
 * published. The pages stay @old's to free until the rereg succeeds.
 */
static struct sroce_mr *sroce_mr_share_user(struct ib_pd *ibpd, int access,
					    struct sroce_mr *old)
{
	struct sroce_mr *mr;

	mr = sroce_mr_alloc(ibpd, access, SROCE_MR_USER);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = old->umem;
	mr->pages = old->pages;
	mr->npages = old->npages;
	mr->page_off = old->page_off;
	mr->iova = old->iova;
	mr->length = old->length;
	mr->borrowed = true;
	return mr;
}

/**
 * DOC: re-registration makes a new MR
 *
 * ibv_rereg_mr() may change an MR's pages (IB_MR_REREG_TRANS), its PD and
 * its rights. sroce never changes an MR in place: the data path reads an
 * MR's PD, rights and pages without a lock, between a lookup and a put,
 * and sroce_mr_enter() and sroce_mr_leave() must agree on whether it may
 * carry windows. Instead the driver builds a new MR, as a registration
 * does, and returns it: the core swaps it into the MR's handle, answers
 * with its keys, and destroys the old MR through sroce_dereg_mr(), which
 * waits for the accesses that found the old MR before it was replaced.
 * When ibv_rereg_mr() returns, no access runs under the old PD, rights or
 * pages.
 *
 * With IB_MR_REREG_TRANS the new MR has new pages and a new key: a work
 * request or a peer still using the old key fails as after a
 * deregistration, and cannot reach the new pages by mistake. A PD or
 * rights change keeps the key, as hardware that rewrites its MR in place
 * does and as applications (rdma-core's tests among them) expect: the new
 * MR takes the old one's slot in the table in one store
 * (sroce_mr_table_replace()), so a lookup finds one or the other, whole.
 * It also takes over the old MR's pinned pages and their list, which the
 * old MR then no longer frees (@borrowed); the core destroys the old MR
 * before the new handle can be used. Only when the new rights may write
 * and the pages were pinned for reading are the same addresses pinned
 * again.
 *
 * A failure leaves the old MR as it was: everything that can fail happens
 * before the old MR is touched. The step that closes the old MR to new
 * window binds (@nr_mw to -1, as deregistration does) fails with -EBUSY
 * while a window is bound, as deregistration does, and comes before the
 * new MR is reachable by the old key.
 */
static struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags,
					 u64 start, u64 length, u64 iova,
					 int access, struct ib_pd *ibpd,
					 struct ib_udata *udata)
{
	struct sroce_mr_table *t = &to_sdev(ibmr->device)->mrs;
	struct sroce_mr *old = to_smr(ibmr);
	struct ib_umem *umem = NULL;
	struct sroce_mr *mr;
	int err;

	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EINVAL);
	err = sroce_mr_check_rereg(flags, start, length, iova, access);
	if (err)
		return ERR_PTR(err);
	if (old->type == SROCE_MR_ODP || access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	if (old->type != SROCE_MR_USER || !old->umem)
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_PD))
		ibpd = old->pd;
	/* The core found it by a handle of this process: same device. */
	if (!ibpd || ibpd->device != ibmr->device)
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = old->access;
	/* Fails early; the cmpxchg() below is what counts. */
	if (atomic_read(&old->nr_mw))
		return ERR_PTR(-EBUSY);

	if (flags & IB_MR_REREG_TRANS) {
		umem = ib_umem_get(ibmr->device, start, length, access);
	} else if (!sroce_mr_keeps_pages(old->umem->writable, access)) {
		iova = old->iova;
		length = old->length;
		umem = ib_umem_get(ibmr->device, old->umem->address,
				   old->umem->length, access);
	}
	if (IS_ERR(umem))
		return ERR_CAST(umem);

	if (umem)
		mr = sroce_mr_build_user(ibpd, access, umem, iova, length);
	else
		mr = sroce_mr_share_user(ibpd, access, old);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto err_umem;
	}

	if (flags & IB_MR_REREG_TRANS) {
		err = sroce_mr_table_add(t, mr);
		if (err)
			goto err_unbuild;
		/* No window may bind to the old MR from now on. */
		if (atomic_cmpxchg(&old->nr_mw, 0, -1)) {
			sroce_mr_table_del(t, mr);
			sroce_mr_free(mr);
			return ERR_PTR(-EBUSY);
		}
	} else {
		if (atomic_cmpxchg(&old->nr_mw, 0, -1)) {
			err = -EBUSY;
			goto err_unbuild;
		}
		err = sroce_mr_table_replace(t, old, mr);
		if (err) {
			atomic_set(&old->nr_mw, 0);
			goto err_unbuild;
		}
	}
	if (!umem) {
		old->borrowed = true;
		mr->borrowed = false;
	}
	/* The core sets these at registration, not for an MR rereg makes. */
	mr->ibmr.iova = mr->iova;
	mr->ibmr.length = mr->length;
	return &mr->ibmr;

err_unbuild:
	sroce_mr_unbuild(mr);
err_umem:
	if (umem)
		ib_umem_release(umem);
	return ERR_PTR(err);
}

/*
 * A window bound to the MR would go on pointing at its pages: refuse while
 * there is one (dealloc_mw and invalidation unbind). The count goes to -1
 * in the same step, so that no bind can start once the answer was no. It
 * is -1 already for an MR a re-registration replaced.
 */
static int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (atomic_cmpxchg(&mr->nr_mw, 0, -1) > 0)
		return -EBUSY;
	sroce_mr_table_del(&to_sdev(ibmr->device)->mrs, mr);
	sroce_mr_free(mr);
	return 0;
}

/*
 * A fast-registration MR for kernel consumers: it has a key but maps
 * nothing, and is refused by every access, until a REG_MR work request
 * gives it the pages map_mr_sg() listed.
 */
static struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				    u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);

	mr = sroce_mr_alloc(ibpd, 0, SROCE_MR_FAST);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pages = kvcalloc(max_num_sg, sizeof(*mr->pages), SROCE_GFP_OBJ);
	if (!mr->pages) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	err = sroce_mr_table_add(&sdev->mrs, mr);
	if (err) {
		kvfree(mr->pages);
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* ib_sg_to_pages() gives the DMA address of each page: with virtual DMA, its
 * kernel virtual address.
 */
static int sroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = virt_to_page((void *)(uintptr_t)addr);
	return 0;
}

/*
 * Lists the pages a later REG_MR maps. Only whole CPU pages: the data
 * path turns an address into a page by arithmetic on PAGE_SIZE.
 */
static int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			   int sg_nents, unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int n;

	mr->npages = 0;
	ibmr->page_size = PAGE_SIZE;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_set_page);
	mr->page_off = offset_in_page(ibmr->iova);
	return n;
}

/**
 * sroce_mr_get_index() - an MR by the index of a key, whatever its low bits
 * @t: the device's table
 * @key: a key whose index names the MR; the variant may be a new one
 *
 * For the work requests that give an MR or window its next key.
 *
 * Context: any.
 * Return: the MR, referenced, or NULL.
 */
struct sroce_mr *sroce_mr_get_index(struct sroce_mr_table *t, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&t->xa, sroce_key_index(key));
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

static int sroce_mr_do_fast_reg(struct sroce_mr *mr, const struct ib_pd *pd,
				u32 key, int access)
{
	struct ib_mr *ibmr = &mr->ibmr;

	if (mr->type != SROCE_MR_FAST || mr->pd != pd ||
	    sroce_mr_check_access_flags(access) || READ_ONCE(mr->valid) ||
	    !mr->npages)
		return -EINVAL;
	mr->iova = ibmr->iova;
	mr->length = ibmr->length;
	mr->access = access & SROCE_MR_ACCESS;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	WRITE_ONCE(mr->key, key);
	/* Everything above is set before a lookup can find it valid. */
	smp_store_release(&mr->valid, true);
	return 0;
}

/**
 * sroce_mr_fast_reg() - carry out a REG_MR work request
 * @sdev: the device
 * @pd: the PD of the QP it was posted to
 * @key: the MR's new key: the index names the MR (the consumer may have
 *	 changed the low 8 bits with ib_update_fast_reg_key() since)
 * @access: the IB_ACCESS_* rights it grants from now on
 *
 * The MR maps what map_mr_sg() last listed, at the address and length the
 * core recorded, until it is invalidated.
 *
 * Context: the requester, in the QP's work request order.
 * Return: 0, or -EINVAL for an MR, key or rights it cannot take.
 */
int sroce_mr_fast_reg(struct sroce_dev *sdev, const struct ib_pd *pd, u32 key,
		      int access)
{
	struct sroce_mr *mr = sroce_mr_get_index(&sdev->mrs, key);
	int err;

	if (!mr)
		return -EINVAL;
	err = sroce_mr_do_fast_reg(mr, pd, key, access);
	sroce_mr_put(mr);
	return err;
}

/**
 * sroce_mr_table_invalidate() - carry out a Local Invalidate or a received
 *				 Send with Invalidate
 * @t: the device's table
 * @pd: the PD of the QP asking
 * @key: the key to invalidate
 * @rqp: for a Send with Invalidate, the QP that received it, to which a
 *	 type 2 window must be bound; NULL for a Local Invalidate
 *
 * Only fast-registration MRs and type 2 windows can be invalidated: a user
 * or DMA MR is valid until it is deregistered, a type 1 window until it is
 * bound again. A fast-registration MR's users still copying when it is
 * invalidated are waited for (see "invalidation waits for the copies it
 * overtakes" above): on return none will touch its memory again.
 *
 * Context: softirq or BH disabled, never between sroce_mr_enter() and
 * sroce_mr_leave().
 * Return: 0, or -EINVAL when @key names no valid fast-registration MR or
 * type 2 window of @pd (bound to @rqp).
 */
int sroce_mr_table_invalidate(struct sroce_mr_table *t, const struct ib_pd *pd,
			      u32 key, const struct ib_qp *rqp)
{
	struct sroce_mr *mr = sroce_mr_lookup(t, key);
	int err = -EINVAL;

	if (!mr)
		return err;
	if (mr->type == SROCE_MR_MW) {
		err = sroce_mw_invalidate(mr, pd, rqp);
	} else if (mr->type == SROCE_MR_FAST && mr->pd == pd &&
		   xchg(&mr->valid, false)) {
		sroce_mr_wait_idle(mr);
		err = 0;
	}
	sroce_mr_put(mr);
	return err;
}

/* The device's: see sroce_mr_table_invalidate(). */
int sroce_mr_invalidate(struct sroce_dev *sdev, const struct ib_pd *pd,
			u32 key, const struct ib_qp *rqp)
{
	return sroce_mr_table_invalidate(&sdev->mrs, pd, key, rqp);
}

const struct ib_device_ops sroce_mr_ops = {
	.advise_mr = sroce_advise_mr,
	.alloc_mr = sroce_alloc_mr,
	.map_mr_sg = sroce_map_mr_sg,
	.dereg_mr = sroce_dereg_mr,
	.get_dma_mr = sroce_get_dma_mr,
	.reg_user_mr = sroce_reg_user_mr,
	.rereg_user_mr = sroce_rereg_user_mr,
};
