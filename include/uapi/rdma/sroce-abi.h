/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * The ABI between the sroce kernel driver and its userspace provider,
 * libsroce. Both sides build from this one header.
 */
#ifndef SROCE_ABI_USER_H
#define SROCE_ABI_USER_H

#include <linux/types.h>

/*
 * sroce is out of tree, so it has no entry in enum rdma_driver_id. The
 * kernel only compares driver ids for equality (ib_device_get_by_netdev(),
 * the uverbs ioctl header, the netlink attribute libibverbs matches on), so
 * any value well clear of the in-tree range serves: ASCII "sroc".
 */
#define SROCE_DRIVER_ID 0x73726f63

/* Bumped on any incompatible change to the structures below. */
#define SROCE_UVERBS_ABI_VERSION 1

#endif /* SROCE_ABI_USER_H */
