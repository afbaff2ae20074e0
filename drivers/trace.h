/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the data path: `perf trace -e 'sroce:*'`, `trace-cmd
 * record -e sroce`, or /sys/kernel/tracing/events/sroce/ (docs/ARCHITECTURE.md,
 * "Tracepoints"). Each costs a static branch while it is off. Opcodes,
 * reasons and statuses print as symbols, their values exported with
 * TRACE_DEFINE_ENUM(), so that userspace tools decode them from the
 * event's format alone.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#ifndef SROCE_TRACE_TYPES_H
#define SROCE_TRACE_TYPES_H
/* Why the requester went back to send again. */
enum sroce_trace_resend {
	SROCE_RESEND_TIMEOUT,	/* the retransmit timer: silence */
	SROCE_RESEND_SEQ_NAK,	/* the responder saw a gap */
	SROCE_RESEND_RNR_NAK,	/* no receive WQE: again after the RNR wait */
	SROCE_RESEND_LOST_RESPONSE,	/* a read response or atomic ACK missing */
};
#endif

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "cq.h"
#include "device.h"
#include "qp.h"
#include "wire.h"

TRACE_DEFINE_ENUM(SROCE_CNT_RX_BAD_HEADER);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_BAD_ICRC);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_NO_QP);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_BAD_PKEY);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_BAD_QKEY);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DUPLICATE);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_OUT_OF_SEQ);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROPPED);
TRACE_DEFINE_ENUM(SROCE_CNT_TX_DROPPED);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_BAD_MAD);

TRACE_DEFINE_ENUM(IB_WC_SEND);
TRACE_DEFINE_ENUM(IB_WC_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WC_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WC_COMP_SWAP);
TRACE_DEFINE_ENUM(IB_WC_FETCH_ADD);
TRACE_DEFINE_ENUM(IB_WC_BIND_MW);
TRACE_DEFINE_ENUM(IB_WC_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WC_REG_MR);
TRACE_DEFINE_ENUM(IB_WC_RECV);
TRACE_DEFINE_ENUM(IB_WC_RECV_RDMA_WITH_IMM);

TRACE_DEFINE_ENUM(IB_WC_SUCCESS);
TRACE_DEFINE_ENUM(IB_WC_LOC_LEN_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_QP_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_PROT_ERR);
TRACE_DEFINE_ENUM(IB_WC_WR_FLUSH_ERR);
TRACE_DEFINE_ENUM(IB_WC_MW_BIND_ERR);
TRACE_DEFINE_ENUM(IB_WC_BAD_RESP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_RNR_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ABORT_ERR);
TRACE_DEFINE_ENUM(IB_WC_GENERAL_ERR);

TRACE_DEFINE_ENUM(SROCE_RESEND_TIMEOUT);
TRACE_DEFINE_ENUM(SROCE_RESEND_SEQ_NAK);
TRACE_DEFINE_ENUM(SROCE_RESEND_RNR_NAK);
TRACE_DEFINE_ENUM(SROCE_RESEND_LOST_RESPONSE);

/* The transport, BTH opcode bits 7..5 (IBTA 9.2.1). */
#define sroce_trace_transport(op)					\
	__print_symbolic((op) >> 5, { 0, "RC" }, { 1, "UC" }, { 2, "RD" },	\
			 { 3, "UD" }, { 4, "CNP" }, { 5, "XRC" })

/* The operation, BTH opcode bits 4..0, the same for RC, UC and UD. */
#define sroce_trace_op(op)						\
	__print_symbolic((op) & 0x1f,					\
			 { 0x00, "SEND_FIRST" }, { 0x01, "SEND_MIDDLE" },	\
			 { 0x02, "SEND_LAST" }, { 0x03, "SEND_LAST_IMM" },	\
			 { 0x04, "SEND_ONLY" }, { 0x05, "SEND_ONLY_IMM" },	\
			 { 0x06, "WRITE_FIRST" }, { 0x07, "WRITE_MIDDLE" },	\
			 { 0x08, "WRITE_LAST" }, { 0x09, "WRITE_LAST_IMM" },	\
			 { 0x0a, "WRITE_ONLY" }, { 0x0b, "WRITE_ONLY_IMM" },	\
			 { 0x0c, "READ_REQUEST" },				\
			 { 0x0d, "READ_RESPONSE_FIRST" },			\
			 { 0x0e, "READ_RESPONSE_MIDDLE" },			\
			 { 0x0f, "READ_RESPONSE_LAST" },			\
			 { 0x10, "READ_RESPONSE_ONLY" }, { 0x11, "ACK" },	\
			 { 0x12, "ATOMIC_ACK" }, { 0x13, "CMP_SWAP" },		\
			 { 0x14, "FETCH_ADD" }, { 0x16, "SEND_LAST_INV" },	\
			 { 0x17, "SEND_ONLY_INV" },				\
			 { 0x1d, "ATOMIC_WRITE" })

/* One packet at its BTH, as it leaves or arrives; @bytes from the BTH on. */
DECLARE_EVENT_CLASS(sroce_packet,
		    TP_PROTO(const struct sroce_dev *sdev,
			     const struct sroce_bth *bth, unsigned int bytes),
		    TP_ARGS(sdev, bth, bytes),
		    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u32, bytes)
				     __field(u8, opcode)
				     __field(bool, ack_req)),
		    TP_fast_assign(strscpy(__entry->dev, sdev->ibdev.name,
					   IB_DEVICE_NAME_MAX);
				   __entry->qpn = be32_to_cpu(bth->qpn) &
						  SROCE_BTH_QPN_MASK;
				   __entry->psn = be32_to_cpu(bth->apsn) &
						  SROCE_BTH_PSN_MASK;
				   __entry->bytes = bytes;
				   __entry->opcode = bth->opcode;
				   __entry->ack_req = !!(be32_to_cpu(bth->apsn) &
							 SROCE_BTH_ACKREQ);),
		    TP_printk("%s qpn=0x%06x psn=0x%06x %s %s%s bytes=%u",
			      __entry->dev, __entry->qpn, __entry->psn,
			      sroce_trace_transport(__entry->opcode),
			      sroce_trace_op(__entry->opcode),
			      __entry->ack_req ? " ackreq" : "", __entry->bytes)
);

/* A packet built and handed on: to a burst, the netdev, or looped back. */
DEFINE_EVENT(sroce_packet, sroce_tx,
	     TP_PROTO(const struct sroce_dev *sdev, const struct sroce_bth *bth,
		      unsigned int bytes),
	     TP_ARGS(sdev, bth, bytes)
);

/* A packet whose headers and ICRC checked out, on its way to its QP. */
DEFINE_EVENT(sroce_packet, sroce_rx,
	     TP_PROTO(const struct sroce_dev *sdev, const struct sroce_bth *bth,
		      unsigned int bytes),
	     TP_ARGS(sdev, bth, bytes)
);

/* @n packets dropped, under the counter `rdma statistic` counts them in. */
TRACE_EVENT(sroce_drop,
	    TP_PROTO(const struct sroce_dev *sdev, enum sroce_counter reason,
		     u64 n),
	    TP_ARGS(sdev, reason, n),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u64, n)
			     __field(int, reason)),
	    TP_fast_assign(strscpy(__entry->dev, sdev->ibdev.name,
				   IB_DEVICE_NAME_MAX);
			   __entry->n = n;
			   __entry->reason = reason;),
	    TP_printk("%s reason=%s n=%llu", __entry->dev,
		      __print_symbolic(__entry->reason,
				       { SROCE_CNT_RX_BAD_HEADER, "rx_bad_header" },
				       { SROCE_CNT_RX_BAD_ICRC, "rx_bad_icrc" },
				       { SROCE_CNT_RX_NO_QP, "rx_no_qp" },
				       { SROCE_CNT_RX_BAD_PKEY, "rx_bad_pkey" },
				       { SROCE_CNT_RX_BAD_QKEY, "rx_bad_qkey" },
				       { SROCE_CNT_RX_DUPLICATE, "rx_duplicate" },
				       { SROCE_CNT_RX_OUT_OF_SEQ, "rx_out_of_seq" },
				       { SROCE_CNT_RX_DROPPED, "rx_dropped" },
				       { SROCE_CNT_TX_DROPPED, "tx_dropped" },
				       { SROCE_CNT_RX_BAD_MAD, "rx_bad_mad" }),
		      __entry->n)
);

/* A completion written into a CQ's ring. */
TRACE_EVENT(sroce_cqe,
	    TP_PROTO(const struct sroce_cq *cq, const struct sroce_cqe *cqe),
	    TP_ARGS(cq, cqe),
	    TP_STRUCT__entry(__field(u64, wr_id)
			     __field(u32, cq)
			     __field(u32, qpn)
			     __field(u32, status)
			     __field(u32, opcode)
			     __field(u32, byte_len)),
	    TP_fast_assign(__entry->wr_id = cqe->wr_id;
			   __entry->cq = cq->ibcq.res.id;
			   __entry->qpn = cqe->qp_num;
			   __entry->status = cqe->status;
			   __entry->opcode = cqe->opcode;
			   __entry->byte_len = cqe->byte_len;),
	    TP_printk("cq=%u qpn=0x%06x wr_id=0x%llx %s status=%s byte_len=%u",
		      __entry->cq, __entry->qpn, __entry->wr_id,
		      __print_symbolic(__entry->opcode,
				       { IB_WC_SEND, "SEND" },
				       { IB_WC_RDMA_WRITE, "RDMA_WRITE" },
				       { IB_WC_RDMA_READ, "RDMA_READ" },
				       { IB_WC_COMP_SWAP, "COMP_SWAP" },
				       { IB_WC_FETCH_ADD, "FETCH_ADD" },
				       { IB_WC_BIND_MW, "BIND_MW" },
				       { IB_WC_LOCAL_INV, "LOCAL_INV" },
				       { IB_WC_REG_MR, "REG_MR" },
				       { IB_WC_RECV, "RECV" },
				       { IB_WC_RECV_RDMA_WITH_IMM, "RECV_RDMA_WITH_IMM" }),
		      __print_symbolic(__entry->status,
				       { IB_WC_SUCCESS, "SUCCESS" },
				       { IB_WC_LOC_LEN_ERR, "LOC_LEN_ERR" },
				       { IB_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR" },
				       { IB_WC_LOC_PROT_ERR, "LOC_PROT_ERR" },
				       { IB_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR" },
				       { IB_WC_MW_BIND_ERR, "MW_BIND_ERR" },
				       { IB_WC_BAD_RESP_ERR, "BAD_RESP_ERR" },
				       { IB_WC_LOC_ACCESS_ERR, "LOC_ACCESS_ERR" },
				       { IB_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR" },
				       { IB_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR" },
				       { IB_WC_REM_OP_ERR, "REM_OP_ERR" },
				       { IB_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR" },
				       { IB_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR" },
				       { IB_WC_REM_ABORT_ERR, "REM_ABORT_ERR" },
				       { IB_WC_GENERAL_ERR, "GENERAL_ERR" }),
		      __entry->byte_len)
);

/*
 * The requester goes back to @psn, the oldest PSN not acknowledged; with
 * the round trip measured so far and the retransmit timeout it gives.
 */
TRACE_EVENT(sroce_retransmit,
	    TP_PROTO(const struct sroce_qp *qp, u32 psn,
		     enum sroce_trace_resend why),
	    TP_ARGS(qp, psn, why),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, psn)
			     __field(int, why)
			     __field(u32, srtt_us)
			     __field(u32, rto_ms)),
	    TP_fast_assign(__entry->qpn = qp->ibqp.qp_num;
			   __entry->psn = psn;
			   __entry->why = why;
			   __entry->srtt_us = div_u64(qp->req.rtt.srtt,
						      NSEC_PER_USEC);
			   __entry->rto_ms = jiffies_to_msecs(qp->req.rto);),
	    TP_printk("qpn=0x%06x psn=0x%06x why=%s srtt_us=%u rto_ms=%u",
		      __entry->qpn, __entry->psn,
		      __print_symbolic(__entry->why,
				       { SROCE_RESEND_TIMEOUT, "timeout" },
				       { SROCE_RESEND_SEQ_NAK, "seq_nak" },
				       { SROCE_RESEND_RNR_NAK, "rnr_nak" },
				       { SROCE_RESEND_LOST_RESPONSE, "lost_response" }),
		      __entry->srtt_us, __entry->rto_ms)
);

/* An RNR NAK (no receive WQE); @timer is the AETH's RNR timer code. */
DECLARE_EVENT_CLASS(sroce_rnr,
		    TP_PROTO(const struct sroce_qp *qp, u32 psn, u8 timer),
		    TP_ARGS(qp, psn, timer),
		    TP_STRUCT__entry(__field(u32, qpn)
				     __field(u32, psn)
				     __field(u8, timer)),
		    TP_fast_assign(__entry->qpn = qp->ibqp.qp_num;
				   __entry->psn = psn;
				   __entry->timer = timer;),
		    TP_printk("qpn=0x%06x psn=0x%06x timer=%u", __entry->qpn,
			      __entry->psn, __entry->timer)
);

DEFINE_EVENT(sroce_rnr, sroce_rnr_nak_sent,
	     TP_PROTO(const struct sroce_qp *qp, u32 psn, u8 timer),
	     TP_ARGS(qp, psn, timer)
);

DEFINE_EVENT(sroce_rnr, sroce_rnr_nak_received,
	     TP_PROTO(const struct sroce_qp *qp, u32 psn, u8 timer),
	     TP_ARGS(qp, psn, timer)
);

/*
 * A CNP came: the requester's rate, bytes per second (0: not limited),
 * alpha in 1/2^20 and the smoothed round trip in microseconds, after the
 * cut it took or did not take.
 */
TRACE_EVENT(sroce_cc_rate,
	    TP_PROTO(const struct sroce_qp *qp, u64 rate, u32 alpha,
		     u64 srtt_ns),
	    TP_ARGS(qp, rate, alpha, srtt_ns),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u64, rate)
			     __field(u32, alpha)
			     __field(u32, srtt_us)),
	    TP_fast_assign(__entry->qpn = qp->ibqp.qp_num;
			   __entry->rate = rate;
			   __entry->alpha = alpha;
			   __entry->srtt_us = div_u64(srtt_ns, NSEC_PER_USEC);),
	    TP_printk("qpn=0x%06x rate=%llu alpha=%u srtt_us=%u", __entry->qpn,
		      __entry->rate, __entry->alpha, __entry->srtt_us)
);

#endif /* SROCE_TRACE_H */

/* define_trace.h reads this file again, found through Kbuild's -I. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
