/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICMPv6 errors of NAT66 flows (issue 34), per packet, beside icmperr.h's IPv4 ones: an error
 * (Destination Unreachable, Packet Too Big, Time Exceeded, Parameter Problem) about a tracked
 * flow translated through the NAT either way, and the Packet Too Big the fast path sends
 * itself for a packet longer than its exit's MTU, so that path MTU discovery works through
 * the node and through smaller links behind it.
 */
#ifndef CVS_ICMPERR6_H
#define CVS_ICMPERR6_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pkt.h"

#define ICMP6_DST_UNREACH	1
#define ICMP6_PACKET_TOO_BIG	2
#define ICMP6_TIME_EXCEEDED	3
#define ICMP6_PARAM_PROB	4

/* IPv6's minimum MTU (RFC 8200 5): an error quotes as much as keeps it within (RFC 4443 2.4). */
#define ICMP6_MTU_MIN		1280u
/* Ethernet, IPv6 and ICMPv6 headers of a Packet Too Big. */
#define ICMP6_ERR_HLEN		(ETH_HLEN_ + 40u + 8u)

static inline bool
icmperr6_is_error(const struct pkt *p)
{
	const uint8_t *l4 = pkt_l4(p);

	return p->proto == IPPROTO_ICMPV6_ && !p->frag && p->l4_off == ETH_HLEN_ + 40 &&
	       p->len >= p->l4_off + 8u && l4[0] >= ICMP6_DST_UNREACH && l4[0] <= ICMP6_PARAM_PROB;
}

/*
 * The node-side port of the packet error 'p' quotes (its source port, an echo's id) and its
 * protocol, as the steering program reads them: false when the quote is too short.
 */
static inline bool
icmperr6_quoted_port(const struct pkt *p, uint16_t *port, uint8_t *proto)
{
	const uint8_t *q = (const uint8_t *)pkt_l4(p) + 8, *l4 = q + 40;
	uint32_t avail = p->len - p->l4_off - 8;
	uint8_t nh = q[6];

	if (avail < 48)
		return false;
	if (nh == IP6_NH_FRAGMENT) {
		if (avail < 56)
			return false;
		nh = l4[0];
		l4 += 8;
	}
	memcpy(port, l4 + (nh == IPPROTO_ICMPV6_ ? 4 : 0), 2);
	*proto = nh;
	return true;
}

/*
 * Rewrite in place 'frame' ('len' bytes, Ethernet and IPv6, 'room' bytes of buffer) into the
 * Packet Too Big (RFC 4443 3.2) that answers it: from 'src' to the frame's source, Ethernet
 * addresses swapped, hop limit 64, 'mtu' in its MTU field, quoting the packet from its IPv6
 * header on as far as the answer stays within 1,280 bytes (and 'room'). Returns the answer's
 * length, or 0 (the frame left as it was) for one never answered (RFC 4443 2.4 (e)): an ICMPv6
 * error or a message too short to tell, an unspecified or multicast source, a destination
 * that is a group (Ethernet or IPv6), or less than its IPv6 header and 8 bytes.
 */
uint32_t icmperr6_too_big(uint8_t *frame, uint32_t len, uint32_t room, const uint8_t src[16],
			  uint32_t mtu);

struct dp_ctx;
struct dp_result;

/*
 * The pipelines' side (dp6.c), a frame at a time: translate an ICMPv6 error that came in
 * 'zone' (0 the world, slot + 1 a guest) about a flow of the IPv6 session table, and send it
 * towards the flow's other endpoint; or drop it, counted (l4_header for a quote too short or
 * not IPv6, icmp_no_flow for one no session has).
 */
void dp6_icmp_error(struct dp_ctx *x, uint16_t zone, struct pkt *p, struct dp_result *r);

/*
 * A packet from 'zone' longer than its exit's 'mtu': answered with a Packet Too Big from the
 * router its sender sees (fe80::1 for a guest, the node's IPv6 address for the world), else
 * a too_big drop.
 */
void dp6_too_big(struct dp_ctx *x, uint16_t zone, uint16_t mtu, struct pkt *p,
		 struct dp_result *r);

#endif /* CVS_ICMPERR6_H */
