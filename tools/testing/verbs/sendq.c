// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-sendq: the send queue as a process sees it, without the wire.
 *
 *   sroce-sendq -d DEV -g GID_INDEX -r DGID
 *
 * A request its QP cannot carry fails at post time (wrong state, opcode
 * the transport lacks, too many SGEs, too much inline data, a misaligned
 * atomic), with bad_wr naming it and the requests before it posted. A QP
 * in SQD takes requests but sends none (IBTA 10.3.1.1), so its ring fills
 * up, and then refuses with ENOMEM. Moving the QP to the error state
 * flushes every request posted, in order, each with its wr_id and its
 * opcode's completion opcode: through post_send and through the extended
 * ibv_wr_*() API, whose failed and aborted batches must leave no trace,
 * read back through ibv_poll_cq() and the extended CQ. A request posted
 * in the error state is flushed too.
 *
 * The RC path leads to DGID (a QP number nobody has): nothing must reach
 * it. One line per check; exit status 0 when all pass, 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>

#define TOOL "sroce-sendq"
#include "common.h"

#define SLOTS		8
#define WAIT_MS		3000

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint64_t buf[512];
	struct path path;
} g;

static struct ibv_qp *make_qp(enum ibv_qp_type type, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = g.cq, .recv_cq = g.cq, .qp_type = type,
		.cap = {
			.max_send_wr = SLOTS, .max_recv_wr = 1,
			.max_send_sge = 2, .max_recv_sge = 1,
			.max_inline_data = 32,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = g.pd,
	};
	struct ibv_qp *qp;

	if (send_ops) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags = send_ops;
	}
	qp = ibv_create_qp_ex(g.ctx, &attr);
	if (!qp)
		die("ibv_create_qp_ex: %s", strerror(errno));
	if (attr.cap.max_send_wr != SLOTS)
		die("asked for %d send WRs, got %u", SLOTS,
		    attr.cap.max_send_wr);
	return qp;
}

static void to_state(struct ibv_qp *qp, enum ibv_qp_state state,
		     const char *name)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	modify_qp(qp, &attr, IBV_QP_STATE, name);
}

/* RESET to SQD, or for UD to RTS. */
static void to_sqd(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111,
	};

	if (qp->qp_type == IBV_QPT_UD) {
		modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY, "INIT");
		to_state(qp, IBV_QPS_RTR, "RTR");
		attr.qp_state = IBV_QPS_RTS;
		modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
		return;
	}
	qp_connect(qp, &g.path);
	to_state(qp, IBV_QPS_SQD, "SQD");
}

/* ---- what may be posted ------------------------------------------------ */

struct req {
	uint64_t wr_id;
	enum ibv_wr_opcode op;
	enum ibv_wc_opcode wc;
	int nsge;
	bool inl;
};

/* One of each kind of request, with the completion opcode it flushes as. */
static const struct req kinds[] = {
	{ 0, IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, 1, false },
	{ 0, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WC_RDMA_WRITE, 2, false },
	{ 0, IBV_WR_SEND, IBV_WC_SEND, 0, false },
	{ 0, IBV_WR_SEND_WITH_IMM, IBV_WC_SEND, 2, true },
	{ 0, IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, 2, false },
	{ 0, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WC_COMP_SWAP, 1, false },
	{ 0, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WC_FETCH_ADD, 1, false },
	{ 0, IBV_WR_SEND, IBV_WC_SEND, 1, true },
};

static int post(struct ibv_qp *qp, const struct req *r, uint64_t remote,
		struct ibv_send_wr **bad)
{
	struct ibv_sge sge[3] = {
		{ (uintptr_t)g.buf, 8, g.mr->lkey },
		{ (uintptr_t)(g.buf + 8), 40, g.mr->lkey },
		{ (uintptr_t)(g.buf + 16), 8, g.mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = r->wr_id, .sg_list = sge, .num_sge = r->nsge,
		.opcode = r->op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0x5eed),
		.wr.atomic = {
			.remote_addr = remote, .rkey = 0x1234,
			.compare_add = 1, .swap = 2,
		},
	};

	if (r->inl)
		wr.send_flags |= IBV_SEND_INLINE;
	return ibv_post_send(qp, &wr, bad);
}

/* ---- what comes back --------------------------------------------------- */

struct got {
	uint64_t wr_id;
	int status;
	int opcode;
};

/* Up to @max completions, through the extended CQ, until none for 300 ms. */
static int poll_ex(struct got *got, int max)
{
	struct ibv_poll_cq_attr attr = {};
	int n = 0, idle, ret;

	for (idle = 0; idle < 300 && n < max; idle += 10) {
		ret = ibv_start_poll(g.cqx, &attr);
		if (ret == ENOENT) {
			usleep(10000);
			continue;
		}
		if (ret)
			die("ibv_start_poll: %s", strerror(ret));
		do {
			got[n].wr_id = g.cqx->wr_id;
			got[n].status = g.cqx->status;
			got[n].opcode = ibv_wc_read_opcode(g.cqx);
			n++;
		} while (n < max && !ibv_next_poll(g.cqx));
		ibv_end_poll(g.cqx);
		idle = 0;
	}
	return n;
}

/* The same, through ibv_poll_cq(). */
static int poll_legacy(struct got *got, int max, int ms)
{
	struct ibv_wc wc;
	int n = 0, idle;

	for (idle = 0; idle < ms && n < max; idle += 10) {
		if (ibv_poll_cq(g.cq, 1, &wc) <= 0) {
			usleep(10000);
			continue;
		}
		got[n].wr_id = wc.wr_id;
		got[n].status = wc.status;
		got[n].opcode = wc.opcode;
		n++;
		idle = 0;
	}
	return n;
}

/* @got must be @want's requests, in order, flushed. */
static void check_flushed(const char *name, const struct got *got, int n,
			  const struct req *want, int nwant)
{
	int i;

	if (n != nwant) {
		check(name, false, "%d completions, expected %d", n, nwant);
		return;
	}
	for (i = 0; i < n; i++)
		if (got[i].wr_id != want[i].wr_id ||
		    got[i].status != IBV_WC_WR_FLUSH_ERR ||
		    got[i].opcode != (int)want[i].wc) {
			check(name, false,
			      "completion %d: wr_id %#llx status %s opcode %d, expected wr_id %#llx opcode %d",
			      i, (unsigned long long)got[i].wr_id,
			      ibv_wc_status_str(got[i].status), got[i].opcode,
			      (unsigned long long)want[i].wr_id, want[i].wc);
			return;
		}
	check(name, true, NULL);
}

/* ---- the checks -------------------------------------------------------- */

static void check_not_rts(void)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, 0);
	struct req r = kinds[2];
	struct ibv_send_wr *bad = NULL;
	int ret;

	qp_to_init(qp, &g.path);
	ret = post(qp, &r, 0, &bad);
	check("post_in_init", ret == EINVAL && bad,
	      "returned %d, bad_wr %p", ret, (void *)bad);
	ibv_destroy_qp(qp);
}

static void check_ud_opcodes(void)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UD, 0);
	struct ibv_send_wr *bad;
	int ret;

	to_sqd(qp);
	ret = post(qp, &kinds[0], 0, &bad);
	check("ud_rdma_write", ret == EINVAL, "returned %d", ret);
	ret = post(qp, &kinds[4], 0, &bad);
	check("ud_rdma_read", ret == EINVAL, "returned %d", ret);
	ibv_destroy_qp(qp);
}

/*
 * A chain whose second request is bad: the first stays posted, bad_wr
 * names the second, the third is not posted.
 */
static void check_chain(struct ibv_qp *qp, const char *name,
			struct ibv_send_wr *bad_one, struct req *posted,
			int *nposted)
{
	struct ibv_sge sge = { (uintptr_t)g.buf, 8, g.mr->lkey };
	struct ibv_send_wr third = {
		.wr_id = 0xdead, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
	};
	struct ibv_send_wr first = third, *bad = NULL;
	int ret;

	first.wr_id = 0x100 + *nposted;
	first.send_flags = IBV_SEND_SIGNALED;
	first.next = bad_one;
	bad_one->next = &third;
	ret = ibv_post_send(qp, &first, &bad);
	check(name, ret == EINVAL && bad == bad_one,
	      "returned %d, bad_wr %s", ret,
	      bad == bad_one ? "right" : "wrong");
	posted[*nposted] = kinds[2];
	posted[*nposted].wr_id = first.wr_id;
	posted[*nposted].nsge = 1;
	++*nposted;
}

static void check_bad_requests(struct ibv_qp *qp, struct req *posted,
			       int *nposted)
{
	struct ibv_sge sge[8];
	struct ibv_send_wr wr = {
		.sg_list = sge, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	int i;

	for (i = 0; i < 8; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)g.buf, 64, g.mr->lkey };
	wr.num_sge = 8;
	check_chain(qp, "too_many_sges", &wr, posted, nposted);
	wr.num_sge = 2;
	wr.send_flags |= IBV_SEND_INLINE;
	check_chain(qp, "inline_too_long", &wr, posted, nposted);
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = 0x1004;
	check_chain(qp, "atomic_misaligned", &wr, posted, nposted);
	wr.opcode = IBV_WR_BIND_MW;
	check_chain(qp, "bind_mw", &wr, posted, nposted);
}

/* Every kind of request, round robin, until the ring refuses. */
static void check_fill(struct ibv_qp *qp, struct req *posted, int *nposted)
{
	struct ibv_send_wr *bad = NULL;
	struct req r;
	int ret = 0, k;

	for (k = 0; *nposted < SLOTS + 1; k++) {
		r = kinds[k % 8];
		r.wr_id = 0x200 + k;
		ret = post(qp, &r, 0x1000, &bad);
		if (ret)
			break;
		posted[(*nposted)++] = r;
	}
	check("ring_full", ret == ENOMEM && *nposted == SLOTS,
	      "returned %d after %d requests", ret, *nposted);
}

static void check_post_send(void)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, 0);
	struct req posted[SLOTS + 1];
	struct got got[SLOTS + 4];
	int n = 0;

	to_sqd(qp);
	check_bad_requests(qp, posted, &n);
	check_fill(qp, posted, &n);
	to_state(qp, IBV_QPS_ERR, "ERR");
	check_flushed("flush_post_send", got, poll_ex(got, SLOTS + 4),
		      posted, n);
	ibv_destroy_qp(qp);
}

/* ---- the extended send API --------------------------------------------- */

static void wr_batch_good(struct ibv_qp_ex *x, struct req *want, int *n)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)g.buf, 8, g.mr->lkey },
		{ (uintptr_t)(g.buf + 8), 24, g.mr->lkey },
	};
	static const struct req batch[] = {
		{ 0x300, 0, IBV_WC_SEND, 0, false },
		{ 0x301, 0, IBV_WC_RDMA_WRITE, 0, false },
		{ 0x302, 0, IBV_WC_FETCH_ADD, 0, false },
		{ 0x303, 0, IBV_WC_RDMA_READ, 0, false },
		{ 0x304, 0, IBV_WC_COMP_SWAP, 0, false },
	};

	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 0x300;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, g.mr->lkey, (uintptr_t)g.buf, 16);
	x->wr_id = 0x301;
	ibv_wr_rdma_write(x, 0x1234, 0x1000);
	ibv_wr_set_inline_data(x, g.buf, 20);
	x->wr_id = 0x302;
	ibv_wr_atomic_fetch_add(x, 0x1234, 0x1000, 1);
	ibv_wr_set_sge(x, g.mr->lkey, (uintptr_t)g.buf, 8);
	x->wr_id = 0x303;
	ibv_wr_rdma_read(x, 0x1234, 0x1000);
	ibv_wr_set_sge_list(x, 2, sge);
	x->wr_id = 0x304;
	ibv_wr_atomic_cmp_swp(x, 0x1234, 0x1008, 1, 2);
	ibv_wr_set_sge(x, g.mr->lkey, (uintptr_t)g.buf, 8);
	check("wr_complete", ibv_wr_complete(x) == 0, NULL);
	memcpy(want + *n, batch, sizeof(batch));
	*n += ARRAY_SIZE(batch);
}

/* A batch with one bad call posts nothing; nor does an aborted one. */
static void wr_batch_bad(struct ibv_qp_ex *x)
{
	struct ibv_sge sge[8];
	int i, ret;

	for (i = 0; i < 8; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)g.buf, 8, g.mr->lkey };
	ibv_wr_start(x);
	x->wr_id = 0x400;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, g.mr->lkey, (uintptr_t)g.buf, 8);
	x->wr_id = 0x401;
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 8, sge);
	ret = ibv_wr_complete(x);
	check("wr_complete_bad_batch", ret == EINVAL, "returned %d", ret);

	ibv_wr_start(x);
	x->wr_id = 0x500;
	ibv_wr_send_imm(x, htonl(1));
	ibv_wr_set_sge(x, g.mr->lkey, (uintptr_t)g.buf, 8);
	ibv_wr_abort(x);
}

static void check_wr_api(void)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		       IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, ops);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	struct req want[8];
	struct got got[12];
	int n = 0;

	if (!check("qp_to_qp_ex", x, NULL))
		return;
	to_sqd(qp);
	wr_batch_good(x, want, &n);
	wr_batch_bad(x);
	to_state(qp, IBV_QPS_ERR, "ERR");
	check_flushed("flush_wr_api", got, poll_legacy(got, 12, 300), want,
		      n);

	/* In the error state a request is taken, and flushed at once. */
	want[0] = kinds[2];
	want[0].wr_id = 0x600;
	ibv_wr_start(x);
	x->wr_id = 0x600;
	ibv_wr_send(x);
	check("wr_complete_in_error", ibv_wr_complete(x) == 0, NULL);
	check_flushed("flush_posted_in_error", got,
		      poll_legacy(got, 12, WAIT_MS), want, 1);
	ibv_destroy_qp(qp);
}

static void setup(const char *dev, int gid_index, const char *dgid)
{
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_port_attr port;
	union ibv_gid gid;

	g.ctx = open_dev(dev, gid_index, &gid);
	if (ibv_query_port(g.ctx, 1, &port))
		die("ibv_query_port failed");
	g.pd = ibv_alloc_pd(g.ctx);
	g.cqx = ibv_create_cq_ex(g.ctx, &cq_attr);
	if (!g.pd || !g.cqx)
		die("ibv_alloc_pd/ibv_create_cq_ex: %s", strerror(errno));
	g.cq = ibv_cq_ex_to_cq(g.cqx);
	g.mr = ibv_reg_mr(g.pd, g.buf, sizeof(g.buf), IBV_ACCESS_LOCAL_WRITE);
	if (!g.mr)
		die("ibv_reg_mr: %s", strerror(errno));
	if (inet_pton(AF_INET6, dgid, g.path.gid) != 1)
		die("bad GID %s", dgid);
	g.path.qpn = 0xabcde;
	g.path.gid_index = gid_index;
	g.path.mtu = port.active_mtu;
	g.path.rd_atomic = 1;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *dgid = NULL;
	int gid_index = -1, opt;

	while ((opt = getopt(argc, argv, "d:g:r:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'r':
			dgid = optarg;
			break;
		default:
			dev = NULL;
		}
	}
	if (!dev || gid_index < 0 || !dgid || optind != argc) {
		fprintf(stderr, "usage: " TOOL " -d DEV -g GID_INDEX -r DGID\n");
		return 1;
	}
	set_timeout(60);
	setup(dev, gid_index, dgid);
	check_not_rts();
	check_ud_opcodes();
	check_post_send();
	check_wr_api();
	printf(TOOL ": %s\n", checks_failed ? "FAILED" : "OK");
	return !!checks_failed;
}
