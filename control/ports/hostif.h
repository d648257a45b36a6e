/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kernel interfaces: the kernel side of cube-dev (address, route through the prefix, link
 * state), and the address of the world interface.
 */
#ifndef CVS_HOSTIF_H
#define CVS_HOSTIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Give ifname addr/prefix and bring it up; read its MAC. Returns 0 or -errno with err set. */
int hostif_configure(const char *ifname, uint32_t addr, uint8_t prefix, uint8_t mac[6],
		     char *err, size_t errlen);

/*
 * Give ifname the IPv6 address addr/prefix (the route through the prefix comes with it), with
 * no duplicate address check: the address is ours on a link we make, and a check would hold it
 * tentative for a second. Returns 0 or -errno with err set.
 */
int hostif_configure6(const char *ifname, const uint8_t addr[16], uint8_t prefix, char *err,
		      size_t errlen);

/* An IPv4 address of ifname (the first, or 'want' if present) and its mask; 0 for none. */
uint32_t hostif_ipv4(const char *ifname, uint32_t want, uint32_t *mask);

/* Whether ifname carries the IPv6 address addr (true when that cannot be asked). */
bool hostif_has_ipv6(const char *ifname, const uint8_t addr[16]);

#endif /* CVS_HOSTIF_H */
