/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Creation and teardown of our AF_XDP sockets (the funnels' and the world queues'; control
 * thread, not per packet). What the worker does with their rings per packet is in xskport.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <linux/if_xdp.h>

#include "xskport.h"

/* 'fill' frames of the pool's free stack into the fill ring of xp (the receive frames). */
static void
xskport_fill(struct xskport *xp, uint32_t fill)
{
	struct xskport *pl = xp->pool;
	uint32_t idx, i;

	if (fill > pl->nfree)
		fill = pl->nfree;
	if (fill > xp->ring_size)
		fill = xp->ring_size;
	if (!fill || xsk_ring_prod__reserve(&xp->fq, fill, &idx) != fill)
		return;
	for (i = 0; i < fill; i++)
		*xsk_ring_prod__fill_addr(&xp->fq, idx + i) = pl->free[--pl->nfree];
	xsk_ring_prod__submit(&xp->fq, fill);
}

static const char *
xskport_hint(int ret)
{
	if (ret == -EPERM)
		return " (needs CAP_NET_RAW and CAP_BPF)";
	if (ret == -EINVAL)
		return " ('ethtool -l' shows the queues it has)";
	return "";
}

/* The UMEM and its free stack, lowest frames on top (the first taken). */
static int
xskport_umem(struct xskport *xp, const char *ifname, char *err, size_t errlen)
{
	struct xsk_umem_config ucfg = {
		.fill_size = xp->nframes / 2,
		.comp_size = xp->nframes / 2,
		.frame_size = XSKP_FRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	size_t len = (size_t)xp->nframes * XSKP_FRAME_SIZE;
	uint32_t i;
	int ret;

	xp->area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (xp->area == MAP_FAILED) {
		ret = -errno;
		xp->area = NULL;
		snprintf(err, errlen, "cannot map UMEM for %s: %s", ifname, strerror(-ret));
		return ret;
	}
	ret = xsk_umem__create(&xp->umem, xp->area, len, &xp->fq, &xp->cq, &ucfg);
	if (ret) {
		snprintf(err, errlen, "cannot create UMEM of %zu KiB for %s: %s%s", len >> 10, ifname,
			 strerror(-ret),
			 ret == -ENOBUFS || ret == -ENOMEM || ret == -EPERM ?
			 " (the UMEM is pinned: LimitMEMLOCK / ulimit -l, or CAP_IPC_LOCK)" : "");
		return ret;
	}
	for (i = xp->nframes; i > 0; i--)
		xp->free[xp->nfree++] = (uint64_t)(i - 1) * XSKP_FRAME_SIZE;
	return 0;
}

static struct xskport *
xskport_create_sg(const char *ifname, int ifindex, uint32_t queue, uint32_t slot,
		  uint32_t nframes, uint32_t fill, bool zerocopy, bool sg, char *err,
		  size_t errlen)
{
	struct xsk_socket_config scfg = {
		.rx_size = nframes / 2,
		.tx_size = nframes / 2,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = XDP_USE_NEED_WAKEUP | (zerocopy ? XDP_ZEROCOPY : 0) |
			      (sg ? XDP_USE_SG : 0),
	};
	struct xskport *xp;
	int ret;

	/* The parser checked it; a caller that did not gets EINVAL, not a broken ring. */
	if (nframes < CVS_UMEM_FRAMES_MIN || nframes > CVS_UMEM_FRAMES_MAX ||
	    (nframes & (nframes - 1))) {
		snprintf(err, errlen, "UMEM of %u frames for %s: not a power of two %u..%u", nframes,
			 ifname, CVS_UMEM_FRAMES_MIN, CVS_UMEM_FRAMES_MAX);
		errno = EINVAL;
		return NULL;
	}
	xp = calloc(1, sizeof(*xp) + (size_t)nframes * sizeof(xp->free[0]));
	if (!xp)
		return NULL;
	xp->pool = xp;
	xp->slot = slot;
	xp->ifindex = ifindex;
	xp->nframes = nframes;
	xp->ring_size = nframes / 2;
	xp->sg = sg;
	ret = xskport_umem(xp, ifname, err, errlen);
	if (ret)
		goto out;
	ret = xsk_socket__create(&xp->xsk, ifname, queue, xp->umem, &xp->rx, &xp->tx, &scfg);
	if (ret) {
		snprintf(err, errlen, "cannot create AF_XDP socket on %s queue %u%s: %s%s", ifname,
			 queue, zerocopy ? " in zero-copy mode" : "", strerror(-ret),
			 xskport_hint(ret));
		goto out;
	}
	xp->fd = xsk_socket__fd(xp->xsk);
	xskport_fill(xp, fill);
	return xp;
out:
	xskport_destroy(xp);
	errno = -ret;
	return NULL;
}

/*
 * Bound for multi-buffer where the kernel (6.6) and, in zero-copy mode, the driver can: then
 * a socket carries jumbo frames. Elsewhere without, and one UMEM frame is a frame's limit.
 */
struct xskport *
xskport_create_opts(const char *ifname, int ifindex, uint32_t queue, uint32_t slot,
		    uint32_t nframes, uint32_t fill, bool zerocopy, char *err, size_t errlen)
{
	struct xskport *xp = xskport_create_sg(ifname, ifindex, queue, slot, nframes, fill,
					       zerocopy, true, err, errlen);

	if (xp || (errno != EINVAL && errno != EOPNOTSUPP))
		return xp;
	return xskport_create_sg(ifname, ifindex, queue, slot, nframes, fill, zerocopy, false,
				 err, errlen);
}

struct xskport *
xskport_create(const char *ifname, int ifindex, uint32_t queue, uint32_t slot, uint32_t nframes,
	       char *err, size_t errlen)
{
	return xskport_create_opts(ifname, ifindex, queue, slot, nframes, nframes / 2, false, err,
				   errlen);
}

struct xskport *
xskport_create_shared(struct xskport *owner, const char *ifname, int ifindex, uint32_t queue,
		      uint32_t slot, uint32_t fill, char *err, size_t errlen)
{
	struct xsk_socket_config scfg = {
		.rx_size = owner->ring_size,
		.tx_size = owner->ring_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	};
	struct xskport *xp = calloc(1, sizeof(*xp));
	int ret;

	if (!xp)
		return NULL;
	xp->pool = owner;
	/* A socket on a shared UMEM binds as its owner did, multi-buffer included. */
	xp->sg = owner->sg;
	xp->slot = slot;
	xp->ifindex = ifindex;
	xp->nframes = owner->nframes;
	xp->ring_size = owner->ring_size;
	xp->area = owner->area;
	ret = xsk_socket__create_shared(&xp->xsk, ifname, queue, owner->umem, &xp->rx, &xp->tx,
					&xp->fq, &xp->cq, &scfg);
	if (ret) {
		snprintf(err, errlen, "cannot create AF_XDP socket on %s queue %u sharing the UMEM "
			 "of socket %u: %s%s", ifname, queue, owner->slot, strerror(-ret),
			 xskport_hint(ret));
		free(xp);
		errno = -ret;
		return NULL;
	}
	xp->fd = xsk_socket__fd(xp->xsk);
	xskport_fill(xp, fill);
	return xp;
}

void
xskport_destroy(struct xskport *xp)
{
	if (!xp)
		return;
	if (xp->xsk)
		xsk_socket__delete(xp->xsk);
	if (xp->pool != xp) {
		/* The frames it held belong to the owner's UMEM, which goes with the owner. */
		free(xp);
		return;
	}
	if (xp->umem)
		xsk_umem__delete(xp->umem);
	if (xp->area)
		munmap(xp->area, (size_t)xp->nframes * XSKP_FRAME_SIZE);
	free(xp);
}
