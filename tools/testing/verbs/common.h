/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two-sided verbs test programs share: failing loudly, a bound on
 * the whole run, the TCP channel the two sides exchange QP numbers and keys
 * over, opening a device, and walking an RC or UC QP to RTS.
 *
 * Include once per program, after defining TOOL (the name messages start
 * with). Both ends are the same kind of machine: structures go over TCP as
 * they lie in memory.
 */
#ifndef SROCE_VERBS_COMMON_H
#define SROCE_VERBS_COMMON_H

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define OOB_MAGIC	0x73726f63766f6f62ULL	/* "srocvoob" */

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static int oob_fd = -1;

/* The first failure is told, whichever thread meets it; others wait. */
static inline void die(const char *fmt, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	va_list ap;

	pthread_mutex_lock(&lock);
	fputs(TOOL ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Named checks, a line each; the program fails if any did. */
static unsigned int checks_failed;

#ifndef CHECK_WIDTH
#define CHECK_WIDTH	24
#endif

static inline bool check(const char *name, bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%-*s %s", CHECK_WIDTH, name, ok ? "ok" : "FAILED");
	if (!ok && fmt) {
		fputs(": ", stdout);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	putchar('\n');
	checks_failed += !ok;
	return ok;
}

static inline void on_alarm(int sig)
{
	static const char msg[] = TOOL ": timed out\n";

	/* Only async-signal-safe calls here. */
	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(2);
}

/* Past @seconds the program exits with status 2, wherever it hangs. */
static inline void set_timeout(unsigned int seconds)
{
	signal(SIGALRM, on_alarm);
	alarm(seconds);
}

static inline void oob_write(const void *p, size_t len)
{
	const uint8_t *b = p;
	ssize_t n;

	while (len) {
		n = write(oob_fd, b, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("lost the peer (tcp write: %s)",
			    n ? strerror(errno) : "closed");
		b += n;
		len -= n;
	}
}

static inline void oob_read(void *p, size_t len)
{
	uint8_t *b = p;
	ssize_t n;

	while (len) {
		n = read(oob_fd, b, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("lost the peer (tcp read: %s)",
			    n ? strerror(errno) : "closed");
		b += n;
		len -= n;
	}
}

/* Sends @out, receives the peer's @in: the server reads first. */
static inline void oob_swap(bool server, const void *out, void *in,
			    size_t len)
{
	if (server) {
		oob_read(in, len);
		oob_write(out, len);
	} else {
		oob_write(out, len);
		oob_read(in, len);
	}
}

struct oob_sync_msg {
	uint64_t magic;
	uint32_t step;
	uint32_t failed;
};

/* Both sides reach @step; returns whether the peer reports a failure. */
static inline bool oob_sync(uint32_t step, bool failed)
{
	struct oob_sync_msg out = { OOB_MAGIC, step, failed }, in;

	oob_write(&out, sizeof(out));
	oob_read(&in, sizeof(in));
	if (in.magic != OOB_MAGIC || in.step != step)
		die("out-of-band protocol error at step %u", step);
	return in.failed;
}

static inline int oob_socket(const struct addrinfo *ai)
{
	int one = 1;
	int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Small messages, each waited for: Nagle would only add delay. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static inline struct addrinfo *oob_resolve(const char *host,
					   const char *port)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = host ? 0 : AI_PASSIVE,
	};
	struct addrinfo *res;
	int ret = getaddrinfo(host, port, &hints, &res);

	if (ret)
		die("%s:%s: %s", host ? host : "*", port, gai_strerror(ret));
	return res;
}

/* Serves one client on @port. */
static inline void oob_listen(const char *port)
{
	struct addrinfo *ai = oob_resolve(NULL, port);
	int fd = oob_socket(ai);
	int one = 1;

	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) ||
	    listen(fd, 1))
		die("listening on port %s: %s", port, strerror(errno));
	freeaddrinfo(ai);
	oob_fd = accept(fd, NULL, NULL);
	if (oob_fd < 0)
		die("accept: %s", strerror(errno));
	setsockopt(oob_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	close(fd);
}

/* The server may not listen yet: retry until the timeout ends the run. */
static inline void oob_connect(const char *host, const char *port)
{
	struct addrinfo *ai = oob_resolve(host, port);

	for (;;) {
		oob_fd = oob_socket(ai);
		if (oob_fd < 0)
			die("socket: %s", strerror(errno));
		if (!connect(oob_fd, ai->ai_addr, ai->ai_addrlen))
			break;
		if (errno != ECONNREFUSED && errno != ETIMEDOUT &&
		    errno != EHOSTUNREACH && errno != ENETUNREACH)
			die("connecting to %s:%s: %s", host, port,
			    strerror(errno));
		close(oob_fd);
		usleep(200000);
	}
	freeaddrinfo(ai);
}

/*
 * The options every two-guest tool takes: -d DEV -g GID_INDEX [-p PORT]
 * [-t SECONDS] [HOST]. Without HOST the tool is the server.
 */
struct tool_opts {
	const char *dev;
	const char *port;
	unsigned int timeout;
	int gid_index;
	bool server;
};

#define TOOL_OPTS "d:g:p:t:"

/* A number in [0, @max] for option -@opt, or the program dies. */
static inline unsigned long opt_num(char opt, const char *s,
				    unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		die("-%c: %s is not a number up to %lu", opt, s, max);
	return v;
}

/* Takes @opt if it is one of TOOL_OPTS; false if it is not. */
static inline bool tool_opt(struct tool_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case 'd':
		o->dev = arg;
		return true;
	case 'g':
		o->gid_index = opt_num('g', arg, 0xffff);
		return true;
	case 'p':
		o->port = arg;
		return true;
	case 't':
		o->timeout = opt_num('t', arg, 86400);
		return true;
	}
	return false;
}

/*
 * After getopt(): with -d, -g and at most a HOST given, arms the timeout
 * and meets the peer on the side channel. False: a usage error.
 */
static inline bool tool_start(struct tool_opts *o, int argc, char **argv)
{
	if (!o->dev || o->gid_index < 0 || argc - optind > 1)
		return false;
	o->server = optind == argc;
	set_timeout(o->timeout);
	if (o->server)
		oob_listen(o->port);
	else
		oob_connect(argv[optind], o->port);
	return true;
}

/* Opens device @name; its port 1's GID @gid_index goes to @gid. */
static inline struct ibv_context *open_dev(const char *name, int gid_index,
					   union ibv_gid *gid)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	int i;

	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (!list[i])
		die("no RDMA device %s", name);
	ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("ibv_open_device(%s): %s", name, strerror(errno));
	if (ibv_query_gid(ctx, 1, gid_index, gid))
		die("no GID %d on %s", gid_index, name);
	return ctx;
}

/**
 * struct path - what an RC or UC QP needs to reach its peer
 * @gid: the peer's GID
 * @qpn: the peer's QP number
 * @rq_psn: the first PSN the peer sends
 * @sq_psn: the first PSN we send
 * @gid_index: our GID's index
 * @mtu: the path MTU
 * @rd_atomic: RDMA Reads and atomics in flight, each way (RC)
 * @access: remote access the QP grants (IBV_ACCESS_REMOTE_*)
 */
struct path {
	uint8_t gid[16];
	uint32_t qpn;
	uint32_t rq_psn;
	uint32_t sq_psn;
	int gid_index;
	enum ibv_mtu mtu;
	uint8_t rd_atomic;
	int access;
};

static inline void modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			     int mask, const char *state)
{
	int ret = ibv_modify_qp(qp, attr, mask);

	if (ret)
		die("QP %#x to %s: %s", qp->qp_num, state, strerror(ret));
}

static inline void qp_to_init(struct ibv_qp *qp, const struct path *p)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = p->access,
	};

	modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		  IBV_QP_ACCESS_FLAGS, "INIT");
}

static inline void qp_to_rtr(struct ibv_qp *qp, const struct path *p)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = p->mtu,
		.dest_qp_num = p->qpn,
		.rq_psn = p->rq_psn,
		.max_dest_rd_atomic = p->rd_atomic,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = {
				.sgid_index = p->gid_index,
				.hop_limit = 64,
			},
		},
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	memcpy(attr.ah_attr.grh.dgid.raw, p->gid, 16);
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	modify_qp(qp, &attr, mask, "RTR");
}

static inline void qp_to_rts(struct ibv_qp *qp, const struct path *p)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = p->sq_psn,
		/* 4.096 us << 16: ~270 ms, patient with a busy guest. */
		.timeout = 16,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = p->rd_atomic,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	modify_qp(qp, &attr, mask, "RTS");
}

/* RESET to RTS along @p. */
static inline void qp_connect(struct ibv_qp *qp, const struct path *p)
{
	qp_to_init(qp, p);
	qp_to_rtr(qp, p);
	qp_to_rts(qp, p);
}

/* What the two ends of an RC connection tell each other out of band. */
struct endpoint {
	uint8_t gid[16];
	uint32_t qpn;
	uint32_t psn;
};

/*
 * Tells the peer @qp's number, @gid and first PSN @psn (24 bits), learns
 * its, and connects @qp to it along @p (whose address it fills in).
 */
static inline void qp_connect_peer(struct ibv_qp *qp, bool server,
				   const union ibv_gid *gid, uint32_t psn,
				   struct path *p)
{
	struct endpoint me = { .qpn = qp->qp_num, .psn = psn & 0xffffff };
	struct endpoint peer;

	memcpy(me.gid, gid->raw, sizeof(me.gid));
	oob_swap(server, &me, &peer, sizeof(me));
	memcpy(p->gid, peer.gid, sizeof(p->gid));
	p->qpn = peer.qpn;
	p->rq_psn = peer.psn;
	p->sq_psn = me.psn;
	qp_connect(qp, p);
}

/* Destroys @qp, then drops what its destruction flushed into @cq. */
static inline void qp_destroy_drain(struct ibv_qp *qp, struct ibv_cq *cq)
{
	struct ibv_wc wc;

	if (ibv_destroy_qp(qp))
		die("ibv_destroy_qp failed");
	/* Completions of the destroyed QP would only confuse the next. */
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
}

/* The next completion of @cq within @ms, or false. */
static inline bool cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	for (; ms > 0; ms -= 5) {
		if (ibv_poll_cq(cq, 1, wc))
			return true;
		usleep(5000);
	}
	return false;
}

static inline enum ibv_qp_state qp_state_of(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		die("ibv_query_qp failed");
	return attr.qp_state;
}

#endif /* SROCE_VERBS_COMMON_H */
