/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Index math of the queues sroce shares between the kernel and libsroce:
 * send, receive, shared-receive and completion rings. One side produces,
 * the other consumes; each writes only its own index.
 *
 * Indices run free over all 32 bits and are reduced to a slot only when an
 * entry is touched, so "full" and "empty" need no spare slot and wrap-around
 * needs no special case: the number of entries in flight is always
 * prod - cons in u32 arithmetic. Sizes are powers of two.
 *
 * Memory ordering is each side's business (smp_load_acquire() and
 * smp_store_release() in the kernel, __atomic builtins in libsroce); these
 * functions only compute. Both sides build this one file.
 */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/types.h>

/* Bounds on a ring's number of slots. */
#define SROCE_QUEUE_MIN_SLOTS	1U
#define SROCE_QUEUE_MAX_SLOTS	0x100000U	/* 1 Mi */

/**
 * sroce_queue_slots() - the ring size that holds at least @want entries
 * @want: entries asked for
 *
 * Return: the smallest power of two >= @want, or 0 when @want is 0 or
 * more than SROCE_QUEUE_MAX_SLOTS.
 */
static inline __u32 sroce_queue_slots(__u32 want)
{
	__u32 n = SROCE_QUEUE_MIN_SLOTS;

	if (!want || want > SROCE_QUEUE_MAX_SLOTS)
		return 0;
	while (n < want)
		n <<= 1;
	return n;
}

/* Entries produced and not yet consumed. */
static inline __u32 sroce_queue_used(__u32 prod, __u32 cons)
{
	return prod - cons;
}

static inline int sroce_queue_empty(__u32 prod, __u32 cons)
{
	return prod == cons;
}

static inline int sroce_queue_full(__u32 prod, __u32 cons, __u32 slots)
{
	return sroce_queue_used(prod, cons) >= slots;
}

/* Room left for the producer. */
static inline __u32 sroce_queue_room(__u32 prod, __u32 cons, __u32 slots)
{
	return slots - sroce_queue_used(prod, cons);
}

/* The slot index @idx lands in. */
static inline __u32 sroce_queue_slot(__u32 idx, __u32 slots)
{
	return idx & (slots - 1);
}

/**
 * sroce_queue_sane() - can this pair of indices have come from a real ring?
 * @prod: producer index
 * @cons: consumer index
 * @slots: ring size
 *
 * The other side's index lives in memory the other side can write
 * anything to: the kernel checks every index it reads from userspace
 * against this before using it, and treats a failure as a broken queue.
 */
static inline int sroce_queue_sane(__u32 prod, __u32 cons, __u32 slots)
{
	return sroce_queue_used(prod, cons) <= slots;
}

#endif /* SROCE_QUEUE_H */
