/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet pipeline: classify a frame from the world, a sandbox or cube-dev, find or create its
 * session, translate it and rewrite its Ethernet header. Per packet.
 *
 * Every flow is one session of two tuples. A packet matching t[dir] leaves as the inverse of
 * t[dir ^ 1], towards the port of that tuple's zone. The flows differ only in the tuples a new
 * session gets:
 *   exposed port  world  {client, node, cport', hport}     sandbox {guest, client, cport, cport'}
 *   egress        sandbox {guest, remote, gport, rport}    world  {remote, node, rport, snat}
 *   hairpin       sandbox A {guest, node, gport, hport}    sandbox B {guest, node, cport, snat}
 *   host → sbx    host   {hostip, sbxip, hport, port}      sandbox {guest, gw, port, hport}
 *   guest → gw    sandbox {guest, gw, id, id} (ICMP echo)  host   {hostip, sbxip, id, id}
 *   guest → node  sandbox {guest, node, gport, port}       host   {node, sbxip, port, gport}
 *
 * Beside it, also per packet: ICMP error translation (icmperr.c), the frames the worker answers
 * itself (reply.h), the next-hop cache (nhcache.c) and the rewrite (nat.c); which worker runs
 * a frame is decided before the pipeline (owner.c).
 */
#include <string.h>
#include <arpa/inet.h>

#include "dp.h"
#include "icmperr.h"
#include "nat.h"
#include "reply.h"
#include "dp_limits.h"
#include "dp_snat.h"
#include "tcpwin.h"

static inline void
dp_drop(struct dp_ctx *x, struct dp_result *r, enum cvs_drop why)
{
	r->action = DP_DROP;
	r->drop = (uint8_t)why;
	x->st->drop[why]++;
}

static inline void
dp_tuple_of(struct ct_tuple *t, const struct pkt *p, uint16_t zone)
{
	t->saddr = p->saddr;
	t->daddr = p->daddr;
	t->sport = p->sport;
	t->dport = p->dport;
	t->zone = zone;
	t->proto = p->proto;
	t->pad = 0;
}

static inline bool
dp_pure_syn(const struct pkt *p)
{
	return p->proto == IPPROTO_TCP_ &&
	       (p->tcp_flags & (TCPF_SYN | TCPF_ACK | TCPF_FIN | TCPF_RST)) == TCPF_SYN;
}

static inline bool
dp_slot_alive(const struct dp_ctx *x, uint32_t slot)
{
	return slot < x->sh->max_sandboxes &&
	       atomic_load_explicit(&x->sh->slot_alive[slot], memory_order_relaxed);
}

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

static inline const struct dp_policy *
dp_policy_of(const struct dp_ctx *x, uint32_t slot, uint16_t *ver)
{
	*ver = atomic_load_explicit(&x->sh->policy_ver[slot], memory_order_acquire);
	return atomic_load_explicit(&x->sh->policy[slot], memory_order_acquire);
}

/* MAC of the next hop towards daddr on the world side, or false (and a request). */
static bool
dp_next_hop(struct dp_ctx *x, uint32_t daddr, uint8_t mac[6])
{
	const struct dp_cfg *c = x->cfg;

	if (dp_nh_lookup(&x->sh->nh, daddr, mac))
		return true;
	x->st->c[CVS_WC_NH_REQUESTS]++;
	if (x->nhreq)
		dp_nh_request(x->nhreq, daddr);
	/* Off-link destinations go to the default gateway until the exact route is known. */
	if ((daddr & c->world_mask) != c->world_net && dp_nh_lookup(&x->sh->nh, 0, mac))
		return true;
	return false;
}

/* ---- building blocks ---- */

/*
 * A TCP segment other than the steady state's: the window, then the transition table, into
 * *st. False when the segment is dropped.
 */
static bool
dp_track_tcp(struct dp_ctx *x, struct ct_session *s, int dir, const struct pkt *p,
	     struct dp_result *r, uint8_t *st)
{
	enum tcpwin_verdict v = x->cfg->tcp_liberal ? TW_OK : tcpwin_track(x->ct, s, dir, p);
	uint8_t next;

	if (v == TW_BAD || v == TW_BAD_RST) {
		dp_drop(x, r, v == TW_BAD ? CVS_DROP_TCP_WINDOW : CVS_DROP_TCP_RST_WINDOW);
		return false;
	}
	next = ct_tcp_next(*st, dir, p->tcp_flags);
	/* A RST in the window but off the expected sequence: the endpoint challenges it. */
	if (v == TW_KEEP) {
		x->st->c[CVS_WC_TCP_RST_INEXACT]++;
		next = *st;
	}
	/* Invalid or ignored transitions leave the state as it was (unlike CubeVS). */
	if (next >= CT_TCP_MAX)
		x->st->c[CVS_WC_TCP_INVALID]++;
	else
		*st = next;
	return true;
}

#define DP_TCPF_STEADY	(TCPF_SYN | TCPF_FIN | TCPF_RST | TCPF_ACK)

/*
 * Advance the session state for a packet seen in direction 'dir'. False when the packet is
 * dropped: a TCP segment outside the tracked window changes nothing, not even the timeout.
 */
static bool
dp_track(struct dp_ctx *x, struct ct_session *s, int dir, const struct pkt *p,
	 struct dp_result *r)
{
	uint8_t st = s->state;
	enum ct_class c;

	if (p->proto != IPPROTO_TCP_) {
		if (dir == CT_DIR_REPLY)
			st = CT_REPLIED;
		c = ct_class_of(p->proto, st);
	} else if (__builtin_expect(st == CT_TCP_ESTABLISHED &&
				    (p->tcp_flags & DP_TCPF_STEADY) == TCPF_ACK, 1)) {
		/*
		 * The steady state: an ACK without SYN, FIN or RST leaves an established flow
		 * established in either direction (ct_tcp_table), its class as it was; only its
		 * window is checked.
		 */
		if (!x->cfg->tcp_liberal && tcpwin_track_ack(x->ct, s, dir, p) != TW_OK) {
			dp_drop(x, r, CVS_DROP_TCP_WINDOW);
			return false;
		}
		c = CT_C_TCP_ESTABLISHED;
		/* Its own call, so the class is a constant in the common test. */
		if (ct_touch_quick(x->ct, s, c, st, x->now))
			return true;
	} else {
		if (!dp_track_tcp(x, s, dir, p, r, &st))
			return false;
		c = ct_class_of(IPPROTO_TCP_, st);
	}
	if (ct_touch_quick(x->ct, s, c, st, x->now))
		return true;
	/* A class change: a closed session coming back to life meets the limits first. */
	if (!ct_class_live(s->cls) && !dp_limits_revive(x, s, c, r))
		return false;
	ct_touch_slow(x->ct, s, c, st, x->now);
	return true;
}

/* Write the Ethernet header for a frame leaving towards 'zone'; false when it cannot go. */
static bool
dp_l2(struct dp_ctx *x, const struct ct_session *s, uint16_t zone, struct pkt *p,
      struct dp_result *r)
{
	struct eth_hdr *eth = pkt_eth(p);
	const struct dp_cfg *c = x->cfg;

	if (zone == 0) {
		memcpy(eth->dst, s->peer_mac, 6);
		memcpy(eth->src, c->world_mac, 6);
		r->action = DP_TO_WORLD;
	} else if (zone == CVS_ZONE_HOST) {
		memcpy(eth->dst, c->host_peer_mac, 6);
		memcpy(eth->src, c->host_mac, 6);
		r->action = DP_TO_HOST;
	} else {
		if (!dp_slot_alive(x, zone - 1u)) {
			dp_drop(x, r, CVS_DROP_SANDBOX_GONE);
			return false;
		}
		dp_mac_put(eth->dst, atomic_load_explicit(&x->sh->slot_mac[zone - 1u],
							  memory_order_relaxed));
		memcpy(eth->src, c->gw_mac, 6);
		r->action = DP_TO_SANDBOX;
		r->slot = zone - 1u;
	}
	r->len = p->len;
	return true;
}

/*
 * A policy change re-checks the flows of that sandbox: on the first packet after the change,
 * a flow its new policy denies is removed. Returns false when the flow is cut.
 */
static bool
dp_policy_recheck(struct dp_ctx *x, struct ct_session *s, struct dp_result *r)
{
	uint32_t slot = s->t[0].zone - 1u;
	const struct dp_policy *pol;
	uint16_t ver;

	if (!(s->flags & CT_F_POLICY) || slot >= x->sh->max_sandboxes)
		return true;
	if (atomic_load_explicit(&x->sh->policy_ver[slot], memory_order_relaxed) == s->pol_ver)
		return true;
	pol = dp_policy_of(x, slot, &ver);
	if (dp_policy_allows(pol, s->t[0].daddr)) {
		s->pol_ver = ver;
		return true;
	}
	ct_delete(x->ct, s);
	dp_drop(x, r, CVS_DROP_POLICY_CUT);
	return false;
}

/* Translate a packet matching s->t[dir]: it leaves as the inverse of the other tuple. */
static void
dp_forward(struct dp_ctx *x, struct ct_session *s, int dir, struct pkt *p, struct dp_result *r)
{
	const struct ct_tuple *o = &s->t[dir ^ 1];

	if (!dp_policy_recheck(x, s, r) || !dp_track(x, s, dir, p, r))
		return;
	nat_rewrite(p, o->daddr, o->saddr, o->dport, o->sport);
	dp_l2(x, s, o->zone, p, r);
}

/* A parsed packet between the stages of a burst: its tuple and hash, its bucket prefetched. */
struct dp_pre {
	struct pkt p;
	struct ct_tuple t;
	uint64_t h;
	uint32_t hint;		/* the session reference prefetched in stage 2 */
	bool rt_ok;		/* rt and rh are set (a world SYN: its host port is registered) */
	struct ct_tuple rt;	/* a SYN's likely reply tuple (world: DNAT; guest: egress SNAT) */
	uint64_t rh;
};

static inline void
dp_pre_hash(struct dp_ctx *x, struct dp_pre *pre, uint16_t zone)
{
	dp_tuple_of(&pre->t, &pre->p, zone);
	pre->h = ct_hash_tuple(x->ct, &pre->t);
	pre->hint = 0;
	pre->rt_ok = false;
	ct_prefetch_bucket(x->ct, pre->h);
}

/*
 * pre->rt is the reply tuple a SYN will most likely need: hash it and prefetch its line and
 * the session slot the insert will take, the two misses an insert would otherwise make.
 */
static inline void
dp_pre_reply(struct dp_ctx *x, struct dp_pre *pre)
{
	pre->rh = ct_hash_tuple(x->ct, &pre->rt);
	pre->rt_ok = true;
	ct_prefetch_bucket(x->ct, pre->rh);
	ct_prefetch_free(x->ct);
}

/*
 * Find the session of a packet. A SYN that reuses the tuple of a closed TCP flow gets a fresh
 * session (and a fresh SNAT port), as a guest reusing a source port expects.
 */
static struct ct_session *
dp_lookup(struct dp_ctx *x, const struct dp_pre *pre, int *dir)
{
	const struct pkt *p = &pre->p;
	struct ct_session *s;

	s = ct_lookup_hint(x->ct, &pre->t, pre->h, pre->hint, dir);
	if (s && *dir == CT_DIR_ORIG && dp_pure_syn(p) &&
	    (s->state == CT_TCP_TIME_WAIT || s->state == CT_TCP_CLOSE)) {
		ct_delete(x->ct, s);
		x->st->c[CVS_WC_PORT_REUSE]++;
		return NULL;
	}
	return s;
}

/* Create a session and send the first packet on. */
static struct ct_session *
dp_open_hashed(struct dp_ctx *x, const struct ct_tuple *t, uint64_t ht, const struct ct_tuple *rt,
	       uint64_t hrt, struct pkt *p, struct dp_result *r)
{
	uint8_t state = p->proto == IPPROTO_TCP_ ? CT_TCP_SYN_SENT : CT_UNREPLIED;
	uint64_t evicted = x->ct->cnt.evicted, expired = x->ct->cnt.expired;
	struct ct_session *s;
	enum ct_refuse why;

	s = ct_insert_hashed(x->ct, t, ht, rt, hrt, state, x->now, &why);
	/* A full table makes room itself; what it removed must show in the counters. */
	x->st->c[CVS_WC_SESS_EVICTED] += x->ct->cnt.evicted - evicted;
	x->st->c[CVS_WC_SESS_EXPIRED] += x->ct->cnt.expired - expired;
	if (!s) {
		dp_drop(x, r, why == CT_FULL ? CVS_DROP_TABLE_FULL : CVS_DROP_TUPLE_CLASH);
		return NULL;
	}
	x->st->c[CVS_WC_SESS_CREATED]++;
	/* The opening SYN starts the window tracking of its direction. */
	if (p->proto == IPPROTO_TCP_ && !x->cfg->tcp_liberal)
		tcpwin_open(x->ct, s, p);
	return s;
}

static struct ct_session *
dp_open(struct dp_ctx *x, const struct ct_tuple *t, const struct ct_tuple *rt, struct pkt *p,
	struct dp_result *r)
{
	return dp_open_hashed(x, t, ct_hash_tuple(x->ct, t), rt, ct_hash_tuple(x->ct, rt), p, r);
}

static void
dp_open_forward(struct dp_ctx *x, struct ct_session *s, struct pkt *p, struct dp_result *r)
{
	const struct ct_tuple *o = &s->t[1];

	nat_rewrite(p, o->daddr, o->saddr, o->dport, o->sport);
	if (!dp_l2(x, s, o->zone, p, r))
		ct_delete(x->ct, s);
}

/* Answer a guest's SYN with a RST+ACK (its policy denies the destination). */
static void
dp_rst_back(struct dp_ctx *x, struct pkt *p, struct dp_result *r)
{
	uint32_t len = reply_rst(p, x->cfg->gw_mac);

	x->st->c[CVS_WC_RST_SENT]++;
	r->action = DP_BACK;
	r->len = len;
}

/* An ICMP error about a tracked flow goes on, translated, to the flow's other endpoint. */
static void
dp_icmp_error(struct dp_ctx *x, uint16_t zone, struct pkt *p, struct dp_result *r)
{
	struct ct_session *s;
	enum cvs_drop why;
	int dir;

	s = icmperr_translate(x->ct, zone, p, &dir, &why);
	if (!s) {
		dp_drop(x, r, why);
		return;
	}
	if (dp_l2(x, s, s->t[dir ^ 1].zone, p, r))
		x->st->c[CVS_WC_ICMP_ERRORS]++;
}

/* ---- entry points ---- */

/* Burst stage 1 for a world frame: false when it is decided already (r says how). */
static bool
dp_world_prep(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_pre *pre,
	      struct dp_result *r)
{
	if (pkt_parse(&pre->p, frame, len) != PKT_IPV4) {
		dp_drop(x, r, pre->p.kind == PKT_ARP ? CVS_DROP_ARP : (enum cvs_drop)pre->p.drop);
		return false;
	}
	if (pre->p.daddr != x->cfg->node_ip) {
		dp_drop(x, r, CVS_DROP_NOT_NODE_IP);
		return false;
	}
	/* Our own addresses cannot come from outside: such a session would talk to itself. */
	if (pre->p.saddr == x->cfg->node_ip || pre->p.saddr == x->cfg->guest_ip ||
	    pre->p.saddr == x->cfg->gw_ip) {
		dp_drop(x, r, CVS_DROP_BAD_SOURCE);
		return false;
	}
	dp_pre_hash(x, pre, 0);
	/* A SYN to an exposed port most likely opens a session. */
	if (dp_pure_syn(&pre->p)) {
		uint32_t hp = atomic_load_explicit(&x->sh->hostport[ntohs(pre->p.dport)],
						   memory_order_acquire);

		if (hp) {
			ct_tuple_set(&pre->rt, x->cfg->guest_ip, pre->p.saddr,
				     htons((uint16_t)(hp & 0xffff)), pre->p.sport,
				     (uint16_t)(hp >> 16), pre->p.proto);
			dp_pre_reply(x, pre);
		}
	}
	return true;
}

static void
dp_world_pkt(struct dp_ctx *x, struct dp_pre *pre, struct dp_result *r)
{
	struct pkt *p = &pre->p;
	struct ct_session *s;
	int dir;

	if (icmperr_is_error(p)) {
		dp_icmp_error(x, 0, p, r);
		return;
	}
	s = dp_lookup(x, pre, &dir);
	if (s) {
		dp_forward(x, s, dir, p, r);
		return;
	}
	/* Only a connection opening creates a session: SYN without ACK, FIN or RST. */
	if (!dp_pure_syn(p)) {
		dp_drop(x, r, p->proto == IPPROTO_TCP_ &&
			!atomic_load_explicit(&x->sh->hostport[ntohs(p->dport)],
					      memory_order_acquire) ?
			CVS_DROP_NO_HOSTPORT : CVS_DROP_NO_SESSION);
		return;
	}
	if (!pre->rt_ok) {
		dp_drop(x, r, CVS_DROP_NO_HOSTPORT);
		return;
	}
	if (!dp_inbound_ok(x, pre->rt.zone, r))
		return;
	s = dp_open_hashed(x, &pre->t, pre->h, &pre->rt, pre->rh, p, r);
	if (!s)
		return;
	memcpy(s->peer_mac, pkt_eth(p)->src, 6);
	dp_open_forward(x, s, p, r);
}

void
dp_world_rx_burst(struct dp_ctx *x, uint8_t *const *frames, const uint32_t *lens, uint32_t n,
		  struct dp_result *r)
{
	struct dp_pre pre[DP_BURST_MAX];
	bool go[DP_BURST_MAX];
	uint32_t i;

	for (i = 0; i < n; i++)
		go[i] = dp_world_prep(x, frames[i], lens[i], &pre[i], &r[i]);
	for (i = 0; i < n; i++)
		if (go[i])
			pre[i].hint = ct_prefetch_session(x->ct, pre[i].h);
	for (i = 0; i < n; i++)
		if (go[i])
			dp_world_pkt(x, &pre[i], &r[i]);
}

void
dp_world_rx(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_result *r)
{
	dp_world_rx_burst(x, &frame, &len, 1, r);
}

/* Answer an ARP request for any address with 'mac'. */
static void
dp_arp_reply(struct dp_ctx *x, struct pkt *p, const uint8_t mac[6], struct dp_result *r)
{
	uint32_t len = reply_arp(p, mac);

	x->st->c[CVS_WC_ARP_REPLIES]++;
	r->action = DP_BACK;
	r->len = len;
}

/* A new flow from a guest: egress (SNAT), hairpin (SNAT + DNAT) or towards the host. */
static void
dp_sandbox_open(struct dp_ctx *x, uint32_t slot, struct dp_pre *pre, struct dp_result *r)
{
	struct pkt *p = &pre->p;
	const struct dp_cfg *c = x->cfg;
	uint16_t zone = (uint16_t)(slot + 1), ver;
	const struct dp_policy *pol;
	enum cvs_wcounter kind;
	struct ct_session *s;
	struct ct_tuple t, rt;
	uint8_t mac[6];
	uint32_t hp = 0;
	uint64_t hrt;
	int dir;

	dp_tuple_of(&t, p, zone);

	if (p->daddr == c->gw_ip) {
		/* Only replies may use the gateway address; a guest may ping it. */
		const struct icmp_hdr *ih = pkt_l4(p);

		if (!c->have_host || p->proto != IPPROTO_ICMP_ || ih->type != ICMP_ECHO_) {
			dp_drop(x, r, CVS_DROP_GATEWAY_DENIED);
			return;
		}
	}
	if (p->proto == IPPROTO_TCP_ ? !dp_pure_syn(p) :
	    p->proto == IPPROTO_ICMP_ && ((const struct icmp_hdr *)pkt_l4(p))->type != ICMP_ECHO_) {
		dp_drop(x, r, CVS_DROP_EGRESS_PROTO);
		return;
	}
	pol = dp_policy_of(x, slot, &ver);
	if (p->daddr != c->gw_ip && !dp_policy_allows(pol, p->daddr)) {
		if (p->proto == IPPROTO_TCP_)
			dp_rst_back(x, p, r);
		else
			dp_drop(x, r, CVS_DROP_POLICY_DENIED);
		return;
	}
	if (p->daddr == c->node_ip && p->proto == IPPROTO_TCP_)
		hp = atomic_load_explicit(&x->sh->hostport[ntohs(p->dport)], memory_order_acquire);

	if (hp) {
		/* Hairpin: B sees node IP : SNAT port; B's replies return to A in one pass. */
		ct_tuple_set(&rt, c->guest_ip, c->node_ip, htons((uint16_t)(hp & 0xffff)), 0,
			     (uint16_t)(hp >> 16), p->proto);
		kind = CVS_WC_HAIRPIN_FLOWS;
	} else if (p->daddr == c->gw_ip || p->daddr == c->node_ip) {
		/* To the host stack through cube-dev, seen from the sandbox IP. */
		uint32_t ip = atomic_load_explicit(&x->sh->slot_ip[slot], memory_order_relaxed);

		if (!c->have_host || !ip) {
			dp_drop(x, r, !ip ? CVS_DROP_SANDBOX_GONE : CVS_DROP_GATEWAY_DENIED);
			return;
		}
		ct_tuple_set(&rt, p->daddr == c->gw_ip ? c->host_ip : p->daddr, ip, p->dport,
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

/* Burst stage 1 for a guest frame: false when it is decided already (r says how). */
static bool
dp_sandbox_prep(struct dp_ctx *x, uint32_t slot, uint8_t *frame, uint32_t len,
		struct dp_pre *pre, struct dp_result *r)
{
	switch (pkt_parse(&pre->p, frame, len)) {
	case PKT_ARP:
		if (reply_arp_is_request(&pre->p))
			dp_arp_reply(x, &pre->p, x->cfg->gw_mac, r);
		else
			dp_drop(x, r, CVS_DROP_ARP);
		return false;
	case PKT_BAD:
		dp_drop(x, r, (enum cvs_drop)pre->p.drop);
		return false;
	}
	/* Every guest has the one guest address; anything else is spoofed. */
	if (pre->p.saddr != x->cfg->guest_ip) {
		dp_drop(x, r, CVS_DROP_GUEST_SPOOF);
		return false;
	}
	dp_pre_hash(x, pre, (uint16_t)(slot + 1));
	/*
	 * A SYN to anywhere but the node or the gateway most likely opens an egress flow: pick
	 * its first SNAT port candidate now and prefetch that reply tuple's line and the session
	 * slot an insert would take (the probe would otherwise miss in stage 3).
	 */
	if (dp_pure_syn(&pre->p) && pre->p.daddr != x->cfg->node_ip &&
	    pre->p.daddr != x->cfg->gw_ip) {
		ct_tuple_set(&pre->rt, pre->p.daddr, x->cfg->node_ip, pre->p.dport,
			     dp_snat_next(x), 0, IPPROTO_TCP_);
		dp_pre_reply(x, pre);
	}
	return true;
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

void
dp_sandbox_rx_burst(struct dp_ctx *x, uint32_t slot, uint8_t *const *frames,
		    const uint32_t *lens, uint32_t n, struct dp_result *r)
{
	struct dp_pre pre[DP_BURST_MAX];
	bool go[DP_BURST_MAX];
	uint32_t i;

	for (i = 0; i < n; i++)
		go[i] = dp_sandbox_prep(x, slot, frames[i], lens[i], &pre[i], &r[i]);
	for (i = 0; i < n; i++)
		if (go[i])
			pre[i].hint = ct_prefetch_session(x->ct, pre[i].h);
	for (i = 0; i < n; i++)
		if (go[i])
			dp_sandbox_pkt(x, slot, &pre[i], &r[i]);
}

void
dp_sandbox_rx(struct dp_ctx *x, uint32_t slot, uint8_t *frame, uint32_t len,
	      struct dp_result *r)
{
	dp_sandbox_rx_burst(x, slot, &frame, &len, 1, r);
}

void
dp_host_rx(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_result *r)
{
	const struct dp_cfg *c = x->cfg;
	struct ct_session *s;
	struct ct_tuple t, rt;
	uint32_t idx, zone;
	struct pkt p;
	int dir;

	switch (pkt_parse(&p, frame, len)) {
	case PKT_ARP: {
		const struct arp_hdr *a = (const struct arp_hdr *)(frame + ETH_HLEN_);

		/* The kernel resolves sandbox addresses on cube-dev: they are all behind us. */
		if (reply_arp_is_request(&p) && (a->tpa & c->sbx_mask) == c->sbx_net &&
		    a->tpa != c->host_ip)
			dp_arp_reply(x, &p, c->host_mac, r);
		else
			dp_drop(x, r, CVS_DROP_ARP);
		return;
	}
	case PKT_BAD:
		dp_drop(x, r, (enum cvs_drop)p.drop);
		return;
	}
	if (icmperr_is_error(&p)) {
		dp_icmp_error(x, CVS_ZONE_HOST, &p, r);
		return;
	}
	{
		struct dp_pre pre;

		pre.p = p;
		dp_pre_hash(x, &pre, CVS_ZONE_HOST);
		s = dp_lookup(x, &pre, &dir);
	}
	if (s) {
		dp_forward(x, s, dir, &p, r);
		return;
	}
	idx = ntohl(p.daddr) - ntohl(c->sbx_net);
	zone = (p.daddr & c->sbx_mask) == c->sbx_net && idx < x->sh->ip2slot_size ?
	       atomic_load_explicit(&x->sh->ip2slot[idx], memory_order_acquire) : 0;
	if (!zone) {
		dp_drop(x, r, CVS_DROP_NOT_SANDBOX_IP);
		return;
	}
	if (p.proto == IPPROTO_TCP_ ? !dp_pure_syn(&p) :
	    p.proto == IPPROTO_ICMP_ && ((const struct icmp_hdr *)pkt_l4(&p))->type != ICMP_ECHO_) {
		dp_drop(x, r, CVS_DROP_NO_SESSION);
		return;
	}
	/* The guest sees the connection coming from its gateway address. */
	dp_tuple_of(&t, &p, CVS_ZONE_HOST);
	ct_tuple_set(&rt, c->guest_ip, c->gw_ip, p.dport, p.sport, (uint16_t)zone, p.proto);
	if (!dp_limits_host(x, (uint16_t)zone, r))
		return;
	s = dp_open(x, &t, &rt, &p, r);
	if (!s)
		return;
	x->st->c[CVS_WC_HOST_FLOWS]++;
	dp_open_forward(x, s, &p, r);
}
