/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-sandbox limits at session creation (docs/datapath.md, "Per-sandbox limits"): the
 * session counts the table keeps per zone, SNAT ports per (sandbox, endpoint), the slot's
 * token bucket. Included by the pipeline (dp_core.h); nothing here runs for an established packet.
 */
#ifndef CVS_DP_LIMITS_H
#define CVS_DP_LIMITS_H

#include "dp.h"

/*
 * A flow refused by a per-sandbox limit: counted by reason for the node and under the
 * sandbox. A TCP SYN is dropped like the rest, not answered with a RST: the guest's stack
 * retries it after its backoff (by then a token or a session may be free, so an honest burst
 * slows down instead of failing), and a hostile one gets no cheap fail-fast loop from us.
 */
static inline void
dp_refuse(struct dp_ctx *x, uint32_t slot, enum cvs_drop why, enum cvs_pcounter pc,
	  struct dp_result *r)
{
	r->action = DP_DROP;
	r->drop = (uint8_t)why;
	x->st->drop[why]++;
	if (x->slot_st)
		x->slot_st[slot].c[pc]++;
}

static inline uint32_t
dp_lim(const _Atomic uint32_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* Take a token of the slot's bucket (worker-owned, refilled by whole seconds of x->now). */
static inline bool
dp_bucket_take(struct dp_ctx *x, uint32_t slot, const struct dp_limit *lim)
{
	uint32_t rate = dp_lim(&lim->rate), burst = dp_lim(&lim->burst), gen = dp_lim(&lim->gen);
	struct dp_bucket *b;

	if (!rate || !x->bucket)
		return true;
	if (burst < rate)
		burst = rate;
	b = &x->bucket[slot];
	if (b->gen != gen) {
		/* A sandbox new to the slot (or new limits) starts with a full bucket. */
		b->gen = gen;
		b->tokens = burst;
		b->last = x->now;
	} else if (x->now != b->last) {
		uint64_t t = b->tokens + (uint64_t)rate * (uint32_t)(x->now - b->last);

		b->tokens = t > burst ? burst : (uint32_t)t;
		b->last = x->now;
	}
	if (!b->tokens)
		return false;
	b->tokens--;
	return true;
}

/*
 * The inbound limit of the sandbox of 'zone' for a flow towards it (a world flow to its host
 * port, a hairpin, the host's); true when under it.
 */
static inline bool
dp_inbound_ok(struct dp_ctx *x, uint16_t zone, struct dp_result *r)
{
	uint32_t v;

	if (!x->sh->slot_lim || !zone || zone > x->sh->max_sandboxes)
		return true;
	v = dp_lim(&x->sh->slot_lim[zone - 1u].inbound);
	if (v && ct_zone_inbound(x->ct, zone) >= v) {
		dp_refuse(x, zone - 1u, CVS_DROP_LIMIT_INBOUND, CVS_PC_LIM_INBOUND, r);
		return false;
	}
	return true;
}

/* Take a token of the bucket of 'slot' or refuse the flow under that sandbox. */
static inline bool
dp_rate_ok(struct dp_ctx *x, uint32_t slot, struct dp_result *r)
{
	if (dp_bucket_take(x, slot, &x->sh->slot_lim[slot]))
		return true;
	dp_refuse(x, slot, CVS_DROP_LIMIT_RATE, CVS_PC_LIM_RATE, r);
	return false;
}

/*
 * The SNAT share of 'slot' towards the endpoint of reply tuple rt (its live sessions there,
 * ct_ep_count()); true when under it.
 */
static inline bool
dp_snat_share_ok(struct dp_ctx *x, uint32_t slot, const struct ct_tuple *rt,
		 struct dp_result *r)
{
	uint32_t v = dp_lim(&x->sh->slot_lim[slot].snat);

	if (v && ct_ep_count(x->ct, (uint16_t)(slot + 1), rt->zone, rt->saddr, rt->sport,
			     rt->proto) >= v) {
		dp_refuse(x, slot, CVS_DROP_LIMIT_SNAT, CVS_PC_LIM_SNAT, r);
		return false;
	}
	return true;
}

/*
 * The limits of a sandbox opening a flow (kind: which flow, rt its reply tuple without the
 * SNAT port yet). Only at session creation: an established packet never comes here.
 */
static inline bool
dp_limits_open(struct dp_ctx *x, uint32_t slot, enum cvs_wcounter kind,
	       const struct ct_tuple *rt, struct dp_result *r)
{
	const struct dp_limit *lim;
	uint16_t zone = (uint16_t)(slot + 1);
	uint32_t v;

	if (!x->sh->slot_lim)
		return true;
	lim = &x->sh->slot_lim[slot];
	v = dp_lim(&lim->sessions);
	if (v && ct_zone_opened(x->ct, zone) >= v) {
		dp_refuse(x, slot, CVS_DROP_LIMIT_SESSIONS, CVS_PC_LIM_SESSIONS, r);
		return false;
	}
	/* Egress and hairpin take a SNAT port towards rt's endpoint (rt->zone: whose). */
	if (kind != CVS_WC_HOST_FLOWS && !dp_snat_share_ok(x, slot, rt, r))
		return false;
	/* A hairpin flow is also inbound for the sandbox it goes to. */
	if (kind == CVS_WC_HAIRPIN_FLOWS && !dp_inbound_ok(x, rt->zone, r))
		return false;
	/* Last: a flow refused for another reason takes no token. */
	return dp_rate_ok(x, slot, r);
}

/*
 * A flow from the host through cube-dev towards the sandbox of 'zone': its inbound limit, as
 * for any flow towards it, and its token bucket, so that a host process opening flows in a
 * loop cannot take the worker's time for new flows from the other sandboxes. World flows take
 * no token (a flood at an exposed port would stop the sandbox's own flows); the host is the
 * node's own, opening flows to a sandbox for it (its agent, its gateway), so they share its
 * budget.
 */
static inline bool
dp_limits_host(struct dp_ctx *x, uint16_t zone, struct dp_result *r)
{
	if (!x->sh->slot_lim || !zone || zone > x->sh->max_sandboxes)
		return true;
	return dp_inbound_ok(x, zone, r) && dp_rate_ok(x, zone - 1u, r);
}

/*
 * A closed session (TIME_WAIT, CLOSE: not counted) that a packet moves to class c comes back
 * into its zones' and its endpoint's counts when c is live (a SYN on TIME_WAIT): it must be
 * under their limits as a new session would, or revivals could take a sandbox past its
 * shares. Called on a class change of a closed session only, never for an established packet.
 */
static inline bool
dp_limits_revive(struct dp_ctx *x, const struct ct_session *s, enum ct_class c,
		 struct dp_result *r)
{
	uint16_t z0 = s->t[0].zone, z1 = s->t[1].zone;
	uint32_t v;

	if (!x->sh->slot_lim || !ct_class_live(c))
		return true;
	if (z0 && z0 <= x->sh->max_sandboxes) {
		v = dp_lim(&x->sh->slot_lim[z0 - 1u].sessions);
		if (v && ct_zone_opened(x->ct, z0) >= v) {
			dp_refuse(x, z0 - 1u, CVS_DROP_LIMIT_SESSIONS, CVS_PC_LIM_SESSIONS, r);
			return false;
		}
	}
	if (z1 != z0 && !dp_inbound_ok(x, z1, r))
		return false;
	/* Egress and hairpin (not the host's: CVS_ZONE_HOST) hold a SNAT port. */
	return !z0 || z0 > x->sh->max_sandboxes || z1 > x->ct->nzones ||
	       dp_snat_share_ok(x, z0 - 1u, &s->t[1], r);
}

#endif /* CVS_DP_LIMITS_H */
