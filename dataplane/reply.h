/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames the worker answers itself, built in place in the buffer of the frame they answer:
 * ARP replies (the guest gateway on sandbox ports, sandbox addresses on cube-dev) and the RST
 * a guest's SYN gets when its policy denies the destination. Per packet.
 */
#ifndef CVS_REPLY_H
#define CVS_REPLY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include "csum.h"
#include "pkt.h"

/* An ARP request for an IPv4 address over Ethernet (a frame pkt_parse() called PKT_ARP). */
static inline bool
reply_arp_is_request(const struct pkt *p)
{
	const struct arp_hdr *a = (const struct arp_hdr *)(p->data + ETH_HLEN_);

	return a->htype == htons(1) && a->ptype == htons(ETHTYPE_IPV4) && a->hlen == 6 &&
	       a->plen == 4 && a->op == htons(1);
}

/* Turn an ARP request into the reply that 'mac' has the address asked for. Returns its length. */
static inline uint32_t
reply_arp(struct pkt *p, const uint8_t mac[6])
{
	struct eth_hdr *eth = pkt_eth(p);
	struct arp_hdr *a = (struct arp_hdr *)(p->data + ETH_HLEN_);
	uint32_t tpa = a->tpa;

	a->op = htons(2);
	memcpy(a->tha, a->sha, 6);
	a->tpa = a->spa;
	memcpy(a->sha, mac, 6);
	a->spa = tpa;
	memcpy(eth->dst, a->tha, 6);
	memcpy(eth->src, mac, 6);
	return ETH_HLEN_ + sizeof(*a);
}

/*
 * Turn a parsed TCP SYN into a RST+ACK back to its sender, from 'mac'. Returns its length. The
 * RST carries no options, so it may overwrite the SYN's: what it needs is read first.
 */
static inline uint32_t
reply_rst(struct pkt *p, const uint8_t mac[6])
{
	struct eth_hdr *eth = pkt_eth(p);
	struct ip4_hdr *ip = pkt_ip(p);
	struct tcp_hdr *th = (struct tcp_hdr *)(p->data + ETH_HLEN_ + sizeof(*ip));
	const struct tcp_hdr *in = pkt_l4(p);
	uint32_t seq = ntohl(in->seq), saddr = p->saddr, daddr = p->daddr, sum;
	uint16_t sport = in->sport, dport = in->dport;

	memcpy(eth->dst, eth->src, 6);
	memcpy(eth->src, mac, 6);
	memset(ip, 0, sizeof(*ip));
	ip->ver_ihl = 0x45;
	ip->tot_len = htons(sizeof(*ip) + sizeof(*th));
	ip->ttl = 64;
	ip->proto = IPPROTO_TCP_;
	ip->saddr = daddr;
	ip->daddr = saddr;
	ip->check = (uint16_t)~csum_fold(csum_partial(ip, sizeof(*ip), 0));
	memset(th, 0, sizeof(*th));
	th->sport = dport;
	th->dport = sport;
	th->ack = htonl(seq + 1);
	th->doff = 5 << 4;
	th->flags = TCPF_RST | TCPF_ACK;
	sum = csum_pseudo(ip->saddr, ip->daddr, IPPROTO_TCP_, sizeof(*th));
	th->check = (uint16_t)~csum_fold(csum_partial(th, sizeof(*th), sum));
	return ETH_HLEN_ + sizeof(*ip) + sizeof(*th);
}

/*
 * The same for an IPv6 SYN whose TCP header follows the fixed header (what dp6.c carries), so
 * a guest's connect to a destination its policy denies fails at once in both families.
 */
static inline uint32_t
reply_rst6(struct pkt *p, const uint8_t mac[6])
{
	struct eth_hdr *eth = pkt_eth(p);
	struct ipv6_hdr *ip6 = (struct ipv6_hdr *)(p->data + ETH_HLEN_);
	struct tcp_hdr *th = (struct tcp_hdr *)(ip6 + 1);
	uint32_t seq = ntohl(th->seq), sum;
	uint16_t sport = th->sport, dport = th->dport;
	uint8_t a[16];

	memcpy(eth->dst, eth->src, 6);
	memcpy(eth->src, mac, 6);
	memcpy(a, ip6->saddr, 16);
	memcpy(ip6->saddr, ip6->daddr, 16);
	memcpy(ip6->daddr, a, 16);
	ip6->vtc_flow = htonl(6u << 28);
	ip6->plen = htons(sizeof(*th));
	ip6->nxt = IPPROTO_TCP_;
	ip6->hlim = 64;
	memset(th, 0, sizeof(*th));
	th->sport = dport;
	th->dport = sport;
	th->ack = htonl(seq + 1);
	th->doff = 5 << 4;
	th->flags = TCPF_RST | TCPF_ACK;
	sum = csum_partial(ip6->saddr, 32, htons(sizeof(*th)) + htons(IPPROTO_TCP_));
	th->check = (uint16_t)~csum_fold(csum_partial(th, sizeof(*th), sum));
	return ETH_HLEN_ + sizeof(*ip6) + sizeof(*th);
}

#endif /* CVS_REPLY_H */
