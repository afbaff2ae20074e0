// SPDX-License-Identifier: GPL-2.0
/*
 * User contexts: what a process gets when libsroce opens the device.
 */
#include <rdma/ib_verbs.h>

#include "ucontext.h"

int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	/*
	 * ABI version 1 defines no driver-specific request or response; a
	 * provider sending one is from a different ABI.
	 */
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}
