/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection tracking for IPv6: the session table of one worker, beside the IPv4 one (ct.h)
 * and built the same way (docs/architecture.md, "Address families"): a fixed capacity
 * allocated and faulted in at create, two tuples per session found by either, one LRU list
 * per timeout class (the same classes, timeouts and grain), zones, per-zone and per-endpoint
 * counts, the same table-full policy. What ct.h says of those holds here; only the tuple,
 * the session's layout, the hash and the bound on the index probe differ.
 *
 * Everything that does not depend on the address family is ct.h's: directions, TCP states and
 * ct_tcp_next(), classes and ct_class_of(), ct_default_timeouts, the CT_F_* flags, enum
 * ct_refuse, struct ct_counters, the index line (struct ct_line, ct_line_match()).
 *
 * Single writer: only the worker that owns a table calls these functions.
 */
#ifndef CVS_CT6_H
#define CVS_CT6_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ct.h"
#include "pkt.h"

/*
 * Compared and hashed field by field (ct6_tuple_eq(), ct6_hash_tuple()), never as bytes, so
 * 'pad' may hold anything.
 */
struct ct6_tuple {
	uint8_t saddr[16];
	uint8_t daddr[16];
	uint16_t sport;
	uint16_t dport;
	uint16_t zone;
	uint8_t proto;
	uint8_t pad;
};

_Static_assert(sizeof(struct ct6_tuple) == 40, "an IPv6 tuple is 40 bytes");

/*
 * Two cache lines. The first holds everything a packet writes (the fields of struct
 * ct_session with the same names and meanings, TCP window tracking included) and t[0], so a
 * lookup that meets a wrong candidate of the original direction reads one line. The second
 * holds t[1], what is written only when the flow is created or its policy rechecked, and the
 * zone list links (touched by insert and delete, which write this line anyway).
 */
struct ct6_session {
	uint32_t last_seen;
	uint32_t end[2];
	uint16_t queued;	/* low 16 bits of the clock when it last moved to its list's tail */
	uint16_t lag[2];
	uint8_t state;
	uint8_t cls;
	uint8_t flags;
	uint8_t wscale;
	uint8_t maxwin[2];
	struct ct6_tuple t[2];
	uint16_t pol_ver;	/* policy version the flow was last checked against */
	uint8_t peer_mac[6];	/* next hop on the world side */
	struct ct_link zl[2];	/* zone list of t[dir], linking tuple references (ct6.c) */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct ct6_session) == 128, "an IPv6 session is two cache lines");
_Static_assert(offsetof(struct ct6_session, t[1]) == 64, "t[0] and the state in line one");

struct ct6_table {
	struct ct6_session *s;
	struct ct_link *lru;	/* class list, or free list (next only) */
	struct ct_line *lines;
	uint32_t capacity;
	uint32_t used;
	uint32_t hiwater;	/* sessions never used yet start here */
	uint32_t free_head;
	uint32_t nlines;
	uint32_t ref_mask;	/* low bits of an index slot: the tuple reference */
	uint32_t nzones;
	uint32_t *zone_head;	/* nzones + 1 heads: tuple references */
	uint32_t *zone_cnt;	/* live sessions per zone: [2z] it opened, [2z + 1] towards it */
	uint32_t *ep_cnt;	/* CT_EP_BUCKETS: egress sessions per (zone, remote endpoint) */
	uint32_t lru_head[CT_C_MAX];
	uint32_t lru_tail[CT_C_MAX];
	uint32_t class_count[CT_C_MAX];
	uint32_t timeout[CT_C_MAX];
	uint32_t grain[CT_C_MAX];
	uint64_t key[4];	/* hash key, random */
	struct ct_counters cnt;
	bool in_region;		/* laid out in the session region (ct6_region.h): not ours */
};

/*
 * Index lines a tuple may go to, from its home line on. With the lines at most half full and
 * the hash keyed by a random key, eight full lines in a row do not happen by chance; when
 * they do, the insert is refused as CT_FULL. Every operation is bounded by it.
 */
#define CT6_PROBE_LINES	8

/* Returns NULL and sets errno on failure. 'timeouts' may be NULL for the defaults. */
struct ct6_table *ct6_create(uint32_t capacity, uint32_t nzones, const uint32_t *timeouts);
void ct6_destroy(struct ct6_table *ct);

static inline void
ct6_tuple_set(struct ct6_tuple *t, const uint8_t *s, const uint8_t *d, uint16_t sp,
	      uint16_t dp, uint16_t zone, uint8_t proto)
{
	__builtin_memcpy(t->saddr, s, 16);
	__builtin_memcpy(t->daddr, d, 16);
	t->sport = sp;
	t->dport = dp;
	t->zone = zone;
	t->proto = proto;
	t->pad = 0;
}

/* Ports, zone and protocol in one word: the part of a tuple after its addresses. */
static inline uint64_t
ct6_tuple_tail(const struct ct6_tuple *t)
{
	return (uint64_t)t->sport | (uint64_t)t->dport << 16 | (uint64_t)t->zone << 32 |
	       (uint64_t)t->proto << 48;
}

static inline bool
ct6_tuple_eq(const struct ct6_tuple *a, const struct ct6_tuple *b)
{
	uint64_t x[4], y[4];

	__builtin_memcpy(x, a, 32);
	__builtin_memcpy(y, b, 32);
	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) |
		(ct6_tuple_tail(a) ^ ct6_tuple_tail(b))) == 0;
}

/* The folded 128-bit product: the mixing step of the keyed hashes below. */
static inline uint64_t
ct6_mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* 64-bit keyed hash of a tuple: the low half picks the index line, the high half the tag. */
static inline uint64_t
ct6_hash_tuple(const struct ct6_table *ct, const struct ct6_tuple *t)
{
	uint64_t w[4];

	__builtin_memcpy(w, t, 32);
	return ct6_mum(ct6_mum(w[0] ^ ct->key[0], w[1] ^ ct->key[1]) ^
		       ct6_mum(w[2] ^ ct->key[2], w[3] ^ ct->key[3]),
		       ct6_tuple_tail(t) ^ ct->key[0] ^ ct->key[3]);
}

struct ct6_session *ct6_lookup(struct ct6_table *ct, const struct ct6_tuple *t, int *dir);
/* The same with the tuple's ct6_hash_tuple() already known. */
struct ct6_session *ct6_lookup_hash(struct ct6_table *ct, const struct ct6_tuple *t,
				    uint64_t h, int *dir);

/*
 * Burst helpers, as ct.h's for IPv4: stage 1 prefetches a hash's index line, stage 2 the
 * session its first tag match names, both of its lines (the tuple compared may be either,
 * the state is in the first), and returns that reference + 1 (0: none) for
 * ct6_lookup_hint(), which then need not search the line again.
 */
static inline void
ct6_prefetch_line(const struct ct6_table *ct, uint64_t h)
{
	ct_prefetch(&ct->lines[ct_hash_line(h, ct->nlines)]);
}

static inline uint32_t
ct6_prefetch_session(const struct ct6_table *ct, uint64_t h)
{
	const struct ct_line *ln = &ct->lines[ct_hash_line(h, ct->nlines)];
	uint32_t m = ct_line_match(ln, ct_hash_tag(h, ct->ref_mask), ~ct->ref_mask), ref;
	const char *s;

	if (!m)
		return 0;
	ref = ln->w[__builtin_ctz(m)] & ct->ref_mask;
	s = (const char *)&ct->s[(ref - 1) >> 1];
	ct_prefetch(s);
	ct_prefetch(s + 64);
	return ref;
}

/*
 * Look up with the reference ct6_prefetch_session() found. Earlier packets of the burst may
 * have changed the table since: the hint counts only for a live session holding the tuple,
 * else the lines are searched.
 */
static inline struct ct6_session *
ct6_lookup_hint(struct ct6_table *ct, const struct ct6_tuple *t, uint64_t h, uint32_t hint,
		int *dir)
{
	if (hint) {
		struct ct6_session *s = &ct->s[(hint - 1) >> 1];
		int d = (int)((hint - 1) & 1);

		if ((s->flags & CT_F_USED) && ct6_tuple_eq(&s->t[d], t)) {
			*dir = d;
			return s;
		}
	}
	return ct6_lookup_hash(ct, t, h, dir);
}

/*
 * Insert a session, as ct_insert(): when the table is full, reuse an expired entry, else
 * evict the oldest not-established one, else refuse (*why = CT_FULL, also when the index has
 * no slot within CT6_PROBE_LINES). A tuple already present, or orig equal to reply: CT_CLASH.
 */
struct ct6_session *ct6_insert(struct ct6_table *ct, const struct ct6_tuple *orig,
			       const struct ct6_tuple *reply, uint8_t state, uint32_t now,
			       enum ct_refuse *why);
void ct6_delete(struct ct6_table *ct, struct ct6_session *s);

/* Move a session to the tail of class c's list (ct6_touch() when its grain has passed). */
void ct6_touch_move(struct ct6_table *ct, struct ct6_session *s, enum ct_class c);

/* As ct_touch_quick(): records the packet and returns true unless the session must move. */
static inline bool
ct6_touch_quick(struct ct6_table *ct, struct ct6_session *s, enum ct_class c, uint8_t state,
		uint32_t now)
{
	if (c != s->cls || (uint16_t)((uint16_t)now - s->queued) >= ct->grain[c] ||
	    now - s->last_seen >= 32768)
		return false;
	s->state = state;
	s->last_seen = now;
	return true;
}

/* Record activity at 'now' and the (possibly new) state, as ct_touch(). */
static inline void
ct6_touch(struct ct6_table *ct, struct ct6_session *s, uint8_t state, uint32_t now)
{
	enum ct_class c = ct_class_of(s->t[0].proto, state);

	if (!ct6_touch_quick(ct, s, c, state, now)) {
		s->state = state;
		s->last_seen = now;
		ct6_touch_move(ct, s, c);
	}
}

/* Remove sessions idle past their timeout, oldest first per class; at most 'budget'. */
uint32_t ct6_expire(struct ct6_table *ct, uint32_t now, uint32_t budget);

/* Remove every session with a tuple in 'zone'. Returns how many. */
uint32_t ct6_flush_zone(struct ct6_table *ct, uint16_t zone);

/* Per-zone counts of live sessions (ct_class_live()), by the rule of ct_zone_opened(). */
static inline uint32_t
ct6_zone_opened(const struct ct6_table *ct, uint16_t zone)
{
	return zone && zone <= ct->nzones ? ct->zone_cnt[2u * zone] : 0;
}

static inline uint32_t
ct6_zone_inbound(const struct ct6_table *ct, uint16_t zone)
{
	return zone && zone <= ct->nzones ? ct->zone_cnt[2u * zone + 1] : 0;
}

/*
 * SNAT ports held by live sessions of one zone towards one remote endpoint (rzone, address,
 * port, protocol of the reply tuple), hashed into CT_EP_BUCKETS counters as ct_ep_count():
 * a count can be high, never low. For ICMPv6 the port is the id, not part of the endpoint.
 */
static inline uint32_t
ct6_ep_bucket(const struct ct6_table *ct, uint16_t zone, uint16_t rzone, const uint8_t *raddr,
	      uint16_t rport, uint8_t proto)
{
	uint64_t a[2], rest;

	__builtin_memcpy(a, raddr, 16);
	rest = (uint64_t)(proto == IPPROTO_ICMPV6_ ? 0 : rport) | (uint64_t)zone << 16 |
	       (uint64_t)rzone << 32 | (uint64_t)proto << 48;
	return (uint32_t)(ct6_mum(ct6_mum(a[0] ^ ct->key[1], a[1] ^ ct->key[2]),
				  rest ^ ct->key[3]) >> 40) & (CT_EP_BUCKETS - 1);
}

static inline uint32_t
ct6_ep_count(const struct ct6_table *ct, uint16_t zone, uint16_t rzone, const uint8_t *raddr,
	     uint16_t rport, uint8_t proto)
{
	return ct->ep_cnt[ct6_ep_bucket(ct, zone, rzone, raddr, rport, proto)];
}

/* Rebuild the zone and endpoint counts from the sessions, by the same rule. */
void ct6_recount_zones(struct ct6_table *ct);

/*
 * A SNAT port search, endpoint-dependent as for IPv4 (dp_snat.h). 'rt' is the reply-tuple
 * template: the remote endpoint towards the node's IPv6 address, protocol, zone 0. Up to
 * 'probes' consecutive ports of [lo, hi] (host order), wrapping, from lo + start % span, are
 * tried (the whole range when it is smaller); the first whose reply tuple is free goes into
 * rt->dport in network order (and rt->sport for ICMPv6, whose id is both) and 0 is returned.
 * -EADDRINUSE when every port tried is held (-EINVAL when hi < lo); then *closed, when
 * 'closed' is not NULL, is the closed session (ct_class_live() false) among them a new SYN
 * may take over, dp_snat.h's choice: one of 'zone' first, then the one idle longest at 'now';
 * NULL when none.
 */
struct ct6_snat_req {
	uint16_t lo;
	uint16_t hi;
	uint16_t zone;
	uint32_t start;
	uint32_t probes;
	uint32_t now;
};

int ct6_snat_port(struct ct6_table *ct, struct ct6_tuple *rt, const struct ct6_snat_req *rq,
		  struct ct6_session **closed);

/* One session as copied out by ct6_dump(), as struct ct_dump_entry. */
struct ct6_dump_entry {
	struct ct6_tuple t[2];
	uint32_t idle;
	uint32_t expires;
	uint8_t state;
	uint8_t cls;
	uint8_t pad[2];
};

/*
 * Copy the sessions matching 'req' (zone, proto, cursor, budget, max, n as for ct_dump(); its
 * 'out' is not used) into 'out', in index order from req->cursor.
 */
void ct6_dump(const struct ct6_table *ct, uint32_t now, struct ct_dump_req *req,
	      struct ct6_dump_entry *out);

static inline uint32_t
ct6_index(const struct ct6_table *ct, const struct ct6_session *s)
{
	return (uint32_t)(s - ct->s);
}

#endif /* CVS_CT6_H */
