/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Next hops of the world side, learned from the kernel over netlink: the route to each
 * destination a worker asks about, the neighbour entry of its gateway (or of the destination
 * when on-link), and change notifications that keep the workers' cache current. A missing
 * neighbour is resolved by the kernel (NTF_USE), never guessed. Control thread only.
 */
#ifndef CVS_NEXTHOP_H
#define CVS_NEXTHOP_H

#include <stdatomic.h>
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
	/* IPv6 (nexthop_open_ip6()): the default router only; nh6_mac NULL when off. */
	_Atomic uint64_t *nh6_mac;	/* where its MAC is published (dp_shared.nh6_mac) */
	uint64_t mac6;			/* what was published, dp_mac_pack(), 0 = unknown */
	bool have_gw6;
	bool said_no_gw6;		/* "no IPv6 default route" logged once */
	uint8_t gw6[16];		/* the router, often a link-local address */
	uint64_t retry6_ms;		/* when to ask again while its MAC is unknown */
};

struct worker;

int nexthop_open(struct nexthop *n, int ifindex, struct dp_nh *nh, struct worker *w,
		 uint32_t nw, const uint8_t *fallback, char *err, size_t errlen);
/*
 * IPv6 too (--node-ip6): the default router of the world interface and its MAC, published
 * into *mac (dp_mac_pack(), 0 while unknown) and kept current from the same notifications.
 * Logs when it becomes known or changes. 0, or -errno with the reason in err.
 */
int nexthop_open_ip6(struct nexthop *n, _Atomic uint64_t *mac, char *err, size_t errlen);
/* Serve worker requests and kernel notifications; never blocks for long. */
void nexthop_poll(struct nexthop *n);
void nexthop_close(struct nexthop *n);

#endif /* CVS_NEXTHOP_H */
