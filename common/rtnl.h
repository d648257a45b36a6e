/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The few rtnetlink requests the control side makes about one interface at a time. Each asks
 * the kernel about that interface alone: libbpf's XDP query dumps every link of the node and
 * filters, which costs a registration O(N) on a node with thousands of sandbox interfaces.
 */
#ifndef CVS_RTNL_H
#define CVS_RTNL_H

#include <stdint.h>

struct rtattr;
/* The program id inside a link's IFLA_XDP attribute: the one attached in whichever mode. */
uint32_t rtnl_xdp_nest_id(struct rtattr *xdp);

/* The id of the XDP program on ifindex (0: none). -ENODEV when there is no such interface. */
int rtnl_xdp_prog_id(int ifindex, uint32_t *id);

/* Create a veth pair 'name' <-> 'peer' with this MTU, both down. -EEXIST if 'name' exists. */
int rtnl_veth_add(const char *name, const char *peer, uint32_t mtu);

/* Set an interface up (and its MTU when mtu != 0). */
int rtnl_link_up(int ifindex, uint32_t mtu);

/* Delete an interface (a veth takes its peer along). */
int rtnl_link_del(int ifindex);

#endif /* CVS_RTNL_H */
