/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SROCE_KQUEUE_H
#define SROCE_KQUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>
#include <sroce/queue.h>

/**
 * struct sroce_queue - the kernel's handle on a ring (see sroce-abi.h)
 * @hdr: start of the ring memory, zeroed, vmap()ed for mmap() (VM_USERMAP)
 * @slots: number of entries, a power of two; the kernel's own copy
 * @stride: bytes per entry; the kernel's own copy
 * @bytes: size of the whole ring memory
 * @entry: the mmap entry, for a ring shared with a process, or NULL
 *
 * A ring shared with a process belongs to its mmap entry from then on: the
 * memory is freed when both the kernel object and every mapping are gone.
 */
struct sroce_queue {
	struct sroce_queue_hdr *hdr;
	u32 slots;
	u32 stride;
	size_t bytes;
	struct rdma_user_mmap_entry *entry;
};

int sroce_queue_init(struct sroce_queue *q, u32 want, u32 stride);
int sroce_queue_share(struct sroce_queue *q, struct ib_ucontext *ibuc,
		      struct sroce_queue_info *info);
void sroce_queue_destroy(struct sroce_queue *q);

int sroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *entry);

/* The entry in slot @idx (any free-running index). */
static inline void *sroce_queue_at(const struct sroce_queue *q, u32 idx)
{
	return (u8 *)q->hdr + SROCE_QUEUE_HDR_BYTES +
	       (size_t)sroce_queue_slot(idx, q->slots) * q->stride;
}

#endif /* SROCE_KQUEUE_H */
