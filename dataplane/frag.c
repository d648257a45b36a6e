/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shallow virtual reassembly (frag.h). One mapping holds everything: the contexts, their
 * ranges (max_frags each), the hash heads, the copy buffers and the per-zone counts.
 *
 * A context is found through a chained hash of its key (fixed entries, 2 heads a context) and
 * sits on one list ordered by its last fragment: every context has the same timeout, so the
 * head is always the next to expire and expiry never walks the table. The ranges of a context
 * never overlap (an overlapping fragment is dropped), so the datagram is complete exactly when
 * its last fragment came and the bytes seen add up to its length: no sort, no gap search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <arpa/inet.h>

#include "dp.h"
#include "frag_int.h"
#include "pkt.h"

/* A fragment's place in its datagram. */
struct frag_piece {
	uint32_t start;
	uint32_t end;
	bool mf;
};

#define FRAG_JUMBO_MAX	(1u << 16)

/* Arrays in the mapping: contexts, ranges, heads, zone counts, then frag_hold_sizes()'. */
#define FRAG_ARRAYS	7

static size_t
frag_align(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* A zone's default share of a pool: an eighth, at least 16, at most the pool. */
static uint32_t
frag_share(uint32_t pool)
{
	uint32_t s = pool / 8 > 16 ? pool / 8 : 16;

	return s < pool ? s : pool;
}

static int
frag_cfg_fill(struct frag_cfg *c, const struct frag_cfg *in)
{
	*c = in ? *in : (struct frag_cfg){ 0 };
	c->contexts = c->contexts ? c->contexts : FRAG_DEF_CONTEXTS;
	c->max_frags = c->max_frags ? c->max_frags : FRAG_DEF_MAX_FRAGS;
	c->held = c->held ? c->held : FRAG_DEF_HELD;
	/* A sixteenth as many jumbo copies, at least 4, at most FRAG_JUMBO_MAX (590 MiB). */
	if (!c->held_jumbo)
		c->held_jumbo = c->held / 16 < 4 ? 4 : c->held / 16 > FRAG_JUMBO_MAX ?
				FRAG_JUMBO_MAX : c->held / 16;
	c->timeout = c->timeout ? c->timeout : FRAG_DEF_TIMEOUT;
	c->zone_share = c->zone_share ? c->zone_share : frag_share(c->contexts);
	c->held_share = c->held_share ? c->held_share : frag_share(c->held);
	/* A share given must fit in its pool. */
	if (c->contexts > 1u << 24 || c->held > 1u << 24 || c->held_jumbo > FRAG_JUMBO_MAX ||
	    c->max_frags < 2 ||
	    c->max_frags > FRAG_MAX_FRAGS_LIMIT || c->zone_share > c->contexts ||
	    c->held_share > c->held)
		return -EINVAL;
	return 0;
}

/* The offsets of each array in the one mapping; returns its size. */
static size_t
frag_layout(struct frag_table *t, size_t off[FRAG_ARRAYS])
{
	const struct frag_cfg *c = &t->cfg;
	size_t sz[FRAG_ARRAYS] = {
		(size_t)c->contexts * sizeof(struct frag_ctx),
		(size_t)c->contexts * c->max_frags * sizeof(struct frag_range),
		(size_t)(t->hmask + 1) * sizeof(uint32_t),
		(size_t)t->nzi * 2 * sizeof(uint32_t),
	};
	size_t n = 0;

	frag_hold_sizes(c, sz + 4);
	for (int i = 0; i < FRAG_ARRAYS; i++) {
		off[i] = n;
		n += frag_align(sz[i]);
	}
	return n;
}

struct frag_table *
frag_create(const struct frag_cfg *cfg, uint32_t max_zones)
{
	struct frag_table *t;
	size_t off[FRAG_ARRAYS];
	uint8_t *m;
	uint32_t i;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (frag_cfg_fill(&t->cfg, cfg) || max_zones >= CVS_ZONE_HOST) {
		free(t);
		errno = EINVAL;
		return NULL;
	}
	t->max_zones = max_zones;
	t->nzi = max_zones + 2;
	/* Two heads a context: chains of one entry or none, mostly. */
	for (t->hmask = 1; t->hmask < 2 * t->cfg.contexts - 1; t->hmask = t->hmask << 1 | 1)
		;
	t->bytes = frag_layout(t, off);
	m = mmap(NULL, t->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	/* Faulted in now, not inside the worker loop, on huge pages where THP allows (as ct). */
	madvise(m, t->bytes, MADV_HUGEPAGE);
	memset(m, 0, t->bytes);
	t->mem = m;
	t->ctx = (struct frag_ctx *)(m + off[0]);
	t->range = (struct frag_range *)(m + off[1]);
	t->heads = (uint32_t *)(m + off[2]);
	t->zone_ctx = (uint32_t *)(m + off[3]);
	t->hold = (struct frag_hold *)(m + off[4]);
	t->buf = m + off[5];
	t->jbuf = m + off[6];
	t->zone_held = t->zone_ctx + t->nzi;
	for (i = 0; i <= t->hmask; i++)
		t->heads[i] = FRAG_NIL;
	for (i = 0; i < t->cfg.contexts; i++)
		t->ctx[i].next = i + 1 < t->cfg.contexts ? i + 1 : FRAG_NIL;
	frag_hold_init(t);
	t->free_ctx = 0;
	t->lru_head = t->lru_tail = t->rel_head = t->rel_tail = t->lent = FRAG_NIL;
	/* A random seed: a sender cannot aim its datagrams at one chain. */
	if (getrandom(&t->seed, sizeof(t->seed), 0) != sizeof(t->seed))
		t->seed = 0x9e3779b97f4a7c15ull;
	return t;
}

void
frag_destroy(struct frag_table *t)
{
	if (!t)
		return;
	munmap(t->mem, t->bytes);
	free(t);
}

const struct frag_stats *
frag_stats(const struct frag_table *t)
{
	return &t->st;
}

const struct frag_cfg *
frag_config(const struct frag_table *t)
{
	return &t->cfg;
}

uint32_t
frag_in_use(const struct frag_table *t)
{
	return t->in_use;
}

static uint32_t
frag_zone_index(const struct frag_table *t, uint16_t zone)
{
	return zone <= t->max_zones ? zone : t->max_zones + 1;
}

uint32_t
frag_zone_in_use(const struct frag_table *t, uint16_t zone)
{
	return t->zone_ctx[frag_zone_index(t, zone)];
}

size_t
frag_memory(const struct frag_table *t)
{
	return t->bytes + sizeof(*t);
}

static uint64_t
frag_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static uint32_t
frag_bucket(const struct frag_table *t, const struct frag_key *k)
{
	uint64_t a = (uint64_t)k->saddr << 32 | k->daddr;
	uint64_t b = (uint64_t)k->id << 32 | (uint32_t)k->zone << 8 | k->proto;
	uint64_t w;
	int i;

	a = frag_mix(a ^ t->seed);
	/* IPv6: the addresses folded in word by word, each step mixed (the seed keeps it keyed). */
	if (k->v6)
		for (i = 0; i < 32; i += 8) {
			memcpy(&w, k->a6 + i, 8);
			a = frag_mix(a ^ w);
		}
	return (uint32_t)frag_mix(a ^ b) & t->hmask;
}

static bool
frag_key_eq(const struct frag_key *a, const struct frag_key *b)
{
	return a->saddr == b->saddr && a->daddr == b->daddr && a->id == b->id &&
	       a->zone == b->zone && a->proto == b->proto && a->v6 == b->v6 &&
	       (!a->v6 || !memcmp(a->a6, b->a6, sizeof(a->a6)));
}

static bool
frag_timed_out(const struct frag_table *t, const struct frag_ctx *c, uint32_t now)
{
	/* Strictly past: a context lives at least 'timeout' seconds after its last fragment. */
	return now - c->last_seen > t->cfg.timeout;
}

static void
frag_lru_remove(struct frag_table *t, struct frag_ctx *c)
{
	if (c->prev != FRAG_NIL)
		t->ctx[c->prev].next = c->next;
	else
		t->lru_head = c->next;
	if (c->next != FRAG_NIL)
		t->ctx[c->next].prev = c->prev;
	else
		t->lru_tail = c->prev;
}

static void
frag_lru_append(struct frag_table *t, struct frag_ctx *c)
{
	uint32_t i = (uint32_t)(c - t->ctx);

	c->next = FRAG_NIL;
	c->prev = t->lru_tail;
	if (t->lru_tail != FRAG_NIL)
		t->ctx[t->lru_tail].next = i;
	else
		t->lru_head = i;
	t->lru_tail = i;
}

static void
frag_touch(struct frag_table *t, struct frag_ctx *c, uint32_t now)
{
	c->last_seen = now;
	if (t->lru_tail != (uint32_t)(c - t->ctx)) {
		frag_lru_remove(t, c);
		frag_lru_append(t, c);
	}
}

/* Forget a context; its held copies, if any, count as 'why'. */
static void
frag_ctx_free(struct frag_table *t, struct frag_ctx *c, enum frag_reason why)
{
	uint32_t i = (uint32_t)(c - t->ctx), *p = &t->heads[frag_bucket(t, &c->key)];

	frag_drop_held(t, c, why);
	while (*p != i)
		p = &t->ctx[*p].hnext;
	*p = c->hnext;
	frag_lru_remove(t, c);
	t->zone_ctx[c->zi]--;
	t->in_use--;
	c->state = FRAG_C_FREE;
	c->next = t->free_ctx;
	t->free_ctx = i;
}

static uint32_t
frag_expire_one(struct frag_table *t, struct frag_ctx *c)
{
	/*
	 * A world datagram whose first fragment never came to us went to the kernel (the node's
	 * own traffic, docs/datapath.md "Fragments"): its early fragments follow it there, as
	 * they came. Anyone else's held copies are dropped.
	 */
	if (c->key.zone == 0 && c->state == FRAG_C_WAITING && c->nheld && t->have_giveback) {
		c->x = t->giveback;
		c->x.saddr = c->key.saddr;
		c->x.daddr = c->key.daddr;
		c->x.v6 = c->key.v6;
		memcpy(c->x.a6, c->key.a6, sizeof(c->x.a6));
		frag_release(t, c, &t->st.given_back);
	}
	frag_ctx_free(t, c, FRAG_R_EXPIRED);
	t->st.expired++;
	return 1;
}

uint32_t
frag_expire(struct frag_table *t, uint32_t now, uint32_t budget)
{
	uint32_t n = 0;

	while (n < budget && t->lru_head != FRAG_NIL &&
	       frag_timed_out(t, &t->ctx[t->lru_head], now))
		n += frag_expire_one(t, &t->ctx[t->lru_head]);
	return n;
}

/* A live context of 'k'; one that timed out but was not collected yet is freed here. */
static struct frag_ctx *
frag_lookup(struct frag_table *t, const struct frag_key *k, uint32_t now)
{
	uint32_t i = t->heads[frag_bucket(t, k)];

	while (i != FRAG_NIL) {
		struct frag_ctx *c = &t->ctx[i];

		if (frag_key_eq(&c->key, k)) {
			if (!frag_timed_out(t, c, now))
				return c;
			frag_expire_one(t, c);
			return NULL;
		}
		i = c->hnext;
	}
	return NULL;
}

/*
 * A new context. Only timed-out contexts are ever reclaimed: a full table or a zone at its
 * share refuses the datagram rather than take a live context from anyone, so no sender can
 * push out the datagrams of another zone, or its own half-way through.
 */
static struct frag_ctx *
frag_ctx_new(struct frag_table *t, const struct frag_key *k, uint32_t now,
	     enum frag_reason *why)
{
	uint32_t zi = frag_zone_index(t, k->zone), i, b;
	struct frag_ctx *c;

	if (t->zone_ctx[zi] >= t->cfg.zone_share || t->in_use >= t->cfg.contexts)
		frag_expire(t, now, FRAG_RECLAIM);
	if (t->zone_ctx[zi] >= t->cfg.zone_share) {
		*why = FRAG_R_ZONE_SHARE;
		return NULL;
	}
	if (t->in_use >= t->cfg.contexts) {
		*why = FRAG_R_NO_CONTEXT;
		return NULL;
	}
	i = t->free_ctx;
	c = &t->ctx[i];
	t->free_ctx = c->next;
	memset(c, 0, sizeof(*c));
	c->key = *k;
	c->zi = zi;
	c->state = FRAG_C_WAITING;
	c->held_head = c->held_tail = FRAG_NIL;
	c->last_seen = now;
	b = frag_bucket(t, k);
	c->hnext = t->heads[b];
	t->heads[b] = i;
	frag_lru_append(t, c);
	t->zone_ctx[zi]++;
	t->in_use++;
	t->st.contexts++;
	return c;
}

/* The datagram cannot complete: drop what it holds, and its later fragments as 'why'. */
static void
frag_ctx_refuse(struct frag_table *t, struct frag_ctx *c, enum frag_reason why)
{
	frag_drop_held(t, c, FRAG_R_FORGOTTEN);
	c->state = FRAG_C_REFUSED;
	c->why = (uint8_t)why;
}

/*
 * An IPv6 fragment's range: its Fragment header right after the fixed header (what the
 * caller lets through), offset in its top 13 bits, M the lowest. No unfragmentable extension
 * header, so the reassembled payload is the data's end, at most 65,535 bytes.
 */
static enum frag_reason
frag_piece_of6(const uint8_t *frame, uint32_t len, struct frag_piece *f)
{
	const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)(frame + ETH_HLEN_);
	const uint8_t *fh = frame + ETH_HLEN_ + sizeof(*ip6);
	uint32_t plen;
	uint16_t fo;

	if (len < ETH_HLEN_ + sizeof(*ip6) + 8 || ip6->nxt != IP6_NH_FRAGMENT)
		return FRAG_R_BAD_LENGTH;
	plen = ntohs(ip6->plen);
	if (plen <= 8 || plen > len - ETH_HLEN_ - sizeof(*ip6))
		return FRAG_R_BAD_LENGTH;
	fo = (uint16_t)(fh[2] << 8 | fh[3]);
	f->start = fo & 0xfff8u;
	f->end = f->start + plen - 8;
	f->mf = fo & 1;
	if (f->end > FRAG_IP_MAX)
		return FRAG_R_TOO_LONG;
	/* RFC 8200 4.5: every fragment but the last carries a multiple of 8 bytes. */
	if (f->mf && ((f->end - f->start) & 7))
		return FRAG_R_BAD_LENGTH;
	return FRAG_R_MAX;
}

/* The fragment's range, from a header the caller validated (checked again, cheaply). */
static enum frag_reason
frag_piece_of(const uint8_t *frame, uint32_t len, struct frag_piece *f)
{
	const struct ip4_hdr *ip = (const struct ip4_hdr *)(frame + ETH_HLEN_);
	uint32_t ihl, tot;
	uint16_t fo;

	if (len >= ETH_HLEN_ && ((const struct eth_hdr *)frame)->type == htons(ETHTYPE_IPV6))
		return frag_piece_of6(frame, len, f);
	if (len < ETH_HLEN_ + sizeof(*ip))
		return FRAG_R_BAD_LENGTH;
	ihl = (ip->ver_ihl & 15) * 4u;
	tot = ntohs(ip->tot_len);
	if (ihl < sizeof(*ip) || tot <= ihl || tot > len - ETH_HLEN_)
		return FRAG_R_BAD_LENGTH;
	fo = ntohs(ip->frag_off);
	f->start = (fo & FRAG_OFFMASK) * 8u;
	f->end = f->start + tot - ihl;
	f->mf = fo & FRAG_MF;
	/* Reassembled, the datagram would be larger than one can be (the "ping of death"). */
	if (ihl + f->end > FRAG_IP_MAX)
		return FRAG_R_TOO_LONG;
	/* RFC 791: every fragment but the last carries a multiple of 8 bytes. */
	if (f->mf && ((f->end - f->start) & 7))
		return FRAG_R_BAD_LENGTH;
	return FRAG_R_MAX;
}

/*
 * Whether the fragment fits the context: not a repeat, no overlap, within the datagram's end,
 * and room for its range. Until the first fragment comes, one range stays free for it.
 */
static enum frag_reason
frag_piece_check(const struct frag_table *t, const struct frag_ctx *c,
		 const struct frag_piece *f)
{
	const struct frag_range *r = &t->range[(size_t)(c - t->ctx) * t->cfg.max_frags];
	uint32_t limit = t->cfg.max_frags, i;

	for (i = 0; i < c->nranges; i++) {
		if (r[i].start == f->start && r[i].end == f->end)
			return FRAG_R_DUPLICATE;
		if (f->start < r[i].end && r[i].start < f->end)
			return FRAG_R_OVERLAP;
	}
	if (!f->mf ? (c->last ? f->end != c->end : f->end < c->maxend) :
	    (c->last && f->end > c->end))
		return FRAG_R_BAD_LENGTH;
	if (c->state == FRAG_C_WAITING && f->start)
		limit--;
	if (c->nranges >= limit)
		return FRAG_R_TOO_MANY;
	return FRAG_R_MAX;
}

/* Record the range; true when the datagram is now complete. */
static bool
frag_piece_add(struct frag_table *t, struct frag_ctx *c, const struct frag_piece *f)
{
	struct frag_range *r = &t->range[(size_t)(c - t->ctx) * t->cfg.max_frags + c->nranges];

	r->start = (uint16_t)f->start;
	r->end = (uint16_t)f->end;
	c->nranges++;
	c->covered += f->end - f->start;
	if (f->end > c->maxend)
		c->maxend = (uint16_t)f->end;
	if (!f->mf) {
		c->last = 1;
		c->end = (uint16_t)f->end;
	}
	/* Ranges never overlap: bytes seen == length means no gap is left. */
	return c->last && c->covered == c->end;
}

static enum frag_verdict
frag_drop(struct frag_table *t, enum frag_reason r, enum frag_reason *why)
{
	t->st.drop[r]++;
	*why = r;
	return FRAG_DROP;
}

enum frag_verdict
frag_other(struct frag_table *t, const struct frag_key *k, const uint8_t *frame, uint32_t len,
	   uint32_t now, struct frag_xlat *x, enum frag_reason *why)
{
	struct frag_piece f;
	struct frag_ctx *c;
	enum frag_reason r;

	r = frag_piece_of(frame, len, &f);
	if (r == FRAG_R_MAX && f.start == 0)
		r = FRAG_R_BAD_FIRST;	/* a first fragment is frag_first()'s */
	if (r != FRAG_R_MAX)
		return frag_drop(t, r, why);
	c = frag_lookup(t, k, now);
	if (!c && !(c = frag_ctx_new(t, k, now, &r)))
		return frag_drop(t, r, why);
	frag_touch(t, c, now);
	if (c->state == FRAG_C_REFUSED)
		return frag_drop(t, (enum frag_reason)c->why, why);
	r = frag_piece_check(t, c, &f);
	if (r == FRAG_R_MAX && c->state == FRAG_C_WAITING)
		r = frag_hold_copy(t, c, frame, len);
	/* One fragment lost for good: the datagram can no longer be completed. */
	if (r == FRAG_R_TOO_MANY || r == FRAG_R_NO_HOLD || r == FRAG_R_HOLD_SHARE)
		frag_ctx_refuse(t, c, r);
	if (r != FRAG_R_MAX)
		return frag_drop(t, r, why);
	if (c->state == FRAG_C_WAITING) {
		frag_piece_add(t, c, &f);
		return FRAG_HELD;
	}
	*x = c->x;
	t->st.forwarded++;
	if (frag_piece_add(t, c, &f)) {
		t->st.completed++;
		frag_ctx_free(t, c, FRAG_R_MAX);
	}
	return FRAG_FORWARD;
}

static uint32_t
frag_first_refused(struct frag_table *t, const struct frag_key *k, uint32_t now,
		   enum frag_reason r, enum frag_verdict *v, enum frag_reason *why)
{
	frag_refuse(t, k, now);
	*v = frag_drop(t, r, why);
	return 0;
}

uint32_t
frag_first(struct frag_table *t, const struct frag_key *k, const uint8_t *frame, uint32_t len,
	   const struct frag_xlat *x, uint32_t now, enum frag_verdict *v, enum frag_reason *why)
{
	struct frag_piece f;
	struct frag_ctx *c;
	enum frag_reason r;
	uint32_t n;

	frag_end_loan(t);
	r = frag_piece_of(frame, len, &f);
	if (r == FRAG_R_MAX && (f.start || !f.mf))
		r = FRAG_R_BAD_LENGTH;	/* not a first fragment */
	if (r != FRAG_R_MAX)
		return frag_first_refused(t, k, now, r, v, why);
	c = frag_lookup(t, k, now);
	if (c) {
		frag_touch(t, c, now);
		/* A repeat or a rival of the first translated: it stands, this one goes. */
		if (c->state == FRAG_C_XLATED)
			r = FRAG_R_BAD_FIRST;
		else if (c->state == FRAG_C_REFUSED)
			r = (enum frag_reason)c->why;
		if (r != FRAG_R_MAX) {
			*v = frag_drop(t, r, why);
			return 0;
		}
		r = frag_piece_check(t, c, &f);
		if (r != FRAG_R_MAX)
			return frag_first_refused(t, k, now, r, v, why);
	} else if (!(c = frag_ctx_new(t, k, now, &r))) {
		*v = frag_drop(t, r, why);
		return 0;
	}
	c->x = *x;
	c->state = FRAG_C_XLATED;
	n = frag_release(t, c, &t->st.released);
	if (frag_piece_add(t, c, &f)) {
		t->st.completed++;
		frag_ctx_free(t, c, FRAG_R_MAX);
	}
	*v = FRAG_FORWARD;
	return n;
}

void
frag_refuse(struct frag_table *t, const struct frag_key *k, uint32_t now)
{
	enum frag_reason r;
	struct frag_ctx *c = frag_lookup(t, k, now);

	if (!c && !(c = frag_ctx_new(t, k, now, &r)))
		return;
	frag_touch(t, c, now);
	frag_ctx_refuse(t, c, FRAG_R_BAD_FIRST);
}

uint32_t
frag_flush(struct frag_table *t, uint16_t zone, uint8_t action, uint32_t slot)
{
	uint32_t i, n = 0;

	for (i = 0; i < t->cfg.contexts; i++) {
		struct frag_ctx *c = &t->ctx[i];

		if (c->state == FRAG_C_FREE)
			continue;
		if (c->key.zone == zone ||
		    (c->state == FRAG_C_XLATED && frag_goes_to(&c->x, action, slot))) {
			frag_ctx_free(t, c, FRAG_R_FLUSHED);
			n++;
		}
	}
	frag_flush_released(t, action, slot);
	return n;
}

uint32_t
frag_handover(struct frag_table *t, const struct frag_key *k, uint32_t now,
	      frag_send_fn *send, void *arg)
{
	struct frag_ctx *c = frag_lookup(t, k, now);
	uint32_t n;

	if (!c || c->state != FRAG_C_WAITING)
		return 0;
	n = frag_give_held(t, c, send, arg);
	frag_ctx_free(t, c, FRAG_R_MAX);
	return n;
}

void
frag_set_giveback(struct frag_table *t, const struct frag_xlat *x)
{
	t->giveback = *x;
	t->have_giveback = true;
}

