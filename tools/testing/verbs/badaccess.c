// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-badaccess: RDMA operations that break the remote access rules,
 * and what must come of them.
 *
 *   server: sroce-badaccess -d DEV -g GID_INDEX [-p PORT] [-t SECONDS]
 *   client: sroce-badaccess -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] HOST
 *
 * The server registers memory regions with known contents: one readable
 * and writable (but not for atomics), one only readable, one only
 * writable, one in a second protection domain, and one deregistered
 * again, whose key must be dead. For each case the two sides connect a
 * fresh pair of RC QPs, the server posts a receive, and the client posts
 * one request that must fail: a write with a wrong key, with a dead key,
 * into the read-only region, past either end, into the other PD's region;
 * a read of the write-only region or past the end; an atomic without
 * atomic access; a write with immediate and a wrong key.
 *
 * What must follow (IBTA 9.7.5.2.4, 10.7.3.1): the client's request
 * completes with IBV_WC_REM_ACCESS_ERR; the server's QP goes to the error
 * state, so its receive completes in error too (flushed, or with the
 * access error when the request consumed it); and not one byte of the
 * server's memory changes. One line per case; exit status 0 when every
 * case came out right, 1 otherwise, 2 when -t seconds (default 60) pass.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <poll.h>
#include <time.h>

#define TOOL "sroce-badaccess"
#include "common.h"

#define REGION		4096
#define LEN		64
#define WAIT_MS		20000	/* for the server's QP to fail */

enum region { R_RW, R_RO, R_WO, R_OTHER_PD, R_GONE, R_COUNT };

static const char * const region_name[] = {
	[R_RW] = "read-write", [R_RO] = "read-only", [R_WO] = "write-only",
	[R_OTHER_PD] = "other PD", [R_GONE] = "deregistered",
};

/**
 * struct bad_case - one violation
 * @name: how the output names it
 * @op: the request
 * @region: the server region it targets
 * @offset: where in the region, from its start (may be negative)
 * @rkey_xor: what to flip in the region's key
 */
struct bad_case {
	const char *name;
	enum ibv_wr_opcode op;
	enum region region;
	long offset;
	uint32_t rkey_xor;
};

static const struct bad_case cases[] = {
	{ "write_bad_rkey", IBV_WR_RDMA_WRITE, R_RW, 0, 0x80 },
	{ "write_dead_rkey", IBV_WR_RDMA_WRITE, R_GONE, 0, 0 },
	{ "write_read_only", IBV_WR_RDMA_WRITE, R_RO, 0, 0 },
	{ "write_past_end", IBV_WR_RDMA_WRITE, R_RW, REGION - LEN / 2, 0 },
	{ "write_before_start", IBV_WR_RDMA_WRITE, R_RW, -LEN / 2, 0 },
	{ "write_other_pd", IBV_WR_RDMA_WRITE, R_OTHER_PD, 0, 0 },
	{ "read_write_only", IBV_WR_RDMA_READ, R_WO, 0, 0 },
	{ "read_past_end", IBV_WR_RDMA_READ, R_RW, REGION - LEN / 2, 0 },
	{ "atomic_no_access", IBV_WR_ATOMIC_FETCH_AND_ADD, R_RW, 0, 0 },
	{ "write_imm_bad_rkey", IBV_WR_RDMA_WRITE_WITH_IMM, R_RW, 0, 0x80 },
};

#define NCASES ARRAY_SIZE(cases)

struct region_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

/* What the server saw of a case. */
struct verdict {
	uint32_t qp_state;
	int32_t recv_status;	/* -1: no completion */
	uint32_t changed;	/* regions whose bytes changed */
	uint32_t pad;
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	uint8_t *mem[R_COUNT];
	struct ibv_mr *mr[R_COUNT];
	struct region_info region[R_COUNT];
	uint8_t *local;		/* receive buffer, read and atomic targets */
	struct ibv_mr *local_mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	bool server;
} g;

static uint8_t fill_byte(enum region r, size_t i)
{
	return (uint8_t)(r * 0x3b + i * 7 + (i >> 8));
}

static uint8_t *region_alloc(enum region r)
{
	void *p;
	size_t i;

	if (posix_memalign(&p, 4096, REGION))
		die("out of memory");
	for (i = 0; i < REGION; i++)
		((uint8_t *)p)[i] = fill_byte(r, i);
	return p;
}

static void region_reg(enum region r, struct ibv_pd *pd, int access)
{
	g.mem[r] = region_alloc(r);
	g.mr[r] = ibv_reg_mr(pd, g.mem[r], REGION, access);
	if (!g.mr[r])
		die("ibv_reg_mr(%s): %s", region_name[r], strerror(errno));
	g.region[r].addr = (uintptr_t)g.mem[r];
	g.region[r].rkey = g.mr[r]->rkey;
}

/*
 * The deregistered region keeps its memory (its contents are still
 * checked) but loses its key; a region registered after it must not
 * bring the key back.
 */
static void server_regions(void)
{
	int lw = IBV_ACCESS_LOCAL_WRITE;

	g.pd2 = ibv_alloc_pd(g.ctx);
	if (!g.pd2)
		die("ibv_alloc_pd: %s", strerror(errno));
	region_reg(R_RW, g.pd, lw | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ);
	region_reg(R_RO, g.pd, IBV_ACCESS_REMOTE_READ);
	region_reg(R_WO, g.pd, lw | IBV_ACCESS_REMOTE_WRITE);
	region_reg(R_OTHER_PD, g.pd2, lw | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	region_reg(R_GONE, g.pd, lw | IBV_ACCESS_REMOTE_WRITE);
	if (ibv_dereg_mr(g.mr[R_GONE]))
		die("ibv_dereg_mr failed");
	g.mr[R_GONE] = NULL;
}

/* A bit per region whose bytes are not what they were filled with. */
static uint32_t regions_changed(void)
{
	uint32_t changed = 0;
	size_t i;
	int r;

	for (r = 0; r < R_COUNT; r++)
		for (i = 0; i < REGION; i++)
			if (g.mem[r][i] != fill_byte(r, i)) {
				changed |= 1U << r;
				break;
			}
	return changed;
}

static void setup(const char *dev)
{
	g.ctx = open_dev(dev, g.gid_index, &g.gid);
	if (ibv_query_port(g.ctx, 1, &g.port))
		die("ibv_query_port failed");
	g.pd = ibv_alloc_pd(g.ctx);
	g.cq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	if (!g.pd || !g.cq)
		die("ibv_alloc_pd/ibv_create_cq: %s", strerror(errno));
	if (posix_memalign((void **)&g.local, 4096, REGION))
		die("out of memory");
	memset(g.local, 0, REGION);
	g.local_mr = ibv_reg_mr(g.pd, g.local, REGION,
				IBV_ACCESS_LOCAL_WRITE);
	if (!g.local_mr)
		die("ibv_reg_mr: %s", strerror(errno));
	if (g.server) {
		server_regions();
		oob_write(g.region, sizeof(g.region));
	} else {
		oob_read(g.region, sizeof(g.region));
	}
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
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
	};

	g.qp = ibv_create_qp(g.pd, &init);
	if (!g.qp)
		die("ibv_create_qp: %s", strerror(errno));
	qp_connect_peer(g.qp, g.server, &g.gid,
			n * 0x10101 + (g.server ? 0x800 : 0), &p);
}

static void server_case(unsigned int n, struct verdict *v)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)g.local, .length = LEN,
		.lkey = g.local_mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	int ms;

	case_connect(n);
	if (ibv_post_recv(g.qp, &wr, &bad))
		die("ibv_post_recv failed");
	oob_sync(1, false);
	/* The client has its completion once it gets here. */
	oob_sync(2, false);
	for (ms = WAIT_MS; ms > 0 && qp_state_of(g.qp) != IBV_QPS_ERR; ms -= 10)
		usleep(10000);
	v->qp_state = qp_state_of(g.qp);
	v->recv_status = cq_wait(g.cq, &wc, 2000) ? (int32_t)wc.status : -1;
	v->changed = regions_changed();
	oob_write(v, sizeof(*v));
	qp_destroy_drain(g.qp, g.cq);
}

static struct ibv_send_wr case_wr(const struct bad_case *c,
				  struct ibv_sge *sge)
{
	const struct region_info *r = &g.region[c->region];
	struct ibv_send_wr wr = {
		.sg_list = sge, .num_sge = 1, .opcode = c->op,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0x1234),
	};

	sge->addr = (uintptr_t)g.local;
	sge->length = c->op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : LEN;
	sge->lkey = g.local_mr->lkey;
	if (c->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = r->addr + c->offset;
		wr.wr.atomic.rkey = r->rkey ^ c->rkey_xor;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = r->addr + c->offset;
		wr.wr.rdma.rkey = r->rkey ^ c->rkey_xor;
	}
	return wr;
}

/* Prints the case's line; returns whether it came out right. */
static bool judge(const struct bad_case *c, int status,
		  const struct verdict *v)
{
	bool ok = status == IBV_WC_REM_ACCESS_ERR &&
		  v->qp_state == IBV_QPS_ERR && v->recv_status > 0 &&
		  !v->changed;

	printf("%-20s %s: requester %s; responder QP %s, receive %s, memory %s\n",
	       c->name, ok ? "ok" : "FAILED",
	       status < 0 ? "no completion" : ibv_wc_status_str(status),
	       v->qp_state == IBV_QPS_ERR ? "in error" : "NOT in error",
	       v->recv_status < 0 ? "not completed" :
	       ibv_wc_status_str(v->recv_status),
	       v->changed ? "CHANGED" : "unchanged");
	return ok;
}

static bool client_case(unsigned int n)
{
	const struct bad_case *c = &cases[n];
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct verdict v;
	struct ibv_wc wc;
	int status = -1, ret;

	case_connect(n);
	oob_sync(1, false);
	wr = case_wr(c, &sge);
	ret = ibv_post_send(g.qp, &wr, &bad);
	if (ret)
		die("%s: ibv_post_send: %s", c->name, strerror(ret));
	/* Retries run out long before this, were the request retried. */
	if (cq_wait(g.cq, &wc, WAIT_MS))
		status = wc.status;
	oob_sync(2, false);
	oob_read(&v, sizeof(v));
	qp_destroy_drain(g.qp, g.cq);
	return judge(c, status, &v);
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: " TOOL " -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] [HOST]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct tool_opts o = { .port = "18518", .timeout = 60,
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
		struct verdict v;

		if (g.server)
			server_case(n, &v);
		else
			failed += !client_case(n);
	}
	if (g.server)
		return 0;
	printf(TOOL ": %s: %u of %zu cases right\n", failed ? "FAILED" : "OK",
	       (unsigned int)NCASES - failed, NCASES);
	return !!failed;
}
