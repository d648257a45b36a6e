/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal to xdp/: what xdpsbx.c does with the TC filters of TAPs (xdpgso.c) when it prunes
 * and rolls back.
 */
#ifndef CVS_XDPGSO_H
#define CVS_XDPGSO_H

#include "xdpctl.h"

/* Entries of map_fd (cvs_gso_mtu) whose TAP has none in ifi_fd (-1: every one) go, with
 * their filters. How many. */
uint32_t xdpgso_sweep(int map_fd, int ifi_fd);
/* A rollback to a release without them: every entry of the maps pinned in dir, its filter. */
uint32_t xdpgso_release(const char *dir);

#endif /* CVS_XDPGSO_H */
