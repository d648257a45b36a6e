/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame parsing with bounds checks. Works on a plain byte buffer so the same code runs on mbufs,
 * UMEM frames and test vectors. All addresses and ports stay in network byte order.
 */
#ifndef CVS_PKT_H
#define CVS_PKT_H

#include <stdbool.h>
#include <stdint.h>
#include <arpa/inet.h>

#include "counters.h"
#include "csum.h"

#define ETH_HLEN_	14
#define ETHTYPE_IPV4	0x0800
#define ETHTYPE_ARP	0x0806
#define ETHTYPE_IPV6	0x86dd
#define IPPROTO_ICMP_	1
#define IPPROTO_TCP_	6
#define IPPROTO_UDP_	17
#define IPPROTO_ICMPV6_	58

#define ICMP_UNREACH_	3
#define ICMP_ECHO_	8
#define ICMP_TIMXCEED_	11
#define ICMP_PARAMPROB_	12
#define ICMP6_ECHO_REQ	128
#define ICMP6_ECHO_REPLY	129

#define TCPF_FIN	0x01
#define TCPF_SYN	0x02
#define TCPF_RST	0x04
#define TCPF_PSH	0x08
#define TCPF_ACK	0x10

struct eth_hdr {
	uint8_t dst[6];
	uint8_t src[6];
	uint16_t type;
} __attribute__((packed, aligned(2)));

struct ip4_hdr {
	uint8_t ver_ihl;
	uint8_t tos;
	uint16_t tot_len;
	uint16_t id;
	uint16_t frag_off;
	uint8_t ttl;
	uint8_t proto;
	uint16_t check;
	uint32_t saddr;
	uint32_t daddr;
} __attribute__((packed, aligned(2)));

struct ipv6_hdr {
	uint32_t vtc_flow;	/* version 4 bits, traffic class 8, flow label 20 */
	uint16_t plen;		/* payload length: what follows this header */
	uint8_t nxt;
	uint8_t hlim;
	uint8_t saddr[16];
	uint8_t daddr[16];
} __attribute__((packed, aligned(2)));

/* IPv6 extension headers (RFC 8200 4.1) a parser walks past to the upper-layer header. */
#define IP6_NH_HOPOPTS	0
#define IP6_NH_ROUTING	43
#define IP6_NH_FRAGMENT	44
#define IP6_NH_AH	51
#define IP6_NH_NONE	59
#define IP6_NH_DSTOPTS	60
/* A chain longer than this is refused (RFC 8504 lets a node limit it; Linux walks any). */
#define IP6_EXT_MAX	8

struct tcp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t doff;	/* upper 4 bits */
	uint8_t flags;
	uint16_t win;
	uint16_t check;
	uint16_t urg;
} __attribute__((packed, aligned(2)));

struct udp_hdr {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;
	uint16_t check;
} __attribute__((packed, aligned(2)));

struct icmp_hdr {
	uint8_t type;
	uint8_t code;
	uint16_t check;
	uint16_t id;
	uint16_t seq;
} __attribute__((packed, aligned(2)));

struct arp_hdr {
	uint16_t htype;
	uint16_t ptype;
	uint8_t hlen;
	uint8_t plen;
	uint16_t op;
	uint8_t sha[6];
	uint32_t spa;
	uint8_t tha[6];
	uint32_t tpa;
} __attribute__((packed, aligned(2)));

enum pkt_kind {
	PKT_IPV4 = 0,
	PKT_ARP,
	PKT_BAD,	/* pkt.drop says why */
	PKT_FRAG,	/* an IPv4 fragment after the first: addresses and protocol, no L4 header */
	PKT_IPV6,	/* a well-formed IPv6 packet: proto and l4_off past its extension headers,
			 * ports (an ICMPv6 echo's id) and TCP flags as for IPv4; addresses in
			 * its header (pkt_ip6()) */
};

/* pkt.frag: whether the datagram is a fragment, and which. */
#define PKT_FRAG_FIRST	1	/* offset 0, MF: its L4 header is parsed as a whole packet's */
#define PKT_FRAG_LATER	2	/* offset > 0: kind PKT_FRAG */

struct pkt {
	uint8_t *data;
	uint32_t len;		/* Ethernet header + IPv4 total length (padding trimmed) */
	uint8_t kind;
	uint8_t drop;		/* enum cvs_drop, with PKT_BAD */
	uint8_t proto;
	uint8_t tcp_flags;
	uint16_t l4_off;
	uint16_t sport;		/* TCP/UDP port, or ICMP echo id */
	uint16_t dport;		/* TCP/UDP port, or ICMP echo id */
	uint8_t frag;		/* 0, PKT_FRAG_FIRST or PKT_FRAG_LATER */
	uint32_t saddr;
	uint32_t daddr;
};

/* 0.0.0.0/8, 127.0.0.0/8, multicast and 240.0.0.0/4 (with broadcast) never send to us. */
static inline bool
pkt_src_unicast(uint32_t saddr)
{
	uint32_t a = ntohl(saddr);

	return (a >> 24) != 0 && (a >> 24) != 127 && (a >> 28) < 0xe;
}

/*
 * Parse a frame of 'len' bytes. Returns the kind; on PKT_BAD, p->drop holds the reason.
 * Never reads outside [data, data + len).
 */
int pkt_parse(struct pkt *p, uint8_t *data, uint32_t len);

/*
 * A sender with TX checksum offload (a veth or TAP at its defaults, a virtio-net guest) leaves
 * a TCP or UDP checksum field holding the folded pseudo-header sum, for the device to finish;
 * nobody finishes it after AF_XDP or vhost-user, so the pipelines do, before they rewrite
 * anything (docs/datapath.md, "Offloads"). A complete checksum equals that value only by
 * chance (1 in 65,536), and completing such a segment writes the value it already has, so a
 * valid segment never changes; a wrong checksum of any other value stays as it is.
 * Returns 1 when it completed one. Parsed PKT_IPV4 frames only.
 */
void pkt_csum_finish(struct pkt *p, uint16_t *check);

/* The TCP or UDP checksum field of a parsed frame of either family; NULL for another protocol. */
static inline uint16_t *
pkt_l4_check(const struct pkt *p)
{
	if (p->proto == IPPROTO_TCP_)
		return &((struct tcp_hdr *)(p->data + p->l4_off))->check;
	if (p->proto == IPPROTO_UDP_)
		return &((struct udp_hdr *)(p->data + p->l4_off))->check;
	return NULL;
}

static inline int
pkt_csum_complete(struct pkt *p)
{
	uint16_t *check = pkt_l4_check(p), pseudo;

	/* A first fragment's checksum covers the whole datagram: never partial (Linux
	 * completes it before it fragments), and this segment alone would not match. */
	if (!check || p->frag)
		return 0;
	pseudo = csum_fold(csum_pseudo(p->saddr, p->daddr, p->proto,
				       (uint16_t)(p->len - p->l4_off)));
	/* A pseudo-header sum is never 0, UDP's "no checksum": that one stays. */
	if (__builtin_expect(*check != pseudo, 1))
		return 0;
	pkt_csum_finish(p, check);
	return 1;
}

/*
 * The same for a parsed PKT_IPV6 frame: its TCP or UDP checksum as a sender with checksum
 * offload leaves it, the IPv6 pseudo-header's sum (RFC 8200 8.1: both addresses, the
 * upper-layer length, the next header), completed. ICMPv6 checksums are never offloaded.
 */
int pkt_csum_complete6(struct pkt *p);

static inline struct eth_hdr *
pkt_eth(const struct pkt *p)
{
	return (struct eth_hdr *)p->data;
}

static inline struct ip4_hdr *
pkt_ip(const struct pkt *p)
{
	return (struct ip4_hdr *)(p->data + ETH_HLEN_);
}

static inline struct ipv6_hdr *
pkt_ip6(const struct pkt *p)
{
	return (struct ipv6_hdr *)(p->data + ETH_HLEN_);
}

static inline void *
pkt_l4(const struct pkt *p)
{
	return p->data + p->l4_off;
}

#endif /* CVS_PKT_H */
