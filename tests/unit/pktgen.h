/* SPDX-License-Identifier: BSD-3-Clause */
/* Builds test frames with correct checksums, and verifies checksums by full recomputation. */
#ifndef CVS_PKTGEN_H
#define CVS_PKTGEN_H

#include <arpa/inet.h>
#include <string.h>

#include "csum.h"
#include "pkt.h"

static inline uint32_t
ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static inline uint16_t
l4_csum(const uint8_t *ipb)
{
	const struct ip4_hdr *ip = (const struct ip4_hdr *)ipb;
	uint32_t ihl = (ip->ver_ihl & 15) * 4u, len = ntohs(ip->tot_len) - ihl, sum = 0;
	uint16_t tmp;

	sum = csum_partial(&ip->saddr, 8, sum);
	tmp = htons(ip->proto);
	sum = csum_partial(&tmp, 2, sum);
	tmp = htons((uint16_t)len);
	sum = csum_partial(&tmp, 2, sum);
	sum = csum_partial(ipb + ihl, len, sum);
	return (uint16_t)~csum_fold(sum);
}

/* True when IP and L4 checksums of the frame are all correct. */
static inline int
frame_csums_ok(const uint8_t *f)
{
	const struct ip4_hdr *ip = (const struct ip4_hdr *)(f + 14);
	uint32_t ihl = (ip->ver_ihl & 15) * 4u;
	const uint8_t *l4 = f + 14 + ihl;

	if (csum_fold(csum_partial(ip, ihl, 0)) != 0xffff)
		return 0;
	if (ip->proto == IPPROTO_ICMP_)
		return csum_fold(csum_partial(l4, ntohs(ip->tot_len) - ihl, 0)) == 0xffff;
	if (ip->proto == IPPROTO_UDP_ && ((const struct udp_hdr *)l4)->check == 0)
		return 1;
	return l4_csum(f + 14) == 0 || l4_csum(f + 14) == 0xffff ? 1 : 0;
}

/* Build Ethernet + IPv4 + L4 with 'paylen' payload bytes; returns the frame length. */
static inline uint32_t
build_frame(uint8_t *f, uint8_t proto, uint32_t saddr, uint32_t daddr, uint16_t sport,
	    uint16_t dport, uint8_t tcp_flags, uint32_t paylen)
{
	static const uint8_t smac[6] = { 2, 0, 0, 0, 0, 0x11 }, dmac[6] = { 2, 0, 0, 0, 0, 0x22 };
	struct eth_hdr *eth = (struct eth_hdr *)f;
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);
	uint8_t *l4 = f + 34;
	uint32_t l4len = proto == IPPROTO_TCP_ ? 20 : 8, i;

	memcpy(eth->src, smac, 6);
	memcpy(eth->dst, dmac, 6);
	eth->type = htons(ETHTYPE_IPV4);
	memset(ip, 0, 20);
	ip->ver_ihl = 0x45;
	ip->tot_len = htons((uint16_t)(20 + l4len + paylen));
	ip->id = htons(0x1234);
	ip->ttl = 64;
	ip->proto = proto;
	ip->saddr = saddr;
	ip->daddr = daddr;
	memset(l4, 0, l4len);
	for (i = 0; i < paylen; i++)
		l4[l4len + i] = (uint8_t)(i * 7 + 3);
	if (proto == IPPROTO_TCP_) {
		struct tcp_hdr *th = (struct tcp_hdr *)l4;

		th->sport = sport;
		th->dport = dport;
		th->seq = htonl(1000);
		th->doff = 5 << 4;
		th->flags = tcp_flags;
		th->win = htons(65535);
		th->check = l4_csum(f + 14);
	} else if (proto == IPPROTO_UDP_) {
		struct udp_hdr *uh = (struct udp_hdr *)l4;

		uh->sport = sport;
		uh->dport = dport;
		uh->len = htons((uint16_t)(8 + paylen));
		uh->check = l4_csum(f + 14);
		if (!uh->check)
			uh->check = 0xffff;
	} else {
		struct icmp_hdr *ih = (struct icmp_hdr *)l4;

		ih->type = 8;
		ih->id = sport;
		ih->seq = htons(1);
		ih->check = (uint16_t)~csum_fold(csum_partial(l4, 8 + paylen, 0));
	}
	ip->check = (uint16_t)~csum_fold(csum_partial(ip, 20, 0));
	return 34 + l4len + paylen;
}

/* The upper-layer checksum of an IPv6 packet without extension headers, from its header. */
static inline uint16_t
l4_csum6(const uint8_t *ipb)
{
	uint16_t plen = (uint16_t)(ipb[4] << 8 | ipb[5]);
	uint32_t sum = csum_partial(ipb + 8, 32, htons(plen) + htons(ipb[6]));

	return (uint16_t)~csum_fold(csum_partial(ipb + 40, plen, sum));
}

/*
 * Ethernet + IPv6 + TCP or UDP with 'paylen' payload bytes, as build_frame() for IPv4;
 * returns the frame length.
 */
static inline uint32_t
build_frame6(uint8_t *f, uint8_t proto, const uint8_t saddr[16], const uint8_t daddr[16],
	     uint16_t sport, uint16_t dport, uint8_t tcp_flags, uint32_t paylen)
{
	static const uint8_t smac[6] = { 2, 0, 0, 0, 0, 0x11 }, dmac[6] = { 2, 0, 0, 0, 0, 0x22 };
	uint8_t *ip = f + 14, *l4 = f + 54;
	uint32_t l4len = proto == IPPROTO_TCP_ ? 20 : 8, i;
	uint16_t plen = (uint16_t)(l4len + paylen), *check;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	memset(ip, 0, 40);
	ip[0] = 0x60;
	ip[4] = (uint8_t)(plen >> 8);
	ip[5] = (uint8_t)plen;
	ip[6] = proto;
	ip[7] = 64;
	memcpy(ip + 8, saddr, 16);
	memcpy(ip + 24, daddr, 16);
	memset(l4, 0, l4len);
	for (i = 0; i < paylen; i++)
		l4[l4len + i] = (uint8_t)(i * 7 + 3);
	memcpy(l4, &sport, 2);
	memcpy(l4 + 2, &dport, 2);
	if (proto == IPPROTO_TCP_) {
		struct tcp_hdr *th = (struct tcp_hdr *)l4;

		th->seq = htonl(1000);
		th->doff = 5 << 4;
		th->flags = tcp_flags;
		th->win = htons(65535);
		check = &th->check;
	} else {
		((struct udp_hdr *)l4)->len = htons(plen);
		check = &((struct udp_hdr *)l4)->check;
	}
	*check = l4_csum6(ip);
	if (!*check && proto == IPPROTO_UDP_)
		*check = 0xffff;
	return 54 + l4len + paylen;
}

#endif /* CVS_PKTGEN_H */
