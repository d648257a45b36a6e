/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection tracking: a fixed-capacity session table allocated once. A session holds two
 * tuples, original and reply, and is found by either; the translation of a packet is implied by
 * the other tuple (the packet leaves as the inverse of it). The zone of a tuple is the port it
 * is seen on: 0 for the world, slot + 1 for a sandbox, so identical guest tuples of different
 * sandboxes never collide.
 *
 * Expiry never walks the table: every session sits on the LRU list of its timeout class, and
 * within a class all sessions share one timeout, so the head of each list is the next to
 * expire. A packet refreshes the list position only when it is older than the class's grain
 * (timeout / 16, at most 60 s), so busy flows do not rewrite their list neighbours on every
 * packet; an idle session therefore expires between its timeout and its timeout plus the
 * grain. Time is a seconds counter passed in by the caller, so tests can set the clock.
 *
 * Single writer: only the worker that owns a table calls these functions.
 */
#ifndef CVS_CT_H
#define CVS_CT_H

#include <stdint.h>
#include <stdbool.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "pkt.h"

struct ct_tuple {
	uint32_t saddr;
	uint32_t daddr;
	uint16_t sport;
	uint16_t dport;
	uint16_t zone;
	uint8_t proto;
	uint8_t pad;
};

enum ct_dir {
	CT_DIR_ORIG = 0,
	CT_DIR_REPLY = 1,
};

/* TCP states, numbered as Linux nf_conntrack. */
enum ct_tcp_state {
	CT_TCP_NONE = 0,
	CT_TCP_SYN_SENT,
	CT_TCP_SYN_RECV,
	CT_TCP_ESTABLISHED,
	CT_TCP_FIN_WAIT,
	CT_TCP_CLOSE_WAIT,
	CT_TCP_LAST_ACK,
	CT_TCP_TIME_WAIT,
	CT_TCP_CLOSE,
	CT_TCP_SYN_SENT2,
	CT_TCP_MAX,
	CT_TCP_INVALID = CT_TCP_MAX,
	CT_TCP_IGNORE,
};

/* UDP and ICMP: replied once a packet was seen in the reply direction. */
#define CT_UNREPLIED	0
#define CT_REPLIED	1

/* Timeout classes; each has one LRU list. */
#define CT_CLASSES(_) \
	_(TCP_SYN,		"tcp_syn",		60) \
	_(TCP_ESTABLISHED,	"tcp_established",	10800) \
	_(TCP_FIN_WAIT,		"tcp_fin_wait",		120) \
	_(TCP_CLOSE_WAIT,	"tcp_close_wait",	60) \
	_(TCP_LAST_ACK,		"tcp_last_ack",		30) \
	_(TCP_TIME_WAIT,	"tcp_time_wait",	120) \
	_(TCP_CLOSE,		"tcp_close",		10) \
	_(UDP_UNREPLIED,	"udp_unreplied",	30) \
	_(UDP_REPLIED,		"udp_replied",		180) \
	_(ICMP,			"icmp",			30)

enum ct_class {
#define CT_CLASS_ENUM(n, s, t) CT_C_##n,
	CT_CLASSES(CT_CLASS_ENUM)
#undef CT_CLASS_ENUM
	CT_C_MAX
};

extern const char *const ct_class_names[CT_C_MAX];
extern const uint32_t ct_default_timeouts[CT_C_MAX];

#define CT_NIL	UINT32_MAX

struct ct_link {
	uint32_t prev;
	uint32_t next;
};

/*
 * Everything a packet touches, in one cache line, TCP window tracking (tcpwin.h) included: per
 * direction the highest sequence sent (end), how much of it the peer has not acknowledged
 * (lag, saturating at 0xffff: the peer's highest ack is end - lag), the largest window
 * advertised (maxwin, an 8-bit float, 0 until that direction is seen) and the window scale
 * from the SYN (a nibble each in wscale, t[0]'s low). Index [d] is the direction of t[d].
 */
struct ct_session {
	struct ct_tuple t[2];
	uint32_t last_seen;
	uint32_t end[2];
	uint16_t queued;	/* low 16 bits of the clock when it last moved to its list's tail */
	uint16_t pol_ver;	/* policy version the flow was last checked against */
	uint16_t lag[2];
	uint8_t state;
	uint8_t cls;
	uint8_t flags;
	uint8_t wscale;
	uint8_t peer_mac[6];	/* next hop on the world side */
	uint8_t maxwin[2];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct ct_session) == 64, "a session is one cache line");

/*
 * List links, touched only when a session moves between lists (at most once per grain), is
 * created or is removed: kept out of the hot line.
 */
struct ct_cold {
	struct ct_link lru;	/* class list, or free list (next only) */
	struct ct_link zl[2];	/* per-zone list of tuple t[dir] when its zone is a sandbox */
};

#define CT_F_USED	0x01
#define CT_F_POLICY	0x02	/* t[0] is a sandbox that opened the flow: its policy applies */
#define CT_F_WS_ORIG	0x04	/* the SYN of t[0]'s side offered window scaling */
#define CT_F_WS_REPLY	0x08	/* the SYN of t[1]'s side offered window scaling */
#define CT_F_PICKUP	0x10	/* window picked up mid-stream: liberal until both sides seen */

enum ct_refuse {
	CT_OK = 0,
	CT_FULL,
	CT_CLASH,
};

struct ct_counters {
	uint64_t created;
	uint64_t expired;
	uint64_t evicted;
	uint64_t refused_full;
	uint64_t refused_clash;
	uint64_t flushed;
};

struct ct_table {
	struct ct_session *s;
	struct ct_cold *c;
	uint32_t capacity;
	uint32_t used;
	uint32_t hiwater;	/* sessions never used yet start here */
	uint32_t free_head;
	uint32_t nlines;
	uint32_t ref_mask;	/* low bits of a slot: the tuple reference */
	struct ct_line *lines;
	uint32_t nzones;
	uint32_t *zone_head;	/* nzones + 1 heads */
	uint32_t *zone_cnt;	/* per zone, live sessions: [2z] it opened, [2z + 1] towards it */
	uint32_t *ep_cnt;	/* CT_EP_BUCKETS: egress sessions per (zone, remote endpoint) */
	uint32_t lru_head[CT_C_MAX];
	uint32_t lru_tail[CT_C_MAX];
	uint32_t class_count[CT_C_MAX];
	uint32_t timeout[CT_C_MAX];
	uint32_t grain[CT_C_MAX];
	uint64_t seed;
	struct ct_counters cnt;
	bool in_region;		/* laid out in a region (ct_region.h): its memory is not ours */
};

/* Returns NULL and sets errno on failure. 'timeouts' may be NULL for the defaults. */
struct ct_table *ct_create(uint32_t capacity, uint32_t nzones, const uint32_t *timeouts);
void ct_destroy(struct ct_table *ct);

/*
 * Replaces the random hash seed ct_create() drew. For repeatable benchmarks and instruction
 * counts only (a known seed lets a sender aim at one index line). Refused with -EBUSY once
 * the table holds a session: the index is laid out by the seed.
 */
int ct_set_seed(struct ct_table *ct, uint64_t seed);

struct ct_session *ct_lookup(struct ct_table *ct, const struct ct_tuple *t, int *dir);

/*
 * The index: an array of 64-byte lines, each with 15 slots and an overflow count. A slot holds
 * a tuple reference ((index << 1 | dir) + 1) in its low ref_bits and, above them, bits of the
 * tuple's hash (the tag, top bit always set so an empty slot never matches). A lookup reads
 * one line, compares all tags at once and touches only sessions whose tag matches: with 1M
 * sessions a wrong session is visited for under 2 % of lookups, where a hash chain visited one
 * for 25 %. A tuple goes to the first line, from its home line on, with a free slot; every line
 * it passes counts it in 'over', and a lookup goes on to the next line only while 'over' is
 * not 0. The lines are sized for half of the slots to be used when the table is full.
 */
#define CT_LINE_SLOTS	15

struct ct_line {
	uint32_t w[CT_LINE_SLOTS + 1];	/* slots, then the overflow count in w[15] */
} __attribute__((aligned(64)));

/*
 * A prefetch the compiler must keep. GCC deletes a loop whose body is only __builtin_prefetch
 * calls (it has no side effects), which silently removed the whole session-prefetch stage of
 * the burst functions; an asm volatile cannot be deleted.
 */
static inline void
ct_prefetch(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p);
	__asm__ volatile("" : : "r"(p));
#endif
}

static inline void
ct_tuple_set(struct ct_tuple *t, uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, uint16_t zone,
	     uint8_t proto)
{
	t->saddr = s;
	t->daddr = d;
	t->sport = sp;
	t->dport = dp;
	t->zone = zone;
	t->proto = proto;
	t->pad = 0;
}

static inline bool
ct_tuple_eq(const struct ct_tuple *a, const struct ct_tuple *b)
{
	return __builtin_memcmp(a, b, sizeof(*a)) == 0;
}

/* 64-bit hash of a tuple: the low half picks the line, the high half gives the tag. */
static inline uint64_t
ct_hash_tuple(const struct ct_table *ct, const struct ct_tuple *t)
{
	uint64_t a, b, h;

	__builtin_memcpy(&a, t, 8);
	__builtin_memcpy(&b, (const uint8_t *)t + 8, 8);
	h = (a ^ ct->seed) * 0xff51afd7ed558ccdull;
	h ^= (b + (h >> 31)) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return h;
}

/* The index arithmetic, family-free (ct6.c's too): a hash's line, the next line, its tag. */
static inline uint32_t
ct_hash_line(uint64_t h, uint32_t nlines)
{
	return (uint32_t)(((h & 0xffffffffull) * nlines) >> 32);
}

static inline uint32_t
ct_hash_next(uint32_t li, uint32_t nlines)
{
	return li + 1 == nlines ? 0 : li + 1;
}

static inline uint32_t
ct_hash_tag(uint64_t h, uint32_t ref_mask)
{
	return ((uint32_t)(h >> 32) | 0x80000000u) & ~ref_mask;
}

static inline uint32_t
ct_line_of(const struct ct_table *ct, uint64_t h)
{
	return ct_hash_line(h, ct->nlines);
}

/* The line a tuple that finds its line full moves on to. */
static inline uint32_t
ct_next_line(const struct ct_table *ct, uint32_t li)
{
	return ct_hash_next(li, ct->nlines);
}

static inline uint32_t
ct_tag_of(const struct ct_table *ct, uint64_t h)
{
	return ct_hash_tag(h, ct->ref_mask);
}

/* A tuple reference: which session, which of its tuples; never 0 (an empty slot). */
static inline uint32_t
ct_ref_of(uint32_t idx, int dir)
{
	return ((idx << 1) | (uint32_t)dir) + 1;
}

static inline struct ct_session *
ct_ref_session(const struct ct_table *ct, uint32_t ref, int *dir)
{
	*dir = (int)((ref - 1) & 1);
	return &ct->s[(ref - 1) >> 1];
}

/* Bit k set when slot k holds 'want' in the bits of 'bits'. */
static inline uint32_t
ct_line_match(const struct ct_line *ln, uint32_t want, uint32_t bits)
{
	uint32_t m = 0;

#if defined(__SSE2__)
	const __m128i w = _mm_set1_epi32((int)want), b = _mm_set1_epi32((int)bits);
	const __m128i *v = (const __m128i *)ln->w;
	__m128i e0 = _mm_cmpeq_epi32(_mm_and_si128(_mm_load_si128(v), b), w);
	__m128i e1 = _mm_cmpeq_epi32(_mm_and_si128(_mm_load_si128(v + 1), b), w);
	__m128i e2 = _mm_cmpeq_epi32(_mm_and_si128(_mm_load_si128(v + 2), b), w);
	__m128i e3 = _mm_cmpeq_epi32(_mm_and_si128(_mm_load_si128(v + 3), b), w);

	/* Sixteen all-ones or all-zeros lanes, narrowed to one byte each. */
	m = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(_mm_packs_epi32(e0, e1),
							 _mm_packs_epi32(e2, e3)));
#else
	for (uint32_t k = 0; k < CT_LINE_SLOTS; k++)
		m |= (uint32_t)((ln->w[k] & bits) == want) << k;
#endif
	return m & ((1u << CT_LINE_SLOTS) - 1);
}

/*
 * Burst helpers: hash a tuple and prefetch its line, then the first session whose tag
 * matches, then look it up with the hash already known. Spread over a burst, the memory
 * latency of one packet hides behind the work on the others.
 */
static inline void
ct_prefetch_bucket(const struct ct_table *ct, uint64_t h)
{
	ct_prefetch(&ct->lines[ct_line_of(ct, h)]);
}

/* Returns the reference prefetched (a hint for ct_lookup_hint()), 0 when none. */
static inline uint32_t
ct_prefetch_session(const struct ct_table *ct, uint64_t h)
{
	const struct ct_line *ln = &ct->lines[ct_line_of(ct, h)];
	uint32_t m = ct_line_match(ln, ct_tag_of(ct, h), ~ct->ref_mask), ref;
	int d;

	if (!m)
		return 0;
	ref = ln->w[__builtin_ctz(m)] & ct->ref_mask;
	ct_prefetch(ct_ref_session(ct, ref, &d));
	return ref;
}

struct ct_session *ct_lookup_hash(struct ct_table *ct, const struct ct_tuple *t, uint64_t h,
				  int *dir);

/*
 * Look up with the reference ct_prefetch_session() found. The table may have changed since
 * (earlier packets of the burst): the hint counts only for a live session holding the tuple,
 * else the line is searched again.
 */
static inline struct ct_session *
ct_lookup_hint(struct ct_table *ct, const struct ct_tuple *t, uint64_t h, uint32_t hint,
	       int *dir)
{
	if (hint) {
		int d;
		struct ct_session *s = ct_ref_session(ct, hint, &d);

		if ((s->flags & CT_F_USED) && ct_tuple_eq(&s->t[d], t)) {
			*dir = d;
			return s;
		}
	}
	return ct_lookup_hash(ct, t, h, dir);
}

/* The session line the next insert will take. */
static inline void
ct_prefetch_free(const struct ct_table *ct)
{
	uint32_t idx = ct->free_head != CT_NIL ? ct->free_head : ct->hiwater;

	if (idx < ct->capacity) {
		ct_prefetch(&ct->s[idx]);
		ct_prefetch(&ct->c[idx]);
	}
}

/*
 * Insert a session. When the table is full: reuse an expired entry, else evict the oldest
 * not-established one, else refuse (*why = CT_FULL). A tuple already present → CT_CLASH.
 */
struct ct_session *ct_insert(struct ct_table *ct, const struct ct_tuple *orig,
			     const struct ct_tuple *reply, uint8_t state, uint32_t now,
			     enum ct_refuse *why);
/* The same with both tuples' ct_hash_tuple() already known. */
struct ct_session *ct_insert_hashed(struct ct_table *ct, const struct ct_tuple *orig,
				    uint64_t horig, const struct ct_tuple *reply, uint64_t hreply,
				    uint8_t state, uint32_t now, enum ct_refuse *why);
void ct_delete(struct ct_table *ct, struct ct_session *s);

/* The tables behind the per-packet helpers below (ct.c). */
#define CT_TCP_FLAG_CLASSES	6
extern const uint8_t ct_tcp_table[2][CT_TCP_FLAG_CLASSES][CT_TCP_MAX];
extern const uint8_t ct_tcp_flag_class[16];
extern const uint8_t ct_tcp_state_class[CT_TCP_MAX];

/*
 * TCP: flags → next state from 'state' seen in direction 'dir' (may be INVALID/IGNORE): the
 * Linux conntrack transition table. FIN, SYN, RST are bits 0-2 of the flags; ACK (bit 4) is
 * moved down to bit 3 to index the class table.
 */
static inline uint8_t
ct_tcp_next(uint8_t state, int dir, uint8_t f)
{
	if (state >= CT_TCP_MAX)
		return CT_TCP_INVALID;
	return ct_tcp_table[dir & 1][ct_tcp_flag_class[(f & 7) | ((f >> 1) & 8)]][state];
}

static inline enum ct_class
ct_class_of(uint8_t proto, uint8_t state)
{
	if (proto == IPPROTO_TCP_)
		return state < CT_TCP_MAX ? (enum ct_class)ct_tcp_state_class[state] : CT_C_TCP_SYN;
	if (proto == IPPROTO_UDP_)
		return state == CT_REPLIED ? CT_C_UDP_REPLIED : CT_C_UDP_UNREPLIED;
	return CT_C_ICMP;
}

/* Move a session to the tail of class c's list (ct_touch() when its grain has passed). */
void ct_touch_move(struct ct_table *ct, struct ct_session *s, enum ct_class c);

/*
 * Record activity at 'now' and the (possibly new) state. Moving to the tail keeps each list
 * ordered by activity, to within the grain; most packets do not move it. 'queued' holds 16
 * bits of the clock: the difference is exact while the session was active in the last 2^15 s,
 * which the idle test makes sure of.
 *
 * ct_touch_quick() is the common case alone: it records the packet and returns true when the
 * session stays in its list position, else changes nothing and returns false (then
 * ct_touch_slow()), so a caller can look at a class change before it happens. c is the class
 * of 'state'.
 */
static inline bool
ct_touch_quick(struct ct_table *ct, struct ct_session *s, enum ct_class c, uint8_t state,
	       uint32_t now)
{
	if (c != s->cls || (uint16_t)((uint16_t)now - s->queued) >= ct->grain[c] ||
	    now - s->last_seen >= 32768)
		return false;
	s->state = state;
	s->last_seen = now;
	return true;
}

static inline void
ct_touch_slow(struct ct_table *ct, struct ct_session *s, enum ct_class c, uint8_t state,
	      uint32_t now)
{
	s->state = state;
	s->last_seen = now;
	ct_touch_move(ct, s, c);
}

static inline void
ct_touch(struct ct_table *ct, struct ct_session *s, uint8_t state, uint32_t now)
{
	enum ct_class c = ct_class_of(s->t[0].proto, state);

	if (!ct_touch_quick(ct, s, c, state, now))
		ct_touch_slow(ct, s, c, state, now);
}

/* Remove sessions idle past their timeout; at most 'budget'. Returns how many. */
uint32_t ct_expire(struct ct_table *ct, uint32_t now, uint32_t budget);

/* Remove every session with a tuple in 'zone'. Returns how many. */
uint32_t ct_flush_zone(struct ct_table *ct, uint16_t zone);

/* One session as copied out by ct_dump(); the table itself never leaves the worker. */
struct ct_dump_entry {
	struct ct_tuple t[2];
	uint32_t idle;		/* seconds since the last packet */
	uint32_t expires;	/* seconds until expiry */
	uint8_t state;
	uint8_t cls;
	uint8_t pad[2];
};

/* What to dump: zone 0 = every zone, proto 0 = every protocol. */
struct ct_dump_req {
	uint16_t zone;
	uint8_t proto;
	uint32_t cursor;	/* in: first index to look at; out: where to go on, CT_NIL at end */
	uint32_t budget;	/* at most this many table entries looked at per call */
	uint32_t max;		/* room in 'out' */
	uint32_t n;		/* out: entries written */
	struct ct_dump_entry *out;
};

/*
 * Copy the sessions matching the request, in index order, starting at req->cursor. Bounded by
 * req->max entries and req->budget table slots so a dump never stalls the worker for long.
 */
void ct_dump(const struct ct_table *ct, uint32_t now, struct ct_dump_req *req);

bool ct_class_established(enum ct_class c);

/*
 * Whether a session of class c is live for the per-zone and per-endpoint counts: not
 * TIME_WAIT or CLOSE. A closed TCP session only waits out its timeout; counted, a sandbox
 * serving short connections would meet its limit from its own closed ones (65,536 at 120 s
 * of TIME_WAIT: ~540 conn/s), and one calling an API without keep-alive its SNAT share
 * (4,442 at 120 s: ~37 conn/s).
 */
_Static_assert(CT_C_TCP_CLOSE == CT_C_TCP_TIME_WAIT + 1, "the closed classes are adjacent");

static inline bool
ct_class_live(unsigned int c)
{
	return c - CT_C_TCP_TIME_WAIT > 1u;
}

/*
 * Per-zone counts of live sessions for the per-sandbox limits, kept by insert, delete (so
 * every removal path, expiry, eviction, flush, SNAT takeover, counts) and by the class moves
 * of ct_touch_move() that enter or leave TIME_WAIT/CLOSE. A session is counted once for the
 * zone of t[0] as opened by it (egress, hairpin from it) and once for the zone of t[1] as
 * opened towards it (exposed port, hairpin to it, host to it), the second only when the
 * zones differ.
 */
static inline uint32_t
ct_zone_opened(const struct ct_table *ct, uint16_t zone)
{
	return zone && zone <= ct->nzones ? ct->zone_cnt[2u * zone] : 0;
}

static inline uint32_t
ct_zone_inbound(const struct ct_table *ct, uint16_t zone)
{
	return zone && zone <= ct->nzones ? ct->zone_cnt[2u * zone + 1] : 0;
}

/*
 * SNAT ports held by live sessions (ct_class_live()) of one zone towards one remote endpoint,
 * kept like the zone counts, in CT_EP_BUCKETS hashed counters without keys: two (zone,
 * endpoint) pairs that share a bucket add up, so a count can be high (never low). The
 * endpoint is (rzone, address, port, protocol) of the reply tuple: rzone 0 for the world, a
 * sandbox's zone for a hairpin to its exposed port (every sandbox has the one guest address).
 * For ICMP the port is the id, not part of the endpoint.
 */
#define CT_EP_BUCKETS	32768u

static inline uint32_t
ct_ep_bucket(const struct ct_table *ct, uint16_t zone, uint16_t rzone, uint32_t raddr,
	     uint16_t rport, uint8_t proto)
{
	uint64_t h = ((uint64_t)raddr << 32 | (uint32_t)(proto == IPPROTO_ICMP_ ? 0 : rport) << 16 |
		      zone) ^ ct->seed;

	h = (h ^ (h >> 33) ^ proto ^ (uint64_t)rzone << 8) * 0xff51afd7ed558ccdull;
	return (uint32_t)(h >> 40) & (CT_EP_BUCKETS - 1);
}

static inline uint32_t
ct_ep_count(const struct ct_table *ct, uint16_t zone, uint16_t rzone, uint32_t raddr,
	    uint16_t rport, uint8_t proto)
{
	return ct->ep_cnt[ct_ep_bucket(ct, zone, rzone, raddr, rport, proto)];
}

/*
 * Rebuild the zone and endpoint counts from the sessions (a table adopted from another
 * process) by the same rule: live sessions by their class. One pass over the used part of
 * the table, no lookups.
 */
void ct_recount_zones(struct ct_table *ct);
/*
 * The per-zone and per-endpoint counts of a table laid out in a region: they live in this
 * process's memory (ct_destroy() frees them), and an adopted table gets them recounted.
 */
int ct_counts_alloc(struct ct_table *ct);

static inline uint32_t
ct_index(const struct ct_table *ct, const struct ct_session *s)
{
	return (uint32_t)(s - ct->s);
}

#endif /* CVS_CT_H */
