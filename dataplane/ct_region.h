/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A session table laid out in memory the caller provides (a shared-memory region that outlives
 * the process), and the adoption of a table an earlier process left there. Control thread
 * only, before the worker that owns the table runs. The per-packet code sees an ordinary
 * struct ct_table: only where its arrays live changes.
 *
 * Block of one table: the struct ct_table itself, the zone heads, the sessions, the cold
 * links and the index lines, each part on a 4 KiB boundary. Pointers inside the struct are
 * rewritten on adoption, since the next process maps the region at another address.
 */
#ifndef CVS_CT_REGION_H
#define CVS_CT_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ct.h"

/* What an adoption found. */
struct ct_adopt_stats {
	uint32_t sessions;	/* sessions found valid and kept */
	uint32_t dropped;	/* sessions dropped by a rebuild: inconsistent or duplicate */
	bool rebuilt;		/* the links did not hold: rebuilt from the sessions */
};

/* Bytes of the block of one table of this shape. */
size_t ct_region_bytes(uint32_t capacity, uint32_t nzones);

/*
 * A version of everything that shapes a block: sizes and field offsets of the session, its
 * tuples, the cold links, the index line and the table struct, the slot count of a line and
 * the number of classes. Any change to those structures gives another number.
 */
uint32_t ct_layout_version(void);

/* An empty table in 'mem' (ct_region_bytes(), zeroed by the caller, 4 KiB aligned). */
struct ct_table *ct_region_init(void *mem, uint32_t capacity, uint32_t nzones,
				const uint32_t *timeouts, uint64_t seed);

/*
 * The table an earlier process left in 'mem', checked before anything follows it: the shape
 * against capacity and nzones, every list (classes, free list) walked with a bound, every
 * index entry against its session and its hash, every counter against what was counted. The
 * zone lists and the overflow counts of the index are rebuilt from the sessions.
 *
 * A process killed in the middle of an update (an insert, a delete, a move between lists)
 * leaves links that do not hold. Then nothing derived is trusted: the index, the class lists
 * (in last-seen order), the free list and every count are rebuilt from the sessions alone,
 * and only sessions that are themselves inconsistent (class, zones) or that repeat another's
 * tuple are dropped; st->rebuilt says so, with the failed check in 'why'. Returns NULL with
 * the reason in 'why' only when the table's own shape is wrong (nothing a crash can cause);
 * the memory may then have been written to.
 */
struct ct_table *ct_region_adopt(void *mem, uint32_t capacity, uint32_t nzones,
				 const uint32_t *timeouts, struct ct_adopt_stats *st, char *why,
				 size_t whylen);

/*
 * Carrying sessions into tables of another shape (an upgrade that changed --max-sandboxes,
 * --max-sessions or --workers): the tables to[0..nto) come from ct_region_init(); one
 * ct_region_carry() per old table appends each of its sessions, as it is (tuples, state,
 * windows, last seen), to the table dest() names (a negative index: to none), in one pass;
 * ct_region_settle() then builds each new table's index, class lists (oldest first), zone
 * lists and counts, as an adoption's rebuild does. A session past the new capacity, one whose
 * zone the new shape has not, or one whose tuple another carried session holds is dropped:
 * what was carried is the tables' 'used' afterwards.
 */
typedef int (*ct_dest_fn)(const struct ct_session *s, void *arg);
void ct_region_carry(struct ct_table *const *to, uint32_t nto, const struct ct_table *from,
		     ct_dest_fn dest, void *arg);
void ct_region_settle(struct ct_table *to);

/* Shape and set-up helpers shared with ct_create() (ct.c). */
void ct_shape(uint32_t capacity, uint32_t *nlines, uint32_t *ref_mask);
void ct_set_timeouts(struct ct_table *ct, const uint32_t *timeouts);
/* Timeouts (NULL: the defaults) and the grain of each class; ct6.c's as well. */
void ct_timeouts_fill(uint32_t *timeout, uint32_t *grain, const uint32_t *timeouts);
/* Zeroed memory faulted in now, huge pages where allowed (munmap() it); ct6.c's as well. */
void *ct_alloc(size_t bytes);
void ct_zones_rebuild(struct ct_table *ct);
/* For a rebuild: index both tuples of session idx (hashed h0, h1); append it to list c. */
void ct_index_session(struct ct_table *ct, uint32_t idx, uint64_t h0, uint64_t h1);
void ct_lru_push(struct ct_table *ct, uint32_t idx, enum ct_class c);

#endif /* CVS_CT_REGION_H */
