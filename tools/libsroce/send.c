// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: send work requests, written into a QP's send ring.
 *
 * Posting is a store to shared memory. The kernel reads the ring on its own
 * while it has work; once it finds the ring empty it stops and sets
 * SROCE_QUEUE_F_DOORBELL, and only then does a post cost a system call (an
 * empty IB_USER_VERBS_CMD_POST_SEND), one per batch of requests.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/kern-abi.h>
#include <sroce/queue.h>

#include "sroce.h"

/*
 * The opcodes each transport carries (IBTA 9.4, Table 36 ff). An XRC
 * initiator has RC's remote operations; an XRC target sends nothing.
 */
bool sroce_send_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode opcode)
{
	bool xrc = type == IBV_QPT_XRC_SEND;

	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return type != IBV_QPT_XRC_RECV;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC || xrc;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC || xrc;
	case IBV_WR_ATOMIC_WRITE:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

bool sroce_send_is_atomic(enum ibv_wr_opcode opcode)
{
	return opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Inline data is payload going out; the flag means nothing to a read, an
 * atomic or a local invalidate, whose entries must carry their SGEs.
 */
static bool sroce_send_is_inline(const struct ibv_send_wr *wr)
{
	if (!(wr->send_flags & IBV_SEND_INLINE))
		return false;
	return wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM ||
	       wr->opcode == IBV_WR_SEND_WITH_INV ||
	       wr->opcode == IBV_WR_RDMA_WRITE ||
	       wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static uint64_t sroce_sge_bytes(const struct ibv_sge *sge, int num_sge)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < num_sge; i++)
		len += sge[i].length;
	return len;
}

/*
 * What the entry could not express, or the kernel would only turn into a
 * completion error later; 0 or EINVAL.
 */
static int sroce_send_check(const struct sroce_qp *qp,
			    const struct ibv_send_wr *wr)
{
	const struct ibv_qp *ibqp = &qp->vqp.qp;

	if (!sroce_send_opcode_ok(ibqp->qp_type, wr->opcode))
		return EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	/*
	 * An atomic write's value is its 8 bytes, wherever they are: the
	 * entry carries them. The target's alignment is the responder's to
	 * judge (a NAK, IBV_WC_REM_INV_REQ_ERR), as for a write.
	 */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE)
		return sroce_sge_bytes(wr->sg_list, wr->num_sge) == 8 ?
		       0 : EINVAL;
	if (sroce_send_is_inline(wr))
		return sroce_sge_bytes(wr->sg_list, wr->num_sge) >
		       qp->max_inline ? EINVAL : 0;
	if ((uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	/* An atomic moves one aligned 8-byte word (IBTA 9.4.5). */
	if (sroce_send_is_atomic(wr->opcode) &&
	    (sroce_sge_bytes(wr->sg_list, wr->num_sge) < 8 ||
	     wr->wr.atomic.remote_addr & 7))
		return EINVAL;
	if (ibqp->qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	/* A window is bound to part of an MR, or (type 1) to nothing. */
	if (wr->opcode == IBV_WR_BIND_MW &&
	    (!wr->bind_mw.mw ||
	     (!wr->bind_mw.bind_info.mr && wr->bind_mw.bind_info.length)))
		return EINVAL;
	return 0;
}

/**
 * sroce_send_wqe_bind() - the entry of a window bind
 * @wqe: the entry, zeroed
 * @mw: the window; the kernel finds it by its key's index
 * @rkey: the window's key from now on
 * @info: the MR, range and rights; no MR for a zero-length bind
 */
void sroce_send_wqe_bind(struct sroce_send_wqe *wqe, const struct ibv_mw *mw,
			 uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	wqe->wr.bind.addr = info->addr;
	wqe->wr.bind.length = info->length;
	wqe->wr.bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->wr.bind.mw_rkey = mw->rkey;
	wqe->wr.bind.new_rkey = rkey;
	wqe->wr.bind.access = info->mw_access_flags;
}

/* The opcode-specific part of the entry's header. */
static void sroce_send_wqe_wr(struct sroce_send_wqe *wqe,
			      const struct ibv_send_wr *wr,
			      enum ibv_qp_type type)
{
	if (wr->opcode == IBV_WR_BIND_MW) {
		sroce_send_wqe_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				    &wr->bind_mw.bind_info);
	} else if (type == IBV_QPT_UD) {
		wqe->wr.ud.ah_num = to_sah(wr->wr.ud.ah)->ah_num;
		wqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		wqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
	} else if (sroce_send_is_atomic(wr->opcode)) {
		wqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.atomic.rkey = wr->wr.atomic.rkey;
	} else {
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
	}
}

/* Copies what @wr's SGEs point at to @p; returns the bytes copied. */
static size_t sroce_send_gather(uint8_t *p, const struct ibv_send_wr *wr)
{
	size_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		memcpy(p + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	return len;
}

/* Copies what @wr's SGEs point at into the entry; checked to fit. */
static void sroce_send_wqe_inline(struct sroce_send_wqe *wqe,
				  const struct ibv_send_wr *wr)
{
	wqe->inline_len = sroce_send_gather(wqe->inline_data, wr);
}

/**
 * sroce_send_wqe_atomic_write() - the entry of an atomic write
 * @wqe: the entry, zeroed
 * @rkey: the target's rkey
 * @remote_addr: the target word
 * @value: the 8 bytes to store there, as they are to be in its memory
 *
 * The value travels in the entry (wr.atomic.compare_add), like inline
 * data whatever the QP's max_inline_data: the responder stores it at once.
 */
void sroce_send_wqe_atomic_write(struct sroce_send_wqe *wqe, uint32_t rkey,
				 uint64_t remote_addr, const void *value)
{
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.rkey = rkey;
	memcpy(&wqe->wr.atomic.compare_add, value, 8);
}

static void sroce_send_wqe_fill(struct sroce_send_wqe *wqe,
				const struct ibv_send_wr *wr,
				enum ibv_qp_type type)
{
	int i;

	/* The slot holds a stale entry: every header byte is rewritten. */
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;	/* IBV_WR_* are IB_UVERBS_WR_* */
	wqe->send_flags = wr->send_flags; /* and IBV_SEND_* are IB_SEND_* */
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		wqe->ex.invalidate_rkey = wr->invalidate_rkey;
	else
		wqe->ex.imm_data = wr->imm_data;
	if (wr->opcode == IBV_WR_ATOMIC_WRITE) {
		/* Taken now, from the SGEs (checked to hold 8 bytes). */
		uint8_t value[8];

		sroce_send_gather(value, wr);
		sroce_send_wqe_atomic_write(wqe, wr->wr.rdma.rkey,
					    wr->wr.rdma.remote_addr, value);
		wqe->send_flags &= ~IBV_SEND_INLINE;
		return;
	}
	sroce_send_wqe_wr(wqe, wr, type);
	/* Every XRC request names the SRQ it is for at the target. */
	if (type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = wr->qp_type.xrc.remote_srqn;

	if (sroce_send_is_inline(wr)) {
		sroce_send_wqe_inline(wqe, wr);
		return;
	}
	wqe->send_flags &= ~IBV_SEND_INLINE;
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/**
 * sroce_sq_next() - the slot for the next send entry
 * @qp: the QP, its send lock held
 *
 * The entry becomes the kernel's only with sroce_sq_publish(); until then
 * the caller may fill it, or drop it by not advancing @qp->sq_prod.
 *
 * Return: the slot, or NULL when the ring is full.
 */
struct sroce_send_wqe *sroce_sq_next(struct sroce_qp *qp)
{
	/* The kernel copied an entry out before moving past it. */
	uint32_t cons = __atomic_load_n(&qp->sq.hdr->cons, __ATOMIC_ACQUIRE);

	if (sroce_queue_full(qp->sq_prod, cons, qp->sq.slots))
		return NULL;
	return sroce_uqueue_at(&qp->sq, qp->sq_prod);
}

/*
 * Makes the entries up to @qp->sq_prod the kernel's; true when the kernel
 * has stopped reading the ring and must be rung.
 */
static bool sroce_sq_publish_prod(struct sroce_qp *qp)
{
	struct sroce_queue_hdr *hdr = qp->sq.hdr;

	/* Release: the entries are whole before the kernel can count them. */
	__atomic_store_n(&hdr->prod, qp->sq_prod, __ATOMIC_RELEASE);
	/*
	 * Pairs with the kernel's barrier between setting the flag and
	 * looking at prod once more: either it sees our prod, or we see its
	 * flag. Without it the load below could pass the store above and
	 * both sides would wait for the other.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&hdr->flags, __ATOMIC_RELAXED) &
	       SROCE_QUEUE_F_DOORBELL;
}

/*
 * The doorbell: a post_send command without work requests. The core
 * rejects a wqe_size below its own struct, even for none of them.
 */
static int sroce_sq_ring(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_send_resp resp = {};
	struct ibv_post_send cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.response = (uintptr_t)&resp,
		.qp_handle = ibqp->handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	if (write(ibqp->context->cmd_fd, &cmd, sizeof(cmd)) != sizeof(cmd))
		return errno;
	return 0;
}

/**
 * sroce_sq_publish() - hand the written entries to the kernel
 * @qp: the QP; called with its send lock held, returns with it released
 *
 * The system call, when one is needed, is made outside the lock: two
 * threads ringing at once cost one needless call, never a lost entry.
 *
 * Return: 0, or the errno of a failed doorbell.
 */
int sroce_sq_publish(struct sroce_qp *qp)
{
	bool ring = sroce_sq_publish_prod(qp);

	pthread_spin_unlock(&qp->sq_lock);
	return ring ? sroce_sq_ring(&qp->vqp.qp) : 0;
}

/*
 * Writes the chain into the ring, without publishing it; 0, or the errno
 * of the first request that could not be written, with *@bad_wr set.
 */
static int sroce_post_send_chain(struct sroce_qp *qp, struct ibv_send_wr *wr,
				 struct ibv_send_wr **bad_wr)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	struct sroce_send_wqe *wqe;
	int ret;

	for (; wr; wr = wr->next) {
		ret = sroce_send_check(qp, wr);
		if (!ret) {
			wqe = sroce_sq_next(qp);
			ret = wqe ? 0 : ENOMEM;
		}
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
		sroce_send_wqe_fill(wqe, wr, type);
		qp->sq_prod++;
	}
	return 0;
}

/**
 * sroce_post_send() - the post_send verb
 * @ibqp: the QP
 * @wr: the chain of requests
 * @bad_wr: set to the first request not posted
 *
 * Requests before a failing one stay posted, as the verbs require. A QP
 * not yet in RTS takes none (IBTA C10-51): before RTS the kernel would not
 * send them, and could only flush them on a later error.
 *
 * Return: 0; EINVAL for a QP not in RTS, SQD or ERR, or a request its QP
 * cannot carry (opcode, SGE count, inline size, atomic alignment); ENOMEM
 * when the ring is full; or the errno of a failed doorbell, in which case
 * *@bad_wr is the first request of the chain.
 */
int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	uint32_t first;
	int ret, err;

	if (ibqp->state < IBV_QPS_RTS) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq_lock);
	first = qp->sq_prod;
	ret = sroce_post_send_chain(qp, wr, bad_wr);
	if (qp->sq_prod == first) {
		pthread_spin_unlock(&qp->sq_lock);
		return ret;
	}
	err = sroce_sq_publish(qp);
	if (err && !ret) {
		*bad_wr = wr;
		ret = err;
	}
	return ret;
}
