/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 session table (ct6.h). Its index is ct.c's: lines of CT_LINE_SLOTS slots, each a
 * tuple reference under bits of the tuple's hash, sized by ct_shape() for half of the slots
 * used when full; here a tuple goes at most CT6_PROBE_LINES lines from its home line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <arpa/inet.h>

#include "ct6.h"
#include "ct6_region.h"

static size_t
ct6_session_bytes(uint32_t capacity)
{
	return (size_t)capacity * sizeof(struct ct6_session);
}

static size_t
ct6_lru_bytes(uint32_t capacity)
{
	return (size_t)capacity * sizeof(struct ct_link);
}

struct ct6_table *
ct6_create(uint32_t capacity, uint32_t nzones, const uint32_t *timeouts)
{
	struct ct6_table *ct;
	uint32_t i;

	if (capacity == 0 || capacity >= (1u << 30) || nzones >= UINT16_MAX) {
		errno = EINVAL;
		return NULL;
	}
	ct = calloc(1, sizeof(*ct));
	if (!ct)
		return NULL;
	ct_shape(capacity, &ct->nlines, &ct->ref_mask);
	ct->capacity = capacity;
	ct->nzones = nzones;
	ct->free_head = CT_NIL;
	ct->s = ct_alloc(ct6_session_bytes(capacity));
	ct->lru = ct_alloc(ct6_lru_bytes(capacity));
	ct->lines = ct_alloc((size_t)ct->nlines * sizeof(struct ct_line));
	ct->zone_head = malloc((nzones + 1) * sizeof(uint32_t));
	ct->zone_cnt = calloc(2 * ((size_t)nzones + 1), sizeof(uint32_t));
	ct->ep_cnt = calloc(CT_EP_BUCKETS, sizeof(uint32_t));
	if (!ct->s || !ct->lru || !ct->lines || !ct->zone_head || !ct->zone_cnt || !ct->ep_cnt) {
		ct6_destroy(ct);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i <= nzones; i++)
		ct->zone_head[i] = CT_NIL;
	for (i = 0; i < CT_C_MAX; i++)
		ct->lru_head[i] = ct->lru_tail[i] = CT_NIL;
	ct_timeouts_fill(ct->timeout, ct->grain, timeouts);
	/*
	 * Without a key a sender could aim every flow at one line; a fixed one is only a
	 * fallback for a kernel without getrandom (it never fails for 32 bytes otherwise).
	 */
	if (getrandom(ct->key, sizeof(ct->key), 0) != sizeof(ct->key))
		for (i = 0; i < 4; i++)
			ct->key[i] = 0x9e3779b97f4a7c15ull * (i + 1);
	return ct;
}

void
ct6_destroy(struct ct6_table *ct)
{
	if (!ct)
		return;
	if (ct->in_region) {
		/* The region is the caller's; only this process's counts are ours. */
		free(ct->zone_cnt);
		free(ct->ep_cnt);
		ct->zone_cnt = ct->ep_cnt = NULL;
		return;
	}
	if (ct->s)
		munmap(ct->s, ct6_session_bytes(ct->capacity));
	if (ct->lru)
		munmap(ct->lru, ct6_lru_bytes(ct->capacity));
	if (ct->lines)
		munmap(ct->lines, (size_t)ct->nlines * sizeof(struct ct_line));
	free(ct->zone_head);
	free(ct->zone_cnt);
	free(ct->ep_cnt);
	free(ct);
}

struct ct6_session *
ct6_lookup_hash(struct ct6_table *ct, const struct ct6_tuple *t, uint64_t h, int *dir)
{
	uint32_t li = ct_hash_line(h, ct->nlines), tag = ct_hash_tag(h, ct->ref_mask), n;

	for (n = 0; n < CT6_PROBE_LINES; n++) {
		const struct ct_line *ln = &ct->lines[li];
		uint32_t m = ct_line_match(ln, tag, ~ct->ref_mask);

		for (; m; m &= m - 1) {
			uint32_t ref = (ln->w[__builtin_ctz(m)] & ct->ref_mask) - 1;
			struct ct6_session *s = &ct->s[ref >> 1];

			if (ct6_tuple_eq(&s->t[ref & 1], t)) {
				*dir = (int)(ref & 1);
				return s;
			}
		}
		/* No tuple from an earlier line went past this one. */
		if (!ln->w[CT_LINE_SLOTS])
			return NULL;
		li = ct_hash_next(li, ct->nlines);
	}
	return NULL;
}

struct ct6_session *
ct6_lookup(struct ct6_table *ct, const struct ct6_tuple *t, int *dir)
{
	return ct6_lookup_hash(ct, t, ct6_hash_tuple(ct, t), dir);
}

/* Index tuple t[d] of session idx; false when no line within the probe bound has room. */
static bool
ct6_index_add(struct ct6_table *ct, uint32_t idx, int d, uint64_t h)
{
	uint32_t home = ct_hash_line(h, ct->nlines), li = home, n;
	uint32_t v = ct_hash_tag(h, ct->ref_mask) | ct_ref_of(idx, d);

	for (n = 0; n < CT6_PROBE_LINES; n++) {
		struct ct_line *ln = &ct->lines[li];
		uint32_t m = ct_line_match(ln, 0, ~0u);

		if (m) {
			ln->w[__builtin_ctz(m)] = v;
			/* The lines it passed count it, so a lookup goes on past them. */
			for (li = home; n; n--, li = ct_hash_next(li, ct->nlines))
				ct->lines[li].w[CT_LINE_SLOTS]++;
			return true;
		}
		li = ct_hash_next(li, ct->nlines);
	}
	return false;
}

static void
ct6_index_del(struct ct6_table *ct, uint32_t idx, int d)
{
	uint64_t h = ct6_hash_tuple(ct, &ct->s[idx].t[d]);
	uint32_t home = ct_hash_line(h, ct->nlines), li = home, n;
	uint32_t v = ct_hash_tag(h, ct->ref_mask) | ct_ref_of(idx, d);

	for (n = 0; n < CT6_PROBE_LINES; n++) {
		struct ct_line *ln = &ct->lines[li];
		uint32_t m = ct_line_match(ln, v, ~0u);

		if (m) {
			ln->w[__builtin_ctz(m)] = 0;
			for (li = home; n; n--, li = ct_hash_next(li, ct->nlines))
				ct->lines[li].w[CT_LINE_SLOTS]--;
			return;
		}
		li = ct_hash_next(li, ct->nlines);
	}
}

static void
ct6_lru_append(struct ct6_table *ct, uint32_t idx, enum ct_class c)
{
	struct ct6_session *s = &ct->s[idx];
	struct ct_link *l = &ct->lru[idx];

	s->cls = (uint8_t)c;
	s->queued = (uint16_t)s->last_seen;
	l->next = CT_NIL;
	l->prev = ct->lru_tail[c];
	if (ct->lru_tail[c] != CT_NIL)
		ct->lru[ct->lru_tail[c]].next = idx;
	else
		ct->lru_head[c] = idx;
	ct->lru_tail[c] = idx;
	ct->class_count[c]++;
}

static void
ct6_lru_remove(struct ct6_table *ct, uint32_t idx)
{
	struct ct_link *l = &ct->lru[idx];
	uint8_t c = ct->s[idx].cls;

	if (l->prev != CT_NIL)
		ct->lru[l->prev].next = l->next;
	else
		ct->lru_head[c] = l->next;
	if (l->next != CT_NIL)
		ct->lru[l->next].prev = l->prev;
	else
		ct->lru_tail[c] = l->prev;
	l->prev = l->next = CT_NIL;
	ct->class_count[c]--;
}

/*
 * Zone lists link tuples, not sessions: a link is a tuple reference (idx << 1 | dir), so
 * unlinking reaches the neighbour's link without reading its tuples to learn which of its
 * two links is on this zone's list (ct.c's ct_zone_dir()).
 */
static struct ct_link *
ct6_zlink(struct ct6_table *ct, uint32_t ref)
{
	return &ct->s[ref >> 1].zl[ref & 1];
}

/* Whether t[d] of s goes on its zone's list: a sandbox zone, listed once per session. */
static bool
ct6_zone_listed(const struct ct6_table *ct, const struct ct6_session *s, int d)
{
	uint16_t z = s->t[d].zone;

	return z && z <= ct->nzones && !(d == 1 && s->t[0].zone == z);
}

static void
ct6_zone_add(struct ct6_table *ct, uint32_t idx, int d)
{
	struct ct6_session *s = &ct->s[idx];
	uint32_t ref = idx << 1 | (uint32_t)d, *head;

	s->zl[d].prev = s->zl[d].next = CT_NIL;
	if (!ct6_zone_listed(ct, s, d))
		return;
	head = &ct->zone_head[s->t[d].zone];
	s->zl[d].next = *head;
	if (*head != CT_NIL)
		ct6_zlink(ct, *head)->prev = ref;
	*head = ref;
}

static void
ct6_zone_del(struct ct6_table *ct, uint32_t idx, int d)
{
	struct ct6_session *s = &ct->s[idx];
	struct ct_link *l = &s->zl[d];

	if (!ct6_zone_listed(ct, s, d))
		return;
	if (l->prev != CT_NIL)
		ct6_zlink(ct, l->prev)->next = l->next;
	else
		ct->zone_head[s->t[d].zone] = l->next;
	if (l->next != CT_NIL)
		ct6_zlink(ct, l->next)->prev = l->prev;
	l->prev = l->next = CT_NIL;
}

/* A live session into (delta 1) or out of (UINT32_MAX) the counts, by ct.c's ct_account(). */
static void
ct6_account(struct ct6_table *ct, const struct ct6_session *s, uint32_t delta)
{
	uint16_t z0 = s->t[0].zone, z1 = s->t[1].zone;

	if (z0 && z0 <= ct->nzones)
		ct->zone_cnt[2u * z0] += delta;
	if (z1 && z1 <= ct->nzones && z1 != z0)
		ct->zone_cnt[2u * z1 + 1] += delta;
	if (z0 && z0 <= ct->nzones && z1 <= ct->nzones)
		ct->ep_cnt[ct6_ep_bucket(ct, z0, z1, s->t[1].saddr, s->t[1].sport,
					 s->t[1].proto)] += delta;
}

void
ct6_recount_zones(struct ct6_table *ct)
{
	uint32_t i;

	memset(ct->zone_cnt, 0, 2 * ((size_t)ct->nzones + 1) * sizeof(uint32_t));
	memset(ct->ep_cnt, 0, CT_EP_BUCKETS * sizeof(uint32_t));
	for (i = 0; i < ct->hiwater; i++)
		if ((ct->s[i].flags & CT_F_USED) && ct_class_live(ct->s[i].cls))
			ct6_account(ct, &ct->s[i], 1);
}

int
ct6_counts_alloc(struct ct6_table *ct)
{
	ct->zone_cnt = calloc(2 * ((size_t)ct->nzones + 1), sizeof(uint32_t));
	ct->ep_cnt = calloc(CT_EP_BUCKETS, sizeof(uint32_t));
	if (!ct->zone_cnt || !ct->ep_cnt) {
		free(ct->zone_cnt);
		free(ct->ep_cnt);
		ct->zone_cnt = ct->ep_cnt = NULL;
		return -ENOMEM;
	}
	return 0;
}

bool
ct6_index_session(struct ct6_table *ct, uint32_t idx, uint64_t h0, uint64_t h1)
{
	if (!ct6_index_add(ct, idx, 0, h0))
		return false;
	if (ct6_index_add(ct, idx, 1, h1))
		return true;
	ct6_index_del(ct, idx, 0);
	return false;
}

void
ct6_lru_push(struct ct6_table *ct, uint32_t idx, enum ct_class c)
{
	ct6_lru_append(ct, idx, c);
}

void
ct6_zones_rebuild(struct ct6_table *ct)
{
	uint32_t i;
	int d;

	for (i = 0; i <= ct->nzones; i++)
		ct->zone_head[i] = CT_NIL;
	for (i = 0; i < ct->hiwater; i++)
		if (ct->s[i].flags & CT_F_USED)
			for (d = 0; d < 2; d++)
				ct6_zone_add(ct, i, d);
}

/* A slot for a new session, taken off the free list or the never-used part. */
static uint32_t
ct6_take_slot(struct ct6_table *ct)
{
	uint32_t idx = ct->free_head;

	if (idx != CT_NIL) {
		ct->free_head = ct->lru[idx].next;
		return idx;
	}
	return ct->hiwater++;
}

static void
ct6_give_slot(struct ct6_table *ct, uint32_t idx)
{
	ct->s[idx].flags = 0;
	ct->lru[idx].next = ct->free_head;
	ct->free_head = idx;
}

void
ct6_delete(struct ct6_table *ct, struct ct6_session *s)
{
	uint32_t idx = ct6_index(ct, s);
	int d;

	if (!(s->flags & CT_F_USED))
		return;
	for (d = 0; d < 2; d++) {
		ct6_index_del(ct, idx, d);
		ct6_zone_del(ct, idx, d);
	}
	ct6_lru_remove(ct, idx);
	if (ct_class_live(s->cls))
		ct6_account(ct, s, UINT32_MAX);
	ct6_give_slot(ct, idx);
	ct->used--;
}

/* As ct_expired(): each list is in 'queued' order, so the first live head ends its walk. */
static bool
ct6_expired(const struct ct6_table *ct, uint32_t idx, uint32_t now)
{
	const struct ct6_session *s = &ct->s[idx];

	return now - s->last_seen >= ct->timeout[s->cls];
}

uint32_t
ct6_expire(struct ct6_table *ct, uint32_t now, uint32_t budget)
{
	uint32_t n = 0;
	int c;

	for (c = 0; c < CT_C_MAX; c++) {
		while (n < budget && ct->lru_head[c] != CT_NIL &&
		       ct6_expired(ct, ct->lru_head[c], now)) {
			ct6_delete(ct, &ct->s[ct->lru_head[c]]);
			n++;
		}
	}
	ct->cnt.expired += n;
	return n;
}

/* ct.c's table-full policy: an expired entry, else the oldest not established. */
static bool
ct6_make_room(struct ct6_table *ct, uint32_t now)
{
	uint32_t victim = CT_NIL;
	int c;

	if (ct6_expire(ct, now, 1))
		return true;
	for (c = 0; c < CT_C_MAX; c++) {
		uint32_t h = ct->lru_head[c];

		if (h == CT_NIL || ct_class_established(c))
			continue;
		if (victim == CT_NIL || now - ct->s[h].last_seen > now - ct->s[victim].last_seen)
			victim = h;
	}
	if (victim == CT_NIL)
		return false;
	ct6_delete(ct, &ct->s[victim]);
	ct->cnt.evicted++;
	return true;
}

static enum ct_refuse
ct6_refuse(struct ct6_table *ct, enum ct_refuse why)
{
	if (why == CT_CLASH)
		ct->cnt.refused_clash++;
	else
		ct->cnt.refused_full++;
	return why;
}

struct ct6_session *
ct6_insert(struct ct6_table *ct, const struct ct6_tuple *orig, const struct ct6_tuple *reply,
	   uint8_t state, uint32_t now, enum ct_refuse *why)
{
	uint64_t ho = ct6_hash_tuple(ct, orig), hr = ct6_hash_tuple(ct, reply);
	struct ct6_session *s;
	uint32_t idx;
	int d;

	if (ct6_lookup_hash(ct, orig, ho, &d) || ct6_lookup_hash(ct, reply, hr, &d) ||
	    ct6_tuple_eq(orig, reply)) {
		*why = ct6_refuse(ct, CT_CLASH);
		return NULL;
	}
	if (ct->used >= ct->capacity && !ct6_make_room(ct, now)) {
		*why = ct6_refuse(ct, CT_FULL);
		return NULL;
	}
	idx = ct6_take_slot(ct);
	s = &ct->s[idx];
	memset(s, 0, sizeof(*s));
	s->t[0] = *orig;
	s->t[1] = *reply;
	if (!ct6_index_add(ct, idx, 0, ho)) {
		ct6_give_slot(ct, idx);
		*why = ct6_refuse(ct, CT_FULL);
		return NULL;
	}
	if (!ct6_index_add(ct, idx, 1, hr)) {
		ct6_index_del(ct, idx, 0);
		ct6_give_slot(ct, idx);
		*why = ct6_refuse(ct, CT_FULL);
		return NULL;
	}
	s->state = state;
	s->last_seen = now;
	s->flags = CT_F_USED;
	for (d = 0; d < 2; d++)
		ct6_zone_add(ct, idx, d);
	ct6_lru_append(ct, idx, ct_class_of(orig->proto, state));
	if (ct_class_live(s->cls))
		ct6_account(ct, s, 1);
	ct->used++;
	ct->cnt.created++;
	*why = CT_OK;
	return s;
}

void
ct6_touch_move(struct ct6_table *ct, struct ct6_session *s, enum ct_class c)
{
	uint32_t idx = ct6_index(ct, s);
	bool was = ct_class_live(s->cls), live = ct_class_live(c);

	ct6_lru_remove(ct, idx);
	ct6_lru_append(ct, idx, c);
	if (was != live)
		ct6_account(ct, s, live ? 1 : UINT32_MAX);
}

uint32_t
ct6_flush_zone(struct ct6_table *ct, uint16_t zone)
{
	uint32_t n = 0;

	if (zone == 0 || zone > ct->nzones)
		return 0;
	while (ct->zone_head[zone] != CT_NIL) {
		ct6_delete(ct, &ct->s[ct->zone_head[zone] >> 1]);
		n++;
	}
	ct->cnt.flushed += n;
	return n;
}

/* dp_snat_better()'s order: the zone's own closed sessions first, then the idlest. */
static bool
ct6_snat_better(const struct ct6_session *s, const struct ct6_session *best, uint16_t zone,
		uint32_t now)
{
	bool own = s->t[0].zone == zone;

	if (!best)
		return true;
	if (own != (best->t[0].zone == zone))
		return own;
	return now - s->last_seen > now - best->last_seen;
}

int
ct6_snat_port(struct ct6_table *ct, struct ct6_tuple *rt, const struct ct6_snat_req *rq,
	      struct ct6_session **closed)
{
	uint32_t span = (uint32_t)rq->hi - rq->lo + 1, i, start;
	struct ct6_session *take = NULL, *s;
	int d;

	if (closed)
		*closed = NULL;
	if (rq->hi < rq->lo)
		return -EINVAL;
	start = rq->start % span;
	for (i = 0; i < rq->probes && i < span; i++) {
		uint16_t port = htons((uint16_t)(rq->lo + (start + i) % span));

		if (rt->proto == IPPROTO_ICMPV6_)
			rt->sport = port;
		rt->dport = port;
		s = ct6_lookup(ct, rt, &d);
		if (!s)
			return 0;
		/* Held by a reply tuple of the node's address: an egress or hairpin session. */
		if (d == CT_DIR_REPLY && !ct_class_live(s->cls) &&
		    ct6_snat_better(s, take, rq->zone, rq->now))
			take = s;
	}
	if (closed)
		*closed = take;
	return -EADDRINUSE;
}

void
ct6_dump(const struct ct6_table *ct, uint32_t now, struct ct_dump_req *req,
	 struct ct6_dump_entry *out)
{
	uint32_t i = req->cursor, looked = 0;

	req->n = 0;
	for (; i < ct->hiwater && req->n < req->max && looked < req->budget; i++, looked++) {
		const struct ct6_session *s = &ct->s[i];
		struct ct6_dump_entry *e;
		uint32_t idle, to;

		if (!(s->flags & CT_F_USED) || (req->proto && s->t[0].proto != req->proto) ||
		    (req->zone && s->t[0].zone != req->zone && s->t[1].zone != req->zone))
			continue;
		e = &out[req->n++];
		idle = now - s->last_seen;
		to = ct->timeout[s->cls];
		memset(e, 0, sizeof(*e));
		e->t[0] = s->t[0];
		e->t[1] = s->t[1];
		e->idle = idle;
		e->expires = idle < to ? to - idle : 0;
		e->state = s->state;
		e->cls = s->cls;
	}
	req->cursor = i < ct->hiwater ? i : CT_NIL;
}
