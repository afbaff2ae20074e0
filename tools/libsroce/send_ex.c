// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: the extended send API, ibv_wr_start() to ibv_wr_complete().
 *
 * Each ibv_wr_<opcode>() call starts an entry straight in the send ring
 * and the ibv_wr_set_*() calls after it fill that entry in. Nothing is the
 * kernel's before ibv_wr_complete(), which publishes the batch as
 * post_send does, or drops all of it when any call of the batch failed:
 * the calls return nothing, so the first error waits for wr_complete().
 * The send lock is held from wr_start() to wr_complete() or wr_abort().
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <ccan/array_size.h>

#include "sroce.h"

static struct sroce_qp *ex_to_sqp(struct ibv_qp_ex *ibqpx)
{
	return container_of(ibqpx, struct sroce_qp, vqp.qp_ex);
}

static void sroce_wr_fail(struct sroce_qp *qp, int err)
{
	if (!qp->ex_err)
		qp->ex_err = err;
	qp->ex_wqe = NULL;
}

/* Starts an entry for @opcode; NULL once the batch has failed. */
static struct sroce_send_wqe *sroce_wr_begin(struct ibv_qp_ex *ibqpx,
					     enum ibv_wr_opcode opcode)
{
	struct sroce_qp *qp = ex_to_sqp(ibqpx);
	struct sroce_send_wqe *wqe;

	qp->ex_wqe = NULL;
	if (qp->ex_err)
		return NULL;
	if (!sroce_send_opcode_ok(ibqpx->qp_base.qp_type, opcode)) {
		sroce_wr_fail(qp, EINVAL);
		return NULL;
	}
	wqe = sroce_sq_next(qp);
	if (!wqe) {
		sroce_wr_fail(qp, ENOMEM);
		return NULL;
	}
	/* The slot holds a stale entry: every header byte is rewritten. */
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = ibqpx->wr_id;
	wqe->opcode = opcode;
	/* Inline data comes only through wr_set_inline_data*(). */
	wqe->send_flags = ibqpx->wr_flags & ~IBV_SEND_INLINE;
	qp->sq_prod++;
	qp->ex_wqe = wqe;
	return wqe;
}

static void sroce_wr_rdma(struct ibv_qp_ex *ibqpx, enum ibv_wr_opcode opcode,
			  uint32_t rkey, uint64_t remote_addr, __be32 imm)
{
	struct sroce_send_wqe *wqe = sroce_wr_begin(ibqpx, opcode);

	if (!wqe)
		return;
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
	wqe->ex.imm_data = imm;
}

static void sroce_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				uint64_t remote_addr)
{
	sroce_wr_rdma(ibqpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void sroce_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm)
{
	sroce_wr_rdma(ibqpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		      imm);
}

static void sroce_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	sroce_wr_rdma(ibqpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void sroce_wr_atomic(struct ibv_qp_ex *ibqpx, enum ibv_wr_opcode opcode,
			    uint32_t rkey, uint64_t remote_addr,
			    uint64_t compare_add, uint64_t swap)
{
	struct sroce_send_wqe *wqe = sroce_wr_begin(ibqpx, opcode);

	if (!wqe)
		return;
	/* An atomic moves one aligned 8-byte word (IBTA 9.4.5). */
	if (remote_addr & 7) {
		sroce_wr_fail(ex_to_sqp(ibqpx), EINVAL);
		return;
	}
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

static void sroce_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	sroce_wr_atomic(ibqpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
			compare, swap);
}

static void sroce_wr_atomic_fetch_add(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	sroce_wr_atomic(ibqpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
			add, 0);
}

/* No SGE follows: the value is in the entry (sroce_send_wqe_atomic_write). */
static void sroce_wr_atomic_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				  uint64_t remote_addr, const void *atomic_wr)
{
	struct sroce_send_wqe *wqe = sroce_wr_begin(ibqpx,
						    IBV_WR_ATOMIC_WRITE);

	if (!wqe)
		return;
	sroce_send_wqe_atomic_write(wqe, rkey, remote_addr, atomic_wr);
}

static void sroce_wr_send(struct ibv_qp_ex *ibqpx)
{
	sroce_wr_begin(ibqpx, IBV_WR_SEND);
}

static void sroce_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm)
{
	struct sroce_send_wqe *wqe = sroce_wr_begin(ibqpx,
						    IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex.imm_data = imm;
}

static void sroce_wr_send_inv(struct ibv_qp_ex *ibqpx, uint32_t rkey)
{
	struct sroce_send_wqe *wqe = sroce_wr_begin(ibqpx,
						    IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex.invalidate_rkey = rkey;
}

static void sroce_wr_local_inv(struct ibv_qp_ex *ibqpx, uint32_t rkey)
{
	struct sroce_send_wqe *wqe = sroce_wr_begin(ibqpx, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex.invalidate_rkey = rkey;
}

static void sroce_wr_bind_mw(struct ibv_qp_ex *ibqpx, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct sroce_send_wqe *wqe;

	if (!mw || (!bind_info->mr && bind_info->length)) {
		sroce_wr_fail(ex_to_sqp(ibqpx), EINVAL);
		return;
	}
	wqe = sroce_wr_begin(ibqpx, IBV_WR_BIND_MW);
	if (wqe)
		sroce_send_wqe_bind(wqe, mw, rkey, bind_info);
}

static void sroce_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sroce_qp *qp = ex_to_sqp(ibqpx);
	struct sroce_send_wqe *wqe = qp->ex_wqe;

	if (!wqe)
		return;
	if (ibqpx->qp_base.qp_type != IBV_QPT_UD || !ah) {
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	wqe->wr.ud.ah_num = to_sah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
}

/* ibv_wr_set_xrc_srqn(): the remote XRC SRQ of an XRC initiator's entry. */
static void sroce_wr_set_xrc_srqn(struct ibv_qp_ex *ibqpx,
				  uint32_t remote_srqn)
{
	struct sroce_qp *qp = ex_to_sqp(ibqpx);
	struct sroce_send_wqe *wqe = qp->ex_wqe;

	if (!wqe)
		return;
	if (ibqpx->qp_base.qp_type != IBV_QPT_XRC_SEND) {
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	wqe->xrc_srqn = remote_srqn;
}

static void sroce_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct sroce_qp *qp = ex_to_sqp(ibqpx);
	struct sroce_send_wqe *wqe = qp->ex_wqe;
	uint64_t len = 0;
	size_t i;

	if (!wqe)
		return;
	if (num_sge > qp->max_send_sge) {
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_sge; i++) {
		wqe->sge[i].addr = sg_list[i].addr;
		wqe->sge[i].length = sg_list[i].length;
		wqe->sge[i].lkey = sg_list[i].lkey;
		len += sg_list[i].length;
	}
	if (sroce_send_is_atomic(wqe->opcode) && len < 8) {
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	wqe->num_sge = num_sge;
}

static void sroce_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	sroce_wr_set_sge_list(ibqpx, 1, &sge);
}

/* Inline data is payload going out: sends and writes only. */
static bool sroce_wr_inline_ok(const struct sroce_send_wqe *wqe)
{
	return wqe->opcode == IBV_WR_SEND ||
	       wqe->opcode == IBV_WR_SEND_WITH_IMM ||
	       wqe->opcode == IBV_WR_SEND_WITH_INV ||
	       wqe->opcode == IBV_WR_RDMA_WRITE ||
	       wqe->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static void sroce_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					  size_t num_buf,
					  const struct ibv_data_buf *buf_list)
{
	struct sroce_qp *qp = ex_to_sqp(ibqpx);
	struct sroce_send_wqe *wqe = qp->ex_wqe;
	uint64_t len = 0;
	size_t i;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (len > qp->max_inline || !sroce_wr_inline_ok(wqe)) {
		sroce_wr_fail(qp, EINVAL);
		return;
	}
	for (len = 0, i = 0; i < num_buf; i++) {
		memcpy(wqe->inline_data + len, buf_list[i].addr,
		       buf_list[i].length);
		len += buf_list[i].length;
	}
	wqe->inline_len = len;
	wqe->send_flags |= IBV_SEND_INLINE;
}

static void sroce_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	sroce_wr_set_inline_data_list(ibqpx, 1, &buf);
}

/* As post_send, a QP not yet in RTS takes nothing (IBTA C10-51). */
static void sroce_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct sroce_qp *qp = ex_to_sqp(ibqpx);

	pthread_spin_lock(&qp->sq_lock);
	qp->ex_wqe = NULL;
	qp->ex_err = ibqpx->qp_base.state < IBV_QPS_RTS ? EINVAL : 0;
}

/* Forgets the batch's entries: the producer index was never published. */
static void sroce_wr_drop(struct sroce_qp *qp)
{
	qp->sq_prod = qp->sq.hdr->prod;	/* only this side writes it */
	qp->ex_wqe = NULL;
	pthread_spin_unlock(&qp->sq_lock);
}

static int sroce_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct sroce_qp *qp = ex_to_sqp(ibqpx);
	int err = qp->ex_err;

	if (err) {
		sroce_wr_drop(qp);
		return err;
	}
	qp->ex_wqe = NULL;
	if (qp->sq_prod == qp->sq.hdr->prod) {
		pthread_spin_unlock(&qp->sq_lock);
		return 0;
	}
	return sroce_sq_publish(qp);
}

static void sroce_wr_abort(struct ibv_qp_ex *ibqpx)
{
	sroce_wr_drop(ex_to_sqp(ibqpx));
}

/* The IBV_QP_EX_WITH_* a QP of @type supports: bit n is IBV_WR_* n. */
uint64_t sroce_qp_ex_ops(enum ibv_qp_type type)
{
	uint64_t ops = 0;
	int op;

	for (op = IBV_WR_RDMA_WRITE; op <= IBV_WR_SEND_WITH_INV; op++)
		if (sroce_send_opcode_ok(type, op))
			ops |= 1ULL << op;
	/* Past IBV_WR_SEND_WITH_INV the flags no longer follow the opcodes. */
	if (sroce_send_opcode_ok(type, IBV_WR_ATOMIC_WRITE))
		ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
	return ops;
}

/*
 * libibverbs finds a QP's extended API by VERBS_QP_EX in struct verbs_qp's
 * comp_mask, which follows struct ibv_qp_ex. The rdma-core headers this
 * provider is built against (56.1) have one function pointer more at the
 * end of struct ibv_qp_ex (wr_flush) than Debian 12's libibverbs (44),
 * which looks for the flag one pointer earlier, inside what 56.1 calls
 * wr_flush: unused here, as sroce has no flush. Ask the library which of
 * the two it reads, once, with a QP made of nothing but the flag.
 */
static size_t sroce_qp_ex_flag_offset(void)
{
	static const size_t where[] = {
		offsetof(struct verbs_qp, comp_mask),
		offsetof(struct verbs_qp, qp_ex.wr_flush),
	};
	static size_t found;
	struct verbs_qp probe;
	size_t off = __atomic_load_n(&found, __ATOMIC_RELAXED);
	unsigned int i;

	for (i = 0; !off && i < ARRAY_SIZE(where); i++) {
		memset(&probe, 0, sizeof(probe));
		*(uint32_t *)((uint8_t *)&probe + where[i]) = VERBS_QP_EX;
		if (ibv_qp_to_qp_ex(&probe.qp))
			off = where[i];
	}
	__atomic_store_n(&found, off, __ATOMIC_RELAXED);
	return off;
}

/* Whether this libibverbs can be told about the extended API at all. */
bool sroce_qp_ex_supported(void)
{
	return sroce_qp_ex_flag_offset();
}

/* Every opcode's entry point: sroce_qp_ex_init() copies those asked for. */
static const struct ibv_qp_ex sroce_wr_opcodes = {
	.wr_rdma_write = sroce_wr_rdma_write,
	.wr_rdma_write_imm = sroce_wr_rdma_write_imm,
	.wr_send = sroce_wr_send,
	.wr_send_imm = sroce_wr_send_imm,
	.wr_rdma_read = sroce_wr_rdma_read,
	.wr_atomic_cmp_swp = sroce_wr_atomic_cmp_swp,
	.wr_atomic_fetch_add = sroce_wr_atomic_fetch_add,
	.wr_local_inv = sroce_wr_local_inv,
	.wr_send_inv = sroce_wr_send_inv,
	.wr_bind_mw = sroce_wr_bind_mw,
	.wr_atomic_write = sroce_wr_atomic_write,
};

#define SROCE_WR_SLOT(op, member) \
	{ IBV_QP_EX_WITH_##op, offsetof(struct ibv_qp_ex, member) }

/* Which IBV_QP_EX_WITH_* flag asks for which entry point. */
static const struct {
	uint64_t flag;
	size_t off;
} sroce_wr_slots[] = {
	SROCE_WR_SLOT(RDMA_WRITE, wr_rdma_write),
	SROCE_WR_SLOT(RDMA_WRITE_WITH_IMM, wr_rdma_write_imm),
	SROCE_WR_SLOT(SEND, wr_send),
	SROCE_WR_SLOT(SEND_WITH_IMM, wr_send_imm),
	SROCE_WR_SLOT(RDMA_READ, wr_rdma_read),
	SROCE_WR_SLOT(ATOMIC_CMP_AND_SWP, wr_atomic_cmp_swp),
	SROCE_WR_SLOT(ATOMIC_FETCH_AND_ADD, wr_atomic_fetch_add),
	SROCE_WR_SLOT(LOCAL_INV, wr_local_inv),
	SROCE_WR_SLOT(SEND_WITH_INV, wr_send_inv),
	SROCE_WR_SLOT(BIND_MW, wr_bind_mw),
	SROCE_WR_SLOT(ATOMIC_WRITE, wr_atomic_write),
};

/* Gives the QP the extended API, with the opcodes asked for in @ops. */
void sroce_qp_ex_init(struct sroce_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;
	uint8_t *flags = (uint8_t *)&qp->vqp + sroce_qp_ex_flag_offset();
	unsigned int i;

	x->wr_start = sroce_wr_start;
	x->wr_complete = sroce_wr_complete;
	x->wr_abort = sroce_wr_abort;
	x->wr_set_sge = sroce_wr_set_sge;
	x->wr_set_sge_list = sroce_wr_set_sge_list;
	x->wr_set_inline_data = sroce_wr_set_inline_data;
	x->wr_set_inline_data_list = sroce_wr_set_inline_data_list;
	x->wr_set_ud_addr = sroce_wr_set_ud_addr;
	x->wr_set_xrc_srqn = sroce_wr_set_xrc_srqn;
	/* Every entry point is one function pointer of the same size. */
	for (i = 0; i < ARRAY_SIZE(sroce_wr_slots); i++)
		if (ops & sroce_wr_slots[i].flag)
			memcpy((uint8_t *)x + sroce_wr_slots[i].off,
			       (const uint8_t *)&sroce_wr_opcodes +
			       sroce_wr_slots[i].off, sizeof(x->wr_send));
	*(uint32_t *)flags |= VERBS_QP_EX;
}
