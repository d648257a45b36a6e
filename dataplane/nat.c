/* SPDX-License-Identifier: BSD-3-Clause */
/* Address and port rewriting with incremental checksum updates. Per packet. */
#include "csum.h"
#include "dp.h"

void
nat_rewrite(struct pkt *p, uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport)
{
	struct ip4_hdr *ip = pkt_ip(p);
	uint16_t *l4check = NULL;
	uint16_t *ps = NULL, *pd = NULL;
	bool pseudo = true;

	switch (p->proto) {
	case IPPROTO_TCP_: {
		struct tcp_hdr *th = pkt_l4(p);

		l4check = &th->check;
		ps = &th->sport;
		pd = &th->dport;
		break;
	}
	case IPPROTO_UDP_: {
		struct udp_hdr *uh = pkt_l4(p);

		/* A zero UDP checksum means "none" and must stay zero. */
		if (uh->check)
			l4check = &uh->check;
		ps = &uh->sport;
		pd = &uh->dport;
		break;
	}
	case IPPROTO_ICMP_: {
		struct icmp_hdr *ih = pkt_l4(p);

		/* ICMP has no pseudo-header; the echo id is both "ports". */
		l4check = &ih->check;
		ps = &ih->id;
		pd = NULL;
		pseudo = false;
		break;
	}
	}

	if (ip->saddr != saddr) {
		csum_replace4(&ip->check, ip->saddr, saddr);
		if (l4check && pseudo)
			csum_replace4(l4check, ip->saddr, saddr);
		ip->saddr = saddr;
	}
	if (ip->daddr != daddr) {
		csum_replace4(&ip->check, ip->daddr, daddr);
		if (l4check && pseudo)
			csum_replace4(l4check, ip->daddr, daddr);
		ip->daddr = daddr;
	}
	if (ps && *ps != sport) {
		if (l4check)
			csum_replace2(l4check, *ps, sport);
		*ps = sport;
	}
	if (pd && *pd != dport) {
		if (l4check)
			csum_replace2(l4check, *pd, dport);
		*pd = dport;
	}
	if (p->proto == IPPROTO_UDP_ && l4check && *l4check == 0)
		*l4check = 0xffff;
	p->saddr = saddr;
	p->daddr = daddr;
	p->sport = sport;
	p->dport = pd ? dport : sport;
}
