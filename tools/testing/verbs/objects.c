// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-objects: create and destroy every verbs object kind in a loop, to
 * show that nothing leaks and nothing breaks on the way. Each iteration
 * builds the whole tree (PD, MRs, completion channel, CQs, SRQ, RC/UC/UD
 * QPs, an AH) and tears it down in reverse order. The caller compares
 * `rdma resource` and slab counts before and after.
 *
 *   sroce-objects -d DEV [-n ITERATIONS] [-g GID_INDEX]
 *
 * Exit status 0 when every iteration succeeded; otherwise the first
 * failure is printed with its iteration and errno.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

struct objs {
	struct ibv_pd *pd;
	struct ibv_mr *mr[2];
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq[2];
	struct ibv_srq *srq;
	struct ibv_qp *qp[3];
	struct ibv_ah *ah;
};

static char buf[1 << 16];

static int fail(const char *what, unsigned long it)
{
	fprintf(stderr, "sroce-objects: iteration %lu: %s: %s\n", it, what,
		strerror(errno ? errno : EIO));
	return 1;
}

static struct ibv_qp *make_qp(struct objs *o, enum ibv_qp_type type,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = o->cq[0],
		.recv_cq = o->cq[1],
		.srq = srq,
		.qp_type = type,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = srq ? 0 : 64,
			.max_send_sge = 2,
			.max_recv_sge = srq ? 0 : 2,
			.max_inline_data = 64,
		},
	};

	return ibv_create_qp(o->pd, &attr);
}

static int build(struct ibv_context *ctx, struct objs *o, int gid_index,
		 unsigned long it)
{
	struct ibv_srq_init_attr srq_attr = {
		.attr = { .max_wr = 64, .max_sge = 2 },
	};
	struct ibv_ah_attr ah_attr = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .sgid_index = gid_index, .hop_limit = 64 },
	};

	o->pd = ibv_alloc_pd(ctx);
	if (!o->pd)
		return fail("ibv_alloc_pd", it);
	o->mr[0] = ibv_reg_mr(o->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!o->mr[0])
		return fail("ibv_reg_mr", it);
	o->mr[1] = ibv_reg_mr(o->pd, buf + 4096, 4096,
			      IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC);
	if (!o->mr[1])
		return fail("ibv_reg_mr (remote access)", it);
	o->ch = ibv_create_comp_channel(ctx);
	if (!o->ch)
		return fail("ibv_create_comp_channel", it);
	o->cq[0] = ibv_create_cq(ctx, 128, NULL, o->ch, 0);
	if (!o->cq[0] || ibv_req_notify_cq(o->cq[0], 0))
		return fail("ibv_create_cq on a channel", it);
	o->cq[1] = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!o->cq[1])
		return fail("ibv_create_cq", it);
	o->srq = ibv_create_srq(o->pd, &srq_attr);
	if (!o->srq)
		return fail("ibv_create_srq", it);
	o->qp[0] = make_qp(o, IBV_QPT_RC, NULL);
	if (!o->qp[0])
		return fail("ibv_create_qp RC", it);
	o->qp[1] = make_qp(o, IBV_QPT_UC, o->srq);
	if (!o->qp[1])
		return fail("ibv_create_qp UC on an SRQ", it);
	o->qp[2] = make_qp(o, IBV_QPT_UD, NULL);
	if (!o->qp[2])
		return fail("ibv_create_qp UD", it);
	/* An AH to our own GID: always resolvable, on any bench. */
	if (ibv_query_gid(ctx, 1, gid_index, &ah_attr.grh.dgid))
		return fail("ibv_query_gid", it);
	o->ah = ibv_create_ah(o->pd, &ah_attr);
	if (!o->ah)
		return fail("ibv_create_ah", it);
	return 0;
}

/* Records the first failed destroy; a destroy returns an errno value. */
static void note(int ret, const char *what, unsigned long it, int *err)
{
	if (ret && !*err) {
		errno = ret;
		*err = fail(what, it);
	}
}

/* Tears down whatever build() made, in reverse; returns the first error. */
static int teardown(struct objs *o, unsigned long it)
{
	int err = 0, i;

	if (o->ah)
		note(ibv_destroy_ah(o->ah), "ibv_destroy_ah", it, &err);
	for (i = 2; i >= 0; i--)
		if (o->qp[i])
			note(ibv_destroy_qp(o->qp[i]), "ibv_destroy_qp", it,
			     &err);
	if (o->srq)
		note(ibv_destroy_srq(o->srq), "ibv_destroy_srq", it, &err);
	for (i = 1; i >= 0; i--)
		if (o->cq[i])
			note(ibv_destroy_cq(o->cq[i]), "ibv_destroy_cq", it,
			     &err);
	if (o->ch)
		note(ibv_destroy_comp_channel(o->ch),
		     "ibv_destroy_comp_channel", it, &err);
	for (i = 1; i >= 0; i--)
		if (o->mr[i])
			note(ibv_dereg_mr(o->mr[i]), "ibv_dereg_mr", it, &err);
	if (o->pd)
		note(ibv_dealloc_pd(o->pd), "ibv_dealloc_pd", it, &err);
	return err;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000, it;
	const char *dev = NULL;
	struct ibv_context *ctx;
	int gid_index = 0, opt, err = 0;

	while ((opt = getopt(argc, argv, "d:n:g:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (!dev || optind != argc)
		goto usage;

	ctx = open_dev(dev);
	if (!ctx) {
		fprintf(stderr, "sroce-objects: cannot open %s\n", dev);
		return 1;
	}
	for (it = 0; it < n && !err; it++) {
		struct objs o = {};

		err = build(ctx, &o, gid_index, it);
		err |= teardown(&o, it);
	}
	ibv_close_device(ctx);
	if (!err)
		printf("sroce-objects: %lu iterations on %s\n", n, dev);
	return err;

usage:
	fprintf(stderr, "usage: sroce-objects -d DEV [-n ITERATIONS] [-g GID_INDEX]\n");
	return 2;
}
