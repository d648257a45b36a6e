/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 neighbour discovery on a sandbox's link (RFC 4861), per packet: the fast path is the
 * guest's router, as it is its ARP peer for IPv4. It answers a neighbour solicitation for the
 * gateway's link-local address with an advertisement carrying the gateway MAC, and a router
 * solicitation with an advertisement (default route, MTU, the guest prefix for SLAAC). Both
 * are built in place in the frame that asked, as reply_arp() does.
 *
 * A message is taken only when it is valid as RFC 4861 7.1.1 and 6.1.1 say a host or router
 * must check: hop limit 255 (it cannot have been forwarded), code 0, length, a correct ICMPv6
 * checksum, a target that is not multicast, and no source link-layer option from the
 * unspecified address. Anything else is not ours to answer.
 */
#ifndef CVS_NDP_H
#define CVS_NDP_H

#include <stdbool.h>
#include <stdint.h>

#include "pkt.h"

#define ICMP6_RS	133
#define ICMP6_RA	134
#define ICMP6_NS	135
#define ICMP6_NA	136

/* Bytes the frame's buffer must hold for any reply built here (an RA with its options). */
#define NDP_REPLY_ROOM	(ETH_HLEN_ + 40 + 16 + 8 + 8 + 32)

/* fe80::1: where every guest reaches its gateway, whatever its gateway MAC. */
extern const uint8_t ndp_gw_ll[16];

/* What a router advertisement says (RFC 4861 4.2, 4.6.2-4.6.4). */
struct ndp_ra {
	uint16_t lifetime;	/* seconds as default router; 0: not a default router */
	uint32_t mtu;		/* the link's MTU option; 0: none */
	uint8_t prefix[8];	/* a /64 for SLAAC (autonomous, off-link) */
	bool have_prefix;
	uint32_t valid;		/* the prefix's valid and preferred lifetimes, seconds */
	uint32_t preferred;
};

/* The ICMPv6 checksum of the message at p->l4_off (the pseudo-header's length from p->len). */
uint16_t ndp_icmp6_csum(const struct pkt *p);

/* A parsed PKT_IPV6 frame that is a valid neighbour solicitation for 'target'. */
bool ndp_is_ns_for(const struct pkt *p, const uint8_t target[16]);
/* A valid neighbour solicitation from an address (not a duplicate address check): its target. */
bool ndp_ns_target(const struct pkt *p, uint8_t target[16]);
/* A parsed PKT_IPV6 frame that is a valid router solicitation. */
bool ndp_is_rs(const struct pkt *p);

/*
 * Turn the solicitation into the advertisement of its target at 'mac' (router, solicited and
 * override set; to all nodes, not solicited, when the solicitation came from the unspecified
 * address: a duplicate address check). Returns the reply's length.
 */
uint32_t ndp_reply_na(struct pkt *p, const uint8_t mac[6]);

/* Turn the router solicitation into an advertisement from fe80::1 at 'mac'. Returns its length. */
uint32_t ndp_reply_ra(struct pkt *p, const uint8_t mac[6], const struct ndp_ra *ra);

/*
 * An unsolicited advertisement from fe80::1 at 'mac' to all nodes (RFC 4861 6.2.4), built in
 * 'f' (NDP_REPLY_ROOM bytes). Returns its length.
 */
uint32_t ndp_build_ra(uint8_t *f, const uint8_t mac[6], const struct ndp_ra *ra);

#endif /* CVS_NDP_H */
