/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICMPv6 errors of NAT66 flows, per packet (each ICMPv6 error the worker gets, and each IPv6
 * packet too long for its exit). The translation is icmperr.c's for IPv4: the quoted packet
 * becomes what the flow's other endpoint sent, the outer header is addressed to that
 * endpoint, and every checksum is updated incrementally, so a wrong one stays wrong. ICMPv6's
 * checksum covers a pseudo-header (RFC 4443 2.3), and so does a quoted echo's: both follow
 * the addresses.
 */
#include "dp_core.h"
#include "ct6.h"
#include "csum.h"
#include "icmperr6.h"
#include "ndp.h"

#define ICMP6_HOP_LIMIT	64

/* The quoted packet's ports and upper-layer checksum (NULL when not in the quote). */
struct icmperr6_ports {
	uint16_t *sport;	/* both point at the id of a quoted echo */
	uint16_t *dport;
	uint16_t *l4sum;
	uint8_t proto;
};

/*
 * The quote of error 'p' (its IPv6 header at *in): the upper-layer header behind it directly
 * or behind a Fragment header of a first fragment (our own datagram, when it left in
 * fragments), at least 8 bytes of it. False: no flow can be told from it.
 */
static bool
icmperr6_ports_of(struct ipv6_hdr *in, uint32_t avail, struct icmperr6_ports *pt)
{
	uint8_t *l4 = (uint8_t *)(in + 1), nh = in->nxt;
	uint32_t off = sizeof(*in);

	if (nh == IP6_NH_FRAGMENT) {
		if (avail < off + 8 || ((l4[2] << 8 | l4[3]) & 0xfff8))
			return false;
		nh = l4[0];
		l4 += 8;
		off += 8;
	}
	if (avail < off + 8)
		return false;
	pt->sport = (uint16_t *)l4;
	pt->dport = (uint16_t *)(l4 + 2);
	pt->l4sum = NULL;
	pt->proto = nh;
	switch (nh) {
	case IPPROTO_TCP_:
		if (avail >= off + 18)
			pt->l4sum = (uint16_t *)(l4 + 16);
		return true;
	case IPPROTO_UDP_:
		pt->l4sum = (uint16_t *)(l4 + 6);
		return true;
	case IPPROTO_ICMPV6_:
		if (l4[0] != ICMP6_ECHO_REQ && l4[0] != ICMP6_ECHO_REPLY)
			return false;
		pt->sport = pt->dport = (uint16_t *)(l4 + 4);
		pt->l4sum = (uint16_t *)(l4 + 2);
		return true;
	default:
		return false;
	}
}

/* The quoted packet as the other side's endpoint sent it (tuple o). */
static void
icmperr6_rewrite_quote(struct ipv6_hdr *in, const struct icmperr6_ports *pt,
		       const struct ct6_tuple *o)
{
	uint32_t before = csum_partial(in->saddr, 32, 0), after;
	uint16_t ports[2] = { *pt->sport, *pt->dport };

	before = csum_partial(ports, pt->sport == pt->dport ? 2 : 4, before);
	memcpy(in->saddr, o->saddr, 16);
	memcpy(in->daddr, o->daddr, 16);
	*pt->sport = o->sport;
	if (pt->dport != pt->sport)
		*pt->dport = o->dport;
	ports[0] = *pt->sport;
	ports[1] = *pt->dport;
	after = csum_partial(in->saddr, 32, 0);
	after = csum_partial(ports, pt->sport == pt->dport ? 2 : 4, after);
	if (pt->l4sum)
		csum_replace2(pt->l4sum, csum_fold(before), csum_fold(after));
}

/* How far the rewrite reaches into the quote: headers and 18 bytes of TCP. */
static uint32_t
icmperr6_reach(const struct ipv6_hdr *in, uint32_t avail)
{
	uint32_t n = sizeof(*in) + (in->nxt == IP6_NH_FRAGMENT ? 8u : 0u) + 18u;

	return avail < n ? avail : n;
}

/*
 * Find the session of error 'p' that came in 'zone' and rewrite it: the quote to what
 * s->t[*dir ^ 1]'s endpoint sent, the outer destination to that endpoint. An error the far
 * endpoint made itself (its source is the quote's destination) comes from our side of the
 * translation then; a router's keeps its address.
 */
static struct ct6_session *
icmperr6_translate(struct ct6_table *ct, uint16_t zone, struct pkt *p, int *dir,
		   enum cvs_drop *why)
{
	struct ipv6_hdr *ip6 = pkt_ip6(p), *in;
	struct icmp_hdr *ih = pkt_l4(p);
	uint32_t avail = p->len - p->l4_off - 8, qlen, before, after;
	struct icmperr6_ports pt;
	const struct ct6_tuple *o;
	struct ct6_session *s;
	struct ct6_tuple rt;
	bool own;

	in = (struct ipv6_hdr *)((uint8_t *)ih + 8);
	if (avail < sizeof(*in) + 8 || (ntohl(in->vtc_flow) >> 28) != 6) {
		*why = CVS_DROP_L4_HEADER;
		return NULL;
	}
	if (!icmperr6_ports_of(in, avail, &pt)) {
		*why = CVS_DROP_ICMP_NO_FLOW;
		return NULL;
	}
	/* The quoted packet left from this side: its reverse is our tuple here. */
	ct6_tuple_set(&rt, in->daddr, in->saddr, *pt.dport, *pt.sport, zone, pt.proto);
	s = ct6_lookup(ct, &rt, dir);
	if (!s) {
		*why = CVS_DROP_ICMP_NO_FLOW;
		return NULL;
	}
	o = &s->t[*dir ^ 1];
	own = !memcmp(ip6->saddr, in->daddr, 16);
	qlen = icmperr6_reach(in, avail);
	before = csum_partial(ip6->saddr, 32, csum_partial(in, qlen, 0));
	icmperr6_rewrite_quote(in, &pt, o);
	if (own)
		memcpy(ip6->saddr, o->daddr, 16);
	memcpy(ip6->daddr, o->saddr, 16);
	after = csum_partial(ip6->saddr, 32, csum_partial(in, qlen, 0));
	csum_replace2(&ih->check, csum_fold(before), csum_fold(after));
	return s;
}

void
dp6_icmp_error(struct dp_ctx *x, uint16_t zone, struct pkt *p, struct dp_result *r)
{
	struct ct6_session *s;
	enum cvs_drop why;
	uint16_t mtu;
	int dir;

	s = icmperr6_translate(x->ct6, zone, p, &dir, &why);
	if (!s) {
		dp_drop(x, r, why);
		return;
	}
	/* An error is answered with nothing, a too long one least of all (RFC 4443 2.4 (e)). */
	mtu = dp_zone_mtu(x, s->t[dir ^ 1].zone);
	if (mtu && p->len - ETH_HLEN_ > mtu) {
		dp_drop(x, r, CVS_DROP_TOO_BIG);
		return;
	}
	if (dp_l2_to(x, s->peer_mac, s->t[dir ^ 1].zone, p, r))
		x->st->c[CVS_WC_ICMP_ERRORS]++;
}

static bool
icmperr6_answerable(const uint8_t *frame, uint32_t len)
{
	const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)(frame + ETH_HLEN_);
	static const uint8_t zero[16];
	const uint8_t *l4 = frame + ICMP6_ERR_HLEN - 8;

	if (len < ETH_HLEN_ + sizeof(*ip6) + 8 || (frame[0] & 1) || ip6->daddr[0] == 0xff ||
	    ip6->saddr[0] == 0xff || !memcmp(ip6->saddr, zero, 16))
		return false;
	/* An ICMPv6 error right behind the header: never answered (one behind extension headers is
	 * not ours to carry anyway). */
	return ip6->nxt != IPPROTO_ICMPV6_ || l4[0] >= 128;
}

uint32_t
icmperr6_too_big(uint8_t *frame, uint32_t len, uint32_t room, const uint8_t src[16],
		 uint32_t mtu)
{
	struct ipv6_hdr *ip6 = (struct ipv6_hdr *)(frame + ETH_HLEN_);
	uint8_t mac[6], dst[16], *icmp = frame + ICMP6_ERR_HLEN - 8;
	uint32_t q = len - ETH_HLEN_, sum;
	uint16_t check;

	if (!icmperr6_answerable(frame, len) || room < ICMP6_ERR_HLEN + sizeof(*ip6) + 8)
		return 0;
	if (q > ICMP6_MTU_MIN - 48)
		q = ICMP6_MTU_MIN - 48;
	if (q > room - ICMP6_ERR_HLEN)
		q = room - ICMP6_ERR_HLEN;
	memcpy(dst, ip6->saddr, 16);
	memmove(frame + ICMP6_ERR_HLEN, ip6, q);
	memcpy(mac, frame, 6);
	memcpy(frame, frame + 6, 6);
	memcpy(frame + 6, mac, 6);
	ip6->vtc_flow = htonl(6u << 28);
	ip6->plen = htons((uint16_t)(8 + q));
	ip6->nxt = IPPROTO_ICMPV6_;
	ip6->hlim = ICMP6_HOP_LIMIT;
	memcpy(ip6->saddr, src, 16);
	memcpy(ip6->daddr, dst, 16);
	icmp[0] = ICMP6_PACKET_TOO_BIG;
	icmp[1] = 0;
	memset(icmp + 2, 0, 2);
	mtu = htonl(mtu);
	memcpy(icmp + 4, &mtu, 4);
	sum = csum_partial(ip6->saddr, 32, htons((uint16_t)(8 + q)) + htons(IPPROTO_ICMPV6_));
	check = (uint16_t)~csum_fold(csum_partial(icmp, 8 + q, sum));
	memcpy(icmp + 2, &check, 2);
	return ICMP6_ERR_HLEN + q;
}

void
dp6_too_big(struct dp_ctx *x, uint16_t zone, uint16_t mtu, struct pkt *p, struct dp_result *r)
{
	uint32_t n;

	if (zone && zone != CVS_ZONE_HOST && x->slot_st && zone - 1u < x->sh->max_sandboxes)
		x->slot_st[zone - 1u].c[CVS_PC_MTU_EXCEEDED]++;
	/* From the router the sender sees: fe80::1 on a guest's link, the node to the world. */
	n = icmperr6_too_big(p->data, p->len, p->len, zone ? ndp_gw_ll : x->cfg->node_ip6, mtu);
	if (!n) {
		dp_drop(x, r, CVS_DROP_TOO_BIG);
		return;
	}
	x->st->c[CVS_WC_PTB6_SENT]++;
	r->action = DP_BACK;
	r->len = n;
}
