/* SPDX-License-Identifier: BSD-3-Clause */
/* Neighbour discovery on a sandbox's link (ndp.h). Per packet; no allocation. */
#include <string.h>
#include <arpa/inet.h>

#include "csum.h"
#include "ndp.h"

const uint8_t ndp_gw_ll[16] = { 0xfe, 0x80, [15] = 1 };

static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };

#define NDP_HLIM	255
#define OPT_SLLA	1
#define OPT_TLLA	2
#define OPT_PREFIX	3
#define OPT_MTU		5

static bool
ndp_unspecified(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, 16);
}

uint16_t
ndp_icmp6_csum(const struct pkt *p)
{
	const struct ipv6_hdr *ip6 = pkt_ip6(p);
	uint32_t len = p->len - p->l4_off;
	uint32_t sum = csum_partial(ip6->saddr, 32, 0);

	sum += htons((uint16_t)(len >> 16)) + htons((uint16_t)len) + htons(IPPROTO_ICMPV6_);
	return (uint16_t)~csum_fold(csum_partial(p->data + p->l4_off, len, csum_fold(sum)));
}

/*
 * The checks every neighbour discovery message must pass (RFC 4861 6.1.1, 7.1.1): ICMPv6
 * straight after the IPv6 header, hop limit 255, code 0, at least 'min' bytes, a checksum that
 * verifies, options of nonzero length within the message; *slla tells whether one is a source
 * link-layer address.
 */
static bool
ndp_valid(const struct pkt *p, uint8_t type, uint32_t min, bool *slla)
{
	const uint8_t *m = p->data + p->l4_off;
	uint32_t len = p->len - p->l4_off, off;

	if (p->proto != IPPROTO_ICMPV6_ || p->l4_off != ETH_HLEN_ + 40 || len < min ||
	    pkt_ip6(p)->hlim != NDP_HLIM || m[0] != type || m[1] != 0 || ndp_icmp6_csum(p))
		return false;
	*slla = false;
	for (off = min; off < len; off += m[off + 1] * 8u) {
		if (len - off < 2 || !m[off + 1] || len - off < m[off + 1] * 8u)
			return false;
		*slla |= m[off] == OPT_SLLA;
	}
	return true;
}

bool
ndp_is_ns_for(const struct pkt *p, const uint8_t target[16])
{
	const uint8_t *m = p->data + p->l4_off;
	const struct ipv6_hdr *ip6 = pkt_ip6(p);
	bool slla;

	if (!ndp_valid(p, ICMP6_NS, 24, &slla) || memcmp(m + 8, target, 16))
		return false;
	/* A duplicate address check: to the solicited-node group, and no link-layer address. */
	if (ndp_unspecified(ip6->saddr))
		return !slla && ip6->daddr[0] == 0xff && ip6->daddr[11] == 1 &&
		       ip6->daddr[12] == 0xff;
	return true;
}

bool
ndp_ns_target(const struct pkt *p, uint8_t target[16])
{
	bool slla;

	if (!ndp_valid(p, ICMP6_NS, 24, &slla) || ndp_unspecified(pkt_ip6(p)->saddr))
		return false;
	memcpy(target, p->data + p->l4_off + 8, 16);
	return true;
}

bool
ndp_is_rs(const struct pkt *p)
{
	bool slla;

	if (!ndp_valid(p, ICMP6_RS, 8, &slla))
		return false;
	return !(slla && ndp_unspecified(pkt_ip6(p)->saddr));
}

/*
 * Readdress the frame as a reply from 'src' at 'mac' to whoever sent it (to all nodes when it
 * came from the unspecified address), with 'mlen' bytes of ICMPv6 message to follow. Returns
 * the message's start.
 */
static uint8_t *
ndp_readdress(struct pkt *p, const uint8_t src[16], const uint8_t mac[6], uint32_t mlen)
{
	struct eth_hdr *eth = pkt_eth(p);
	struct ipv6_hdr *ip6 = pkt_ip6(p);
	bool dad = ndp_unspecified(ip6->saddr);

	memcpy(eth->dst, dad ? all_nodes_mac : eth->src, 6);
	memcpy(eth->src, mac, 6);
	memcpy(ip6->daddr, dad ? all_nodes : ip6->saddr, 16);
	memcpy(ip6->saddr, src, 16);
	ip6->vtc_flow = htonl(6u << 28);
	ip6->plen = htons((uint16_t)mlen);
	ip6->nxt = IPPROTO_ICMPV6_;
	ip6->hlim = NDP_HLIM;
	p->l4_off = ETH_HLEN_ + 40;
	p->len = p->l4_off + mlen;
	memset(p->data + p->l4_off, 0, mlen);
	return p->data + p->l4_off;
}

static void
ndp_finish(struct pkt *p)
{
	uint16_t c = ndp_icmp6_csum(p);

	memcpy(p->data + p->l4_off + 2, &c, 2);
}

uint32_t
ndp_reply_na(struct pkt *p, const uint8_t mac[6])
{
	bool dad = ndp_unspecified(pkt_ip6(p)->saddr);
	uint8_t target[16], *m;

	memcpy(target, p->data + p->l4_off + 8, 16);
	m = ndp_readdress(p, target, mac, 32);
	m[0] = ICMP6_NA;
	/* Router, override; solicited unless it answers a duplicate address check. */
	m[4] = dad ? 0xa0 : 0xe0;
	memcpy(m + 8, target, 16);
	m[24] = OPT_TLLA;
	m[25] = 1;
	memcpy(m + 26, mac, 6);
	ndp_finish(p);
	return p->len;
}

/*
 * What a solicitation from the unspecified address gets is an advertisement to all nodes:
 * an unsolicited one is the reply to an empty IPv6 frame from '::'.
 */
uint32_t
ndp_build_ra(uint8_t *f, const uint8_t mac[6], const struct ndp_ra *ra)
{
	struct pkt p = { .data = f, .len = ETH_HLEN_ + 40, .l4_off = ETH_HLEN_ + 40 };

	memset(f, 0, ETH_HLEN_ + 40);
	f[12] = 0x86;	/* the reply keeps the ethertype of what it answers */
	f[13] = 0xdd;
	return ndp_reply_ra(&p, mac, ra);
}

static void
put32(uint8_t *b, uint32_t v)
{
	v = htonl(v);
	memcpy(b, &v, 4);
}

uint32_t
ndp_reply_ra(struct pkt *p, const uint8_t mac[6], const struct ndp_ra *ra)
{
	uint32_t mlen = 16 + 8 + (ra->mtu ? 8 : 0) + (ra->have_prefix ? 32 : 0), off = 24;
	uint8_t *m = ndp_readdress(p, ndp_gw_ll, mac, mlen);

	m[0] = ICMP6_RA;
	m[4] = 64;	/* the hop limit guests should use */
	m[6] = (uint8_t)(ra->lifetime >> 8);
	m[7] = (uint8_t)ra->lifetime;
	m[16] = OPT_SLLA;
	m[17] = 1;
	memcpy(m + 18, mac, 6);
	if (ra->mtu) {
		m[off] = OPT_MTU;
		m[off + 1] = 1;
		put32(m + off + 4, ra->mtu);
		off += 8;
	}
	if (ra->have_prefix) {
		/*
		 * Autonomous, not on-link: a guest forms its address from it and sends everything,
		 * other guests' addresses of the same prefix included, through its router.
		 */
		m[off] = OPT_PREFIX;
		m[off + 1] = 4;
		m[off + 2] = 64;
		m[off + 3] = 0x40;
		put32(m + off + 4, ra->valid);
		put32(m + off + 8, ra->preferred);
		memcpy(m + off + 16, ra->prefix, 8);
	}
	ndp_finish(p);
	return p->len;
}
