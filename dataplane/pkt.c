/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <arpa/inet.h>

#include "pkt.h"

static int
pkt_bad(struct pkt *p, enum cvs_drop why)
{
	p->kind = PKT_BAD;
	p->drop = why;
	return PKT_BAD;
}

void
pkt_csum_finish(struct pkt *p, uint16_t *check)
{
	uint16_t pseudo = *check, c;

	*check = 0;
	c = (uint16_t)~csum_fold(csum_block(p->data + p->l4_off, p->len - p->l4_off, pseudo));
	/* UDP sends a computed 0 as ~0: its 0 means "no checksum". */
	if (!c && p->proto == IPPROTO_UDP_)
		c = 0xffff;
	*check = c;
}

int
pkt_csum_complete6(struct pkt *p)
{
	const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)(p->data + ETH_HLEN_);
	uint32_t len = p->len - p->l4_off, sum;
	uint16_t *check = pkt_l4_check(p);

	if (!check || p->frag)
		return 0;
	sum = csum_partial(ip6->saddr, 32, 0) + htons((uint16_t)(len >> 16)) +
	      htons((uint16_t)len) + htons(p->proto);
	if (*check != csum_fold(sum))
		return 0;
	pkt_csum_finish(p, check);
	return 1;
}

/* A TCP header of l4len bytes at l4: its ports and flags; false when truncated. */
static inline bool
pkt_tcp(struct pkt *p, const uint8_t *l4, uint32_t l4len)
{
	const struct tcp_hdr *th = (const struct tcp_hdr *)l4;
	uint32_t doff;

	if (l4len < sizeof(*th))
		return false;
	doff = (th->doff >> 4) * 4u;
	if (doff < sizeof(*th) || doff > l4len)
		return false;
	p->sport = th->sport;
	p->dport = th->dport;
	p->tcp_flags = th->flags;
	return true;
}

static inline bool
pkt_udp(struct pkt *p, const uint8_t *l4, uint32_t l4len)
{
	const struct udp_hdr *uh = (const struct udp_hdr *)l4;

	if (l4len < sizeof(*uh))
		return false;
	p->sport = uh->sport;
	p->dport = uh->dport;
	return true;
}

/* An echo's id keys its flow on both sides. */
static inline bool
pkt_echo_id(struct pkt *p, const uint8_t *l4, uint32_t l4len, bool echo)
{
	const struct icmp_hdr *ih = (const struct icmp_hdr *)l4;

	if (l4len < sizeof(*ih))
		return false;
	if (echo) {
		p->sport = ih->id;
		p->dport = ih->id;
	}
	return true;
}

/* The TCP, UDP or ICMP header at p->l4_off, l4len bytes: ports (an echo's id) and flags. */
static int
pkt_parse_l4(struct pkt *p, uint32_t l4len)
{
	const uint8_t *l4 = p->data + p->l4_off;
	bool ok;

	switch (p->proto) {
	case IPPROTO_TCP_:
		ok = pkt_tcp(p, l4, l4len);
		break;
	case IPPROTO_UDP_:
		ok = pkt_udp(p, l4, l4len);
		break;
	case IPPROTO_ICMP_:
		ok = pkt_echo_id(p, l4, l4len, true);
		break;
	default:
		return pkt_bad(p, CVS_DROP_PROTO);
	}
	if (!ok)
		return pkt_bad(p, CVS_DROP_L4_HEADER);
	p->kind = PKT_IPV4;
	return PKT_IPV4;
}

/* The same behind an IPv6 header: TCP, UDP, or ICMPv6 (only an echo has an id). */
static int
pkt_parse6_l4(struct pkt *p, uint32_t l4len)
{
	const uint8_t *l4 = p->data + p->l4_off;
	bool ok;

	if (p->proto == IPPROTO_TCP_)
		ok = pkt_tcp(p, l4, l4len);
	else if (p->proto == IPPROTO_UDP_)
		ok = pkt_udp(p, l4, l4len);
	else
		ok = pkt_echo_id(p, l4, l4len, l4len && (l4[0] == ICMP6_ECHO_REQ ||
							 l4[0] == ICMP6_ECHO_REPLY));
	if (!ok)
		return pkt_bad(p, CVS_DROP_L4_HEADER);
	p->kind = PKT_IPV6;
	return PKT_IPV6;
}

/*
 * An IPv6 packet, walked past its extension headers (RFC 8200 4.1: hop-by-hop first and only
 * there, at most IP6_EXT_MAX of them) to its upper-layer protocol. Nothing translates IPv6
 * yet; what is well-formed is told apart from what is not, and the pipelines count it.
 */
static int
pkt_parse6(struct pkt *p, uint32_t len)
{
	const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)(p->data + ETH_HLEN_);
	uint32_t off = ETH_HLEN_ + sizeof(*ip6), end, n;
	uint8_t nh;

	if (len < off || (ntohl(ip6->vtc_flow) >> 28) != 6)
		return pkt_bad(p, CVS_DROP_IP_HEADER);
	end = off + ntohs(ip6->plen);
	if (end > len)
		return pkt_bad(p, CVS_DROP_IP_LENGTH);
	p->len = end;
	/* A multicast source is never a sender (RFC 4291 2.7). */
	if (ip6->saddr[0] == 0xff)
		return pkt_bad(p, CVS_DROP_BAD_SOURCE);
	nh = ip6->nxt;
	for (n = 0; nh == IP6_NH_HOPOPTS || nh == IP6_NH_ROUTING || nh == IP6_NH_FRAGMENT ||
		    nh == IP6_NH_AH || nh == IP6_NH_DSTOPTS; n++) {
		const uint8_t *h = p->data + off;

		if (n == IP6_EXT_MAX || end - off < 8 || (nh == IP6_NH_HOPOPTS && n))
			return pkt_bad(p, CVS_DROP_IP6_EXT);
		if (nh == IP6_NH_FRAGMENT) {
			/*
			 * Two in one packet, or an atomic fragment (offset 0, M clear: RFC 8021 has
			 * nobody send them any more; RFC 6946's "process in isolation" is not done).
			 */
			if (p->frag || !((h[2] << 8 | h[3]) & 0xfff9))
				return pkt_bad(p, CVS_DROP_FRAGMENT);
			/* A TCP fragment at offset 8 would rewrite the first one's flags (RFC 1858). */
			if (h[0] == IPPROTO_TCP_ && ((h[2] << 8 | h[3]) & 0xfff8) == 8)
				return pkt_bad(p, CVS_DROP_FRAGMENT);
			p->frag = (h[2] << 8 | h[3]) & 0xfff8 ? PKT_FRAG_LATER : PKT_FRAG_FIRST;
		}
		off += nh == IP6_NH_FRAGMENT ? 8u : nh == IP6_NH_AH ? (h[1] + 2u) * 4u :
		       (h[1] + 1u) * 8u;
		if (off > end)
			return pkt_bad(p, CVS_DROP_IP6_EXT);
		nh = h[0];
		/* After a later fragment's header comes data, not headers. */
		if (p->frag == PKT_FRAG_LATER)
			break;
	}
	p->proto = nh;
	p->l4_off = (uint16_t)off;
	/* A later fragment has no upper-layer header; an unknown protocol is the pipeline's. */
	if (p->frag == PKT_FRAG_LATER || (nh != IPPROTO_TCP_ && nh != IPPROTO_UDP_ &&
					  nh != IPPROTO_ICMPV6_)) {
		p->kind = PKT_IPV6;
		return PKT_IPV6;
	}
	return pkt_parse6_l4(p, end - off);
}

int
pkt_parse(struct pkt *p, uint8_t *data, uint32_t len)
{
	const struct eth_hdr *eth = (const struct eth_hdr *)data;
	const struct ip4_hdr *ip;
	uint32_t ihl, tot;

	memset(p, 0, sizeof(*p));
	p->data = data;
	p->len = len;
	if (len < ETH_HLEN_)
		return pkt_bad(p, CVS_DROP_RUNT);
	/* A group address is never a sender; a session must not learn one as its peer. */
	if (eth->src[0] & 1)
		return pkt_bad(p, CVS_DROP_BAD_SOURCE);
	if (eth->type == htons(ETHTYPE_ARP)) {
		if (len < ETH_HLEN_ + sizeof(struct arp_hdr))
			return pkt_bad(p, CVS_DROP_ARP);
		p->kind = PKT_ARP;
		return PKT_ARP;
	}
	if (eth->type != htons(ETHTYPE_IPV4))
		return eth->type == htons(ETHTYPE_IPV6) ? pkt_parse6(p, len) :
		       pkt_bad(p, CVS_DROP_ETHERTYPE);
	if (len < ETH_HLEN_ + sizeof(struct ip4_hdr))
		return pkt_bad(p, CVS_DROP_IP_HEADER);
	ip = (const struct ip4_hdr *)(data + ETH_HLEN_);
	ihl = (ip->ver_ihl & 0x0f) * 4u;
	if ((ip->ver_ihl >> 4) != 4 || ihl < sizeof(struct ip4_hdr) || ihl > len - ETH_HLEN_)
		return pkt_bad(p, CVS_DROP_IP_HEADER);
	tot = ntohs(ip->tot_len);
	if (tot < ihl || tot > len - ETH_HLEN_)
		return pkt_bad(p, CVS_DROP_IP_LENGTH);
	/* Ethernet padding after the IP datagram is not part of the packet. */
	p->len = ETH_HLEN_ + tot;
	if (ip->frag_off & htons(0x3fff))
		p->frag = ip->frag_off & htons(0x1fff) ? PKT_FRAG_LATER : PKT_FRAG_FIRST;
	if (!pkt_src_unicast(ip->saddr))
		return pkt_bad(p, CVS_DROP_BAD_SOURCE);
	p->saddr = ip->saddr;
	p->daddr = ip->daddr;
	p->proto = ip->proto;
	p->l4_off = (uint16_t)(ETH_HLEN_ + ihl);
	if (p->frag == PKT_FRAG_LATER) {
		/*
		 * No L4 header to read: the fragment goes where its datagram's first one went
		 * (frag.h). A TCP fragment at offset 8 would rewrite the first one's header
		 * (RFC 1858): never.
		 */
		if (ip->proto != IPPROTO_TCP_ && ip->proto != IPPROTO_UDP_ &&
		    ip->proto != IPPROTO_ICMP_)
			return pkt_bad(p, CVS_DROP_PROTO);
		if (ip->proto == IPPROTO_TCP_ && (ntohs(ip->frag_off) & 0x1fff) == 1)
			return pkt_bad(p, CVS_DROP_FRAGMENT);
		p->kind = PKT_FRAG;
		return PKT_FRAG;
	}
	return pkt_parse_l4(p, tot - ihl);
}
