/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet pipeline: classify a frame from the world or from a sandbox, find or create its
 * session, translate it and rewrite its Ethernet header. Per packet.
 */
#include <string.h>
#include <arpa/inet.h>

#include "dp.h"

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

/* Advance the session state for a packet seen in direction 'dir'. */
static void
dp_track(struct dp_ctx *x, struct ct_session *s, int dir, const struct pkt *p)
{
	uint8_t st = s->state;

	if (p->proto == IPPROTO_TCP_) {
		uint8_t next = ct_tcp_next(st, dir, p->tcp_flags);

		/* Invalid or ignored transitions leave the state as it was (unlike CubeVS). */
		if (next >= CT_TCP_MAX)
			x->st->c[CVS_WC_TCP_INVALID]++;
		else
			st = next;
	} else if (dir == CT_DIR_REPLY) {
		st = CT_REPLIED;
	}
	ct_touch(x->ct, s, st, x->now);
}

/*
 * Translate a packet matching s->t[dir]: it leaves as the inverse of the other tuple, and
 * towards the port of the other tuple's zone.
 */
static void
dp_forward(struct dp_ctx *x, struct ct_session *s, int dir, struct pkt *p, struct dp_result *r)
{
	const struct ct_tuple *o = &s->t[dir ^ 1];
	struct eth_hdr *eth = pkt_eth(p);

	if (o->zone != 0) {
		uint32_t slot = o->zone - 1u;

		if (slot >= x->sh->max_sandboxes ||
		    !atomic_load_explicit(&x->sh->slot_alive[slot], memory_order_relaxed)) {
			dp_drop(x, r, CVS_DROP_SANDBOX_GONE);
			return;
		}
		nat_rewrite(p, o->daddr, o->saddr, o->dport, o->sport);
		memcpy(eth->dst, x->cfg->guest_mac, 6);
		memcpy(eth->src, x->cfg->gw_mac, 6);
		r->action = DP_TO_SANDBOX;
		r->slot = slot;
	} else {
		nat_rewrite(p, o->daddr, o->saddr, o->dport, o->sport);
		memcpy(eth->dst, s->peer_mac, 6);
		memcpy(eth->src, x->cfg->world_mac, 6);
		r->action = DP_TO_WORLD;
	}
	r->len = p->len;
}

void
dp_world_rx(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_result *r)
{
	struct ct_session *s;
	struct ct_tuple t, rt;
	enum ct_refuse why;
	struct pkt p;
	uint32_t hp;
	int dir;

	if (pkt_parse(&p, frame, len) != PKT_IPV4) {
		dp_drop(x, r, p.kind == PKT_ARP ? CVS_DROP_ARP : (enum cvs_drop)p.drop);
		return;
	}
	if (p.daddr != x->cfg->node_ip) {
		dp_drop(x, r, CVS_DROP_NOT_NODE_IP);
		return;
	}
	dp_tuple_of(&t, &p, 0);
	s = ct_lookup(x->ct, &t, &dir);
	if (s) {
		dp_track(x, s, dir, &p);
		dp_forward(x, s, dir, &p, r);
		return;
	}
	if (p.proto != IPPROTO_TCP_) {
		dp_drop(x, r, CVS_DROP_NO_SESSION);
		return;
	}
	hp = atomic_load_explicit(&x->sh->hostport[ntohs(p.dport)], memory_order_acquire);
	if (!hp) {
		dp_drop(x, r, CVS_DROP_NO_HOSTPORT);
		return;
	}
	/* Only a connection opening creates a session: SYN without ACK, FIN or RST. */
	if ((p.tcp_flags & (TCPF_SYN | TCPF_ACK | TCPF_FIN | TCPF_RST)) != TCPF_SYN) {
		dp_drop(x, r, CVS_DROP_NO_SESSION);
		return;
	}
	rt.saddr = x->cfg->guest_ip;
	rt.daddr = p.saddr;
	rt.sport = htons((uint16_t)(hp & 0xffff));
	rt.dport = p.sport;
	rt.zone = (uint16_t)(hp >> 16);
	rt.proto = p.proto;
	rt.pad = 0;
	s = ct_insert(x->ct, &t, &rt, CT_TCP_SYN_SENT, x->now, &why);
	if (!s) {
		dp_drop(x, r, why == CT_FULL ? CVS_DROP_TABLE_FULL : CVS_DROP_TUPLE_CLASH);
		return;
	}
	x->st->c[CVS_WC_SESS_CREATED]++;
	memcpy(s->peer_mac, pkt_eth(&p)->src, 6);
	dp_forward(x, s, CT_DIR_ORIG, &p, r);
	if (r->action == DP_DROP)
		ct_delete(x->ct, s);
}

/* Answer a guest's ARP request for any address with the gateway MAC. */
static void
dp_arp(struct dp_ctx *x, struct pkt *p, struct dp_result *r)
{
	struct eth_hdr *eth = pkt_eth(p);
	struct arp_hdr *a = (struct arp_hdr *)(p->data + ETH_HLEN_);
	uint32_t tpa;

	if (a->htype != htons(1) || a->ptype != htons(ETHTYPE_IPV4) || a->hlen != 6 ||
	    a->plen != 4 || a->op != htons(1)) {
		dp_drop(x, r, CVS_DROP_ARP);
		return;
	}
	tpa = a->tpa;
	a->op = htons(2);
	memcpy(a->tha, a->sha, 6);
	a->tpa = a->spa;
	memcpy(a->sha, x->cfg->gw_mac, 6);
	a->spa = tpa;
	memcpy(eth->dst, a->tha, 6);
	memcpy(eth->src, x->cfg->gw_mac, 6);
	x->st->c[CVS_WC_ARP_REPLIES]++;
	r->action = DP_BACK;
	r->len = ETH_HLEN_ + sizeof(*a);
}

void
dp_sandbox_rx(struct dp_ctx *x, uint32_t slot, uint8_t *frame, uint32_t len,
	      struct dp_result *r)
{
	struct ct_session *s;
	struct ct_tuple t;
	struct pkt p;
	int dir;

	switch (pkt_parse(&p, frame, len)) {
	case PKT_ARP:
		dp_arp(x, &p, r);
		return;
	case PKT_BAD:
		dp_drop(x, r, (enum cvs_drop)p.drop);
		return;
	}
	dp_tuple_of(&t, &p, (uint16_t)(slot + 1));
	s = ct_lookup(x->ct, &t, &dir);
	if (!s) {
		/* Egress (SNAT) flows are not opened here yet: only replies of tracked flows. */
		dp_drop(x, r, CVS_DROP_GUEST_NO_SESSION);
		return;
	}
	dp_track(x, s, dir, &p);
	dp_forward(x, s, dir, &p, r);
}
