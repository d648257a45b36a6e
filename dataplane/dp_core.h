/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The building blocks of the pipeline that every direction uses (dp_world.c, dp_sandbox.c,
 * dp_host.c): drops, tuples, the policy check, next hops, tracking, the Ethernet rewrite, the
 * session lookup and creation, the frames answered in place and ICMP errors. Per packet, and
 * inline in each direction's file so a packet pays no call to get through them.
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
#ifndef CVS_DP_CORE_H
#define CVS_DP_CORE_H

#include <string.h>
#include <arpa/inet.h>

#include "dp.h"
#include "ct6.h"
#include "frag.h"
#include "icmperr.h"
#include "mtu.h"
#include "nat.h"
#include "reply.h"
#include "dp_limits.h"
#include "tcpwin.h"

static inline void
dp_drop(struct dp_ctx *x, struct dp_result *r, enum cvs_drop why)
{
	r->action = DP_DROP;
	r->drop = (uint8_t)why;
	x->st->drop[why]++;
}

/*
 * Fragments (dp_frag.c): a later one is translated as its datagram's first was, or held; a
 * first one goes through its pipeline between dp_frag_begin() (false: no fragment table, r
 * says so) and dp_frag_first(), which records what it became.
 */
void dp_frag_later(struct dp_ctx *x, uint16_t zone, struct pkt *p, struct dp_result *r);
bool dp_frag_begin(struct dp_ctx *x, uint16_t zone, const struct pkt *p, struct frag_key *k,
		   struct dp_result *r);
void dp_frag_first(struct dp_ctx *x, const struct frag_key *k, const struct pkt *p,
		   struct dp_result *r);

/* Every pipeline's parse: the frame's kind, its partial checksum completed and counted. */
static inline int
dp_parse(struct dp_ctx *x, struct pkt *p, uint8_t *frame, uint32_t len)
{
	int kind = pkt_parse(p, frame, len);

	if (kind == PKT_IPV4)
		x->st->c[CVS_WC_CSUM_COMPLETED] += (uint64_t)pkt_csum_complete(p);
	else if (kind == PKT_IPV6)
		x->st->c[CVS_WC_CSUM_COMPLETED] += (uint64_t)pkt_csum_complete6(p);
	return kind;
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

/* The zone (slot + 1) of a sandbox address on cube-dev (network order); 0 for none. */
static inline uint32_t
dp_sbx_zone(const struct dp_ctx *x, uint32_t ip)
{
	const struct dp_cfg *c = x->cfg;
	uint32_t idx = ntohl(ip) - ntohl(c->sbx_net);

	if ((ip & c->sbx_mask) != c->sbx_net || idx >= x->sh->ip2slot_size)
		return 0;
	return atomic_load_explicit(&x->sh->ip2slot[idx], memory_order_acquire);
}

static inline bool
dp_slot_alive(const struct dp_ctx *x, uint32_t slot)
{
	return slot < x->sh->max_sandboxes &&
	       atomic_load_explicit(&x->sh->slot_alive[slot], memory_order_relaxed);
}


static inline const struct dp_policy *
dp_policy_of(const struct dp_ctx *x, uint32_t slot, uint16_t *ver)
{
	*ver = atomic_load_explicit(&x->sh->policy_ver[slot], memory_order_acquire);
	return atomic_load_explicit(&x->sh->policy[slot], memory_order_acquire);
}

/* MAC of the next hop towards daddr on the world side, or false (and a request). */
static inline bool
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
static inline bool
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
static inline bool
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

/*
 * Write the Ethernet header for a frame leaving towards 'zone' ('peer_mac': the world next
 * hop of its session, either family's); false when it cannot go.
 */
static inline bool
dp_l2_to(struct dp_ctx *x, const uint8_t peer_mac[6], uint16_t zone, struct pkt *p,
	 struct dp_result *r)
{
	struct eth_hdr *eth = pkt_eth(p);
	const struct dp_cfg *c = x->cfg;

	if (zone == 0) {
		memcpy(eth->dst, peer_mac, 6);
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
		dp_gw_mac(x->sh, zone - 1u, eth->src);
		r->action = DP_TO_SANDBOX;
		r->slot = zone - 1u;
	}
	r->mtu = 0;
	r->len = p->len;
	return true;
}

static inline bool
dp_l2(struct dp_ctx *x, const struct ct_session *s, uint16_t zone, struct pkt *p,
      struct dp_result *r)
{
	return dp_l2_to(x, s->peer_mac, zone, p, r);
}

/*
 * A policy change re-checks the flows of that sandbox: on the first packet after the change,
 * a flow its new policy denies is removed. Returns false when the flow is cut.
 */
static inline bool
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

/* The IP MTU of the port behind a zone; 0 when it is not checked (tests, benches). */
static inline uint16_t
dp_zone_mtu(const struct dp_ctx *x, uint16_t zone)
{
	if (zone == 0)
		return x->cfg->world_mtu;
	if (zone == CVS_ZONE_HOST)
		return x->cfg->host_mtu;
	if (!x->sh->slot_mtu || zone - 1u >= x->sh->max_sandboxes)
		return 0;
	return atomic_load_explicit(&x->sh->slot_mtu[zone - 1u], memory_order_relaxed);
}

static inline uint16_t
dp_mtu_min(uint16_t a, uint16_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/*
 * What the path from zone 'in' to zone 'out' carries (docs/datapath.md, "MTU"), before the
 * rewrite, so that an answer quotes the packet as its sender sent it. A SYN's MSS is clamped to
 * the smaller MTU of the two ports, so TCP never depends on path MTU discovery; a datagram
 * larger than the exit's MTU is answered with a fragmentation-needed when it has DF (false: r
 * says so), else *frag gets the MTU its fragments must fit. Out of line: most packets are
 * neither SYNs nor too large, and pay one compare each (dp_fits).
 */
static __attribute__((noinline)) bool
dp_fits_slow(struct dp_ctx *x, uint16_t in, uint16_t out, uint16_t mtu, struct pkt *p,
	     struct dp_result *r, uint16_t *frag)
{
	struct ip4_hdr *ip = pkt_ip(p);
	uint32_t src, n;
	uint16_t m;

	if (p->proto == IPPROTO_TCP_ && (p->tcp_flags & TCPF_SYN)) {
		m = dp_mtu_min(mtu, dp_zone_mtu(x, in));
		if (m > 40 && mtu_clamp_mss(p, (uint16_t)(m - 40)))
			x->st->c[CVS_WC_MSS_CLAMPED]++;
	}
	if (!mtu || p->len - ETH_HLEN_ <= mtu)
		return true;
	/*
	 * Whose it is: the sandbox it comes from, else the one it goes to; this worker owns
	 * that slot either way (a frame for a sandbox is handed to its owner first).
	 */
	m = in != 0 && in != CVS_ZONE_HOST ? in : out != 0 && out != CVS_ZONE_HOST ? out : 0;
	if (m && x->slot_st && m - 1u < x->sh->max_sandboxes)
		x->slot_st[m - 1u].c[CVS_PC_MTU_EXCEEDED]++;
	if (!(ip->frag_off & htons(0x4000))) {
		*frag = mtu;
		return true;
	}
	/* From the router the sender sees: its gateway for a guest, the node for the world. */
	src = in == 0 ? x->cfg->node_ip : in == CVS_ZONE_HOST ? p->daddr :
	      dp_gw_ip(x->sh, in - 1u);
	n = mtu_frag_needed(p->data, p->len, p->data, p->len, src, mtu, pkt_eth(p)->dst,
			    pkt_eth(p)->src);
	if (!n) {
		dp_drop(x, r, CVS_DROP_TOO_BIG);
		return false;
	}
	x->st->c[CVS_WC_FRAG_NEEDED]++;
	r->action = DP_BACK;
	r->len = n;
	return false;
}

static inline bool
dp_fits(struct dp_ctx *x, uint16_t in, uint16_t out, struct pkt *p, struct dp_result *r,
	uint16_t *frag)
{
	uint16_t mtu = dp_zone_mtu(x, out);

	*frag = 0;
	if (__builtin_expect(!(p->tcp_flags & TCPF_SYN) && (!mtu || p->len - ETH_HLEN_ <= mtu),
			     1))
		return true;
	return dp_fits_slow(x, in, out, mtu, p, r, frag);
}

/* Translate a packet matching s->t[dir]: it leaves as the inverse of the other tuple. */
static inline void
dp_forward(struct dp_ctx *x, struct ct_session *s, int dir, struct pkt *p, struct dp_result *r)
{
	const struct ct_tuple *o = &s->t[dir ^ 1];
	uint16_t frag;

	if (!dp_policy_recheck(x, s, r) || !dp_fits(x, s->t[dir].zone, o->zone, p, r, &frag) ||
	    !dp_track(x, s, dir, p, r))
		return;
	nat_rewrite(p, o->daddr, o->saddr, o->dport, o->sport);
	if (dp_l2(x, s, o->zone, p, r))
		r->mtu = frag;
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
	struct ct6_tuple t6;	/* an IPv6 frame's tuple instead of t (h is its hash) */
};

/* What stage 1 left a frame for: nothing (decided), stages 2 and 3 of IPv4 or of IPv6. */
enum dp_go { DP_GO_NONE, DP_GO_V4, DP_GO_V6 };

/*
 * dp6.c, the IPv6 stages of a burst. Stage 1 for a parsed IPv6 frame (PKT_IPV6): true when
 * it is a flow's whole packet, its tuple and hash in pre->t6 and pre->h and its index line
 * prefetched, to go on in dp6_*_go(); false when decided already (r says how): neighbour
 * discovery, an ICMPv6 error, a fragment, a drop.
 */
bool dp6_sandbox_prep(struct dp_ctx *x, uint32_t slot, struct dp_pre *pre,
		      struct dp_result *r);
bool dp6_world_prep(struct dp_ctx *x, struct dp_pre *pre, struct dp_result *r);
void dp6_sandbox_go(struct dp_ctx *x, uint32_t slot, struct dp_pre *pre, struct dp_result *r);
void dp6_world_go(struct dp_ctx *x, struct dp_pre *pre, struct dp_result *r);
/* dp6.c: a parsed IPv6 frame from cube-dev, one at a time as the IPv4 host path's. */
void dp6_host_rx(struct dp_ctx *x, struct pkt *p, struct dp_result *r);

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
static inline struct ct_session *
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
static inline struct ct_session *
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

static inline struct ct_session *
dp_open(struct dp_ctx *x, const struct ct_tuple *t, const struct ct_tuple *rt, struct pkt *p,
	struct dp_result *r)
{
	return dp_open_hashed(x, t, ct_hash_tuple(x->ct, t), rt, ct_hash_tuple(x->ct, rt), p, r);
}

static inline void
dp_open_forward(struct dp_ctx *x, struct ct_session *s, struct pkt *p, struct dp_result *r)
{
	const struct ct_tuple *o = &s->t[1];
	uint16_t frag;

	if (!dp_fits(x, s->t[0].zone, o->zone, p, r, &frag)) {
		ct_delete(x->ct, s);
		return;
	}
	nat_rewrite(p, o->daddr, o->saddr, o->dport, o->sport);
	if (!dp_l2(x, s, o->zone, p, r))
		ct_delete(x->ct, s);
	else
		r->mtu = frag;
}

/* Answer a guest's SYN with a RST+ACK (its policy denies the destination). */
static inline void
dp_rst_back(struct dp_ctx *x, struct pkt *p, uint32_t slot, struct dp_result *r)
{
	uint8_t gw_mac[6];
	uint32_t len;

	dp_gw_mac(x->sh, slot, gw_mac);
	len = reply_rst(p, gw_mac);

	x->st->c[CVS_WC_RST_SENT]++;
	r->action = DP_BACK;
	r->len = len;
}

/* An ICMP error about a tracked flow goes on, translated, to the flow's other endpoint. */
static inline void
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

/* Answer an ARP request for any address with 'mac'. */
static inline void
dp_arp_reply(struct dp_ctx *x, struct pkt *p, const uint8_t mac[6], struct dp_result *r)
{
	uint32_t len = reply_arp(p, mac);

	x->st->c[CVS_WC_ARP_REPLIES]++;
	r->action = DP_BACK;
	r->len = len;
}

#endif /* CVS_DP_CORE_H */
