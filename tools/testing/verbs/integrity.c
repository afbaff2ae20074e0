// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: every byte an RDMA transport moves, and every atomic
 * it applies, checked.
 *
 *   server: sroce-integrity -d DEV -g GID_INDEX [-p PORT] [-t SECONDS]
 *   client: sroce-integrity -d DEV -g GID_INDEX [-p PORT] [-t SECONDS]
 *                           [-q QPS] [-n ITERATIONS] [-S SIZE[,SIZE...]]
 *                           [-u] [-A] [-x SEED] HOST
 *
 * The client connects to the server over TCP (the out-of-band channel,
 * default port 18517), hands it the run's parameters, and the two swap
 * what their queue pairs need to connect. Then both sides, on every QP at
 * once (-q, default 2), run the same iterations (-n, default 20) against
 * each other, so each QP carries traffic both ways:
 *
 *   RDMA Write, then Write with Immediate, which consumes a receive: the
 *	receiver checks both targets once the immediate arrives;
 *   three Sends: one gathered from up to three SGEs, one with immediate
 *	data, one inline (its source is overwritten as soon as it is
 *	posted), each scattered into SGEs with gaps between them;
 *   RC only: unless -R, up to four outstanding RDMA Reads (at most
 *	max_rd_atomic) from the peer's read source; unless -A, Fetch&Add on
 *	one counter in
 *	the peer that all of this side's QPs add to, and Compare&Swap
 *	increments on a second one, retried when another QP got in first,
 *	then a compare that must fail.
 *
 * -u runs UC QPs: Writes and Sends only. Some requests are unsignaled.
 * Message sizes cycle through -S (suffixes k and m, and +N: 3m+5; the
 * default runs from 1 byte past 256 KiB, around MTU boundaries) and every
 * offset is odd. Each byte's value follows from (sender's seed, QP,
 * iteration, kind, offset), so a misplaced, stale or foreign chunk shows;
 * the bytes around every target must stay untouched. A receiver lets the
 * sender reuse its targets with a credit message, once it has posted the
 * receives of the next iteration, which UC needs (it has no RNR NAK).
 *
 * At the end each side checks its counters exactly, and that the values
 * its atomics fetched are exactly the sequence the counter went through.
 *
 * Exit status: 0 with a one-line summary; 1 on the first wrong byte (its
 * offset is printed), completion error (its status) or failure of the
 * peer; 2 when -t seconds (default 120) pass first. -x replays a run
 * with the seed a client prints.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <time.h>

#define TOOL "sroce-integrity"
#include "common.h"

#define MAX_QPS		16
#define MAX_SIZES	32
#define NSEND		3	/* sends per iteration */
#define NREAD		4	/* reads per iteration, at most */
#define NFADD		4	/* fetch&adds per iteration */
#define NCAS		2	/* successful compare&swaps per iteration */
#define SQ_DEPTH	64
#define RQ_DEPTH	16
#define INLINE_MAX	64	/* the inline send's size, at most */
#define GUARD		16	/* untouched bytes around every target */
#define POISON		0xa5
#define SLOT_EXTRA	256	/* per slot: odd offsets, guards, gaps */
#define RS_EXTRA	4096
#define MAGIC		0x73726f63696e7467ULL	/* "srocintg" */

/* The counters start where a carry out of the low 32 bits comes soon. */
#define FADD_INIT	0x00000000fffffff0ULL
#define FADD_STEP	0x0000000100000001ULL
#define CAS_INIT	0x10000000fffffff8ULL
#define CAS_STEP	0x0000000100000003ULL
#define CAS_NEVER	0x5a5a5a5a5a5a5a5bULL	/* no counter value: odd diff */

/* What a work request is; kept in its wr_id, and in the pattern's seed. */
enum op_kind {
	K_WRITE = 1, K_WIMM, K_SEND, K_CREDIT, K_READ, K_FADD, K_CAS,
	K_RSRC,
};

static const char * const kind_name[] = {
	[K_WRITE] = "write", [K_WIMM] = "write_imm", [K_SEND] = "send",
	[K_CREDIT] = "credit", [K_READ] = "read", [K_FADD] = "fetch_add",
	[K_CAS] = "cmp_swap",
};

/*
 * The run's parameters, as the client sends them. Both ends are the same
 * kind of machine: the out-of-band messages are sent as they lie in
 * memory.
 */
struct config {
	uint64_t magic;
	uint64_t seed;
	uint32_t iters;
	uint32_t nqp;
	uint32_t uc;
	uint32_t atomics;
	uint32_t reads;
	uint32_t nsizes;
	uint32_t sizes[MAX_SIZES];
};

struct qp_info {
	uint32_t qpn;
	uint32_t psn;
	uint64_t wt_addr;	/* write target: 2 slots */
	uint64_t rs_addr;	/* read source */
	uint32_t wt_rkey;
	uint32_t rs_rkey;
};

struct side_info {
	uint64_t magic;
	uint64_t seed;
	uint8_t gid[16];
	uint64_t ctr_addr;
	uint32_t ctr_rkey;
	uint32_t nqp;
	struct qp_info qp[MAX_QPS];
};

/* What each iteration of one QP does, from (seed, QP, iteration). */
struct plan {
	uint32_t w_len, w_off;
	uint32_t wi_len, wi_off;
	uint32_t s_len[NSEND];
	uint32_t r_len[NREAD], r_off[NREAD];
	uint32_t src_off;
	uint32_t imm;
	bool w_signaled;
	bool s0_signaled;
};

/* A receive's scatter list, remembered to check it. */
struct scatter {
	int n;
	uint32_t off[3], len[3];
	uint32_t cap;
};

struct stats {
	uint64_t bytes;
	uint64_t ops[K_RSRC];
	uint64_t inl;
	uint64_t cas_retries;
};

/**
 * struct lane - one QP, its CQs and buffers, run by one thread
 * @buf: tx slots, rx slots, read slots, atomic results, credits (local)
 * @wt: the two slots the peer writes into
 * @rs: what the peer reads, filled once
 * @posted: send WRs posted
 * @completed: send WRs known complete, unsignaled ones included
 * @pending: signaled send WRs not yet completed
 * @credit: iterations the peer lets us start
 * @verified: the peer's iterations checked
 * @started: our iterations whose receive-consuming requests are posted
 * @credit_sent: iterations we let the peer start
 * @rx_fifo: wr_ids of the posted receives, in the order they complete
 * @rx_sc: how each send's receive is scattered
 * @last_old: what the last compare&swap fetched
 * @fadd_got: every value our fetch&adds fetched; @cas_got likewise, for
 *	the compare&swaps that succeeded
 */
struct lane {
	unsigned int idx;
	pthread_t thread;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *buf_mr, *wt_mr, *rs_mr;
	uint8_t *buf, *wt, *rs;
	uint32_t max_inline;
	const struct qp_info *peer;
	uint32_t posted, completed, pending;
	uint32_t credit, verified;
	uint32_t started, credit_sent;
	uint64_t rx_fifo[RQ_DEPTH];
	uint32_t rx_head, rx_tail;
	struct scatter rx_sc[NSEND];
	uint64_t last_old;
	uint64_t *fadd_got, *cas_got;
	uint32_t nfadd_got, ncas_got;
	uint64_t cas_guess;
	struct stats st;
};

static struct config cfg = {
	.atomics = 1,
	.reads = 1,
	.iters = 20,
	.nqp = 2,
	.nsizes = 12,
	.sizes = { 1, 2, 7, 255, 1023, 1024, 1025, 4095, 4097, 9001, 65539,
		   262147 },
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	uint32_t rd_atomic;
	uint32_t nread;
	uint32_t max_size;
	size_t slot;
	uint64_t *ctr;
	struct ibv_mr *ctr_mr;
	struct side_info me, peer;
	struct lane lane[MAX_QPS];
	int gid_index;
	bool server;
} g;

/* ---- patterns ---------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return mix64(*state);
}

/* @kind: an enum op_kind, for sends plus 16 times the send's index */
static uint64_t pat_base(uint64_t seed, uint32_t qp, uint32_t it,
			 uint32_t kind)
{
	return mix64(seed ^ mix64((uint64_t)qp << 40 ^ (uint64_t)kind << 32 ^
				  it));
}

/* Byte @off of the message whose pattern is @base. */
static uint8_t pat_byte(uint64_t base, uint64_t off)
{
	return mix64(base + off / 8) >> (8 * (off % 8));
}

/* Fills @len bytes with the message's bytes from offset @off on. */
static void pat_fill(uint8_t *p, size_t len, uint64_t base, uint64_t off)
{
	uint64_t w;
	size_t i = 0;

	for (; i < len && (off + i) % 8; i++)
		p[i] = pat_byte(base, off + i);
	for (; i + 8 <= len; i += 8) {
		w = htole64(mix64(base + (off + i) / 8));
		memcpy(p + i, &w, 8);
	}
	for (; i < len; i++)
		p[i] = pat_byte(base, off + i);
}

/* The first byte of @p that is not the message's, or @len. */
static size_t pat_check(const uint8_t *p, size_t len, uint64_t base,
			uint64_t off)
{
	uint64_t w;
	size_t i = 0, j;

	for (; i < len && (off + i) % 8; i++)
		if (p[i] != pat_byte(base, off + i))
			return i;
	for (; i + 8 <= len; i += 8) {
		w = htole64(mix64(base + (off + i) / 8));
		if (memcmp(p + i, &w, 8))
			break;
	}
	for (j = i; j < len; j++)
		if (p[j] != pat_byte(base, off + j))
			return j;
	return len;
}

/* The first byte of @p that is not the poison, or @len. */
static size_t poison_check(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != POISON)
			return i;
	return len;
}

/* ---- plans ------------------------------------------------------------- */

static void plan_make(struct plan *p, uint64_t seed, uint32_t qp,
		      uint32_t it)
{
	uint64_t r = seed ^ (uint64_t)qp << 48 ^ (uint64_t)it << 20;
	uint32_t sz = cfg.sizes[(it + qp) % cfg.nsizes];
	uint32_t rs_span = 2 * g.max_size + RS_EXTRA;
	int i;

	p->src_off = 1 + 2 * (rnd(&r) % 30);
	p->w_len = sz;
	p->w_off = GUARD + 1 + 2 * (rnd(&r) % 30);
	/* Every fourth Write with Immediate carries no payload at all. */
	p->wi_len = it % 4 == 3 ? 0 : sz - sz / 3;
	p->wi_off = GUARD + 1 + 2 * (rnd(&r) % 30);
	p->s_len[0] = sz;
	p->s_len[1] = sz - rnd(&r) % (sz / 2 + 1);
	p->s_len[2] = 1 + rnd(&r) % (sz < INLINE_MAX ? sz : INLINE_MAX);
	for (i = 0; i < NREAD; i++) {
		p->r_len[i] = i ? 1 + rnd(&r) % sz : sz;
		p->r_off[i] = rnd(&r) % (rs_span - p->r_len[i] + 1);
	}
	p->imm = (uint32_t)rnd(&r);
	p->w_signaled = it % 2;
	p->s0_signaled = it % 3 == 0;
}

/* Splits @len into at most @n non-empty pieces; returns how many. */
static int split(uint32_t len, int n, uint64_t *r, uint32_t *piece)
{
	int i, k = 0;
	uint32_t left = len, cut;

	for (i = 0; i < n - 1 && left > 1; i++) {
		cut = 1 + rnd(r) % (left - 1);
		piece[k++] = cut;
		left -= cut;
	}
	if (left)
		piece[k++] = left;
	return k;
}

/* ---- buffers ----------------------------------------------------------- */

/*
 * A lane's local buffer: NSEND + 2 tx slots, NSEND rx slots, the read
 * slots, then a page for atomic results and credits.
 */
enum { TX_SLOTS = NSEND + 2, RX_SLOTS = NSEND };

static uint8_t *tx_slot(struct lane *l, int i)
{
	return l->buf + i * g.slot;
}

static uint8_t *rx_slot(struct lane *l, int i)
{
	return l->buf + (TX_SLOTS + i) * g.slot;
}

static uint8_t *rd_slot(struct lane *l, int i)
{
	return l->buf + (TX_SLOTS + RX_SLOTS + i) * g.slot;
}

static uint64_t *atom_slot(struct lane *l, int i)
{
	return (uint64_t *)(l->buf + (TX_SLOTS + RX_SLOTS + NREAD) * g.slot) +
	       i;
}

/* 64 bytes each: 4 for sending credits, 2 for receiving them. */
static uint8_t *credit_slot(struct lane *l, int i)
{
	return (uint8_t *)atom_slot(l, 64) + 64 * i;
}

static size_t buf_bytes(void)
{
	return (TX_SLOTS + RX_SLOTS + NREAD) * g.slot + 4096;
}

static uint32_t rs_bytes(void)
{
	return 2 * g.max_size + RS_EXTRA;
}

static void *alloc_pages(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		die("out of memory (%zu bytes)", len);
	memset(p, POISON, len);
	return p;
}

static struct ibv_mr *reg(void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(g.pd, p, len, access);

	if (!mr)
		die("ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
	return mr;
}

/* ---- completions ------------------------------------------------------- */

/* wr_id: kind, index within the iteration, iteration, sequence number. */
static uint64_t wr_id(enum op_kind kind, uint32_t k, uint32_t it, uint32_t seq)
{
	return (uint64_t)kind << 56 | (uint64_t)(k & 0xff) << 48 |
	       (uint64_t)(it & 0xffffff) << 24 | (seq & 0xffffff);
}

static enum op_kind wr_kind(uint64_t id)
{
	return id >> 56;
}

static uint32_t wr_k(uint64_t id)
{
	return (id >> 48) & 0xff;
}

static uint32_t wr_it(uint64_t id)
{
	return (id >> 24) & 0xffffff;
}

static void check_status(struct lane *l, const struct ibv_wc *wc,
			 const char *queue)
{
	if (wc->status == IBV_WC_SUCCESS)
		return;
	die("QP %u: %s completion error on %s iteration %u: %s (%d, vendor_err %#x)",
	    l->idx, queue, kind_name[wr_kind(wc->wr_id)] ?: "?",
	    wr_it(wc->wr_id), ibv_wc_status_str(wc->status), wc->status,
	    wc->vendor_err);
}

static void bad_byte(struct lane *l, const char *what, uint32_t it,
		     size_t off, size_t len, uint8_t got, uint8_t want)
{
	die("QP %u iteration %u: %s: byte %zu of %zu is %#04x, expected %#04x",
	    l->idx, it, what, off, len, got, want);
}

static void bad_guard(struct lane *l, const char *what, uint32_t it,
		      long off)
{
	die("QP %u iteration %u: %s: byte %ld outside the target was written",
	    l->idx, it, what, off);
}

static void check_region(struct lane *l, const char *what, uint32_t it,
			 const uint8_t *p, uint32_t len, uint64_t base,
			 uint64_t off)
{
	size_t bad = pat_check(p, len, base, off);

	if (bad < len)
		bad_byte(l, what, it, bad, len, p[bad],
			 pat_byte(base, off + bad));
	l->st.bytes += len;
}

/*
 * The target, holding the message's bytes from @off on, and GUARD bytes
 * either side; then poisoned again.
 */
static void check_target(struct lane *l, const char *what, uint32_t it,
			 uint8_t *p, uint32_t len, uint64_t base, uint64_t off)
{
	size_t bad;

	bad = poison_check(p - GUARD, GUARD);
	if (bad < GUARD)
		bad_guard(l, what, it, (long)bad - GUARD);
	bad = poison_check(p + len, GUARD);
	if (bad < GUARD)
		bad_guard(l, what, it, (long)(len + bad));
	check_region(l, what, it, p, len, base, off);
	memset(p - GUARD, POISON, len + 2 * GUARD);
}

/* ---- posting ----------------------------------------------------------- */

static void post_send(struct lane *l, struct ibv_send_wr *wr, enum op_kind kind,
		      uint32_t k, uint32_t it)
{
	struct ibv_send_wr *bad;
	int ret;

	if (l->posted - l->completed >= SQ_DEPTH)
		die("QP %u: send queue overrun (a bug in this tool)", l->idx);
	wr->wr_id = wr_id(kind, k, it, l->posted);
	ret = ibv_post_send(l->qp, wr, &bad);
	if (ret)
		die("QP %u: ibv_post_send(%s, iteration %u): %s", l->idx,
		    kind_name[kind], it, strerror(ret));
	l->posted++;
	if (wr->send_flags & IBV_SEND_SIGNALED)
		l->pending++;
	l->st.ops[kind]++;
}

static void post_recv(struct lane *l, enum op_kind kind, uint32_t k, uint32_t it,
		      struct ibv_sge *sge, int nsge)
{
	struct ibv_recv_wr wr = {
		.wr_id = wr_id(kind, k, it, 0),
		.sg_list = sge,
		.num_sge = nsge,
	}, *bad;
	int ret;

	if (l->rx_tail - l->rx_head >= RQ_DEPTH)
		die("QP %u: receive queue overrun (a bug in this tool)",
		    l->idx);
	ret = ibv_post_recv(l->qp, &wr, &bad);
	if (ret)
		die("QP %u: ibv_post_recv: %s", l->idx, strerror(ret));
	l->rx_fifo[l->rx_tail++ % RQ_DEPTH] = wr.wr_id;
}

/*
 * Scatters the peer's send @k of iteration @it over up to 3 - @k SGEs in
 * rx slot @k, GUARD bytes apart, with room to spare on even iterations.
 */
static void post_recv_send(struct lane *l, uint32_t k, uint32_t it,
			   const struct plan *peer)
{
	struct scatter *sc = &l->rx_sc[k];
	uint64_t r = g.me.seed ^ mix64((uint64_t)l->idx << 32 ^ it ^ k);
	struct ibv_sge sge[3];
	uint32_t off = GUARD + 1 + 2 * (rnd(&r) % 30);
	int i;

	sc->cap = peer->s_len[k] + (it % 2 ? 0 : 13);
	sc->n = split(sc->cap, 3 - k, &r, sc->len);
	for (i = 0; i < sc->n; i++) {
		sc->off[i] = off;
		sge[i].addr = (uintptr_t)rx_slot(l, k) + off;
		sge[i].length = sc->len[i];
		sge[i].lkey = l->buf_mr->lkey;
		off += sc->len[i] + GUARD;
	}
	post_recv(l, K_SEND, k, it, sge, sc->n);
}

static void post_recv_credit(struct lane *l, uint32_t it)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)credit_slot(l, 4 + it % 2),
		.length = 64,
		.lkey = l->buf_mr->lkey,
	};

	memset(credit_slot(l, 4 + it % 2), POISON, 64);
	post_recv(l, K_CREDIT, 0, it, &sge, 1);
}

/* What the peer's iteration @it needs here, and the next credit's slot. */
static void post_recvs(struct lane *l, uint32_t it)
{
	struct plan peer;
	uint32_t k;

	plan_make(&peer, g.peer.seed, l->idx, it);
	post_recv(l, K_WIMM, 0, it, NULL, 0);
	for (k = 0; k < NSEND; k++)
		post_recv_send(l, k, it, &peer);
	if (it + 1 < cfg.iters)
		post_recv_credit(l, it + 1);
}

/* Lets the peer start iteration @it: our targets are ready for it. */
static void send_credit(struct lane *l, uint32_t it)
{
	uint8_t *p = credit_slot(l, it % 4);
	struct ibv_sge sge = {
		.addr = (uintptr_t)p, .length = 8, .lkey = l->buf_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	uint64_t v = MAGIC ^ it;

	memcpy(p, &v, 8);
	if (l->max_inline >= 8)
		wr.send_flags |= IBV_SEND_INLINE;
	post_send(l, &wr, K_CREDIT, 0, it);
}

/* ---- what arrives ------------------------------------------------------ */

static void rx_wimm(struct lane *l, const struct ibv_wc *wc, uint32_t it)
{
	struct plan p;

	plan_make(&p, g.peer.seed, l->idx, it);
	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM) || be32toh(wc->imm_data) != p.imm)
		die("QP %u iteration %u: write_imm: opcode %d flags %#x imm %#x, not %#x",
		    l->idx, it, wc->opcode, wc->wc_flags,
		    be32toh(wc->imm_data), p.imm);
	if (wc->byte_len != p.wi_len)
		die("QP %u iteration %u: write_imm byte_len %u, expected %u",
		    l->idx, it, wc->byte_len, p.wi_len);
	/* The Write came first on the peer's send queue, so it is here. */
	check_target(l, "write", it, l->wt + p.w_off, p.w_len,
		     pat_base(g.peer.seed, l->idx, it, K_WRITE), 0);
	check_target(l, "write_imm", it, l->wt + g.slot + p.wi_off, p.wi_len,
		     pat_base(g.peer.seed, l->idx, it, K_WIMM), 0);
}

static void rx_send_data(struct lane *l, uint32_t k, uint32_t it,
			 uint32_t len)
{
	const struct scatter *sc = &l->rx_sc[k];
	uint64_t base = pat_base(g.peer.seed, l->idx, it, K_SEND + 16 * k);
	uint8_t *slot = rx_slot(l, k);
	uint32_t done = 0, n;
	char what[16];
	size_t bad;
	int i;

	snprintf(what, sizeof(what), "send %u", k);
	bad = poison_check(slot + sc->off[0] - GUARD, GUARD);
	if (bad < GUARD)
		bad_guard(l, what, it, (long)bad - GUARD);
	for (i = 0; i < sc->n; i++) {
		n = len - done < sc->len[i] ? len - done : sc->len[i];
		check_region(l, what, it, slot + sc->off[i], n, base, done);
		bad = poison_check(slot + sc->off[i] + n,
				   sc->len[i] - n + GUARD);
		if (bad < sc->len[i] - n + GUARD)
			bad_guard(l, what, it, (long)(done + n + bad));
		done += n;
	}
	memset(slot, POISON, sc->off[sc->n - 1] + sc->len[sc->n - 1] + GUARD);
}

static void rx_send(struct lane *l, const struct ibv_wc *wc, uint32_t k,
		    uint32_t it)
{
	bool imm = k == 1;
	struct plan p;

	plan_make(&p, g.peer.seed, l->idx, it);
	if (wc->opcode != IBV_WC_RECV ||
	    !!(wc->wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && be32toh(wc->imm_data) != p.imm + 1))
		die("QP %u iteration %u: send %u completion: opcode %d flags %#x imm %#x",
		    l->idx, it, k, wc->opcode, wc->wc_flags,
		    be32toh(wc->imm_data));
	if (wc->byte_len != p.s_len[k])
		die("QP %u iteration %u: send %u byte_len %u, expected %u",
		    l->idx, it, k, wc->byte_len, p.s_len[k]);
	if (p.s_len[k])
		rx_send_data(l, k, it, p.s_len[k]);
	if (k < NSEND - 1)
		return;
	/* The peer's iteration is checked: get ready for the next one. */
	l->verified = it + 1;
	if (it + 1 < cfg.iters)
		post_recvs(l, it + 1);
}

static void rx_credit(struct lane *l, const struct ibv_wc *wc, uint32_t it)
{
	uint64_t v, want = MAGIC ^ it;

	memcpy(&v, credit_slot(l, 4 + it % 2), 8);
	if (wc->opcode != IBV_WC_RECV || wc->byte_len != 8 || v != want)
		die("QP %u: credit %u: opcode %d byte_len %u value %#llx",
		    l->idx, it, wc->opcode, wc->byte_len,
		    (unsigned long long)v);
	l->credit = it;
}

static void on_recv(struct lane *l, const struct ibv_wc *wc)
{
	uint64_t want;

	check_status(l, wc, "receive");
	want = l->rx_fifo[l->rx_head++ % RQ_DEPTH];
	if (wc->wr_id != want)
		die("QP %u: receive %#llx completed before %#llx", l->idx,
		    (unsigned long long)wc->wr_id, (unsigned long long)want);
	if (wc->qp_num != l->qp->qp_num)
		die("QP %u: receive completion names QP %#x", l->idx,
		    wc->qp_num);
	switch (wr_kind(wc->wr_id)) {
	case K_WIMM:
		rx_wimm(l, wc, wr_it(wc->wr_id));
		break;
	case K_SEND:
		rx_send(l, wc, wr_k(wc->wr_id), wr_it(wc->wr_id));
		break;
	default:
		rx_credit(l, wc, wr_it(wc->wr_id));
		break;
	}
}

/* ---- what completes ---------------------------------------------------- */

static void done_read(struct lane *l, uint32_t k, uint32_t it)
{
	struct plan p;
	uint8_t *d = rd_slot(l, k) + GUARD;

	plan_make(&p, g.me.seed, l->idx, it);
	/* The peer's read source holds one message, from its start. */
	check_target(l, "read", it, d, p.r_len[k],
		     pat_base(g.peer.seed, l->idx, 0, K_RSRC), p.r_off[k]);
}

static enum ibv_wc_opcode send_wc_opcode(enum op_kind kind)
{
	switch (kind) {
	case K_WRITE:
	case K_WIMM:
		return IBV_WC_RDMA_WRITE;
	case K_READ:
		return IBV_WC_RDMA_READ;
	case K_FADD:
		return IBV_WC_FETCH_ADD;
	case K_CAS:
		return IBV_WC_COMP_SWAP;
	default:
		return IBV_WC_SEND;
	}
}

static void on_send(struct lane *l, const struct ibv_wc *wc)
{
	enum op_kind kind = wr_kind(wc->wr_id);
	uint32_t seq = wc->wr_id & 0xffffff;

	check_status(l, wc, "send");
	if (wc->opcode != send_wc_opcode(kind))
		die("QP %u: %s completion with opcode %d", l->idx,
		    kind_name[kind], wc->opcode);
	/* Everything posted up to this one is done, unsignaled or not. */
	l->completed = l->posted - ((l->posted - 1 - seq) & 0xffffff);
	l->pending--;
	if (kind == K_READ)
		done_read(l, wr_k(wc->wr_id), wr_it(wc->wr_id));
	else if (kind == K_FADD)
		l->fadd_got[l->nfadd_got++] = *atom_slot(l, wr_k(wc->wr_id));
	else if (kind == K_CAS)
		l->last_old = *atom_slot(l, 16 + wr_k(wc->wr_id));
}

static int poll_cq(struct lane *l, struct ibv_cq *cq, bool send)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(cq, 16, wc);
	if (n < 0)
		die("QP %u: ibv_poll_cq failed", l->idx);
	for (i = 0; i < n; i++) {
		if (send)
			on_send(l, &wc[i]);
		else
			on_recv(l, &wc[i]);
	}
	return n;
}

static void arm(struct ibv_cq *cq)
{
	if (ibv_req_notify_cq(cq, 0))
		die("ibv_req_notify_cq failed");
}

/*
 * Lets the peer start its next iteration once its last one is checked and
 * the next receives are posted. Not before our own requests of that last
 * iteration are on the wire, though: the peer's receives expect them
 * before the credit.
 */
static void send_credits(struct lane *l)
{
	uint32_t next = l->credit_sent + 1;

	if (next <= l->verified && next <= l->started && next < cfg.iters) {
		send_credit(l, next);
		l->credit_sent = next;
	}
}

/*
 * Handles what has completed; when nothing has, sleeps on the completion
 * channel rather than spinning: on a single slow CPU the transport needs
 * the cycles.
 */
static void progress(struct lane *l)
{
	struct ibv_cq *cq;
	void *ctx;

	if (poll_cq(l, l->scq, true) + poll_cq(l, l->rcq, false))
		goto out;
	arm(l->scq);
	arm(l->rcq);
	if (poll_cq(l, l->scq, true) + poll_cq(l, l->rcq, false))
		goto out;
	if (ibv_get_cq_event(l->ch, &cq, &ctx))
		die("ibv_get_cq_event failed");
	ibv_ack_cq_events(cq, 1);
out:
	send_credits(l);
}

static void drain(struct lane *l)
{
	while (l->pending)
		progress(l);
}

/* ---- what this side sends ---------------------------------------------- */

static void do_writes(struct lane *l, const struct plan *p, uint32_t it)
{
	struct ibv_sge sge = { .lkey = l->buf_mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma.rkey = l->peer->wt_rkey,
	};
	uint8_t *src = tx_slot(l, 0) + p->src_off;

	pat_fill(src, p->w_len, pat_base(g.me.seed, l->idx, it, K_WRITE), 0);
	sge.addr = (uintptr_t)src;
	sge.length = p->w_len;
	wr.wr.rdma.remote_addr = l->peer->wt_addr + p->w_off;
	wr.send_flags = p->w_signaled ? IBV_SEND_SIGNALED : 0;
	post_send(l, &wr, K_WRITE, 0, it);

	src = tx_slot(l, 1) + p->src_off;
	pat_fill(src, p->wi_len, pat_base(g.me.seed, l->idx, it, K_WIMM), 0);
	sge.addr = (uintptr_t)src;
	sge.length = p->wi_len;
	wr.num_sge = p->wi_len ? 1 : 0;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(p->imm);
	wr.wr.rdma.remote_addr = l->peer->wt_addr + g.slot + p->wi_off;
	wr.send_flags = IBV_SEND_SIGNALED;
	post_send(l, &wr, K_WIMM, 0, it);
}

/* Send @k's source: up to 3 - @k pieces of tx slot 2 + @k, gaps between. */
static int send_gather(struct lane *l, uint32_t k, uint32_t it,
		       const struct plan *p, struct ibv_sge *sge)
{
	uint64_t base = pat_base(g.me.seed, l->idx, it, K_SEND + 16 * k);
	uint64_t r = mix64(g.me.seed ^ it ^ (uint64_t)k << 32 ^
			   (uint64_t)l->idx << 40);
	uint32_t piece[3], off = p->src_off, done = 0;
	int i, n;

	n = split(p->s_len[k], 3 - k, &r, piece);
	for (i = 0; i < n; i++) {
		pat_fill(tx_slot(l, 2 + k) + off, piece[i], base, done);
		sge[i].addr = (uintptr_t)tx_slot(l, 2 + k) + off;
		sge[i].length = piece[i];
		sge[i].lkey = l->buf_mr->lkey;
		off += piece[i] + GUARD;
		done += piece[i];
	}
	return n;
}

static void do_sends(struct lane *l, const struct plan *p, uint32_t it)
{
	struct ibv_sge sge[3];
	struct ibv_send_wr wr = { .sg_list = sge };
	uint32_t k;

	for (k = 0; k < NSEND; k++) {
		wr.num_sge = send_gather(l, k, it, p, sge);
		wr.opcode = k == 1 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		wr.imm_data = htobe32(p->imm + 1);
		wr.send_flags = IBV_SEND_SIGNALED;
		if (k == 0 && !p->s0_signaled)
			wr.send_flags = 0;
		if (k == 2 && p->s_len[k] <= l->max_inline)
			wr.send_flags |= IBV_SEND_INLINE;
		post_send(l, &wr, K_SEND, k, it);
		if (!(wr.send_flags & IBV_SEND_INLINE))
			continue;
		/* Inline data was copied at post time: the source is free. */
		memset(tx_slot(l, 2 + k), POISON, g.slot);
		l->st.inl++;
	}
}

static void do_reads(struct lane *l, const struct plan *p, uint32_t it)
{
	struct ibv_sge sge = { .lkey = l->buf_mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma.rkey = l->peer->rs_rkey,
	};
	uint32_t k;

	for (k = 0; k < g.nread; k++) {
		memset(rd_slot(l, k), POISON, p->r_len[k] + 2 * GUARD);
		sge.addr = (uintptr_t)rd_slot(l, k) + GUARD;
		sge.length = p->r_len[k];
		wr.wr.rdma.remote_addr = l->peer->rs_addr + p->r_off[k];
		post_send(l, &wr, K_READ, k, it);
	}
}

static void do_fetch_adds(struct lane *l, uint32_t it)
{
	struct ibv_sge sge = { .length = 8, .lkey = l->buf_mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic.remote_addr = g.peer.ctr_addr,
		.wr.atomic.rkey = g.peer.ctr_rkey,
		.wr.atomic.compare_add = FADD_STEP,
	};
	uint32_t k;

	for (k = 0; k < NFADD; k++) {
		*atom_slot(l, k) = 0;
		sge.addr = (uintptr_t)atom_slot(l, k);
		post_send(l, &wr, K_FADD, k, it);
	}
}

/* One compare&swap, waited for; returns the value the peer had. */
static uint64_t cas_once(struct lane *l, uint32_t k, uint32_t it,
			 uint64_t compare, uint64_t swap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)atom_slot(l, 16 + k), .length = 8,
		.lkey = l->buf_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic.remote_addr = g.peer.ctr_addr + 8,
		.wr.atomic.rkey = g.peer.ctr_rkey,
		.wr.atomic.compare_add = compare,
		.wr.atomic.swap = swap,
	};

	*atom_slot(l, 16 + k) = CAS_NEVER;
	post_send(l, &wr, K_CAS, k, it);
	drain(l);
	return l->last_old;
}

static void check_cas_value(struct lane *l, uint64_t v, uint32_t it)
{
	uint64_t total = (uint64_t)cfg.iters * cfg.nqp * NCAS;

	if ((v - CAS_INIT) % CAS_STEP || (v - CAS_INIT) / CAS_STEP > total)
		die("QP %u iteration %u: cmp_swap fetched %#llx, never a counter value",
		    l->idx, it, (unsigned long long)v);
}

/*
 * NCAS increments by compare&swap, each retried with what the last one
 * fetched while other QPs get in first; then a compare that cannot match
 * and must leave the counter alone.
 */
static void do_cas(struct lane *l, uint32_t it)
{
	uint32_t n = 0;
	uint64_t old;

	while (n < NCAS) {
		old = cas_once(l, 0, it, l->cas_guess, l->cas_guess + CAS_STEP);
		check_cas_value(l, old, it);
		if (old == l->cas_guess) {
			l->cas_got[l->ncas_got++] = old;
			l->cas_guess = old + CAS_STEP;
			n++;
			continue;
		}
		l->st.cas_retries++;
		l->cas_guess = old;
	}
	old = cas_once(l, 1, it, CAS_NEVER, ~0ULL);
	check_cas_value(l, old, it);
}

static void iteration(struct lane *l, uint32_t it)
{
	struct plan p;

	plan_make(&p, g.me.seed, l->idx, it);
	do_writes(l, &p, it);
	do_sends(l, &p, it);
	l->started = it + 1;
	send_credits(l);
	if (!cfg.uc && cfg.reads)
		do_reads(l, &p, it);
	if (cfg.atomics) {
		do_fetch_adds(l, it);
		do_cas(l, it);
	}
	drain(l);
}

static void *lane_run(void *arg)
{
	struct lane *l = arg;
	uint32_t it;

	for (it = 0; it < cfg.iters; it++) {
		while (l->credit < it)
			progress(l);
		iteration(l, it);
	}
	while (l->verified < cfg.iters || l->pending)
		progress(l);
	return NULL;
}

/* ---- setup ------------------------------------------------------------- */

static void open_device(const char *name)
{
	struct ibv_device_attr attr;
	union ibv_gid gid;

	g.ctx = open_dev(name, g.gid_index, &gid);
	memcpy(g.me.gid, gid.raw, 16);
	if (ibv_query_device(g.ctx, &attr) || ibv_query_port(g.ctx, 1, &g.port))
		die("querying %s failed", name);
	g.rd_atomic = attr.max_qp_rd_atom < 16 ? attr.max_qp_rd_atom : 16;
	if (attr.max_qp_init_rd_atom < (int)g.rd_atomic)
		g.rd_atomic = attr.max_qp_init_rd_atom;
	g.nread = g.rd_atomic < NREAD ? g.rd_atomic : NREAD;
	if (!cfg.uc && !g.nread)
		die("%s allows no RDMA Read or atomic", name);
	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		die("ibv_alloc_pd: %s", strerror(errno));
}

static void create_qp(struct lane *l)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = cfg.uc ? IBV_QPT_UC : IBV_QPT_RC,
		.cap = {
			.max_send_wr = SQ_DEPTH,
			.max_recv_wr = RQ_DEPTH,
			.max_send_sge = 3,
			.max_recv_sge = 3,
			.max_inline_data = INLINE_MAX,
		},
	};

	l->ch = ibv_create_comp_channel(g.ctx);
	if (!l->ch)
		die("ibv_create_comp_channel: %s", strerror(errno));
	l->scq = ibv_create_cq(g.ctx, 2 * SQ_DEPTH, NULL, l->ch, 0);
	l->rcq = ibv_create_cq(g.ctx, 2 * RQ_DEPTH, NULL, l->ch, 0);
	if (!l->scq || !l->rcq)
		die("ibv_create_cq: %s", strerror(errno));
	attr.send_cq = l->scq;
	attr.recv_cq = l->rcq;
	l->qp = ibv_create_qp(g.pd, &attr);
	if (!l->qp)
		die("ibv_create_qp: %s", strerror(errno));
	l->max_inline = attr.cap.max_inline_data;
}

static void create_lane(struct lane *l, unsigned int idx)
{
	struct qp_info *me = &g.me.qp[idx];
	uint32_t total = cfg.iters * NFADD + cfg.iters * NCAS;

	l->idx = idx;
	create_qp(l);
	l->buf = alloc_pages(buf_bytes());
	l->wt = alloc_pages(2 * g.slot);
	l->rs = alloc_pages(rs_bytes());
	pat_fill(l->rs, rs_bytes(), pat_base(g.me.seed, idx, 0, K_RSRC), 0);
	l->buf_mr = reg(l->buf, buf_bytes(), IBV_ACCESS_LOCAL_WRITE);
	l->wt_mr = reg(l->wt, 2 * g.slot,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	l->rs_mr = reg(l->rs, rs_bytes(), IBV_ACCESS_REMOTE_READ);
	l->fadd_got = calloc(total, sizeof(uint64_t));
	l->cas_got = calloc(total, sizeof(uint64_t));
	if (!l->fadd_got || !l->cas_got)
		die("out of memory");
	l->cas_guess = CAS_INIT;

	me->qpn = l->qp->qp_num;
	me->psn = mix64(g.me.seed ^ idx) & 0xffffff;
	me->wt_addr = (uintptr_t)l->wt;
	me->wt_rkey = l->wt_mr->rkey;
	me->rs_addr = (uintptr_t)l->rs;
	me->rs_rkey = l->rs_mr->rkey;
}

static void connect_lane(struct lane *l)
{
	struct path p = {
		.qpn = g.peer.qp[l->idx].qpn,
		.rq_psn = g.peer.qp[l->idx].psn,
		.sq_psn = g.me.qp[l->idx].psn,
		.gid_index = g.gid_index,
		.mtu = g.port.active_mtu,
		.access = IBV_ACCESS_REMOTE_WRITE,
	};

	l->peer = &g.peer.qp[l->idx];
	memcpy(p.gid, g.peer.gid, 16);
	if (!cfg.uc) {
		p.access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		p.rd_atomic = g.rd_atomic;
	}
	qp_connect(l->qp, &p);
}

static void setup_counters(void)
{
	g.ctr = alloc_pages(4096);
	g.ctr[0] = FADD_INIT;
	g.ctr[1] = CAS_INIT;
	g.ctr_mr = reg(g.ctr, 4096, IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ);
	g.me.ctr_addr = (uintptr_t)g.ctr;
	g.me.ctr_rkey = g.ctr_mr->rkey;
}

/* The client's parameters become the server's too. */
static void exchange_config(void)
{
	unsigned int i;

	cfg.magic = MAGIC;
	if (g.server)
		oob_read(&cfg, sizeof(cfg));
	else
		oob_write(&cfg, sizeof(cfg));
	if (cfg.magic != MAGIC || !cfg.nqp || cfg.nqp > MAX_QPS ||
	    !cfg.iters || cfg.iters > 0xffffff || !cfg.nsizes ||
	    cfg.nsizes > MAX_SIZES)
		die("the client's parameters make no sense");
	g.max_size = 0;
	for (i = 0; i < cfg.nsizes; i++)
		if (cfg.sizes[i] > g.max_size)
			g.max_size = cfg.sizes[i];
	g.slot = ((size_t)g.max_size + SLOT_EXTRA + 63) & ~(size_t)63;
	/* Two seeds, so that what one side sends is never the other's. */
	g.me.seed = mix64(cfg.seed ^ (g.server ? 1 : 2));
}

static void setup(const char *dev)
{
	unsigned int i;

	exchange_config();
	open_device(dev);
	g.me.magic = MAGIC;
	g.me.nqp = cfg.nqp;
	setup_counters();
	for (i = 0; i < cfg.nqp; i++)
		create_lane(&g.lane[i], i);

	oob_swap(g.server, &g.me, &g.peer, sizeof(g.me));
	if (g.peer.magic != MAGIC || g.peer.nqp != cfg.nqp)
		die("the peer's QPs do not match ours");
	for (i = 0; i < cfg.nqp; i++) {
		connect_lane(&g.lane[i]);
		post_recvs(&g.lane[i], 0);
	}
	/* Both sides' receives are posted before either sends. */
	if (oob_sync(1, false))
		die("the peer failed to set up");
}

/* ---- running and the final checks ------------------------------------- */

static unsigned int lanes_done;

static void *lane_thread(void *arg)
{
	lane_run(arg);
	__atomic_add_fetch(&lanes_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A peer that fails exits and closes the socket: notice at once rather
 * than wait for the transport's retries or -t. The peer finishing first
 * makes the socket readable too, and is fine.
 */
static void watch_peer(void)
{
	struct pollfd pfd = { .fd = oob_fd, .events = POLLIN };
	char c;

	while (__atomic_load_n(&lanes_done, __ATOMIC_ACQUIRE) < cfg.nqp) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if (recv(oob_fd, &c, 1, MSG_PEEK) <= 0)
			die("the peer failed or went away");
		return;
	}
}

static void run(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < cfg.nqp; i++) {
		ret = pthread_create(&g.lane[i].thread, NULL, lane_thread,
				     &g.lane[i]);
		if (ret)
			die("pthread_create: %s", strerror(ret));
	}
	watch_peer();
	for (i = 0; i < cfg.nqp; i++)
		pthread_join(g.lane[i].thread, NULL);
}

/*
 * The values the atomics of all our QPs fetched: with every one of them
 * adding @step to a counter no one else touches, they must be exactly
 * init, init + step, ... init + (n - 1) * step, in some order.
 */
static bool check_fetched(const char *what, uint64_t init, uint64_t step,
			  bool cas)
{
	uint32_t per = cfg.iters * (cas ? NCAS : NFADD);
	uint32_t n = per * cfg.nqp, i, j, got;
	uint8_t *seen = calloc(n, 1);
	uint64_t v, idx;

	if (!seen)
		die("out of memory");
	for (i = 0; i < cfg.nqp; i++) {
		got = cas ? g.lane[i].ncas_got : g.lane[i].nfadd_got;
		for (j = 0; j < got; j++) {
			v = cas ? g.lane[i].cas_got[j] : g.lane[i].fadd_got[j];
			idx = (v - init) / step;
			if ((v - init) % step || idx >= n || seen[idx]++) {
				fprintf(stderr, "sroce-integrity: %s fetched %#llx (QP %u): %s\n",
					what, (unsigned long long)v, i,
					idx < n && !((v - init) % step) ?
					"twice" : "never a counter value");
				free(seen);
				return false;
			}
		}
	}
	free(seen);
	return true;
}

static bool check_counter(const char *what, unsigned int i, uint64_t init,
			  uint64_t step, uint32_t per_qp)
{
	uint64_t want = init + (uint64_t)cfg.iters * cfg.nqp * per_qp * step;
	uint64_t got = __atomic_load_n(&g.ctr[i], __ATOMIC_ACQUIRE);

	if (got == want)
		return true;
	fprintf(stderr, "sroce-integrity: %s counter is %#llx, expected %#llx\n",
		what, (unsigned long long)got, (unsigned long long)want);
	return false;
}

/* Our atomics' results, and the counters the peer's atomics hit. */
static bool check_atomics(void)
{
	bool ok = true;

	if (!cfg.atomics)
		return true;
	ok &= check_fetched("fetch_add", FADD_INIT, FADD_STEP, false);
	ok &= check_fetched("cmp_swap", CAS_INIT, CAS_STEP, true);
	ok &= check_counter("fetch_add", 0, FADD_INIT, FADD_STEP, NFADD);
	ok &= check_counter("cmp_swap", 1, CAS_INIT, CAS_STEP, NCAS);
	return ok;
}

static void summary(void)
{
	struct stats t = {};
	unsigned int i, k;

	for (i = 0; i < cfg.nqp; i++) {
		t.bytes += g.lane[i].st.bytes;
		t.inl += g.lane[i].st.inl;
		t.cas_retries += g.lane[i].st.cas_retries;
		for (k = K_WRITE; k < K_RSRC; k++)
			t.ops[k] += g.lane[i].st.ops[k];
	}
	printf("sroce-integrity: OK %s %u QPs %u iterations: %llu bytes verified;",
	       cfg.uc ? "uc" : "rc", cfg.nqp, cfg.iters,
	       (unsigned long long)t.bytes);
	for (k = K_WRITE; k < K_RSRC; k++)
		if (t.ops[k])
			printf(" %s %llu", kind_name[k],
			       (unsigned long long)t.ops[k]);
	printf(" inline %llu", (unsigned long long)t.inl);
	if (cfg.atomics)
		printf(" cas_retries %llu; counters exact",
		       (unsigned long long)t.cas_retries);
	printf("\n");
}

static void finish(void)
{
	bool ok;

	/* The peer's atomics are done once it gets here. */
	if (oob_sync(2, false))
		die("the peer failed");
	ok = check_atomics();
	if (oob_sync(3, !ok))
		die("the peer's checks failed");
	if (!ok)
		exit(1);
	summary();
}

/* ---- options ----------------------------------------------------------- */

static uint32_t parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	if (*end && strchr("kKmM", *end))
		end++;
	if (*end == '+')
		v += strtoull(end + 1, &end, 0);
	if (errno || end == s || *end || !v || v > (64U << 20))
		die("bad size '%s' (1 to 64m, e.g. 4097, 64k, 3m+5)", s);
	return v;
}

static void parse_sizes(char *arg)
{
	char *tok, *save = NULL;

	cfg.nsizes = 0;
	for (tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (cfg.nsizes == MAX_SIZES)
			die("at most %d sizes", MAX_SIZES);
		cfg.sizes[cfg.nsizes++] = parse_size(tok);
	}
	if (!cfg.nsizes)
		die("no sizes given");
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: sroce-integrity -d DEV -g GID_INDEX [-p PORT] [-t SECONDS]\n"
		"         [-q QPS] [-n ITERATIONS] [-S SIZE,...] [-u] [-A] [-R] [-x SEED]\n"
		"         [HOST]\n"
		"  without HOST: serve one client, with the client's -q -n -S -u -A -R -x\n");
	exit(1);
}

static unsigned long parse_num(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		print_usage();
	return v;
}

int main(int argc, char **argv)
{
	struct tool_opts o = { .port = "18517", .timeout = 120,
			       .gid_index = -1 };
	int opt;

	cfg.seed = mix64(time(NULL) ^ (uint64_t)getpid() << 32);
	while ((opt = getopt(argc, argv, TOOL_OPTS "q:n:S:uARx:h")) != -1) {
		if (tool_opt(&o, opt, optarg))
			continue;
		switch (opt) {
		case 'q':
			cfg.nqp = parse_num(optarg, MAX_QPS);
			break;
		case 'n':
			cfg.iters = parse_num(optarg, 0xffffff);
			break;
		case 'S':
			parse_sizes(optarg);
			break;
		case 'u':
			cfg.uc = 1;
			cfg.atomics = 0;
			break;
		case 'A':
			cfg.atomics = 0;
			break;
		case 'R':
			cfg.reads = 0;
			break;
		case 'x':
			cfg.seed = parse_num(optarg, ULONG_MAX);
			break;
		default:
			print_usage();
		}
	}
	if (!tool_start(&o, argc, argv))
		print_usage();
	g.gid_index = o.gid_index;
	g.server = o.server;
	setup(o.dev);
	if (!g.server)
		printf("sroce-integrity: seed %#llx\n",
		       (unsigned long long)cfg.seed);
	run();
	finish();
	return 0;
}
