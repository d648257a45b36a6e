/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Round-robin allocator over an integer range [lo, hi]: the next allocation is the first free
 * value after the last one handed out, so a value just released is reused last. Used for host
 * ports, sandbox addresses and sandbox slots. Control thread only.
 */
#ifndef CVS_PORTALLOC_H
#define CVS_PORTALLOC_H

#include <stdbool.h>
#include <stdint.h>

struct portalloc {
	uint32_t lo;
	uint32_t hi;
	uint32_t cursor;	/* last value handed out */
	uint32_t used;
	uint64_t *bits;
	uint64_t *skip;		/* free values that portalloc_get() must not hand out */
};

int portalloc_init(struct portalloc *pa, uint32_t lo, uint32_t hi);
void portalloc_fini(struct portalloc *pa);
/* Returns 0 and the value, or -ENOSPC when every value is taken. */
int portalloc_get(struct portalloc *pa, uint32_t *out);
/* Take a specific value: 0, -EEXIST when taken, -ERANGE outside the range. */
int portalloc_take(struct portalloc *pa, uint32_t v);
void portalloc_put(struct portalloc *pa, uint32_t v);
bool portalloc_is_used(const struct portalloc *pa, uint32_t v);
/* Free values that portalloc_get() may still hand out (skipped ones are not counted). */
uint32_t portalloc_free_count(const struct portalloc *pa);
/*
 * Keep a value out of portalloc_get() (reserved, or in use by someone else) without taking
 * it: portalloc_take() still succeeds, so a value restored from saved state is honoured.
 */
void portalloc_skip(struct portalloc *pa, uint32_t v, bool on);
bool portalloc_is_skipped(const struct portalloc *pa, uint32_t v);

#endif /* CVS_PORTALLOC_H */
