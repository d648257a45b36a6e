/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Between the IPv6 pipeline files: dp6.c (neighbour discovery, NAT66 egress, the frame's
 * entry points) and dp6_in.c (flows towards a sandbox: exposed ports on the node's IPv6
 * address, hairpin; the guest's address).
 */
#ifndef CVS_DP6_INT_H
#define CVS_DP6_INT_H

#include "dp_core.h"
#include "ct6.h"

/* dp6.c: translate a packet of s->t[dir] as the inverse of the other tuple, track it. */
void dp6_forward(struct dp_ctx *x, struct ct6_session *s, int dir, struct pkt *p,
		 struct dp_result *r);

/*
 * dp6_in.c. Learn the guest's address from a frame of its own port (before any check drops
 * it: a duplicate address check is dropped after).
 */
void dp6_learn(struct dp_ctx *x, uint32_t slot, const struct pkt *p);
/* The guest address of a slot: learnt, else the EUI-64 of its guest MAC. */
void dp6_guest_addr(const struct dp_ctx *x, uint32_t slot, uint8_t out[16]);
/*
 * The session of tuple t (its hash h, the reference stage 2 prefetched or 0), or NULL; a
 * pure SYN on a closed TCP flow's original tuple takes its place (the old session goes), as
 * dp_lookup() for IPv4.
 */
struct ct6_session *dp6_lookup(struct dp_ctx *x, const struct ct6_tuple *t, uint64_t h,
			       uint32_t hint, const struct pkt *p, int *dir);
/*
 * dp6.c. What a guest may open towards daddr (the world, the node's IPv6 address): TCP only
 * with a SYN, ICMPv6 only with an echo request, nothing its policy denies (a denied SYN gets a
 * RST), within its session limit over both families; *ver: the policy version the flow
 * keeps. False when r says why not. The rate limit's token is the caller's to take, last.
 */
bool dp6_admit(struct dp_ctx *x, uint32_t slot, struct pkt *p, const uint8_t daddr[16],
	       uint16_t *ver, struct dp_result *r);
/* A world packet to the node's IPv6 address without a session: a host port's new flow. */
void dp6_hostport_open(struct dp_ctx *x, struct pkt *p, const struct ct6_tuple *t,
		       struct dp_result *r);
/* The zone of a sandbox's host-path address (--sandbox-prefix6 and its IPv4 one), or 0. */
uint32_t dp6_host_zone(const struct dp_ctx *x, const uint8_t a[16]);
/* A host packet to a sandbox address without a session: a host flow's opening. */
void dp6_host_open(struct dp_ctx *x, struct pkt *p, const struct ct6_tuple *t,
		   struct dp_result *r);
/* A guest's packet to the node's IPv6 address without a session: a hairpin's new flow. */
void dp6_hairpin_open(struct dp_ctx *x, uint32_t slot, struct pkt *p,
		      const struct ct6_tuple *t, struct dp_result *r);

#endif /* CVS_DP6_INT_H */
