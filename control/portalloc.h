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
};

int portalloc_init(struct portalloc *pa, uint32_t lo, uint32_t hi);
void portalloc_fini(struct portalloc *pa);
/* Returns 0 and the value, or -ENOSPC when every value is taken. */
int portalloc_get(struct portalloc *pa, uint32_t *out);
/* Take a specific value: 0, -EEXIST when taken, -ERANGE outside the range. */
int portalloc_take(struct portalloc *pa, uint32_t v);
void portalloc_put(struct portalloc *pa, uint32_t v);
bool portalloc_is_used(const struct portalloc *pa, uint32_t v);
uint32_t portalloc_free_count(const struct portalloc *pa);

#endif /* CVS_PORTALLOC_H */
