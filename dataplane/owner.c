/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ownership of frames with several workers (see owner.h). Per packet, before the pipeline.
 *
 * A frame's owner follows from the node-side end of its flow: a SNAT port belongs to the
 * worker whose share holds it, a host port and a sandbox address to the worker of that
 * sandbox. For an ICMP error that end is in the packet it quotes, which left from us.
 */
#include <stdbool.h>
#include <string.h>
#include <arpa/inet.h>

#include "guest6.h"
#include "icmperr.h"
#include "icmperr6.h"
#include "owner.h"

void
dp_snat_share(const struct dp_cfg *c, uint32_t k, uint32_t nworkers, uint16_t *lo,
	      uint16_t *hi)
{
	uint32_t span = (uint32_t)c->snat_hi - c->snat_lo + 1;

	*lo = (uint16_t)(c->snat_lo + (uint64_t)span * k / nworkers);
	*hi = (uint16_t)(c->snat_lo + (uint64_t)span * (k + 1) / nworkers - 1);
}

static inline uint32_t
owner_of_snat(const struct dp_cfg *c, uint16_t port_be, uint32_t nworkers, bool *in)
{
	return dp_snat_owner(c->snat_lo, c->snat_hi, ntohs(port_be), nworkers, in);
}

static inline uint32_t
owner_of_zone(uint32_t zone, uint32_t nworkers)
{
	return dp_slot_owner(zone - 1u, nworkers);
}

/* A node-side port: a SNAT port by its share, a TCP host port by its sandbox; else 'self'. */
static inline uint32_t
owner_of_node_port(const struct dp_cfg *c, struct dp_shared *sh, uint16_t port, uint8_t proto,
		   uint32_t nworkers, uint32_t self)
{
	uint32_t own;
	bool in;

	own = owner_of_snat(c, port, nworkers, &in);
	if (in)
		return own;
	if (proto == IPPROTO_TCP_) {
		own = atomic_load_explicit(&sh->hostport[ntohs(port)], memory_order_relaxed);
		return own ? owner_of_zone(own >> 16, nworkers) : self;
	}
	return self;
}

/* A sandbox address (network order) by its sandbox; 'self' when it is no sandbox's. */
static inline uint32_t
owner_of_sandbox_ip(const struct dp_cfg *c, struct dp_shared *sh, uint32_t ip,
		    uint32_t nworkers, uint32_t self)
{
	uint32_t idx = ntohl(ip) - ntohl(c->sbx_net), own;

	if ((ip & c->sbx_mask) != c->sbx_net || idx >= sh->ip2slot_size)
		return self;
	own = atomic_load_explicit(&sh->ip2slot[idx], memory_order_relaxed);
	return own ? owner_of_zone(own, nworkers) : self;
}

/* An ICMP error: by the source of the packet it quotes, which we sent. */
static inline uint32_t
owner_of_icmp_error(const struct dp_cfg *c, struct dp_shared *sh, enum dp_origin origin,
		    const struct pkt *p, uint32_t nworkers, uint32_t self)
{
	const struct ip4_hdr *in4;
	uint32_t ihl, avail;
	const uint8_t *l4;

	in4 = icmperr_quote(p, &ihl, &avail);
	if (!in4)
		return self;
	/* To the host we send from sandbox addresses, elsewhere from the node IP. */
	if (origin == DP_FROM_HOST)
		return owner_of_sandbox_ip(c, sh, in4->saddr, nworkers, self);
	if (in4->saddr != c->node_ip)
		return self;
	l4 = (const uint8_t *)in4 + ihl;
	return owner_of_node_port(c, sh, in4->proto == IPPROTO_ICMP_ ?
				  *(const uint16_t *)(l4 + 4) : *(const uint16_t *)l4,
				  in4->proto, nworkers, self);
}

/*
 * IPv6: from the host, by the sandbox it is for; from the world, by its node-side port (a SNAT port: a NAT66 reply; a host port: a
 * new flow to an exposed port); from a guest to the node's IPv6 address and a SNAT port, a
 * hairpin target's answer, by that port. Everything else stays with its port's worker.
 */
static inline uint32_t
owner_of_ip6(const struct dp_cfg *c, struct dp_shared *sh, enum dp_origin origin,
	     const struct pkt *p, uint32_t nworkers, uint32_t self)
{
	uint32_t own;
	bool in;

	/* The host path: by the sandbox whose IPv4 address ends the destination. */
	if (origin == DP_FROM_HOST) {
		const uint8_t *a = pkt_ip6(p)->daddr;
		uint32_t v4;

		if (!sbx6_ip4(a, c->sbx_pfx6, &v4))
			return self;
		return owner_of_sandbox_ip(c, sh, v4, nworkers, self);
	}
	if (origin == DP_FROM_WORLD) {
		uint16_t port = p->dport;
		uint8_t proto = p->proto;

		/* An ICMPv6 error: by the node-side port of the packet it quotes, which we sent. */
		if (icmperr6_is_error(p) && !icmperr6_quoted_port(p, &port, &proto))
			return self;
		return owner_of_node_port(c, sh, port, proto, nworkers, self);
	}
	if (origin == DP_FROM_SANDBOX && p->proto != IPPROTO_ICMPV6_ &&
	    !memcmp(pkt_ip6(p)->daddr, c->node_ip6, 16)) {
		own = owner_of_snat(c, p->dport, nworkers, &in);
		if (in)
			return own;
	}
	return self;
}

uint32_t
dp_owner(const struct dp_cfg *c, struct dp_shared *sh, enum dp_origin origin, uint32_t slot,
	 const uint8_t *frame, uint32_t len, uint32_t nworkers)
{
	uint32_t self = origin == DP_FROM_SANDBOX ? dp_slot_owner(slot, nworkers) : 0, own;
	struct pkt p;
	bool in;

	int kind;

	if (nworkers <= 1)
		return self;
	kind = pkt_parse(&p, (uint8_t *)frame, len);
	/* A later IPv6 fragment has no port: worker_owner() sends it after its first. */
	if (kind == PKT_IPV6 && p.frag != PKT_FRAG_LATER)
		return owner_of_ip6(c, sh, origin, &p, nworkers, self);
	if (kind != PKT_IPV4)
		return self;
	if (icmperr_is_error(&p))
		return owner_of_icmp_error(c, sh, origin, &p, nworkers, self);
	switch (origin) {
	case DP_FROM_WORLD:
		return owner_of_node_port(c, sh, p.dport, p.proto, nworkers, self);
	case DP_FROM_HOST:
		return owner_of_sandbox_ip(c, sh, p.daddr, nworkers, self);
	default:
		/* A hairpin target answers to the node IP and the SNAT port of A's worker. */
		if (p.daddr == c->node_ip && p.proto != IPPROTO_ICMP_) {
			own = owner_of_snat(c, p.dport, nworkers, &in);
			if (in)
				return own;
		}
		return self;
	}
}
