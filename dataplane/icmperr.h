/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICMP errors (unreachable, time exceeded, parameter problem) about a tracked flow, translated
 * through the NAT so that path MTU discovery and connection errors reach the endpoint. Per
 * packet: the pipeline asks icmperr_is_error() of every packet, dp_owner() reads the quote to
 * find the owning worker, and icmperr_translate() runs on each error.
 */
#ifndef CVS_ICMPERR_H
#define CVS_ICMPERR_H

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "ct.h"
#include "pkt.h"

static inline bool
icmperr_is_error(const struct pkt *p)
{
	const struct icmp_hdr *ih = pkt_l4(p);

	return p->proto == IPPROTO_ICMP_ && (ih->type == ICMP_UNREACH_ ||
	       ih->type == ICMP_TIMXCEED_ || ih->type == ICMP_PARAMPROB_);
}

/*
 * The IPv4 header an ICMP error quotes (after the first 8 bytes of the ICMP header), its length
 * in *ihl and the quoted bytes present in *avail; NULL when the quote cannot hold that header
 * and the 8 bytes of ports after it. The version is not checked here.
 */
static inline struct ip4_hdr *
icmperr_quote(const struct pkt *p, uint32_t *ihl, uint32_t *avail)
{
	struct ip4_hdr *in = (struct ip4_hdr *)((uint8_t *)pkt_l4(p) + 8);

	*avail = p->len - p->l4_off - 8;
	if (*avail < sizeof(*in) + 8)
		return NULL;
	*ihl = (in->ver_ihl & 15) * 4u;
	if (*ihl < sizeof(*in) || *avail < *ihl + 8)
		return NULL;
	return in;
}

/*
 * Translate in place an ICMP error that arrived in 'zone' (0 world, slot + 1, CVS_ZONE_HOST):
 * the quoted packet becomes what the flow's other endpoint sent, the outer header is addressed
 * to that endpoint, and the ICMP checksum is updated incrementally. Returns the flow's session,
 * the error to leave towards s->t[*dir ^ 1].zone; or NULL with the drop reason in *why.
 */
struct ct_session *icmperr_translate(struct ct_table *ct, uint16_t zone, struct pkt *p,
				     int *dir, enum cvs_drop *why);

#endif /* CVS_ICMPERR_H */
