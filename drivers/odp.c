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
 * pointer per CPU page in @pages, but starts with none: the core's
 * umem_odp follows the process's mapping through an mmu interval
 * notifier, and sroce fills a pointer only once hmm_range_fault() has
 * found (or made) the page, with write access if the MR may be written.
 * The data path never sleeps, so it never faults: sroce_mr_check() of a
 * range with a page missing says -EAGAIN, and the QP asks for the range
 * in process context (fault.c) and tries again once it is there. The
 * responder answers a write, send or atomic it cannot place with an RNR
 * NAK, as ODP hardware does, and holds a read's answer back; the
 * requester holds its packet back, or asks again for an answer it could
 * not place.
 *
 * When the mapping changes (munmap, migration, fork's copy-on-write,
 * reclaim), the notifier's invalidate callback takes the pages out. The
 * data path uses an MR's memory between sroce_mr_enter() and
 * sroce_mr_leave(), counted in @busy for an ODP MR as for a
 * fast-registration one, and checks @unmapping after entering: the
 * callback sets @unmapping, waits for @busy to drain, and only then
 * clears the pointers and gives the pages back. A user either saw
 * @unmapping and copies nothing, or is waited for (the same store-buffer
 * pairing as for invalidation, see mr.c). Between the callback's start
 * and its end every access to the MR asks for a fault, which waits in
 * hmm_range_fault() for the mapping to settle.
 */

static struct ib_umem_odp *sroce_odp_umem(const struct sroce_mr *mr)
{
	return to_ib_umem_odp(mr->umem);
}

/* The index in @pages of the CPU page holding @addr, a process address. */
static unsigned long sroce_odp_index(struct ib_umem_odp *odp,
				     unsigned long addr)
{
	return (addr - ib_umem_start(odp)) >> PAGE_SHIFT;
}

static void sroce_odp_wait_idle(struct sroce_mr *mr)
{
	while (atomic_read_acquire(&mr->busy))
		cpu_relax();
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
	unsigned long start, end, i;
	struct sroce_mr *mr;

	if (!mmu_notifier_range_blockable(range))
		return false;

	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(ALIGN_DOWN(range->start, BIT(odp->page_shift)),
		    ib_umem_start(odp));
	end = min(ALIGN(range->end, BIT(odp->page_shift)), ib_umem_end(odp));
	/* Set once the MR is whole; before that no page was ever listed. */
	mr = READ_ONCE(odp->private);
	if (mr && start < end) {
		WRITE_ONCE(mr->unmapping, true);
		smp_mb(); /* pairs with sroce_mr_enter() */
		sroce_odp_wait_idle(mr);
		for (i = sroce_odp_index(odp, start);
		     i < sroce_odp_index(odp, end); i++)
			WRITE_ONCE(mr->pages[i], NULL);
		/* Cleared before the pages go: a fault lists them again. */
		smp_store_release(&mr->unmapping, false);
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
static void sroce_odp_list(struct sroce_mr *mr, struct ib_umem_odp *odp,
			   unsigned long start, unsigned long end)
{
	u64 need = sroce_odp_need(odp);
	unsigned long addr, i;

	lockdep_assert_held(&odp->umem_mutex);
	for (addr = start; addr < end; addr += PAGE_SIZE) {
		i = sroce_odp_index(odp, addr);
		if ((odp->dma_list[(addr - ib_umem_start(odp)) >>
				   odp->page_shift] & need) != need ||
		    !(odp->pfn_list[i] & HMM_PFN_VALID))
			continue;
		WRITE_ONCE(mr->pages[i], hmm_pfn_to_page(odp->pfn_list[i]));
	}
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
	struct ib_umem_odp *odp = sroce_odp_umem(mr);
	unsigned long start, end;
	u64 addr;
	int ret;

	if (mr->type != SROCE_MR_ODP || !length ||
	    iova < mr->iova || length > mr->length ||
	    iova - mr->iova > mr->length - length)
		return -EINVAL;
	addr = mr->umem->address + (iova - mr->iova);
	ret = ib_umem_odp_map_dma_and_lock(odp, addr, length,
					   sroce_odp_need(odp), fault);
	if (ret < 0)
		return ret;
	start = ALIGN_DOWN(addr, BIT(odp->page_shift));
	end = min(ALIGN(addr + length, BIT(odp->page_shift)),
		  ib_umem_end(odp));
	sroce_odp_list(mr, odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	sroce_count(to_sdev(mr->ibmr.device), SROCE_CNT_ODP_FAULTS);
	return 0;
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

	if (READ_ONCE(mr->unmapping))
		return false;
	if (!length)
		return true;
	last = (pos + length - 1) >> PAGE_SHIFT;
	for (i = pos >> PAGE_SHIFT; i <= last; i++)
		if (!READ_ONCE(mr->pages[i]))
			return false;
	return true;
}

/**
 * sroce_odp_reg_mr() - register a process's memory for on-demand paging
 * @ibpd: the PD
 * @start: first byte in the process
 * @length: bytes
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
	struct ib_umem_odp *odp;
	struct sroce_mr *mr;
	int err;

	err = sroce_mr_check_access_flags(access & ~(IB_ACCESS_ON_DEMAND |
						     IB_ACCESS_HUGETLB));
	if (err || access & IB_ACCESS_MW_BIND)
		return ERR_PTR(-EOPNOTSUPP);
	odp = ib_umem_odp_get(ibpd->device, start, length, access,
			      &sroce_odp_ops);
	if (IS_ERR(odp))
		return ERR_CAST(odp);

	err = -ENOMEM;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		goto err_umem;
	mr->pd = ibpd;
	mr->type = SROCE_MR_ODP;
	mr->valid = true;
	mr->access = access & SROCE_MR_ACCESS;
	mr->umem = &odp->umem;
	mr->iova = iova;
	mr->length = length;
	mr->page_off = start - ib_umem_start(odp);
	mr->npages = (ib_umem_end(odp) - ib_umem_start(odp)) >> PAGE_SHIFT;
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), SROCE_GFP_OBJ);
	if (!mr->pages)
		goto err_mr;
	err = sroce_mr_table_add(&sdev->mrs, mr);
	if (err)
		goto err_pages;
	/* From now on the invalidation callback clears what faults list. */
	mutex_lock(&odp->umem_mutex);
	WRITE_ONCE(odp->private, mr);
	mutex_unlock(&odp->umem_mutex);
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_mr:
	kfree(mr);
err_umem:
	ib_umem_release(&odp->umem);
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
	if (mr->type != SROCE_MR_ODP || (err && err != -EAGAIN)) {
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
	attr->odp_caps.general_caps = IB_ODP_SUPPORT;
	attr->odp_caps.per_transport_caps.rc_odp_caps = rc;
	attr->odp_caps.per_transport_caps.xrc_odp_caps = rc;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_SRQ_RECV;
}
