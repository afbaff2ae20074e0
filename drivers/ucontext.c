// SPDX-License-Identifier: GPL-2.0
/*
 * User contexts: what a process gets when libsroce opens the device.
 */
#include <rdma/ib_verbs.h>

#include "queue.h"
#include "ucontext.h"

static int sroce_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	/*
	 * ABI version 1 defines no driver-specific request or response; a
	 * provider sending one is from a different ABI.
	 */
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	/* The send path looks AHs up in softirq context too. */
	xa_init_flags(&to_suc(ibuc)->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	return 0;
}

static void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * ibv_import_device() asks, to check that the file it was given is a
 * context of the device (the core answers the generic attributes). ABI
 * version 1 has nothing of the driver's to add: libsroce keeps no state
 * from the kernel in its context, so an imported one needs none.
 */
static int sroce_query_ucontext(struct ib_ucontext *ibuc,
				struct uverbs_attr_bundle *attrs)
{
	return 0;
}

/*
 * The device is going away while a process still has it open. By now the
 * core has destroyed the process's objects through their own destroy
 * verbs, so nothing is left to detach; what providing the verb changes is
 * that unregistration (rdma link delete, the netdev vanishing, rmmod) no
 * longer waits for the process to close the device. Rings it still maps
 * stay valid memory, their pages held by the mapping, read by no one.
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

const struct ib_device_ops sroce_ucontext_ops = {
	.alloc_ucontext = sroce_alloc_ucontext,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.query_ucontext = sroce_query_ucontext,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
};
