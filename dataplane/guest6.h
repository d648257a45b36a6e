/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A guest's IPv6 address (docs/datapath.md, "IPv6"): the node does not assign it. A guest
 * forms it by SLAAC from our router advertisement, in --guest-prefix6 (a /64), with an
 * interface identifier of its own choosing: the modified EUI-64 of its MAC with kernel
 * defaults, a stable-privacy or random one otherwise, or a static address. The data path
 * learns the identifier per slot from the guest's own frames (dp6_in.c) and keeps it as one
 * 64-bit word, the identifier's eight bytes in address order, so any worker reads it whole;
 * until it has learnt one it takes the EUI-64 of the slot's guest MAC. Pure functions.
 */
#ifndef CVS_GUEST6_H
#define CVS_GUEST6_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The modified EUI-64 identifier of a MAC (RFC 4291 appendix A), as the word above. */
static inline uint64_t
guest6_iid_of_mac(const uint8_t mac[6])
{
	uint8_t b[8] = { (uint8_t)(mac[0] ^ 0x02), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4],
			 mac[5] };
	uint64_t v;

	memcpy(&v, b, 8);
	return v;
}

/* The identifier of an address (its low 64 bits), as the word above. */
static inline uint64_t
guest6_iid_of(const uint8_t addr[16])
{
	uint64_t v;

	memcpy(&v, addr + 8, 8);
	return v;
}

/*
 * Whether a guest may hold this identifier in a /64: not all zeros (the subnet-router
 * anycast address, RFC 4291 2.6.1) and not one of the reserved anycast identifiers
 * fdff:ffff:ffff:ff80 to fdff:ffff:ffff:ffff (RFC 2526, RFC 5453).
 */
static inline bool
guest6_iid_usable(uint64_t iid)
{
	static const uint8_t rsv[7] = { 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t b[8];

	memcpy(b, &iid, 8);
	return iid && !(!memcmp(b, rsv, 7) && b[7] >= 0x80);
}

/* The address of identifier 'iid' in the /64 'pfx'. */
static inline void
guest6_addr(uint8_t out[16], const uint8_t pfx[8], uint64_t iid)
{
	memcpy(out, pfx, 8);
	memcpy(out + 8, &iid, 8);
}

/*
 * A sandbox's address on the host path over IPv6 (--sandbox-prefix6, a /96): the prefix
 * followed by its IPv4 address (RFC 6052's /96 form), so the IPv4 address-to-slot table
 * serves both families and the registry keeps one address per sandbox.
 */
static inline void
sbx6_addr(uint8_t out[16], const uint8_t pfx[12], uint32_t ip4)
{
	memcpy(out, pfx, 12);
	memcpy(out + 12, &ip4, 4);
}

/* The IPv4 address a host-path address ends with (network order); false outside the /96. */
static inline bool
sbx6_ip4(const uint8_t a[16], const uint8_t pfx[12], uint32_t *ip4)
{
	if (memcmp(a, pfx, 12))
		return false;
	memcpy(ip4, a + 12, 4);
	return true;
}

#endif /* CVS_GUEST6_H */
