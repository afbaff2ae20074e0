// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-rereg: ibv_rereg_mr() seen from the other end of the wire.
 *
 *   server: sroce-rereg -d DEV -g GID_INDEX [-p PORT] [-t SECONDS]
 *   client: sroce-rereg -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] HOST
 *
 * The server registers one MR over a buffer, OLD, and re-registers it
 * step by step: onto a second buffer, NEW (IBV_REREG_MR_CHANGE_TRANSLATION),
 * into a second PD and back (CHANGE_PD), without and with remote write
 * (CHANGE_ACCESS), while a memory window is bound to it, which must be
 * refused with EBUSY and leave the MR as it was, onto NEW again pinned for
 * reading and then made writable (the driver pins the pages again), and
 * back onto OLD. A translation gives the MR new keys, a PD or rights
 * change keeps them. Before each case it tells
 * the client an address, a key and whether the write must land; the two
 * connect a fresh pair of RC QPs in the server's first PD and the client
 * writes 64 bytes of the case's pattern.
 *
 * A write that must land completes successfully and changes exactly its
 * 64 bytes of the buffer the MR maps; one that must not (a key from before a re-registration,
 * the MR in the other PD, no remote write) completes with
 * IBV_WC_REM_ACCESS_ERR, puts the server's QP in error and changes no
 * byte of either buffer. One line per case; exit status 0 when every case
 * came out right, 1 otherwise, 2 when -t seconds (default 60) pass.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <time.h>

#define TOOL "sroce-rereg"
#include "common.h"

#define BUF		8192
#define LEN		64
#define WAIT_MS		20000	/* for the server's QP to fail */

#define LW		IBV_ACCESS_LOCAL_WRITE
#define RW		IBV_ACCESS_REMOTE_WRITE
#define RR		IBV_ACCESS_REMOTE_READ

enum action {
	A_NONE,
	A_TRANS,	/* OLD -> NEW */
	A_PD_OTHER,	/* into the second PD */
	A_PD_BACK,	/* back into the QPs' PD */
	A_NO_WRITE,	/* rights without remote write */
	A_WRITE,	/* remote write again, and memory windows */
	A_BUSY,		/* bind a window; rereg must fail with EBUSY */
	A_UNBIND,	/* free the window; rereg succeeds again */
	A_TRANS_BACK,	/* NEW -> OLD */
	A_TRANS_RO,	/* NEW again, pinned for reading: remote read only */
	A_REPIN,	/* writable again: the same pages pinned for writing */
};

/* Which key the client is given. */
enum which_key { K_CUR, K_PREV };

enum which_buf { B_OLD, B_NEW };

/**
 * struct rereg_case - one step
 * @name: how the output names it
 * @action: the server's re-registration before the write
 * @key: the MR's key now, or the one before @action
 * @buf: the buffer the address points into
 * @lands: the write must succeed and land
 */
struct rereg_case {
	const char *name;
	enum action action;
	enum which_key key;
	enum which_buf buf;
	bool lands;
};

static const struct rereg_case cases[] = {
	{ "trans_new_key", A_TRANS, K_CUR, B_NEW, true },
	{ "trans_old_key", A_NONE, K_PREV, B_OLD, false },
	{ "trans_old_key_new_buf", A_NONE, K_PREV, B_NEW, false },
	{ "pd_other", A_PD_OTHER, K_CUR, B_NEW, false },
	{ "pd_back", A_PD_BACK, K_CUR, B_NEW, true },
	{ "access_no_write", A_NO_WRITE, K_CUR, B_NEW, false },
	{ "access_write", A_WRITE, K_CUR, B_NEW, true },
	{ "busy_window_bound", A_BUSY, K_CUR, B_NEW, true },
	{ "after_unbind", A_UNBIND, K_CUR, B_NEW, true },
	{ "trans_read_only", A_TRANS_RO, K_CUR, B_NEW, false },
	{ "repin_writable", A_REPIN, K_CUR, B_NEW, true },
	{ "trans_back", A_TRANS_BACK, K_CUR, B_OLD, true },
	{ "trans_back_old_key", A_NONE, K_PREV, B_NEW, false },
};

#define NCASES ARRAY_SIZE(cases)

/* What the server tells the client before a case. */
struct target {
	uint64_t addr;
	uint32_t rkey;
	uint32_t lands;
	int32_t action_err;	/* the re-registration's errno, 0 if fine */
	uint32_t pad;
};

/* What the server saw of a case. */
struct verdict {
	uint32_t qp_state;
	uint32_t memory_ok;	/* exactly the expected bytes changed */
	uint32_t keys_ok;	/* new keys after a translation, else the same */
	uint32_t pad;
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	uint8_t *buf[2], *shadow[2];
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	uint32_t prev_rkey;
	uint8_t *local;
	struct ibv_mr *local_mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	bool server;
} g;

static uint8_t pattern(unsigned int n, size_t i)
{
	return (uint8_t)(0xa5 ^ (n * 0x1f) ^ i);
}

static void setup(const char *dev)
{
	int b;

	g.ctx = open_dev(dev, g.gid_index, &g.gid);
	if (ibv_query_port(g.ctx, 1, &g.port))
		die("ibv_query_port failed");
	g.pd = ibv_alloc_pd(g.ctx);
	g.pd2 = ibv_alloc_pd(g.ctx);
	g.cq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	if (!g.pd || !g.pd2 || !g.cq)
		die("ibv_alloc_pd/ibv_create_cq: %s", strerror(errno));
	if (posix_memalign((void **)&g.local, 4096, BUF))
		die("out of memory");
	memset(g.local, 0, BUF);
	g.local_mr = ibv_reg_mr(g.pd, g.local, BUF, LW);
	if (!g.local_mr)
		die("ibv_reg_mr: %s", strerror(errno));
	if (!g.server)
		return;
	for (b = 0; b < 2; b++) {
		g.shadow[b] = malloc(BUF);
		if (posix_memalign((void **)&g.buf[b], 4096, BUF) ||
		    !g.shadow[b])
			die("out of memory");
		memset(g.buf[b], b ? 0x22 : 0x11, BUF);
		memcpy(g.shadow[b], g.buf[b], BUF);
	}
	g.mr = ibv_reg_mr(g.pd, g.buf[B_OLD], BUF, LW | RW | RR);
	if (!g.mr)
		die("ibv_reg_mr: %s", strerror(errno));
}

/* ---- one case ---------------------------------------------------------- */

static void case_connect(unsigned int n)
{
	struct ibv_qp_init_attr init = {
		.send_cq = g.cq, .recv_cq = g.cq, .qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 4, .max_recv_wr = 4,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	struct path p = {
		.gid_index = g.gid_index, .mtu = g.port.active_mtu,
		.rd_atomic = 1,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	g.qp = ibv_create_qp(g.pd, &init);
	if (!g.qp)
		die("ibv_create_qp: %s", strerror(errno));
	qp_connect_peer(g.qp, g.server, &g.gid,
			n * 0x10101 + (g.server ? 0x800 : 0), &p);
}

static int rereg(int flags, struct ibv_pd *pd, void *addr, int access)
{
	if (ibv_rereg_mr(g.mr, flags, pd, addr, addr ? BUF : 0, access))
		return errno ? errno : EIO;
	return 0;
}

/*
 * Binds a type 1 window over the MR's first half through the case's QP
 * (which is connected by now). While it is bound every kind of
 * re-registration must fail with EBUSY and leave the MR as it was.
 * Returns 0 when they did, else the first wrong errno (ENOTRECOVERABLE
 * for a success or a changed MR).
 */
static int busy_with_window(void)
{
	struct ibv_mw_bind bind = {
		.wr_id = 7, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = g.mr, .addr = (uintptr_t)g.buf[B_NEW],
			.length = BUF / 2, .mw_access_flags = RW,
		},
	};
	uint32_t lkey = g.mr->lkey, rkey = g.mr->rkey;
	struct ibv_wc wc;
	int err[3], i;

	g.mw = ibv_alloc_mw(g.pd, IBV_MW_TYPE_1);
	if (!g.mw)
		die("ibv_alloc_mw: %s", strerror(errno));
	if (ibv_bind_mw(g.qp, g.mw, &bind))
		die("ibv_bind_mw: %s", strerror(errno));
	if (!cq_wait(g.cq, &wc, WAIT_MS) || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != 7)
		die("the window's bind did not complete");
	err[0] = rereg(IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, LW | RW);
	err[1] = rereg(IBV_REREG_MR_CHANGE_PD, g.pd2, NULL, 0);
	err[2] = rereg(IBV_REREG_MR_CHANGE_TRANSLATION, NULL, g.buf[B_OLD],
		       0);
	for (i = 0; i < 3; i++)
		if (err[i] != EBUSY)
			return err[i] ? err[i] : ENOTRECOVERABLE;
	if (g.mr->lkey != lkey || g.mr->rkey != rkey || g.mr->pd != g.pd ||
	    g.mr->addr != g.buf[B_NEW])
		return ENOTRECOVERABLE;
	return 0;
}

/* Carries out a case's re-registration: 0 or the errno it expects. */
static int server_action(enum action a, bool *keys_ok)
{
	uint32_t rkey = g.mr->rkey;
	int err = 0;

	switch (a) {
	case A_NONE:
	case A_BUSY:	/* once the QP is connected */
		return 0;
	case A_TRANS:
		err = rereg(IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			    g.buf[B_NEW], 0);
		break;
	case A_PD_OTHER:
		err = rereg(IBV_REREG_MR_CHANGE_PD, g.pd2, NULL, 0);
		break;
	case A_PD_BACK:
		err = rereg(IBV_REREG_MR_CHANGE_PD, g.pd, NULL, 0);
		break;
	case A_NO_WRITE:
		err = rereg(IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, LW | RR);
		break;
	case A_WRITE:
		err = rereg(IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
			    LW | RW | IBV_ACCESS_MW_BIND);
		break;
	case A_TRANS_RO:
		err = rereg(IBV_REREG_MR_CHANGE_TRANSLATION |
			    IBV_REREG_MR_CHANGE_ACCESS, NULL, g.buf[B_NEW], RR);
		break;
	case A_REPIN:
		err = rereg(IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, LW | RW);
		break;
	case A_TRANS_BACK:
		err = rereg(IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			    g.buf[B_OLD], 0);
		break;
	case A_UNBIND:
		if (ibv_dealloc_mw(g.mw))
			die("ibv_dealloc_mw failed");
		g.mw = NULL;
		err = rereg(IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, LW | RW);
		break;
	}
	if (!err) {
		g.prev_rkey = rkey;
		*keys_ok = g.mr->lkey == g.mr->rkey &&
			   (g.mr->rkey != rkey) ==
			   (a == A_TRANS || a == A_TRANS_BACK ||
			    a == A_TRANS_RO);
	}
	return err;
}

static void server_case(unsigned int n)
{
	const struct rereg_case *c = &cases[n];
	struct ibv_sge sge = {
		.addr = (uintptr_t)g.local, .length = LEN,
		.lkey = g.local_mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct target t = { .lands = c->lands };
	struct verdict v = { .keys_ok = true };
	bool keys_ok = false;
	size_t off = (size_t)n * LEN;
	int ms, b;

	t.action_err = server_action(c->action, &keys_ok);
	if (c->action != A_NONE && c->action != A_BUSY)
		v.keys_ok = keys_ok;
	t.addr = (uintptr_t)g.buf[c->buf] + off;
	t.rkey = c->key == K_CUR ? g.mr->rkey : g.prev_rkey;
	oob_write(&t, sizeof(t));

	case_connect(n);
	if (c->action == A_BUSY) {
		t.action_err = busy_with_window();
		oob_write(&t.action_err, sizeof(t.action_err));
	}
	if (ibv_post_recv(g.qp, &wr, &bad))
		die("ibv_post_recv failed");
	oob_sync(1, false);
	oob_sync(2, false);
	if (!c->lands)
		for (ms = WAIT_MS; ms > 0 && qp_state_of(g.qp) != IBV_QPS_ERR;
		     ms -= 10)
			usleep(10000);
	v.qp_state = qp_state_of(g.qp);
	if (c->lands)
		for (b = 0; b < LEN; b++)
			g.shadow[c->buf][off + b] = pattern(n, b);
	v.memory_ok = !memcmp(g.buf[B_OLD], g.shadow[B_OLD], BUF) &&
		      !memcmp(g.buf[B_NEW], g.shadow[B_NEW], BUF);
	oob_write(&v, sizeof(v));
	qp_destroy_drain(g.qp, g.cq);
}

/* Prints the case's line; returns whether it came out right. */
static bool judge(const struct rereg_case *c, const struct target *t,
		  int status, const struct verdict *v)
{
	bool ok = !t->action_err && v->memory_ok && v->keys_ok;

	if (c->lands)
		ok = ok && status == IBV_WC_SUCCESS;
	else
		ok = ok && status == IBV_WC_REM_ACCESS_ERR &&
		     v->qp_state == IBV_QPS_ERR;
	printf("%-22s %s: rereg %s, keys %s; write %s; responder QP %s, memory %s\n",
	       c->name, ok ? "ok" : "FAILED",
	       t->action_err ? strerror(t->action_err) : "as expected",
	       v->keys_ok ? "as expected" : "WRONG",
	       status < 0 ? "no completion" : ibv_wc_status_str(status),
	       v->qp_state == IBV_QPS_ERR ? "in error" : "not in error",
	       v->memory_ok ? "as expected" : "WRONG");
	return ok;
}

static bool client_case(unsigned int n)
{
	const struct rereg_case *c = &cases[n];
	struct ibv_sge sge = {
		.addr = (uintptr_t)g.local, .length = LEN,
		.lkey = g.local_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct verdict v;
	struct target t;
	struct ibv_wc wc;
	int status = -1, ret, i;

	oob_read(&t, sizeof(t));
	case_connect(n);
	if (c->action == A_BUSY)
		oob_read(&t.action_err, sizeof(t.action_err));
	for (i = 0; i < LEN; i++)
		g.local[i] = pattern(n, i);
	wr.wr.rdma.remote_addr = t.addr;
	wr.wr.rdma.rkey = t.rkey;
	oob_sync(1, false);
	ret = ibv_post_send(g.qp, &wr, &bad);
	if (ret)
		die("%s: ibv_post_send: %s", c->name, strerror(ret));
	if (cq_wait(g.cq, &wc, WAIT_MS))
		status = wc.status;
	oob_sync(2, false);
	oob_read(&v, sizeof(v));
	qp_destroy_drain(g.qp, g.cq);
	return judge(c, &t, status, &v);
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: " TOOL " -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] [HOST]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct tool_opts o = { .port = "18519", .timeout = 60,
			       .gid_index = -1 };
	unsigned int n, failed = 0;
	int opt;

	while ((opt = getopt(argc, argv, TOOL_OPTS "h")) != -1)
		if (!tool_opt(&o, opt, optarg))
			print_usage();
	if (!tool_start(&o, argc, argv))
		print_usage();
	g.gid_index = o.gid_index;
	g.server = o.server;
	setup(o.dev);
	for (n = 0; n < NCASES; n++) {
		if (g.server)
			server_case(n);
		else
			failed += !client_case(n);
	}
	if (g.server) {
		/* A PD change's MR goes with it: dereg, then the PDs. */
		if (ibv_dereg_mr(g.mr) || ibv_dealloc_pd(g.pd2))
			die("teardown after re-registration failed");
		return 0;
	}
	printf(TOOL ": %s: %u of %zu cases right\n", failed ? "FAILED" : "OK",
	       (unsigned int)NCASES - failed, NCASES);
	return !!failed;
}
