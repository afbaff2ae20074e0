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

/*
 * Shared queues
 *
 * Every queue a process shares with the kernel (a QP's send and receive
 * queue, an SRQ, a CQ) is one mmap()ed region: a struct sroce_queue_hdr,
 * then `slots` entries of `stride` bytes each, starting at byte
 * SROCE_QUEUE_HDR_BYTES. The create verb's response says where to map it
 * and how it is shaped. Index math: include/sroce/queue.h.
 *
 * Each side writes only its own index. The kernel never trusts what the
 * process can write: it keeps the shape (slots, stride) in kernel memory,
 * checks every index it reads with sroce_queue_sane(), and copies an entry
 * out of the ring before validating and using it.
 */
#define SROCE_QUEUE_HDR_BYTES	128

/**
 * struct sroce_queue_hdr - the start of a shared queue
 * @prod: producer index, free-running; written by the producer only
 * @cons: consumer index, free-running; written by the consumer only
 * @flags: SROCE_QUEUE_F_* (who writes them is said with each)
 *
 * @prod and @cons sit in separate cache lines so that producer and
 * consumer do not bounce one line between CPUs.
 */
struct sroce_queue_hdr {
	__u32 prod;
	__u32 reserved0[15];
	__u32 cons;
	__u32 flags;
	__u32 reserved1[14];
};

/*
 * CQ only, written by the process, cleared by the kernel: the next
 * completion (or the next solicited one) raises a completion event.
 * Arming is a store to shared memory, not a system call.
 */
#define SROCE_QUEUE_F_ARM_NEXT		(1U << 0)
#define SROCE_QUEUE_F_ARM_SOLICITED	(1U << 1)

/*
 * Send queue only, written by the kernel: the kernel has stopped reading
 * the queue because it found it empty, and reads it again only when rung
 * (an empty IB_USER_VERBS_CMD_POST_SEND). The kernel sets the flag, then
 * looks at prod once more; the provider publishes prod, then looks at the
 * flag; each with a full barrier in between, so one of them always sees
 * the other's store and no posted entry is left unread. While the flag is
 * clear, posting needs no system call.
 */
#define SROCE_QUEUE_F_DOORBELL		(1U << 2)

/* Where to mmap() a queue: the offset to pass and the length to map. */
struct sroce_mmap_info {
	__aligned_u64 offset;
	__u32 size;
	__u32 reserved;
};

/* Shape of a queue, as the kernel allocated it. */
struct sroce_queue_info {
	struct sroce_mmap_info mmap;
	__u32 slots;
	__u32 stride;
};

/* A scatter/gather element of a work request. */
struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * A send queue entry. @opcode is an enum ib_uverbs_wr_opcode, @send_flags
 * IB_SEND_* as uverbs defines them. With IB_SEND_INLINE the entry carries
 * @inline_len bytes of payload where the SGEs would be; otherwise
 * @num_sge SGEs. An atomic write (IB_UVERBS_WR_ATOMIC_WRITE, 15) has
 * neither: @wr.atomic names the target (remote_addr, rkey) and carries
 * in compare_add the 8 bytes to store, as they are to be in memory.
 */
struct sroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	union {
		__u32 num_sge;
		__u32 inline_len;
	};
	union {
		__be32 imm_data;
		__u32 invalidate_rkey;
	} ex;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah_num;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		/*
		 * IB_UVERBS_WR_BIND_MW: bind the window whose key index
		 * @mw_rkey has to [@addr, @addr + @length) of the MR
		 * @mr_lkey names, with the IB_ACCESS_* bits @access; the
		 * window's key becomes @new_rkey (same index).
		 */
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 mw_rkey;
			__u32 new_rkey;
			__u32 access;
		} bind;
	} wr;
	/*
	 * An XRC initiator's: the remote XRC SRQ the request is for (ABI 1
	 * had 8 reserved bytes here, which libsroce left zero).
	 */
	__u32 xrc_srqn;
	__u32 reserved;	/* the SGEs start a new cache line */
	union {
		__DECLARE_FLEX_ARRAY(struct sroce_sge, sge);
		__DECLARE_FLEX_ARRAY(__u8, inline_data);
	};
};

/* A receive queue (or SRQ) entry. */
struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	__DECLARE_FLEX_ARRAY(struct sroce_sge, sge);
};

/*
 * A completion queue entry: struct ib_uverbs_wc's fields, plus what a
 * RoCE UD receive reports (the sender's MAC and the network header type),
 * in one 64-byte slot. As in struct ib_uverbs_wc, @status and @opcode take
 * the kernel's enum ib_wc_status and ib_wc_opcode values (libibverbs'
 * enums give them the same numbers) and @wc_flags the SROCE_WC_* bits
 * below, which are the kernel's IB_WC_* flags: libibverbs numbers some of
 * those differently, so libsroce translates them. @timestamp is the
 * kernel's CLOCK_REALTIME in nanoseconds when it wrote the entry, on a CQ
 * created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION; 0 on any other.
 */
struct sroce_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	union {
		__be32 imm_data;
		__u32 invalidate_rkey;
	} ex;
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u8 sl;
	__u8 network_hdr_type;
	__u8 smac[6];
	__u8 port_num;
	__u8 reserved0;
	__u16 vlan_id;
	__u16 reserved1;
	__aligned_u64 timestamp;
};

#define SROCE_WC_GRH			(1U << 0)
#define SROCE_WC_WITH_IMM		(1U << 1)
#define SROCE_WC_WITH_INVALIDATE	(1U << 2)
#define SROCE_WC_IP_CSUM_OK		(1U << 3)
#define SROCE_WC_WITH_SMAC		(1U << 4)
#define SROCE_WC_WITH_VLAN		(1U << 5)
#define SROCE_WC_WITH_NETWORK_HDR_TYPE	(1U << 6)

/* @network_hdr_type: the kernel's enum rdma_network_type values. */
#define SROCE_NETWORK_IPV4		2
#define SROCE_NETWORK_IPV6		3

/* Responses of the create verbs: where each queue is and its shape. */
struct sroce_create_cq_resp {
	struct sroce_queue_info cq;
};

struct sroce_resize_cq_resp {
	struct sroce_queue_info cq;
};

struct sroce_create_qp_resp {
	struct sroce_queue_info sq;
	struct sroce_queue_info rq;	/* all zero when the QP uses an SRQ */
};

struct sroce_create_srq_resp {
	struct sroce_queue_info srq;
	__u32 srq_num;
	__u32 reserved;
};

/* A user AH is named in send WQEs by the number the kernel gives it. */
struct sroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

#endif /* SROCE_ABI_USER_H */
