/* SPDX-License-Identifier: BSD-3-Clause */
/* Address and port rewriting with incremental checksum updates. Per packet. */
#include <string.h>

#include "csum.h"
#include "nat.h"

/* One's-complement sum of 32-bit words, folded to 16 bits at the end. */
static inline uint16_t
nat_fold64(uint64_t sum)
{
	sum = (sum & 0xffffffffull) + (sum >> 32);
	sum = (sum & 0xffffffffull) + (sum >> 32);
	return csum_fold((uint32_t)sum);
}

/* Apply a folded delta to a stored checksum (RFC 1624, eqn. 3). */
static inline void
nat_apply(uint16_t *check, uint16_t delta)
{
	uint32_t sum = (uint32_t)(uint16_t)~*check + delta;

	*check = (uint16_t)~csum_fold(sum);
}

/*
 * Every field's old and new value go into one sum of differences per checksum: one fold for
 * the IP header, one for the L4 checksum, whatever changes. An unchanged field adds -0.
 */
void
nat_rewrite(struct pkt *p, uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport)
{
	struct ip4_hdr *ip = pkt_ip(p);
	uint8_t *l4 = p->data + p->l4_off;
	uint64_t dip;
	uint32_t dports;

	dip = (uint64_t)(uint32_t)~ip->saddr + saddr + (uint32_t)~ip->daddr + daddr;
	ip->saddr = saddr;
	ip->daddr = daddr;
	nat_apply(&ip->check, nat_fold64(dip));

	switch (p->proto) {
	case IPPROTO_TCP_: {
		struct tcp_hdr *th = (struct tcp_hdr *)l4;

		dports = (uint32_t)(uint16_t)~th->sport + sport + (uint16_t)~th->dport + dport;
		th->sport = sport;
		th->dport = dport;
		nat_apply(&th->check, nat_fold64(dip + dports));
		break;
	}
	case IPPROTO_UDP_: {
		struct udp_hdr *uh = (struct udp_hdr *)l4;

		dports = (uint32_t)(uint16_t)~uh->sport + sport + (uint16_t)~uh->dport + dport;
		uh->sport = sport;
		uh->dport = dport;
		/* A zero UDP checksum means "none" and stays zero; a computed 0 is sent as ~0. */
		if (uh->check) {
			nat_apply(&uh->check, nat_fold64(dip + dports));
			if (!uh->check)
				uh->check = 0xffff;
		}
		break;
	}
	case IPPROTO_ICMP_: {
		struct icmp_hdr *ih = (struct icmp_hdr *)l4;

		/* No pseudo-header; the echo id is both "ports". */
		dports = (uint32_t)(uint16_t)~ih->id + sport;
		ih->id = sport;
		nat_apply(&ih->check, csum_fold(dports));
		dport = sport;
		break;
	}
	}
	p->saddr = saddr;
	p->daddr = daddr;
	p->sport = sport;
	p->dport = dport;
}

/* The sum of differences of a 16-byte address changed from 'from' to 'to' (both as stored). */
static inline uint64_t
nat_delta16(const uint8_t *from, const uint8_t *to)
{
	uint64_t sum = 0;
	uint32_t a, b;
	int i;

	for (i = 0; i < 16; i += 4) {
		memcpy(&a, from + i, 4);
		memcpy(&b, to + i, 4);
		sum += (uint64_t)(uint32_t)~a + b;
	}
	return sum;
}

void
nat6_rewrite(struct pkt *p, const uint8_t saddr[16], const uint8_t daddr[16], uint16_t sport,
	     uint16_t dport)
{
	struct ipv6_hdr *ip6 = pkt_ip6(p);
	uint8_t *l4 = p->data + p->l4_off;
	uint64_t d = nat_delta16(ip6->saddr, saddr) + nat_delta16(ip6->daddr, daddr);
	uint16_t *check = NULL, *sp, *dp;

	memmove(ip6->saddr, saddr, 16);
	memmove(ip6->daddr, daddr, 16);
	switch (p->proto) {
	case IPPROTO_TCP_:
		check = &((struct tcp_hdr *)l4)->check;
		sp = &((struct tcp_hdr *)l4)->sport;
		dp = &((struct tcp_hdr *)l4)->dport;
		break;
	case IPPROTO_UDP_:
		check = &((struct udp_hdr *)l4)->check;
		sp = &((struct udp_hdr *)l4)->sport;
		dp = &((struct udp_hdr *)l4)->dport;
		break;
	case IPPROTO_ICMPV6_:
		check = &((struct icmp_hdr *)l4)->check;
		/*
		 * An echo's id is both "ports"; any other message keeps bytes 4-7 as they are
		 * (a Packet Too Big's MTU lives there).
		 */
		sp = dp = &((struct icmp_hdr *)l4)->id;
		if (l4[0] != ICMP6_ECHO_REQ && l4[0] != ICMP6_ECHO_REPLY)
			sport = *sp;
		dport = sport;
		break;
	default:
		return;
	}
	d += (uint32_t)(uint16_t)~*sp + sport;
	*sp = sport;
	if (dp != sp) {
		d += (uint32_t)(uint16_t)~*dp + dport;
		*dp = dport;
	}
	nat_apply(check, nat_fold64(d));
	/* UDP over IPv6 has no "no checksum": a computed 0 is sent as ~0 (RFC 8200 8.1). */
	if (p->proto == IPPROTO_UDP_ && !*check)
		*check = 0xffff;
	p->sport = sport;
	p->dport = dport;
}
