/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_FAULT_H
#define SROCE_FAULT_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct sroce_mr;
struct sroce_fault;

typedef void (*sroce_fault_done_fn)(struct sroce_fault *f);

/**
 * enum sroce_fault_state - where a QP half's page fault is
 * @SROCE_FAULT_IDLE: none asked for
 * @SROCE_FAULT_PENDING: queued or running; the half waits for it
 * @SROCE_FAULT_FAILED: the last one failed: the process has no memory
 *			there (or none it may write), which the access
 *			that asked for it is told
 */
enum sroce_fault_state {
	SROCE_FAULT_IDLE,
	SROCE_FAULT_PENDING,
	SROCE_FAULT_FAILED,
};

/**
 * struct sroce_fault - one half of a QP's page fault of an ODP MR
 * @work: brings the range in, in process context
 * @lock: guards everything below
 * @state: see enum sroce_fault_state
 * @mr: while pending, the MR, referenced
 * @key: the key the range was asked for through (a failure is told to
 *	 accesses by this key only)
 * @iova: first byte of the range
 * @length: its bytes
 * @forgotten: the QP half was reset while the fault ran: its failure
 *	       answers nothing (the access that asked is gone)
 * @done: tells the QP half the fault is over (success or not)
 *
 * One at a time per half: a QP waits for the range its next packet needs,
 * so a second fault would only be for a packet behind it. An access that
 * finds one pending waits too (RNR NAK, a packet held back).
 */
struct sroce_fault {
	struct work_struct work;
	spinlock_t lock;	/* the state and the range */
	enum sroce_fault_state state;
	struct sroce_mr *mr;
	u32 key;
	u64 iova;
	u32 length;
	bool forgotten;
	sroce_fault_done_fn done;
};

void sroce_fault_init(struct sroce_fault *f, sroce_fault_done_fn done);
void sroce_fault_stop(struct sroce_fault *f);
void sroce_fault_forget(struct sroce_fault *f);
int sroce_fault_ask(struct sroce_fault *f, struct sroce_mr *mr, u32 key,
		    u64 iova, u32 length);

#endif /* SROCE_FAULT_H */
