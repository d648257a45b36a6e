/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_region.h"

#define CT_PAGE 4096u

static size_t
ct_round(size_t n)
{
	return (n + CT_PAGE - 1) & ~(size_t)(CT_PAGE - 1);
}

/* Offsets of the parts of a block; the same function lays out and adopts. */
struct ct_parts {
	size_t zones, sessions, cold, lines, end;
	uint32_t nlines, ref_mask;
};

static void
ct_parts_of(uint32_t capacity, uint32_t nzones, struct ct_parts *p)
{
	ct_shape(capacity, &p->nlines, &p->ref_mask);
	p->zones = ct_round(sizeof(struct ct_table));
	p->sessions = p->zones + ct_round(((size_t)nzones + 1) * sizeof(uint32_t));
	p->cold = p->sessions + ct_round((size_t)capacity * sizeof(struct ct_session));
	p->lines = p->cold + ct_round((size_t)capacity * sizeof(struct ct_cold));
	p->end = p->lines + ct_round((size_t)p->nlines * sizeof(struct ct_line));
}

size_t
ct_region_bytes(uint32_t capacity, uint32_t nzones)
{
	struct ct_parts p;

	ct_parts_of(capacity, nzones, &p);
	return p.end;
}

static uint32_t
ct_fnv(uint32_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (uint8_t)v) * 16777619u;
	return h;
}

uint32_t
ct_layout_version(void)
{
	const uint64_t shape[] = {
		sizeof(struct ct_tuple), sizeof(struct ct_session), sizeof(struct ct_cold),
		sizeof(struct ct_line), sizeof(struct ct_table), CT_LINE_SLOTS, CT_C_MAX,
		CT_TCP_MAX, offsetof(struct ct_session, t), offsetof(struct ct_cold, lru),
		offsetof(struct ct_cold, zl),
		offsetof(struct ct_session, last_seen), offsetof(struct ct_session, queued),
		offsetof(struct ct_session, state), offsetof(struct ct_session, cls),
		offsetof(struct ct_session, flags), offsetof(struct ct_session, peer_mac),
		offsetof(struct ct_session, pol_ver), offsetof(struct ct_tuple, zone),
		offsetof(struct ct_tuple, proto), offsetof(struct ct_table, lines),
		offsetof(struct ct_table, lru_head), offsetof(struct ct_table, seed),
		offsetof(struct ct_table, cnt), CT_F_USED, CT_F_POLICY,
#ifdef CVS_LAYOUT_SALT
		/* A build option that changes the version alone, to test a refused upgrade. */
		CVS_LAYOUT_SALT,
#endif
	};
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < sizeof(shape) / sizeof(shape[0]); i++)
		h = ct_fnv(h, shape[i]);
	return h;
}

static void
ct_point(struct ct_table *ct, uint8_t *base, const struct ct_parts *p)
{
	ct->zone_head = (uint32_t *)(base + p->zones);
	ct->s = (struct ct_session *)(base + p->sessions);
	ct->c = (struct ct_cold *)(base + p->cold);
	ct->lines = (struct ct_line *)(base + p->lines);
	ct->in_region = true;
}

struct ct_table *
ct_region_init(void *mem, uint32_t capacity, uint32_t nzones, const uint32_t *timeouts,
	       uint64_t seed)
{
	struct ct_table *ct = mem;
	struct ct_parts p;
	uint32_t i;

	if (capacity == 0 || capacity >= (1u << 30) || nzones >= UINT16_MAX)
		return NULL;
	ct_parts_of(capacity, nzones, &p);
	memset(ct, 0, sizeof(*ct));
	ct_point(ct, mem, &p);
	ct->capacity = capacity;
	ct->nzones = nzones;
	ct->nlines = p.nlines;
	ct->ref_mask = p.ref_mask;
	ct->free_head = CT_NIL;
	ct->seed = seed;
	for (i = 0; i <= nzones; i++)
		ct->zone_head[i] = CT_NIL;
	for (i = 0; i < CT_C_MAX; i++)
		ct->lru_head[i] = ct->lru_tail[i] = CT_NIL;
	ct_set_timeouts(ct, timeouts);
	if (ct_counts_alloc(ct))
		return NULL;
	return ct;
}

static bool __attribute__((format(printf, 3, 4)))
ct_bad(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return false;
}

#define BIT_GET(b, i)	((b)[(i) >> 6] >> ((i) & 63) & 1)
#define BIT_SET(b, i)	((b)[(i) >> 6] |= 1ull << ((i) & 63))

/* A session that can be kept as it is: a class, zones that name a port we have. */
static bool
ct_session_sane(const struct ct_table *ct, const struct ct_session *s)
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
ct_check_sessions(const struct ct_table *ct, char *why, size_t len)
{
	uint32_t i, used = 0;

	for (i = 0; i < ct->hiwater; i++) {
		const struct ct_session *s = &ct->s[i];

		if (!(s->flags & CT_F_USED))
			continue;
		used++;
		if (!ct_session_sane(ct, s))
			return ct_bad(why, len, "session %u: class %u, zones %u/%u", i, s->cls,
				      s->t[0].zone, s->t[1].zone);
	}
	if (used != ct->used)
		return ct_bad(why, len, "%u sessions marked used, the table says %u", used,
			      ct->used);
	return true;
}

/* Each class list from head to tail: in bounds, no loop, back links agree, counts agree. */
static bool
ct_check_lists(const struct ct_table *ct, uint64_t *seen, char *why, size_t len)
{
	uint32_t c, n, idx, prev, total = 0;

	for (c = 0; c < CT_C_MAX; c++) {
		prev = CT_NIL;
		for (idx = ct->lru_head[c], n = 0; idx != CT_NIL; idx = ct->c[idx].lru.next, n++) {
			const struct ct_session *s;

			if (idx >= ct->hiwater || BIT_GET(seen, idx))
				return ct_bad(why, len, "class %s: link %u out of bounds or looped",
					      ct_class_names[c], idx);
			s = &ct->s[idx];
			if (!(s->flags & CT_F_USED) || s->cls != c || ct->c[idx].lru.prev != prev)
				return ct_bad(why, len, "class %s: session %u is not linked as "
					      "its neighbours say", ct_class_names[c], idx);
			BIT_SET(seen, idx);
			prev = idx;
		}
		if (ct->lru_tail[c] != prev || ct->class_count[c] != n)
			return ct_bad(why, len, "class %s: tail or count does not match its list",
				      ct_class_names[c]);
		total += n;
	}
	if (total != ct->used)
		return ct_bad(why, len, "%u sessions on the class lists, %u used", total, ct->used);
	/* The free list: sessions given back, below hiwater, each once. */
	for (idx = ct->free_head, n = 0; idx != CT_NIL; idx = ct->c[idx].lru.next, n++) {
		if (idx >= ct->hiwater || BIT_GET(seen, idx) || (ct->s[idx].flags & CT_F_USED))
			return ct_bad(why, len, "free list: entry %u out of bounds, looped or used",
				      idx);
		BIT_SET(seen, idx);
	}
	if (n != ct->hiwater - ct->used)
		return ct_bad(why, len, "free list holds %u, expected %u", n,
			      ct->hiwater - ct->used);
	return true;
}

/*
 * Every index entry names a used session whose tuple hashes to the entry's tag, each tuple
 * once; then the overflow counts are recomputed from where each entry sits against its home.
 */
static bool
ct_check_index(struct ct_table *ct, uint64_t *seen, char *why, size_t len)
{
	uint32_t li, k, refs = 0;

	for (li = 0; li < ct->nlines; li++)
		ct->lines[li].w[CT_LINE_SLOTS] = 0;
	for (li = 0; li < ct->nlines; li++) {
		for (k = 0; k < CT_LINE_SLOTS; k++) {
			uint32_t v = ct->lines[li].w[k], ref = v & ct->ref_mask, h_li;
			const struct ct_session *s;
			uint64_t h;
			int d;

			if (!v)
				continue;
			if (!ref || ((ref - 1) >> 1) >= ct->hiwater || BIT_GET(seen, ref - 1))
				return ct_bad(why, len, "index line %u: reference %u out of "
					      "bounds or twice", li, ref);
			s = ct_ref_session(ct, ref, &d);
			h = ct_hash_tuple(ct, &s->t[d]);
			if (!(s->flags & CT_F_USED) || ct_tag_of(ct, h) != (v & ~ct->ref_mask))
				return ct_bad(why, len, "index line %u: entry does not match "
					      "session %u", li, (ref - 1) >> 1);
			BIT_SET(seen, ref - 1);
			refs++;
			for (h_li = ct_line_of(ct, h); h_li != li; h_li = ct_next_line(ct, h_li))
				ct->lines[h_li].w[CT_LINE_SLOTS]++;
		}
	}
	if (refs != 2 * ct->used)
		return ct_bad(why, len, "index holds %u tuples for %u sessions", refs, ct->used);
	return true;
}

static bool
ct_check_shape(const struct ct_table *ct, uint32_t capacity, uint32_t nzones,
	       const struct ct_parts *p, char *why, size_t len)
{
	if (ct->capacity != capacity || ct->nzones != nzones || ct->nlines != p->nlines ||
	    ct->ref_mask != p->ref_mask)
		return ct_bad(why, len, "table shape %u sessions/%u zones, expected %u/%u",
			      ct->capacity, ct->nzones, capacity, nzones);
	/* One word, only ever raised below the capacity: no crash leaves it above. */
	if (ct->hiwater > capacity)
		return ct_bad(why, len, "%u sessions touched, capacity %u", ct->hiwater, capacity);
	return true;
}

#define CT_RB_AHEAD	16

static int
ct_key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The class lists from the kept sessions, oldest first: (last_seen, index) sorted per class. */
static void
ct_rebuild_lists(struct ct_table *ct, const uint32_t *per_class)
{
	uint32_t pos[CT_C_MAX], c, i, k = 0;
	uint64_t *keys = malloc(((size_t)ct->used + 1) * sizeof(*keys));

	for (c = 0; c < CT_C_MAX; c++) {
		pos[c] = k;
		k += per_class[c];
	}
	for (i = 0; i < ct->hiwater; i++) {
		const struct ct_session *s = &ct->s[i];

		if (!(s->flags & CT_F_USED))
			continue;
		if (!keys) {	/* no memory for the order: index order, expiry only later */
			ct_lru_push(ct, i, (enum ct_class)s->cls);
			continue;
		}
		keys[pos[s->cls]++] = (uint64_t)s->last_seen << 32 | i;
	}
	if (!keys)
		return;
	for (c = 0, k = 0; c < CT_C_MAX; k += per_class[c], c++)
		qsort(keys + k, per_class[c], sizeof(*keys), ct_key_cmp);
	for (k = 0; k < ct->used; k++)
		ct_lru_push(ct, (uint32_t)keys[k], (enum ct_class)ct->s[(uint32_t)keys[k]].cls);
	free(keys);
}

/* Session idx (tuples hashed h0, h1) back in the index; false when it is dropped instead. */
static bool
ct_rebuild_one(struct ct_table *ct, uint32_t idx, uint64_t h0, uint64_t h1,
	       uint32_t *per_class)
{
	struct ct_session *s = &ct->s[idx];
	int d;

	if (!(s->flags & CT_F_USED))
		return true;
	if (!ct_session_sane(ct, s) || ct_tuple_eq(&s->t[0], &s->t[1]) ||
	    ct_lookup_hash(ct, &s->t[0], h0, &d) || ct_lookup_hash(ct, &s->t[1], h1, &d)) {
		s->flags = 0;
		return false;
	}
	ct_index_session(ct, idx, h0, h1);
	per_class[s->cls]++;
	ct->used++;
	return true;
}

/*
 * Everything derived, from the sessions alone: a crash in the middle of an update left links
 * that do not hold. A session is kept when it is sane and its tuples are nobody else's.
 * Returns how many were dropped.
 */
static uint32_t
ct_rebuild(struct ct_table *ct)
{
	uint32_t i, c, dropped = 0, per_class[CT_C_MAX] = { 0 };
	uint64_t h[CT_RB_AHEAD][2];

	memset(ct->lines, 0, (size_t)ct->nlines * sizeof(*ct->lines));
	for (c = 0; c < CT_C_MAX; c++) {
		ct->lru_head[c] = ct->lru_tail[c] = CT_NIL;
		ct->class_count[c] = 0;
	}
	ct->free_head = CT_NIL;
	ct->used = 0;
	/* The index lines are random reads: hashed and prefetched CT_RB_AHEAD sessions ahead. */
	for (i = 0; i < ct->hiwater + CT_RB_AHEAD; i++) {
		uint64_t *hi = h[i % CT_RB_AHEAD];

		if (i >= CT_RB_AHEAD)
			dropped += !ct_rebuild_one(ct, i - CT_RB_AHEAD, hi[0], hi[1], per_class);
		if (i < ct->hiwater) {
			hi[0] = ct_hash_tuple(ct, &ct->s[i].t[0]);
			hi[1] = ct_hash_tuple(ct, &ct->s[i].t[1]);
			ct_prefetch(&ct->lines[ct_line_of(ct, hi[0])]);
			ct_prefetch(&ct->lines[ct_line_of(ct, hi[1])]);
		}
	}
	ct_rebuild_lists(ct, per_class);
	for (i = ct->hiwater; i-- > 0;) {
		if (ct->s[i].flags & CT_F_USED)
			continue;
		ct->c[i].lru.next = ct->free_head;
		ct->free_head = i;
	}
	return dropped;
}

/*
 * What a process derives from the sessions it takes over, whether adopted or carried: the
 * zone lists, what each sandbox holds (for its limits: derived, never trusted) and the policy
 * versions, which start again in this process so every flow is checked once more.
 */
static void
ct_region_derive(struct ct_table *ct)
{
	uint32_t i;

	ct_zones_rebuild(ct);
	ct_recount_zones(ct);
	for (i = 0; i < ct->hiwater; i++)
		ct->s[i].pol_ver = UINT16_MAX;
}

void
ct_region_carry(struct ct_table *const *to, uint32_t nto, const struct ct_table *from,
		ct_dest_fn dest, void *arg)
{
	uint32_t i;
	int k;

	for (i = 0; i < from->hiwater; i++) {
		const struct ct_session *s = &from->s[i];

		if (!(s->flags & CT_F_USED))
			continue;
		k = dest(s, arg);
		if (k >= 0 && (uint32_t)k < nto && to[k]->hiwater < to[k]->capacity)
			to[k]->s[to[k]->hiwater++] = *s;
	}
}

void
ct_region_settle(struct ct_table *to)
{
	ct_rebuild(to);
	ct_region_derive(to);
}

struct ct_table *
ct_region_adopt(void *mem, uint32_t capacity, uint32_t nzones, const uint32_t *timeouts,
		struct ct_adopt_stats *st, char *why, size_t whylen)
{
	struct ct_table *ct = mem;
	struct ct_parts p;
	uint64_t *seen;
	bool ok;

	memset(st, 0, sizeof(*st));
	if (capacity == 0 || capacity >= (1u << 30) || nzones >= UINT16_MAX) {
		ct_bad(why, whylen, "shape %u/%u not supported", capacity, nzones);
		return NULL;
	}
	ct_parts_of(capacity, nzones, &p);
	if (!ct_check_shape(ct, capacity, nzones, &p, why, whylen))
		return NULL;
	ct_point(ct, mem, &p);
	seen = calloc(((size_t)capacity * 2 + 63) / 64, sizeof(*seen));
	if (!seen) {
		ct_bad(why, whylen, "out of memory");
		return NULL;
	}
	ok = ct_check_sessions(ct, why, whylen) && ct_check_lists(ct, seen, why, whylen);
	if (ok) {
		memset(seen, 0, ((size_t)capacity * 2 + 63) / 64 * sizeof(*seen));
		ok = ct_check_index(ct, seen, why, whylen);
	}
	free(seen);
	if (!ok) {
		st->rebuilt = true;
		st->dropped = ct_rebuild(ct);
	}
	if (ct_counts_alloc(ct)) {
		ct_bad(why, whylen, "out of memory");
		return NULL;
	}
	ct_region_derive(ct);
	ct_set_timeouts(ct, timeouts);
	memset(&ct->cnt, 0, sizeof(ct->cnt));
	st->sessions = ct->used;
	return ct;
}
