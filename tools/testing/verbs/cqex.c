// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-cqex: extended CQs and parent domains, between two machines.
 *
 *   server: sroce-cqex -d DEV -g GID_INDEX [-p PORT] [-t SECONDS]
 *   client: sroce-cqex -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] HOST
 *
 * Each side makes a parent domain of its PD and creates everything else
 * through it: the extended CQ (IBV_CQ_INIT_ATTR_MASK_PD, the standard
 * fields and the wall-clock completion time), the RC and UD QPs
 * (ibv_create_qp_ex), the server's SRQ, the MRs and the UD address
 * handle. The client sends: a Send with immediate and an RDMA Write with
 * immediate on RC, consumed from the server's SRQ; an RDMA Read back;
 * a UD Send. Each message goes twice, and the receiver reads the first
 * through ibv_start_poll()/ibv_wc_read_*() and the second through
 * ibv_poll_cq() on ibv_cq_ex_to_cq() of the same CQ: every field must be
 * what was sent, the same both ways, and each completion time must lie
 * between the receiver's clock before the message was sent and after it
 * was polled. Before any traffic the create verbs must refuse what sroce
 * cannot honour (EOPNOTSUPP), a plain PD where a parent domain belongs
 * (EINVAL), and deallocating a domain still in use (EBUSY).
 *
 * One line per check; exit status 0 when all pass, 1 otherwise, 2 when
 * -t seconds (default 60) pass.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <time.h>

#define TOOL "sroce-cqex"
#define CHECK_WIDTH	28
#include "common.h"

#define LEN		100
#define WRITE_LEN	200
#define READ_LEN	300
#define GRH_LEN		40
#define IMM		0x5eedf00dU
#define WAIT_MS		20000
#define CQ_FLAGS	(IBV_WC_STANDARD_FLAGS | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
/* wc.sl of a UD receive over RoCEv2/IPv4, as mlx5 reports it (libsroce). */
#define SL_ROCE_V2_IPV4	0xa

/* What one side tells the other. */
struct side {
	uint8_t gid[16];
	uint32_t rc_qpn;
	uint32_t ud_qpn;
	uint32_t rkey;
	uint64_t addr;
};

/* One completion, however it was read. */
struct comp {
	uint64_t wr_id;
	int status;
	int opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint32_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint64_t ns;
};

static struct {
	bool server;
	int gid_index;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_pd *pad;
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	struct ibv_qp *rc;
	struct ibv_qp *ud;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	uint8_t buf[4096];
	struct side me, peer;
	unsigned int allocs;
} g;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The allocators only count: libsroce owns no buffers to put there. */
static void *pad_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type)
{
	(void)pd, (void)pd_context, (void)size, (void)alignment;
	(void)resource_type;
	g.allocs++;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void pad_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type)
{
	(void)pd, (void)pd_context, (void)ptr, (void)resource_type;
}

static int create_cq_errno(uint64_t wc_flags, uint32_t comp_mask,
			   struct ibv_pd *pd)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4, .wc_flags = wc_flags, .comp_mask = comp_mask,
		.parent_domain = pd,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(g.ctx, &attr);

	if (!cq)
		return errno;
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	return 0;
}

/* What must be refused before anything is created on the domains. */
static void check_refusals(void)
{
	int err;

	err = create_cq_errno(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 0, NULL);
	check("refuse_device_timestamp", err == EOPNOTSUPP, "%s",
	      strerror(err));
	err = create_cq_errno(IBV_WC_STANDARD_FLAGS | (1ULL << 40), 0, NULL);
	check("refuse_unknown_wc_flag", err == EOPNOTSUPP, "%s",
	      strerror(err));
	err = create_cq_errno(IBV_WC_STANDARD_FLAGS, IBV_CQ_INIT_ATTR_MASK_PD,
			      g.pd);
	check("refuse_plain_pd_for_cq", err == EINVAL, "%s", strerror(err));
	err = ibv_dealloc_pd(g.pd);
	check("pd_busy_with_parent", err == EBUSY, "%s", strerror(err));
}

static void setup(const char *dev)
{
	struct ibv_parent_domain_init_attr pattr = {
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = pad_alloc, .free = pad_free, .pd_context = &g,
	};
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 64, .wc_flags = CQ_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD |
			     IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_srq_init_attr sattr = {
		.attr = { .max_wr = 8, .max_sge = 1 },
	};
	union ibv_gid gid;
	int err;

	g.ctx = open_dev(dev, g.gid_index, &gid);
	memcpy(g.me.gid, gid.raw, 16);
	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	pattr.pd = g.pd;
	g.pad = ibv_alloc_parent_domain(g.ctx, &pattr);
	if (!g.pad)
		die("ibv_alloc_parent_domain: %s", strerror(errno));
	check_refusals();

	cattr.parent_domain = g.pad;
	g.cqx = ibv_create_cq_ex(g.ctx, &cattr);
	if (!g.cqx)
		die("ibv_create_cq_ex: %s", strerror(errno));
	err = ibv_dealloc_pd(g.pad);
	check("parent_busy_with_cq", err == EBUSY, "%s", strerror(err));
	if (g.server) {
		g.srq = ibv_create_srq(g.pad, &sattr);
		if (!g.srq)
			die("ibv_create_srq: %s", strerror(errno));
	}
	g.mr = ibv_reg_mr(g.pad, g.buf, sizeof(g.buf),
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ);
	if (!g.mr)
		die("ibv_reg_mr: %s", strerror(errno));
	g.me.rkey = g.mr->rkey;
	g.me.addr = (uintptr_t)g.buf;
}

static struct ibv_qp *make_qp(enum ibv_qp_type type)
{
	struct ibv_cq *cq = ibv_cq_ex_to_cq(g.cqx);
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.srq = type == IBV_QPT_RC ? g.srq : NULL,
		.cap = {
			.max_send_wr = 8, .max_recv_wr = 8,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = g.pad,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct ibv_qp *qp;

	if (type == IBV_QPT_RC)
		attr.send_ops_flags |= IBV_QP_EX_WITH_SEND_WITH_IMM |
				       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				       IBV_QP_EX_WITH_RDMA_READ;
	qp = ibv_create_qp_ex(g.ctx, &attr);
	if (!qp)
		die("ibv_create_qp_ex(%d): %s", type, strerror(errno));
	return qp;
}

static void ud_ready(void)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111,
	};

	modify_qp(g.ud, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
		  IBV_QP_PORT | IBV_QP_QKEY, "INIT");
	attr.qp_state = IBV_QPS_RTR;
	modify_qp(g.ud, &attr, IBV_QP_STATE, "RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	modify_qp(g.ud, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
}

static void connect_all(void)
{
	struct ibv_port_attr port;
	struct ibv_ah_attr ah = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = g.gid_index, .hop_limit = 64 },
	};
	struct path p = {
		.gid_index = g.gid_index, .rd_atomic = 1,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_query_port(g.ctx, 1, &port))
		die("ibv_query_port failed");
	g.rc = make_qp(IBV_QPT_RC);
	g.ud = make_qp(IBV_QPT_UD);
	g.me.rc_qpn = g.rc->qp_num;
	g.me.ud_qpn = g.ud->qp_num;
	oob_swap(g.server, &g.me, &g.peer, sizeof(g.me));

	memcpy(p.gid, g.peer.gid, 16);
	p.qpn = g.peer.rc_qpn;
	p.mtu = port.active_mtu;
	qp_connect(g.rc, &p);
	ud_ready();
	memcpy(ah.grh.dgid.raw, g.peer.gid, 16);
	g.ah = ibv_create_ah(g.pad, &ah);
	if (!g.ah)
		die("ibv_create_ah: %s", strerror(errno));
}

static void post_recv(uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)g.buf + 2048, .length = len,
		.lkey = g.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int ret;

	if (wr_id & 0x100)
		ret = ibv_post_recv(g.ud, &wr, &bad);
	else
		ret = ibv_post_srq_recv(g.srq, &wr, &bad);
	if (ret)
		die("post recv: %s", strerror(ret));
}

/* The completion the extended API shows now. */
static void read_ex(struct comp *c)
{
	struct ibv_cq_ex *x = g.cqx;

	c->wr_id = x->wr_id;
	c->status = x->status;
	c->opcode = ibv_wc_read_opcode(x);
	c->vendor_err = ibv_wc_read_vendor_err(x);
	c->byte_len = ibv_wc_read_byte_len(x);
	c->wc_flags = ibv_wc_read_wc_flags(x);
	c->imm = c->wc_flags & IBV_WC_WITH_INV ?
		 ibv_wc_read_invalidated_rkey(x) :
		 ntohl(ibv_wc_read_imm_data(x));
	c->qp_num = ibv_wc_read_qp_num(x);
	c->src_qp = ibv_wc_read_src_qp(x);
	c->slid = ibv_wc_read_slid(x);
	c->sl = ibv_wc_read_sl(x);
	c->dlid_path_bits = ibv_wc_read_dlid_path_bits(x);
	c->ns = ibv_wc_read_completion_wallclock_ns(x);
}

static void from_wc(struct comp *c, const struct ibv_wc *wc)
{
	*c = (struct comp){
		.wr_id = wc->wr_id, .status = wc->status,
		.opcode = wc->opcode, .vendor_err = wc->vendor_err,
		.byte_len = wc->byte_len, .imm = ntohl(wc->imm_data),
		.qp_num = wc->qp_num, .src_qp = wc->src_qp,
		.wc_flags = wc->wc_flags, .slid = wc->slid, .sl = wc->sl,
		.dlid_path_bits = wc->dlid_path_bits,
	};
}

/* One completion, by the extended API or by ibv_poll_cq(). */
static bool get_comp(struct comp *c, bool ex)
{
	struct ibv_poll_cq_attr attr = {};
	uint64_t end = now_ns() + WAIT_MS * 1000000ULL;
	struct ibv_wc wc;
	int ret;

	do {
		if (!ex) {
			ret = ibv_poll_cq(ibv_cq_ex_to_cq(g.cqx), 1, &wc);
			if (ret < 0)
				die("ibv_poll_cq: %d", ret);
			if (ret) {
				from_wc(c, &wc);
				return true;
			}
			continue;
		}
		ret = ibv_start_poll(g.cqx, &attr);
		if (ret == ENOENT)
			continue;
		if (ret)
			die("ibv_start_poll: %s", strerror(ret));
		read_ex(c);
		ibv_end_poll(g.cqx);
		return true;
	} while (now_ns() < end);
	return false;
}

/* One field against what it must be; a mismatch fails check @name. */
static bool expect(const char *name, const char *field, uint64_t have,
		   uint64_t want)
{
	if (have == want)
		return true;
	check(name, false, "%s %#llx, not %#llx", field,
	      (unsigned long long)have, (unsigned long long)want);
	return false;
}

/* @want's fields, and a completion time in [@t0, @t1] if @ex. */
static void judge(const char *name, const struct comp *c,
		  const struct comp *want, bool ex, uint64_t t0, uint64_t t1)
{
	bool recv = want->opcode & IBV_WC_RECV;
	bool len = recv || want->opcode == IBV_WC_RDMA_READ;
	bool imm = want->wc_flags & IBV_WC_WITH_IMM;

	if (!expect(name, "wr_id", c->wr_id, want->wr_id) ||
	    !expect(name, "status", c->status, IBV_WC_SUCCESS) ||
	    !expect(name, "opcode", c->opcode, want->opcode) ||
	    !expect(name, "vendor_err", c->vendor_err, 0) ||
	    !expect(name, "qp_num", c->qp_num, want->qp_num) ||
	    !expect(name, "wc_flags", c->wc_flags, want->wc_flags) ||
	    !expect(name, "byte_len", len ? c->byte_len : 0,
		    len ? want->byte_len : 0) ||
	    !expect(name, "src_qp", recv ? c->src_qp : 0,
		    recv ? want->src_qp : 0) ||
	    !expect(name, "sl", recv ? c->sl : 0, recv ? want->sl : 0) ||
	    !expect(name, "imm_data", imm ? c->imm : 0, imm ? want->imm : 0) ||
	    !expect(name, "slid", c->slid, 0) ||
	    !expect(name, "dlid_path_bits", c->dlid_path_bits, 0))
		return;
	if (ex && (c->ns < t0 || c->ns > t1)) {
		check(name, false, "completed at %llu, outside [%llu, %llu]",
		      (unsigned long long)c->ns, (unsigned long long)t0,
		      (unsigned long long)t1);
		return;
	}
	check(name, true, NULL);
}

/* Client: one request (a Send is UD's), its completion judged. */
static void client_send(const char *name, enum ibv_wr_opcode op, bool ex)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(op == IBV_WR_SEND ? g.ud : g.rc);
	struct comp c, want = { .wr_id = op, .qp_num = x->qp_base.qp_num };
	uint64_t t0, t1;
	int ret;

	x->wr_id = op;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_start(x);
	switch (op) {
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(x, htonl(IMM));
		want.opcode = IBV_WC_SEND;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(x, g.peer.rkey, g.peer.addr,
				      htonl(IMM + 1));
		want.opcode = IBV_WC_RDMA_WRITE;
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(x, g.peer.rkey, g.peer.addr);
		want.opcode = IBV_WC_RDMA_READ;
		want.byte_len = READ_LEN;
		break;
	default:
		ibv_wr_send(x);
		ibv_wr_set_ud_addr(x, g.ah, g.peer.ud_qpn, 0x11111111);
		want.opcode = IBV_WC_SEND;
	}
	ibv_wr_set_sge(x, g.mr->lkey, (uintptr_t)g.buf,
		       op == IBV_WR_RDMA_READ ? READ_LEN :
		       op == IBV_WR_RDMA_WRITE_WITH_IMM ? WRITE_LEN : LEN);
	t0 = now_ns();
	ret = ibv_wr_complete(x);
	if (ret)
		die("%s: ibv_wr_complete: %s", name, strerror(ret));
	if (!get_comp(&c, ex)) {
		check(name, false, "no completion");
		return;
	}
	t1 = now_ns();
	judge(name, &c, &want, ex, t0, t1);
}

/* Server: a receive posted, the client told to send, the receive judged. */
static void server_recv(const char *name, const struct comp *want, bool ex)
{
	struct comp c;
	uint64_t t0, t1;

	post_recv(want->wr_id, 1024);
	t0 = now_ns();
	oob_sync(1, false);
	if (!get_comp(&c, ex)) {
		check(name, false, "no completion");
		return;
	}
	t1 = now_ns();
	judge(name, &c, want, ex, t0, t1);
}

static void traffic(void)
{
	static const struct {
		const char *name;
		enum ibv_wr_opcode op;
	} reqs[] = {
		{ "rc_send_imm", IBV_WR_SEND_WITH_IMM },
		{ "rc_write_imm", IBV_WR_RDMA_WRITE_WITH_IMM },
		{ "ud_send", IBV_WR_SEND },
	};
	unsigned int i, pass;

	for (i = 0; i < ARRAY_SIZE(reqs); i++) {
		for (pass = 0; pass < 2; pass++) {
			bool ex = !pass;
			char name[40];

			snprintf(name, sizeof(name), "%s_%s", reqs[i].name,
				 ex ? "ex" : "poll_cq");
			if (g.server) {
				bool ud = reqs[i].op == IBV_WR_SEND;
				struct comp want = {
					.wr_id = (ud ? 0x100 : 0) | i << 1 | pass,
					.qp_num = ud ? g.me.ud_qpn : g.me.rc_qpn,
					.src_qp = ud ? g.peer.ud_qpn :
						       g.peer.rc_qpn,
					.opcode = reqs[i].op == IBV_WR_RDMA_WRITE_WITH_IMM ?
						  IBV_WC_RECV_RDMA_WITH_IMM :
						  IBV_WC_RECV,
					.byte_len = ud ? GRH_LEN + LEN :
						    reqs[i].op == IBV_WR_SEND_WITH_IMM ?
						    LEN : WRITE_LEN,
					.wc_flags = ud ? IBV_WC_GRH : IBV_WC_WITH_IMM,
					.imm = IMM + i,
					.sl = ud ? SL_ROCE_V2_IPV4 : 0,
				};

				server_recv(name, &want, ex);
			} else {
				oob_sync(1, false);
				client_send(name, reqs[i].op, ex);
			}
			oob_sync(2, false);
		}
	}
	if (!g.server) {
		client_send("rc_read_ex", IBV_WR_RDMA_READ, true);
		client_send("rc_read_poll_cq", IBV_WR_RDMA_READ, false);
	}
}

static void teardown(void)
{
	if (ibv_destroy_ah(g.ah) || ibv_destroy_qp(g.ud) ||
	    ibv_destroy_qp(g.rc) || ibv_dereg_mr(g.mr) ||
	    (g.srq && ibv_destroy_srq(g.srq)) ||
	    ibv_destroy_cq(ibv_cq_ex_to_cq(g.cqx)))
		die("destroying: %s", strerror(errno));
	check("dealloc_parent_domain", !ibv_dealloc_pd(g.pad), NULL);
	check("dealloc_pd", !ibv_dealloc_pd(g.pd), NULL);
	/* Not a requirement, a fact: every ring is the kernel's. */
	printf("allocator calls %u\n", g.allocs);
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
	int opt;

	while ((opt = getopt(argc, argv, TOOL_OPTS "h")) != -1)
		if (!tool_opt(&o, opt, optarg))
			print_usage();
	if (!tool_start(&o, argc, argv))
		print_usage();
	g.gid_index = o.gid_index;
	g.server = o.server;
	setup(o.dev);
	connect_all();
	oob_sync(0, false);
	traffic();
	oob_sync(3, false);
	teardown();
	printf(TOOL ": %s\n", checks_failed ? "FAILED" : "OK");
	return !!checks_failed;
}
