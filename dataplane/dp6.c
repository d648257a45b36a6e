/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 pipelines (per packet), issue 34, first cut: a guest's neighbour and router
 * solicitations answered (ndp.h); its TCP, UDP and ICMPv6 echo flows to the world translated
 * to the node's IPv6 address and a SNAT port of this worker's share (NAT66, endpoint-dependent
 * as NAT44), tracked in the worker's IPv6 session table (ct6.h); the world's replies to them
 * translated back. In a burst's three stages as IPv4 (hash and prefetch the index line, then
 * the session, then the work; dp_world.c, dp_sandbox.c), ICMPv6 errors and fragments decided
 * in the first.
 *
 * Flows towards a sandbox (exposed ports on the node's IPv6 address, hairpin) and the
 * guest's address are dp6_in.c's. ICMPv6 errors about a flow are translated either way and a
 * packet longer than its exit's MTU is answered with a Packet Too Big (icmperr6.c);
 * fragments (behind a lone Fragment header) follow their first as IPv4's do (dp_frag.c).
 *
 * Not carried yet, each a counted drop: other extension headers on a translated flow, the
 * host path. TCP windows are tracked as for IPv4 (tcpwin.h), unless --tcp-liberal.
 */
#include "dp6_int.h"
#include "dp_snat.h"
#include "icmperr6.h"
#include "ndp.h"

/*
 * Seconds as a default router: RFC 4861's default, three times the interval at which the
 * worker advertises again unasked (WORKER_RA_PERIOD), so a guest keeps its route.
 */
#define RA_LIFETIME	1800
#define PFX_VALID	86400
#define PFX_PREFERRED	14400

static bool
dp6_multicast(const uint8_t a[16])
{
	return a[0] == 0xff;
}

/* What the router advertisement to a slot's guest says, asked for or not. */
static void
dp6_ra_of(const struct dp_ctx *x, uint32_t slot, struct ndp_ra *ra)
{
	*ra = (struct ndp_ra){ .lifetime = RA_LIFETIME, .have_prefix = true, .valid = PFX_VALID,
			       .preferred = PFX_PREFERRED };
	ra->mtu = dp_zone_mtu(x, (uint16_t)(slot + 1));
	memcpy(ra->prefix, x->cfg->guest_pfx6, 8);
}

uint32_t
dp6_ra(struct dp_ctx *x, uint32_t slot, uint8_t *f)
{
	struct ndp_ra ra;
	uint8_t mac[6];

	dp6_ra_of(x, slot, &ra);
	dp_gw_mac(x->sh, slot, mac);
	return ndp_build_ra(f, mac, &ra);
}

/* A guest's neighbour discovery: true when the frame was one of ours to answer or drop. */
static bool
dp6_ndp(struct dp_ctx *x, uint32_t slot, struct pkt *p, struct dp_result *r)
{
	struct ndp_ra ra;
	uint8_t mac[6];

	if (p->proto != IPPROTO_ICMPV6_ || p->l4_off != ETH_HLEN_ + 40)
		return false;
	dp_gw_mac(x->sh, slot, mac);
	if (ndp_is_ns_for(p, ndp_gw_ll)) {
		r->len = ndp_reply_na(p, mac);
	} else if (ndp_is_rs(p)) {
		dp6_ra_of(x, slot, &ra);
		r->len = ndp_reply_ra(p, mac, &ra);
	} else {
		return false;
	}
	r->action = DP_BACK;
	x->st->c[CVS_WC_NDP_ANSWERED]++;
	return true;
}

static void
dp6_tuple_of(struct ct6_tuple *t, const struct pkt *p, uint16_t zone)
{
	const struct ipv6_hdr *ip6 = pkt_ip6(p);

	ct6_tuple_set(t, ip6->saddr, ip6->daddr, p->sport, p->dport, zone, p->proto);
}

/*
 * What every translated IPv6 packet must be: TCP, UDP or an ICMPv6 echo straight after the
 * header, or after a Fragment header alone (a first fragment; dp6_frag() takes the later
 * ones). False (dropped) otherwise.
 */
static bool
dp6_flow_ok(struct dp_ctx *x, const struct pkt *p, struct dp_result *r)
{
	const uint8_t *l4 = pkt_l4(p);

	if (p->frag && (!x->frag || pkt_ip6(p)->nxt != IP6_NH_FRAGMENT)) {
		dp_drop(x, r, CVS_DROP_FRAGMENT);
		return false;
	}
	if (p->l4_off != ETH_HLEN_ + 40 + (p->frag ? 8 : 0) ||
	    (p->proto != IPPROTO_TCP_ && p->proto != IPPROTO_UDP_ &&
	     !(p->proto == IPPROTO_ICMPV6_ && (p->frag == PKT_FRAG_LATER ||
					       l4[0] == ICMP6_ECHO_REQ || l4[0] == ICMP6_ECHO_REPLY)))) {
		dp_drop(x, r, CVS_DROP_IPV6);
		return false;
	}
	return true;
}

/*
 * Advance an IPv6 session for a packet in 'dir', as dp_track() an IPv4 one: a TCP segment is
 * checked against the window first (tcpwin.h) and, outside it, dropped and counted with
 * nothing changed. False when the packet is dropped.
 */
static bool
dp6_track(struct dp_ctx *x, struct ct6_session *s, int dir, const struct pkt *p,
	  struct dp_result *r)
{
	enum tcpwin_verdict v = TW_OK;
	uint8_t st = s->state, next;

	if (p->proto != IPPROTO_TCP_) {
		if (dir == CT_DIR_REPLY)
			st = CT_REPLIED;
	} else {
		if (!x->cfg->tcp_liberal)
			v = tcpwin6_track(x->ct6, s, dir, p);
		if (v == TW_BAD || v == TW_BAD_RST) {
			dp_drop(x, r, v == TW_BAD ? CVS_DROP_TCP_WINDOW : CVS_DROP_TCP_RST_WINDOW);
			return false;
		}
		next = ct_tcp_next(st, dir, p->tcp_flags);
		if (v == TW_KEEP) {	/* a RST in the window, off its sequence: challenged */
			x->st->c[CVS_WC_TCP_RST_INEXACT]++;
			next = st;
		}
		if (next >= CT_TCP_MAX)
			x->st->c[CVS_WC_TCP_INVALID]++;
		else
			st = next;
	}
	ct6_touch(x->ct6, s, st, x->now);
	return true;
}

/*
 * After a policy change, the first packet of each flow of that sandbox checks it again, as
 * dp_policy_recheck() does for IPv4; false (and the session gone) when it is now denied.
 */
static bool
dp6_policy_recheck(struct dp_ctx *x, struct ct6_session *s, struct dp_result *r)
{
	uint32_t slot = s->t[0].zone - 1u;
	uint16_t ver;

	if (!(s->flags & CT_F_POLICY) || slot >= x->sh->max_sandboxes ||
	    atomic_load_explicit(&x->sh->policy_ver[slot], memory_order_relaxed) == s->pol_ver)
		return true;
	if (dp_policy_allows6(dp_policy_of(x, slot, &ver), s->t[0].daddr)) {
		s->pol_ver = ver;
		return true;
	}
	ct6_delete(x->ct6, s);
	dp_drop(x, r, CVS_DROP_POLICY_CUT);
	return false;
}

/* Translate a packet of s->t[dir] as the inverse of the other tuple, and address its frame. */
void
dp6_forward(struct dp_ctx *x, struct ct6_session *s, int dir, struct pkt *p,
	    struct dp_result *r)
{
	const struct ct6_tuple *o = &s->t[dir ^ 1];
	uint16_t mtu = dp_zone_mtu(x, o->zone);

	if (!dp6_policy_recheck(x, s, r))
		return;
	if (mtu && p->len - ETH_HLEN_ > mtu) {
		dp6_too_big(x, s->t[dir].zone, mtu, p, r);
		return;
	}
	/* TCP never needs path MTU discovery: its SYNs say what the path carries (60 bytes of
	 * IPv6 and TCP headers under the MTU). */
	if (p->tcp_flags & TCPF_SYN && p->proto == IPPROTO_TCP_) {
		uint16_t m = dp_mtu_min(dp_zone_mtu(x, s->t[dir].zone), mtu);

		if (m > 60 + 536 && mtu_clamp_mss(p, (uint16_t)(m - 60)))
			x->st->c[CVS_WC_MSS_CLAMPED]++;
	}
	if (!dp6_track(x, s, dir, p, r))
		return;
	nat6_rewrite(p, o->daddr, o->saddr, o->dport, o->sport);
	dp_l2_to(x, s->peer_mac, o->zone, p, r);
}

bool
dp6_admit(struct dp_ctx *x, uint32_t slot, struct pkt *p, const uint8_t daddr[16],
	  uint16_t *ver, struct dp_result *r)
{
	const struct dp_limit *lim = x->sh->slot_lim ? &x->sh->slot_lim[slot] : NULL;
	uint16_t zone = (uint16_t)(slot + 1);
	uint32_t v;

	if (p->proto == IPPROTO_TCP_ ? !dp_pure_syn(p) :
	    p->proto == IPPROTO_ICMPV6_ && ((const uint8_t *)pkt_l4(p))[0] != ICMP6_ECHO_REQ) {
		dp_drop(x, r, CVS_DROP_EGRESS_PROTO);
		return false;
	}
	if (!dp_policy_allows6(dp_policy_of(x, slot, ver), daddr)) {
		if (p->proto == IPPROTO_TCP_) {
			uint8_t mac[6];

			dp_gw_mac(x->sh, slot, mac);
			r->len = reply_rst6(p, mac);
			r->action = DP_BACK;
			x->st->c[CVS_WC_RST_SENT]++;
		} else {
			dp_drop(x, r, CVS_DROP_POLICY_DENIED);
		}
		return false;
	}
	/* One session limit for both families. */
	v = lim ? atomic_load_explicit(&lim->sessions, memory_order_relaxed) : 0;
	if (v && ct_zone_opened(x->ct, zone) + ct6_zone_opened(x->ct6, zone) >= v) {
		dp_refuse(x, slot, CVS_DROP_LIMIT_SESSIONS, CVS_PC_LIM_SESSIONS, r);
		return false;
	}
	return true;
}

/* A new flow from a guest to the world: limits, a SNAT port, the session. */
static void
dp6_open(struct dp_ctx *x, uint32_t slot, struct pkt *p, const struct ct6_tuple *t,
	 struct dp_result *r)
{
	struct ct6_snat_req rq = { .lo = x->snat_lo, .hi = x->snat_hi, .start = 0,
				   .probes = SNAT_PROBES, .now = x->now };
	uint64_t nh = atomic_load_explicit(&x->sh->nh6_mac, memory_order_relaxed);
	uint16_t zone = (uint16_t)(slot + 1), ver;
	struct ct6_session *s;
	struct ct6_tuple rt;
	enum ct_refuse why;

	if (!dp6_admit(x, slot, p, t->daddr, &ver, r))
		return;
	if (!nh) {
		dp_drop(x, r, CVS_DROP_NO_NEIGHBOUR);
		return;
	}
	/* A token last: a flow refused for another reason takes none. */
	if (x->sh->slot_lim && !dp_rate_ok(x, slot, r))
		return;
	ct6_tuple_set(&rt, t->daddr, x->cfg->node_ip6, p->dport, 0, 0, p->proto);
	rq.zone = zone;
	rq.start = dp_snat_scatter(x);
	if (ct6_snat_port(x->ct6, &rt, &rq, NULL)) {
		dp_drop(x, r, CVS_DROP_SNAT_EXHAUSTED);
		return;
	}
	s = ct6_insert(x->ct6, t, &rt, p->proto == IPPROTO_TCP_ ? CT_TCP_SYN_SENT : CT_UNREPLIED,
		       x->now, &why);
	if (!s) {
		dp_drop(x, r, why == CT_FULL ? CVS_DROP_TABLE_FULL : CVS_DROP_TUPLE_CLASH);
		return;
	}
	dp_mac_put(s->peer_mac, nh);
	/* The opening SYN starts the window tracking of its direction. */
	if (p->proto == IPPROTO_TCP_ && !x->cfg->tcp_liberal)
		tcpwin6_open(x->ct6, s, p);
	s->flags |= CT_F_POLICY;
	s->pol_ver = ver;
	x->st->c[CVS_WC_SESS_CREATED]++;
	x->st->c[CVS_WC_EGRESS6_FLOWS]++;
	dp6_forward(x, s, CT_DIR_ORIG, p, r);
	if (r->action == DP_DROP)
		ct6_delete(x->ct6, s);
}

/* IPv6 is carried only with --node-ip6 and a table for its sessions; else it is counted. */
static bool
dp6_on(struct dp_ctx *x, struct dp_result *r)
{
	if (x->ct6 && x->cfg->have_ip6)
		return true;
	dp_drop(x, r, CVS_DROP_IPV6);
	return false;
}

/*
 * A flow's packet, its tuple t hashed (h; hint: the session stage 2 prefetched, or 0): true
 * when its session translated it, false when it has none.
 */
static inline bool
dp6_known(struct dp_ctx *x, struct pkt *p, const struct ct6_tuple *t, uint64_t h,
	  uint32_t hint, struct dp_result *r)
{
	struct ct6_session *s;
	int dir;

	s = dp6_lookup(x, t, h, hint, p, &dir);
	if (!s)
		return false;
	dp6_forward(x, s, dir, p, r);
	return true;
}

/* A guest's flow packet, a first fragment among them; the new flows it may open. */
static void
dp6_sandbox_flow(struct dp_ctx *x, uint32_t slot, struct pkt *p, const struct ct6_tuple *t,
		 uint64_t h, uint32_t hint, struct dp_result *r)
{
	if (dp6_known(x, p, t, h, hint, r))
		return;
	if (!memcmp(pkt_ip6(p)->daddr, x->cfg->node_ip6, 16))
		dp6_hairpin_open(x, slot, p, t, r);	/* dp6_in.c */
	else if (!memcmp(pkt_ip6(p)->daddr, x->cfg->sbx_pfx6, 12))
		dp_drop(x, r, CVS_DROP_IPV6);	/* the host path is the host's to open */
	else
		dp6_open(x, slot, p, t, r);
}

/* A world packet of a flow: a new one is to a host port. */
static void
dp6_world_flow(struct dp_ctx *x, uint32_t slot, struct pkt *p, const struct ct6_tuple *t,
	       uint64_t h, uint32_t hint, struct dp_result *r)
{
	(void)slot;
	if (!dp6_known(x, p, t, h, hint, r))
		dp6_hostport_open(x, p, t, r);	/* dp6_in.c */
}

/* A packet from the host: a new flow is one to a sandbox address. */
static void
dp6_host_flow(struct dp_ctx *x, uint32_t slot, struct pkt *p, const struct ct6_tuple *t,
	      uint64_t h, uint32_t hint, struct dp_result *r)
{
	(void)slot;
	if (!dp6_known(x, p, t, h, hint, r))
		dp6_host_open(x, p, t, r);	/* dp6_in.c */
}

typedef void dp6_flow_fn(struct dp_ctx *, uint32_t, struct pkt *, const struct ct6_tuple *,
			 uint64_t, uint32_t, struct dp_result *);

/*
 * The packets that do not go through the burst's stages: an ICMPv6 error about a flow, a
 * later fragment (translated as its first was, dp_frag.c), a first one (through 'flow' as a
 * whole packet, then recorded for its datagram). False for any other packet. Inlined in both
 * callers: a call here cost every IPv6 packet of a burst ~20 instructions (callgrind).
 */
static inline __attribute__((always_inline)) bool
dp6_special(struct dp_ctx *x, uint16_t zone, struct pkt *p, struct dp_result *r,
	    dp6_flow_fn *flow)
{
	struct ct6_tuple t;
	struct frag_key k;

	if (icmperr6_is_error(p)) {
		dp6_icmp_error(x, zone, p, r);
		return true;
	}
	if (!p->frag)
		return false;
	if (!dp6_flow_ok(x, p, r))
		return true;
	if (p->frag == PKT_FRAG_LATER) {
		dp_frag_later(x, zone, p, r);
		return true;
	}
	if (!dp_frag_begin(x, zone, p, &k, r))
		return true;
	dp6_tuple_of(&t, p, zone);
	flow(x, zone - 1u, p, &t, ct6_hash_tuple(x->ct6, &t), 0, r);
	dp_frag_first(x, &k, p, r);
	return true;
}

/* The rest of stage 1 once the addresses are checked: a flow's packet is hashed. */
static bool
dp6_prep_flow(struct dp_ctx *x, uint16_t zone, struct dp_pre *pre, struct dp_result *r,
	      dp6_flow_fn *flow)
{
	if (dp6_special(x, zone, &pre->p, r, flow) || !dp6_flow_ok(x, &pre->p, r))
		return false;
	dp6_tuple_of(&pre->t6, &pre->p, zone);
	pre->h = ct6_hash_tuple(x->ct6, &pre->t6);
	ct6_prefetch_line(x->ct6, pre->h);
	return true;
}

bool
dp6_sandbox_prep(struct dp_ctx *x, uint32_t slot, struct dp_pre *pre, struct dp_result *r)
{
	struct pkt *p = &pre->p;
	const struct ipv6_hdr *ip6 = pkt_ip6(p);

	if (!dp6_on(x, r))
		return false;
	x->st->c[CVS_WC_IPV6_PKTS]++;
	dp6_learn(x, slot, p);
	if (dp6_ndp(x, slot, p, r))
		return false;
	/*
	 * Its address is one of its prefix. Link-local and unspecified sources (its MLD reports,
	 * duplicate address checks, neighbour discovery for others) stay on its link; any other
	 * source is spoofed.
	 */
	if (memcmp(ip6->saddr, x->cfg->guest_pfx6, 8)) {
		dp_drop(x, r, ip6->saddr[0] == 0xfe || !ip6->saddr[0] ? CVS_DROP_IPV6 :
			CVS_DROP_GUEST_SPOOF);
		return false;
	}
	/* Multicast, other guests: not carried yet. */
	if (dp6_multicast(ip6->daddr) || !memcmp(ip6->daddr, x->cfg->guest_pfx6, 8)) {
		dp_drop(x, r, CVS_DROP_IPV6);
		return false;
	}
	return dp6_prep_flow(x, (uint16_t)(slot + 1), pre, r, dp6_sandbox_flow);
}

bool
dp6_world_prep(struct dp_ctx *x, struct dp_pre *pre, struct dp_result *r)
{
	if (!dp6_on(x, r))
		return false;
	x->st->c[CVS_WC_IPV6_PKTS]++;
	if (memcmp(pkt_ip6(&pre->p)->daddr, x->cfg->node_ip6, 16)) {
		dp_drop(x, r, CVS_DROP_NOT_NODE_IP);
		return false;
	}
	return dp6_prep_flow(x, 0, pre, r, dp6_world_flow);
}

/* Stage 3 (stage 2 prefetched the session the index line names). */
void
dp6_sandbox_go(struct dp_ctx *x, uint32_t slot, struct dp_pre *pre, struct dp_result *r)
{
	dp6_sandbox_flow(x, slot, &pre->p, &pre->t6, pre->h, pre->hint, r);
}

void
dp6_world_go(struct dp_ctx *x, struct dp_pre *pre, struct dp_result *r)
{
	dp6_world_flow(x, 0, &pre->p, &pre->t6, pre->h, pre->hint, r);
}

/*
 * The host path: the kernel resolves sandbox addresses on cube-dev (they are all behind us, as
 * ARP says for IPv4) and opens flows to them; its other IPv6 (router solicitations, MLD) is
 * counted as ipv6.
 */
void
dp6_host_rx(struct dp_ctx *x, struct pkt *p, struct dp_result *r)
{
	struct ct6_tuple t;
	uint8_t target[16];

	if (!dp6_on(x, r))
		return;
	x->st->c[CVS_WC_IPV6_PKTS]++;
	if (ndp_ns_target(p, target)) {
		if (!dp6_host_zone(x, target)) {
			dp_drop(x, r, CVS_DROP_IPV6);
			return;
		}
		r->len = ndp_reply_na(p, x->cfg->host_mac);
		r->action = DP_BACK;
		x->st->c[CVS_WC_NDP_ANSWERED]++;
		return;
	}
	if (memcmp(pkt_ip6(p)->daddr, x->cfg->sbx_pfx6, 12)) {
		dp_drop(x, r, CVS_DROP_IPV6);
		return;
	}
	if (dp6_special(x, CVS_ZONE_HOST, p, r, dp6_host_flow) || !dp6_flow_ok(x, p, r))
		return;
	dp6_tuple_of(&t, p, CVS_ZONE_HOST);
	dp6_host_flow(x, 0, p, &t, ct6_hash_tuple(x->ct6, &t), 0, r);
}
