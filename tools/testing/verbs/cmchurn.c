// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-cmchurn: rdma_cm connection churn. The client connects to the
 * server N times in a row; each connection carries one message holding
 * its sequence number, which the server checks, and is then torn down
 * from both sides, with every object (cm_id, QP, CQs, MR) destroyed
 * before the next one is made. A leak, a hang or a stale connection shows
 * as a failed cycle, a timeout, or resource counts that do not return.
 *
 *   server: sroce-cmchurn -s -b ADDR [-p PORT] [-n N]
 *   client: sroce-cmchurn -c ADDR [-p PORT] [-n N]
 *
 * Prints "cycles N" on success. Exit status 0 only if every cycle
 * completed and checked.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

struct churn_msg {
	unsigned long seq;
	uint64_t check;
};

/* A value the receiver can recompute: catches a message from a stale QP. */
static uint64_t churn_check(unsigned long seq)
{
	return seq * 0x9e3779b97f4a7c15ULL ^ 0x5352434fULL;
}

static void churn_qp_attr(struct ibv_qp_init_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->cap.max_send_wr = 1;
	attr->cap.max_recv_wr = 1;
	attr->cap.max_send_sge = 1;
	attr->cap.max_recv_sge = 1;
	attr->qp_type = IBV_QPT_RC;
	attr->sq_sig_all = 1;
}

static int churn_fail(const char *what, unsigned long seq)
{
	fprintf(stderr, "cycle %lu: %s: %s\n", seq, what,
		strerror(errno));
	return -1;
}

/* One connection as the server: receive, check, tear down. */
static int churn_serve_one(struct rdma_cm_id *listen_id, unsigned long seq)
{
	struct churn_msg msg = {};
	struct rdma_cm_id *id;
	struct ibv_qp_init_attr attr;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	int ret = -1;

	if (rdma_get_request(listen_id, &id))
		return churn_fail("rdma_get_request", seq);
	churn_qp_attr(&attr);
	if (rdma_create_qp(id, NULL, &attr)) {
		churn_fail("rdma_create_qp", seq);
		goto out_ep;
	}
	mr = rdma_reg_msgs(id, &msg, sizeof(msg));
	if (!mr) {
		churn_fail("rdma_reg_msgs", seq);
		goto out_ep;
	}
	if (rdma_post_recv(id, NULL, &msg, sizeof(msg), mr)) {
		churn_fail("rdma_post_recv", seq);
		goto out_mr;
	}
	if (rdma_accept(id, NULL)) {
		churn_fail("rdma_accept", seq);
		goto out_mr;
	}
	if (rdma_get_recv_comp(id, &wc) != 1 || wc.status) {
		fprintf(stderr, "cycle %lu: receive failed: %s\n", seq,
			ibv_wc_status_str(wc.status));
		goto out_disc;
	}
	if (msg.seq != seq || msg.check != churn_check(seq)) {
		fprintf(stderr, "cycle %lu: got message %lu (check %s)\n",
			seq, (unsigned long)msg.seq,
			msg.check == churn_check(msg.seq) ? "ok" : "bad");
		goto out_disc;
	}
	ret = 0;
out_disc:
	rdma_disconnect(id);
out_mr:
	rdma_dereg_mr(mr);
out_ep:
	rdma_destroy_ep(id);
	return ret;
}

/* One connection as the client: connect, send, tear down. */
static int churn_connect_one(struct rdma_addrinfo *ai, unsigned long seq)
{
	struct churn_msg msg = { .seq = seq, .check = churn_check(seq) };
	struct ibv_qp_init_attr attr;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	int ret = -1;

	churn_qp_attr(&attr);
	if (rdma_create_ep(&id, ai, NULL, &attr))
		return churn_fail("rdma_create_ep", seq);
	mr = rdma_reg_msgs(id, &msg, sizeof(msg));
	if (!mr) {
		churn_fail("rdma_reg_msgs", seq);
		goto out_ep;
	}
	if (rdma_connect(id, NULL)) {
		churn_fail("rdma_connect", seq);
		goto out_mr;
	}
	if (rdma_post_send(id, NULL, &msg, sizeof(msg), mr, 0)) {
		churn_fail("rdma_post_send", seq);
		goto out_disc;
	}
	if (rdma_get_send_comp(id, &wc) != 1 || wc.status) {
		fprintf(stderr, "cycle %lu: send failed: %s\n", seq,
			ibv_wc_status_str(wc.status));
		goto out_disc;
	}
	ret = 0;
out_disc:
	rdma_disconnect(id);
out_mr:
	rdma_dereg_mr(mr);
out_ep:
	rdma_destroy_ep(id);
	return ret;
}

static int churn_server(struct rdma_addrinfo *ai, unsigned long n)
{
	struct rdma_cm_id *listen_id;
	unsigned long seq;

	if (rdma_create_ep(&listen_id, ai, NULL, NULL))
		return churn_fail("rdma_create_ep (listen)", 0);
	if (rdma_listen(listen_id, 4)) {
		churn_fail("rdma_listen", 0);
		rdma_destroy_ep(listen_id);
		return -1;
	}
	printf("listening\n");
	fflush(stdout);
	for (seq = 0; seq < n; seq++)
		if (churn_serve_one(listen_id, seq))
			break;
	rdma_destroy_ep(listen_id);
	printf("cycles %lu\n", seq);
	return seq == n ? 0 : -1;
}

static int churn_client(struct rdma_addrinfo *ai, unsigned long n)
{
	unsigned long seq;

	for (seq = 0; seq < n; seq++)
		if (churn_connect_one(ai, seq))
			break;
	printf("cycles %lu\n", seq);
	return seq == n ? 0 : -1;
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: sroce-cmchurn -s -b ADDR [-p PORT] [-n N]\n"
		"       sroce-cmchurn -c ADDR [-p PORT] [-n N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	const char *addr = NULL, *port = "7471";
	struct rdma_addrinfo *ai;
	bool server = false;
	unsigned long n = 500;
	char *end;
	int opt, ret;

	while ((opt = getopt(argc, argv, "sb:c:p:n:")) != -1) {
		switch (opt) {
		case 's':
			server = true;
			break;
		case 'b':
		case 'c':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			errno = 0;
			n = strtoul(optarg, &end, 0);
			if (errno || *end || !n)
				print_usage();
			break;
		default:
			print_usage();
		}
	}
	if (!addr || optind != argc)
		print_usage();
	if (server)
		hints.ai_flags = RAI_PASSIVE;
	ret = rdma_getaddrinfo(addr, port, &hints, &ai);
	if (ret) {
		fprintf(stderr, "rdma_getaddrinfo %s:%s: %s\n", addr, port,
			gai_strerror(ret));
		return 1;
	}
	ret = server ? churn_server(ai, n) : churn_client(ai, n);
	rdma_freeaddrinfo(ai);
	return ret ? 1 : 0;
}
