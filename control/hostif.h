/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel side of cube-dev: address, route (through the prefix) and link state. */
#ifndef CVS_HOSTIF_H
#define CVS_HOSTIF_H

#include <stddef.h>
#include <stdint.h>

/* Give ifname addr/prefix and bring it up; read its MAC. Returns 0 or -errno with err set. */
int hostif_configure(const char *ifname, uint32_t addr, uint8_t prefix, uint8_t mac[6],
		     char *err, size_t errlen);

#endif /* CVS_HOSTIF_H */
