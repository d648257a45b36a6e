/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "ct.h"
#include "ct_region.h"
#include "pkt.h"

const char *const ct_class_names[CT_C_MAX] = {
#define CT_CLASS_NAME(n, s, t) [CT_C_##n] = s,
	CT_CLASSES(CT_CLASS_NAME)
#undef CT_CLASS_NAME
};

const uint32_t ct_default_timeouts[CT_C_MAX] = {
#define CT_CLASS_TO(n, s, t) [CT_C_##n] = t,
	CT_CLASSES(CT_CLASS_TO)
#undef CT_CLASS_TO
};

bool
ct_class_established(enum ct_class c)
{
	return c == CT_C_TCP_ESTABLISHED || c == CT_C_UDP_REPLIED;
}

void *
ct_alloc(size_t bytes)
{
	/* Anonymous mapping, faulted in here so the worker never waits on a page fault. */
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Random lookups over tens of MiB: huge pages spare most TLB misses where THP allows. */
	madvise(p, bytes, MADV_HUGEPAGE);
	/*
	 * Fault every page in now. Left to first use, each new huge page is zeroed inside the
	 * worker loop while frames pile up in the sockets' rings: a fresh 1M table lost about
	 * half of a 50k SYN/s burst that way.
	 */
	memset(p, 0, bytes);
	return p;
}

static size_t
ct_session_bytes(uint32_t capacity)
{
	return (size_t)capacity * sizeof(struct ct_session);
}

static size_t
ct_cold_bytes(uint32_t capacity)
{
	return (size_t)capacity * sizeof(struct ct_cold);
}

void
ct_shape(uint32_t capacity, uint32_t *nlines, uint32_t *ref_mask)
{
	/*
	 * Two tuples per session, half of the slots used when full. The line is picked by
	 * multiplying the hash, so the count need not be a power of two.
	 */
	*nlines = (uint32_t)((4ull * capacity + CT_LINE_SLOTS - 1) / CT_LINE_SLOTS);
	if (*nlines < 2)
		*nlines = 2;
	/* References go up to 2 * capacity; the bits above them carry the tag. */
	*ref_mask = 0;
	while ((*ref_mask >> 1) < capacity)
		*ref_mask = *ref_mask << 1 | 1;
}

void
ct_timeouts_fill(uint32_t *timeout, uint32_t *grain, const uint32_t *timeouts)
{
	int i;

	for (i = 0; i < CT_C_MAX; i++) {
		timeout[i] = timeouts ? timeouts[i] : ct_default_timeouts[i];
		grain[i] = timeout[i] / 16 > 60 ? 60 : timeout[i] / 16;
	}
}

void
ct_set_timeouts(struct ct_table *ct, const uint32_t *timeouts)
{
	ct_timeouts_fill(ct->timeout, ct->grain, timeouts);
}

struct ct_table *
ct_create(uint32_t capacity, uint32_t nzones, const uint32_t *timeouts)
{
	struct ct_table *ct;
	int i;

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
	ct->s = ct_alloc(ct_session_bytes(capacity));
	ct->c = ct_alloc(ct_cold_bytes(capacity));
	ct->lines = ct_alloc((size_t)ct->nlines * sizeof(struct ct_line));
	ct->zone_head = malloc((nzones + 1) * sizeof(uint32_t));
	ct->zone_cnt = calloc(2 * ((size_t)nzones + 1), sizeof(uint32_t));
	ct->ep_cnt = calloc(CT_EP_BUCKETS, sizeof(uint32_t));
	if (!ct->s || !ct->c || !ct->lines || !ct->zone_head || !ct->zone_cnt || !ct->ep_cnt) {
		ct_destroy(ct);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i <= (int)nzones; i++)
		ct->zone_head[i] = CT_NIL;
	for (i = 0; i < CT_C_MAX; i++)
		ct->lru_head[i] = ct->lru_tail[i] = CT_NIL;
	ct_set_timeouts(ct, timeouts);
	if (getrandom(&ct->seed, sizeof(ct->seed), 0) != sizeof(ct->seed))
		ct->seed = 0x9e3779b97f4a7c15ull;
	return ct;
}

int
ct_set_seed(struct ct_table *ct, uint64_t seed)
{
	if (ct->used)
		return -EBUSY;
	ct->seed = seed;
	return 0;
}

int
ct_counts_alloc(struct ct_table *ct)
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

void
ct_destroy(struct ct_table *ct)
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
		munmap(ct->s, ct_session_bytes(ct->capacity));
	if (ct->c)
		munmap(ct->c, ct_cold_bytes(ct->capacity));
	if (ct->lines)
		munmap(ct->lines, (size_t)ct->nlines * sizeof(struct ct_line));
	free(ct->zone_head);
	free(ct->zone_cnt);
	free(ct->ep_cnt);
	free(ct);
}

struct ct_session *
ct_lookup(struct ct_table *ct, const struct ct_tuple *t, int *dir)
{
	return ct_lookup_hash(ct, t, ct_hash_tuple(ct, t), dir);
}

struct ct_session *
ct_lookup_hash(struct ct_table *ct, const struct ct_tuple *t, uint64_t h, int *dir)
{
	uint32_t li = ct_line_of(ct, h), tag = ct_tag_of(ct, h), n;

	/* Bounded: after churn every line may count an overflow, and a miss must still end. */
	for (n = 0; n < ct->nlines; n++) {
		const struct ct_line *ln = &ct->lines[li];
		uint32_t m = ct_line_match(ln, tag, ~ct->ref_mask);

		while (m) {
			int d;
			struct ct_session *s = ct_ref_session(ct, ln->w[__builtin_ctz(m)] &
							      ct->ref_mask, &d);

			if (ct_tuple_eq(&s->t[d], t)) {
				*dir = d;
				return s;
			}
			m &= m - 1;
		}
		if (!ln->w[CT_LINE_SLOTS])
			return NULL;
		li = ct_next_line(ct, li);
	}
	return NULL;
}

static void
ct_hash_add(struct ct_table *ct, uint32_t idx, int d, uint64_t h)
{
	uint32_t li = ct_line_of(ct, h);
	uint32_t v = ct_tag_of(ct, h) | ct_ref_of(idx, d);

	/* The lines are never more than half full, so a free slot is always found. */
	for (;;) {
		struct ct_line *ln = &ct->lines[li];
		uint32_t m = ct_line_match(ln, 0, ~0u);

		if (m) {
			ln->w[__builtin_ctz(m)] = v;
			return;
		}
		ln->w[CT_LINE_SLOTS]++;
		li = ct_next_line(ct, li);
	}
}

static void
ct_hash_del(struct ct_table *ct, uint32_t idx, int d)
{
	uint64_t h = ct_hash_tuple(ct, &ct->s[idx].t[d]);
	uint32_t home = ct_line_of(ct, h), li = home, n;
	uint32_t v = ct_tag_of(ct, h) | ct_ref_of(idx, d);

	for (n = 0; n < ct->nlines; n++) {
		struct ct_line *ln = &ct->lines[li];
		uint32_t m = ct_line_match(ln, v, ~0u);

		if (m) {
			ln->w[__builtin_ctz(m)] = 0;
			/* The lines it passed no longer count it. */
			for (li = home; n; n--, li = ct_next_line(ct, li))
				ct->lines[li].w[CT_LINE_SLOTS]--;
			return;
		}
		li = ct_next_line(ct, li);
	}
}

/* Inline: ct_touch_move() is on the path of every class change. */
static inline void
ct_lru_append(struct ct_table *ct, uint32_t idx, enum ct_class c)
{
	struct ct_session *s = &ct->s[idx];
	struct ct_link *l = &ct->c[idx].lru;

	s->cls = (uint8_t)c;
	s->queued = (uint16_t)s->last_seen;
	l->next = CT_NIL;
	l->prev = ct->lru_tail[c];
	if (ct->lru_tail[c] != CT_NIL)
		ct->c[ct->lru_tail[c]].lru.next = idx;
	else
		ct->lru_head[c] = idx;
	ct->lru_tail[c] = idx;
	ct->class_count[c]++;
}

static void
ct_lru_remove(struct ct_table *ct, uint32_t idx)
{
	struct ct_link *l = &ct->c[idx].lru;
	uint8_t c = ct->s[idx].cls;

	if (l->prev != CT_NIL)
		ct->c[l->prev].lru.next = l->next;
	else
		ct->lru_head[c] = l->next;
	if (l->next != CT_NIL)
		ct->c[l->next].lru.prev = l->prev;
	else
		ct->lru_tail[c] = l->prev;
	l->prev = l->next = CT_NIL;
	ct->class_count[c]--;
}

static void
ct_zone_add(struct ct_table *ct, uint32_t idx, int d)
{
	struct ct_session *s = &ct->s[idx];
	uint16_t z = s->t[d].zone;

	ct->c[idx].zl[d].prev = CT_NIL;
	ct->c[idx].zl[d].next = CT_NIL;
	if (z == 0 || z > ct->nzones)
		return;
	/* A hairpin session can have both tuples in one zone: list it once, by t[0]. */
	if (d == 1 && s->t[0].zone == z)
		return;
	ct->c[idx].zl[d].next = ct->zone_head[z];
	if (ct->zone_head[z] != CT_NIL)
		ct->c[ct->zone_head[z]].zl[ct->s[ct->zone_head[z]].t[0].zone == z ? 0 : 1].prev = idx;
	ct->zone_head[z] = idx;
}

static int
ct_zone_dir(const struct ct_session *s, uint16_t z)
{
	return s->t[0].zone == z ? 0 : 1;
}

static void
ct_zone_del(struct ct_table *ct, uint32_t idx, int d)
{
	struct ct_session *s = &ct->s[idx];
	uint16_t z = s->t[d].zone;
	struct ct_link *l = &ct->c[idx].zl[d];

	if (z == 0 || z > ct->nzones || (d == 1 && s->t[0].zone == z))
		return;
	if (l->prev != CT_NIL)
		ct->c[l->prev].zl[ct_zone_dir(&ct->s[l->prev], z)].next = l->next;
	else
		ct->zone_head[z] = l->next;
	if (l->next != CT_NIL)
		ct->c[l->next].zl[ct_zone_dir(&ct->s[l->next], z)].prev = l->prev;
	l->prev = l->next = CT_NIL;
}

/*
 * Count a live session in (delta 1) or out of (delta -1) the per-zone and per-endpoint counts
 * (see ct_class_live(): a closed session is in neither). Its SNAT port, still taken by a
 * closed session, is handed to a new SYN towards the endpoint when the port search finds no
 * free one (dp_snat.h): what a closed session holds is no one's to keep.
 */
static void
ct_account(struct ct_table *ct, const struct ct_session *s, uint32_t delta)
{
	uint16_t z0 = s->t[0].zone, z1 = s->t[1].zone;

	if (z0 && z0 <= ct->nzones)
		ct->zone_cnt[2u * z0] += delta;
	if (z1 && z1 <= ct->nzones && z1 != z0)
		ct->zone_cnt[2u * z1 + 1] += delta;
	/*
	 * Egress (z1 0: the world's remote endpoint) and hairpin (z1 a sandbox, its exposed
	 * port): the flows with a SNAT port. Towards the host (CVS_ZONE_HOST) there is none.
	 */
	if (z0 && z0 <= ct->nzones && z1 <= ct->nzones)
		ct->ep_cnt[ct_ep_bucket(ct, z0, z1, s->t[1].saddr, s->t[1].sport,
					s->t[1].proto)] += delta;
}

void
ct_recount_zones(struct ct_table *ct)
{
	uint32_t i;

	memset(ct->zone_cnt, 0, 2 * ((size_t)ct->nzones + 1) * sizeof(uint32_t));
	memset(ct->ep_cnt, 0, CT_EP_BUCKETS * sizeof(uint32_t));
	for (i = 0; i < ct->hiwater; i++)
		if ((ct->s[i].flags & CT_F_USED) && ct_class_live(ct->s[i].cls))
			ct_account(ct, &ct->s[i], 1);
}

void
ct_delete(struct ct_table *ct, struct ct_session *s)
{
	uint32_t idx = ct_index(ct, s);
	int d;

	if (!(s->flags & CT_F_USED))
		return;
	for (d = 0; d < 2; d++) {
		ct_hash_del(ct, idx, d);
		ct_zone_del(ct, idx, d);
	}
	ct_lru_remove(ct, idx);
	if (ct_class_live(s->cls))
		ct_account(ct, s, UINT32_MAX);
	s->flags = 0;
	ct->c[idx].lru.next = ct->free_head;
	ct->free_head = idx;
	ct->used--;
}

/*
 * Lists are ordered by 'queued', which trails last_seen by less than the class's grain: when
 * the head is not expired yet, nothing behind it is more than a grain overdue, so stop there.
 */
static bool
ct_expired(const struct ct_table *ct, uint32_t idx, uint32_t now)
{
	const struct ct_session *s = &ct->s[idx];

	return now - s->last_seen >= ct->timeout[s->cls];
}

uint32_t
ct_expire(struct ct_table *ct, uint32_t now, uint32_t budget)
{
	uint32_t n = 0;
	int c;

	for (c = 0; c < CT_C_MAX; c++) {
		while (n < budget && ct->lru_head[c] != CT_NIL &&
		       ct_expired(ct, ct->lru_head[c], now)) {
			ct_delete(ct, &ct->s[ct->lru_head[c]]);
			n++;
		}
	}
	ct->cnt.expired += n;
	return n;
}

/* Make room in a full table; returns true when one entry was freed. */
static bool
ct_make_room(struct ct_table *ct, uint32_t now)
{
	uint32_t victim = CT_NIL;
	int c;

	if (ct_expire(ct, now, 1))
		return true;
	for (c = 0; c < CT_C_MAX; c++) {
		uint32_t h = ct->lru_head[c];

		if (h == CT_NIL || ct_class_established(c))
			continue;
		/* Oldest by idle time; unsigned arithmetic survives clock wrap. */
		if (victim == CT_NIL || now - ct->s[h].last_seen > now - ct->s[victim].last_seen)
			victim = h;
	}
	if (victim == CT_NIL)
		return false;
	ct_delete(ct, &ct->s[victim]);
	ct->cnt.evicted++;
	return true;
}

struct ct_session *
ct_insert_hashed(struct ct_table *ct, const struct ct_tuple *orig, uint64_t horig,
		 const struct ct_tuple *reply, uint64_t hreply, uint8_t state, uint32_t now,
		 enum ct_refuse *why)
{
	struct ct_session *s;
	uint32_t idx;
	int d;

	if (ct_lookup_hash(ct, orig, horig, &d) || ct_lookup_hash(ct, reply, hreply, &d) ||
	    ct_tuple_eq(orig, reply)) {
		ct->cnt.refused_clash++;
		*why = CT_CLASH;
		return NULL;
	}
	if (ct->used >= ct->capacity && !ct_make_room(ct, now)) {
		ct->cnt.refused_full++;
		*why = CT_FULL;
		return NULL;
	}
	if (ct->free_head != CT_NIL) {
		idx = ct->free_head;
		ct->free_head = ct->c[idx].lru.next;
	} else {
		idx = ct->hiwater++;
	}
	s = &ct->s[idx];
	memset(s, 0, sizeof(*s));
	s->t[0] = *orig;
	s->t[1] = *reply;
	s->state = state;
	s->last_seen = now;
	s->flags = CT_F_USED;
	ct_hash_add(ct, idx, 0, horig);
	ct_hash_add(ct, idx, 1, hreply);
	for (d = 0; d < 2; d++)
		ct_zone_add(ct, idx, d);
	ct_lru_append(ct, idx, ct_class_of(orig->proto, state));
	if (ct_class_live(s->cls))
		ct_account(ct, s, 1);
	ct->used++;
	ct->cnt.created++;
	*why = CT_OK;
	return s;
}

struct ct_session *
ct_insert(struct ct_table *ct, const struct ct_tuple *orig, const struct ct_tuple *reply,
	  uint8_t state, uint32_t now, enum ct_refuse *why)
{
	return ct_insert_hashed(ct, orig, ct_hash_tuple(ct, orig), reply,
				ct_hash_tuple(ct, reply), state, now, why);
}

void
ct_touch_move(struct ct_table *ct, struct ct_session *s, enum ct_class c)
{
	uint32_t idx = ct_index(ct, s);
	bool was = ct_class_live(s->cls), live = ct_class_live(c);

	ct_lru_remove(ct, idx);
	ct_lru_append(ct, idx, c);
	/* Closing leaves the counts, a revived session (a SYN on TIME_WAIT) comes back. */
	if (was != live)
		ct_account(ct, s, live ? 1 : UINT32_MAX);
}

uint32_t
ct_flush_zone(struct ct_table *ct, uint16_t zone)
{
	uint32_t n = 0;

	if (zone == 0 || zone > ct->nzones)
		return 0;
	while (ct->zone_head[zone] != CT_NIL) {
		ct_delete(ct, &ct->s[ct->zone_head[zone]]);
		n++;
	}
	ct->cnt.flushed += n;
	return n;
}

void
ct_dump(const struct ct_table *ct, uint32_t now, struct ct_dump_req *req)
{
	uint32_t i = req->cursor, end, looked = 0;

	req->n = 0;
	end = ct->hiwater;
	while (i < end && req->n < req->max && looked < req->budget) {
		const struct ct_session *s = &ct->s[i];

		looked++;
		if ((s->flags & CT_F_USED) &&
		    (!req->proto || s->t[0].proto == req->proto) &&
		    (!req->zone || s->t[0].zone == req->zone || s->t[1].zone == req->zone)) {
			struct ct_dump_entry *e = &req->out[req->n++];
			uint32_t idle = now - s->last_seen, to = ct->timeout[s->cls];

			e->t[0] = s->t[0];
			e->t[1] = s->t[1];
			e->idle = idle;
			e->expires = idle < to ? to - idle : 0;
			e->state = s->state;
			e->cls = s->cls;
			e->pad[0] = e->pad[1] = 0;
		}
		i++;
	}
	req->cursor = i < end ? i : CT_NIL;
}

void
ct_index_session(struct ct_table *ct, uint32_t idx, uint64_t h0, uint64_t h1)
{
	ct_hash_add(ct, idx, 0, h0);
	ct_hash_add(ct, idx, 1, h1);
}

void
ct_lru_push(struct ct_table *ct, uint32_t idx, enum ct_class c)
{
	ct_lru_append(ct, idx, c);
}

void
ct_zones_rebuild(struct ct_table *ct)
{
	uint32_t i;

	for (i = 0; i <= ct->nzones; i++)
		ct->zone_head[i] = CT_NIL;
	for (i = 0; i < ct->hiwater; i++) {
		if (!(ct->s[i].flags & CT_F_USED))
			continue;
		ct_zone_add(ct, i, 0);
		ct_zone_add(ct, i, 1);
	}
}
