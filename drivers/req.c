// SPDX-License-Identifier: GPL-2.0
/*
 * The requester: send WQEs are copied once out of the shared ring into the
 * kernel's copy (struct sroce_swqe), checked there, and turned into
 * packets. A WQE keeps its ring slot until it completes, so the ring's
 * capacity is what the process was promised; the kernel copy is what
 * retransmissions are built from, whatever the process writes later.
 *
 * Sending starts in the context that rang the doorbell, within a budget;
 * what is left goes to a worker. ACKs that open the window, the retransmit
 * timer and the RNR timer run it again (completer, comp.c).
 */
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/ktime.h>
#include <rdma/ib_verbs.h>

#include "cc.h"
#include "comp.h"
#include "counters.h"
#include "device.h"
#include "limits.h"
#include "mr.h"
#include "mw.h"
#include "msg.h"
#include "net.h"
#include "opcode.h"
#include "payload.h"
#include "pkt.h"
#include "qp.h"
#include "req.h"
#include "rtt.h"

/* Packets sent in the posting context before the worker takes over. */
#define SROCE_REQ_BUDGET_POST	64
#define SROCE_REQ_BUDGET_WORK	256

static void sroce_req_fault_done(struct sroce_fault *f)
{
	sroce_comp_fault_done(container_of(f, struct sroce_qp, req.fault));
}

int sroce_req_init(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->stride = offsetof(struct sroce_swqe, wqe) + qp->sq.q.stride;
	req->wqes = kvcalloc(qp->sq.q.slots, req->stride, SROCE_GFP_OBJ);
	if (!req->wqes)
		return -ENOMEM;
	timer_setup(&req->timer, sroce_comp_timeout, 0);
	timer_setup(&req->rnr_timer, sroce_comp_rnr_timeout, 0);
	sroce_burst_init(&req->burst);
	INIT_WORK(&qp->send_work, sroce_req_work);
	sroce_fault_init(&req->fault, sroce_req_fault_done);
	sroce_cc_init(qp);
	return 0;
}

/* Nothing of the requester runs after this: its timers, its worker. */
void sroce_req_stop(struct sroce_qp *qp)
{
	/* First: when done, a fault runs the requester. */
	sroce_fault_stop(&qp->req.fault);
	del_timer_sync(&qp->req.timer);
	del_timer_sync(&qp->req.rnr_timer);
	sroce_cc_stop(qp);
	cancel_work_sync(&qp->send_work);
}

/* After sroce_req_stop(), or before anything could run. */
void sroce_req_fini(struct sroce_qp *qp)
{
	kvfree(qp->req.wqes);
}

static void sroce_req_set_doorbell(struct sroce_qp *qp, bool on)
{
	u32 *flags = &qp->sq.q.hdr->flags;

	WRITE_ONCE(*flags, on ? SROCE_QUEUE_F_DOORBELL : 0);
}

/*
 * Forgets everything sent: the ring was emptied (RESET, or the error
 * state's flush).
 *
 * Context: sq_lock held.
 */
void sroce_req_reset(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->sq_lock);

	req->head = qp->sq.cons;
	req->cur = qp->sq.cons;
	req->off = 0;
	req->rd_out = 0;
	req->rnr_wait = false;
	req->nak_seen = false;
	req->fault_rewind = false;
	sroce_fault_forget(&req->fault);
	sroce_cc_reset(qp);
	sroce_rtt_reset(&req->rtt);
	sroce_req_set_doorbell(qp, true);
}

/**
 * sroce_req_set_retry() - take the retry counts and the ACK timeout
 * @qp: the QP, whose attributes give them
 *
 * At RTS, and again when SQD to SQD changes them.
 *
 * Context: sq_lock held.
 */
void sroce_req_set_retry(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	const struct ib_qp_attr *a = &qp->attr;
	u64 usecs;

	lockdep_assert_held(&qp->sq_lock);

	req->retry = a->retry_cnt;
	req->rnr_retry = a->rnr_retry;
	/* 4.096 us * 2^timeout; 0 means wait forever (9.7.6.1.3). */
	req->timeout = 0;
	if (a->timeout) {
		usecs = min_t(u64, (4096ULL << a->timeout) / 1000, U32_MAX);
		req->timeout = max(usecs_to_jiffies(usecs),
				   msecs_to_jiffies(SROCE_MIN_ACK_TIMEOUT_MS));
	}
	req->rto = sroce_rtt_rto(&req->rtt, req->timeout);
}

/* Context: modify_qp to RTS, under sq_lock. */
void sroce_req_start(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	const struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->sq_lock);

	req->psn = a->sq_psn;
	req->noack = 0;
	req->max_psn = a->sq_psn;
	req->acked = a->sq_psn;
	req->cwnd = SROCE_MAX_INFLIGHT;
	req->mtu = sroce_qp_is_ud(qp) ?
		   ib_mtu_enum_to_int(to_sdev(qp->ibqp.device)->port.active_mtu) :
		   ib_mtu_enum_to_int(a->path_mtu);
	sroce_req_set_retry(qp);
}

/* Not an opcode family: a WR opcode this QP may not post. */
#define SROCE_REQ_BAD_OP	0xff

/* The opcode family of a WR opcode, if @qp may post it. */
static u8 sroce_wr_family(const struct sroce_qp *qp, u32 opcode)
{
	enum ib_qp_type qpt = qp->ibqp.qp_type;
	bool rc = sroce_qp_req_rc(qp), uc = qpt == IB_QPT_UC;
	/* XRC has RC's sends, writes, reads and atomics, none of the rest. */
	bool rc_only = qpt == IB_QPT_RC;

	switch (opcode) {
	case IB_UVERBS_WR_LOCAL_INV:
		return SROCE_REQ_LOCAL;
	case IB_UVERBS_WR_BIND_MW:
		/* Windows are user objects; kernel WRs have no bind member. */
		return (rc_only || uc) && !sroce_qp_is_kernel(qp) ?
		       SROCE_REQ_LOCAL : SROCE_REQ_BAD_OP;
	case IB_WR_REG_MR:
		return sroce_qp_is_kernel(qp) ?
		       SROCE_REQ_LOCAL : SROCE_REQ_BAD_OP;
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return SROCE_OP_SEND_FIRST;
	case IB_UVERBS_WR_SEND_WITH_INV:
		return rc ? SROCE_OP_SEND_FIRST : SROCE_REQ_BAD_OP;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return rc || uc ? SROCE_OP_WRITE_FIRST : SROCE_REQ_BAD_OP;
	case IB_UVERBS_WR_RDMA_READ:
		return rc ? SROCE_OP_READ_REQ : SROCE_REQ_BAD_OP;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return rc ? SROCE_OP_CMP_SWAP : SROCE_REQ_BAD_OP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return rc ? SROCE_OP_FETCH_ADD : SROCE_REQ_BAD_OP;
	case SROCE_WR_ATOMIC_WRITE:
		/* Kernel WRs have no member for its value (post.c). */
		return rc_only && !sroce_qp_is_kernel(qp) ?
		       SROCE_OP_ATOMIC_WRITE : SROCE_REQ_BAD_OP;
	default:
		return SROCE_REQ_BAD_OP;
	}
}

/* Sums the SGEs' lengths; false when there are too many or too much. */
static bool sroce_wqe_len(const struct sroce_qp *qp,
			  const struct sroce_send_wqe *w, u32 *len)
{
	u64 sum = 0;
	u32 i;

	if (w->send_flags & IB_SEND_INLINE) {
		*len = w->inline_len;
		return w->inline_len <= qp->cap.max_inline_data;
	}
	if (w->num_sge > qp->cap.max_send_sge)
		return false;
	for (i = 0; i < w->num_sge; i++)
		sum += w->sge[i].length;
	*len = sum;
	return sum <= SROCE_MAX_MSG_SZ;
}

/**
 * sroce_req_check() - is a send WQE one this QP can execute?
 * @qp: the QP
 * @swqe: the kernel's copy, just taken from the ring
 *
 * Everything the process wrote is checked here, once, against the QP's
 * own numbers: what the rest of the requester reads is then safe to use.
 *
 * Return: IB_WC_SUCCESS, or the status the WQE completes with.
 */
static u8 sroce_req_check(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_send_wqe *w = &swqe->wqe;
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	bool inl = w->send_flags & IB_SEND_INLINE;
	u32 access;

	swqe->wire_op = sroce_wr_family(qp, w->opcode);
	if (swqe->wire_op == SROCE_REQ_BAD_OP)
		return IB_WC_LOC_QP_OP_ERR;
	if (swqe->wire_op == SROCE_REQ_LOCAL) {
		swqe->len = 0;
		return IB_WC_SUCCESS;
	}
	/* Its value is in the WQE itself: no SGE, nothing local to check. */
	if (swqe->wire_op == SROCE_OP_ATOMIC_WRITE) {
		swqe->len = SROCE_ATOMIC_WRITE_BYTES;
		return IB_WC_SUCCESS;
	}
	if (!sroce_wqe_len(qp, w, &swqe->len))
		return IB_WC_LOC_LEN_ERR;
	if (sroce_msg_is_rd(swqe->wire_op) && inl)
		return IB_WC_LOC_QP_OP_ERR;
	if (sroce_msg_is_atomic(swqe->wire_op) && swqe->len != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	if (sroce_qp_is_ud(qp)) {
		if (swqe->len > qp->req.mtu)
			return IB_WC_LOC_LEN_ERR;
		if (sroce_qp_is_kernel(qp))
			swqe->av = qp->kav[sroce_queue_slot(qp->req.head,
							    qp->sq.q.slots)];
		else if (sroce_ah_lookup_av(qp->uc, qp->ibqp.pd,
					    w->wr.ud.ah_num, &swqe->av))
			return IB_WC_LOC_QP_OP_ERR;
	}
	if (inl)
		return IB_WC_SUCCESS;
	access = sroce_msg_is_rd(swqe->wire_op) ? IB_ACCESS_LOCAL_WRITE : 0;
	if (sroce_sge_check(sdev, qp->ibqp.pd, w->sge, w->num_sge, access))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

/*
 * Takes the next posted WQE into the kernel's copy.
 * Return: 1 taken, 0 none posted, -EIO garbage ring index.
 */
static int sroce_req_fetch(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *swqe = sroce_swqe_at(qp, req->head);
	int ret;

	ret = sroce_wq_peek(&qp->sq, req->head, &swqe->wqe, qp->sq.q.stride);
	if (ret <= 0)
		return ret;
	swqe->first_psn = 0;
	swqe->last_psn = 0;
	swqe->resp_off = 0;
	swqe->rewind_off = U32_MAX;
	swqe->ahead = 0;
	swqe->numbered = false;
	swqe->sent = false;
	swqe->done = false;
	swqe->status = sroce_req_check(qp, swqe);
	if (swqe->status)
		swqe->done = true;
	req->head++;
	return 1;
}

/*
 * The queue looks empty: say so to the provider, then look once more,
 * since it may have posted before it could see the flag.
 */
static bool sroce_req_idle(struct sroce_qp *qp)
{
	sroce_req_set_doorbell(qp, true);
	smp_mb(); /* flag store before prod load; pairs with the provider */
	if (READ_ONCE(qp->sq.q.hdr->prod) != qp->req.head) {
		sroce_req_set_doorbell(qp, false);
		return false;
	}
	return true;
}

static u8 sroce_transport(enum ib_qp_type qpt)
{
	switch (qpt) {
	case IB_QPT_UC:
		return SROCE_TRANSPORT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SROCE_TRANSPORT_UD;
	case IB_QPT_XRC_INI:
		return SROCE_TRANSPORT_XRC;
	default:
		return SROCE_TRANSPORT_RC;
	}
}

/**
 * sroce_req_rd_len() - the DMA length a read request from @off asks for
 * @qp: the QP
 * @swqe: a read
 * @off: the first byte asked for
 *
 * The rest of the read, except when the read is asked for again after a
 * loss (@swqe->rewind_off set): then in pieces of SROCE_RD_RETRY_PKTS
 * packets, each asked for when the one before it is complete (the
 * completer does). A responder answers a repeated read request for part
 * of the original read, as it must for one that starts at the first
 * missing packet. One that queues a whole response at once, asked for the
 * whole rest of a read of megabytes, overflows its own queue, which drops
 * from its head the very packets we lack, and recovery never ends.
 * (docs/INTEROP.md, "Bugs interop found", 4.)
 *
 * The pieces are cut at fixed offsets of the read, and a request from
 * within one asks for the rest of that one only. If the original request
 * was lost, the responder took the first piece that came as a new read of
 * that piece's length, and answers a repeated request only within what it
 * took: a piece that began at the first missing packet would reach into
 * the next one, be dropped each time, and the read fail with its retries.
 *
 * Return: bytes.
 */
u32 sroce_req_rd_len(const struct sroce_qp *qp,
		     const struct sroce_swqe *swqe, u32 off)
{
	u32 piece = SROCE_RD_RETRY_PKTS * qp->req.mtu;
	u32 rest = swqe->len - off;

	if (swqe->rewind_off == U32_MAX)
		return rest;
	return min(rest, piece - off % piece);
}

/*
 * An atomic write's RETH and payload: its WQE names the target and holds
 * the value in @wr.atomic (remote_addr, rkey, compare_add), the 8 bytes
 * as they are to be in the target's memory, sent as they are.
 */
static void sroce_req_atomic_write_reth(const struct sroce_send_wqe *w,
					u8 *bth)
{
	u8 op = SROCE_OP_ATOMIC_WRITE;
	struct sroce_reth *reth;

	reth = (void *)(bth + sroce_hdr_offset(op, SROCE_HAS_RETH));
	reth->va = cpu_to_be64(w->wr.atomic.remote_addr);
	reth->rkey = cpu_to_be32(w->wr.atomic.rkey);
	reth->len = cpu_to_be32(SROCE_ATOMIC_WRITE_BYTES);
	memcpy(bth + sroce_hdr_offset(op, SROCE_HAS_PAYLOAD),
	       &w->wr.atomic.compare_add, SROCE_ATOMIC_WRITE_BYTES);
}

/* Fills the extended headers a request packet's opcode calls for. */
static void sroce_req_headers(struct sroce_qp *qp, struct sroce_swqe *swqe,
			      u8 opcode, u8 *bth, u32 off)
{
	const struct sroce_send_wqe *w = &swqe->wqe;
	u32 has = sroce_opcode[opcode].mask;
	struct sroce_atomic_eth *aeth;
	struct sroce_deth *deth;
	struct sroce_xrceth *xrceth;
	struct sroce_reth *reth;
	u32 qkey;

	if (has & SROCE_HAS_XRCETH) {
		xrceth = (void *)(bth + sroce_hdr_offset(opcode,
							 SROCE_HAS_XRCETH));
		xrceth->srqn = cpu_to_be32(w->xrc_srqn &
					   SROCE_XRCETH_SRQN_MASK);
	}
	if (has & SROCE_HAS_DETH) {
		deth = (void *)(bth + sroce_hdr_offset(opcode, SROCE_HAS_DETH));
		/* A Q_Key with the top bit set means "use the QP's" (10.2.5). */
		qkey = w->wr.ud.remote_qkey & BIT(31) ? qp->attr.qkey :
		       w->wr.ud.remote_qkey;
		deth->qkey = cpu_to_be32(qkey);
		deth->sqp = cpu_to_be32(qp->ibqp.qp_num);
	}
	if (has & SROCE_ATOMIC_WRITE) {
		sroce_req_atomic_write_reth(w, bth);
	} else if (has & SROCE_HAS_RETH) {
		reth = (void *)(bth + sroce_hdr_offset(opcode, SROCE_HAS_RETH));
		/* A resumed read asks only for what did not arrive. */
		reth->va = cpu_to_be64(w->wr.rdma.remote_addr + off);
		reth->rkey = cpu_to_be32(w->wr.rdma.rkey);
		reth->len = cpu_to_be32(swqe->wire_op == SROCE_OP_READ_REQ ?
					sroce_req_rd_len(qp, swqe, off) :
					swqe->len - off);
	}
	if (has & SROCE_HAS_ATOMICETH) {
		aeth = (void *)(bth + sroce_hdr_offset(opcode,
						       SROCE_HAS_ATOMICETH));
		aeth->va = cpu_to_be64(w->wr.atomic.remote_addr);
		aeth->rkey = cpu_to_be32(w->wr.atomic.rkey);
		if (swqe->wire_op == SROCE_OP_CMP_SWAP) {
			aeth->swap_add = cpu_to_be64(w->wr.atomic.swap);
			aeth->compare = cpu_to_be64(w->wr.atomic.compare_add);
		} else {
			aeth->swap_add = cpu_to_be64(w->wr.atomic.compare_add);
			aeth->compare = 0;
		}
	}
	if (has & SROCE_HAS_IMMDT)
		*(__be32 *)(bth + sroce_hdr_offset(opcode, SROCE_HAS_IMMDT)) =
			w->ex.imm_data;
	if (has & SROCE_HAS_IETH)
		*(__be32 *)(bth + sroce_hdr_offset(opcode, SROCE_HAS_IETH)) =
			cpu_to_be32(w->ex.invalidate_rkey);
}

/* One packet's payload, attached or copied; see sroce_payload_gather(). */
static int sroce_req_payload(struct sroce_qp *qp, struct sroce_swqe *swqe,
			     struct sk_buff *skb, u8 *dst, u32 off, u32 len)
{
	const struct sroce_send_wqe *w = &swqe->wqe;

	if (w->send_flags & IB_SEND_INLINE) {
		memcpy(dst, w->inline_data + off, len);
		return 0;
	}
	return sroce_payload_gather(to_sdev(qp->ibqp.device), qp->ibqp.pd,
				    &qp->req.fault, skb, dst, w->sge, w->num_sge,
				    off, len);
}

/**
 * sroce_req_packet() - build and send one request packet
 * @qp: the QP
 * @swqe: the WQE the packet belongs to
 * @opcode: the packet's opcode, transport bits included
 * @off: message offset of its payload (or, for a read, of the part asked)
 * @len: payload bytes
 * @ack_req: ask for an ACK
 *
 * Only RC sends from the application's pages: its WQE completes when the
 * peer acknowledged the data, so after the frames left. A UD or UC WQE
 * completes once its last packet is handed to the netdev, which may hold
 * it in a qdisc for a while: a buffer reused at once would go out changed
 * under the ICRC computed before, a silent loss. Those are copied.
 *
 * Return: 0 (the packet was sent or lost on the way, which the protocol
 * recovers from), -ENOMEM, -EAGAIN while a page of an ODP MR is faulted
 * in, or -EACCES/-ERANGE/-EFAULT when an lkey went bad.
 */
static int sroce_req_packet(struct sroce_qp *qp, struct sroce_swqe *swqe,
			    u8 opcode, u32 off, u32 len, bool ack_req)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	const struct sroce_av *av = sroce_qp_is_ud(qp) ?
				    &swqe->av : &qp->av;
	unsigned int hdr = sroce_opcode[opcode].hdr_len;
	bool inl = swqe->wqe.send_flags & IB_SEND_INLINE;
	bool aw = opcode == SROCE_OP_ATOMIC_WRITE;
	bool zcopy = !inl && !aw && sroce_qp_req_rc(qp) &&
		     sroce_payload_zcopy(sdev, av->dmac, len);
	bool se = swqe->wqe.send_flags & IB_SEND_SOLICITED &&
		  sroce_opcode[opcode].mask & SROCE_LAST;
	u32 dqpn = sroce_qp_is_ud(qp) ? swqe->wqe.wr.ud.remote_qpn :
		   qp->attr.dest_qp_num;
	struct sk_buff *skb;
	int err;

again:
	skb = sroce_net_alloc(sdev, av, hdr + (zcopy ? 0 : len), GFP_ATOMIC);
	if (!skb)
		return -ENOMEM;
	sroce_qp_own_skb(qp, skb);
	sroce_bth_init((struct sroce_bth *)skb->data, opcode, se,
		       sroce_pad(len), SROCE_DEFAULT_PKEY, dqpn, qp->req.psn,
		       ack_req);
	sroce_req_headers(qp, swqe, opcode, skb->data, off);
	if (sroce_opcode[opcode].mask & SROCE_HAS_PAYLOAD && !aw) {
		err = sroce_req_payload(qp, swqe, skb,
					zcopy ? NULL : skb->data + hdr, off,
					len);
		if (err) {
			kfree_skb(skb);
			if (err != -E2BIG)
				return err;
			zcopy = false;
			goto again;
		}
		if (zcopy)
			sroce_count(sdev, SROCE_CNT_TX_ZEROCOPY);
	}
	sroce_net_send(sdev, &qp->req.burst, av, skb, qp->sport);
	return 0;
}

/*
 * A read, atomic or atomic write: one request; the answer is up to the
 * completer. An atomic write carries its 8 bytes, and asks for its answer
 * as a write's last packet does.
 */
static int sroce_req_send_rd(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_req *req = &qp->req;
	u8 op = sroce_transport(qp->ibqp.qp_type) | swqe->wire_op;
	bool aw = op == SROCE_OP_ATOMIC_WRITE;
	int err;

	err = sroce_req_packet(qp, swqe, op, req->off,
			       aw ? SROCE_ATOMIC_WRITE_BYTES : 0, aw);
	if (err)
		return err;
	/*
	 * Timed to its first answer, as a send's ACK request is to its ACK:
	 * a peer that only reads is measured too. A first transmission only.
	 */
	if (!req->off && sroce_psn_cmp(req->psn, req->max_psn) >= 0)
		sroce_rtt_probe(&req->rtt, req->psn, ktime_get_ns());
	req->psn = sroce_psn_add(swqe->last_psn, 1);
	req->rd_out++;
	swqe->sent = true;
	req->cur++;
	req->off = 0;
	return 0;
}

/*
 * Is the packet at req->psn the last the window allows before an
 * acknowledgment? It asks for one then, or nothing would come back
 * until the timer (the window is not a multiple of SROCE_ACK_EVERY
 * while it grows).
 */
static bool sroce_req_window_ends(const struct sroce_qp *qp)
{
	const struct sroce_req *req = &qp->req;

	return sroce_psn_cmp(sroce_psn_add(req->psn, 1),
			     sroce_psn_add(req->acked, req->cwnd)) >= 0;
}

/*
 * Does this run go on, right after cur's last packet, with the next WQE, a
 * send or write posted and sound? Then that packet need not ask for an
 * ACK: a later one of the run does, and ACKs are cumulative. The next WQE
 * is fetched here if it was not yet (the run would fetch it next).
 * Anything else after a message, or nothing, or a run that stops here
 * (its budget, the netdev's queue or the window full, a fence), has it
 * ask now: the responder holds a packet that asks for nothing until one
 * that does comes, and a Local Invalidate waits for this ACK.
 */
static bool sroce_req_data_follows(struct sroce_qp *qp, bool last_turn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *next;

	if (last_turn || READ_ONCE(qp->state) != IB_QPS_RTS)
		return false;
	if (atomic_read(&qp->ref->inflight) + 1 >= SROCE_INFLIGHT_HIGH ||
	    sroce_req_window_ends(qp))
		return false;
	if (req->cur + 1 == req->head &&
	    (READ_ONCE(qp->sq.q.hdr->prod) == req->head ||
	     sroce_req_fetch(qp) <= 0))
		return false;
	next = sroce_swqe_at(qp, req->cur + 1);
	return !next->status && !next->done &&
	       next->wire_op != SROCE_REQ_LOCAL &&
	       !sroce_msg_is_rd(next->wire_op) &&
	       !(next->wqe.send_flags & IB_SEND_FENCE && req->rd_out);
}

/*
 * One packet of a send or write; @last_turn: the run's budget ends with
 * it.
 */
static int sroce_req_send_data(struct sroce_qp *qp, struct sroce_swqe *swqe,
			       bool last_turn)
{
	struct sroce_req *req = &qp->req;
	u32 len = min(swqe->len - req->off, req->mtu);
	bool first = !req->off, last = req->off + len == swqe->len;
	u8 op = sroce_transport(qp->ibqp.qp_type) |
		sroce_msg_opcode(swqe->wire_op, swqe->wqe.opcode, first,
				 last);
	bool rc = sroce_qp_req_rc(qp);
	bool ack_req;
	int err;

	/*
	 * Counted from the last request, not by PSN: a message's first PSN is
	 * anything, so a PSN rule would ask twice in most 64-packet messages.
	 * A message the run follows with another asks for none at its end.
	 */
	ack_req = rc && ((last && !sroce_req_data_follows(qp, last_turn)) ||
			 req->noack + 1 >= SROCE_ACK_EVERY ||
			 sroce_req_window_ends(qp));
	err = sroce_req_packet(qp, swqe, op, req->off, len, ack_req);
	if (err)
		return err;
	/* A first transmission's round trip: never a retransmission's. */
	if (ack_req && sroce_psn_cmp(req->psn, req->max_psn) >= 0)
		sroce_rtt_probe(&req->rtt, req->psn, ktime_get_ns());
	req->noack = ack_req ? 0 : req->noack + 1;
	req->psn = sroce_psn_add(req->psn, 1);
	req->off += len;
	if (!last)
		return 0;
	swqe->sent = true;
	/* Nothing answers UC and UD: they are done when sent. */
	if (!rc)
		swqe->done = true;
	req->cur++;
	req->off = 0;
	return 0;
}

/**
 * sroce_req_rd_limit() - how many reads and atomics may be outstanding now
 * @qp: an RC QP
 *
 * max_rd_atomic, except while the oldest unfinished read or atomic has had
 * to be asked for again (its answer, or part of it, was lost): then only
 * that one, until it completes. A responder that queues whole read
 * responses at once would otherwise get the repeated request together
 * with every later read again; its queue, full, drops from its head the
 * very response we are missing, every time. The same back-off as TCP's
 * window after a loss, in units of reads. (docs/INTEROP.md, "Bugs interop
 * found", 3.)
 *
 * Return: the limit for req->rd_out.
 */
static u32 sroce_req_rd_limit(struct sroce_qp *qp)
{
	u32 max_rd = max_t(u32, qp->attr.max_rd_atomic, 1);
	struct sroce_swqe *swqe;
	u32 idx;

	for (idx = qp->sq.cons; idx != qp->req.head; idx++) {
		swqe = sroce_swqe_at(qp, idx);
		if (swqe->done)
			continue;
		if (sroce_msg_is_rd(swqe->wire_op) && swqe->rewind_off != U32_MAX)
			return 1;
		break;
	}
	return max_rd;
}

/* May the WQE at cur start (or go on) now, with a packet at req->psn? */
static bool sroce_req_may_send(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_req *req = &qp->req;

	if (sroce_qp_tx_full(qp) || !sroce_cc_may_send(qp))
		return false;
	if (!sroce_qp_req_rc(qp))
		return true;
	if (sroce_psn_cmp(req->psn, sroce_psn_add(req->acked, req->cwnd)) >= 0)
		return false;
	if (req->off)
		return true;
	if (swqe->wqe.send_flags & IB_SEND_FENCE && req->rd_out)
		return false;
	return !sroce_msg_is_rd(swqe->wire_op) ||
	       req->rd_out < sroce_req_rd_limit(qp);
}

/*
 * A WQE's PSNs are given once, at its first packet, from the next fresh
 * PSN; every packet's PSN, first send or retransmission, follows from the
 * WQE and the offset in it, never from what was sent last.
 */
static void sroce_req_number(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_req *req = &qp->req;
	u32 n = sroce_msg_npkts(swqe->len, req->mtu);

	if (!swqe->numbered) {
		swqe->first_psn = req->max_psn;
		if (sroce_msg_is_atomic(swqe->wire_op))
			n = 1;
		swqe->last_psn = sroce_psn_add(swqe->first_psn, n - 1);
		swqe->numbered = true;
	}
	req->psn = sroce_psn_add(swqe->first_psn, req->off / req->mtu);
}

/*
 * Sends the next packet of the WQE at cur, the run's last if @last_turn;
 * 0 or why it could not.
 */
static int sroce_req_step(struct sroce_qp *qp, struct sroce_swqe *swqe,
			  bool last_turn)
{
	struct sroce_req *req = &qp->req;
	u32 bytes = 0;
	int err;

	sroce_req_number(qp, swqe);
	if (!sroce_req_may_send(qp, swqe))
		return -EAGAIN;
	if (sroce_msg_is_rd(swqe->wire_op)) {
		err = sroce_req_send_rd(qp, swqe);
	} else {
		bytes = min(swqe->len - req->off, req->mtu);
		err = sroce_req_send_data(qp, swqe, last_turn);
	}
	if (err)
		return err;
	sroce_cc_sent(&qp->cc, bytes);
	if (sroce_psn_cmp(req->psn, req->max_psn) > 0)
		req->max_psn = req->psn;
	return 0;
}

/**
 * sroce_req_local() - carry out a WQE that sends nothing
 * @qp: the QP
 * @swqe: a Local Invalidate, a window bind or (kernel QPs) a fast
 *	  registration, at cur
 *
 * A registration or window bind takes effect at once, in WQE order. An
 * invalidation waits until everything before it has completed: until then
 * a retransmission may still read the MR it invalidates.
 *
 * Return: false when it must wait, true when it is done (or failed, to
 * complete in error once its turn comes).
 */
static bool sroce_req_local(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	const struct sroce_send_wqe *w = &swqe->wqe;
	struct sroce_req *req = &qp->req;
	u8 status = IB_WC_LOC_PROT_ERR;
	int err;

	if (w->opcode == IB_UVERBS_WR_LOCAL_INV) {
		/* Retire what is done: UD and UC answer nothing that would. */
		sroce_comp_complete(qp);
		if (qp->sq.cons != req->cur)
			return false;
		err = sroce_mr_invalidate(sdev, qp->ibqp.pd,
					  w->ex.invalidate_rkey, NULL);
	} else if (w->opcode == IB_UVERBS_WR_BIND_MW) {
		err = sroce_mw_bind(qp, w);
		status = IB_WC_MW_BIND_ERR;
	} else {
		err = sroce_mr_fast_reg(sdev, qp->ibqp.pd,
					w->ex.invalidate_rkey,
					(int)w->wr.rdma.remote_addr);
	}
	swqe->done = true;
	if (err) {
		swqe->status = status;
		return true;
	}
	swqe->sent = true;
	req->cur++;
	req->off = 0;
	return true;
}

/*
 * In RTS, send; in SQD, only finish the message in progress (10.3.1.1):
 * a peer must not be left waiting for the rest of one.
 */
static bool sroce_req_sending(const struct sroce_qp *qp)
{
	u8 state = READ_ONCE(qp->state);

	if (qp->req.rnr_wait)
		return false;
	return state == IB_QPS_RTS || (state == IB_QPS_SQD && qp->req.off);
}

/*
 * SQD, and every message started has completed: the send queue is
 * drained, which the consumer asked to hear about once.
 */
static void sroce_req_drained(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	if (req->sqd_notify && READ_ONCE(qp->state) == IB_QPS_SQD &&
	    qp->sq.cons == req->cur && !req->off) {
		req->sqd_notify = false;
		sroce_qp_sq_drained(qp);
	}
}

/*
 * A read sent again after a rewind asks only for what did not come: its
 * answers that came while an older WQE waited were kept in place
 * (sroce_comp_rd_later()). One that came whole is passed over; it is done
 * in its turn.
 */
static bool sroce_req_skip_answered(struct sroce_qp *qp,
				    struct sroce_swqe *swqe)
{
	struct sroce_req *req = &qp->req;

	if (swqe->wire_op != SROCE_OP_READ_REQ || !swqe->sent)
		return false;
	if (swqe->len && swqe->resp_off == swqe->len) {
		/* Outstanding until done, as if asked for: rd_out counts it. */
		req->rd_out++;
		req->cur++;
		req->off = 0;
		return true;
	}
	if (swqe->rewind_off != U32_MAX || swqe->resp_off <= req->off)
		return false;
	req->off = swqe->resp_off;
	return false;
}

/**
 * sroce_req_skip_acked() - do not send again what was acknowledged
 * @qp: the QP
 * @swqe: the WQE at cur
 *
 * After a rewind, an acknowledgment may come for what is about to be sent
 * again: the timer fired while it was on its way. Go-back-N would repeat
 * up to a whole window the responder already has, and carry out again the
 * local WQEs behind the rewound one (a second fast registration of a valid
 * MR fails, and fails the QP). So a WQE done since is passed over, and a
 * send or write goes on from its first packet not acknowledged.
 *
 * Return: true when @swqe was passed over.
 */
static bool sroce_req_skip_acked(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_req *req = &qp->req;
	u32 n;

	if (swqe->done && swqe->sent) {
		req->cur++;
		req->off = 0;
		return true;
	}
	if (!swqe->numbered || swqe->wire_op == SROCE_REQ_LOCAL)
		return false;
	if (sroce_msg_is_rd(swqe->wire_op))
		return sroce_req_skip_answered(qp, swqe);
	n = (req->acked - swqe->first_psn) & SROCE_BTH_PSN_MASK;
	if (sroce_psn_cmp(req->acked, swqe->first_psn) > 0 &&
	    n * req->mtu > req->off)
		req->off = min(n, sroce_msg_npkts(swqe->len, req->mtu) - 1) *
			   req->mtu;
	return false;
}

/**
 * sroce_req_run() - send what the send queue holds, within a budget
 * @qp: the QP
 * @budget: turns of the loop at most: a packet sent, a local WQE done, or
 *	    a fetch that found the queue not quite empty
 *
 * Context: any; sq_lock held.
 * Return: why it stopped.
 */
enum sroce_req_stop sroce_req_run(struct sroce_qp *qp, unsigned int budget)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *swqe;
	enum sroce_req_stop stop = SROCE_REQ_BUDGET;
	int ret;

	lockdep_assert_held(&qp->sq_lock);

	while (budget) {
		if (!sroce_req_sending(qp)) {
			stop = SROCE_REQ_BLOCKED;
			break;
		}
		if (req->cur == req->head) {
			ret = sroce_req_fetch(qp);
			if (ret < 0) {
				sroce_qp_error(qp);
				stop = SROCE_REQ_BLOCKED;
				break;
			}
			if (!ret) {
				if (sroce_req_idle(qp)) {
					stop = SROCE_REQ_IDLE;
					break;
				}
				/*
				 * Posted meanwhile, or a producer index that
				 * the process moves back and forth: either
				 * way a turn of the loop, paid for.
				 */
				budget--;
				continue;
			}
		}
		swqe = sroce_swqe_at(qp, req->cur);
		if (sroce_req_skip_acked(qp, swqe))
			continue;
		if (swqe->wire_op == SROCE_REQ_LOCAL && !swqe->status &&
		    !sroce_req_local(qp, swqe)) {
			stop = SROCE_REQ_BLOCKED;
			break;
		}
		if (swqe->status) {
			/* It fails once everything before it completed. */
			stop = SROCE_REQ_BLOCKED;
			break;
		}
		if (swqe->wire_op == SROCE_REQ_LOCAL) {
			/*
			 * No packet, but work: a process posting only binds
			 * and invalidations must not keep us here for good.
			 */
			budget--;
			continue;
		}
		ret = sroce_req_step(qp, swqe, budget == 1);
		if (ret == -EAGAIN || ret == -ENOMEM) {
			stop = ret == -ENOMEM ? SROCE_REQ_BUDGET :
			       SROCE_REQ_BLOCKED;
			break;
		}
		if (ret) {
			sroce_comp_fail(qp, swqe, IB_WC_LOC_PROT_ERR);
			stop = SROCE_REQ_BLOCKED;
			break;
		}
		budget--;
	}
	sroce_burst_flush(to_sdev(qp->ibqp.device), &req->burst);
	sroce_comp_complete(qp);
	sroce_comp_arm_timer(qp);
	req->blocked = stop == SROCE_REQ_BLOCKED;
	sroce_req_drained(qp);
	return stop;
}

/**
 * sroce_req_rewind() - go back to the oldest unacknowledged packet
 * @qp: the QP
 *
 * Go-back-N: every WQE from the oldest not yet done is sent again, from
 * the first packet not acknowledged (a read, from the first byte that did
 * not arrive). The responder treats what it already had as duplicates.
 *
 * Context: sq_lock held.
 */
void sroce_req_rewind(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *swqe;
	u32 idx, n;

	lockdep_assert_held(&qp->sq_lock);

	for (idx = qp->sq.cons; idx != req->cur; idx++)
		if (!sroce_swqe_at(qp, idx)->done)
			break;
	req->rd_out = 0;
	/* What is sent again is not timed (Karn), nor what was before. */
	req->rtt.probing = false;
	/* Whoever rewound runs the requester next, idle or not. */
	req->blocked = true;
	if (idx == req->cur && !req->off)
		return;
	swqe = sroce_swqe_at(qp, idx);
	req->cur = idx;
	if (sroce_msg_is_rd(swqe->wire_op)) {
		req->off = swqe->resp_off;
		return;
	}
	n = 0;
	if (sroce_psn_cmp(req->acked, swqe->first_psn) > 0)
		n = (req->acked - swqe->first_psn) & SROCE_BTH_PSN_MASK;
	/* Whole packets only, and never past the last one. */
	n = min(n, sroce_msg_npkts(swqe->len, req->mtu) - 1);
	req->off = n * req->mtu;
}

/* Context: process (doorbell) or softirq; takes sq_lock. */
void sroce_req_kick(struct sroce_qp *qp)
{
	enum sroce_req_stop stop;

	spin_lock_bh(&qp->sq_lock);
	sroce_req_set_doorbell(qp, false);
	smp_mb(); /* flag store before prod load; pairs with the provider */
	stop = sroce_req_run(qp, SROCE_REQ_BUDGET_POST);
	spin_unlock_bh(&qp->sq_lock);
	if (stop == SROCE_REQ_BUDGET)
		queue_work(sroce_wq, &qp->send_work);
}

void sroce_req_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, send_work);
	enum sroce_req_stop stop;

	do {
		spin_lock_bh(&qp->sq_lock);
		sroce_req_set_doorbell(qp, false);
		smp_mb(); /* as in sroce_req_kick() */
		stop = sroce_req_run(qp, SROCE_REQ_BUDGET_WORK);
		spin_unlock_bh(&qp->sq_lock);
		cond_resched();
	} while (stop == SROCE_REQ_BUDGET);
}
