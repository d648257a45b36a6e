/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Creation and teardown of sandbox AF_XDP sockets (control thread, not per packet). What the
 * worker does with their rings per packet is in dataplane/xskport.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <linux/if_xdp.h>

#include "xskport.h"

struct xskport *
xskport_create(const char *ifname, int ifindex, uint32_t slot, char *err, size_t errlen)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XSKP_RING_SIZE,
		.comp_size = XSKP_RING_SIZE,
		.frame_size = XSKP_FRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = XSKP_RING_SIZE,
		.tx_size = XSKP_RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	size_t len = (size_t)XSKP_NUM_FRAMES * XSKP_FRAME_SIZE;
	struct xskport *xp;
	uint64_t fill[XSKP_RING_SIZE];
	uint32_t i;
	int ret;

	xp = calloc(1, sizeof(*xp));
	if (!xp)
		return NULL;
	xp->slot = slot;
	xp->ifindex = ifindex;
	xp->area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (xp->area == MAP_FAILED) {
		ret = -errno;
		xp->area = NULL;
		snprintf(err, errlen, "cannot map UMEM for %s: %s", ifname, strerror(-ret));
		goto out;
	}
	ret = xsk_umem__create(&xp->umem, xp->area, len, &xp->fq, &xp->cq, &ucfg);
	if (ret) {
		snprintf(err, errlen, "cannot create UMEM for %s: %s", ifname, strerror(-ret));
		goto out;
	}
	ret = xsk_socket__create(&xp->xsk, ifname, 0, xp->umem, &xp->rx, &xp->tx, &scfg);
	if (ret) {
		snprintf(err, errlen, "cannot create AF_XDP socket on %s queue 0: %s%s", ifname,
			 strerror(-ret), ret == -EPERM ? " (needs CAP_NET_RAW and CAP_BPF)" : "");
		goto out;
	}
	xp->fd = xsk_socket__fd(xp->xsk);
	/* First half of the frames receive, second half transmit. */
	for (i = 0; i < XSKP_RING_SIZE; i++)
		fill[i] = (uint64_t)i * XSKP_FRAME_SIZE;
	xskport_refill(xp, fill, XSKP_RING_SIZE);
	for (i = XSKP_RING_SIZE; i < XSKP_NUM_FRAMES; i++)
		xp->free[xp->nfree++] = (uint64_t)i * XSKP_FRAME_SIZE;
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
		munmap(xp->area, (size_t)XSKP_NUM_FRAMES * XSKP_FRAME_SIZE);
	free(xp);
}
