/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Creation and teardown of our AF_XDP sockets (the funnels' and the world queues'; control
 * thread, not per packet).
 * What the worker does with their rings per packet is in xskport.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <linux/if_xdp.h>

#include "xskport.h"

/* The first half of the frames receives (the fill ring), the second half transmits. */
static void
xskport_fill_all(struct xskport *xp)
{
	uint32_t idx, i;

	if (xsk_ring_prod__reserve(&xp->fq, xp->ring_size, &idx) == xp->ring_size) {
		for (i = 0; i < xp->ring_size; i++)
			*xsk_ring_prod__fill_addr(&xp->fq, idx + i) = (uint64_t)i * XSKP_FRAME_SIZE;
		xsk_ring_prod__submit(&xp->fq, xp->ring_size);
	}
	for (i = xp->ring_size; i < xp->nframes; i++)
		xp->free[xp->nfree++] = (uint64_t)i * XSKP_FRAME_SIZE;
}

struct xskport *
xskport_create(const char *ifname, int ifindex, uint32_t queue, uint32_t slot, uint32_t nframes,
	       char *err, size_t errlen)
{
	struct xsk_umem_config ucfg = {
		.fill_size = nframes / 2,
		.comp_size = nframes / 2,
		.frame_size = XSKP_FRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = nframes / 2,
		.tx_size = nframes / 2,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	size_t len = (size_t)nframes * XSKP_FRAME_SIZE;
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
	xp->slot = slot;
	xp->ifindex = ifindex;
	xp->nframes = nframes;
	xp->ring_size = nframes / 2;
	xp->area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (xp->area == MAP_FAILED) {
		ret = -errno;
		xp->area = NULL;
		snprintf(err, errlen, "cannot map UMEM for %s: %s", ifname, strerror(-ret));
		goto out;
	}
	ret = xsk_umem__create(&xp->umem, xp->area, len, &xp->fq, &xp->cq, &ucfg);
	if (ret) {
		snprintf(err, errlen, "cannot create UMEM of %zu KiB for %s: %s%s", len >> 10, ifname,
			 strerror(-ret),
			 ret == -ENOBUFS || ret == -ENOMEM || ret == -EPERM ?
			 " (the UMEM is pinned: LimitMEMLOCK / ulimit -l, or CAP_IPC_LOCK)" : "");
		goto out;
	}
	ret = xsk_socket__create(&xp->xsk, ifname, queue, xp->umem, &xp->rx, &xp->tx, &scfg);
	if (ret) {
		snprintf(err, errlen, "cannot create AF_XDP socket on %s queue %u: %s%s", ifname,
			 queue, strerror(-ret), ret == -EPERM ? " (needs CAP_NET_RAW and CAP_BPF)" :
			 ret == -EINVAL ? " ('ethtool -l' shows the queues it has)" : "");
		goto out;
	}
	xp->fd = xsk_socket__fd(xp->xsk);
	xskport_fill_all(xp);
	return xp;
out:
	xskport_destroy(xp);
	errno = -ret;
	return NULL;
}

void
xskport_destroy(struct xskport *xp)
{
	if (!xp)
		return;
	if (xp->xsk)
		xsk_socket__delete(xp->xsk);
	if (xp->umem)
		xsk_umem__delete(xp->umem);
	if (xp->area)
		munmap(xp->area, (size_t)xp->nframes * XSKP_FRAME_SIZE);
	free(xp);
}
