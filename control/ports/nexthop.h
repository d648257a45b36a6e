/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Next hops of the world side, learned from the kernel over netlink: the route to each
 * destination a worker asks about, the neighbour entry of its gateway (or of the destination
 * when on-link), and change notifications that keep the workers' cache current. A missing
 * neighbour is resolved by the kernel (NTF_USE), never guessed. Control thread only.
 */
#ifndef CVS_NEXTHOP_H
#define CVS_NEXTHOP_H

#include <stdbool.h>
#include <stdint.h>

#include "dp.h"

#define NH_TRACK_MAX DP_NH_SIZE

struct nexthop {
	int ev_fd;		/* notifications */
	int q_fd;		/* queries */
	uint32_t seq;
	int ifindex;
	struct dp_nh *nh;
	struct worker *w;	/* whose request rings we serve */
	uint32_t nw;
	bool have_fallback;
	uint8_t fallback[6];
	uint32_t gw_ip;		/* default gateway on the world interface, 0 if none */
	/* What the cache holds or waits for: destination and the neighbour that serves it. */
	uint32_t n;
	uint32_t dst[NH_TRACK_MAX];
	uint32_t via[NH_TRACK_MAX];
	bool resolved[NH_TRACK_MAX];
	uint64_t requests;
	uint64_t resolutions;
};

struct worker;

int nexthop_open(struct nexthop *n, int ifindex, struct dp_nh *nh, struct worker *w,
		 uint32_t nw, const uint8_t *fallback, char *err, size_t errlen);
/* Serve worker requests and kernel notifications; never blocks for long. */
void nexthop_poll(struct nexthop *n);
void nexthop_close(struct nexthop *n);

#endif /* CVS_NEXTHOP_H */
