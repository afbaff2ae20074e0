// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows (IBTA 10.6.7): keys a process hands to its peers for part
 * of a registered MR, given by a bind work request and taken back by
 * invalidation (type 2) or by binding again (type 1). A window's key lives
 * in the device's MR table, so an rkey names an MR or a window through one
 * lookup; the responder turns a window into the MR it is bound to.
 */
#include <linux/build_bug.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "device.h"
#include "mr.h"
#include "mw.h"
#include "qp.h"

/* The bind member must not make a send queue entry bigger. */
static_assert(sizeof_field(struct sroce_send_wqe, wr) == 32);
static_assert(sizeof(struct sroce_send_wqe) == 64);

/* The remote rights a window can grant. */
#define SROCE_MW_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

/*
 * What a bind may ask for: local write means nothing to a window, whose
 * local side is its MR's, but consumers pass it and other devices accept
 * it. Zero-based windows are not implemented.
 */
#define SROCE_MW_BIND_ACCESS	(SROCE_MW_ACCESS | IB_ACCESS_LOCAL_WRITE)

/**
 * DOC: window users per CPU
 *
 * An access through a window enters (sroce_mr_enter() of the window)
 * before it checks the binding under @mw_lock, and leaves
 * (sroce_mr_leave() of the MR it was given) after its last byte, all with
 * BH disabled, one MR at a time on a CPU: entries do not nest. Each CPU
 * counts its entries and its leaves in sroce_mw_seq, odd while it is
 * inside. A type 2 window's invalidation clears the binding under
 * @mw_lock, then waits, for each CPU that was inside, until its count
 * moves on. The lock orders the two sides: an access that found the
 * binding valid had made its CPU's count odd before releasing the lock the
 * invalidation took next; one that came after finds it invalid. The wait
 * ends when the copies running at that moment end, whatever starts later,
 * so it is as bounded as the fast-registration MR's (see "invalidation
 * waits for the copies it overtakes" in mr.c), and costs an access a
 * per-CPU increment instead of an atomic on a shared line.
 */
static DEFINE_PER_CPU(unsigned int, sroce_mw_seq);

/**
 * sroce_mw_cpu_enter() - this CPU starts an access that may go through a
 *			  window
 *
 * Context: softirq or BH disabled, until the matching sroce_mw_cpu_leave().
 */
void sroce_mw_cpu_enter(void)
{
	lockdep_assert_in_softirq();
	__this_cpu_inc(sroce_mw_seq);
}

/**
 * sroce_mw_cpu_leave() - this CPU's access is done
 *
 * Context: where sroce_mw_cpu_enter() was called.
 */
void sroce_mw_cpu_leave(void)
{
	unsigned int *seq = this_cpu_ptr(&sroce_mw_seq);

	/* The copy is done before an invalidation can see it done. */
	smp_store_release(seq, *seq + 1);
}

/*
 * Waits for the accesses that were under way, on any CPU, when the
 * window was unbound. Context: not between sroce_mw_cpu_enter() and
 * sroce_mw_cpu_leave().
 */
static void sroce_mw_wait_cpus(void)
{
	unsigned int cpu, seq;

	for_each_possible_cpu(cpu) {
		seq = READ_ONCE(*per_cpu_ptr(&sroce_mw_seq, cpu));
		if (!(seq & 1))
			continue;
		/* Pairs with the release in sroce_mw_cpu_leave(). */
		while (smp_load_acquire(per_cpu_ptr(&sroce_mw_seq, cpu)) == seq)
			cpu_relax();
	}
}

/* Leaves the window bound to nothing. Context: mw_lock held. */
static void sroce_mw_unbind_locked(struct sroce_mr *mw)
{
	lockdep_assert_held(&mw->mw_lock);
	WRITE_ONCE(mw->valid, false);
	if (mw->parent) {
		atomic_dec(&mw->parent->nr_mw);
		mw->parent = NULL;
	}
	mw->length = 0;
	mw->access = 0;
}

/*
 * Can @mr carry a window over [addr, addr + length) with the bind's
 * rights? C10-73: it was registered for binding; C10-74: a window that can
 * be written remotely needs an MR the consumer may write; C10-75: the
 * window lies inside it. Only a process's MR: a window is a user object.
 */
static int sroce_mw_check_mr(const struct sroce_mr *mr, const struct ib_pd *pd,
			     const struct sroce_send_wqe *w)
{
	u32 access = w->wr.bind.access;

	if (mr->type != SROCE_MR_USER || !(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	if (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	return sroce_mr_check(mr, pd, w->wr.bind.addr, w->wr.bind.length, 0);
}

/*
 * Gives @mw its new binding: @mr (NULL for a zero-length bind of a type 1
 * window, which leaves it bound to nothing) and the new key. A type 2
 * window must be free (o10-37.2.30) and cannot be bound to nothing
 * (o10-37.2.40); a type 1 window is simply rebound.
 */
static int sroce_mw_do_bind(struct sroce_mr *mw, struct sroce_mr *mr,
			    const struct sroce_qp *qp,
			    const struct sroce_send_wqe *w, bool *was_bound)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&mw->mw_lock, flags);
	if (mw->mw_type == IB_MW_TYPE_2 && (mw->parent || !mr))
		err = -EINVAL;
	else if (mr && !atomic_inc_unless_negative(&mr->nr_mw))
		err = -EINVAL;		/* being deregistered */
	if (!err) {
		*was_bound = mw->valid;
		sroce_mw_unbind_locked(mw);
		mw->parent = mr;
		mw->iova = w->wr.bind.addr;
		mw->length = w->wr.bind.length;
		mw->access = w->wr.bind.access & SROCE_MW_ACCESS;
		mw->mw_qp = qp->serial;
		WRITE_ONCE(mw->key, w->wr.bind.new_rkey);
		/* The binding is whole before a lookup can find it valid. */
		smp_store_release(&mw->valid, !!mr);
	}
	spin_unlock_irqrestore(&mw->mw_lock, flags);
	return err;
}

/**
 * sroce_mw_bind() - carry out a Bind Memory Window work request
 * @qp: the QP it was posted to
 * @w: the kernel's copy of the entry
 *
 * The window is named by the index of @w->wr.bind.mw_rkey and takes
 * @w->wr.bind.new_rkey, which must keep that index; the MR by its exact
 * lkey. Window, MR and QP share one PD (C10-72).
 *
 * Context: the requester, in the QP's work request order; sq_lock held.
 * Return: 0, or -EINVAL/-EACCES when the bind is refused.
 */
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *w)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	const struct ib_pd *pd = qp->ibqp.pd;
	struct sroce_mr *mw, *mr = NULL;
	bool was_bound = false;
	int err = -EINVAL;

	lockdep_assert_held(&qp->sq_lock);

	if (w->wr.bind.access & ~SROCE_MW_BIND_ACCESS)
		return -EINVAL;
	mw = sroce_mr_get_index(&sdev->mrs, w->wr.bind.mw_rkey);
	if (!mw)
		return -EINVAL;
	if (mw->type != SROCE_MR_MW || mw->pd != pd ||
	    sroce_key_index(w->wr.bind.new_rkey) != sroce_key_index(mw->key))
		goto out;
	if (w->wr.bind.length) {
		mr = sroce_mr_get(sdev, w->wr.bind.mr_lkey);
		if (!mr)
			goto out;
		err = sroce_mw_check_mr(mr, pd, w);
		if (err)
			goto out;
	}
	err = sroce_mw_do_bind(mw, mr, qp, w, &was_bound);
	/*
	 * A type 1 window rebound (or bound to nothing): accesses through the
	 * old binding still copying on other CPUs end before the bind
	 * completes, as they do before an invalidation does.
	 */
	if (was_bound)
		sroce_mw_wait_cpus();
out:
	if (mr)
		sroce_mr_put(mr);
	sroce_mr_put(mw);
	return err;
}

/* Does the window's binding allow this access? Context: mw_lock held. */
static bool sroce_mw_grants(const struct sroce_mr *mw, const struct ib_qp *qp,
			    u32 rkey, u64 iova, u64 length, u32 access)
{
	lockdep_assert_held(&mw->mw_lock);
	if (!mw->valid || mw->key != rkey || mw->pd != qp->pd ||
	    (access & ~mw->access))
		return false;
	/*
	 * A type 2 window is bound to the QP object: once that QP is
	 * destroyed, no QP that gets its number again can use the window.
	 */
	if (mw->mw_type == IB_MW_TYPE_2 && mw->mw_qp != to_sqp_const(qp)->serial)
		return false;
	return iova >= mw->iova && length <= mw->length &&
	       iova - mw->iova <= mw->length - length;
}

/**
 * sroce_mw_get_mr() - the MR a remote access through a window goes to
 * @mw: a window sroce_mr_get() found by @rkey; its reference is dropped
 * @qp: the QP receiving the access
 * @rkey: the key the request carried
 * @iova: first byte accessed
 * @length: bytes accessed
 * @access: the IB_ACCESS_* rights the access needs
 *
 * The window must be valid under exactly @rkey, in @qp's PD, bound to @qp
 * if it is of type 2, grant @access and contain the range (10.6.7.2).
 * The access then proceeds on the MR, as if its own key had been used,
 * and ends with sroce_mr_leave() of the MR: an invalidation of the window
 * waits for it (see "window users per CPU").
 *
 * Context: softirq or BH disabled.
 * Return: the MR, referenced and entered for the caller, or NULL when
 * refused.
 */
struct sroce_mr *sroce_mw_get_mr(struct sroce_mr *mw, const struct ib_qp *qp,
				 u32 rkey, u64 iova, u64 length, u32 access)
{
	struct sroce_mr *mr = NULL;
	unsigned long flags;

	/* Before the binding is read: see "window users per CPU". */
	sroce_mr_enter(mw);
	spin_lock_irqsave(&mw->mw_lock, flags);
	/* While bound, the MR cannot be deregistered: its table ref holds. */
	if (sroce_mw_grants(mw, qp, rkey, iova, length, access) &&
	    refcount_inc_not_zero(&mw->parent->ref))
		mr = mw->parent;
	spin_unlock_irqrestore(&mw->mw_lock, flags);
	sroce_mr_put(mw);
	if (mr && sroce_mr_check(mr, qp->pd, iova, length, 0)) {
		sroce_mr_put(mr);
		mr = NULL;
	}
	if (!mr)
		sroce_mr_leave(mw);
	return mr;
}

/**
 * sroce_mw_invalidate() - a Local Invalidate or Send with Invalidate of a
 *			   window
 * @mw: the window its key named
 * @pd: the PD of the QP asking
 * @rqp: for a Send with Invalidate, the QP that received it; NULL for a
 *	 Local Invalidate
 *
 * Only a bound type 2 window can be invalidated (o10-37.2.26), and by a
 * peer only through the QP it is bound to. Accesses through the window
 * still copying on other CPUs are waited for: on return none will touch
 * the MR through it again.
 *
 * Context: softirq or BH disabled, never between sroce_mr_enter() and
 * sroce_mr_leave().
 * Return: 0, or -EINVAL.
 */
int sroce_mw_invalidate(struct sroce_mr *mw, const struct ib_pd *pd,
			const struct ib_qp *rqp)
{
	unsigned long flags;
	int err = -EINVAL;

	spin_lock_irqsave(&mw->mw_lock, flags);
	if (mw->mw_type == IB_MW_TYPE_2 && mw->pd == pd && mw->valid &&
	    (!rqp || to_sqp_const(rqp)->serial == mw->mw_qp)) {
		sroce_mw_unbind_locked(mw);
		err = 0;
	}
	spin_unlock_irqrestore(&mw->mw_lock, flags);
	if (!err)
		sroce_mw_wait_cpus();
	return err;
}

static int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mr *mw;
	int err;

	/* ABI version 1 defines no driver-specific request. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;

	mw = kzalloc(sizeof(*mw), GFP_KERNEL);
	if (!mw)
		return -ENOMEM;
	mw->pd = ibmw->pd;
	mw->type = SROCE_MR_MW;
	mw->mw_type = ibmw->type;
	spin_lock_init(&mw->mw_lock);
	/* Bound to nothing, so not valid, until its first bind. */
	err = sroce_mr_table_add(&sdev->mrs, mw);
	if (err) {
		kfree(mw);
		return err;
	}
	ibmw->rkey = mw->key;
	to_smw(ibmw)->mr = mw;
	return 0;
}

/*
 * Unfindable first, so that no bind or access starts, then unbound, which
 * lets its MR be deregistered once the accesses through it that are still
 * copying have ended.
 */
static int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_mr *mw = to_smw(ibmw)->mr;
	unsigned long flags;

	sroce_mr_table_del(&to_sdev(ibmw->device)->mrs, mw);
	spin_lock_irqsave(&mw->mw_lock, flags);
	sroce_mw_unbind_locked(mw);
	spin_unlock_irqrestore(&mw->mw_lock, flags);
	sroce_mw_wait_cpus();
	kfree_rcu(mw, rcu);
	return 0;
}

const struct ib_device_ops sroce_mw_ops = {
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
};
