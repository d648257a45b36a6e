/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal to xdp/: the end of the links that deletions took off their slot (xdpend.c), and
 * the one step of it that xdpsbx.c owns.
 */
#ifndef CVS_XDPEND_H
#define CVS_XDPEND_H

#include <stdint.h>

#include "xdpctl.h"

/* Detached now (not when a pin's inode is freed after RCU), unpinned, closed (xdpsbx.c). */
void xdpsbx_link_end(const struct xdp_sbx *x, int ifindex, int fd);

int xdpend_init(struct xdp_sbx *x, uint32_t n);
/* The link fd of ifindex, to be ended by the ender thread; ended here when it cannot be. */
void xdpend_push(struct xdp_sbx *x, int ifindex, int fd);
/* End the pushed links of ifindex (0: all) now, and wait for one the ender is ending. */
void xdpend_now(struct xdp_sbx *x, int ifindex);
/* Stop the ender and end what is left. */
void xdpend_fini(struct xdp_sbx *x);

#endif
