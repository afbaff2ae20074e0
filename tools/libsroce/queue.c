// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce: mapping the rings the kernel shares with this process.
 */
#include <errno.h>
#include <sys/mman.h>

#include "sroce.h"

/* Maps the ring @info describes; 0 or an errno value. */
int sroce_uqueue_map(struct sroce_uqueue *q, struct ibv_context *ibctx,
		     const struct sroce_queue_info *info)
{
	void *p;

	/* A power-of-two slot count is what the index math relies on. */
	if (!info->slots || (info->slots & (info->slots - 1)) ||
	    info->mmap.size < SROCE_QUEUE_HDR_BYTES +
			      (uint64_t)info->slots * info->stride)
		return EPROTO;

	p = mmap(NULL, info->mmap.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ibctx->cmd_fd, info->mmap.offset);
	if (p == MAP_FAILED)
		return errno;

	q->hdr = p;
	q->map_bytes = info->mmap.size;
	q->slots = info->slots;
	q->stride = info->stride;
	return 0;
}

void sroce_uqueue_unmap(struct sroce_uqueue *q)
{
	if (q->hdr)
		munmap(q->hdr, q->map_bytes);
	q->hdr = NULL;
}
