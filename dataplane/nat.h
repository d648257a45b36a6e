/* SPDX-License-Identifier: BSD-3-Clause */
/* Address and port rewriting of a parsed IPv4 packet. Per packet. */
#ifndef CVS_NAT_H
#define CVS_NAT_H

#include <stdint.h>

#include "pkt.h"

/*
 * Rewrite the addresses and ports of a parsed IPv4 packet (for ICMP the echo id takes sport),
 * updating the IP and L4 checksums incrementally, and the parsed fields in 'p' with them.
 */
void nat_rewrite(struct pkt *p, uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport);

/*
 * The same for a parsed IPv6 packet (PKT_IPV6, TCP, UDP or ICMPv6; for ICMPv6 the echo id
 * takes sport): IPv6 has no header checksum, and all three upper-layer checksums cover the
 * addresses through the pseudo-header, so each takes the addresses' and the ports' deltas.
 */
void nat6_rewrite(struct pkt *p, const uint8_t saddr[16], const uint8_t daddr[16],
		  uint16_t sport, uint16_t dport);

#endif /* CVS_NAT_H */
