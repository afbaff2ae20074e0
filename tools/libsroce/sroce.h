/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libsroce: what the provider's files share.
 */
#ifndef LIBSROCE_H
#define LIBSROCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <rdma/sroce-abi.h>

struct sroce_context {
	struct verbs_context ibv_ctx;
};

static inline struct sroce_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct sroce_context, ibv_ctx.context);
}

/**
 * struct sroce_pd - a protection domain, or a parent domain of one
 * @ibv_pd: libibverbs' part; a parent domain's carries its PD's handle
 * @protection_domain: for a parent domain, the PD it stands for; NULL for
 *	a PD
 * @users: parent domains of this PD, or CQs made with this parent domain;
 *	while there are any, it is not deallocated
 * @alloc: the application's allocator of a parent domain, or NULL
 * @free: its counterpart
 * @pd_context: what the application gave for its allocators
 */
struct sroce_pd {
	struct ibv_pd ibv_pd;
	struct sroce_pd *protection_domain;
	unsigned int users;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

static inline struct sroce_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibv_pd);
}

struct sroce_pd *sroce_parent_domain_get(struct ibv_pd *ibpd);
void sroce_parent_domain_put(struct sroce_pd *pd);

/**
 * struct sroce_uqueue - a ring shared with the kernel (see sroce-abi.h)
 * @hdr: the mapping; the entries follow SROCE_QUEUE_HDR_BYTES in
 * @map_bytes: length of the mapping
 * @slots: number of entries, a power of two
 * @stride: bytes per entry
 */
struct sroce_uqueue {
	struct sroce_queue_hdr *hdr;
	size_t map_bytes;
	uint32_t slots;
	uint32_t stride;
};

int sroce_uqueue_map(struct sroce_uqueue *q, struct ibv_context *ibctx,
		     const struct sroce_queue_info *info);
void sroce_uqueue_unmap(struct sroce_uqueue *q);

static inline void *sroce_uqueue_at(const struct sroce_uqueue *q,
				    uint32_t idx)
{
	return (uint8_t *)q->hdr + SROCE_QUEUE_HDR_BYTES +
	       (size_t)(idx & (q->slots - 1)) * q->stride;
}

/**
 * struct sroce_qp - a queue pair and its mapped rings
 * @vqp: libibverbs' part, the extended one so that ibv_qp_to_qp_ex() works
 * @sq: the send ring
 * @rq: the receive ring; unmapped when the QP receives through an SRQ
 * @sq_lock: serialises senders
 * @rq_lock: serialises receivers
 * @max_send_sge: SGEs a send entry holds, as create_qp granted them
 * @max_inline: inline bytes a send entry holds, likewise
 * @sq_prod: producer index of entries written but not yet published;
 *	only meaningful under @sq_lock
 * @ex_wqe: the entry the extended API's wr_set_*() calls fill in
 * @ex_err: the first error of an extended-API batch, which wr_complete()
 *	reports after dropping the whole batch
 */
struct sroce_qp {
	struct verbs_qp vqp;
	struct sroce_uqueue sq;
	struct sroce_uqueue rq;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	uint32_t max_send_sge;
	uint32_t max_inline;
	uint32_t sq_prod;
	struct sroce_send_wqe *ex_wqe;
	int ex_err;
};

static inline struct sroce_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, vqp.qp);
}

int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
bool sroce_send_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode opcode);
bool sroce_send_is_atomic(enum ibv_wr_opcode opcode);
void sroce_send_wqe_atomic_write(struct sroce_send_wqe *wqe, uint32_t rkey,
				 uint64_t remote_addr, const void *value);
void sroce_send_wqe_bind(struct sroce_send_wqe *wqe, const struct ibv_mw *mw,
			 uint32_t rkey, const struct ibv_mw_bind_info *info);
struct sroce_send_wqe *sroce_sq_next(struct sroce_qp *qp);
int sroce_sq_publish(struct sroce_qp *qp);
uint64_t sroce_qp_ex_ops(enum ibv_qp_type type);
bool sroce_qp_ex_supported(void);
void sroce_qp_ex_init(struct sroce_qp *qp, uint64_t ops);

int sroce_post_recv_ring(struct sroce_uqueue *q, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);

/**
 * struct sroce_ah - an address handle
 * @ibv_ah: libibverbs' part
 * @ah_num: the kernel's name for the AH, put in UD send WQEs
 */
struct sroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;
};

static inline struct sroce_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibv_ah);
}

/* The verbs of each object kind, merged into the context's ops. */
extern const struct verbs_context_ops sroce_pd_ops;
void sroce_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);

extern const struct verbs_context_ops sroce_cq_ops;
extern const struct verbs_context_ops sroce_qp_ops;
extern const struct verbs_context_ops sroce_srq_ops;
extern const struct verbs_context_ops sroce_mr_ops;
extern const struct verbs_context_ops sroce_mw_ops;
extern const struct verbs_context_ops sroce_ah_ops;

#endif /* LIBSROCE_H */
