/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "ah.h"
#include "burst.h"
#include "cc.h"
#include "fault.h"
#include "rtt.h"
#include "wq.h"

/* The largest 24-bit number: QPNs, PSNs. */
#define SROCE_24BIT_MAX		0xffffff

/**
 * struct sroce_qp_shape - how big a QP's rings are
 * @sq_slots: send queue entries
 * @sq_stride: bytes per send queue entry
 * @rq_slots: receive queue entries, 0 when the QP uses an SRQ
 * @rq_stride: bytes per receive queue entry
 */
struct sroce_qp_shape {
	u32 sq_slots;
	u32 sq_stride;
	u32 rq_slots;
	u32 rq_stride;
};

/**
 * struct sroce_swqe - the kernel's copy of a send WQE, kept until completion
 * @wqe: the WQE as taken from the ring, checked; its SGEs follow it
 * @av: where a UD send goes, resolved when the WQE was taken
 * @first_psn: PSN of the request's first packet
 * @last_psn: PSN of its last packet (for a read, of the last response)
 * @len: message length in bytes
 * @wire_op: the transport-less opcode family (SROCE_OP_SEND_FIRST, ...)
 * @resp_off: for a read, bytes of response received and placed
 * @rewind_off: @resp_off when a gap in the responses last made the
 *		requester ask again, so that one gap asks once
 * @ahead: for a read, responses placed before the one expected came (a
 *	   link that reordered them): bit i, the (i + 2)th packet from
 *	   @resp_off
 * @numbered: @first_psn and @last_psn are given (at the first packet)
 * @sent: every request packet has been sent at least once
 * @done: acknowledged (or read response complete): ready to complete
 * @status: the completion status when it ends in error
 */
struct sroce_swqe {
	struct sroce_av av;
	u32 first_psn;
	u32 last_psn;
	u32 len;
	u32 resp_off;
	u32 rewind_off;
	u64 ahead;
	u8 wire_op;
	bool numbered;
	bool sent;
	bool done;
	u8 status;
	struct sroce_send_wqe wqe;	/* last: the SGEs follow */
};

/**
 * struct sroce_req - the requester and completer of an RC, UC or UD QP
 * @head: next index of the send ring to take a WQE from
 * @cur: index of the WQE being sent
 * @off: bytes of @cur already sent
 * @psn: PSN of the packet being sent, derived from @cur and @off
 * @max_psn: one past the highest PSN ever sent: the next new WQE's first
 * @acked: every PSN before this one is acknowledged
 * @rd_out: reads and atomics sent and not yet answered
 * @retry: retries left after a timeout or NAK (from retry_cnt)
 * @rnr_retry: retries left after an RNR NAK (7: infinite)
 * @rnr_wait: an RNR NAK holds sending until @rnr_timer fires
 * @noack: packets sent since the last that asked for an ACK
 * @wqes: the kernel copies, indexed like the ring, @stride bytes each
 * @stride: bytes per element of @wqes
 * @mtu: path MTU in bytes
 * @timer: retransmit timer, armed while packets are unacknowledged
 * @rnr_timer: the wait an RNR NAK asked for
 * @burst: packets built under sq_lock, sent before it is dropped
 * @timeout: the QP's retransmit timeout in jiffies, 0 for none
 * @rto: the one the timer uses: @timeout, or longer where the measured
 *	 round trip @rtt asks for it (sroce_rtt_rto())
 * @rtt: the round trip measured from ACK requests to their ACKs
 * @blocked: the last run stopped on something an answer may lift
 *	     (window, reads outstanding, fence): only then do answers run it
 * @nak_psn: the PSN of the last sequence NAK acted on
 * @nak_seen: @nak_psn is valid
 * @sqd_notify: in SQD, raise IB_EVENT_SQ_DRAINED once every message
 *		started has completed
 * @cwnd: packets past @acked that may be sent: SROCE_MAX_INFLIGHT, or
 *	  less while it grows back after a retransmit timeout
 * @fault_rewind: an answer was dropped for want of an ODP page: once
 *		  @fault is done, ask for it again
 * @fault: a page of an ODP MR the requester or completer waits for
 */
struct sroce_req {
	u32 head;
	u32 cur;
	u32 off;
	u32 psn;
	u32 max_psn;
	u32 acked;
	u32 rd_out;
	u32 noack;
	u32 cwnd;
	u8 retry;
	u8 rnr_retry;
	bool rnr_wait;
	bool nak_seen;
	bool blocked;
	bool sqd_notify;
	bool fault_rewind;
	u32 nak_psn;
	void *wqes;
	u32 stride;
	u32 mtu;
	unsigned long timeout;
	unsigned long rto;
	struct sroce_rtt rtt;
	struct timer_list timer;
	struct timer_list rnr_timer;
	struct sroce_burst burst;
	struct sroce_fault fault;
};

/**
 * struct sroce_rd_res - a read or atomic request the responder answers
 * @op: the request answered: SROCE_OP_READ_REQ, _CMP_SWAP, _FETCH_ADD,
 *	_ATOMIC_WRITE or _FLUSH; 0 free
 * @first_psn: PSN of the request (and of the first response)
 * @last_psn: PSN of the last response
 * @again: a duplicate asked for the answer again
 * @va: next remote address to read
 * @rkey: the read's rkey
 * @len: bytes still to send
 * @psn: PSN of the next response packet
 * @stop_psn: PSN of the last response to send: @last_psn, or that of the
 *	      piece of the read a duplicate asked for; the entry is answered
 *	      once @psn is past it
 * @orig: an atomic's original value, replayed for a duplicate
 * @start: a read's first remote address, as requested
 * @total: a read's length, as requested
 * @pd: the PD the read's rkey is checked in again for each response: the
 *	QP's, or an XRC target's SRQ's at the time of the request
 */
struct sroce_rd_res {
	const struct ib_pd *pd;
	u8 op;
	bool again;
	u32 first_psn;
	u32 last_psn;
	u32 stop_psn;
	u64 va;
	u32 rkey;
	u32 len;
	u32 psn;
	u64 orig;
	u64 start;
	u32 total;
};

/*
 * May a repeated read request be answered from @res? Only with the rkey
 * and within the range the request it repeats was checked for: what a
 * peer asks again is the rest of what it asked, never more.
 */
static inline bool sroce_rd_res_covers(const struct sroce_rd_res *res,
				       u32 rkey, u64 va, u32 len)
{
	return rkey == res->rkey && va >= res->start &&
	       va - res->start <= res->total &&
	       len <= res->total - (u32)(va - res->start);
}

struct sroce_srq;

/**
 * struct sroce_resp - the responder of a QP
 * @psn: the PSN expected next
 * @msn: messages completed, reported in every AETH
 * @mtu: path MTU in bytes
 * @len: a write's total length, reported with its immediate
 * @op: the message in progress: 0, or SROCE_SEND/SROCE_WRITE
 * @va: a write's next address
 * @rkey: a write's rkey
 * @remaining: a write's bytes still expected
 * @off: bytes of a send placed so far
 * @has_rwqe: @rwqe holds the receive WQE the message in progress uses
 * @nak_sent: a sequence NAK went out for @psn; do not repeat it
 * @uc_drop: UC lost a packet: drop until the next first packet
 * @res: read and atomic resources, max_dest_rd_atomic of them
 * @nres: entries in @res
 * @res_head: next entry of @res to use
 * @res_send: oldest entry of @res with answers still to send; answers go
 *	      out in PSN order, so the entries are served first in, first
 *	      out, and a duplicate moves it back to the entry it repeats
 * @ack_psn: an ACK waiting for the end of its run of packets, and for the
 *	     answers queued before it, to go out
 * @ack_pending: @ack_psn is valid
 * @ack_hold: the pending ACK may wait for the stream's next requests
 * @ack_held: ACK requests the pending ACK will answer, beyond its own
 * @ack_hold_max: how many may wait: doubles when reached, halves when
 *		  @ack_timer had to send the ACK
 * @ackreq_sent: our requester's @max_psn when the last ACK request came:
 *		 if it moved since, we answer the peer (a ping-pong)
 * @ackreq_ns: when the last ACK request came
 * @ack_gap_ns: the time between the last two ACK requests
 * @ack_timer: sends a held ACK when the stream pauses
 * @wr_mr: the MR the write message in progress lands in, entered for the
 *	   rest of the message, within one run of packets; NULL between runs
 * @rwqe: the receive WQE; its SGEs follow it
 * @rwqe_bytes: the size of @rwqe's buffer
 * @max_sge: SGEs @rwqe's buffer holds
 * @burst: answers built under rq_lock, sent before it is dropped
 * @pd: the PD rkeys and receive SGEs are checked in: the QP's, or for an
 *	XRC target the PD of the XRC SRQ the packet being executed names
 * @xsrq: an XRC target's SRQ for the packet being executed, valid only
 *	  while it is (the receive path's RCU section, sroce_srq_xrc_get())
 * @rwqe_srqn: the XRC SRQ @rwqe came from: the rest of the message must
 *	       name it, and it says where @rwqe completes
 * @fault: a page of an ODP MR the responder waits for
 */
struct sroce_resp {
	u32 psn;
	u32 msn;
	u32 mtu;
	u32 len;
	u32 op;
	u64 va;
	u32 rkey;
	u32 remaining;
	u32 off;
	bool has_rwqe;
	bool nak_sent;
	bool uc_drop;
	struct sroce_rd_res *res;
	u32 nres;
	u32 res_head;
	u32 res_send;
	u32 ack_psn;
	bool ack_pending;
	bool ack_hold;
	u8 ack_held;
	u8 ack_hold_max;
	u32 ackreq_sent;
	u64 ackreq_ns;
	u64 ack_gap_ns;
	struct hrtimer ack_timer;
	struct sroce_mr *wr_mr;
	struct sroce_recv_wqe *rwqe;
	u32 rwqe_bytes;
	u32 max_sge;
	struct sroce_burst burst;
	const struct ib_pd *pd;
	struct sroce_srq *xsrq;
	u32 rwqe_srqn;
	struct sroce_fault fault;
};

/**
 * struct sroce_qp_ref - what the device's QP table holds for a QP
 * @qp: the QP
 * @count: one for the table, one per receive-path user
 * @done: completed when @count drops to zero; destroy waits for it
 * @mem: one for the QP, one per packet it sent that still exists
 * @inflight: packets the QP sent that the netdev has not freed yet
 * @rcu: the entry outlives lookups that may still see it
 *
 * The core frees a QP as soon as destroy_qp returns, not after an RCU
 * grace period, so lookups under RCU cannot take a reference on the QP
 * itself: they take it on this, which is freed with kfree_rcu().
 */
struct sroce_qp_ref {
	struct sroce_qp *qp;
	refcount_t count;
	struct completion done;
	refcount_t mem;
	atomic_t inflight;
	struct rcu_head rcu;
};

/*
 * Packets a QP may have queued in the netdev before it waits for some to
 * leave: without a bound, a large read's responses alone overflow the
 * qdisc and the drops feed retransmissions that overflow it again.
 */
#define SROCE_INFLIGHT_HIGH	64
#define SROCE_INFLIGHT_LOW	16

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the core's object, allocated and freed by the core
 * @lock: serialises modify_qp and query_qp; held while flushing
 * @attr: every attribute modify_qp set, except the path (@av)
 * @av: the primary path, for RC and UC
 * @cap: the capacities the rings really have
 * @sq_sig_type: IB_SIGNAL_ALL_WR or IB_SIGNAL_REQ_WR
 * @sq: the send queue
 * @rq: the receive queue, unused when the QP has an SRQ
 * @uc: the user context the QP was made in: its AHs are the ones UD
 *	send WQEs may name; NULL for a kernel QP
 * @kav: a kernel UD or GSI QP's destinations, one per send ring slot,
 *	 copied from the work requests' AHs when they were posted
 * @state: the state the data path acts on, a copy of @attr.qp_state
 *	   written under both @sq_lock and @rq_lock
 * @sq_lock: the requester and completer (@req, the send ring)
 * @rq_lock: the responder (@resp, the receive ring)
 * @req: requester and completer state
 * @resp: responder state
 * @sport: UDP source port of the QP's packets
 * @cc: congestion control: the requester's rate limiter, the responder's
 *	CNPs (cc.h)
 * @serial: the QP's identity, never another QP's: QP numbers come round
 *	    again, and a type 2 window bound to this QP (mw.c) must not
 *	    serve a later QP that got its number
 * @ref: how the receive path finds the QP and holds it (see
 *	 struct sroce_qp_ref)
 * @send_work: sends what the posting context left (budget, window, timers)
 * @resp_work: sends read responses the receive softirq left
 * @err_work: flushes the queues after the data path moved the QP to ERR
 * @drained_work: reports a kernel QP's SQ_DRAINED outside the requester
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct mutex lock; /* attributes vs concurrent verbs */
	struct ib_qp_attr attr;
	struct sroce_av av;
	struct ib_qp_cap cap;
	enum ib_sig_type sq_sig_type;
	struct sroce_wq sq;
	struct sroce_wq rq;
	struct sroce_ucontext *uc;
	struct sroce_av *kav;

	u8 state;
	spinlock_t sq_lock;	/* bh: ACKs arrive in softirq */
	spinlock_t rq_lock;	/* bh: requests arrive in softirq */
	struct sroce_req req;
	struct sroce_resp resp;
	u16 sport;
	struct sroce_cc cc;
	u64 serial;
	struct sroce_qp_ref *ref;
	struct work_struct send_work;
	struct work_struct resp_work;
	struct work_struct err_work;
	struct work_struct drained_work;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

static inline const struct sroce_qp *to_sqp_const(const struct ib_qp *ibqp)
{
	return container_of(ibqp, const struct sroce_qp, ibqp);
}

/* GSI (QP1) is a UD QP with a fixed number. */
static inline bool sroce_qp_is_ud(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/*
 * RC's requester and completer: acknowledged, retried, reads and atomics.
 * An XRC initiator is one, with the target's SRQ in every request.
 */
static inline bool sroce_qp_req_rc(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI;
}

/* RC's responder; an XRC target's receive WQEs come from XRC SRQs. */
static inline bool sroce_qp_resp_rc(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

static inline bool sroce_qp_is_xrc(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* A receive queue of its own: neither an SRQ's user nor an XRC QP. */
static inline bool sroce_qp_has_rq(const struct sroce_qp *qp)
{
	return !qp->ibqp.srq && !sroce_qp_is_xrc(qp);
}

/*
 * A kernel consumer's QP: its rings are posted to by the post verbs. An
 * XRC target counts as one (the core creates it without udata) but has
 * nothing to post to.
 */
static inline bool sroce_qp_is_kernel(const struct sroce_qp *qp)
{
	return !qp->uc;
}

int sroce_qp_size(struct ib_qp_cap *cap, bool has_srq,
		  struct sroce_qp_shape *shape);
int sroce_qp_check_attr(const struct sroce_qp *qp,
			const struct ib_qp_attr *attr, int mask);
int sroce_qpn_alloc(struct xarray *xa, u32 *next, void *entry,
		    u32 *qpn);

struct sroce_dev;

struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn);

static inline void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref->count))
		complete(&qp->ref->done);
}

static inline struct sroce_swqe *sroce_swqe_at(const struct sroce_qp *qp,
					       u32 idx)
{
	return qp->req.wqes +
	       (size_t)sroce_queue_slot(idx, qp->sq.q.slots) * qp->req.stride;
}

void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_own_skb(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_qp_wait_packets(void);

static inline bool sroce_qp_tx_full(const struct sroce_qp *qp)
{
	return atomic_read(&qp->ref->inflight) >= SROCE_INFLIGHT_HIGH;
}

void sroce_qp_err_work(struct work_struct *work);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);
void sroce_qp_sq_drained(struct sroce_qp *qp);

extern struct workqueue_struct *sroce_wq;
extern const struct ib_device_ops sroce_qp_ops;

#endif /* SROCE_QP_H */
