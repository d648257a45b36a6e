/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 table's block in the session region (ct6_region.h): ct_region.c's checks and
 * rebuild for struct ct6_table. Kept apart from ct_region.c because the two tables share no
 * struct, only the design.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ct6_region.h"

#define CT6_PAGE 4096u

static size_t
ct6_round(size_t n)
{
	return (n + CT6_PAGE - 1) & ~(size_t)(CT6_PAGE - 1);
}

struct ct6_parts {
	size_t zones, sessions, lru, lines, end;
	uint32_t nlines, ref_mask;
};

static void
ct6_parts_of(uint32_t capacity, uint32_t nzones, struct ct6_parts *p)
{
	ct_shape(capacity, &p->nlines, &p->ref_mask);
	p->zones = ct6_round(sizeof(struct ct6_table));
	p->sessions = p->zones + ct6_round(((size_t)nzones + 1) * sizeof(uint32_t));
	p->lru = p->sessions + ct6_round((size_t)capacity * sizeof(struct ct6_session));
	p->lines = p->lru + ct6_round((size_t)capacity * sizeof(struct ct_link));
	p->end = p->lines + ct6_round((size_t)p->nlines * sizeof(struct ct_line));
}

size_t
ct6_region_bytes(uint32_t capacity, uint32_t nzones)
{
	struct ct6_parts p;

	ct6_parts_of(capacity, nzones, &p);
	return p.end;
}

uint32_t
ct6_layout_version(void)
{
	const uint64_t shape[] = {
		sizeof(struct ct6_tuple), sizeof(struct ct6_session), sizeof(struct ct_link),
		sizeof(struct ct_line), sizeof(struct ct6_table), CT_LINE_SLOTS, CT_C_MAX,
		CT_TCP_MAX, CT6_PROBE_LINES, offsetof(struct ct6_session, t),
		offsetof(struct ct6_session, zl), offsetof(struct ct6_session, last_seen),
		offsetof(struct ct6_session, end), offsetof(struct ct6_session, lag),
		offsetof(struct ct6_session, queued), offsetof(struct ct6_session, state),
		offsetof(struct ct6_session, cls), offsetof(struct ct6_session, flags),
		offsetof(struct ct6_session, wscale), offsetof(struct ct6_session, maxwin),
		offsetof(struct ct6_session, peer_mac), offsetof(struct ct6_session, pol_ver),
		offsetof(struct ct6_tuple, sport), offsetof(struct ct6_tuple, zone),
		offsetof(struct ct6_tuple, proto), offsetof(struct ct6_table, lines),
		offsetof(struct ct6_table, lru_head), offsetof(struct ct6_table, key),
		offsetof(struct ct6_table, cnt), CT_F_USED, CT_F_POLICY,
	};
	uint32_t h = 2166136261u;
	size_t i;
	int b;

	for (i = 0; i < sizeof(shape) / sizeof(shape[0]); i++)
		for (b = 0; b < 64; b += 8)
			h = (h ^ (uint8_t)(shape[i] >> b)) * 16777619u;
	return h;
}

static void
ct6_point(struct ct6_table *ct, uint8_t *base, const struct ct6_parts *p)
{
	ct->zone_head = (uint32_t *)(base + p->zones);
	ct->s = (struct ct6_session *)(base + p->sessions);
	ct->lru = (struct ct_link *)(base + p->lru);
	ct->lines = (struct ct_line *)(base + p->lines);
	ct->zone_cnt = ct->ep_cnt = NULL;
	ct->in_region = true;
}

static bool
ct6_shape_ok(uint32_t capacity, uint32_t nzones)
{
	return capacity && capacity < (1u << 30) && nzones < UINT16_MAX;
}

struct ct6_table *
ct6_region_init(void *mem, uint32_t capacity, uint32_t nzones, const uint32_t *timeouts)
{
	struct ct6_table *ct = mem;
	struct ct6_parts p;
	uint32_t i;

	if (!ct6_shape_ok(capacity, nzones))
		return NULL;
	ct6_parts_of(capacity, nzones, &p);
	memset(ct, 0, sizeof(*ct));
	ct6_point(ct, mem, &p);
	ct->capacity = capacity;
	ct->nzones = nzones;
	ct->nlines = p.nlines;
	ct->ref_mask = p.ref_mask;
	ct->free_head = CT_NIL;
	for (i = 0; i <= nzones; i++)
		ct->zone_head[i] = CT_NIL;
	for (i = 0; i < CT_C_MAX; i++)
		ct->lru_head[i] = ct->lru_tail[i] = CT_NIL;
	ct_timeouts_fill(ct->timeout, ct->grain, timeouts);
	/* As ct6_create(): a fixed key only when the kernel has no getrandom. */
	if (getrandom(ct->key, sizeof(ct->key), 0) != sizeof(ct->key))
		for (i = 0; i < 4; i++)
			ct->key[i] = 0x9e3779b97f4a7c15ull * (i + 1);
	if (ct6_counts_alloc(ct))
		return NULL;
	return ct;
}

static bool __attribute__((format(printf, 3, 4)))
ct6_bad(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return false;
}

#define BIT_GET(b, i)	((b)[(i) >> 6] >> ((i) & 63) & 1)
#define BIT_SET(b, i)	((b)[(i) >> 6] |= 1ull << ((i) & 63))

static bool
ct6_session_sane(const struct ct6_table *ct, const struct ct6_session *s)
{
	int d;

	if (s->cls >= CT_C_MAX)
		return false;
	for (d = 0; d < 2; d++)
		if (s->t[d].zone > ct->nzones && s->t[d].zone != UINT16_MAX)
			return false;
	return true;
}

static bool
ct6_check_sessions(const struct ct6_table *ct, char *why, size_t len)
{
	uint32_t i, used = 0;

	for (i = 0; i < ct->hiwater; i++) {
		const struct ct6_session *s = &ct->s[i];

		if (!(s->flags & CT_F_USED))
			continue;
		used++;
		if (!ct6_session_sane(ct, s))
			return ct6_bad(why, len, "IPv6 session %u: class %u, zones %u/%u", i,
				       s->cls, s->t[0].zone, s->t[1].zone);
	}
	if (used != ct->used)
		return ct6_bad(why, len, "%u IPv6 sessions marked used, the table says %u", used,
			       ct->used);
	return true;
}

/* Each class list and the free list: in bounds, no loop, links and counts agree. */
static bool
ct6_check_lists(const struct ct6_table *ct, uint64_t *seen, char *why, size_t len)
{
	uint32_t c, n, idx, prev, total = 0;

	for (c = 0; c < CT_C_MAX; c++) {
		prev = CT_NIL;
		for (idx = ct->lru_head[c], n = 0; idx != CT_NIL; idx = ct->lru[idx].next, n++) {
			if (idx >= ct->hiwater || BIT_GET(seen, idx))
				return ct6_bad(why, len, "IPv6 class %s: link %u out of bounds or "
					       "looped", ct_class_names[c], idx);
			if (!(ct->s[idx].flags & CT_F_USED) || ct->s[idx].cls != c ||
			    ct->lru[idx].prev != prev)
				return ct6_bad(why, len, "IPv6 class %s: session %u is not linked "
					       "as its neighbours say", ct_class_names[c], idx);
			BIT_SET(seen, idx);
			prev = idx;
		}
		if (ct->lru_tail[c] != prev || ct->class_count[c] != n)
			return ct6_bad(why, len, "IPv6 class %s: tail or count does not match "
				       "its list", ct_class_names[c]);
		total += n;
	}
	if (total != ct->used)
		return ct6_bad(why, len, "%u IPv6 sessions listed, %u used", total, ct->used);
	for (idx = ct->free_head, n = 0; idx != CT_NIL; idx = ct->lru[idx].next, n++) {
		if (idx >= ct->hiwater || BIT_GET(seen, idx) || (ct->s[idx].flags & CT_F_USED))
			return ct6_bad(why, len, "IPv6 free list: entry %u out of bounds, looped "
				       "or used", idx);
		BIT_SET(seen, idx);
	}
	if (n != ct->hiwater - ct->used)
		return ct6_bad(why, len, "IPv6 free list holds %u, expected %u", n,
			       ct->hiwater - ct->used);
	return true;
}

/*
 * Every index entry names a used session whose tuple hashes to its tag, each tuple once, no
 * further than CT6_PROBE_LINES from its home line; the overflow counts are recomputed.
 */
static bool
ct6_check_index(struct ct6_table *ct, uint64_t *seen, char *why, size_t len)
{
	uint32_t li, k, n, refs = 0;

	for (li = 0; li < ct->nlines; li++)
		ct->lines[li].w[CT_LINE_SLOTS] = 0;
	for (li = 0; li < ct->nlines; li++) {
		for (k = 0; k < CT_LINE_SLOTS; k++) {
			uint32_t v = ct->lines[li].w[k], ref = v & ct->ref_mask, h_li;
			const struct ct6_session *s;
			uint64_t h;

			if (!v)
				continue;
			if (!ref || ((ref - 1) >> 1) >= ct->hiwater || BIT_GET(seen, ref - 1))
				return ct6_bad(why, len, "IPv6 index line %u: reference %u out of "
					       "bounds or twice", li, ref);
			s = &ct->s[(ref - 1) >> 1];
			h = ct6_hash_tuple(ct, &s->t[(ref - 1) & 1]);
			if (!(s->flags & CT_F_USED) ||
			    ct_hash_tag(h, ct->ref_mask) != (v & ~ct->ref_mask))
				return ct6_bad(why, len, "IPv6 index line %u: entry does not "
					       "match session %u", li, (ref - 1) >> 1);
			BIT_SET(seen, ref - 1);
			refs++;
			h_li = ct_hash_line(h, ct->nlines);
			for (n = 0; h_li != li; h_li = ct_hash_next(h_li, ct->nlines), n++) {
				if (n + 1 >= CT6_PROBE_LINES)
					return ct6_bad(why, len, "IPv6 index line %u: entry past "
						       "the probe bound", li);
				ct->lines[h_li].w[CT_LINE_SLOTS]++;
			}
		}
	}
	if (refs != 2 * ct->used)
		return ct6_bad(why, len, "IPv6 index holds %u tuples for %u sessions", refs,
			       ct->used);
	return true;
}

static int
ct6_key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The class lists from the kept sessions, oldest first. */
static void
ct6_rebuild_lists(struct ct6_table *ct)
{
	uint64_t *keys = malloc(((size_t)ct->used + 1) * sizeof(*keys));
	uint32_t i, k = 0;

	for (i = 0; i < ct->hiwater; i++) {
		const struct ct6_session *s = &ct->s[i];

		if (!(s->flags & CT_F_USED))
			continue;
		if (!keys)	/* no memory for the order: index order, expiry only later */
			ct6_lru_push(ct, i, (enum ct_class)s->cls);
		else
			keys[k++] = (uint64_t)s->last_seen << 32 | i;
	}
	if (!keys)
		return;
	qsort(keys, k, sizeof(*keys), ct6_key_cmp);
	for (i = 0; i < k; i++)
		ct6_lru_push(ct, (uint32_t)keys[i], (enum ct_class)ct->s[(uint32_t)keys[i]].cls);
	free(keys);
}

/* Everything derived, from the sessions alone. Returns how many were dropped. */
static uint32_t
ct6_rebuild(struct ct6_table *ct)
{
	uint32_t i, c, dropped = 0;
	int d;

	memset(ct->lines, 0, (size_t)ct->nlines * sizeof(*ct->lines));
	for (c = 0; c < CT_C_MAX; c++) {
		ct->lru_head[c] = ct->lru_tail[c] = CT_NIL;
		ct->class_count[c] = 0;
	}
	ct->free_head = CT_NIL;
	ct->used = 0;
	for (i = 0; i < ct->hiwater; i++) {
		struct ct6_session *s = &ct->s[i];
		uint64_t h0, h1;

		if (!(s->flags & CT_F_USED))
			continue;
		h0 = ct6_hash_tuple(ct, &s->t[0]);
		h1 = ct6_hash_tuple(ct, &s->t[1]);
		if (!ct6_session_sane(ct, s) || ct6_tuple_eq(&s->t[0], &s->t[1]) ||
		    ct6_lookup_hash(ct, &s->t[0], h0, &d) || ct6_lookup_hash(ct, &s->t[1], h1, &d) ||
		    !ct6_index_session(ct, i, h0, h1)) {
			s->flags = 0;
			dropped++;
			continue;
		}
		ct->used++;
	}
	ct6_rebuild_lists(ct);
	for (i = ct->hiwater; i-- > 0;) {
		if (ct->s[i].flags & CT_F_USED)
			continue;
		ct->lru[i].next = ct->free_head;
		ct->free_head = i;
	}
	return dropped;
}

/* What a process derives from sessions it takes over (as ct_region.c's ct_region_derive). */
static void
ct6_region_derive(struct ct6_table *ct)
{
	uint32_t i;

	ct6_zones_rebuild(ct);
	ct6_recount_zones(ct);
	for (i = 0; i < ct->hiwater; i++)
		ct->s[i].pol_ver = UINT16_MAX;
}

void
ct6_region_carry(struct ct6_table *const *to, uint32_t nto, const struct ct6_table *from,
		 ct6_dest_fn dest, void *arg)
{
	uint32_t i;
	int k;

	for (i = 0; i < from->hiwater; i++) {
		const struct ct6_session *s = &from->s[i];

		if (!(s->flags & CT_F_USED))
			continue;
		k = dest(s, arg);
		if (k >= 0 && (uint32_t)k < nto && to[k]->hiwater < to[k]->capacity)
			to[k]->s[to[k]->hiwater++] = *s;
	}
}

void
ct6_region_settle(struct ct6_table *to)
{
	ct6_rebuild(to);
	ct6_region_derive(to);
}

struct ct6_table *
ct6_region_adopt(void *mem, uint32_t capacity, uint32_t nzones, const uint32_t *timeouts,
		 struct ct_adopt_stats *st, char *why, size_t whylen)
{
	struct ct6_table *ct = mem;
	struct ct6_parts p;
	size_t words = ((size_t)capacity * 2 + 63) / 64;
	uint64_t *seen;
	bool ok;

	memset(st, 0, sizeof(*st));
	if (!ct6_shape_ok(capacity, nzones)) {
		ct6_bad(why, whylen, "IPv6 shape %u/%u not supported", capacity, nzones);
		return NULL;
	}
	ct6_parts_of(capacity, nzones, &p);
	if (ct->capacity != capacity || ct->nzones != nzones || ct->nlines != p.nlines ||
	    ct->ref_mask != p.ref_mask || ct->hiwater > capacity) {
		ct6_bad(why, whylen, "IPv6 table shape %u sessions/%u zones (%u touched), "
			"expected %u/%u", ct->capacity, ct->nzones, ct->hiwater, capacity, nzones);
		return NULL;
	}
	ct6_point(ct, mem, &p);
	seen = calloc(words, sizeof(*seen));
	if (!seen) {
		ct6_bad(why, whylen, "out of memory");
		return NULL;
	}
	ok = ct6_check_sessions(ct, why, whylen) && ct6_check_lists(ct, seen, why, whylen);
	if (ok) {
		memset(seen, 0, words * sizeof(*seen));
		ok = ct6_check_index(ct, seen, why, whylen);
	}
	free(seen);
	if (!ok) {
		st->rebuilt = true;
		st->dropped = ct6_rebuild(ct);
	}
	if (ct6_counts_alloc(ct)) {
		ct6_bad(why, whylen, "out of memory");
		return NULL;
	}
	ct6_region_derive(ct);
	ct_timeouts_fill(ct->timeout, ct->grain, timeouts);
	memset(&ct->cnt, 0, sizeof(ct->cnt));
	st->sessions = ct->used;
	return ct;
}
