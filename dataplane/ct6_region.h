/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 session table (ct6.h) laid out in memory the caller provides, the session region's
 * second block per worker, and its adoption: ct_region.h's design for the other session size
 * (the struct ct6_table, the zone heads, the sessions, the class-list links and the index
 * lines, each part on a 4 KiB boundary; pointers rewritten on adoption). Control thread only,
 * before the worker that owns the table runs.
 */
#ifndef CVS_CT6_REGION_H
#define CVS_CT6_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ct6.h"
#include "ct_region.h"

/* IPv6 sessions of a worker whose IPv4 table holds 'v4': a quarter, at least 1,024. */
static inline uint32_t
ct6_capacity_of(uint32_t v4)
{
	return v4 / 4 > 1024 ? v4 / 4 : 1024;
}

/* Bytes of the block of one table of this shape. */
size_t ct6_region_bytes(uint32_t capacity, uint32_t nzones);

/* ct_layout_version()'s counterpart for the IPv6 structures. */
uint32_t ct6_layout_version(void);

/* An empty table in 'mem' (ct6_region_bytes(), zeroed, 4 KiB aligned), with a random key. */
struct ct6_table *ct6_region_init(void *mem, uint32_t capacity, uint32_t nzones,
				  const uint32_t *timeouts);

/*
 * The table an earlier process left in 'mem', checked as ct_region_adopt() checks an IPv4
 * one (the shape, every list, every index entry against its session and hash, every count),
 * rebuilt from its sessions when its links do not hold. NULL with the reason in 'why' only
 * when its own shape is wrong.
 */
struct ct6_table *ct6_region_adopt(void *mem, uint32_t capacity, uint32_t nzones,
				   const uint32_t *timeouts, struct ct_adopt_stats *st,
				   char *why, size_t whylen);

/* ct_region_carry() and ct_region_settle() for IPv6 tables. */
typedef int (*ct6_dest_fn)(const struct ct6_session *s, void *arg);
void ct6_region_carry(struct ct6_table *const *to, uint32_t nto, const struct ct6_table *from,
		      ct6_dest_fn dest, void *arg);
void ct6_region_settle(struct ct6_table *to);

/* ct6.c's, for a rebuild: the counts' memory; both tuples of idx into the index (false: no
 * room within the probe bound); idx onto class list c; the zone lists from the sessions. */
int ct6_counts_alloc(struct ct6_table *ct);
bool ct6_index_session(struct ct6_table *ct, uint32_t idx, uint64_t h0, uint64_t h1);
void ct6_lru_push(struct ct6_table *ct, uint32_t idx, enum ct_class c);
void ct6_zones_rebuild(struct ct6_table *ct);

#endif /* CVS_CT6_REGION_H */
