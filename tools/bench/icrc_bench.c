// SPDX-License-Identifier: GPL-2.0
/*
 * icrc-bench: what the ICRC costs per packet size with the two CRC32
 * algorithms sroce chooses between (drivers/icrc.c), measured in user
 * space on the host, where the CPU runs at full speed (the guests' TCG
 * emulates PCLMULQDQ slowly and would show nothing):
 *
 *   table:  slice-by-8, what crc32_le is on x86 in Debian's 6.1 and 6.12
 *   pclmul: folding with PCLMULQDQ, four 16-byte lanes at a time, as
 *	     crc32-pclmul does; like it, blocks under 79 bytes go to the
 *	     table, and so do the bytes before a 16-byte boundary and the
 *	     last 16 (crc32-pclmul reduces those with two more multiplies)
 *
 * Built and run with the two commands in docs/BENCH.md. Prints, for each
 * size, the best of many runs in nanoseconds per call and per byte. Both
 * answers are checked against a bitwise CRC first. The kernel adds costs
 * this cannot see: the crypto API's indirect calls, and
 * kernel_fpu_begin(), which the first time after a user task was
 * interrupted saves its FPU registers (an XSAVE of up to a few KiB).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>

#define POLY_REFLECTED	0xedb88320u	/* CRC-32, bit 0 first */
#define POLY_NORMAL	0x104c11db7ull	/* the same, x^32 included */
#define PCLMUL_MIN	79		/* crc32-pclmul's PCLMUL_MIN_LEN + 15 */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Where the timed CRCs end up, so that the compiler keeps them. */
uint32_t bench_sink;

static uint32_t table[8][256];

static void table_init(void)
{
	uint32_t crc;
	int i, j;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (j = 0; j < 8; j++)
			crc = crc >> 1 ^ (crc & 1 ? POLY_REFLECTED : 0);
		table[0][i] = crc;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			table[j][i] = table[j - 1][i] >> 8 ^
				      table[0][table[j - 1][i] & 0xff];
}

/* crc32_le(): no inversion in or out, the caller's business. */
static uint32_t crc_table(uint32_t crc, const uint8_t *p, size_t len)
{
	uint32_t lo, hi;

	for (; len && ((uintptr_t)p & 3); len--)
		crc = crc >> 8 ^ table[0][(crc ^ *p++) & 0xff];
	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = table[7][lo & 0xff] ^ table[6][lo >> 8 & 0xff] ^
		      table[5][lo >> 16 & 0xff] ^ table[4][lo >> 24] ^
		      table[3][hi & 0xff] ^ table[2][hi >> 8 & 0xff] ^
		      table[1][hi >> 16 & 0xff] ^ table[0][hi >> 24];
	}
	while (len--)
		crc = crc >> 8 ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	int j;

	while (len--) {
		crc ^= *p++;
		for (j = 0; j < 8; j++)
			crc = crc >> 1 ^ (crc & 1 ? POLY_REFLECTED : 0);
	}
	return crc;
}

/*
 * x^n mod P, bit-reflected into 33 bits (degree d at bit 32 - d): times a
 * 64-bit reflected half of a lane, PCLMULQDQ then leaves the product
 * times x^32 where the folded lane wants it, so that folding a lane B
 * bits forward takes x^(B + 32) for its first half and x^(B - 32) for its
 * second.
 */
static uint64_t fold_constant(unsigned int n)
{
	uint64_t r = 1, out = 0;
	int i;

	while (n--) {
		r <<= 1;
		if (r & 1ull << 32)
			r ^= POLY_NORMAL;
	}
	for (i = 0; i < 32; i++)
		if (r & 1ull << i)
			out |= 1ull << (32 - i);
	return out;
}

static __m128i fold_by_4, fold_by_1;	/* 512 and 128 bits forward */

static void fold_init(void)
{
	fold_by_4 = _mm_set_epi64x(fold_constant(512 - 32),
				   fold_constant(512 + 32));
	fold_by_1 = _mm_set_epi64x(fold_constant(128 - 32),
				   fold_constant(128 + 32));
}

__attribute__((target("pclmul,sse2")))
static __m128i fold(__m128i lane, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(lane, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(lane, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

#define LOAD(p)	_mm_loadu_si128((const __m128i *)(p))

/* @len a multiple of 16, at least 64; @p 16-byte aligned. */
__attribute__((target("pclmul,sse2")))
static uint32_t crc_fold(uint32_t crc, const uint8_t *p, size_t len)
{
	__m128i x0, x1, x2, x3;
	uint8_t last[16];

	x0 = _mm_xor_si128(LOAD(p), _mm_cvtsi32_si128(crc));
	x1 = LOAD(p + 16);
	x2 = LOAD(p + 32);
	x3 = LOAD(p + 48);
	for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
		x0 = fold(x0, fold_by_4, LOAD(p));
		x1 = fold(x1, fold_by_4, LOAD(p + 16));
		x2 = fold(x2, fold_by_4, LOAD(p + 32));
		x3 = fold(x3, fold_by_4, LOAD(p + 48));
	}
	x1 = fold(x0, fold_by_1, x1);
	x2 = fold(x1, fold_by_1, x2);
	x3 = fold(x2, fold_by_1, x3);
	for (; len; p += 16, len -= 16)
		x3 = fold(x3, fold_by_1, LOAD(p));
	/* x3 is congruent to all the data so far: its CRC is theirs. */
	_mm_storeu_si128((__m128i *)last, x3);
	return crc_table(0, last, sizeof(last));
}

/* What crc32-pclmul's update does with a block. */
static uint32_t crc_pclmul(uint32_t crc, const uint8_t *p, size_t len)
{
	size_t pre, body;

	if (len < PCLMUL_MIN)
		return crc_table(crc, p, len);
	pre = -(uintptr_t)p & 15;
	crc = crc_table(crc, p, pre);
	p += pre;
	len -= pre;
	body = len & ~(size_t)15;
	crc = crc_fold(crc, p, body);
	return crc_table(crc, p + body, len - body);
}

typedef uint32_t (*crc_fn)(uint32_t crc, const uint8_t *p, size_t len);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Nanoseconds per call over @len bytes at @p: the best of many short runs
 * (~1 ms each), so that a run no other process preempted sets it.
 */
static double time_fn(crc_fn fn, const uint8_t *p, size_t len)
{
	unsigned int iters = 2000000 / (len + 32), run, i;
	uint32_t sink = 0;
	double best = 1e30, t;

	for (run = 0; run < 201; run++) {
		t = now_ns();
		for (i = 0; i < iters; i++)
			sink = fn(sink, p, len);
		t = (now_ns() - t) / iters;
		if (t < best)
			best = t;
	}
	bench_sink ^= sink;
	return best;
}

static bool check(const uint8_t *buf, size_t max)
{
	size_t len, off;
	uint32_t want;

	for (off = 0; off < 16; off += 5)
		for (len = 0; len + off <= max; len += len < 300 ? 1 : 97) {
			want = crc_bitwise(0xdebb20e3, buf + off, len);
			if (crc_table(0xdebb20e3, buf + off, len) != want ||
			    crc_pclmul(0xdebb20e3, buf + off, len) != want) {
				fprintf(stderr, "wrong CRC: %zu bytes at %zu\n",
					len, off);
				return false;
			}
		}
	return true;
}

int main(void)
{
	static const size_t sizes[] = {
		16, 40, 60, 64, 80, 128, 192, 256, 512, 1024, 2048, 4096, 9000,
	};
	static uint8_t buf[9000 + 64];
	double t_table, t_pclmul;
	size_t i;

	if (!__builtin_cpu_supports("pclmul")) {
		fprintf(stderr, "this CPU has no PCLMULQDQ\n");
		return 1;
	}
	table_init();
	fold_init();
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i * 131 + (i >> 8);
	if (!check(buf, 2100))
		return 1;
	printf("%6s %12s %12s %12s %12s %7s\n", "bytes", "table ns",
	       "pclmul ns", "table ns/B", "pclmul ns/B", "ratio");
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		/* Packet data is seldom 16-byte aligned: 2 bytes off. */
		t_table = time_fn(crc_table, buf + 2, sizes[i]);
		t_pclmul = time_fn(crc_pclmul, buf + 2, sizes[i]);
		printf("%6zu %12.1f %12.1f %12.3f %12.3f %7.2f\n", sizes[i],
		       t_table, t_pclmul, t_table / sizes[i],
		       t_pclmul / sizes[i], t_table / t_pclmul);
	}
	return 0;
}
