// SPDX-License-Identifier: GPL-2.0
/*
 * UD receive: a datagram is delivered whole into one receive WQE, behind
 * the 40 bytes of GRH that RoCE puts there (A17.4.5.2: the IPv6 header,
 * or for IPv4 its header in the GRH's last 20 bytes). Nothing is
 * acknowledged: a datagram that cannot be taken is dropped and counted.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "cq.h"
#include "device.h"
#include "opcode.h"
#include "payload.h"
#include "pkt.h"
#include "qp.h"
#include "resp.h"
#include "ud.h"

#define SROCE_GRH_BYTES	40

/* The GRH as a receive buffer sees it, from the packet's IP header. */
static void sroce_ud_grh(const struct sroce_pkt *pkt, u8 *grh)
{
	const void *nh = skb_network_header(pkt->skb);

	memset(grh, 0, SROCE_GRH_BYTES);
	if (pkt->net_type == RDMA_NETWORK_IPV4)
		memcpy(grh + SROCE_GRH_BYTES - sizeof(struct iphdr), nh,
		       sizeof(struct iphdr));
	else
		memcpy(grh, nh, sizeof(struct ipv6hdr));
}

static void sroce_ud_complete(struct sroce_qp *qp, struct sroce_pkt *pkt,
			      u8 status)
{
	struct sroce_deth *deth = sroce_pkt_hdr(pkt, SROCE_HAS_DETH);
	struct sroce_cqe cqe = {
		.wr_id = qp->resp.rwqe->wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.byte_len = SROCE_GRH_BYTES + pkt->paylen,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = be32_to_cpu(deth->sqp) & SROCE_BTH_QPN_MASK,
		.wc_flags = SROCE_WC_GRH | SROCE_WC_WITH_SMAC |
			    SROCE_WC_WITH_NETWORK_HDR_TYPE,
		.network_hdr_type = pkt->net_type,
		.port_num = 1,
	};

	/* libsroce reads the type by the ABI's names (sroce-abi.h). */
	BUILD_BUG_ON((SROCE_NETWORK_IPV4 ^ RDMA_NETWORK_IPV4) |
		     (SROCE_NETWORK_IPV6 ^ RDMA_NETWORK_IPV6));
	memcpy(cqe.smac, pkt->smac, sizeof(cqe.smac));
	if (pkt->vlan_id != SROCE_NO_VLAN) {
		cqe.vlan_id = pkt->vlan_id;
		cqe.wc_flags |= SROCE_WC_WITH_VLAN;
	}
	if (pkt->mask & SROCE_HAS_IMMDT) {
		cqe.ex.imm_data = *(__be32 *)sroce_pkt_hdr(pkt, SROCE_HAS_IMMDT);
		cqe.wc_flags |= SROCE_WC_WITH_IMM;
	}
	qp->resp.has_rwqe = false;
	sroce_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, pkt->se);
}

/*
 * Places GRH and payload: 0, -EAGAIN while a page of an ODP MR is faulted
 * in (the datagram is lost, the receive WQE kept), or the errno that
 * completes the WQE in error.
 */
static int sroce_ud_place(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	const struct sroce_recv_wqe *rwqe = qp->resp.rwqe;
	u8 grh[SROCE_GRH_BYTES];
	int err;

	sroce_ud_grh(pkt, grh);
	err = sroce_payload_scatter_buf(sdev, qp->ibqp.pd, &qp->resp.fault,
					rwqe->sge, rwqe->num_sge, grh,
					sizeof(grh));
	if (!err)
		err = sroce_payload_scatter(sdev, qp->ibqp.pd, &qp->resp.fault,
					    rwqe->sge, rwqe->num_sge,
					    SROCE_GRH_BYTES, pkt->skb,
					    sroce_pkt_payoff(pkt),
					    pkt->paylen);
	return err;
}

/* The IB status of a datagram placed with sroce_ud_place()'s @err. */
static u8 sroce_ud_status(int err)
{
	if (err == -EMSGSIZE)
		return IB_WC_LOC_LEN_ERR;
	return err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/**
 * sroce_ud_rx() - a datagram for a UD QP
 * @qp: the QP
 * @pkt: a UD SEND ONLY packet
 *
 * Context: softirq.
 */
void sroce_ud_rx(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_deth *deth = sroce_pkt_hdr(pkt, SROCE_HAS_DETH);
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	enum sroce_counter drop = SROCE_CNT_RX_DROPPED;
	u8 state;
	int err;

	spin_lock_bh(&qp->rq_lock);
	state = READ_ONCE(qp->state);
	if (state < IB_QPS_RTR || state == IB_QPS_ERR)
		goto drop;
	if (be32_to_cpu(deth->qkey) != qp->attr.qkey) {
		drop = SROCE_CNT_RX_BAD_QKEY;
		goto drop;
	}
	/*
	 * Every MAD on RoCE is 256 bytes. ib_mad reads a MAD's header
	 * without looking at the length, and takes an error completion for
	 * a dead QP, never reposting its buffer: anything else is dropped
	 * here, before it costs QP1 a receive.
	 */
	if (qp->ibqp.qp_type == IB_QPT_GSI &&
	    pkt->paylen != IB_MGMT_MAD_SIZE) {
		drop = SROCE_CNT_RX_BAD_MAD;
		goto drop;
	}
	if (!qp->resp.has_rwqe && !sroce_resp_take_rwqe(qp))
		goto drop;
	err = sroce_ud_place(qp, pkt);
	if (err == -EAGAIN)
		goto drop;
	sroce_ud_complete(qp, pkt, sroce_ud_status(err));
	spin_unlock_bh(&qp->rq_lock);
	return;

drop:
	spin_unlock_bh(&qp->rq_lock);
	sroce_count(sdev, drop);
}
