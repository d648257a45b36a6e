/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "portalloc.h"

int
portalloc_init(struct portalloc *pa, uint32_t lo, uint32_t hi)
{
	uint64_t n;

	if (lo > hi)
		return -EINVAL;
	n = (uint64_t)hi - lo + 1;
	pa->bits = calloc((n + 63) / 64, sizeof(uint64_t));
	pa->skip = calloc((n + 63) / 64, sizeof(uint64_t));
	if (!pa->bits || !pa->skip) {
		portalloc_fini(pa);
		return -ENOMEM;
	}
	pa->lo = lo;
	pa->hi = hi;
	pa->cursor = hi;	/* so the first value handed out is lo */
	pa->used = 0;
	return 0;
}

void
portalloc_fini(struct portalloc *pa)
{
	free(pa->bits);
	free(pa->skip);
	pa->bits = NULL;
	pa->skip = NULL;
}

bool
portalloc_is_used(const struct portalloc *pa, uint32_t v)
{
	uint32_t i;

	if (v < pa->lo || v > pa->hi)
		return false;
	i = v - pa->lo;
	return (pa->bits[i / 64] >> (i % 64)) & 1;
}

bool
portalloc_is_skipped(const struct portalloc *pa, uint32_t v)
{
	uint32_t i;

	if (v < pa->lo || v > pa->hi)
		return false;
	i = v - pa->lo;
	return (pa->skip[i / 64] >> (i % 64)) & 1;
}

void
portalloc_skip(struct portalloc *pa, uint32_t v, bool on)
{
	uint32_t i;

	if (v < pa->lo || v > pa->hi)
		return;
	i = v - pa->lo;
	if (on)
		pa->skip[i / 64] |= 1ull << (i % 64);
	else
		pa->skip[i / 64] &= ~(1ull << (i % 64));
}

uint32_t
portalloc_free_count(const struct portalloc *pa)
{
	uint64_t words = ((uint64_t)pa->hi - pa->lo + 1 + 63) / 64, w;
	uint32_t skipped = 0;

	for (w = 0; w < words; w++)
		skipped += (uint32_t)__builtin_popcountll(pa->skip[w] & ~pa->bits[w]);
	return pa->hi - pa->lo + 1 - pa->used - skipped;
}

int
portalloc_take(struct portalloc *pa, uint32_t v)
{
	uint32_t i;

	if (v < pa->lo || v > pa->hi)
		return -ERANGE;
	if (portalloc_is_used(pa, v))
		return -EEXIST;
	i = v - pa->lo;
	pa->bits[i / 64] |= 1ull << (i % 64);
	pa->used++;
	return 0;
}

int
portalloc_get(struct portalloc *pa, uint32_t *out)
{
	uint64_t n = (uint64_t)pa->hi - pa->lo + 1, k;
	uint32_t v = pa->cursor;

	if (pa->used >= n)
		return -ENOSPC;
	for (k = 0; k < n; k++) {
		v = (v >= pa->hi) ? pa->lo : v + 1;
		if (!portalloc_is_used(pa, v) && !portalloc_is_skipped(pa, v)) {
			portalloc_take(pa, v);
			pa->cursor = v;
			*out = v;
			return 0;
		}
	}
	return -ENOSPC;
}

void
portalloc_put(struct portalloc *pa, uint32_t v)
{
	uint32_t i;

	if (!portalloc_is_used(pa, v))
		return;
	i = v - pa->lo;
	pa->bits[i / 64] &= ~(1ull << (i % 64));
	pa->used--;
}
