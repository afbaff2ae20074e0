// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-cqclean: a destroyed QP's completions must not outlive it in a CQ
 * it shared with other QPs.
 *
 *     sroce-cqclean -d DEV
 *
 * QP numbers come back once the device has gone round them, and a
 * completion left behind by a destroyed QP would then be polled as one of
 * the QP that got its number. On one device, with no peer: QP K and QP A
 * share a CQ, each has receives flushed into it (a QP moved to ERR
 * completes what it holds), A is destroyed before anything is polled, and
 * QP B, created next, has its own receive flushed into the same CQ. The
 * CQ must then hold K's and B's completions, in order, and none of A's.
 * Run with the plain and the extended polling API, one CQ each. Prints a
 * line per check and "sroce-cqclean: OK" when every check passed.
 */
#define TOOL "sroce-cqclean"
#include "common.h"

#define CQ_DEPTH	64
#define RECV_LEN	64

struct comp {
	uint64_t wr_id;
	uint32_t qpn;
	enum ibv_wc_status status;
};

static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char buf[RECV_LEN];
/* The CQ being run with the extended API, or NULL. */
static struct ibv_cq_ex *cqx;

static struct ibv_qp *make_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct path p = { .access = 0 };
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	qp_to_init(qp, &p);
	return qp;
}

/* Posts a receive per wr_id in [@first, @first + @n), then flushes them. */
static void flush_recvs(struct ibv_qp *qp, uint64_t first, int n)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = RECV_LEN,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i, ret;

	for (i = 0; i < n; i++) {
		wr.wr_id = first + i;
		ret = ibv_post_recv(qp, &wr, &bad);
		if (ret)
			die("ibv_post_recv: %s", strerror(ret));
	}
	modify_qp(qp, &attr, IBV_QP_STATE, "ERR");
}

static int poll_plain(struct ibv_cq *cq, struct comp *out, int max)
{
	struct ibv_wc wc[CQ_DEPTH];
	int i, n = ibv_poll_cq(cq, max < CQ_DEPTH ? max : CQ_DEPTH, wc);

	if (n < 0)
		die("ibv_poll_cq: %d", n);
	for (i = 0; i < n; i++)
		out[i] = (struct comp){ wc[i].wr_id, wc[i].qp_num,
					wc[i].status };
	return n;
}

static int poll_ex(struct comp *out, int max)
{
	struct ibv_poll_cq_attr attr = {};
	int n = 0, ret;

	ret = ibv_start_poll(cqx, &attr);
	if (ret == ENOENT)
		return 0;
	if (ret)
		die("ibv_start_poll: %s", strerror(ret));
	do {
		out[n++] = (struct comp){ cqx->wr_id, ibv_wc_read_qp_num(cqx),
					  cqx->status };
	} while (n < max && !ibv_next_poll(cqx));
	ibv_end_poll(cqx);
	return n;
}

static struct ibv_cq *make_cq(struct ibv_context *ctx, bool ex)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = CQ_DEPTH,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_cq *cq;

	cqx = NULL;
	if (!ex) {
		cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
		if (!cq)
			die("ibv_create_cq: %s", strerror(errno));
		return cq;
	}
	cqx = ibv_create_cq_ex(ctx, &attr);
	if (!cqx)
		die("ibv_create_cq_ex: %s", strerror(errno));
	return ibv_cq_ex_to_cq(cqx);
}

static void run(struct ibv_context *ctx, bool ex)
{
	const char *api = ex ? "ex" : "plain";
	struct ibv_cq *cq = make_cq(ctx, ex);
	struct ibv_qp *k = make_qp(cq), *a, *b;
	struct comp got[CQ_DEPTH];
	uint32_t a_qpn, a_left = 0, b_foreign = 0;
	bool order = true;
	char name[40];
	int n, i;

	flush_recvs(k, 1, 2);		/* K: 1, 2 */
	a = make_qp(cq);
	a_qpn = a->qp_num;
	flush_recvs(a, 100, 5);		/* A: 100..104, never polled */
	if (ibv_destroy_qp(a))
		die("ibv_destroy_qp: %s", strerror(errno));
	b = make_qp(cq);
	flush_recvs(b, 200, 1);		/* B: 200 */

	n = ex ? poll_ex(got, CQ_DEPTH) : poll_plain(cq, got, CQ_DEPTH);
	for (i = 0; i < n; i++) {
		a_left += got[i].qpn == a_qpn;
		b_foreign += got[i].qpn == b->qp_num && got[i].wr_id != 200;
	}
	snprintf(name, sizeof(name), "%s: none of A's", api);
	check(name, !a_left, "%u of QP %#x's completions polled after its destroy",
	      a_left, a_qpn);
	snprintf(name, sizeof(name), "%s: B's own only", api);
	check(name, !b_foreign, "%u completions credited to QP %#x not its own",
	      b_foreign, b->qp_num);
	order = n == 3 &&
		got[0].qpn == k->qp_num && got[0].wr_id == 1 &&
		got[1].qpn == k->qp_num && got[1].wr_id == 2 &&
		got[2].qpn == b->qp_num && got[2].wr_id == 200;
	for (i = 0; i < n; i++)
		order &= got[i].status == IBV_WC_WR_FLUSH_ERR;
	snprintf(name, sizeof(name), "%s: K then B, flushed", api);
	check(name, order, "%d completions polled, expected K's 1, 2 and B's 200",
	      n);
	snprintf(name, sizeof(name), "%s: then empty", api);
	n = ex ? poll_ex(got, CQ_DEPTH) : poll_plain(cq, got, CQ_DEPTH);
	check(name, n == 0, "%d more completions", n);

	if (ibv_destroy_qp(b) || ibv_destroy_qp(k) || ibv_destroy_cq(cq))
		die("teardown: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	const char *dev = NULL;
	union ibv_gid gid;
	int opt;

	while ((opt = getopt(argc, argv, "d:h")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: " TOOL " -d DEV\n");
			return opt == 'h' ? 0 : 1;
		}
		dev = optarg;
	}
	if (!dev) {
		fprintf(stderr, "usage: " TOOL " -d DEV\n");
		return 1;
	}
	set_timeout(60);
	ctx = open_dev(dev, 0, &gid);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr: %s", strerror(errno));

	run(ctx, false);
	run(ctx, true);

	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	if (checks_failed)
		return 1;
	printf(TOOL ": OK\n");
	return 0;
}
