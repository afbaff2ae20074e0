// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-hostile: a local process that does what an unprivileged user may
 * do to hurt the kernel through its RDMA device. Every mode works inside
 * one guest: its QPs are connected to each other (or to themselves)
 * through the device's own GID.
 *
 *   sroce-hostile MODE -d DEV -g GID_INDEX [-s SECONDS] [-t TIMEOUT]
 *                 [-r READY_FILE]
 *
 * scribble     threads write garbage into the rings this process shares
 *              with the kernel (ring indices, flags, send and receive
 *              entries: opcodes out of range, SGE counts past the maximum,
 *              lengths near 2^32, lkeys of another PD, huge inline sizes)
 *              while other threads post, poll and ring the doorbell; the
 *              QPs are made anew every round.
 * bindinval    two threads post memory window bind / local invalidate
 *              pairs on one UC QP aimed at itself, as fast as they can.
 * bindring     the same flood written straight into the send rings, the
 *              way any process may, by two threads each on its own QP:
 *              the kernel gets more than a poster through libsroce gives.
 * destroyrace  QPs, MRs and CQs are destroyed while traffic between two QPs
 *              is in flight and threads post and poll on what remains.
 * fork         fork() with registered memory and live QPs: the child
 *              writes over the registered buffers, then exits or is
 *              killed; the parent's RDMA writes between its own buffers
 *              must still land where it reads them.
 * kill         an endless transfer (RDMA writes, reads and sends) for the
 *              caller to kill -9; READY_FILE appears once data moves.
 *
 * The rings are found honestly: the provider maps each ring from the
 * uverbs command file (tools/libsroce/queue.c), so the mappings of
 * /dev/infiniband/uverbs* that appear in /proc/self/maps while a CQ or QP
 * is created are that object's rings; their layout is the uAPI's
 * (include/uapi/rdma/sroce-abi.h). The tool needs no private provider
 * structure. The doorbell is the provider's own: an empty post_send
 * command written to the command file.
 *
 * A mode ends with one line "sroce-hostile: MODE OK: counts..." and exit
 * status 0 when the process saw what it may see (errors and bad
 * completions are fine); 1 on a result that means the kernel did wrong
 * (wrong data, a QP that takes no traffic where it must); 2 on timeout.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/sroce-abi.h>

#define TOOL "sroce-hostile"
#include "common.h"

#define BUF		(64 * 1024)
#define MAX_MAPS	64

static struct {
	struct ibv_context *ctx;
	union ibv_gid gid;
	struct ibv_port_attr port;
	int gid_index;
	struct ibv_pd *pd;
	struct ibv_pd *pd2;	/* its MR's keys are the "other PD" ones */
	struct ibv_mr *mr2;
	uint8_t *buf2;
	double seconds;
	const char *ready;
} g;

static atomic_bool stop;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t *buf_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		die("out of memory");
	memset(p, 0, len);
	return p;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, p, len, access);

	if (!mr)
		die("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_cq *mk_cq(int cqe)
{
	struct ibv_cq *cq = ibv_create_cq(g.ctx, cqe, NULL, NULL, 0);

	if (!cq)
		die("ibv_create_cq: %s", strerror(errno));
	return cq;
}

static struct ibv_qp *mk_qp(enum ibv_qp_type type, struct ibv_cq *cq,
			    uint32_t wr, uint32_t sge)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = {
			.max_send_wr = wr, .max_recv_wr = wr,
			.max_send_sge = sge, .max_recv_sge = sge,
			.max_inline_data = 64,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(g.pd, &init);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

/* @qp to RTS, its peer @peer_qpn on this device's own GID. */
static void connect_to(struct ibv_qp *qp, uint32_t peer_qpn)
{
	struct path p = {
		.qpn = peer_qpn, .rq_psn = 0x100, .sq_psn = 0x100,
		.gid_index = g.gid_index, .mtu = g.port.active_mtu,
		.rd_atomic = 4,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (qp->qp_type == IBV_QPT_UC)
		p.access = IBV_ACCESS_REMOTE_WRITE;
	memcpy(p.gid, g.gid.raw, 16);
	qp_connect(qp, &p);
}

static void pair(struct ibv_qp *a, struct ibv_qp *b)
{
	connect_to(a, b->qp_num);
	connect_to(b, a->qp_num);
}

/* A QP that keeps few retries, so a peer gone away fails it quickly. */
static void impatient(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .timeout = 8, .retry_cnt = 1,
				    .rnr_retry = 1 };

	/* Only RTS takes these; a QP already in error keeps its own. */
	ibv_modify_qp(qp, &attr, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		      IBV_QP_RNR_RETRY);
}

/* The doorbell as libsroce rings it: post_send with no requests. */
static int doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(c) / 4,
			.out_words = sizeof(struct ib_uverbs_post_send_resp) / 4,
		},
		.cmd = {
			.qp_handle = qp->handle,
			.wqe_size = sizeof(struct ib_uverbs_send_wr),
		},
	};
	struct ib_uverbs_post_send_resp resp;

	c.cmd.response = (uintptr_t)&resp;
	return write(qp->context->cmd_fd, &c, sizeof(c)) == sizeof(c) ?
	       0 : errno;
}

/* ---- the rings, from /proc/self/maps ------------------------------------ */

struct ring {
	uint8_t *base;
	size_t len;
};

/* Every mapping of a uverbs device file: at most MAX_MAPS. */
static int uverbs_maps(struct ring *out)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		die("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f) && n < MAX_MAPS) {
		unsigned long start, end;

		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		out[n].base = (uint8_t *)start;
		out[n].len = end - start;
		n++;
	}
	fclose(f);
	return n;
}

/* The mappings in @after that are not in @before, into @out. */
static int new_maps(const struct ring *before, int nb,
		    const struct ring *after, int na, struct ring *out)
{
	int i, j, n = 0;

	for (i = 0; i < na; i++) {
		for (j = 0; j < nb; j++)
			if (before[j].base == after[i].base)
				break;
		if (j == nb)
			out[n++] = after[i];
	}
	return n;
}

static struct sroce_queue_hdr *hdr(const struct ring *r)
{
	return (struct sroce_queue_hdr *)r->base;
}

/* ---- scribble ---------------------------------------------------------- */

enum { R_CQ, R_A_SQ, R_A_RQ, R_B_SQ, R_B_RQ, R_COUNT };

static struct {
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ring ring[R_COUNT];
	uint8_t *buf;
	struct ibv_mr *mr;
	atomic_ulong posted, post_err, wc_ok, wc_err, writes, rings, ring_err;
} sc;

/* Creates the round's CQ and QPs, and finds which mapping is which. */
static void scribble_setup(void)
{
	struct ring before[MAX_MAPS], after[MAX_MAPS], fresh[MAX_MAPS];
	struct ibv_sge sge = { (uintptr_t)sc.buf, 64, sc.mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int nb, na, n, i;
	struct ibv_qp **qp;

	nb = uverbs_maps(before);
	sc.cq = mk_cq(256);
	na = uverbs_maps(after);
	if (new_maps(before, nb, after, na, fresh) != 1)
		die("the CQ's ring is not one new uverbs mapping");
	sc.ring[R_CQ] = fresh[0];

	for (i = 0, qp = &sc.a; i < 2; i++, qp = &sc.b) {
		nb = uverbs_maps(before);
		*qp = mk_qp(IBV_QPT_RC, sc.cq, 64, 4);
		na = uverbs_maps(after);
		n = new_maps(before, nb, after, na, fresh);
		if (n != 2)
			die("QP %#x: %d new uverbs mappings, not 2",
			    (*qp)->qp_num, n);
		sc.ring[R_A_SQ + 2 * i] = fresh[0];
		sc.ring[R_A_RQ + 2 * i] = fresh[1];
	}
	pair(sc.a, sc.b);
	impatient(sc.a);
	impatient(sc.b);
	/* The receive ring is the one whose producer index a receive moves. */
	for (i = 0, qp = &sc.a; i < 2; i++, qp = &sc.b) {
		struct ring *s = &sc.ring[R_A_SQ + 2 * i];

		if (ibv_post_recv(*qp, &rwr, &bad))
			die("ibv_post_recv: %s", strerror(errno));
		if (hdr(s)->prod == 1) {
			struct ring t = s[0];

			s[0] = s[1];
			s[1] = t;
		}
		if (hdr(&s[1])->prod != 1 || hdr(&s[0])->prod != 0)
			die("cannot tell QP %#x's rings apart", (*qp)->qp_num);
	}
}

static void scribble_teardown(void)
{
	if (ibv_destroy_qp(sc.a) || ibv_destroy_qp(sc.b) ||
	    ibv_destroy_cq(sc.cq))
		die("destroying a scribbled QP or CQ: %s", strerror(errno));
}

/* Traffic the provider writes correctly, between scribbles. */
static void *scribble_poster(void *arg)
{
	struct ibv_sge sge = { (uintptr_t)sc.buf, 512, sc.mr->lkey };
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1 }, *sbad;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc[16];
	unsigned int i = (uintptr_t)arg;
	int n, k;

	while (!atomic_load(&stop)) {
		struct ibv_qp *from = i & 1 ? sc.a : sc.b;
		struct ibv_qp *to = i & 1 ? sc.b : sc.a;

		swr.opcode = (i >> 1) % 3 == 0 ? IBV_WR_SEND :
			     (i >> 1) % 3 == 1 ? IBV_WR_RDMA_WRITE :
			     IBV_WR_RDMA_READ;
		swr.send_flags = IBV_SEND_SIGNALED;
		swr.wr.rdma.remote_addr = (uintptr_t)sc.buf + BUF / 2;
		swr.wr.rdma.rkey = sc.mr->rkey;
		if (ibv_post_recv(to, &rwr, &rbad))
			atomic_fetch_add(&sc.post_err, 1);
		if (ibv_post_send(from, &swr, &sbad))
			atomic_fetch_add(&sc.post_err, 1);
		else
			atomic_fetch_add(&sc.posted, 1);
		n = ibv_poll_cq(sc.cq, ARRAY_SIZE(wc), wc);
		for (k = 0; k < n; k++)
			atomic_fetch_add(wc[k].status ? &sc.wc_err : &sc.wc_ok,
					 1);
		i += 2;
	}
	return NULL;
}

static uint32_t rnd(unsigned int *seed)
{
	return (uint32_t)rand_r(seed) << 16 ^ (uint32_t)rand_r(seed);
}

/* An index near @cur, at an edge, or anywhere. */
static uint32_t edge_index(unsigned int *seed, uint32_t cur)
{
	static const uint32_t delta[] = { 1, 63, 64, 65, 128, 4096, 65536 };
	static const uint32_t fixed[] = { 0, 1, 0x7fffffff, 0x80000000,
					  0xffffffff, 0xfffffffe };

	switch (rnd(seed) % 4) {
	case 0:
		return cur + delta[rnd(seed) % ARRAY_SIZE(delta)];
	case 1:
		return cur - delta[rnd(seed) % ARRAY_SIZE(delta)];
	case 2:
		return fixed[rnd(seed) % ARRAY_SIZE(fixed)];
	}
	return rnd(seed);
}

static uint32_t edge_u32(unsigned int *seed)
{
	static const uint32_t v[] = { 0, 1, 2, 31, 32, 33, 64, 512, 513,
				      0xffff, 0x10000, 0x7fffffff,
				      0x80000000, 0xfffffff0, 0xffffffff };

	return rnd(seed) & 1 ? v[rnd(seed) % ARRAY_SIZE(v)] : rnd(seed);
}

/* A key: our MR's, the other PD's, or garbage. */
static uint32_t any_key(unsigned int *seed)
{
	switch (rnd(seed) % 4) {
	case 0:
		return sc.mr->lkey;
	case 1:
		return g.mr2->lkey;
	case 2:
		return g.mr2->rkey;
	}
	return edge_u32(seed);
}

static uint64_t any_addr(unsigned int *seed)
{
	static const uint64_t kernelish = 0xffff888000000000ULL;

	switch (rnd(seed) % 5) {
	case 0:
		return (uintptr_t)sc.buf;
	case 1:
		return (uintptr_t)sc.buf + BUF - 1;
	case 2:
		return (uintptr_t)g.buf2;
	case 3:
		return rnd(seed) & 1 ? kernelish : ~0ULL;
	}
	return (uint64_t)rnd(seed) << 32 | rnd(seed);
}

static void forge_sges(unsigned int *seed, struct sroce_sge *sge,
		       size_t room)
{
	size_t i;

	for (i = 0; i < room; i++) {
		sge[i].addr = any_addr(seed);
		sge[i].length = edge_u32(seed);
		sge[i].lkey = any_key(seed);
	}
}

/* A send entry, whole, written over whatever is at @p. */
static void forge_send(unsigned int *seed, uint8_t *p, size_t room)
{
	struct sroce_send_wqe w = {
		.wr_id = rnd(seed),
		.opcode = rnd(seed) & 1 ? rnd(seed) % 24 : edge_u32(seed),
		.send_flags = rnd(seed) & 1 ? rnd(seed) & 0x3f : edge_u32(seed),
		.num_sge = edge_u32(seed),
	};

	w.ex.invalidate_rkey = any_key(seed);
	w.wr.bind.addr = any_addr(seed);
	w.wr.bind.length = (uint64_t)edge_u32(seed) << (rnd(seed) % 33);
	w.wr.bind.mr_lkey = any_key(seed);
	w.wr.bind.mw_rkey = any_key(seed);
	w.wr.bind.new_rkey = any_key(seed);
	w.wr.bind.access = edge_u32(seed);
	if (room < sizeof(w))
		return;
	memcpy(p, &w, sizeof(w));
	if (rnd(seed) & 1)
		forge_sges(seed, (struct sroce_sge *)(p + sizeof(w)),
			   (room - sizeof(w)) / sizeof(struct sroce_sge));
}

static void forge_recv(unsigned int *seed, uint8_t *p, size_t room)
{
	struct sroce_recv_wqe w = { .wr_id = rnd(seed),
				    .num_sge = edge_u32(seed) };

	if (room < sizeof(w))
		return;
	memcpy(p, &w, sizeof(w));
	forge_sges(seed, (struct sroce_sge *)(p + sizeof(w)),
		   (room - sizeof(w)) / sizeof(struct sroce_sge));
}

/*
 * One scribble. Entries start every stride bytes past the header, and
 * every stride is a multiple of 64, so a forged entry at a 64-byte
 * boundary lands on an entry's start or inside its SGEs.
 */
static void scribble_once(unsigned int *seed)
{
	unsigned int r = rnd(seed) % R_COUNT;
	const struct ring *ring = &sc.ring[r];
	struct sroce_queue_hdr *h = hdr(ring);
	size_t entries = ring->len - SROCE_QUEUE_HDR_BYTES;
	size_t off = SROCE_QUEUE_HDR_BYTES + rnd(seed) % (entries / 64) * 64;
	size_t room = ring->len - off;
	uint8_t *p = ring->base + off;
	uint32_t flip;

	if (room > 256)
		room = 256;
	switch (rnd(seed) % 7) {
	case 0:
		__atomic_store_n(&h->prod, edge_index(seed, h->prod),
				 __ATOMIC_RELEASE);
		break;
	case 1:
		__atomic_store_n(&h->cons, edge_index(seed, h->cons),
				 __ATOMIC_RELEASE);
		break;
	case 2:
		__atomic_store_n(&h->flags, edge_u32(seed), __ATOMIC_RELAXED);
		break;
	case 3:
		if (r == R_A_SQ || r == R_B_SQ)
			forge_send(seed, p, room);
		else
			forge_recv(seed, p, room);
		/* Half the time the forged entry is published too. */
		if (rnd(seed) & 1)
			__atomic_store_n(&h->prod, h->prod + 1 + rnd(seed) % 4,
					 __ATOMIC_RELEASE);
		break;
	case 4:
		*(uint32_t *)(p + rnd(seed) % (room / 4) * 4) = edge_u32(seed);
		break;
	case 5:
		/*
		 * The producer index flipped between two values: a kernel
		 * that goes round again whenever it sees the index move,
		 * without counting the turn, would spin here.
		 */
		flip = h->prod;
		for (off = 0; off < 4096; off++)
			__atomic_store_n(&h->prod, flip + (off & 1),
					 __ATOMIC_RELEASE);
		break;
	default:
		for (off = 0; off < room; off += 4)
			*(uint32_t *)(p + off) = rnd(seed);
	}
	atomic_fetch_add(&sc.writes, 1);
}

static void *scribbler(void *arg)
{
	unsigned int seed = (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		scribble_once(&seed);
		if (rnd(&seed) % 8 == 0)
			sched_yield();
	}
	return NULL;
}

static void *ringer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		atomic_fetch_add(doorbell(sc.a) ? &sc.ring_err : &sc.rings, 1);
		atomic_fetch_add(doorbell(sc.b) ? &sc.ring_err : &sc.rings, 1);
	}
	return NULL;
}

/*
 * Runs the @n threads @fn for @secs seconds, each given its own argument
 * @arg[i], then stops and joins them.
 */
static void run_threads_arg(void *(**fn)(void *), unsigned int n,
			    double secs, void **arg)
{
	pthread_t t[16];
	unsigned int i;
	double end = now() + secs;

	atomic_store(&stop, false);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn[i], arg[i]))
			die("pthread_create failed");
	while (now() < end)
		usleep(10000);
	atomic_store(&stop, true);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* As run_threads_arg(), thread i given the seed @seed * 16 + i. */
static void run_threads(void *(**fn)(void *), unsigned int n, double secs,
			unsigned int seed)
{
	void *arg[16];
	unsigned int i;

	for (i = 0; i < n; i++)
		arg[i] = (void *)(uintptr_t)(seed * 16 + i);
	run_threads_arg(fn, n, secs, arg);
}

static int mode_scribble(void)
{
	void *(*fn[])(void *) = { scribble_poster, scribble_poster,
				  scribbler, scribbler, ringer };
	double end = now() + g.seconds;
	unsigned int round = 0;

	sc.buf = buf_alloc(BUF);
	sc.mr = reg(g.pd, sc.buf, BUF, ACCESS_ALL);
	do {
		scribble_setup();
		run_threads(fn, ARRAY_SIZE(fn), 0.25, ++round);
		scribble_teardown();
	} while (now() < end);
	printf(TOOL ": scribble OK: rounds %u scribbles %lu posted %lu",
	       round, sc.writes, sc.posted);
	printf(" post_errors %lu wc_ok %lu wc_error %lu", sc.post_err,
	       sc.wc_ok, sc.wc_err);
	printf(" doorbells %lu doorbell_errors %lu\n", sc.rings, sc.ring_err);
	return 0;
}

/* ---- bindinval --------------------------------------------------------- */

#define PAIRS		32	/* bind/invalidate pairs per chain */
#define CHAINS		48	/* chains in flight: 48 * 64 WQEs of 4096 */
#define SQ_SLOTS	4096	/* never empty while the threads post */

static struct {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	atomic_int inflight;
	atomic_ulong pairs, wc_err, post_err;
	atomic_int first_err;
} bi;

static void bindinval_poll(void)
{
	struct ibv_wc wc[8];
	int n, k;

	n = ibv_poll_cq(bi.cq, ARRAY_SIZE(wc), wc);
	for (k = 0; k < n; k++) {
		atomic_fetch_sub(&bi.inflight, 1);
		if (wc[k].status == IBV_WC_SUCCESS) {
			atomic_fetch_add(&bi.pairs, PAIRS);
			continue;
		}
		atomic_fetch_add(&bi.wc_err, 1);
		atomic_compare_exchange_strong(&bi.first_err, &(int){ 0 },
					       wc[k].status);
	}
}

static void *bindinval_thread(void *arg)
{
	struct ibv_mw *mw = ibv_alloc_mw(g.pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr[2 * PAIRS], *bad;
	unsigned int i = (uintptr_t)arg % 16;
	uint32_t rkey;
	int k, ret;

	if (!mw)
		die("ibv_alloc_mw(type 2): %s", strerror(errno));
	rkey = mw->rkey;
	while (!atomic_load(&stop) && !atomic_load(&bi.first_err)) {
		if (atomic_fetch_add(&bi.inflight, 1) >= CHAINS) {
			atomic_fetch_sub(&bi.inflight, 1);
			bindinval_poll();
			continue;
		}
		memset(wr, 0, sizeof(wr));
		for (k = 0; k < PAIRS; k++) {
			struct ibv_send_wr *b = &wr[2 * k], *v = b + 1;

			rkey = ibv_inc_rkey(rkey);
			b->opcode = IBV_WR_BIND_MW;
			b->bind_mw.mw = mw;
			b->bind_mw.rkey = rkey;
			b->bind_mw.bind_info.mr = bi.mr;
			b->bind_mw.bind_info.addr = (uintptr_t)bi.buf +
						    i * 4096;
			b->bind_mw.bind_info.length = 4096;
			b->bind_mw.bind_info.mw_access_flags =
				IBV_ACCESS_REMOTE_WRITE;
			b->next = v;
			v->opcode = IBV_WR_LOCAL_INV;
			v->invalidate_rkey = rkey;
			v->next = k + 1 < PAIRS ? b + 2 : NULL;
		}
		wr[2 * PAIRS - 1].send_flags = IBV_SEND_SIGNALED;
		ret = ibv_post_send(bi.qp, wr, &bad);
		if (ret) {
			/* Nothing of a failed chain is counted in flight. */
			atomic_fetch_sub(&bi.inflight, 1);
			atomic_fetch_add(&bi.post_err, 1);
			die("ibv_post_send(bind/invalidate): %s",
			    strerror(ret));
		}
		bindinval_poll();
	}
	while (atomic_load(&bi.inflight) > 0 && !atomic_load(&bi.first_err))
		bindinval_poll();
	if (ibv_dealloc_mw(mw))
		die("ibv_dealloc_mw failed");
	return NULL;
}

static int mode_bindinval(void)
{
	void *(*fn[])(void *) = { bindinval_thread, bindinval_thread };
	double start = now();

	bi.buf = buf_alloc(BUF);
	bi.mr = reg(g.pd, bi.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	bi.cq = mk_cq(64);
	bi.qp = mk_qp(IBV_QPT_UC, bi.cq, SQ_SLOTS, 1);
	/* Aimed at itself: nothing it sends would leave the host anyway. */
	connect_to(bi.qp, bi.qp->qp_num);
	run_threads(fn, ARRAY_SIZE(fn), g.seconds, 1);
	if (bi.first_err)
		die("a bind or invalidate failed: %s",
		    ibv_wc_status_str(bi.first_err));
	printf(TOOL ": bindinval OK: pairs %lu in %.1f s (%.0f/s)\n",
	       bi.pairs, now() - start, bi.pairs / (now() - start));
	ibv_destroy_qp(bi.qp);
	ibv_destroy_cq(bi.cq);
	ibv_dereg_mr(bi.mr);
	return 0;
}

/*
 * bindring: the same flood written straight into the send ring, as any
 * process may: no provider, no completions to wait for, only the
 * consumer index to watch for room. Each thread owns a UC QP aimed at
 * itself and one type 2 window. The entry stride is learnt from two
 * entries the provider writes first.
 */
#define RAW_MAGIC	0x686f7374696c6531ULL	/* "hostile1" */

struct raw_sq {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mw *mw;
	struct ring sq;
	uint32_t stride, slots;
	unsigned long pairs, rings;
};

static void raw_setup(struct raw_sq *r, unsigned int i)
{
	struct ring before[MAX_MAPS], after[MAX_MAPS], fresh[MAX_MAPS];
	struct ibv_sge sge = { (uintptr_t)bi.buf, 8, bi.mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr[2] = {}, *bad;
	uint8_t *at[2] = {};
	int nb, na, k;
	size_t off;

	r->cq = mk_cq(64);
	nb = uverbs_maps(before);
	r->qp = mk_qp(IBV_QPT_UC, r->cq, SQ_SLOTS, 1);
	na = uverbs_maps(after);
	if (new_maps(before, nb, after, na, fresh) != 2)
		die("a UC QP is not two new uverbs mappings");
	connect_to(r->qp, r->qp->qp_num);
	if (ibv_post_recv(r->qp, &rwr, &rbad))
		die("ibv_post_recv: %s", strerror(errno));
	r->sq = fresh[hdr(&fresh[0])->prod == 1];
	r->mw = ibv_alloc_mw(g.pd, IBV_MW_TYPE_2);
	if (!r->mw)
		die("ibv_alloc_mw(type 2): %s", strerror(errno));
	/* A real pair through the provider, to learn where entries lie. */
	wr[0].wr_id = RAW_MAGIC;
	wr[0].opcode = IBV_WR_BIND_MW;
	wr[0].bind_mw.mw = r->mw;
	wr[0].bind_mw.rkey = ibv_inc_rkey(r->mw->rkey);
	wr[0].bind_mw.bind_info.mr = bi.mr;
	wr[0].bind_mw.bind_info.addr = (uintptr_t)bi.buf + i * 4096;
	wr[0].bind_mw.bind_info.length = 4096;
	wr[0].bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	wr[0].next = &wr[1];
	wr[1].wr_id = RAW_MAGIC + 1;
	wr[1].opcode = IBV_WR_LOCAL_INV;
	wr[1].invalidate_rkey = wr[0].bind_mw.rkey;
	if (ibv_post_send(r->qp, wr, &bad))
		die("ibv_post_send(bind/invalidate): %s", strerror(errno));
	for (off = SROCE_QUEUE_HDR_BYTES; off + 8 <= r->sq.len; off += 8) {
		uint64_t v;

		memcpy(&v, r->sq.base + off, 8);
		for (k = 0; k < 2; k++)
			if (v == RAW_MAGIC + k && !at[k])
				at[k] = r->sq.base + off;
	}
	if (!at[0] || at[1] <= at[0] || hdr(&r->sq)->prod != 2)
		die("cannot find the provider's entries in the send ring");
	r->stride = at[1] - at[0];
	for (r->slots = SQ_SLOTS; (size_t)r->slots * 2 * r->stride <=
	     r->sq.len - SROCE_QUEUE_HDR_BYTES; r->slots *= 2)
		;
}

static void *bindring_thread(void *arg)
{
	struct raw_sq *r = arg;
	struct sroce_queue_hdr *h = hdr(&r->sq);
	uint8_t *first = r->sq.base + SROCE_QUEUE_HDR_BYTES;
	struct sroce_send_wqe bind, inv;
	uint32_t prod = h->prod, rkey = ibv_inc_rkey(r->mw->rkey);

	memcpy(&bind, first, sizeof(bind));
	memcpy(&inv, first + r->stride, sizeof(inv));
	while (!atomic_load(&stop)) {
		uint32_t cons = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);

		while (prod - cons + 2 <= r->slots) {
			rkey = ibv_inc_rkey(rkey);
			bind.wr.bind.new_rkey = rkey;
			inv.ex.invalidate_rkey = rkey;
			memcpy(first + (prod & (r->slots - 1)) * r->stride,
			       &bind, sizeof(bind));
			memcpy(first + ((prod + 1) & (r->slots - 1)) *
			       r->stride, &inv, sizeof(inv));
			prod += 2;
			r->pairs++;
			if (r->pairs % 16 == 0)
				break;
		}
		__atomic_store_n(&h->prod, prod, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&h->flags, __ATOMIC_RELAXED) &
		    SROCE_QUEUE_F_DOORBELL) {
			if (doorbell(r->qp))
				die("doorbell: %s", strerror(errno));
			r->rings++;
		}
	}
	return NULL;
}

static int mode_bindring(void)
{
	void *(*fn[])(void *) = { bindring_thread, bindring_thread };
	struct raw_sq r[2];
	struct ibv_wc wc;
	unsigned int i;
	double start = now();
	int n = 0;

	memset(r, 0, sizeof(r));
	bi.buf = buf_alloc(BUF);
	bi.mr = reg(g.pd, bi.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	for (i = 0; i < 2; i++)
		raw_setup(&r[i], i);
	run_threads_arg(fn, 2, g.seconds, (void *[]){ &r[0], &r[1] });
	for (i = 0; i < 2; i++) {
		/* Unsignaled all along: a completion here is an error. */
		n += ibv_poll_cq(r[i].cq, 1, &wc);
		ibv_destroy_qp(r[i].qp);
		ibv_destroy_cq(r[i].cq);
		ibv_dealloc_mw(r[i].mw);
	}
	if (n)
		die("a bind or invalidate failed: %s",
		    ibv_wc_status_str(wc.status));
	printf(TOOL ": bindring OK: pairs %lu in %.1f s, doorbells %lu\n",
	       r[0].pairs + r[1].pairs, now() - start,
	       r[0].rings + r[1].rings);
	ibv_dereg_mr(bi.mr);
	return 0;
}

/* ---- destroyrace ------------------------------------------------------- */

/*
 * One set: QP a sends to and writes into QP b's MR; the destroyer thread
 * takes away b's MR, then b, then tries a's CQ (still in use: EBUSY),
 * while the sender keeps posting on a and the poller keeps polling both
 * CQs. A thread never touches an object after another freed it: those
 * would be the process's own use-after-free, in its own memory, which
 * the kernel cannot (and need not) survive for it.
 */
struct dset {
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
	uint8_t *bufa, *bufb;
	struct ibv_mr *mra, *mrb;
	uint32_t lkeyb, rkeyb;	/* mrb's keys, read after it is gone */
	atomic_int gone;	/* 1: b's receives stop, 2: b may go */
	unsigned int seed;
};

static atomic_ulong dr_posted, dr_post_err, dr_wc_ok, dr_wc_err, dr_busy,
		    dr_rounds;

static void *dr_sender(void *arg)
{
	struct dset *s = arg;
	struct ibv_sge sge = { (uintptr_t)s->bufa, 4096, s->mra->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[16];
	unsigned int i;
	int n, k;

	for (i = 0; !atomic_load(&stop) && i < 1000; i++) {
		wr.opcode = i % 2 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
		wr.wr.rdma.remote_addr = (uintptr_t)s->bufb;
		wr.wr.rdma.rkey = s->rkeyb;
		if (ibv_post_send(s->a, &wr, &bad))
			atomic_fetch_add(&dr_post_err, 1);
		else
			atomic_fetch_add(&dr_posted, 1);
		n = ibv_poll_cq(s->cqa, ARRAY_SIZE(wc), wc);
		for (k = 0; k < n; k++)
			atomic_fetch_add(wc[k].status ? &dr_wc_err : &dr_wc_ok,
					 1);
	}
	return NULL;
}

static void *dr_receiver(void *arg)
{
	struct dset *s = arg;
	struct ibv_sge sge = { (uintptr_t)s->bufb, 4096, s->lkeyb };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc[16];
	int n, k;

	while (!atomic_load(&stop)) {
		if (atomic_load(&s->gone) == 0) {
			/* A stale lkey after the MR is gone: bad completions. */
			if (ibv_post_recv(s->b, &wr, &bad))
				atomic_fetch_add(&dr_post_err, 1);
		} else {
			atomic_store(&s->gone, 2);
		}
		n = ibv_poll_cq(s->cqb, ARRAY_SIZE(wc), wc);
		for (k = 0; k < n; k++)
			atomic_fetch_add(wc[k].status ? &dr_wc_err : &dr_wc_ok,
					 1);
		if (atomic_load(&s->gone) == 2)
			sched_yield();
	}
	return NULL;
}

static struct ibv_qp *dr_qp(struct ibv_cq *cq)
{
	return mk_qp(IBV_QPT_RC, cq, 128, 1);
}

static void *dr_destroyer(void *arg)
{
	struct dset *s = arg;

	usleep(rand_r(&s->seed) % 20000);
	/* Receives and writes go on naming the dead keys. */
	if (ibv_dereg_mr(s->mrb))
		die("ibv_dereg_mr under traffic: %s", strerror(errno));
	s->mrb = NULL;
	usleep(rand_r(&s->seed) % 10000);
	/* The receiver stops posting on b first; it still polls cqb. */
	atomic_store(&s->gone, 1);
	while (atomic_load(&s->gone) != 2)
		sched_yield();
	if (ibv_destroy_qp(s->b))
		die("ibv_destroy_qp under traffic: %s", strerror(errno));
	/* a's CQ still has a: the kernel must refuse, not free it. */
	if (ibv_destroy_cq(s->cqa) == 0)
		die("a CQ with a live QP was destroyed");
	atomic_fetch_add(&dr_busy, 1);
	return NULL;
}

static void dr_round(unsigned int seed)
{
	struct dset s[2];
	pthread_t t[6];
	unsigned int i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 2; i++) {
		s[i].seed = seed * 2 + i;
		s[i].cqa = mk_cq(256);
		s[i].cqb = mk_cq(256);
		s[i].a = dr_qp(s[i].cqa);
		s[i].b = dr_qp(s[i].cqb);
		pair(s[i].a, s[i].b);
		impatient(s[i].a);
		s[i].bufa = buf_alloc(4096);
		s[i].bufb = buf_alloc(4096);
		s[i].mra = reg(g.pd, s[i].bufa, 4096, ACCESS_ALL);
		s[i].mrb = reg(g.pd, s[i].bufb, 4096, ACCESS_ALL);
		s[i].lkeyb = s[i].mrb->lkey;
		s[i].rkeyb = s[i].mrb->rkey;
	}
	atomic_store(&stop, false);
	for (i = 0; i < 2; i++) {
		if (pthread_create(&t[3 * i], NULL, dr_receiver, &s[i]) ||
		    pthread_create(&t[3 * i + 1], NULL, dr_destroyer, &s[i]) ||
		    pthread_create(&t[3 * i + 2], NULL, dr_sender, &s[i]))
			die("pthread_create failed");
	}
	for (i = 0; i < 2; i++) {
		pthread_join(t[3 * i + 1], NULL);
		pthread_join(t[3 * i + 2], NULL);
	}
	atomic_store(&stop, true);
	for (i = 0; i < 2; i++) {
		pthread_join(t[3 * i], NULL);
		/* What is left goes now, with requests maybe still queued. */
		if (ibv_destroy_qp(s[i].a) || ibv_destroy_cq(s[i].cqa) ||
		    ibv_destroy_cq(s[i].cqb) || ibv_dereg_mr(s[i].mra))
			die("destroying what is left: %s", strerror(errno));
		free(s[i].bufa);
		free(s[i].bufb);
	}
	atomic_fetch_add(&dr_rounds, 1);
}

static int mode_destroyrace(void)
{
	double end = now() + g.seconds;
	unsigned int round = 0;

	do
		dr_round(++round);
	while (now() < end);
	printf(TOOL ": destroyrace OK: rounds %lu posted %lu post_errors %lu",
	       dr_rounds, dr_posted, dr_post_err);
	printf(" wc_ok %lu wc_error %lu busy_cq %lu\n", dr_wc_ok, dr_wc_err,
	       dr_busy);
	return 0;
}

/* ---- fork -------------------------------------------------------------- */

static struct {
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	uint8_t *src, *dst;
	struct ibv_mr *msrc, *mdst;
} fk;

/* One signaled request on @qp, waited for; its status. */
static enum ibv_wc_status one_op(struct ibv_cq *cq, struct ibv_qp *qp,
				 struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	double end = now() + 20;
	int ret = ibv_post_send(qp, wr, &bad);

	if (ret)
		die("ibv_post_send: %s", strerror(ret));
	while (now() < end)
		if (ibv_poll_cq(cq, 1, &wc) > 0)
			return wc.status;
	die("no completion within 20 s");
	return IBV_WC_GENERAL_ERR;
}

static uint8_t pattern(unsigned int iter, size_t i)
{
	return (uint8_t)(iter * 0x35 + i * 13 + (i >> 9));
}

/*
 * The child, sharing the rings and holding copies of the registered
 * buffers: variant 0 leaves at once, 1 writes over every buffer and
 * leaves, 2 writes over them and waits for SIGKILL.
 */
static void fork_child(unsigned int variant)
{
	if (variant) {
		memset(fk.src, 0xee, BUF);
		memset(fk.dst, 0xee, BUF);
	}
	if (variant == 2)
		for (;;)
			pause();
	_exit(0);
}

static int mode_fork(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	unsigned int iter, bad = 0, kids = 0;
	double end = now() + g.seconds;
	enum ibv_wc_status st;
	size_t i;

	printf("fork protection: %s\n",
	       ibv_is_fork_initialized() == IBV_FORK_UNNEEDED ?
	       "the kernel's (copy at fork)" : "libibverbs' madvise");
	fk.src = buf_alloc(BUF);
	fk.dst = buf_alloc(BUF);
	fk.msrc = reg(g.pd, fk.src, BUF, ACCESS_ALL);
	fk.mdst = reg(g.pd, fk.dst, BUF, ACCESS_ALL);
	fk.cq = mk_cq(64);
	fk.a = mk_qp(IBV_QPT_RC, fk.cq, 16, 1);
	fk.b = mk_qp(IBV_QPT_RC, fk.cq, 16, 1);
	pair(fk.a, fk.b);
	for (iter = 0; iter < 6 || now() < end; iter++) {
		unsigned int variant = iter % 3;
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid)
			fork_child(variant);
		kids++;
		/* The parent writes its buffers while the child lives. */
		for (i = 0; i < BUF; i++)
			fk.src[i] = pattern(iter, i);
		memset(fk.dst, 0, BUF);
		sge = (struct ibv_sge){ (uintptr_t)fk.src, BUF, fk.msrc->lkey };
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)fk.dst;
		wr.wr.rdma.rkey = fk.mdst->rkey;
		st = one_op(fk.cq, fk.a, &wr);
		if (st)
			die("iteration %u: RDMA write: %s", iter,
			    ibv_wc_status_str(st));
		for (i = 0; i < BUF && fk.dst[i] == pattern(iter, i); i++)
			;
		if (i < BUF) {
			printf("iteration %u (child variant %u):", iter,
			       variant);
			printf(" byte %zu is %#x, not %#x\n", i, fk.dst[i],
			       pattern(iter, i));
			bad++;
		}
		/* And back: a read lands in the parent's source buffer. */
		memset(fk.src, 0, BUF);
		sge = (struct ibv_sge){ (uintptr_t)fk.src, BUF, fk.msrc->lkey };
		wr.opcode = IBV_WR_RDMA_READ;
		st = one_op(fk.cq, fk.a, &wr);
		if (st)
			die("iteration %u: RDMA read: %s", iter,
			    ibv_wc_status_str(st));
		if (memcmp(fk.src, fk.dst, BUF)) {
			printf("iteration %u: the read did not land\n", iter);
			bad++;
		}
		if (variant == 2)
			kill(pid, SIGKILL);
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid: %s", strerror(errno));
	}
	ibv_destroy_qp(fk.a);
	ibv_destroy_qp(fk.b);
	ibv_destroy_cq(fk.cq);
	ibv_dereg_mr(fk.msrc);
	ibv_dereg_mr(fk.mdst);
	printf(TOOL ": fork %s: children %u, iterations with wrong data %u\n",
	       bad ? "FAILED" : "OK", kids, bad);
	return !!bad;
}

/* ---- kill -------------------------------------------------------------- */

#define KBUF		(256 << 10)
#define KDEPTH		16

static int mode_kill(void)
{
	struct ibv_cq *cq = mk_cq(4 * KDEPTH);
	struct ibv_qp *a = mk_qp(IBV_QPT_RC, cq, KDEPTH, 1);
	struct ibv_qp *b = mk_qp(IBV_QPT_RC, cq, KDEPTH, 1);
	uint8_t *ba = buf_alloc(KBUF), *bb = buf_alloc(KBUF);
	struct ibv_mr *ma = reg(g.pd, ba, KBUF, ACCESS_ALL);
	struct ibv_mr *mb = reg(g.pd, bb, KBUF, ACCESS_ALL);
	struct ibv_sge sge = { (uintptr_t)ba, KBUF, ma->lkey };
	struct ibv_sge rsge = { (uintptr_t)bb, KBUF, mb->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	double end = g.seconds ? now() + g.seconds : 0;
	unsigned long done = 0;
	unsigned int inflight = 0, i = 0;
	struct ibv_wc wc[KDEPTH];
	int n, k, ret;

	pair(a, b);
	for (k = 0; k < KDEPTH; k++)
		if (ibv_post_recv(b, &rwr, &rbad))
			die("ibv_post_recv: %s", strerror(errno));
	while (!end || now() < end) {
		while (inflight < KDEPTH / 2) {
			static const enum ibv_wr_opcode op[] = {
				IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
				IBV_WR_SEND, IBV_WR_RDMA_WRITE,
			};

			wr.opcode = op[i++ % ARRAY_SIZE(op)];
			wr.wr.rdma.remote_addr = (uintptr_t)bb;
			wr.wr.rdma.rkey = mb->rkey;
			ret = ibv_post_send(a, &wr, &sbad);
			if (ret)
				die("ibv_post_send: %s", strerror(ret));
			inflight++;
		}
		n = ibv_poll_cq(cq, ARRAY_SIZE(wc), wc);
		for (k = 0; k < n; k++) {
			if (wc[k].status)
				die("%s", ibv_wc_status_str(wc[k].status));
			if (wc[k].opcode == IBV_WC_RECV) {
				if (ibv_post_recv(b, &rwr, &rbad))
					die("ibv_post_recv: %s",
					    strerror(errno));
				continue;
			}
			inflight--;
			if (++done == 4 && g.ready) {
				FILE *f = fopen(g.ready, "w");

				if (!f || fprintf(f, "%d\n", getpid()) < 0 ||
				    fclose(f))
					die("%s: %s", g.ready, strerror(errno));
			}
		}
	}
	printf(TOOL ": kill OK: %lu requests done, not killed\n", done);
	return 0;
}

/* ---- main -------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(void);
} modes[] = {
	{ "scribble", mode_scribble },
	{ "bindinval", mode_bindinval },
	{ "bindring", mode_bindring },
	{ "destroyrace", mode_destroyrace },
	{ "fork", mode_fork },
	{ "kill", mode_kill },
};

static void print_usage(void)
{
	static const char modes[] =
		"scribble|bindinval|bindring|destroyrace|fork|kill";

	fprintf(stderr, "usage: " TOOL " %s -d DEV -g GID_INDEX", modes);
	fprintf(stderr, " [-s SECONDS] [-t TIMEOUT] [-r READY_FILE]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	unsigned int timeout = 120, m;
	const char *dev = NULL;
	int opt;

	if (argc < 2)
		print_usage();
	for (m = 0; m < ARRAY_SIZE(modes); m++)
		if (!strcmp(argv[1], modes[m].name))
			break;
	if (m == ARRAY_SIZE(modes))
		print_usage();
	g.gid_index = -1;
	g.seconds = 3;
	optind = 2;
	while ((opt = getopt(argc, argv, "d:g:s:t:r:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			g.gid_index = opt_num('g', optarg, 0xffff);
			break;
		case 's':
			g.seconds = opt_num('s', optarg, 86400);
			break;
		case 't':
			timeout = opt_num('t', optarg, 86400);
			break;
		case 'r':
			g.ready = optarg;
			break;
		default:
			print_usage();
		}
	}
	if (!dev || g.gid_index < 0 || optind != argc)
		print_usage();
	/* kill runs until killed (or -s), so the bound must outlast it. */
	if (g.seconds + 60 > timeout)
		timeout = g.seconds + 60;
	set_timeout(timeout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	g.ctx = open_dev(dev, g.gid_index, &g.gid);
	if (ibv_query_port(g.ctx, 1, &g.port))
		die("ibv_query_port failed");
	g.pd = ibv_alloc_pd(g.ctx);
	g.pd2 = ibv_alloc_pd(g.ctx);
	if (!g.pd || !g.pd2)
		die("ibv_alloc_pd: %s", strerror(errno));
	g.buf2 = buf_alloc(4096);
	g.mr2 = reg(g.pd2, g.buf2, 4096, ACCESS_ALL);
	return modes[m].fn();
}
