// SPDX-License-Identifier: GPL-2.0
/*
 * Payload: moving message bytes between registered memory and packets.
 * On transmit the pinned pages of an MR are attached to the packet as
 * fragments, so the bytes go from the application's memory to the netdev
 * without a copy; on receive they are copied once, from the packet into
 * the pages the message is for.
 */
#include <linux/highmem.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "device.h"
#include "fault.h"
#include "mr.h"
#include "net.h"
#include "payload.h"

/*
 * Does a payload of @len bytes to @dmac go out as page fragments? Only a
 * netdev that does scatter-gather takes them (the core would linearise,
 * i.e. copy, for any other), but a frame to our own MAC never reaches a
 * driver: the receive path reads the fragments where they are.
 */
bool sroce_payload_zcopy(const struct sroce_dev *sdev, const u8 *dmac,
			 u32 len)
{
	const struct net_device *ndev = sdev->ndev;

	return len >= SROCE_ZCOPY_MIN &&
	       ((ndev->features & NETIF_F_SG) ||
		ether_addr_equal(dmac, ndev->dev_addr));
}

/**
 * sroce_payload_mr() - add bytes of one MR to a packet
 * @skb: the packet being built
 * @dst: where to copy the bytes, or NULL to attach the MR's pages instead
 * @mr: the MR, checked for the range by the caller
 * @va: first byte
 * @len: bytes
 *
 * Attached pages hold a page reference each until the packet is freed, so
 * the memory stays valid even if the MR is deregistered meanwhile.
 *
 * Return: 0, or -E2BIG when the packet has no fragment slot left (nothing
 * is attached then that was not before: the caller rebuilds with a copy).
 */
int sroce_payload_mr(struct sk_buff *skb, u8 *dst, const struct sroce_mr *mr,
		     u64 va, u32 len)
{
	unsigned int off, n;
	struct page *page;

	/*
	 * Only a process's pinned pages are attached: a kernel consumer's
	 * may be slab memory, which must not be referenced from an skb.
	 */
	if (dst || mr->type != SROCE_MR_USER) {
		if (!dst)
			return -E2BIG;
		sroce_mr_copy_from(mr, va, dst, len);
		return 0;
	}
	while (len) {
		page = sroce_mr_page(mr, va, &off);
		n = min_t(u32, len, PAGE_SIZE - off);
		if (!sroce_net_add_frag(skb, page, off, n))
			return -E2BIG;
		va += n;
		len -= n;
	}
	return 0;
}

/* Finds the SGE message offset @off falls in, and where in it. */
static u32 sroce_sge_seek(const struct sroce_sge *sge, u32 nsge, u32 *off)
{
	u32 i;

	for (i = 0; i < nsge && *off >= sge[i].length; i++)
		*off -= sge[i].length;
	return i;
}

/* What to do with one piece of an SGE list, an MR's range checked. */
typedef int (*sroce_piece_fn)(const struct sroce_mr *mr, u64 iova, u32 len,
			      void *ctx);

/**
 * sroce_sge_walk() - visit the MR ranges behind part of an SGE list
 * @sdev: the device
 * @pd: the QP's PD, which every lkey must belong to
 * @fault: the QP half's page fault, asked for when an ODP MR's range is
 *	   not all faulted in
 * @sge: the SGEs
 * @nsge: how many
 * @off: message offset of the first byte
 * @len: bytes
 * @access: the rights the pieces need (IB_ACCESS_LOCAL_WRITE or 0)
 * @fn: called for each piece, with its MR referenced
 * @ctx: for @fn
 *
 * Each SGE's MR is looked up for every call: an MR deregistered in the
 * middle of a message fails the rest of it instead of being used. Each
 * piece is done between sroce_mr_enter() and sroce_mr_leave(), which an
 * invalidation of the MR waits for.
 *
 * Return: 0; -EACCES or -ERANGE for an lkey that does not cover its SGE
 * with @access; -EMSGSIZE when the SGEs end before @len bytes; -EAGAIN
 * when a page is being faulted in (try again when @fault is done), -EFAULT
 * when it could not be; or what @fn returned.
 */
static int sroce_sge_walk(struct sroce_dev *sdev, const struct ib_pd *pd,
			  struct sroce_fault *fault,
			  const struct sroce_sge *sge, u32 nsge, u32 off,
			  u32 len, u32 access, sroce_piece_fn fn, void *ctx)
{
	struct sroce_mr *mr;
	u32 i, n;
	int err;

	for (i = sroce_sge_seek(sge, nsge, &off); len && i < nsge;
	     i++, off = 0) {
		n = min(len, sge[i].length - off);
		if (!n)
			continue;
		mr = sroce_mr_get(sdev, sge[i].lkey);
		if (!mr)
			return -EACCES;
		sroce_mr_enter(mr);
		err = sroce_mr_check(mr, pd, sge[i].addr + off, n, access);
		if (!err)
			err = sroce_mr_present(mr, sge[i].addr + off, n);
		if (err == -EAGAIN)
			err = sroce_fault_ask(fault, mr, sge[i].lkey,
					      sge[i].addr + off, n);
		if (!err)
			err = fn(mr, sge[i].addr + off, n, ctx);
		sroce_mr_leave(mr);
		sroce_mr_put(mr);
		if (err)
			return err;
		len -= n;
	}
	return len ? -EMSGSIZE : 0;
}

struct sroce_gather {
	struct sk_buff *skb;
	u8 *dst;
};

static int sroce_gather_piece(const struct sroce_mr *mr, u64 iova, u32 len,
			      void *ctx)
{
	struct sroce_gather *g = ctx;
	int err;

	err = sroce_payload_mr(g->skb, g->dst, mr, iova, len);
	if (g->dst)
		g->dst += len;
	return err;
}

/**
 * sroce_payload_gather() - add bytes of a send WQE's SGEs to a packet
 * @sdev: the device
 * @pd: the QP's PD
 * @fault: the requester's page fault
 * @skb: the packet being built
 * @dst: where to copy the bytes, or NULL to attach pages (see above)
 * @sge: the SGEs
 * @nsge: how many
 * @off: message offset of the first byte
 * @len: bytes
 *
 * Return: as sroce_sge_walk(); -E2BIG as for sroce_payload_mr().
 */
int sroce_payload_gather(struct sroce_dev *sdev, const struct ib_pd *pd,
			 struct sroce_fault *fault, struct sk_buff *skb, u8 *dst,
			 const struct sroce_sge *sge, u32 nsge, u32 off,
			 u32 len)
{
	struct sroce_gather g = { .skb = skb, .dst = dst };

	return sroce_sge_walk(sdev, pd, fault, sge, nsge, off, len, 0,
			      sroce_gather_piece, &g);
}

struct sroce_scatter {
	const struct sk_buff *skb;
	int off;
};

static int sroce_scatter_piece(const struct sroce_mr *mr, u64 iova, u32 len,
			       void *ctx)
{
	struct sroce_scatter *sc = ctx;
	int err;

	err = sroce_mr_copy_from_skb(mr, iova, sc->skb, sc->off, len);
	sc->off += len;
	return err;
}

/**
 * sroce_payload_scatter() - copy bytes of a packet into a WQE's SGEs
 * @sdev: the device
 * @pd: the QP's PD
 * @fault: the page fault of the QP half that receives
 * @sge: the SGEs of a receive WQE or of a read or atomic WQE
 * @nsge: how many
 * @off: message offset of the first byte
 * @skb: the packet
 * @skb_off: where the bytes are in @skb
 * @len: bytes
 *
 * Return: as sroce_sge_walk(), the SGEs needing local write; -EFAULT for
 * a short packet.
 */
int sroce_payload_scatter(struct sroce_dev *sdev, const struct ib_pd *pd,
			  struct sroce_fault *fault,
			  const struct sroce_sge *sge, u32 nsge, u32 off,
			  const struct sk_buff *skb, int skb_off, u32 len)
{
	struct sroce_scatter sc = { .skb = skb, .off = skb_off };

	return sroce_sge_walk(sdev, pd, fault, sge, nsge, off, len,
			      IB_ACCESS_LOCAL_WRITE, sroce_scatter_piece, &sc);
}

static int sroce_buf_piece(const struct sroce_mr *mr, u64 iova, u32 len,
			   void *ctx)
{
	const u8 **buf = ctx;

	sroce_mr_copy_to(mr, iova, *buf, len);
	*buf += len;
	return 0;
}

/**
 * sroce_payload_scatter_buf() - copy bytes into a WQE's SGEs
 * @sdev: the device
 * @pd: the QP's PD
 * @fault: as for sroce_payload_scatter()
 * @sge: the SGEs
 * @nsge: how many
 * @buf: the bytes, for the start of the SGEs
 * @len: how many
 *
 * Return: as sroce_payload_scatter().
 */
int sroce_payload_scatter_buf(struct sroce_dev *sdev, const struct ib_pd *pd,
			      struct sroce_fault *fault,
			      const struct sroce_sge *sge, u32 nsge,
			      const void *buf, u32 len)
{
	const u8 *p = buf;

	return sroce_sge_walk(sdev, pd, fault, sge, nsge, 0, len,
			      IB_ACCESS_LOCAL_WRITE, sroce_buf_piece, &p);
}

/**
 * sroce_sge_check() - do a WQE's lkeys cover its SGEs?
 * @sdev: the device
 * @pd: the QP's PD
 * @sge: the SGEs
 * @nsge: how many
 * @access: IB_ACCESS_LOCAL_WRITE when the SGEs are written, else 0
 *
 * Checked when the WQE is taken, so that a bad lkey fails the WQE before
 * any of its packets leaves.
 *
 * Return: 0, -EACCES or -ERANGE.
 */
int sroce_sge_check(struct sroce_dev *sdev, const struct ib_pd *pd,
		    const struct sroce_sge *sge, u32 nsge, u32 access)
{
	struct sroce_mr *mr;
	int err;
	u32 i;

	for (i = 0; i < nsge; i++) {
		if (!sge[i].length)
			continue;
		mr = sroce_mr_get(sdev, sge[i].lkey);
		if (!mr)
			return -EACCES;
		err = sroce_mr_check(mr, pd, sge[i].addr, sge[i].length,
				     access);
		sroce_mr_put(mr);
		if (err)
			return err;
	}
	return 0;
}
