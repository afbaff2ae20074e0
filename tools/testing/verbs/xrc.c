// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-xrc: XRC between two machines, one XRC target QP shared by
 * several processes of the server.
 *
 *   server: sroce-xrc -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] [-P N]
 *   client: sroce-xrc -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] HOST
 *
 * The server forks N - 1 helper processes (-P, default 3 processes in all)
 * before any of them opens the device. Each opens the device and the one
 * XRC domain by the same file (ibv_open_xrcd() with its fd), and makes an
 * XRC SRQ of its own in it, with its own PD, CQ and receive buffers. The
 * first process creates the XRC target QP; the others open it by number
 * (ibv_open_qp()). The client has an XRC initiator QP connected to it.
 *
 *   sends	 the client sends to each process's SRQ in turn, messages of
 *		 one packet and of several: each lands in that process's
 *		 buffers, whole, and completes on that process's CQ with the
 *		 target QP's number
 *   writes	 RDMA writes through the same target, checked in the first
 *		 process's PD (its SRQ's): the bytes land
 *   shared	 the first process destroys its handle of the target QP; the
 *		 QP lives on for the others, and sends to the helpers' SRQs
 *		 still arrive
 *   foreign	 a second initiator, to a second target QP, sends to an SRQ
 *		 of another XRC domain: the target answers with a NAK
 *		 (invalid request), the initiator's WQE completes with
 *		 IBV_WC_REM_INV_REQ_ERR and its QP goes to the error state;
 *		 nothing lands in that SRQ
 *
 * One line per check; exit status 0 when every check passed, 1 otherwise,
 * 2 when -t seconds (default 60) pass.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define TOOL "sroce-xrc"
#include "common.h"

#define MAXPROC		4
#define MSGS		6
#define MSG_BYTES	3000	/* three packets at the path MTU of 1024 */
#define BUF		(MSGS * MSG_BYTES)
#define WRITE_BYTES	2500
#define WAIT_MS		20000

/* What the server tells the client. */
struct srv_info {
	uint64_t magic;
	uint8_t gid[16];
	uint32_t tgt_qpn;
	uint32_t tgt2_qpn;
	uint32_t nproc;
	uint32_t srqn[MAXPROC];
	uint32_t foreign_srqn;
	uint32_t rkey;
	uint64_t addr;
};

/* What the client tells the server. */
struct cli_info {
	uint64_t magic;
	uint8_t gid[16];
	uint32_t ini_qpn;
	uint32_t ini2_qpn;
};

/* One process's side of the server. */
struct proc {
	struct ibv_context *ctx;
	struct ibv_xrcd *xrcd;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
};

static const char *dev_name;
static int gid_index;

static uint8_t pattern(unsigned int who, unsigned int msg, unsigned int i)
{
	return (uint8_t)(who * 131 + msg * 17 + i * 7 + 1);
}

static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, int fd)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *xrcd = ibv_open_xrcd(ctx, &attr);

	if (!xrcd)
		die("ibv_open_xrcd: %s", strerror(errno));
	return xrcd;
}

static struct ibv_srq *xrc_srq(struct proc *p, struct ibv_xrcd *xrcd)
{
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = 2 * MSGS, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = p->pd,
		.xrcd = xrcd,
		.cq = p->cq,
	};
	struct ibv_srq *srq = ibv_create_srq_ex(p->ctx, &attr);

	if (!srq)
		die("ibv_create_srq_ex(XRC): %s", strerror(errno));
	return srq;
}

static uint32_t srq_num(struct ibv_srq *srq)
{
	uint32_t n;
	int ret = ibv_get_srq_num(srq, &n);

	if (ret)
		die("ibv_get_srq_num: %s", strerror(ret));
	return n;
}

/* One receive of MSG_BYTES at @off of the process's buffer into @srq. */
static void post_recv_at(struct proc *p, struct ibv_srq *srq, size_t off,
			 uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->buf + off,
		.length = MSG_BYTES, .lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int ret = ibv_post_srq_recv(srq, &wr, &bad);

	if (ret)
		die("ibv_post_srq_recv: %s", strerror(ret));
}

/* Device, domain of @fd, PD, CQ, buffer, and an XRC SRQ full of receives. */
static void proc_setup(struct proc *p, int fd)
{
	unsigned int i;

	p->ctx = open_dev(dev_name, gid_index, &p->gid);
	p->xrcd = open_xrcd(p->ctx, fd);
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = ibv_create_cq(p->ctx, 4 * MSGS, NULL, NULL, 0);
	p->buf = calloc(1, BUF);
	if (!p->pd || !p->cq || !p->buf)
		die("PD, CQ or buffer: %s", strerror(errno));
	p->mr = ibv_reg_mr(p->pd, p->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!p->mr)
		die("ibv_reg_mr: %s", strerror(errno));
	p->srq = xrc_srq(p, p->xrcd);
	for (i = 0; i < 2 * MSGS; i++)
		post_recv_at(p, p->srq, (i % MSGS) * MSG_BYTES, i);
}

static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc, unsigned int ms)
{
	unsigned int waited;
	int n;

	for (waited = 0; waited <= ms; waited++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			die("ibv_poll_cq: %d", n);
		if (n)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * @n messages for process @who, first message number @first: each a
 * receive completion of the target @qpn on this process's CQ, its bytes
 * the client's pattern. Returns the failures' count, said on stdout.
 */
static unsigned int expect_msgs(struct proc *p, unsigned int who,
				unsigned int first, unsigned int n,
				uint32_t qpn)
{
	unsigned int k, i, bad = 0;
	struct ibv_wc wc;
	const uint8_t *m;

	for (k = first; k < first + n; k++) {
		if (!poll_one(p->cq, &wc, WAIT_MS)) {
			printf("  process %u: message %u never came\n", who, k);
			return bad + 1;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.qp_num != qpn || wc.byte_len != MSG_BYTES) {
			printf("  process %u: %s, opcode %d, qp %#x (want %#x), %u bytes\n",
			       who, ibv_wc_status_str(wc.status), wc.opcode,
			       wc.qp_num, qpn, wc.byte_len);
			bad++;
			continue;
		}
		m = p->buf + (wc.wr_id % MSGS) * MSG_BYTES;
		for (i = 0; i < MSG_BYTES; i++)
			if (m[i] != pattern(who, k, i))
				break;
		if (i < MSG_BYTES) {
			printf("  process %u: message %u differs at byte %u\n",
			       who, k, i);
			bad++;
		}
	}
	return bad;
}

static void pipe_write(int fd, const void *p, size_t len)
{
	if (write(fd, p, len) != (ssize_t)len)
		die("pipe write: %s", strerror(errno));
}

static void pipe_read(int fd, void *p, size_t len)
{
	if (read(fd, p, len) != (ssize_t)len)
		die("pipe read: %s", strerror(errno));
}

/*
 * A helper process: its own SRQ in the shared domain, the target QP
 * opened by number. Told by the first process what to expect, it answers
 * with its failures' count.
 */
static int helper(unsigned int who, int fd, int in, int out)
{
	struct ibv_qp_open_attr oattr = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	uint32_t cmd[3], srqn, bad;
	struct ibv_qp *qp;
	struct proc p;

	proc_setup(&p, fd);
	srqn = srq_num(p.srq);
	pipe_write(out, &srqn, sizeof(srqn));
	pipe_read(in, &oattr.qp_num, sizeof(oattr.qp_num));
	oattr.xrcd = p.xrcd;
	qp = ibv_open_qp(p.ctx, &oattr);
	bad = !qp || ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) ||
	      attr.qp_state != IBV_QPS_RTR;
	if (bad)
		printf("  process %u: opening target QP %#x: %s\n", who,
		       oattr.qp_num, strerror(errno));
	pipe_write(out, &bad, sizeof(bad));
	/* cmd: first message, count, target QP number; count 0 ends. */
	for (;;) {
		pipe_read(in, cmd, sizeof(cmd));
		if (!cmd[1])
			break;
		bad = expect_msgs(&p, who, cmd[0], cmd[1], cmd[2]);
		fflush(stdout);
		pipe_write(out, &bad, sizeof(bad));
	}
	if (qp && ibv_destroy_qp(qp))
		die("closing the target QP: %s", strerror(errno));
	ibv_destroy_srq(p.srq);
	ibv_dereg_mr(p.mr);
	ibv_destroy_cq(p.cq);
	ibv_dealloc_pd(p.pd);
	if (ibv_close_xrcd(p.xrcd))
		die("ibv_close_xrcd: %s", strerror(errno));
	ibv_close_device(p.ctx);
	return 0;
}

static void to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = access,
	};

	modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		  IBV_QP_ACCESS_FLAGS, "INIT");
}

/* The target's and the initiator's INIT to RTR, as the core's table says. */
static void to_rtr(struct ibv_qp *qp, const uint8_t *gid, uint32_t dqpn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn,
		.rq_psn = 0x1234,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .sgid_index = gid_index, .hop_limit = 64 },
		},
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	memcpy(attr.ah_attr.grh.dgid.raw, gid, 16);
	if (qp->qp_type == IBV_QPT_XRC_RECV)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	modify_qp(qp, &attr, mask, "RTR");
}

static void ini_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 0x1234,
		.timeout = 16,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
	};

	modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		  IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

static struct ibv_qp *tgt_qp(struct proc *p)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = p->xrcd,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(p->ctx, &attr);

	if (!qp)
		die("creating an XRC target QP: %s", strerror(errno));
	to_init(qp, IBV_ACCESS_REMOTE_WRITE);
	return qp;
}

/* Tells every helper what to expect and sums what they answer. */
static unsigned int helpers_expect(int (*pipes)[2], unsigned int nproc,
				   unsigned int from, uint32_t first,
				   uint32_t n, uint32_t qpn)
{
	uint32_t cmd[3] = { first, n, qpn }, bad, sum = 0;
	unsigned int i;

	for (i = from; i < nproc; i++)
		pipe_write(pipes[i][1], cmd, sizeof(cmd));
	/* None: the helpers close everything and exit, saying nothing. */
	for (i = from; i < nproc && n; i++) {
		pipe_read(pipes[i][0], &bad, sizeof(bad));
		sum += bad;
	}
	return sum;
}

static int server(unsigned int nproc)
{
	char path[] = "/tmp/sroce-xrc-XXXXXX", path2[] = "/tmp/sroce-xrc-XXXXXX";
	int to[MAXPROC][2], from[MAXPROC][2], pipes[MAXPROC][2];
	struct ibv_xrcd *xrcd2;
	struct ibv_srq *foreign;
	struct ibv_qp *tgt, *tgt2;
	struct srv_info si = { .magic = OOB_MAGIC, .nproc = nproc };
	struct cli_info ci;
	struct proc p;
	unsigned int i, bad;
	struct ibv_wc wc;
	int fd, fd2, status;
	pid_t pid[MAXPROC];

	fd = mkstemp(path);
	fd2 = mkstemp(path2);
	if (fd < 0 || fd2 < 0)
		die("mkstemp: %s", strerror(errno));
	unlink(path);
	unlink(path2);
	/* Helpers fork before anybody opens the device. */
	for (i = 1; i < nproc; i++) {
		if (pipe(to[i]) || pipe(from[i]))
			die("pipe: %s", strerror(errno));
		pid[i] = fork();
		if (pid[i] < 0)
			die("fork: %s", strerror(errno));
		if (!pid[i]) {
			close(oob_fd);
			exit(helper(i, fd, to[i][0], from[i][1]));
		}
		pipes[i][0] = from[i][0];
		pipes[i][1] = to[i][1];
	}
	proc_setup(&p, fd);
	memcpy(si.gid, p.gid.raw, 16);
	si.srqn[0] = srq_num(p.srq);
	si.addr = (uintptr_t)p.buf;
	si.rkey = p.mr->rkey;
	tgt = tgt_qp(&p);
	tgt2 = tgt_qp(&p);
	si.tgt_qpn = tgt->qp_num;
	si.tgt2_qpn = tgt2->qp_num;
	/* Another domain, whose SRQ no target of the first may serve. */
	xrcd2 = open_xrcd(p.ctx, fd2);
	foreign = xrc_srq(&p, xrcd2);
	si.foreign_srqn = srq_num(foreign);
	/* Room for the send that must not land, so that it would. */
	post_recv_at(&p, foreign, BUF - MSG_BYTES, MSGS);
	for (i = 1; i < nproc; i++)
		pipe_read(pipes[i][0], &si.srqn[i], sizeof(si.srqn[i]));

	/* The client's GID, our numbers, then its QPs' numbers. */
	oob_read(&ci, offsetof(struct cli_info, ini_qpn));
	if (ci.magic != OOB_MAGIC)
		die("out-of-band protocol error");
	oob_write(&si, sizeof(si));
	oob_read(&ci.ini_qpn, sizeof(ci) - offsetof(struct cli_info, ini_qpn));
	to_rtr(tgt, ci.gid, ci.ini_qpn);
	to_rtr(tgt2, ci.gid, ci.ini2_qpn);
	/* Opened in RTR: the helpers see the state it was brought to. */
	bad = 0;
	for (i = 1; i < nproc; i++)
		pipe_write(pipes[i][1], &si.tgt_qpn, sizeof(si.tgt_qpn));
	for (i = 1; i < nproc; i++) {
		uint32_t b;

		pipe_read(pipes[i][0], &b, sizeof(b));
		bad += b;
	}
	check("open_qp", !bad, "%u helpers could not open the target", bad);
	oob_sync(1, false);

	/* sends: MSGS to each process, in turn. */
	bad = expect_msgs(&p, 0, 0, MSGS, si.tgt_qpn);
	fflush(stdout);
	bad += helpers_expect(pipes, nproc, 1, 0, MSGS, si.tgt_qpn);
	oob_sync(2, bad);
	check("sends", !bad, "%u messages went wrong", bad);

	/* writes: the client's bytes at the end of our buffer. */
	oob_sync(3, false);
	for (i = 0; i < WRITE_BYTES; i++)
		if (p.buf[BUF - WRITE_BYTES + i] != pattern(9, 9, i))
			break;
	oob_sync(4, i < WRITE_BYTES);
	check("writes", i == WRITE_BYTES, "byte %u differs", i);

	/* shared: our handle goes; the helpers' keep the QP. */
	if (ibv_destroy_qp(tgt))
		die("destroying the target QP handle: %s", strerror(errno));
	oob_sync(5, false);
	bad = helpers_expect(pipes, nproc, 1, MSGS, MSGS, si.tgt_qpn);
	oob_sync(6, bad);
	check("shared", !bad, "%u messages went wrong", bad);

	/* foreign: nothing lands in the other domain's SRQ. */
	oob_sync(7, false);
	bad = ibv_poll_cq(p.cq, 1, &wc);
	oob_sync(8, bad);
	check("foreign", !bad, "a completion on the foreign SRQ's CQ");

	helpers_expect(pipes, nproc, 1, 0, 0, 0);
	for (i = 1; i < nproc; i++)
		if (waitpid(pid[i], &status, 0) != pid[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			check("helper_exit", false, "process %u", i);
	ibv_destroy_qp(tgt2);
	ibv_destroy_srq(foreign);
	ibv_destroy_srq(p.srq);
	if (ibv_close_xrcd(xrcd2) || ibv_close_xrcd(p.xrcd))
		die("ibv_close_xrcd: %s", strerror(errno));
	return checks_failed ? 1 : 0;
}

static struct ibv_qp *ini_qp(struct proc *p, const struct srv_info *si,
			     uint32_t dqpn)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = p->pd,
		.send_cq = p->cq,
		.cap = { .max_send_wr = 2 * MSGS, .max_send_sge = 1 },
		.sq_sig_all = 1,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(p->ctx, &attr);

	if (!qp)
		die("creating an XRC initiator QP: %s", strerror(errno));
	to_init(qp, 0);
	to_rtr(qp, si->gid, dqpn);
	ini_to_rts(qp);
	return qp;
}

/* Posts one request to @srqn and waits for its completion's status. */
static enum ibv_wc_status send_one(struct proc *p, struct ibv_qp *qp,
				   enum ibv_wr_opcode op, uint32_t srqn,
				   uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->buf, .length = len, .lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	int ret;

	wr.qp_type.xrc.remote_srqn = srqn;
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		die("ibv_post_send: %s", strerror(ret));
	if (!poll_one(p->cq, &wc, WAIT_MS))
		die("no send completion");
	return wc.status;
}

/* Sends messages @first.. to process @who's SRQ; false on an error. */
static bool send_msgs(struct proc *p, struct ibv_qp *qp,
		      const struct srv_info *si, unsigned int who,
		      unsigned int first, unsigned int n)
{
	enum ibv_wc_status st;
	unsigned int k, i;

	for (k = first; k < first + n; k++) {
		for (i = 0; i < MSG_BYTES; i++)
			p->buf[i] = pattern(who, k, i);
		/* Three packets each: XRCETH in every one, one SRQ WQE. */
		st = send_one(p, qp, IBV_WR_SEND, si->srqn[who], MSG_BYTES,
			      0, 0);
		if (st != IBV_WC_SUCCESS) {
			printf("  send %u to process %u: %s\n", k, who,
			       ibv_wc_status_str(st));
			return false;
		}
	}
	return true;
}

static int client(void)
{
	struct cli_info ci = { .magic = OOB_MAGIC };
	struct ibv_qp *ini, *ini2;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr = {};
	enum ibv_wc_status st;
	struct srv_info si;
	struct proc p = {};
	unsigned int i;
	bool ok;

	p.ctx = open_dev(dev_name, gid_index, &p.gid);
	p.pd = ibv_alloc_pd(p.ctx);
	p.cq = ibv_create_cq(p.ctx, 4 * MSGS, NULL, NULL, 0);
	p.buf = calloc(1, BUF);
	if (!p.pd || !p.cq || !p.buf)
		die("PD, CQ or buffer: %s", strerror(errno));
	p.mr = ibv_reg_mr(p.pd, p.buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!p.mr)
		die("ibv_reg_mr: %s", strerror(errno));
	memcpy(ci.gid, p.gid.raw, 16);
	oob_write(&ci, offsetof(struct cli_info, ini_qpn));
	oob_read(&si, sizeof(si));
	if (si.magic != OOB_MAGIC || !si.nproc || si.nproc > MAXPROC)
		die("out-of-band protocol error");
	ini = ini_qp(&p, &si, si.tgt_qpn);
	ini2 = ini_qp(&p, &si, si.tgt2_qpn);
	ci.ini_qpn = ini->qp_num;
	ci.ini2_qpn = ini2->qp_num;
	oob_write(&ci.ini_qpn, sizeof(ci) - offsetof(struct cli_info, ini_qpn));
	oob_sync(1, false);

	ok = true;
	for (i = 0; i < si.nproc && ok; i++)
		ok = send_msgs(&p, ini, &si, i, 0, MSGS);
	ok = !oob_sync(2, !ok) && ok;
	check("sends", ok, "the server or a send said so");

	for (i = 0; i < WRITE_BYTES; i++)
		p.buf[i] = pattern(9, 9, i);
	st = send_one(&p, ini, IBV_WR_RDMA_WRITE, si.srqn[0], WRITE_BYTES,
		      si.addr + BUF - WRITE_BYTES, si.rkey);
	oob_sync(3, false);
	ok = !oob_sync(4, st != IBV_WC_SUCCESS) && st == IBV_WC_SUCCESS;
	check("writes", ok, "%s", ibv_wc_status_str(st));

	oob_sync(5, false);
	ok = true;
	for (i = 1; i < si.nproc && ok; i++)
		ok = send_msgs(&p, ini, &si, i, MSGS, MSGS);
	ok = !oob_sync(6, !ok) && ok;
	check("shared", ok, "the server or a send said so");

	/* The first target's number names an SRQ of its own domain. */
	st = send_one(&p, ini2, IBV_WR_SEND, si.foreign_srqn, 64, 0, 0);
	ok = st == IBV_WC_REM_INV_REQ_ERR;
	ok = !ibv_query_qp(ini2, &attr, IBV_QP_STATE, &init) &&
	     attr.qp_state == IBV_QPS_ERR && ok;
	oob_sync(7, false);
	ok = !oob_sync(8, !ok) && ok;
	check("foreign", ok, "%s, QP state %d", ibv_wc_status_str(st),
	      attr.qp_state);

	ibv_destroy_qp(ini2);
	ibv_destroy_qp(ini);
	return checks_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct tool_opts o = { .port = "18532", .timeout = 60,
			       .gid_index = -1 };
	unsigned int nproc = 3;
	int opt, ret;

	while ((opt = getopt(argc, argv, TOOL_OPTS "P:")) != -1) {
		if (opt == 'P')
			nproc = opt_num('P', optarg, MAXPROC);
		else if (!tool_opt(&o, opt, optarg))
			goto usage;
	}
	if (!nproc || !tool_start(&o, argc, argv))
		goto usage;
	dev_name = o.dev;
	gid_index = o.gid_index;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = o.server ? server(nproc) : client();
	if (!o.server)
		printf("%s: %s\n", TOOL, ret ? "FAILED" : "OK");
	return ret;
usage:
	fprintf(stderr, "usage: %s -d DEV -g GID_INDEX [-p PORT] [-t SECONDS] ",
		TOOL);
	fputs("[-P N] [HOST]\n", stderr);
	return 1;
}
