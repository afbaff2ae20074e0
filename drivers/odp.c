// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging MRs: a process's memory registered without pinning,
 * whose pages are looked up (faulted in) when the data path first needs
 * them and dropped again when the process's mapping changes.
 */
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem_odp.h>

#include "counters.h"
#include "device.h"
#include "limits.h"
#include "mr.h"
#include "odp.h"
#include "qp.h"

/**
 * DOC: on-demand paging
 *
 * An ODP MR (IB_ACCESS_ON_DEMAND) keeps, like a pinned user MR, one page
 * pointer per CPU page, but starts with none: the core's umem_odp follows
 * the process's mapping through an mmu interval notifier, and sroce fills
 * a pointer only once hmm_range_fault() has found (or made) the page, with
 * write access if the MR may be written. An explicit MR's pointers are its
 * @pages; an implicit MR (the whole address space) gets a chunk of
 * SROCE_ODP_CHUNK bytes, with a umem and pointers of its own, the first
 * time an access or a prefetch reaches that part of the address space.
 *
 * The data path never sleeps, so it never faults: sroce_mr_present() of
 * a range with a page missing says -EAGAIN, and the QP asks for the range
 * in process context (fault.c) and tries again once it is there. The
 * responder answers a write, send, atomic or read request it cannot serve
 * with an RNR NAK, as ODP hardware does, and holds back the answer of a
 * read accepted before its pages went; the requester holds its packet
 * back, or asks again for an answer it could not place.
 *
 * When the mapping changes (munmap, migration, fork's copy-on-write,
 * reclaim), the notifier's invalidate callback takes the pages out. The
 * data path uses an MR's memory between sroce_mr_enter() and
 * sroce_mr_leave(), counted in @busy for an ODP MR as for a
 * fast-registration one, and checks @unmapping after entering: the
 * callback raises @unmapping, waits for @busy to drain, and only then
 * clears the pointers and lets the core give the pages back. A user
 * either saw @unmapping and copies nothing, or is waited for (the same
 * store-buffer pairing as for invalidation, see mr.c). While a callback
 * runs every access to the MR asks for a fault, which waits in
 * hmm_range_fault() for the mapping to settle.
 */

/*
 * One ib_umem_odp and the page pointers it fills: the whole of an explicit
 * MR (@pages is the MR's own), or SROCE_ODP_CHUNK bytes of an implicit
 * one's address space, made when first touched.
 */
struct sroce_odp_chunk {
	struct ib_umem_odp *umem;
	struct sroce_mr *mr;
	struct page **pages;
};

#define SROCE_ODP_CHUNK_SHIFT	21
#define SROCE_ODP_CHUNK		BIT(SROCE_ODP_CHUNK_SHIFT)

/**
 * struct sroce_odp - what an ODP MR has beyond a pinned one
 * @one: an explicit MR's chunk
 * @chunks: an implicit MR's chunks, by address >> SROCE_ODP_CHUNK_SHIFT;
 *	    never removed before the MR is freed
 * @lock: makes an implicit MR's chunks one at a time
 * @unmapping: invalidations under way: no user may start
 * @implicit: the MR is the whole address space (ibv_reg_mr(pd, NULL,
 *	      SIZE_MAX, ...)); its umem is the core's implicit root
 */
struct sroce_odp {
	struct sroce_odp_chunk one;
	struct xarray chunks;
	struct mutex lock;	/* chunk creation */
	atomic_t unmapping;
	bool implicit;
};

/* The index in @pages of the CPU page holding @addr, a process address. */
static unsigned long sroce_odp_index(struct ib_umem_odp *odp,
				     unsigned long addr)
{
	return (addr - ib_umem_start(odp)) >> PAGE_SHIFT;
}

/*
 * The mmu interval notifier's callback: [range->start, range->end) of the
 * process's mapping is about to change. Nothing may reach those pages
 * after it returns.
 */
static bool sroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct sroce_odp_chunk *chunk;
	unsigned long start, end, i;
	struct sroce_mr *mr;

	if (!mmu_notifier_range_blockable(range))
		return false;

	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(ALIGN_DOWN(range->start, BIT(odp->page_shift)),
		    ib_umem_start(odp));
	end = min(ALIGN(range->end, BIT(odp->page_shift)), ib_umem_end(odp));
	/* Set once the chunk is whole; before that no page was ever listed. */
	chunk = READ_ONCE(odp->private);
	if (chunk && start < end) {
		mr = chunk->mr;
		atomic_inc(&mr->odp->unmapping);
		smp_mb__after_atomic(); /* pairs with sroce_mr_enter() */
		sroce_mr_wait_idle(mr);
		for (i = sroce_odp_index(odp, start);
		     i < sroce_odp_index(odp, end); i++)
			WRITE_ONCE(chunk->pages[i], NULL);
		/* Cleared before the pages go: a fault lists them again. */
		smp_mb__before_atomic();
		atomic_dec(&mr->odp->unmapping);
		sroce_count(to_sdev(mr->ibmr.device), SROCE_CNT_ODP_INVALIDATIONS);
	}
	if (start < end)
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_ops = {
	.invalidate = sroce_odp_invalidate,
};

/* The access bits a page must be mapped with for the MR to use it. */
static u64 sroce_odp_need(struct ib_umem_odp *odp)
{
	return ODP_READ_ALLOWED_BIT |
	       (odp->umem.writable ? ODP_WRITE_ALLOWED_BIT : 0);
}

/*
 * Lists the pages of [start, end) that ib_umem_odp_map_dma_and_lock()
 * mapped with the access the MR needs.
 *
 * Context: umem_mutex held.
 */
static void sroce_odp_list(struct sroce_odp_chunk *chunk,
			   unsigned long start, unsigned long end)
{
	struct ib_umem_odp *odp = chunk->umem;
	u64 need = sroce_odp_need(odp);
	unsigned long addr, i;

	lockdep_assert_held(&odp->umem_mutex);
	for (addr = start; addr < end; addr += PAGE_SIZE) {
		i = sroce_odp_index(odp, addr);
		if ((odp->dma_list[(addr - ib_umem_start(odp)) >>
				   odp->page_shift] & need) != need ||
		    !(odp->pfn_list[i] & HMM_PFN_VALID))
			continue;
		WRITE_ONCE(chunk->pages[i], hmm_pfn_to_page(odp->pfn_list[i]));
	}
}

/* Brings [addr, addr + length) of one chunk in; see sroce_odp_fault(). */
static int sroce_odp_map(struct sroce_odp_chunk *chunk, unsigned long addr,
			 u64 length, bool fault)
{
	struct ib_umem_odp *odp = chunk->umem;
	unsigned long start, end;
	int ret;

	ret = ib_umem_odp_map_dma_and_lock(odp, addr, length,
					   sroce_odp_need(odp), fault);
	if (ret < 0)
		return ret;
	start = ALIGN_DOWN(addr, BIT(odp->page_shift));
	end = min(ALIGN(addr + length, BIT(odp->page_shift)),
		  ib_umem_end(odp));
	sroce_odp_list(chunk, start, end);
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/* An implicit MR's chunk for the address space from @index on, made if new. */
static struct sroce_odp_chunk *sroce_odp_chunk(struct sroce_mr *mr,
					       unsigned long index)
{
	struct sroce_odp *o = mr->odp;
	struct sroce_odp_chunk *chunk;
	struct ib_umem_odp *umem;
	int err;

	chunk = xa_load(&o->chunks, index);
	if (chunk)
		return chunk;
	mutex_lock(&o->lock);
	chunk = xa_load(&o->chunks, index);
	if (chunk)
		goto out;
	err = -ENOMEM;
	chunk = kzalloc(sizeof(*chunk), SROCE_GFP_OBJ);
	if (!chunk)
		goto err;
	chunk->pages = kvcalloc(SROCE_ODP_CHUNK >> PAGE_SHIFT,
				sizeof(*chunk->pages), SROCE_GFP_OBJ);
	if (!chunk->pages)
		goto err_chunk;
	umem = ib_umem_odp_alloc_child(to_ib_umem_odp(mr->umem),
				       index << SROCE_ODP_CHUNK_SHIFT,
				       SROCE_ODP_CHUNK, &sroce_odp_ops);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_pages;
	}
	chunk->umem = umem;
	chunk->mr = mr;
	mutex_lock(&umem->umem_mutex);
	WRITE_ONCE(umem->private, chunk);
	mutex_unlock(&umem->umem_mutex);
	err = xa_err(xa_store(&o->chunks, index, chunk, GFP_KERNEL));
	if (err) {
		ib_umem_odp_release(umem);
		goto err_pages;
	}
out:
	mutex_unlock(&o->lock);
	return chunk;

err_pages:
	kvfree(chunk->pages);
err_chunk:
	kfree(chunk);
err:
	mutex_unlock(&o->lock);
	return ERR_PTR(err);
}

/**
 * sroce_odp_fault() - bring a range of an ODP MR in
 * @mr: an ODP MR, referenced
 * @iova: first byte, inside the MR
 * @length: bytes
 * @fault: fault pages in (else only list those the process has mapped)
 *
 * Context: process; sleeps.
 * Return: 0, or the errno of hmm_range_fault() (-EFAULT: not mapped in
 * the process, or not writable where the MR must write).
 */
int sroce_odp_fault(struct sroce_mr *mr, u64 iova, u64 length, bool fault)
{
	struct sroce_odp_chunk *chunk;
	u64 addr, end, next;
	int err;

	if (mr->type != SROCE_MR_ODP || !length ||
	    sroce_mr_check(mr, mr->pd, iova, length, 0))
		return -EINVAL;
	addr = mr->umem->address + (iova - mr->iova);
	if (!mr->odp->implicit) {
		err = sroce_odp_map(&mr->odp->one, addr, length, fault);
		goto out;
	}
	for (end = addr + length; addr < end; addr = next) {
		next = min(ALIGN_DOWN(addr, SROCE_ODP_CHUNK) + SROCE_ODP_CHUNK,
			   end);
		chunk = sroce_odp_chunk(mr, addr >> SROCE_ODP_CHUNK_SHIFT);
		err = PTR_ERR_OR_ZERO(chunk);
		if (!err)
			err = sroce_odp_map(chunk, addr, next - addr, fault);
		if (err)
			return err;
	}
out:
	if (!err)
		sroce_count(to_sdev(mr->ibmr.device), SROCE_CNT_ODP_FAULTS);
	return err;
}

/* The page of an implicit MR's chunk @addr is in, or NULL. */
static struct page *sroce_odp_chunk_page(const struct sroce_mr *mr,
					 unsigned long addr)
{
	struct sroce_odp_chunk *chunk;

	chunk = xa_load(&mr->odp->chunks, addr >> SROCE_ODP_CHUNK_SHIFT);
	if (!chunk)
		return NULL;
	return READ_ONCE(chunk->pages[sroce_odp_index(chunk->umem, addr)]);
}

/**
 * sroce_odp_page() - the page an address of an implicit MR is in
 * @mr: an implicit ODP MR
 * @iova: an address sroce_mr_check() accepted for @mr, entered
 * @off: where @iova is in the page
 *
 * What sroce_mr_page() does by index for every other MR.
 *
 * Context: any.
 */
struct page *sroce_odp_page(const struct sroce_mr *mr, u64 iova,
			    unsigned int *off)
{
	*off = offset_in_page(iova);
	return sroce_odp_chunk_page(mr, iova);
}

/**
 * sroce_odp_present() - are all pages of a range of an ODP MR listed?
 * @mr: an ODP MR, entered (sroce_mr_enter()) if the pages are to be used
 * @iova: first byte, inside the MR
 * @length: bytes
 *
 * Context: any.
 */
bool sroce_odp_present(const struct sroce_mr *mr, u64 iova, u64 length)
{
	u64 pos = iova - mr->iova + mr->page_off;
	unsigned long i, last;

	if (atomic_read(&mr->odp->unmapping))
		return false;
	if (!length)
		return true;
	last = (pos + length - 1) >> PAGE_SHIFT;
	for (i = pos >> PAGE_SHIFT; i <= last; i++)
		if (mr->odp->implicit ? !sroce_odp_chunk_page(mr, i << PAGE_SHIFT) :
		    !READ_ONCE(mr->pages[i]))
			return false;
	return true;
}

/* The whole address space: an implicit MR. */
static struct ib_umem_odp *sroce_odp_implicit(struct sroce_mr *mr,
					      struct ib_device *ibdev,
					      int access)
{
	struct ib_umem_odp *root;

	if (access & IB_ACCESS_HUGETLB)
		return ERR_PTR(-EOPNOTSUPP);
	root = ib_umem_odp_alloc_implicit(ibdev, access);
	if (IS_ERR(root))
		return root;
	mr->odp->implicit = true;
	mr->iova = 0;
	mr->length = TASK_SIZE_MAX;
	return root;
}

/* A range of the address space: an explicit MR, with its page list. */
static struct ib_umem_odp *sroce_odp_explicit(struct sroce_mr *mr,
					      struct ib_device *ibdev,
					      u64 start, u64 length, u64 iova,
					      int access)
{
	struct ib_umem_odp *umem;

	umem = ib_umem_odp_get(ibdev, start, length, access, &sroce_odp_ops);
	if (IS_ERR(umem))
		return umem;
	mr->iova = iova;
	mr->length = length;
	mr->page_off = start - ib_umem_start(umem);
	mr->npages = (ib_umem_end(umem) - ib_umem_start(umem)) >> PAGE_SHIFT;
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), SROCE_GFP_OBJ);
	if (!mr->pages) {
		ib_umem_odp_release(umem);
		return ERR_PTR(-ENOMEM);
	}
	mr->odp->one.umem = umem;
	mr->odp->one.mr = mr;
	mr->odp->one.pages = mr->pages;
	return umem;
}

/**
 * sroce_odp_free() - free what an ODP MR has beyond a pinned one
 * @mr: an ODP MR no lookup can find any more, or one never published
 *
 * The umems go first: their notifiers clear the pages until they do.
 *
 * Context: process.
 */
void sroce_odp_free(struct sroce_mr *mr)
{
	struct sroce_odp *o = mr->odp;
	struct sroce_odp_chunk *chunk;
	unsigned long i;

	xa_for_each(&o->chunks, i, chunk) {
		ib_umem_odp_release(chunk->umem);
		kvfree(chunk->pages);
		kfree(chunk);
	}
	xa_destroy(&o->chunks);
	if (mr->umem)
		ib_umem_odp_release(to_ib_umem_odp(mr->umem));
	kvfree(mr->pages);
	kfree(o);
}

/**
 * sroce_odp_reg_mr() - register a process's memory for on-demand paging
 * @ibpd: the PD
 * @start: first byte in the process
 * @length: bytes; with @start 0 and @length U64_MAX, the whole address
 *	    space (an implicit MR, whose @iova must be 0)
 * @iova: the address of the first byte in work requests and on the wire
 * @access: IB_ACCESS_* rights, IB_ACCESS_ON_DEMAND among them
 *
 * Nothing is pinned and nothing faulted in: ibv_advise_mr() or the first
 * access brings pages in. Memory windows are not bound to ODP MRs (a
 * window's users count per CPU, which an invalidation cannot wait for
 * MR by MR).
 *
 * Context: process (the registering one: its mm is the MR's).
 * Return: the MR, or an ERR_PTR().
 */
struct ib_mr *sroce_odp_reg_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	bool implicit = !start && length == U64_MAX;
	struct ib_umem_odp *umem;
	struct sroce_mr *mr;
	int err;

	err = sroce_mr_check_access_flags(access & ~(IB_ACCESS_ON_DEMAND |
						     IB_ACCESS_HUGETLB));
	if (err || access & IB_ACCESS_MW_BIND)
		return ERR_PTR(-EOPNOTSUPP);
	if (implicit && iova)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->odp = kzalloc(sizeof(*mr->odp), GFP_KERNEL);
	if (!mr->odp) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	xa_init(&mr->odp->chunks);
	mutex_init(&mr->odp->lock);
	mr->pd = ibpd;
	mr->type = SROCE_MR_ODP;
	mr->valid = true;
	mr->access = access & SROCE_MR_ACCESS;

	if (implicit)
		umem = sroce_odp_implicit(mr, ibpd->device, access);
	else
		umem = sroce_odp_explicit(mr, ibpd->device, start, length,
					  iova, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_free;
	}
	mr->umem = &umem->umem;
	err = sroce_mr_table_add(&sdev->mrs, mr);
	if (err)
		goto err_free;
	/* From now on the invalidation callback clears what faults list. */
	if (!implicit) {
		mutex_lock(&umem->umem_mutex);
		WRITE_ONCE(umem->private, &mr->odp->one);
		mutex_unlock(&umem->umem_mutex);
	}
	return &mr->ibmr;

err_free:
	sroce_odp_free(mr);
	kfree(mr);
	return ERR_PTR(err);
}

/* A prefetch nobody waits for: ibv_advise_mr() without the flush flag. */
struct sroce_prefetch {
	struct work_struct work;
	struct sroce_mr *mr;
	u64 iova;
	u32 length;
	bool fault;
};

static void sroce_prefetch_work(struct work_struct *work)
{
	struct sroce_prefetch *p = container_of(work, struct sroce_prefetch,
						work);

	/* Advice: nobody waits for the outcome. */
	sroce_odp_fault(p->mr, p->iova, p->length, p->fault);
	sroce_mr_put(p->mr);
	kfree(p);
}

static int sroce_prefetch_async(struct sroce_mr *mr, u64 iova, u32 length,
				bool fault)
{
	struct sroce_prefetch *p = kzalloc(sizeof(*p), GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	INIT_WORK(&p->work, sroce_prefetch_work);
	p->mr = mr;
	p->iova = iova;
	p->length = length;
	p->fault = fault;
	queue_work(sroce_wq, &p->work);
	return 0;
}

/* One SGE of an advice: an ODP MR of @pd, and a range inside it. */
static struct sroce_mr *sroce_advise_sge(struct sroce_dev *sdev,
					 struct ib_pd *pd,
					 const struct ib_sge *sge, u32 access)
{
	struct sroce_mr *mr = sroce_mr_get(sdev, sge->lkey);
	int err;

	if (!mr)
		return ERR_PTR(-ENOENT);
	err = sroce_mr_check(mr, pd, sge->addr, sge->length, access);
	if (mr->type != SROCE_MR_ODP || err) {
		sroce_mr_put(mr);
		return ERR_PTR(-EINVAL);
	}
	return mr;
}

/**
 * sroce_advise_mr() - ibv_advise_mr(): bring ranges of ODP MRs in now
 * @ibpd: the PD the MRs must be in
 * @advice: PREFETCH (read), PREFETCH_WRITE, or PREFETCH_NO_FAULT (list
 *	    only the pages the process has mapped)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done when the call returns
 * @sg_list: the ranges, by lkey
 * @num_sge: how many
 * @attrs: unused
 *
 * Without the flush flag the work is queued and the call returns at once,
 * as the verb allows.
 *
 * Context: process.
 * Return: 0; -EINVAL for a range that is no ODP MR's of @ibpd (or lacks
 * local write for PREFETCH_WRITE), -ENOENT for an unknown lkey,
 * -EOPNOTSUPP for an unknown advice or flag; for a flush, a fault's errno.
 */
int sroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	u32 access = 0;
	struct sroce_mr *mr;
	int err = 0;
	u32 i;

	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		access = IB_ACCESS_LOCAL_WRITE;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;

	for (i = 0; i < num_sge && !err; i++) {
		if (!sg_list[i].length)
			continue;
		mr = sroce_advise_sge(sdev, ibpd, &sg_list[i], access);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		if (!(flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH)) {
			err = sroce_prefetch_async(mr, sg_list[i].addr,
						   sg_list[i].length, fault);
			if (!err)
				continue;	/* the work puts the MR */
		} else {
			err = sroce_odp_fault(mr, sg_list[i].addr,
					      sg_list[i].length, fault);
		}
		sroce_mr_put(mr);
	}
	return err;
}

/* What the device says of its on-demand paging (query_device). */
void sroce_odp_caps(struct ib_device_attr *attr)
{
	u32 rc = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		 IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		 IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;

	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps = rc;
	attr->odp_caps.per_transport_caps.xrc_odp_caps = rc;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_SRQ_RECV;
}
