/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 flows towards a sandbox (per packet), issue 34: a world client's connection to a host
 * port of the node's IPv6 address (DNAT66 to the guest's address and container port: the
 * same host port answers on both families), a guest's connection to a host port of the
 * node's IPv6 address (hairpin: the target sees the node's IPv6 address and a SNAT port, and
 * answers through us), and the guest's own address, which the node does not assign
 * (guest6.h): learnt from its frames.
 *
 * The sessions, as dp_core.h's table says for IPv4:
 *   exposed port  world {client, node6, cport', hport}   sandbox {guest6, client, cport, cport'}
 *   hairpin       sandbox A {guest6, node6, gport, hport} sandbox B {guest6, node6, cport, snat}
 */
#include "dp6_int.h"
#include "dp_snat.h"
#include "guest6.h"
#include "ndp.h"

void
dp6_guest_addr(const struct dp_ctx *x, uint32_t slot, uint8_t out[16])
{
	uint64_t iid = x->sh->slot_iid6 ?
		       atomic_load_explicit(&x->sh->slot_iid6[slot], memory_order_relaxed) : 0;

	if (!iid) {
		uint8_t mac[6];

		dp_mac_put(mac, atomic_load_explicit(&x->sh->slot_mac[slot], memory_order_relaxed));
		iid = guest6_iid_of_mac(mac);
	}
	guest6_addr(out, x->cfg->guest_pfx6, iid);
}

/*
 * The target of a duplicate address check (a neighbour solicitation from the unspecified
 * address, to the target's solicited-node group), or NULL: what a guest says it is about to
 * hold before it sends anything from it.
 */
static const uint8_t *
dp6_dad_target(const struct pkt *p)
{
	static const uint8_t unspec[16];
	const uint8_t *m = p->data + p->l4_off;

	if (p->proto != IPPROTO_ICMPV6_ || p->l4_off != ETH_HLEN_ + 40 ||
	    p->len - p->l4_off < 24 || m[0] != ICMP6_NS ||
	    memcmp(pkt_ip6(p)->saddr, unspec, 16))
		return NULL;
	/* Checked as RFC 4861 says (ndp_is_ns_for() against its own target). */
	return ndp_is_ns_for(p, m + 8) ? m + 8 : NULL;
}

/*
 * Each slot learns only from the frames of its own port, so no guest can move another
 * sandbox's address; a guest that changes its own only redirects its own exposed ports.
 * One relaxed load per IPv6 frame, a store only when the identifier changes.
 */
void
dp6_learn(struct dp_ctx *x, uint32_t slot, const struct pkt *p)
{
	const uint8_t *a = pkt_ip6(p)->saddr;
	uint64_t iid;

	if (!x->sh->slot_iid6)
		return;
	if (memcmp(a, x->cfg->guest_pfx6, 8)) {
		a = dp6_dad_target(p);
		if (!a || memcmp(a, x->cfg->guest_pfx6, 8))
			return;
	}
	iid = guest6_iid_of(a);
	if (!guest6_iid_usable(iid) ||
	    atomic_load_explicit(&x->sh->slot_iid6[slot], memory_order_relaxed) == iid)
		return;
	atomic_store_explicit(&x->sh->slot_iid6[slot], iid, memory_order_relaxed);
	x->st->c[CVS_WC_GUEST6_LEARNT]++;
}

struct ct6_session *
dp6_lookup(struct dp_ctx *x, const struct ct6_tuple *t, uint64_t h, uint32_t hint,
	   const struct pkt *p, int *dir)
{
	struct ct6_session *s = ct6_lookup_hint(x->ct6, t, h, hint, dir);

	if (s && *dir == CT_DIR_ORIG && dp_pure_syn(p) &&
	    (s->state == CT_TCP_TIME_WAIT || s->state == CT_TCP_CLOSE)) {
		ct6_delete(x->ct6, s);
		x->st->c[CVS_WC_PORT_REUSE]++;
		return NULL;
	}
	return s;
}

/* The inbound limit of the sandbox of 'zone', over the sessions of both families. */
static bool
dp6_inbound_ok(struct dp_ctx *x, uint16_t zone, struct dp_result *r)
{
	uint32_t v;

	if (!x->sh->slot_lim || !zone || zone > x->sh->max_sandboxes)
		return true;
	v = dp_lim(&x->sh->slot_lim[zone - 1u].inbound);
	if (v && ct_zone_inbound(x->ct, zone) + ct6_zone_inbound(x->ct6, zone) >= v) {
		dp_refuse(x, zone - 1u, CVS_DROP_LIMIT_INBOUND, CVS_PC_LIM_INBOUND, r);
		return false;
	}
	return true;
}

/*
 * The host port's entry for a TCP SYN (0: none, r says why; 'none' when the port is no host
 * port), the sandbox it names alive.
 */
static uint32_t
dp6_hostport(struct dp_ctx *x, const struct pkt *p, enum cvs_drop none, struct dp_result *r)
{
	uint32_t hp = 0;

	if (p->proto == IPPROTO_TCP_)
		hp = atomic_load_explicit(&x->sh->hostport[ntohs(p->dport)],
					  memory_order_acquire);
	if (!hp) {
		dp_drop(x, r, none);
		return 0;
	}
	if (!dp_pure_syn(p)) {
		dp_drop(x, r, CVS_DROP_NO_SESSION);
		return 0;
	}
	if (!dp_slot_alive(x, (hp >> 16) - 1u)) {
		dp_drop(x, r, CVS_DROP_SANDBOX_GONE);
		return 0;
	}
	return hp;
}

/* Insert the session and send its first packet on; false (nothing kept) when it cannot go. */
static struct ct6_session *
dp6_in_insert(struct dp_ctx *x, const struct ct6_tuple *t, const struct ct6_tuple *rt,
	      struct pkt *p, struct dp_result *r)
{
	uint64_t evicted = x->ct6->cnt.evicted, expired = x->ct6->cnt.expired;
	struct ct6_session *s;
	enum ct_refuse why;

	s = ct6_insert(x->ct6, t, rt, p->proto == IPPROTO_TCP_ ? CT_TCP_SYN_SENT : CT_UNREPLIED,
		       x->now, &why);
	x->st->c[CVS_WC_SESS_EVICTED] += x->ct6->cnt.evicted - evicted;
	x->st->c[CVS_WC_SESS_EXPIRED] += x->ct6->cnt.expired - expired;
	if (!s) {
		dp_drop(x, r, why == CT_FULL ? CVS_DROP_TABLE_FULL : CVS_DROP_TUPLE_CLASH);
		return NULL;
	}
	/* The opening SYN starts the window tracking of its direction, as in dp6_open(). */
	if (p->proto == IPPROTO_TCP_ && !x->cfg->tcp_liberal)
		tcpwin6_open(x->ct6, s, p);
	x->st->c[CVS_WC_SESS_CREATED]++;
	return s;
}

static void
dp6_in_send(struct dp_ctx *x, struct ct6_session *s, struct pkt *p, struct dp_result *r)
{
	dp6_forward(x, s, CT_DIR_ORIG, p, r);
	if (r->action == DP_DROP)
		ct6_delete(x->ct6, s);
}

/*
 * A source a world client can have: not our own addresses (such a session would talk to
 * itself), not link-local (a client on the link talks to the node's link-local address,
 * which is the kernel's), not unspecified or loopback. Multicast is the parser's drop.
 */
static bool
dp6_world_source_ok(const struct dp_ctx *x, const uint8_t a[16])
{
	static const uint8_t zero[15];

	return memcmp(a, x->cfg->node_ip6, 16) && memcmp(a, x->cfg->guest_pfx6, 8) &&
	       !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80) &&
	       !(!memcmp(a, zero, 15) && a[15] <= 1);
}

void
dp6_hostport_open(struct dp_ctx *x, struct pkt *p, const struct ct6_tuple *t,
		  struct dp_result *r)
{
	const struct ipv6_hdr *ip6 = pkt_ip6(p);
	struct ct6_session *s;
	struct ct6_tuple rt;
	uint8_t guest[16];
	uint32_t hp;

	hp = dp6_hostport(x, p, p->proto == IPPROTO_TCP_ ? CVS_DROP_NO_HOSTPORT :
			  CVS_DROP_NO_SESSION, r);
	if (!hp)
		return;
	if (!dp6_world_source_ok(x, ip6->saddr)) {
		dp_drop(x, r, CVS_DROP_BAD_SOURCE);
		return;
	}
	if (!dp6_inbound_ok(x, (uint16_t)(hp >> 16), r))
		return;
	dp6_guest_addr(x, (hp >> 16) - 1u, guest);
	ct6_tuple_set(&rt, guest, ip6->saddr, htons((uint16_t)(hp & 0xffff)), p->sport,
		      (uint16_t)(hp >> 16), p->proto);
	s = dp6_in_insert(x, t, &rt, p, r);
	if (!s)
		return;
	memcpy(s->peer_mac, pkt_eth(p)->src, 6);
	x->st->c[CVS_WC_HOSTPORT6_FLOWS]++;
	dp6_in_send(x, s, p, r);
}

/*
 * The limits of a sandbox opening a hairpin flow, as dp_limits_open() for IPv4: its sessions
 * (both families), its SNAT share towards the target, the target's inbound limit, then a
 * token (last: a flow refused for another reason takes none).
 */
static bool
dp6_hairpin_limits(struct dp_ctx *x, uint32_t slot, const struct ct6_tuple *rt,
		   struct dp_result *r)
{
	const struct dp_limit *lim;
	uint16_t zone = (uint16_t)(slot + 1);
	uint32_t v;

	if (!x->sh->slot_lim)
		return true;
	lim = &x->sh->slot_lim[slot];
	v = dp_lim(&lim->sessions);
	if (v && ct_zone_opened(x->ct, zone) + ct6_zone_opened(x->ct6, zone) >= v) {
		dp_refuse(x, slot, CVS_DROP_LIMIT_SESSIONS, CVS_PC_LIM_SESSIONS, r);
		return false;
	}
	v = dp_lim(&lim->snat);
	if (v && ct6_ep_count(x->ct6, zone, rt->zone, rt->saddr, rt->sport, rt->proto) >= v) {
		dp_refuse(x, slot, CVS_DROP_LIMIT_SNAT, CVS_PC_LIM_SNAT, r);
		return false;
	}
	return dp6_inbound_ok(x, rt->zone, r) && dp_rate_ok(x, slot, r);
}

/*
 * A guest's flow to the node's IPv6 address that is no hairpin: to the host stack through
 * cube-dev, seen from the sandbox's host-path address (IPv4's guest → node IP flow), the
 * policy deciding for the node's address as for any destination. Without cube-dev, 'ipv6'.
 */
static void
dp6_node_open(struct dp_ctx *x, uint32_t slot, struct pkt *p, const struct ct6_tuple *t,
	      struct dp_result *r)
{
	uint32_t ip = atomic_load_explicit(&x->sh->slot_ip[slot], memory_order_relaxed);
	struct ct6_session *s;
	struct ct6_tuple rt;
	uint8_t sbx6[16];
	uint16_t ver;

	if (!x->cfg->have_host || !ip) {
		dp_drop(x, r, !ip ? CVS_DROP_SANDBOX_GONE : CVS_DROP_IPV6);
		return;
	}
	if (!dp6_admit(x, slot, p, x->cfg->node_ip6, &ver, r) ||
	    (x->sh->slot_lim && !dp_rate_ok(x, slot, r)))
		return;
	sbx6_addr(sbx6, x->cfg->sbx_pfx6, ip);
	ct6_tuple_set(&rt, x->cfg->node_ip6, sbx6, p->dport, p->sport, CVS_ZONE_HOST, p->proto);
	s = dp6_in_insert(x, t, &rt, p, r);
	if (!s)
		return;
	s->flags |= CT_F_POLICY;
	s->pol_ver = ver;
	x->st->c[CVS_WC_HOST_FLOWS]++;
	dp6_in_send(x, s, p, r);
}

void
dp6_hairpin_open(struct dp_ctx *x, uint32_t slot, struct pkt *p, const struct ct6_tuple *t,
		 struct dp_result *r)
{
	struct ct6_snat_req rq = { .lo = x->snat_lo, .hi = x->snat_hi,
				   .zone = (uint16_t)(slot + 1), .probes = SNAT_PROBES,
				   .now = x->now };
	const struct dp_policy *pol;
	struct ct6_session *s;
	struct ct6_tuple rt;
	uint8_t guest[16];
	uint16_t ver;
	uint32_t hp;

	/* Anything else to the node's IPv6 address goes to the host through cube-dev. */
	if (p->proto != IPPROTO_TCP_ ||
	    !atomic_load_explicit(&x->sh->hostport[ntohs(p->dport)], memory_order_acquire)) {
		dp6_node_open(x, slot, p, t, r);
		return;
	}
	hp = dp6_hostport(x, p, CVS_DROP_IPV6, r);
	if (!hp)
		return;
	/* The node's IPv6 address is a destination like any (the IPv4 hairpin: the node IP). */
	pol = dp_policy_of(x, slot, &ver);
	if (!dp_policy_allows6(pol, x->cfg->node_ip6)) {
		uint8_t mac[6];

		dp_gw_mac(x->sh, slot, mac);
		r->len = reply_rst6(p, mac);
		r->action = DP_BACK;
		x->st->c[CVS_WC_RST_SENT]++;
		return;
	}
	dp6_guest_addr(x, (hp >> 16) - 1u, guest);
	ct6_tuple_set(&rt, guest, x->cfg->node_ip6, htons((uint16_t)(hp & 0xffff)), 0,
		      (uint16_t)(hp >> 16), p->proto);
	if (!dp6_hairpin_limits(x, slot, &rt, r))
		return;
	rq.start = dp_snat_scatter(x);
	if (ct6_snat_port(x->ct6, &rt, &rq, NULL)) {
		dp_drop(x, r, CVS_DROP_SNAT_EXHAUSTED);
		return;
	}
	s = dp6_in_insert(x, t, &rt, p, r);
	if (!s)
		return;
	s->flags |= CT_F_POLICY;
	s->pol_ver = ver;
	x->st->c[CVS_WC_HAIRPIN6_FLOWS]++;
	dp6_in_send(x, s, p, r);
}

uint32_t
dp6_host_zone(const struct dp_ctx *x, const uint8_t a[16])
{
	uint32_t v4;

	if (!sbx6_ip4(a, x->cfg->sbx_pfx6, &v4))
		return 0;
	return v4 == x->cfg->host_ip ? 0 : dp_sbx_zone(x, v4);
}

/*
 * A host flow to a sandbox address: as the IPv4 host path, but the guest sees the host's own
 * source address, which it answers through its default router (us). IPv4 shows it its
 * gateway address; an IPv6 guest knows us only by a link-local address, which cannot be the
 * source of a flow to its global one.
 */
void
dp6_host_open(struct dp_ctx *x, struct pkt *p, const struct ct6_tuple *t, struct dp_result *r)
{
	const struct ipv6_hdr *ip6 = pkt_ip6(p);
	uint32_t zone = dp6_host_zone(x, ip6->daddr);
	struct ct6_session *s;
	struct ct6_tuple rt;
	uint8_t guest[16];

	if (!zone) {
		dp_drop(x, r, CVS_DROP_NOT_SANDBOX_IP);
		return;
	}
	if (p->proto == IPPROTO_TCP_ ? !dp_pure_syn(p) :
	    p->proto == IPPROTO_ICMPV6_ && *(const uint8_t *)pkt_l4(p) != ICMP6_ECHO_REQ) {
		dp_drop(x, r, CVS_DROP_NO_SESSION);
		return;
	}
	if (!dp_slot_alive(x, zone - 1u)) {
		dp_drop(x, r, CVS_DROP_SANDBOX_GONE);
		return;
	}
	/* Inbound for the sandbox, and a token of its rate, as an IPv4 host flow. */
	if (!dp6_inbound_ok(x, (uint16_t)zone, r) ||
	    (x->sh->slot_lim && !dp_rate_ok(x, zone - 1u, r)))
		return;
	dp6_guest_addr(x, zone - 1u, guest);
	ct6_tuple_set(&rt, guest, ip6->saddr, p->dport, p->sport, (uint16_t)zone, p->proto);
	s = dp6_in_insert(x, t, &rt, p, r);
	if (!s)
		return;
	x->st->c[CVS_WC_HOST_FLOWS]++;
	dp6_in_send(x, s, p, r);
}
