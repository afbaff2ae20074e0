// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-mpi: an MPI job for two ranks (one per guest) that measures and
 * checks what an MPI user would run over the device
 * (tools/testing/guest/test_mpi.py runs it under mpirun with the UCX PML):
 *
 *   - ping-pong latency: -l iterations of -s bytes (default 8);
 *   - bandwidth: -n messages of -b bytes from rank 0 to rank 1, a window
 *     of WINDOW at a time, then a 1-byte ack;
 *   - an allreduce (MPI_SUM over int64) and an alltoall of -c elements
 *     per rank and peer, whose results every rank checks.
 *
 * Every payload carries a pattern that the receiver checks, so a
 * transport that delivers the wrong bytes fails the job, not only a slow
 * one. Rank 0 prints one line per measurement and every rank prints the
 * bytes it sent to and received from other ranks at least (the payload
 * the device's counters must account for), as "key=value" words:
 *
 *   pingpong size=8 iters=100 lat_us=...
 *   bandwidth size=65536 iters=20 MBps=...
 *   allreduce count=4096 ok
 *   alltoall count=4096 ok
 *   payload rank=0 host=... sent_min=... recv_min=...
 *
 * Exit status 0 only if every check passed on every rank.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW 8
#define WARMUP 2
#define TAG_PING 1
#define TAG_BW 2
#define TAG_ACK 3

static int rank, nranks;

static void usage(const char *argv0)
{
	if (rank == 0)
		fprintf(stderr,
			"%s: %s [-s lat_size] [-l lat_iters] [-b bw_size] [-n bw_iters] [-c count]\n",
			__func__, argv0);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The byte at offset i of message iter: differs between messages and
 * offsets, so a stale or shifted buffer does not pass.
 */
static unsigned char pat(long iter, size_t i)
{
	return (unsigned char)(iter * 131 + i * 7 + (i >> 12));
}

static void fill(unsigned char *buf, size_t len, long iter)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pat(iter, i);
}

/* Returns the first bad offset, or -1. */
static long check(const unsigned char *buf, size_t len, long iter)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pat(iter, i))
			return (long)i;
	return -1;
}

static int bad(const char *what, long iter, long off)
{
	fprintf(stderr, "rank %d: %s: message %ld wrong at byte %ld\n", rank, what, iter, off);
	return 1;
}

/* Ping-pong between ranks 0 and 1; rank 0 prints half the mean round
 * trip. Bytes each of them sends: (WARMUP + iters) * size.
 */
static int pingpong(size_t size, long iters)
{
	unsigned char *sbuf = malloc(size ? size : 1), *rbuf = malloc(size ? size : 1);
	int peer = 1 - rank, errs = 0;
	double t0 = 0;

	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (long i = -WARMUP; i < iters; i++) {
		long off;

		if (i == 0)
			t0 = MPI_Wtime();
		if (rank == 0) {
			fill(sbuf, size, i);
			MPI_Send(sbuf, size, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
			MPI_Recv(rbuf, size, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			off = check(rbuf, size, i + 1);
		} else {
			MPI_Recv(rbuf, size, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			off = check(rbuf, size, i);
			fill(sbuf, size, i + 1);
			MPI_Send(sbuf, size, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
		}
		if (off >= 0)
			errs += bad(__func__, i, off);
	}
	if (rank == 0)
		printf("%s size=%zu iters=%ld lat_us=%.2f\n", __func__, size, iters,
		       (MPI_Wtime() - t0) * 1e6 / (2.0 * iters));
	free(sbuf);
	free(rbuf);
	return errs;
}

/* Messages first..first+count-1 from rank 0 to rank 1, WINDOW in flight,
 * each with its own pattern, which rank 1 checks; then rank 1 acks.
 */
static int stream(unsigned char *buf, size_t size, long first, long count)
{
	MPI_Request req[WINDOW];
	int errs = 0;
	char ack = 0;

	for (long i = 0; i < count; i += WINDOW) {
		long n = count - i < WINDOW ? count - i : WINDOW;

		for (long w = 0; w < n; w++) {
			unsigned char *p = buf + w * size;

			if (rank == 0) {
				fill(p, size, first + i + w);
				MPI_Isend(p, size, MPI_BYTE, 1, TAG_BW, MPI_COMM_WORLD, &req[w]);
			} else {
				MPI_Irecv(p, size, MPI_BYTE, 0, TAG_BW, MPI_COMM_WORLD, &req[w]);
			}
		}
		MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
		for (long w = 0; rank == 1 && w < n; w++) {
			long off = check(buf + w * size, size, first + i + w);

			if (off >= 0)
				errs += bad(__func__, first + i + w, off);
		}
	}
	if (rank == 0)
		MPI_Recv(&ack, 1, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	else
		MPI_Send(&ack, 1, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD);
	return errs;
}

/* Bandwidth from rank 0 to rank 1 after WARMUP messages: rank 0 prints
 * MB/s (10^6 B/s) from the first message to the ack of the last.
 */
static int bandwidth(size_t size, long iters)
{
	unsigned char *buf = malloc(size * WINDOW);
	int errs;
	double t0;

	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	errs = stream(buf, size, -WARMUP, WARMUP);
	t0 = MPI_Wtime();
	errs += stream(buf, size, 0, iters);
	if (rank == 0)
		printf("%s size=%zu iters=%ld MBps=%.2f\n", __func__, size, iters,
		       (double)size * iters / (MPI_Wtime() - t0) / 1e6);
	free(buf);
	return errs;
}

/* Each rank's element k: distinct per rank and element, and large enough
 * that a sum of the wrong elements does not come out right by chance.
 */
static int64_t contrib(int r, long k)
{
	return (int64_t)(r + 1) * 1000003 + k * 7919;
}

static int allreduce(long count)
{
	int64_t *in = malloc(count * sizeof(*in)), *out = malloc(count * sizeof(*out));
	int errs = 0;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (long k = 0; k < count; k++) {
		in[k] = contrib(rank, k);
		out[k] = -1;
	}
	MPI_Allreduce(in, out, count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (long k = 0; k < count && errs < 5; k++) {
		int64_t want = 0;

		for (int r = 0; r < nranks; r++)
			want += contrib(r, k);
		if (out[k] != want) {
			fprintf(stderr, "rank %d: %s: element %ld is %lld, not %lld\n",
				rank, __func__, k, (long long)out[k], (long long)want);
			errs++;
		}
	}
	free(in);
	free(out);
	return errs;
}

/* What rank src sends rank dst as its element k. */
static int64_t a2a(int src, int dst, long k)
{
	return ((int64_t)src << 48) | ((int64_t)dst << 32) | k;
}

static int alltoall(long count)
{
	size_t n = (size_t)count * nranks;
	int64_t *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));
	int errs = 0;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int d = 0; d < nranks; d++)
		for (long k = 0; k < count; k++) {
			in[d * count + k] = a2a(rank, d, k);
			out[d * count + k] = -1;
		}
	MPI_Alltoall(in, count, MPI_INT64_T, out, count, MPI_INT64_T, MPI_COMM_WORLD);
	for (int s = 0; s < nranks; s++)
		for (long k = 0; k < count && errs < 5; k++)
			if (out[s * count + k] != a2a(s, rank, k)) {
				fprintf(stderr,
					"rank %d: %s: element %ld from rank %d is %#llx, not %#llx\n",
					rank, __func__, k, s, (long long)out[s * count + k],
					(long long)a2a(s, rank, k));
				errs++;
			}
	free(in);
	free(out);
	return errs;
}

static long num(const char *s, const char *argv0)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*end || v < 0)
		usage(argv0);
	return v;
}

int main(int argc, char **argv)
{
	long lat_size = 8, lat_iters = 100, bw_size = 65536, bw_iters = 20, count = 4096;
	char host[MPI_MAX_PROCESSOR_NAME];
	int opt, len, errs = 0, all;
	unsigned long long sent, recv;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Get_processor_name(host, &len);
	while ((opt = getopt(argc, argv, "s:l:b:n:c:")) != -1) {
		switch (opt) {
		case 's':
			lat_size = num(optarg, argv[0]);
			break;
		case 'l':
			lat_iters = num(optarg, argv[0]);
			break;
		case 'b':
			bw_size = num(optarg, argv[0]);
			break;
		case 'n':
			bw_iters = num(optarg, argv[0]);
			break;
		case 'c':
			count = num(optarg, argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "%s: wants 2 ranks, one per node, not %d\n",
				argv[0], nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (lat_iters < 1 || bw_iters < 1 || bw_size < 1 || count < 1)
		usage(argv[0]);

	errs += pingpong(lat_size, lat_iters);
	errs += bandwidth(bw_size, bw_iters);
	errs += allreduce(count);
	errs += alltoall(count);

	/* Remote payload, at least: the ping-pong both ways, the stream one
	 * way, the alltoall's block for the peer, and for the allreduce the
	 * whole vector's worth (the result depends on all of the peer's
	 * elements, whatever the algorithm).
	 */
	sent = (unsigned long long)(WARMUP + lat_iters) * lat_size + count * 8ULL * 2;
	recv = sent;
	if (rank == 0)
		sent += (unsigned long long)(WARMUP + bw_iters) * bw_size;
	else
		recv += (unsigned long long)(WARMUP + bw_iters) * bw_size;

	MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && !all) {
		printf("allreduce count=%ld ok\n", count);
		printf("alltoall count=%ld ok\n", count);
	}
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("payload rank=%d host=%s sent_min=%llu recv_min=%llu\n",
	       rank, host, sent, recv);
	fflush(stdout);
	MPI_Finalize();
	return all ? 1 : 0;
}
