/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Translation of ICMP errors about tracked flows. Per packet (each ICMP error the worker gets).
 *
 * An error quotes a packet of a flow as it was on the side where the error arose. The flow's
 * session knows what the other side sent, so the quoted header is rewritten to that and the
 * outer header is addressed to the other side's endpoint. All checksums are updated
 * incrementally: a wrong one stays wrong and the endpoint still rejects it.
 */
#include <stdbool.h>
#include <stdint.h>

#include "csum.h"
#include "icmperr.h"

/* The quoted packet's ports and L4 checksum: what the rewrite of it touches. */
struct icmperr_ports {
	uint16_t *sport;	/* both point at the id of a quoted echo */
	uint16_t *dport;
	uint16_t *l4sum;	/* NULL when not in the quote, or a UDP "no checksum" */
	bool pseudo;		/* the L4 checksum covers the addresses (TCP, UDP) */
};

/* Locate them in the quoted L4 header 'l4' (at least 8 bytes, 'len' in all); false: no flow. */
static bool
icmperr_ports_of(uint8_t *l4, uint8_t proto, uint32_t len, struct icmperr_ports *pt)
{
	pt->sport = (uint16_t *)l4;
	pt->dport = (uint16_t *)(l4 + 2);
	pt->l4sum = NULL;
	pt->pseudo = true;
	switch (proto) {
	case IPPROTO_TCP_:
		if (len >= 18)
			pt->l4sum = (uint16_t *)(l4 + 16);
		return true;
	case IPPROTO_UDP_:
		if (*(uint16_t *)(l4 + 6))
			pt->l4sum = (uint16_t *)(l4 + 6);
		return true;
	case IPPROTO_ICMP_:
		/* A quoted echo: the id is both ports. */
		pt->sport = pt->dport = (uint16_t *)(l4 + 4);
		pt->l4sum = (uint16_t *)(l4 + 2);
		pt->pseudo = false;
		return true;
	default:
		return false;
	}
}

/* The quoted packet as the other side's endpoint sent it (tuple o). Returns its old destination. */
static uint32_t
icmperr_rewrite_quote(struct ip4_hdr *in, const struct icmperr_ports *pt,
		      const struct ct_tuple *o)
{
	uint32_t old_dst = in->daddr;

	if (in->saddr != o->saddr) {
		csum_replace4(&in->check, in->saddr, o->saddr);
		if (pt->l4sum && pt->pseudo)
			csum_replace4(pt->l4sum, in->saddr, o->saddr);
		in->saddr = o->saddr;
	}
	if (in->daddr != o->daddr) {
		csum_replace4(&in->check, in->daddr, o->daddr);
		if (pt->l4sum && pt->pseudo)
			csum_replace4(pt->l4sum, in->daddr, o->daddr);
		in->daddr = o->daddr;
	}
	if (*pt->sport != o->sport) {
		if (pt->l4sum)
			csum_replace2(pt->l4sum, *pt->sport, o->sport);
		*pt->sport = o->sport;
	}
	if (pt->dport != pt->sport && *pt->dport != o->dport) {
		if (pt->l4sum)
			csum_replace2(pt->l4sum, *pt->dport, o->dport);
		*pt->dport = o->dport;
	}
	return old_dst;
}

/*
 * The outer header: to the endpoint that sent what the quote now shows. An error the far
 * endpoint made itself (its source is the quote's old destination) comes from our side.
 */
static void
icmperr_rewrite_outer(struct ip4_hdr *ip, uint32_t old_dst, const struct ct_tuple *o)
{
	uint32_t saddr = ip->saddr == old_dst ? o->daddr : ip->saddr;

	if (ip->saddr != saddr) {
		csum_replace4(&ip->check, ip->saddr, saddr);
		ip->saddr = saddr;
	}
	if (ip->daddr != o->saddr) {
		csum_replace4(&ip->check, ip->daddr, o->saddr);
		ip->daddr = o->saddr;
	}
}

struct ct_session *
icmperr_translate(struct ct_table *ct, uint16_t zone, struct pkt *p, int *dir,
		  enum cvs_drop *why)
{
	struct icmp_hdr *ih = pkt_l4(p);
	uint32_t ihl, avail, qlen, old_dst;
	struct icmperr_ports pt;
	const struct ct_tuple *o;
	struct ct_session *s;
	struct ct_tuple rt;
	struct ip4_hdr *in;
	uint16_t qsum;

	in = icmperr_quote(p, &ihl, &avail);
	if (!in || (in->ver_ihl >> 4) != 4) {
		*why = CVS_DROP_L4_HEADER;
		return NULL;
	}
	if (!icmperr_ports_of((uint8_t *)in + ihl, in->proto, avail - ihl, &pt)) {
		*why = CVS_DROP_ICMP_NO_FLOW;
		return NULL;
	}
	/* The quoted packet went out from this side: its reverse is our tuple here. */
	ct_tuple_set(&rt, in->daddr, in->saddr, *pt.dport, *pt.sport, zone, in->proto);
	s = ct_lookup(ct, &rt, dir);
	if (!s) {
		*why = CVS_DROP_ICMP_NO_FLOW;
		return NULL;
	}
	o = &s->t[*dir ^ 1];
	/*
	 * Every byte the rewrite touches lies in the first ihl + 18 quoted bytes; their sum before
	 * and after updates the ICMP checksum incrementally.
	 */
	qlen = avail < ihl + 18 ? avail : ihl + 18;
	qsum = csum_fold(csum_partial(in, qlen, 0));
	old_dst = icmperr_rewrite_quote(in, &pt, o);
	icmperr_rewrite_outer(pkt_ip(p), old_dst, o);
	csum_replace2(&ih->check, qsum, csum_fold(csum_partial(in, qlen, 0)));
	return s;
}
