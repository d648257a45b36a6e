/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline of a frame from a guest (per packet): ARP for its gateway, a reply or further
 * packet of a tracked flow, a new flow (egress SNAT, hairpin, towards the host or the node),
 * the policy, the per-sandbox limits.
 */
#include "dp_core.h"
#include "dp_snat.h"

bool
dp_policy_allows(const struct dp_policy *pol, uint32_t daddr)
{
	uint32_t i;

	if (!pol)
		return true;
	for (i = 0; i < pol->nallow; i++)
		if ((daddr & pol->allow[i].mask) == pol->allow[i].net)
			return true;
	for (i = 0; i < pol->ndeny; i++)
		if ((daddr & pol->deny[i].mask) == pol->deny[i].net)
			return false;
	return pol->internet;
}

static bool
dp_cidr6_has(const struct dp_cidr6 *c, const uint64_t a[2])
{
	return (a[0] & c->mask[0]) == c->net[0] && (a[1] & c->mask[1]) == c->net[1];
}

/* The same order as for IPv4: the allow list, then the deny list, then the default. */
bool
dp_policy_allows6(const struct dp_policy *pol, const uint8_t daddr[16])
{
	uint64_t a[2];
	uint32_t i;

	if (!pol)
		return true;
	memcpy(a, daddr, 16);
	for (i = 0; i < pol->nallow6; i++)
		if (dp_cidr6_has(&pol->cidr6[i], a))
			return true;
	for (i = 0; i < pol->ndeny6; i++)
		if (dp_cidr6_has(&pol->cidr6[pol->nallow6 + i], a))
			return false;
	return pol->internet;
}

/*
 * What a guest may open: towards its gateway address only a ping (replies aside), a TCP flow
 * only with a SYN, ICMP only with an echo request, and nothing its policy denies (a denied
 * SYN gets a RST). False when r says why not; *ver is the policy version the flow keeps.
 */
static inline __attribute__((always_inline)) bool
dp_sandbox_admit(struct dp_ctx *x, uint32_t slot, struct pkt *p, uint32_t gw, uint16_t *ver,
		 struct dp_result *r)
{
	const struct dp_policy *pol;

	if (p->daddr == gw) {
		/* Only replies may use the gateway address; a guest may ping it. */
		const struct icmp_hdr *ih = pkt_l4(p);

		if (!x->cfg->have_host || p->proto != IPPROTO_ICMP_ || ih->type != ICMP_ECHO_) {
			dp_drop(x, r, CVS_DROP_GATEWAY_DENIED);
			return false;
		}
	}
	if (p->proto == IPPROTO_TCP_ ? !dp_pure_syn(p) :
	    p->proto == IPPROTO_ICMP_ && ((const struct icmp_hdr *)pkt_l4(p))->type != ICMP_ECHO_) {
		dp_drop(x, r, CVS_DROP_EGRESS_PROTO);
		return false;
	}
	pol = dp_policy_of(x, slot, ver);
	if (p->daddr != gw && !dp_policy_allows(pol, p->daddr)) {
		if (p->proto == IPPROTO_TCP_)
			dp_rst_back(x, p, slot, r);
		else
			dp_drop(x, r, CVS_DROP_POLICY_DENIED);
		return false;
	}
	return true;
}

/* A new flow from a guest: egress (SNAT), hairpin (SNAT + DNAT) or towards the host. */
static void
dp_sandbox_open(struct dp_ctx *x, uint32_t slot, struct dp_pre *pre, struct dp_result *r)
{
	struct pkt *p = &pre->p;
	const struct dp_cfg *c = x->cfg;
	uint16_t zone = (uint16_t)(slot + 1), ver;
	uint32_t gw = dp_gw_ip(x->sh, slot);
	enum cvs_wcounter kind;
	struct ct_session *s;
	struct ct_tuple t, rt;
	uint8_t mac[6];
	uint32_t hp = 0;
	uint64_t hrt;
	int dir;

	dp_tuple_of(&t, p, zone);

	if (!dp_sandbox_admit(x, slot, p, gw, &ver, r))
		return;
	if (p->daddr == c->node_ip && p->proto == IPPROTO_TCP_)
		hp = atomic_load_explicit(&x->sh->hostport[ntohs(p->dport)], memory_order_acquire);

	if (hp) {
		/* Hairpin: B sees node IP : SNAT port; B's replies return to A in one pass. */
		ct_tuple_set(&rt, dp_guest_ip(x->sh, (hp >> 16) - 1u), c->node_ip,
			     htons((uint16_t)(hp & 0xffff)), 0,
			     (uint16_t)(hp >> 16), p->proto);
		kind = CVS_WC_HAIRPIN_FLOWS;
	} else if (p->daddr == gw || p->daddr == c->node_ip) {
		/* To the host stack through cube-dev, seen from the sandbox IP. */
		uint32_t ip = atomic_load_explicit(&x->sh->slot_ip[slot], memory_order_relaxed);

		if (!c->have_host || !ip) {
			dp_drop(x, r, !ip ? CVS_DROP_SANDBOX_GONE : CVS_DROP_GATEWAY_DENIED);
			return;
		}
		ct_tuple_set(&rt, p->daddr == gw ? c->host_ip : p->daddr, ip, p->dport,
			     p->sport, CVS_ZONE_HOST, p->proto);
		kind = CVS_WC_HOST_FLOWS;
	} else {
		if (!dp_next_hop(x, p->daddr, mac)) {
			dp_drop(x, r, CVS_DROP_NO_NEIGHBOUR);
			return;
		}
		ct_tuple_set(&rt, p->daddr, c->node_ip, p->dport, 0, 0, p->proto);
		kind = CVS_WC_EGRESS_FLOWS;
	}
	if (!dp_limits_open(x, slot, kind, &rt, r))
		return;
	/*
	 * World and hairpin flows leave from the node IP: they need a SNAT port. An egress SYN
	 * tries first the candidate stage 1 prefetched (rt with that port, from the same packet).
	 */
	if (kind == CVS_WC_EGRESS_FLOWS && pre->rt_ok &&
	    !ct_lookup_hash(x->ct, &pre->rt, pre->rh, &dir)) {
		rt = pre->rt;
		hrt = pre->rh;
	} else if (kind != CVS_WC_HOST_FLOWS && !dp_snat_port(x, slot, &rt)) {
		dp_drop(x, r, CVS_DROP_SNAT_EXHAUSTED);
		return;
	} else {
		hrt = ct_hash_tuple(x->ct, &rt);
	}
	s = dp_open_hashed(x, &t, pre->h, &rt, hrt, p, r);
	if (!s)
		return;
	if (kind == CVS_WC_EGRESS_FLOWS)
		memcpy(s->peer_mac, mac, 6);
	x->st->c[kind]++;
	s->flags |= CT_F_POLICY;
	s->pol_ver = ver;
	dp_open_forward(x, s, p, r);
}

/* Burst stage 1 for a guest frame: DP_GO_NONE when it is decided already (r says how). */
static enum dp_go
dp_sandbox_prep(struct dp_ctx *x, uint32_t slot, uint8_t *frame, uint32_t len,
		struct dp_pre *pre, struct dp_result *r)
{
	switch (dp_parse(x, &pre->p, frame, len)) {
	case PKT_ARP:
		if (reply_arp_is_request(&pre->p)) {
			uint8_t gw_mac[6];

			dp_gw_mac(x->sh, slot, gw_mac);
			dp_arp_reply(x, &pre->p, gw_mac, r);
		} else {
			dp_drop(x, r, CVS_DROP_ARP);
		}
		return DP_GO_NONE;
	case PKT_BAD:
		dp_drop(x, r, (enum cvs_drop)pre->p.drop);
		return DP_GO_NONE;
	case PKT_FRAG:
		dp_frag_later(x, (uint16_t)(slot + 1), &pre->p, r);
		return DP_GO_NONE;
	case PKT_IPV6:
		return dp6_sandbox_prep(x, slot, pre, r) ? DP_GO_V6 : DP_GO_NONE;
	}
	/* A guest has its one address (the node-wide one, or its own); anything else is spoofed. */
	if (pre->p.saddr != dp_guest_ip(x->sh, slot)) {
		dp_drop(x, r, CVS_DROP_GUEST_SPOOF);
		return DP_GO_NONE;
	}
	dp_pre_hash(x, pre, (uint16_t)(slot + 1));
	/*
	 * A SYN to anywhere but the node or the gateway most likely opens an egress flow: pick
	 * its first SNAT port candidate now and prefetch that reply tuple's line and the session
	 * slot an insert would take (the probe would otherwise miss in stage 3).
	 */
	if (dp_pure_syn(&pre->p) && pre->p.daddr != x->cfg->node_ip &&
	    pre->p.daddr != dp_gw_ip(x->sh, slot)) {
		ct_tuple_set(&pre->rt, pre->p.daddr, x->cfg->node_ip, pre->p.dport,
			     dp_snat_next(x), 0, IPPROTO_TCP_);
		dp_pre_reply(x, pre);
	}
	return DP_GO_V4;
}

static void
dp_sandbox_pkt(struct dp_ctx *x, uint32_t slot, struct dp_pre *pre, struct dp_result *r)
{
	struct ct_session *s;
	int dir;

	if (icmperr_is_error(&pre->p)) {
		dp_icmp_error(x, (uint16_t)(slot + 1), &pre->p, r);
		return;
	}
	s = dp_lookup(x, pre, &dir);
	if (s) {
		dp_forward(x, s, dir, &pre->p, r);
		return;
	}
	dp_sandbox_open(x, slot, pre, r);
}

/* Stage 3; a first fragment's translation becomes its datagram's (dp_frag.c). */
static inline void
dp_sandbox_go(struct dp_ctx *x, uint32_t slot, struct dp_pre *pre, struct dp_result *r)
{
	struct frag_key k;

	if (__builtin_expect(!pre->p.frag, 1)) {
		dp_sandbox_pkt(x, slot, pre, r);
		return;
	}
	if (!dp_frag_begin(x, (uint16_t)(slot + 1), &pre->p, &k, r))
		return;
	dp_sandbox_pkt(x, slot, pre, r);
	dp_frag_first(x, &k, &pre->p, r);
}

void
dp_sandbox_rx_burst(struct dp_ctx *x, uint32_t slot, uint8_t *const *frames,
		    const uint32_t *lens, uint32_t n, struct dp_result *r)
{
	struct dp_pre pre[DP_BURST_MAX];
	uint8_t go[DP_BURST_MAX];
	uint32_t i;

	for (i = 0; i < n; i++)
		go[i] = (uint8_t)dp_sandbox_prep(x, slot, frames[i], lens[i], &pre[i], &r[i]);
	for (i = 0; i < n; i++)
		if (go[i] == DP_GO_V4)
			pre[i].hint = ct_prefetch_session(x->ct, pre[i].h);
		else if (go[i] == DP_GO_V6)
			pre[i].hint = ct6_prefetch_session(x->ct6, pre[i].h);
	for (i = 0; i < n; i++)
		if (go[i] == DP_GO_V4)
			dp_sandbox_go(x, slot, &pre[i], &r[i]);
		else if (go[i] == DP_GO_V6)
			dp6_sandbox_go(x, slot, &pre[i], &r[i]);
}

void
dp_sandbox_rx(struct dp_ctx *x, uint32_t slot, uint8_t *frame, uint32_t len,
	      struct dp_result *r)
{
	dp_sandbox_rx_burst(x, slot, &frame, &len, 1, r);
}
