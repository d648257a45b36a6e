/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kernel TCP listeners on the node. A host port that the steering program takes away from the
 * kernel would silently shadow a service of the node listening on the same port, so the
 * allocator asks the kernel (sock_diag netlink) which ports of the host-port range have a
 * listener that world traffic to the node IP would reach. Control thread only.
 */
#ifndef CVS_HOSTLISTEN_H
#define CVS_HOSTLISTEN_H

#include <stdint.h>
#include <stddef.h>

/*
 * Set bit (port - lo) in 'bits' (an array of ((hi - lo + 1) + 63) / 64 words, cleared by the
 * caller) for every port in [lo, hi] with a TCP listener in this network namespace bound to
 * 'node_ip' (network order) or to a wildcard address that accepts IPv4: 0.0.0.0, a dual-stack
 * [::], or ::ffff:node_ip. Returns the number of ports found, or a negative errno when the
 * kernel could not be asked (then 'bits' is incomplete).
 */
int hostlisten_scan(uint32_t node_ip, uint16_t lo, uint16_t hi, uint64_t *bits);

/*
 * The same question for one port, as the kernel's own lookup answers it (O(1)): 1 when a
 * connection to node_ip:port would reach a listener, 0 when not, a negative errno when the
 * kernel could not be asked.
 */
int hostlisten_check(uint32_t node_ip, uint16_t port);

/*
 * The node's IPv6 address (--node-ip6; NULL: none), once before any scan: host ports answer
 * on it too, so from then on both functions also count listeners bound to it and every
 * listener on [::] (V6ONLY ones included).
 */
void hostlisten_node_ip6(const uint8_t ip6[16]);

#endif /* CVS_HOSTLISTEN_H */
