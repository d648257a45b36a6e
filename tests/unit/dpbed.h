/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A pipeline test bed on byte buffers, shared by the fuzz target and the malformed-packet
 * catalogue: two sandboxes with exposed ports, one of them with an egress policy, cube-dev,
 * next hops, and a set of live sessions of every kind (exposed port, egress TCP/UDP/ICMP,
 * hairpin, host path) opened through the pipeline itself. Also the checks that must hold
 * after any frame: the session table is consistent and checksums keep their validity.
 */
#ifndef CVS_DPBED_H
#define CVS_DPBED_H

#include <stdio.h>
#include <stdlib.h>

#include "dp.h"
#include "pktgen.h"

#define BED_SLOTS	8
#define BED_SLOT_A	1	/* exposes 8080 on host port 20005 */
#define BED_SLOT_B	2	/* exposes 9090 on host port 20006; denies 198.19.0.0/16 */
#define BED_HP_A	20005
#define BED_HP_B	20006

struct dpbed {
	struct dp_cfg cfg;
	struct dp_shared *sh;
	_Atomic uint8_t alive[BED_SLOTS];
	_Atomic(const struct dp_policy *) pols[BED_SLOTS];
	_Atomic uint16_t polver[BED_SLOTS];
	_Atomic uint32_t slot_ip[BED_SLOTS];
	_Atomic uint64_t slot_mac[BED_SLOTS];
	struct dp_guest guests[BED_SLOTS];
	_Atomic uint16_t ip2slot[64];
	struct dp_policy pol_b;
	struct dp_nh_reqs nhreq;
	struct cvs_stats st;
	/* Per-sandbox limits (all 0: none) and what they refuse, by slot. */
	struct dp_limit lim[BED_SLOTS];
	struct dp_bucket bucket[BED_SLOTS];
	struct cvs_port_stats pst[BED_SLOTS];
	struct dp_ctx x;
	uint32_t capacity;
	uint32_t base_sessions;	/* sessions after the preload */
	/* The tuples of the preloaded flows, as their packets look on the wire. */
	uint32_t client, remote, world_peer, sbx_ip_a, sbx_ip_b;
	uint16_t exp_sport;	/* client port of the established exposed-port flow */
	uint16_t egress_gport;	/* guest port of the egress TCP flow of sandbox A */
	uint16_t egress_snat;	/* its SNAT port (network order) */
	uint64_t csum_done0;	/* csum_completed before the frame bed_rx() took last */
};

static const uint8_t bed_client_mac[6] = { 2, 0, 0, 0, 0, 0x11 };
static const uint8_t bed_router_mac[6] = { 2, 0, 0, 0, 0, 0x33 };

/* Every frame through one port: 0 world, 1 sandbox A, 2 sandbox B, 3 cube-dev. */
static inline void
bed_rx(struct dpbed *b, int port, uint8_t *f, uint32_t len, struct dp_result *r)
{
	memset(r, 0, sizeof(*r));
	b->csum_done0 = b->st.c[CVS_WC_CSUM_COMPLETED];
	switch (port & 3) {
	case 0:
		dp_world_rx(&b->x, f, len, r);
		break;
	case 1:
		dp_sandbox_rx(&b->x, BED_SLOT_A, f, len, r);
		break;
	case 2:
		dp_sandbox_rx(&b->x, BED_SLOT_B, f, len, r);
		break;
	default:
		dp_host_rx(&b->x, f, len, r);
		break;
	}
}

static inline int
bed_init(struct dpbed *b, uint32_t capacity)
{
	static const uint8_t gm[6] = { 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc };
	static const uint8_t gw[6] = { 0x20, 0x90, 0x6f, 0xcf, 0xcf, 0xcf };
	static const uint8_t wm[6] = { 2, 0, 0, 0, 0, 0x99 };
	static const uint8_t hm[6] = { 2, 0, 0, 0, 0, 0xaa };
	static const uint8_t hp[6] = { 2, 0, 0, 0, 0, 0xbb };
	struct dp_cfg *c = &b->cfg;

	memset(b, 0, sizeof(*b));
	b->sh = calloc(1, sizeof(*b->sh));
	if (!b->sh)
		return -1;
	b->capacity = capacity;
	c->node_ip = ip4("198.18.0.1");
	c->guest_ip = ip4("169.254.68.6");
	c->gw_ip = ip4("169.254.68.5");
	c->host_ip = ip4("192.168.0.1");
	c->sbx_net = ip4("192.168.0.0");
	c->sbx_mask = ip4("255.255.255.192");
	c->world_net = ip4("198.18.0.0");
	c->world_mask = ip4("255.255.255.0");
	/* A narrow SNAT range so exhaustion is reachable. */
	c->snat_lo = 30000;
	c->snat_hi = 30015;
	memcpy(c->guest_mac, gm, 6);
	memcpy(c->gw_mac, gw, 6);
	memcpy(c->world_mac, wm, 6);
	memcpy(c->host_mac, hm, 6);
	memcpy(c->host_peer_mac, hp, 6);
	c->have_host = true;
	b->client = ip4("198.18.0.2");
	b->world_peer = ip4("198.18.0.3");
	b->remote = ip4("198.19.0.2");
	b->sbx_ip_a = ip4("192.168.0.2");
	b->sbx_ip_b = ip4("192.168.0.3");
	b->sh->slot_alive = b->alive;
	b->sh->policy = b->pols;
	b->sh->policy_ver = b->polver;
	b->sh->slot_ip = b->slot_ip;
	b->sh->slot_mac = b->slot_mac;
	b->sh->guest = b->guests;
	for (int i = 0; i < BED_SLOTS; i++) {
		atomic_store(&b->slot_mac[i], dp_mac_pack(gm));
		dp_guest_set(&b->guests[i], c->guest_ip, c->gw_ip, c->gw_mac);
	}
	b->sh->ip2slot = b->ip2slot;
	b->sh->ip2slot_size = 64;
	b->sh->max_sandboxes = BED_SLOTS;
	b->sh->slot_lim = b->lim;
	b->pol_b.internet = true;
	b->pol_b.ndeny = 1;
	b->pol_b.deny[0].net = ip4("198.19.0.0");
	b->pol_b.deny[0].mask = ip4("255.255.0.0");
	b->x.cfg = c;
	b->x.sh = b->sh;
	b->x.st = &b->st;
	b->x.slot_st = b->pst;
	b->x.bucket = b->bucket;
	b->x.nhreq = &b->nhreq;
	/* One worker: it owns the whole SNAT range. */
	b->x.snat_lo = c->snat_lo;
	b->x.snat_hi = c->snat_hi;
	return 0;
}

static inline void
bed_fini(struct dpbed *b)
{
	ct_destroy(b->x.ct);
	free(b->sh);
}

/* Send a built frame; returns the action. */
static inline int
bed_send(struct dpbed *b, int port, uint8_t proto, uint32_t s, uint32_t d, uint16_t sp,
	 uint16_t dp, uint8_t flags, uint32_t paylen, uint8_t *out)
{
	struct dp_result r;
	uint8_t f[256];
	uint32_t n = build_frame(f, proto, s, d, htons(sp), htons(dp), flags, paylen);

	if (port == 0)
		memcpy(f + 6, bed_client_mac, 6);
	bed_rx(b, port, f, n, &r);
	if (out)
		memcpy(out, f, n);
	return r.action;
}

/*
 * A fresh empty table, counters and limits cleared, sandboxes A and B alive with their host
 * ports, the next hops, the clock at 1000. Returns 0, or 1 when the table cannot be made.
 */
static inline int
bed_table(struct dpbed *b)
{
	int i;

	ct_destroy(b->x.ct);
	b->x.ct = ct_create(b->capacity, BED_SLOTS, NULL);
	if (!b->x.ct)
		return 1;
	memset(&b->st, 0, sizeof(b->st));
	memset(b->lim, 0, sizeof(b->lim));
	memset(b->bucket, 0, sizeof(b->bucket));
	memset(b->pst, 0, sizeof(b->pst));
	memset(b->sh->hostport, 0, sizeof(b->sh->hostport));
	dp_nh_clear(&b->sh->nh);
	atomic_store(&b->nhreq.head, 0);
	atomic_store(&b->nhreq.tail, 0);
	for (i = 0; i < BED_SLOTS; i++) {
		atomic_store(&b->alive[i], 0);
		atomic_store(&b->pols[i], NULL);
		atomic_store(&b->polver[i], 0);
		atomic_store(&b->slot_ip[i], 0);
	}
	memset(b->ip2slot, 0, sizeof(b->ip2slot));
	atomic_store(&b->alive[BED_SLOT_A], 1);
	atomic_store(&b->alive[BED_SLOT_B], 1);
	atomic_store(&b->slot_ip[BED_SLOT_A], b->sbx_ip_a);
	atomic_store(&b->slot_ip[BED_SLOT_B], b->sbx_ip_b);
	atomic_store(&b->ip2slot[2], BED_SLOT_A + 1);
	atomic_store(&b->ip2slot[3], BED_SLOT_B + 1);
	atomic_store(&b->pols[BED_SLOT_B], &b->pol_b);
	atomic_store(&b->polver[BED_SLOT_B], 1);
	atomic_store(&b->sh->hostport[BED_HP_A], dp_hostport_entry(BED_SLOT_A, 8080));
	atomic_store(&b->sh->hostport[BED_HP_B], dp_hostport_entry(BED_SLOT_B, 9090));
	dp_nh_store(&b->sh->nh, 0, bed_router_mac);
	dp_nh_store(&b->sh->nh, b->client, bed_client_mac);
	b->x.now = 1000;
	b->x.snat_cursor = 1;
	return 0;
}

/*
 * Fresh table and the preloaded flows. Returns 0, or the number of the preload step that did
 * not do what it should (a bug in the pipeline, not in the input).
 */
static inline int
bed_reset(struct dpbed *b)
{
	const struct dp_cfg *c = &b->cfg;
	uint8_t f[256];

	if (bed_table(b))
		return 1;
	/* Exposed port, established: SYN, SYN+ACK, ACK. */
	b->exp_sport = 40000;
	if (bed_send(b, 0, IPPROTO_TCP_, b->client, c->node_ip, 40000, BED_HP_A, TCPF_SYN, 0,
		     NULL) != DP_TO_SANDBOX)
		return 2;
	if (bed_send(b, BED_SLOT_A, IPPROTO_TCP_, c->guest_ip, b->client, 8080, 40000,
		     TCPF_SYN | TCPF_ACK, 0, NULL) != DP_TO_WORLD)
		return 3;
	if (bed_send(b, 0, IPPROTO_TCP_, b->client, c->node_ip, 40000, BED_HP_A, TCPF_ACK, 4,
		     NULL) != DP_TO_SANDBOX)
		return 4;
	/* Egress TCP from A to the remote, through the default gateway. */
	b->egress_gport = 50000;
	if (bed_send(b, BED_SLOT_A, IPPROTO_TCP_, c->guest_ip, b->remote, 50000, 80, TCPF_SYN,
		     0, f) != DP_TO_WORLD)
		return 5;
	b->egress_snat = ((struct tcp_hdr *)(f + 34))->sport;
	/* Egress UDP from B to the client, replied. */
	if (bed_send(b, BED_SLOT_B, IPPROTO_UDP_, c->guest_ip, b->client, 5353, 53, 0, 8,
		     f) != DP_TO_WORLD)
		return 6;
	if (bed_send(b, 0, IPPROTO_UDP_, b->client, c->node_ip, 53,
		     ntohs(((struct udp_hdr *)(f + 34))->sport), 0, 8, NULL) != DP_TO_SANDBOX)
		return 7;
	/* ICMP echo from A to the client. */
	if (bed_send(b, BED_SLOT_A, IPPROTO_ICMP_, c->guest_ip, b->client, 77, 77, 0, 16,
		     NULL) != DP_TO_WORLD)
		return 8;
	/* Hairpin: A to node IP : B's host port. */
	if (bed_send(b, BED_SLOT_A, IPPROTO_TCP_, c->guest_ip, c->node_ip, 50001, BED_HP_B,
		     TCPF_SYN, 0, NULL) != DP_TO_SANDBOX)
		return 9;
	/* Host path: cube-dev to sandbox A's address. */
	if (bed_send(b, 3, IPPROTO_TCP_, c->host_ip, b->sbx_ip_a, 45000, 8080, TCPF_SYN, 0,
		     NULL) != DP_TO_SANDBOX)
		return 10;
	b->base_sessions = b->x.ct->used;
	if (b->base_sessions != 6)
		return 11;
	return 0;
}

/* Session table invariants; returns 0 or a code naming the broken one. */
static inline int
bed_ct_check(const struct dpbed *b)
{
	const struct ct_table *ct = b->x.ct;
	uint32_t i, used = 0, cls = 0;
	int d, dir;

	if (ct->used > ct->capacity)
		return 1;
	for (i = 0; i < CT_C_MAX; i++)
		cls += ct->class_count[i];
	if (cls != ct->used)
		return 2;
	for (i = 0; i < ct->hiwater; i++) {
		const struct ct_session *s = &ct->s[i];

		if (!(s->flags & CT_F_USED))
			continue;
		used++;
		for (d = 0; d < 2; d++)
			if (ct_lookup((struct ct_table *)ct, &s->t[d], &dir) != s || dir != d)
				return 3;
		if (s->cls >= CT_C_MAX || s->cls != ct_class_of(s->t[0].proto, s->state))
			return 4;
	}
	return used == ct->used ? 0 : 5;
}

/*
 * Checksum validity of a frame: bit 0 IP header correct, bit 1 L4 correct; -1 when the frame
 * is not an IPv4 packet whose L4 can be checked (IPv6: bed_csum_state6()). Bit 3: an IPv4 fragment, only its header
 * checked (its L4 checksum covers the whole datagram). Bit 2: the L4 validity is
 * undecidable across a rewrite. That is an ICMP message whose bytes, checksum aside, sum to
 * zero (all zero): 0x0000 and 0xffff then both stand for zero in ones' complement, and no
 * incremental update (RFC 1624) can keep "0x0000 instead of 0xffff" wrong once a field
 * changes. TCP and UDP never get there: their pseudo-header holds the protocol number.
 *
 * The same for IPv6 (no header checksum: bit 0 always set): TCP, UDP or ICMPv6 behind the
 * fixed header, a fragment (bit 3) behind a lone Fragment header; -1 for anything else. A UDP
 * checksum of 0, invalid over IPv6, is undecidable (bit 2): the rewrite may turn it into ~0.
 */
static inline int
bed_csum_state6(const struct pkt *p)
{
	const struct ipv6_hdr *ip6 = pkt_ip6(p);
	const uint8_t *l4 = pkt_l4(p);
	uint32_t l4len = p->len - p->l4_off, sum;
	uint16_t tmp;

	if (p->frag)
		return ip6->nxt == IP6_NH_FRAGMENT && p->l4_off == ETH_HLEN_ + 48 ? 1 | 8 : -1;
	if (p->l4_off != ETH_HLEN_ + 40 || (p->proto != IPPROTO_TCP_ &&
	    p->proto != IPPROTO_UDP_ && p->proto != IPPROTO_ICMPV6_))
		return -1;
	if (p->proto == IPPROTO_UDP_ && (l4len < 8 || ((const struct udp_hdr *)l4)->check == 0))
		return 1 | 4;
	sum = csum_partial(ip6->saddr, 32, 0);
	tmp = htons((uint16_t)l4len);
	sum = csum_partial(&tmp, 2, sum);
	tmp = htons(p->proto);
	sum = csum_partial(&tmp, 2, sum);
	sum = csum_partial(l4, l4len, sum);
	return csum_fold(sum) == 0xffff ? 1 | 2 : 1;
}

static inline int
bed_csum_state(const uint8_t *f, uint32_t len)
{
	struct pkt p;
	const struct ip4_hdr *ip;
	uint32_t ihl, l4len, sum;
	const uint8_t *l4;
	uint16_t tmp;
	int st = 0, kind = pkt_parse(&p, (uint8_t *)f, len);

	if (kind == PKT_IPV6)
		return bed_csum_state6(&p);
	if (kind != PKT_IPV4 && kind != PKT_FRAG)
		return -1;
	ip = (const struct ip4_hdr *)(f + 14);
	ihl = (ip->ver_ihl & 15) * 4u;
	l4 = f + 14 + ihl;
	l4len = ntohs(ip->tot_len) - ihl;
	if (csum_fold(csum_partial(ip, ihl, 0)) == 0xffff)
		st |= 1;
	if (p.frag)
		return st | 8;
	if (p.proto == IPPROTO_ICMP_) {
		sum = csum_partial(l4, l4len, 0);
		if (csum_fold(sum - ((const struct icmp_hdr *)l4)->check) == 0)
			st |= 4;
	} else {
		if (p.proto == IPPROTO_UDP_ && ((const struct udp_hdr *)l4)->check == 0)
			return st | 2;
		sum = csum_partial(&ip->saddr, 8, 0);
		tmp = htons(ip->proto);
		sum = csum_partial(&tmp, 2, sum);
		tmp = htons((uint16_t)l4len);
		sum = csum_partial(&tmp, 2, sum);
		sum = csum_partial(l4, l4len, sum);
	}
	if (csum_fold(sum) == 0xffff)
		st |= 2;
	return st;
}

/*
 * What must hold after one frame: a sane verdict, an output that is a whole frame inside the
 * buffer, checksums as valid (or as broken) as they came in, a consistent table.
 * 'before' is bed_csum_state() of the input. Returns 0 or a code.
 */
static inline int
bed_verdict_check(const struct dpbed *b, const struct dp_result *r, const uint8_t *f,
		  uint32_t len, int before)
{
	int after;

	if (r->action > DP_HELD)
		return 100;
	if (r->action == DP_HELD)
		return bed_ct_check(b);
	if (r->action == DP_DROP)
		return r->drop < CVS_DROP_MAX ? bed_ct_check(b) : 101;
	if (r->len < ETH_HLEN_ || r->len > len)
		return 102;
	if (r->action == DP_TO_SANDBOX &&
	    (r->slot >= BED_SLOTS || !atomic_load(&b->alive[r->slot])))
		return 103;
	if (r->action != DP_BACK) {
		after = bed_csum_state(f, r->len);
		if (after < 0)
			return 104;
		if (before >= 0 && (before & 4))
			before = (before & ~6) | (after & 2);
		/* A partial checksum (a sender's offload) was completed: that one may turn valid. */
		if (before >= 0 && b->st.c[CVS_WC_CSUM_COMPLETED] != b->csum_done0)
			before = (before & ~2) | (after & 2);
		if (before >= 0 && ((before | after) & 8) && (after & 1) != (before & 1))
			return 105;
		if (before >= 0 && !((before | after) & 8) && (after & 3) != (before & 3))
			return 105;
	}
	return bed_ct_check(b);
}

#endif /* CVS_DPBED_H */
