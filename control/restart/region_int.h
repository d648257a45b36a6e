/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the session region module only: what region.c and region6.c (the IPv6 tables of a
 * region) share. Not for anyone else: region.h is the module's face.
 */
#ifndef CVS_REGION_INT_H
#define CVS_REGION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "region.h"

#define REGION_ALIGN	4096u
/* Records in the header's page, after the header: the IPv6 tables', the release's. */
#define REGION6_OFF		1024u
#define REGION_RELEASE_OFF	2048u

/*
 * Where everything goes: header, zone records, one IPv4 table block per worker, then one
 * IPv6 block per worker (when capacity6; table6_off may be NULL). The file's size.
 */
size_t region_layout(const struct region_want *w, uint64_t *table_off, uint64_t *table6_off,
		     uint64_t *slots_off, size_t align);

/*
 * Where a carried session goes: with the same worker count, the new table of its old worker
 * ('same', the old index); with another, the worker that owns it now (owner.h's rules), or
 * none when no worker could serve it.
 */
struct region_dest {
	const struct region_want *w;
	int same;		/* -1: the worker count changed */
};

/* The IPv6 record for the tables of 'w' (none, zeroed, without capacity6). */
void region6_write(void *base, const struct region_want *w);
/*
 * The IPv6 tables of a mapped region whose header passed (shape *own): adopted, or laid out
 * empty in place when the record or a table does not hold (rg->info.refused6, why6).
 */
void region6_adopt(struct region *rg, const struct region_want *w, const struct region_want *own);
/* One old worker's IPv6 table carried into rg's (none: dropped); returns its size. */
uint32_t region6_carry(struct region *rg, const struct region_want *w,
		       const struct ct6_table *from, struct region_dest *o);

#endif /* CVS_REGION_INT_H */
