/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SNAT port of a new egress or hairpin flow (docs/datapath.md, "Per-sandbox limits"):
 * a free port of this worker's share towards the flow's endpoint, else, for a TCP SYN, the
 * port of a closed session towards that endpoint. Included by dp_sandbox.c only; a new session runs
 * it, an established packet never does.
 */
#ifndef CVS_DP_SNAT_H
#define CVS_DP_SNAT_H

#include <arpa/inet.h>

#include "dp.h"

#define SNAT_PROBES		64

/* A scattered offset into this worker's SNAT share, so successive flows stay apart. */
static inline uint32_t
dp_snat_scatter(struct dp_ctx *x)
{
	uint32_t span = (uint32_t)x->snat_hi - x->snat_lo + 1;

	x->snat_cursor = x->snat_cursor * 1103515245u + 12345u;
	return (x->snat_cursor >> 8) % span;
}

/* The next SNAT port to try, network order. */
static inline uint16_t
dp_snat_next(struct dp_ctx *x)
{
	return htons((uint16_t)(x->snat_lo + dp_snat_scatter(x)));
}

/*
 * Whether closed session s is a better port to take over than 'best' for a flow of 'zone':
 * the sandbox's own first (its churn is paid from its own dead flows), then the one idle
 * longest (the likeliest to be out of the remote's TIME_WAIT too, which is shorter on Linux,
 * 60 s, than ours).
 */
static inline bool
dp_snat_better(const struct dp_ctx *x, const struct ct_session *s,
	       const struct ct_session *best, uint16_t zone)
{
	bool own = s->t[0].zone == zone;

	if (!best)
		return true;
	if (own != (best->t[0].zone == zone))
		return own;
	return x->now - s->last_seen > x->now - best->last_seen;
}

/*
 * Give the flow the port of closed session s (TIME_WAIT, CLOSE) towards the same endpoint,
 * as Linux's NAT lets a SYN reuse the tuple of a closing connection. The flow it held is
 * over; a late segment of it now meets the new session (the remote's ACK for it, when the
 * remote still holds it in TIME_WAIT: tcpwin_rst() lets the guest's RST to that through). The
 * session goes by ct_delete() like any removal: index, lists and counts (none: it was not
 * counted, ct_class_live()).
 */
static inline void
dp_snat_take(struct dp_ctx *x, uint32_t slot, struct ct_session *s, struct ct_tuple *rt)
{
	rt->dport = s->t[1].dport;
	ct_delete(x->ct, s);
	x->st->c[CVS_WC_SNAT_TAKEOVERS]++;
	if (x->slot_st)
		x->slot_st[slot].c[CVS_PC_SNAT_TAKEOVERS]++;
}

/*
 * A SNAT port for which the reply tuple 'rt' is free; the port goes into rt. From a scattered
 * start, consecutive ports: a range of up to SNAT_PROBES ports is searched whole (random
 * probes could miss the one free port of a small range). When every port probed is taken, a
 * TCP flow (a SYN: no other opens one) takes over the best closed session among them
 * (dp_snat_better()), whoever's: closed sessions are outside the per-endpoint counts, so left
 * to their sandbox they would let it hold every port towards an endpoint with flows that are
 * over, the denial the SNAT share is there to prevent. A live session is never taken.
 */
static inline bool
dp_snat_port(struct dp_ctx *x, uint32_t slot, struct ct_tuple *rt)
{
	uint32_t span = (uint32_t)x->snat_hi - x->snat_lo + 1, i, start;
	struct ct_session *take = NULL, *s;
	int d;

	start = dp_snat_scatter(x);
	for (i = 0; i < SNAT_PROBES && i < span; i++) {
		uint16_t port = htons((uint16_t)(x->snat_lo + (start + i) % span));

		if (rt->proto == IPPROTO_ICMP_)
			rt->sport = port;
		rt->dport = port;
		s = ct_lookup(x->ct, rt, &d);
		if (!s)
			return true;
		/* A reply tuple of the node's address: an egress or hairpin session. */
		if (d == CT_DIR_REPLY && !ct_class_live(s->cls) &&
		    dp_snat_better(x, s, take, (uint16_t)(slot + 1)))
			take = s;
	}
	if (!take || rt->proto != IPPROTO_TCP_)
		return false;
	dp_snat_take(x, slot, take, rt);
	return true;
}

#endif /* CVS_DP_SNAT_H */
