// SPDX-License-Identifier: GPL-2.0
/*
 * Rings in memory the kernel and a process share by mmap(): allocation,
 * sharing through the RDMA core's mmap entries, and the mmap verb itself.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "limits.h"
#include "queue.h"

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *mem;
};

static struct sroce_mmap_entry *
to_sroce_mmap_entry(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct sroce_mmap_entry, rdma);
}

/*
 * vmalloc_user() without the charge: its pages go to no memory cgroup.
 * These are allocated charged, and mapped into one area that
 * remap_vmalloc_range() accepts (VM_USERMAP); vfree() frees them with
 * their array (VM_MAP_PUT_PAGES), as it would vmalloc_user()'s.
 */
static void *sroce_queue_alloc(size_t bytes)
{
	unsigned int i, n = bytes >> PAGE_SHIFT;
	struct page **pages;
	void *mem;

	pages = kvcalloc(n, sizeof(*pages), SROCE_GFP_OBJ);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(SROCE_GFP_OBJ | __GFP_ZERO);
		if (!pages[i])
			goto err;
	}
	mem = vmap(pages, n, VM_MAP | VM_USERMAP | VM_MAP_PUT_PAGES,
		   PAGE_KERNEL);
	if (mem)
		return mem;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

/**
 * sroce_queue_init() - allocate a zeroed ring of at least @want entries
 * @q: the queue to set up
 * @want: entries asked for, at least 1
 * @stride: bytes per entry, a multiple of 8
 *
 * Return: 0, or -EINVAL for a size no ring can have, -ENOMEM.
 */
int sroce_queue_init(struct sroce_queue *q, u32 want, u32 stride)
{
	u32 slots = sroce_queue_slots(want);

	BUILD_BUG_ON(sizeof(struct sroce_queue_hdr) != SROCE_QUEUE_HDR_BYTES);
	if (!slots || !stride || stride % 8)
		return -EINVAL;

	q->slots = slots;
	q->stride = stride;
	q->bytes = PAGE_ALIGN(SROCE_QUEUE_HDR_BYTES + (size_t)slots * stride);
	q->entry = NULL;
	q->hdr = sroce_queue_alloc(q->bytes);
	return q->hdr ? 0 : -ENOMEM;
}

/**
 * sroce_queue_share() - let the process owning @ibuc mmap() the ring
 * @q: an initialised queue
 * @ibuc: the process's context
 * @info: filled with what the process needs to map and use it
 *
 * On success the ring memory belongs to the mmap entry.
 */
int sroce_queue_share(struct sroce_queue *q, struct ib_ucontext *ibuc,
		      struct sroce_queue_info *info)
{
	struct sroce_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->mem = q->hdr;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma, q->bytes);
	if (err) {
		kfree(entry);
		return err;
	}
	q->entry = &entry->rdma;

	memset(info, 0, sizeof(*info));
	info->mmap.offset = rdma_user_mmap_get_offset(&entry->rdma);
	info->mmap.size = q->bytes;
	info->slots = q->slots;
	info->stride = q->stride;
	return 0;
}

/*
 * A shared ring outlives its object while a process still maps it: its
 * memory goes in sroce_mmap_free(), once the last reference is dropped.
 */
void sroce_queue_destroy(struct sroce_queue *q)
{
	if (q->entry)
		rdma_user_mmap_entry_remove(q->entry);
	else
		vfree(q->hdr);
	q->hdr = NULL;
	q->entry = NULL;
}

int sroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	int err;

	/* Looks up by offset and checks the length against the entry's. */
	rdma = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma)
		return -EINVAL;
	err = remap_vmalloc_range(vma, to_sroce_mmap_entry(rdma)->mem, 0);
	rdma_user_mmap_entry_put(rdma);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct sroce_mmap_entry *entry = to_sroce_mmap_entry(rdma);

	vfree(entry->mem);
	kfree(entry);
}
