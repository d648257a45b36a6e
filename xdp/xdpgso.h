/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal to xdp/: what xdpsbx.c does with the TCX links of TAPs (xdpgso.c) when it loads,
 * prunes, unloads and rolls back.
 */
#ifndef CVS_XDPGSO_H
#define CVS_XDPGSO_H

#include "xdpctl.h"

/* The by-slot table of links; -ENOMEM. */
int xdpgso_init(struct xdp_sbx *x, uint32_t n);
/* Links pinned in dir whose interface has no entry in ifi_fd (-1: every one). How many. */
uint32_t xdpgso_sweep(const char *dir, int ifi_fd, int gso_map_fd);
void xdpgso_unload(struct xdp_sbx *x);
/* A rollback to a release without them: every link of dir and its entry. How many. */
uint32_t xdpgso_release(const char *dir);

#endif /* CVS_XDPGSO_H */
