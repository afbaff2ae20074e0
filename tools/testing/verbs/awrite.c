// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-awrite: IBA 1.5 atomic write (IBV_WR_ATOMIC_WRITE) between two
 * machines, judged at the target.
 *
 *   server: sroce-awrite -d DEV -g GID_INDEX [-p PORT] [-t SECONDS]
 *                        [-n NETDEV]
 *   client: sroce-awrite -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] [-L]
 *                        HOST
 *
 * The server registers a buffer, with and without remote write; for each
 * case the two connect a fresh pair of RC QPs (extended ones, the atomic
 * write opcode asked for) and the client posts atomic writes:
 *
 *   post_send	  eight words through ibv_post_send (the value from an
 *		  inline SGE), each a completion IBV_WC_ATOMIC_WRITE
 *   wr_api	  eight words through ibv_wr_atomic_write()
 *   same_word	  32 writes to one word in a row: the last one stays
 *   bad_rkey	  a key that names nothing: IBV_WC_REM_ACCESS_ERR
 *   misaligned	  a word 4 bytes off: IBV_WC_REM_INV_REQ_ERR
 *   no_write	  an MR without remote write: IBV_WC_REM_ACCESS_ERR
 *   duplicate	  the server drops its own RoCE frames (tc on -n NETDEV,
 *		  default eth0) until the word has landed, then stores
 *		  another value there itself and lets frames go: the
 *		  client's retransmission is a duplicate, which must be
 *		  answered (the WQE completes) and not executed again (the
 *		  server's value stays)
 *
 * With -L (given to the client) the post_send case is left out: rdma-core's
 * rxe provider takes atomic writes only through ibv_wr_atomic_write(), its
 * ibv_post_send() sends them without the rkey.
 *
 * After each case the server says whether its buffer holds exactly what
 * the case wrote, nothing else changed (and, for a refused write, that its
 * QP went to the error state). One line per case; exit status 0 when every
 * case came out right, 1 otherwise, 2 when -t seconds (default 60) pass.
 */
#define _GNU_SOURCE
#include <getopt.h>

#define TOOL "sroce-awrite"
#include "common.h"

#define BUF		4096
#define WORDS		8
#define REPEAT		32
#define WAIT_MS		20000

enum kind { K_POST, K_WR, K_SAME, K_RKEY, K_ALIGN, K_NOWRITE, K_DUP };

static const struct {
	const char *name;
	enum kind kind;
} cases[] = {
	{ "post_send", K_POST },
	{ "wr_api", K_WR },
	{ "same_word", K_SAME },
	{ "bad_rkey", K_RKEY },
	{ "misaligned", K_ALIGN },
	{ "no_write", K_NOWRITE },
	{ "duplicate", K_DUP },
};

#define NCASES ARRAY_SIZE(cases)

/* What the server tells the client before a case. */
struct target {
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

/* What the server saw. */
struct verdict {
	uint32_t memory_ok;
	uint32_t qp_state;
	uint32_t detail;	/* the duplicate case: 1 the word landed */
	uint32_t pad;
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	uint64_t *buf, *shadow, *ro;
	struct ibv_mr *mr, *ro_mr;
	const char *netdev;
	bool server;
} g;

static uint64_t value(unsigned int n, unsigned int i)
{
	return 0x5a5a000000000000ULL ^ ((uint64_t)n << 32) ^
	       (i * 0x0101010101ULL) ^ 0xc3;
}

static void setup(const char *dev)
{
	g.ctx = open_dev(dev, g.gid_index, &g.gid);
	if (ibv_query_port(g.ctx, 1, &g.port))
		die("ibv_query_port failed");
	g.pd = ibv_alloc_pd(g.ctx);
	g.cq = ibv_create_cq(g.ctx, 2 * REPEAT, NULL, NULL, 0);
	if (!g.pd || !g.cq)
		die("ibv_alloc_pd/ibv_create_cq: %s", strerror(errno));
	if (!g.server)
		return;
	g.shadow = malloc(BUF);
	if (posix_memalign((void **)&g.buf, 4096, BUF) ||
	    posix_memalign((void **)&g.ro, 4096, BUF) || !g.shadow)
		die("out of memory");
	memset(g.buf, 0x11, BUF);
	memset(g.ro, 0x22, BUF);
	memcpy(g.shadow, g.buf, BUF);
	g.mr = ibv_reg_mr(g.pd, g.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	g.ro_mr = ibv_reg_mr(g.pd, g.ro, BUF, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_ATOMIC);
	if (!g.mr || !g.ro_mr)
		die("ibv_reg_mr: %s", strerror(errno));
}

/* A fresh pair of RC QPs for case @n, the atomic write opcode asked for. */
static void case_connect(unsigned int n)
{
	struct ibv_qp_init_attr_ex init = {
		.send_cq = g.cq, .recv_cq = g.cq, .qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = REPEAT, .max_recv_wr = 1,
			.max_send_sge = 1, .max_recv_sge = 1,
			.max_inline_data = 16,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = g.pd,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct path p = {
		.gid_index = g.gid_index, .mtu = g.port.active_mtu,
		.rd_atomic = 4,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
	};

	g.qp = ibv_create_qp_ex(g.ctx, &init);
	if (!g.qp)
		die("ibv_create_qp_ex with IBV_QP_EX_WITH_ATOMIC_WRITE: %s",
		    strerror(errno));
	g.qpx = ibv_qp_to_qp_ex(g.qp);
	if (!g.qpx)
		die("no extended QP");
	qp_connect_peer(g.qp, g.server, &g.gid,
			n * 0x10203 + (g.server ? 0x900 : 0), &p);
}

static void run_tc(const char *args)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "tc %s", args);
	if (system(cmd))
		die("'%s' failed", cmd);
}

/* RoCEv2 frames (UDP 4791) this machine sends are dropped; others go. */
static void drop_roce(bool on)
{
	char args[200];

	if (!on) {
		snprintf(args, sizeof(args), "qdisc del dev %s root", g.netdev);
		run_tc(args);
		return;
	}
	snprintf(args, sizeof(args), "qdisc add dev %s root handle 1: prio",
		 g.netdev);
	run_tc(args);
	snprintf(args, sizeof(args),
		 "qdisc add dev %s parent 1:3 handle 30: netem loss 100%%",
		 g.netdev);
	run_tc(args);
	snprintf(args, sizeof(args),
		 "filter add dev %s parent 1: protocol ip u32 match ip dport 4791 0xffff flowid 1:3",
		 g.netdev);
	run_tc(args);
}

static void server_case(unsigned int n)
{
	enum kind k = cases[n].kind;
	struct target t = {};
	struct verdict v = {};
	uint64_t *word;
	unsigned int i, off = n * 64 / sizeof(uint64_t);
	int ms;

	t.addr = (uintptr_t)(g.buf + off);
	t.rkey = g.mr->rkey;
	if (k == K_RKEY)
		t.rkey = g.mr->rkey ^ 0x00fff000;
	if (k == K_ALIGN)
		t.addr += 4;
	if (k == K_NOWRITE) {
		t.addr = (uintptr_t)(g.ro + off);
		t.rkey = g.ro_mr->rkey;
	}
	oob_write(&t, sizeof(t));
	case_connect(n);
	if (k == K_DUP)
		drop_roce(true);
	oob_sync(1, false);
	if (k == K_DUP) {
		/* The word lands, its answer does not leave. */
		word = g.buf + off;
		for (ms = WAIT_MS; ms > 0 &&
		     __atomic_load_n(word, __ATOMIC_ACQUIRE) != value(n, 0);
		     ms -= 1)
			usleep(1000);
		v.detail = __atomic_load_n(word, __ATOMIC_ACQUIRE) ==
			   value(n, 0);
		*word = value(n, 99);
		g.shadow[off] = value(n, 99);
		drop_roce(false);
	}
	oob_sync(2, false);
	if (k == K_POST || k == K_WR)
		for (i = 0; i < WORDS; i++)
			g.shadow[off + i] = value(n, i);
	if (k == K_SAME)
		g.shadow[off] = value(n, REPEAT - 1);
	if (k == K_RKEY || k == K_ALIGN || k == K_NOWRITE)
		for (ms = WAIT_MS; ms > 0 && qp_state_of(g.qp) != IBV_QPS_ERR;
		     ms -= 10)
			usleep(10000);
	v.qp_state = qp_state_of(g.qp);
	v.memory_ok = !memcmp(g.buf, g.shadow, BUF) &&
		      g.ro[0] == 0x2222222222222222ULL &&
		      !memcmp(g.ro, (uint8_t *)g.ro + 8, BUF - 8);
	oob_write(&v, sizeof(v));
	qp_destroy_drain(g.qp, g.cq);
}

/* Posts @count atomic writes of case @n; the last (or each) signaled. */
static void client_post(unsigned int n, const struct target *t)
{
	enum kind k = cases[n].kind;
	unsigned int count = k == K_SAME ? REPEAT :
			     k == K_POST || k == K_WR ? WORDS : 1;
	unsigned int i;
	uint64_t v;
	int ret;

	if (k == K_POST) {
		for (i = 0; i < count; i++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)&v, .length = sizeof(v),
			};
			struct ibv_send_wr wr = {
				.wr_id = i, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_ATOMIC_WRITE,
				.send_flags = IBV_SEND_SIGNALED |
					      IBV_SEND_INLINE,
			}, *bad;

			v = value(n, i);
			wr.wr.rdma.remote_addr = t->addr + i * sizeof(v);
			wr.wr.rdma.rkey = t->rkey;
			ret = ibv_post_send(g.qp, &wr, &bad);
			if (ret)
				die("ibv_post_send(IBV_WR_ATOMIC_WRITE): %s",
				    strerror(ret));
		}
		return;
	}
	ibv_wr_start(g.qpx);
	for (i = 0; i < count; i++) {
		v = value(n, i);
		g.qpx->wr_id = i;
		g.qpx->wr_flags = k == K_SAME && i != count - 1 ? 0 :
				  IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(g.qpx, t->rkey,
				    t->addr + (k == K_SAME ? 0 : i * sizeof(v)),
				    &v);
	}
	ret = ibv_wr_complete(g.qpx);
	if (ret)
		die("ibv_wr_complete: %s", strerror(ret));
}

static bool client_case(unsigned int n)
{
	enum kind k = cases[n].kind;
	unsigned int want = k == K_POST || k == K_WR ? WORDS : 1;
	int expect = k == K_RKEY || k == K_NOWRITE ? IBV_WC_REM_ACCESS_ERR :
		     k == K_ALIGN ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_SUCCESS;
	bool refused = expect != IBV_WC_SUCCESS;
	unsigned int got = 0, bad_op = 0;
	int status = IBV_WC_SUCCESS;
	struct verdict v;
	struct target t;
	const char *name = cases[n].name, *qp_note, *dup_note;
	struct ibv_wc wc;
	bool ok;

	oob_read(&t, sizeof(t));
	case_connect(n);
	oob_sync(1, false);
	client_post(n, &t);
	while (got < want && cq_wait(g.cq, &wc, WAIT_MS)) {
		got++;
		if (wc.status != IBV_WC_SUCCESS && status == IBV_WC_SUCCESS)
			status = wc.status;
		if (!wc.status && wc.opcode != IBV_WC_ATOMIC_WRITE)
			bad_op++;
		if (wc.status)
			break;
	}
	oob_sync(2, false);
	oob_read(&v, sizeof(v));
	ok = got && status == expect && !bad_op && v.memory_ok &&
	     (refused ? v.qp_state == IBV_QPS_ERR : got == want) &&
	     (k != K_DUP || v.detail);
	qp_note = "";
	if (refused && v.qp_state == IBV_QPS_ERR)
		qp_note = ", its QP in error";
	else if (refused)
		qp_note = ", its QP NOT in error";
	dup_note = "";
	if (k == K_DUP && v.detail)
		dup_note = ", landed before the duplicate";
	else if (k == K_DUP)
		dup_note = ", never landed";
	printf("%-11s %s: %u of %u completions, status %s%s; target %s%s%s\n",
	       name, ok ? "ok" : "FAILED", got, want,
	       ibv_wc_status_str(status), bad_op ? ", WRONG opcode" : "",
	       v.memory_ok ? "as expected" : "WRONG", qp_note, dup_note);
	qp_destroy_drain(g.qp, g.cq);
	return ok;
}

int main(int argc, char **argv)
{
	struct tool_opts o = { .port = "18531", .timeout = 60,
			       .gid_index = -1 };
	unsigned int n, passed = 0, ran = 0;
	uint32_t no_post = 0;
	int opt;

	g.netdev = "eth0";
	while ((opt = getopt(argc, argv, TOOL_OPTS "n:L")) != -1) {
		if (opt == 'n')
			g.netdev = optarg;
		else if (opt == 'L')
			no_post = 1;
		else if (!tool_opt(&o, opt, optarg))
			goto usage;
	}
	if (!tool_start(&o, argc, argv))
		goto usage;
	g.server = o.server;
	g.gid_index = o.gid_index;
	setup(o.dev);
	/* The client says which cases run. */
	if (g.server)
		oob_read(&no_post, sizeof(no_post));
	else
		oob_write(&no_post, sizeof(no_post));
	for (n = 0; n < NCASES; n++) {
		if (no_post && cases[n].kind == K_POST)
			continue;
		ran++;
		if (g.server)
			server_case(n);
		else
			passed += client_case(n);
	}
	if (g.server)
		return 0;
	printf("%s: %s: %u of %u\n", TOOL, passed == ran ? "OK" : "FAILED",
	       passed, ran);
	return passed == ran ? 0 : 1;
usage:
	fprintf(stderr, "usage: %s -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] ",
		TOOL);
	fputs("[-n NETDEV] [-L] [HOST]\n", stderr);
	return 1;
}
