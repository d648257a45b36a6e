/* SPDX-License-Identifier: BSD-3-Clause */
/* Conntrack: TCP transitions, lookups in both directions, zones, expiry, table-full policy. */
#include <errno.h>

#include "t.h"
#include "ct.h"
#include "ct_counts.h"
#include "pkt.h"

static struct ct_tuple
tup(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, uint16_t zone, uint8_t proto)
{
	struct ct_tuple t = { s, d, sp, dp, zone, proto, 0 };

	return t;
}

static void
test_tcp_machine(void)
{
	uint8_t s = CT_TCP_NONE;

	/* Three-way handshake. */
	s = ct_tcp_next(s, CT_DIR_ORIG, TCPF_SYN);
	CHECK_EQ(s, CT_TCP_SYN_SENT);
	s = ct_tcp_next(s, CT_DIR_REPLY, TCPF_SYN | TCPF_ACK);
	CHECK_EQ(s, CT_TCP_SYN_RECV);
	s = ct_tcp_next(s, CT_DIR_ORIG, TCPF_ACK);
	CHECK_EQ(s, CT_TCP_ESTABLISHED);
	/* Data both ways stays established. */
	CHECK_EQ(ct_tcp_next(s, CT_DIR_REPLY, TCPF_ACK | TCPF_PSH), CT_TCP_ESTABLISHED);
	/* Orderly close. */
	s = ct_tcp_next(s, CT_DIR_ORIG, TCPF_FIN | TCPF_ACK);
	CHECK_EQ(s, CT_TCP_FIN_WAIT);
	s = ct_tcp_next(s, CT_DIR_REPLY, TCPF_ACK);
	CHECK_EQ(s, CT_TCP_CLOSE_WAIT);
	s = ct_tcp_next(s, CT_DIR_REPLY, TCPF_FIN | TCPF_ACK);
	CHECK_EQ(s, CT_TCP_LAST_ACK);
	s = ct_tcp_next(s, CT_DIR_ORIG, TCPF_ACK);
	CHECK_EQ(s, CT_TCP_TIME_WAIT);
	/* A new SYN on the same tuple reopens. */
	CHECK_EQ(ct_tcp_next(s, CT_DIR_ORIG, TCPF_SYN), CT_TCP_SYN_SENT);
	/* RST closes from anywhere but NONE. */
	CHECK_EQ(ct_tcp_next(CT_TCP_ESTABLISHED, CT_DIR_REPLY, TCPF_RST), CT_TCP_CLOSE);
	CHECK_EQ(ct_tcp_next(CT_TCP_NONE, CT_DIR_ORIG, TCPF_RST), CT_TCP_INVALID);
	/* RST beats SYN. */
	CHECK_EQ(ct_tcp_next(CT_TCP_ESTABLISHED, CT_DIR_ORIG, TCPF_SYN | TCPF_RST),
		 CT_TCP_CLOSE);
	/* No flags, or SYN+ACK from the originator in SYN_SENT: invalid. */
	CHECK_EQ(ct_tcp_next(CT_TCP_ESTABLISHED, CT_DIR_ORIG, 0), CT_TCP_INVALID);
	CHECK_EQ(ct_tcp_next(CT_TCP_SYN_SENT, CT_DIR_ORIG, TCPF_SYN | TCPF_ACK), CT_TCP_INVALID);
	/* Simultaneous open. */
	CHECK_EQ(ct_tcp_next(CT_TCP_SYN_SENT, CT_DIR_REPLY, TCPF_SYN), CT_TCP_SYN_SENT2);
	CHECK_EQ(ct_tcp_next(CT_TCP_SYN_SENT2, CT_DIR_ORIG, TCPF_SYN | TCPF_ACK),
		 CT_TCP_SYN_RECV);
	/* A SYN in ESTABLISHED is ignored, not a state change. */
	CHECK_EQ(ct_tcp_next(CT_TCP_ESTABLISHED, CT_DIR_ORIG, TCPF_SYN), CT_TCP_IGNORE);
	CHECK_EQ(ct_tcp_next(CT_TCP_INVALID, CT_DIR_ORIG, TCPF_ACK), CT_TCP_INVALID);
}

static void
test_lookup_zones(void)
{
	struct ct_table *ct = ct_create(16, 4, NULL);
	struct ct_tuple o = tup(1, 2, 10, 20, 0, IPPROTO_TCP_);
	struct ct_tuple r = tup(9, 1, 80, 10, 1, IPPROTO_TCP_);
	struct ct_tuple r2 = tup(9, 1, 80, 10, 2, IPPROTO_TCP_);
	struct ct_session *s, *f;
	enum ct_refuse why;
	int dir;

	s = ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, 100, &why);
	CHECK(s != NULL);
	f = ct_lookup(ct, &o, &dir);
	CHECK(f == s);
	CHECK_EQ(dir, CT_DIR_ORIG);
	f = ct_lookup(ct, &r, &dir);
	CHECK(f == s);
	CHECK_EQ(dir, CT_DIR_REPLY);
	/* The same guest tuple in another sandbox zone is another flow. */
	CHECK(ct_lookup(ct, &r2, &dir) == NULL);
	/* A second session with a tuple in use is refused as a clash. */
	CHECK(ct_insert(ct, &o, &r2, CT_TCP_SYN_SENT, 100, &why) == NULL);
	CHECK_EQ(why, CT_CLASH);
	o.sport = 11;
	CHECK(ct_insert(ct, &o, &r2, CT_TCP_SYN_SENT, 100, &why) != NULL);
	CHECK_EQ(ct->used, 2);
	CHECK_EQ(ct_flush_zone(ct, 1), 1);
	CHECK(ct_lookup(ct, &r, &dir) == NULL);
	CHECK(ct_lookup(ct, &r2, &dir) != NULL);
	CHECK_EQ(ct->used, 1);
	ct_destroy(ct);
}

static void
test_expiry(void)
{
	struct ct_table *ct = ct_create(1000, 4, NULL);
	struct ct_session *s;
	enum ct_refuse why;
	uint32_t i;

	for (i = 0; i < 100; i++) {
		struct ct_tuple o = tup(1, 2, (uint16_t)i, 20, 0, IPPROTO_TCP_);
		struct ct_tuple r = tup(9, 1, 80, (uint16_t)i, 1, IPPROTO_TCP_);

		s = ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, 1000, &why);
		CHECK(s != NULL);
		if (i < 10)
			ct_touch(ct, s, CT_TCP_ESTABLISHED, 1000);
	}
	/* SYN timeout is 60 s: nothing goes at 59 s, the 90 unestablished go at 60 s. */
	CHECK_EQ(ct_expire(ct, 1059, 1000), 0);
	CHECK_EQ(ct_expire(ct, 1060, 1000), 90);
	CHECK_EQ(ct->used, 10);
	/* Established lasts 10800 s; activity refreshes it. */
	s = ct_lookup(ct, &(struct ct_tuple){ 1, 2, 0, 20, 0, IPPROTO_TCP_, 0 }, &(int){ 0 });
	CHECK(s != NULL);
	ct_touch(ct, s, CT_TCP_ESTABLISHED, 5000);
	CHECK_EQ(ct_expire(ct, 1000 + 10800, 1000), 9);
	CHECK_EQ(ct->used, 1);
	/* The budget bounds the work per call. */
	ct_destroy(ct);

	ct = ct_create(1000, 4, NULL);
	for (i = 0; i < 50; i++) {
		struct ct_tuple o = tup(1, 2, (uint16_t)i, 20, 0, IPPROTO_UDP_);
		struct ct_tuple r = tup(9, 1, 80, (uint16_t)i, 1, IPPROTO_UDP_);

		ct_insert(ct, &o, &r, CT_UNREPLIED, 0, &why);
	}
	CHECK_EQ(ct_expire(ct, 30, 7), 7);
	CHECK_EQ(ct->used, 43);
	ct_destroy(ct);
}

static void
test_full(void)
{
	struct ct_table *ct = ct_create(4, 4, NULL);
	struct ct_session *s[4];
	enum ct_refuse why;
	uint32_t i;

	for (i = 0; i < 4; i++) {
		struct ct_tuple o = tup(1, 2, (uint16_t)i, 20, 0, IPPROTO_TCP_);
		struct ct_tuple r = tup(9, 1, 80, (uint16_t)i, 1, IPPROTO_TCP_);

		s[i] = ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, 100 + i, &why);
		CHECK(s[i] != NULL);
	}
	/* Full, nothing expired: the oldest not-established session (port 0) is evicted. */
	{
		struct ct_tuple o = tup(1, 2, 100, 20, 0, IPPROTO_TCP_);
		struct ct_tuple r = tup(9, 1, 80, 100, 1, IPPROTO_TCP_);
		int d;

		CHECK(ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, 110, &why) != NULL);
		CHECK(ct_lookup(ct, &(struct ct_tuple){ 1, 2, 0, 20, 0, IPPROTO_TCP_, 0 }, &d) ==
		      NULL);
		CHECK_EQ(ct->cnt.evicted, 1);
	}
	/* Make every session established: then a new flow is refused, nothing evicted. */
	for (i = 0; i < 4; i++) {
		struct ct_tuple o = tup(1, 2, (uint16_t)(i == 0 ? 100 : i), 20, 0, IPPROTO_TCP_);
		int d;
		struct ct_session *x = ct_lookup(ct, &o, &d);

		CHECK(x != NULL);
		if (x)
			ct_touch(ct, x, CT_TCP_ESTABLISHED, 120);
	}
	{
		struct ct_tuple o = tup(1, 2, 200, 20, 0, IPPROTO_TCP_);
		struct ct_tuple r = tup(9, 1, 80, 200, 1, IPPROTO_TCP_);

		CHECK(ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, 121, &why) == NULL);
		CHECK_EQ(why, CT_FULL);
		CHECK_EQ(ct->cnt.refused_full, 1);
		CHECK_EQ(ct->used, 4);
		/* Once one has expired, its entry is reused. */
		CHECK(ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, 120 + 10800, &why) != NULL);
	}
	ct_destroy(ct);
}

static void
test_churn(void)
{
	/* Random insert/delete/expire against a shadow count: lists and hash stay consistent. */
	struct ct_table *ct = ct_create(5000, 8, NULL);
	enum ct_refuse why;
	uint32_t now = 0, i;
	int d;

	srand(3);
	for (i = 0; i < 200000; i++) {
		struct ct_tuple o = tup((uint32_t)rand() % 64, 2, (uint16_t)(rand() % 512), 20, 0,
					IPPROTO_TCP_);
		struct ct_tuple r = tup(9, o.saddr, 80, o.sport, (uint16_t)(1 + rand() % 8),
					IPPROTO_TCP_);
		struct ct_session *s = ct_lookup(ct, &o, &d);

		if (s) {
			if (rand() & 1)
				ct_delete(ct, s);
			else
				ct_touch(ct, s, CT_TCP_ESTABLISHED, now);
		} else {
			ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, now, &why);
		}
		if (i % 1000 == 0) {
			now += 7;
			ct_expire(ct, now, 100000);
		}
		if (i % 50000 == 0)
			ct_flush_zone(ct, (uint16_t)(1 + rand() % 8));
	}
	{
		uint32_t sum = 0, c, n;

		for (c = 0; c < CT_C_MAX; c++)
			sum += ct->class_count[c];
		CHECK_EQ(sum, ct->used);
		/* Every zone list together holds each session once (all have a sandbox side). */
		n = 0;
		for (c = 1; c <= 8; c++) {
			uint32_t idx = ct->zone_head[c];

			while (idx != CT_NIL) {
				n++;
				idx = ct->c[idx].zl[ct->s[idx].t[0].zone == c ? 0 : 1].next;
			}
		}
		CHECK_EQ(n, ct->used);
	}
	ct_destroy(ct);
}

/* The session dump: filters, bounded pages, a cursor that resumes where a page ended. */
static void
test_dump(void)
{
	struct ct_table *ct = ct_create(64, 4, NULL);
	struct ct_dump_entry out[64];
	struct ct_dump_req q;
	enum ct_refuse why;
	uint32_t i, total, pages, prev;

	/* 30 TCP sessions to zone 1, 10 UDP to zone 2, then delete every third TCP one. */
	for (i = 0; i < 40; i++) {
		struct ct_tuple o = tup(100 + i, 1, 1000 + i, 80, 0, i < 30 ? IPPROTO_TCP_ :
				       IPPROTO_UDP_);
		struct ct_tuple r = tup(9, 100 + i, 80, 1000 + i, i < 30 ? 1 : 2, o.proto);

		CHECK(ct_insert(ct, &o, &r, i < 30 ? CT_TCP_SYN_SENT : CT_UNREPLIED, 50, &why));
	}
	for (i = 0; i < 30; i += 3) {
		struct ct_tuple o = tup(100 + i, 1, 1000 + i, 80, 0, IPPROTO_TCP_);
		int d;

		ct_delete(ct, ct_lookup(ct, &o, &d));
	}
	memset(&q, 0, sizeof(q));
	q.out = out;
	q.max = 64;
	q.budget = 1000;
	ct_dump(ct, 60, &q);
	CHECK_EQ(q.n, 30);
	CHECK_EQ(q.cursor, CT_NIL);
	CHECK_EQ(out[0].idle, 10);
	CHECK_EQ(out[0].expires, 50);
	CHECK_EQ(out[0].state, CT_TCP_SYN_SENT);

	/* Zone filter matches the reply tuple's zone too; protocol filter. */
	memset(&q, 0, sizeof(q));
	q.out = out;
	q.max = 64;
	q.budget = 1000;
	q.zone = 2;
	ct_dump(ct, 60, &q);
	CHECK_EQ(q.n, 10);
	for (i = 0; i < q.n; i++)
		CHECK_EQ(out[i].t[0].proto, IPPROTO_UDP_);
	q.zone = 0;
	q.cursor = 0;
	q.proto = IPPROTO_TCP_;
	ct_dump(ct, 60, &q);
	CHECK_EQ(q.n, 20);

	/* Pages of 7 and a scan budget of 5: every session exactly once, in order. */
	total = 0;
	pages = 0;
	memset(&q, 0, sizeof(q));
	q.out = out;
	q.max = 7;
	q.budget = 5;
	prev = 0;
	do {
		ct_dump(ct, 60, &q);
		CHECK(q.n <= 5);
		for (i = 0; i < q.n; i++) {
			CHECK(out[i].t[0].saddr > prev);
			prev = out[i].t[0].saddr;
		}
		total += q.n;
		pages++;
	} while (q.cursor != CT_NIL && pages < 100);
	CHECK_EQ(total, 30);
	CHECK_EQ(q.cursor, CT_NIL);
	ct_destroy(ct);
}

/*
 * Every line's overflow count equals the number of tuples that live past it from a home line
 * at or before it: recomputed from scratch by walking each stored tuple's probe path.
 */
static int
index_counts_ok(const struct ct_table *ct)
{
	uint32_t *want = calloc(ct->nlines, sizeof(*want)), li, k, bad = 0;

	for (li = 0; li < ct->nlines; li++)
		for (k = 0; k < CT_LINE_SLOTS; k++) {
			uint32_t v = ct->lines[li].w[k], home;
			const struct ct_session *s;
			int d;

			if (!v)
				continue;
			s = ct_ref_session(ct, v & ct->ref_mask, &d);
			home = ct_line_of(ct, ct_hash_tuple(ct, &s->t[d]));
			for (; home != li; home = ct_next_line(ct, home))
				want[home]++;
		}
	for (li = 0; li < ct->nlines; li++)
		bad += want[li] != ct->lines[li].w[CT_LINE_SLOTS];
	free(want);
	return bad == 0;
}

/*
 * The index under overflow: the lines are shrunk to two, so 15 sessions (30 tuples) fill every
 * slot and most tuples live away from their home line. Random deletes and inserts, each step
 * checked against a model of what is live.
 */
static void
test_index_overflow(void)
{
	struct ct_table *ct = ct_create(15, 4, NULL);
	struct ct_session *live[15] = { 0 };
	struct ct_tuple o[15], r[15];
	enum ct_refuse why;
	uint32_t step, i, seed = 99, overflowed = 0, count = 0;
	int d;

	CHECK(ct != NULL);
	if (!ct)
		return;
	ct->nlines = 2;
	for (step = 0; step < 20000; step++) {
		/* Kept between 14 and 15 sessions: 28 to 30 tuples in 30 slots. */
		seed = seed * 1103515245u + 12345u;
		i = (seed >> 8) % 15;
		while ((live[i] != NULL) != (count == 15))
			i = (i + 1) % 15;
		if (live[i]) {
			ct_delete(ct, live[i]);
			live[i] = NULL;
			count--;
		} else {
			count++;
			o[i] = tup(0x0a000000u + step, 0x0b000000u, (uint16_t)step, 80, 0,
				   IPPROTO_TCP_);
			r[i] = tup(0x0c000000u, 0x0a000000u + step, 8080, (uint16_t)step, 1 + i % 4,
				   IPPROTO_TCP_);
			live[i] = ct_insert(ct, &o[i], &r[i], CT_TCP_SYN_SENT, 100, &why);
			CHECK(live[i] != NULL);
		}
		for (i = 0; i < 15; i++) {
			if (!live[i])
				continue;
			CHECK(ct_lookup(ct, &o[i], &d) == live[i] && d == CT_DIR_ORIG);
			CHECK(ct_lookup(ct, &r[i], &d) == live[i] && d == CT_DIR_REPLY);
		}
		overflowed += ct->lines[0].w[CT_LINE_SLOTS] + ct->lines[1].w[CT_LINE_SLOTS] > 0;
		if (step % 97 == 0)
			CHECK(index_counts_ok(ct));
	}
	/* Tuples of deleted sessions are gone too. */
	for (i = 0; i < 15; i++)
		if (live[i]) {
			ct_delete(ct, live[i]);
			CHECK(ct_lookup(ct, &o[i], &d) == NULL);
			CHECK(ct_lookup(ct, &r[i], &d) == NULL);
		}
	CHECK(index_counts_ok(ct));
	CHECK_EQ(ct->lines[0].w[CT_LINE_SLOTS] + ct->lines[1].w[CT_LINE_SLOTS], 0);
	/* The walk above did go past home lines, or this test proved nothing. */
	CHECK(overflowed > 1000);
	ct_destroy(ct);
}

/* A full-size table: every tuple found, counts consistent, a miss stays a miss. */
static void
test_index_fill(void)
{
	const uint32_t n = 50000;
	struct ct_table *ct = ct_create(n, 8, NULL);
	enum ct_refuse why;
	uint32_t i;
	int d;

	CHECK(ct != NULL);
	if (!ct)
		return;
	for (i = 0; i < n; i++) {
		struct ct_tuple o = tup(0x0a000000u + i, 0x0b000001u, 1000, 80, 0, IPPROTO_UDP_);
		struct ct_tuple r = tup(0x0c000000u, 0x0a000000u + i, 53, 1000, 1 + i % 8,
					IPPROTO_UDP_);

		CHECK(ct_insert(ct, &o, &r, CT_UNREPLIED, 5, &why) != NULL);
	}
	CHECK(index_counts_ok(ct));
	for (i = 0; i < n; i++) {
		struct ct_tuple o = tup(0x0a000000u + i, 0x0b000001u, 1000, 80, 0, IPPROTO_UDP_);
		struct ct_tuple miss = tup(0x0a000000u + i, 0x0b000001u, 1001, 80, 0,
					   IPPROTO_UDP_);
		struct ct_session *s = ct_lookup(ct, &o, &d);

		CHECK(s != NULL && d == CT_DIR_ORIG && s->t[0].saddr == o.saddr);
		CHECK(ct_lookup(ct, &miss, &d) == NULL);
	}
	ct_destroy(ct);
}

/* A set seed decides the index layout; it cannot change under live sessions. */
static void
test_seed(void)
{
	struct ct_table *a = ct_create(64, 1, NULL), *b = ct_create(64, 1, NULL);
	struct ct_tuple o = tup(1, 2, 10, 20, 0, IPPROTO_UDP_);
	struct ct_tuple r = tup(2, 1, 20, 10, 0, IPPROTO_UDP_);
	uint32_t i, same = 0, moved = 0;
	enum ct_refuse why;
	int dir;

	CHECK(a && b);
	CHECK_EQ(ct_set_seed(a, 42), 0);
	CHECK_EQ(ct_set_seed(b, 42), 0);
	for (i = 0; i < 64; i++) {
		struct ct_tuple t = tup(0x0a000000u + i, 3, 1000, 80, 0, IPPROTO_UDP_);

		same += ct_hash_tuple(a, &t) == ct_hash_tuple(b, &t);
	}
	CHECK_EQ(same, 64);
	CHECK_EQ(ct_set_seed(b, 43), 0);
	for (i = 0; i < 64; i++) {
		struct ct_tuple t = tup(0x0a000000u + i, 3, 1000, 80, 0, IPPROTO_UDP_);

		moved += ct_hash_tuple(a, &t) != ct_hash_tuple(b, &t);
	}
	CHECK_EQ(moved, 64);
	CHECK(ct_insert(a, &o, &r, CT_TCP_NONE, 1, &why) != NULL);
	CHECK_EQ(ct_set_seed(a, 7), -EBUSY);
	CHECK_EQ(a->seed, 42);
	CHECK(ct_lookup(a, &o, &dir) != NULL && dir == CT_DIR_ORIG);
	CHECK(ct_lookup(a, &r, &dir) != NULL && dir == CT_DIR_REPLY);
	ct_destroy(a);
	ct_destroy(b);
}

/* An egress session of 'zone' to remote r:rp from guest port gp, SNAT port sp. */
static struct ct_session *
egress(struct ct_table *ct, uint16_t zone, uint32_t r, uint16_t rp, uint16_t gp, uint16_t sp,
       uint8_t proto, uint8_t state, uint32_t now)
{
	struct ct_tuple o = tup(0x0644fea9, r, gp, rp, zone, proto);
	struct ct_tuple rt = tup(r, 0x010012c6, rp, sp, 0, proto);
	enum ct_refuse why;

	return ct_insert(ct, &o, &rt, state, now, &why);
}

/* Every count against a recount from the sessions (what an adopted table would get). */
static void
check_counts(struct ct_table *ct)
{
	CHECK_EQ(ct_counts_diff(ct), 0);
}

/* Per-zone and per-endpoint counts through insert, expiry, eviction, delete and flush. */
static void
test_zone_counts(void)
{
	struct ct_table *ct = ct_create(64, 8, NULL);
	struct ct_tuple o, rt;
	enum ct_refuse why;
	uint32_t i, res = 0x0100a8c6, other = 0x0200a8c6;
	struct ct_session *s;

	CHECK(ct != NULL);
	/* Zone 1: 10 UDP flows to one resolver, 5 TCP to another endpoint; zone 2: 3 flows. */
	for (i = 0; i < 10; i++)
		CHECK(egress(ct, 1, res, 53, 1000 + i, 30000 + i, IPPROTO_UDP_, CT_UNREPLIED, 100));
	for (i = 0; i < 5; i++)
		CHECK(egress(ct, 1, other, 443, 2000 + i, 31000 + i, IPPROTO_TCP_,
			     CT_TCP_ESTABLISHED, 100));
	for (i = 0; i < 3; i++)
		CHECK(egress(ct, 2, res, 53, 1000 + i, 32000 + i, IPPROTO_UDP_, CT_UNREPLIED, 100));
	CHECK_EQ(ct_zone_opened(ct, 1), 15);
	CHECK_EQ(ct_zone_opened(ct, 2), 3);
	CHECK_EQ(ct_zone_inbound(ct, 1), 0);
	CHECK_EQ(ct_ep_count(ct, 1, 0, res, 53, IPPROTO_UDP_), 10);
	CHECK_EQ(ct_ep_count(ct, 1, 0, other, 443, IPPROTO_TCP_), 5);
	CHECK_EQ(ct_ep_count(ct, 2, 0, res, 53, IPPROTO_UDP_), 3);
	/* Inbound: a world client to zone 3's exposed port. */
	o = tup(0x0900a8c6, 0x010012c6, 5555, 20000, 0, IPPROTO_TCP_);
	rt = tup(0x0644fea9, 0x0900a8c6, 80, 5555, 3, IPPROTO_TCP_);
	CHECK(ct_insert(ct, &o, &rt, CT_TCP_SYN_SENT, 100, &why));
	CHECK_EQ(ct_zone_inbound(ct, 3), 1);
	CHECK_EQ(ct_zone_opened(ct, 3), 0);
	/* Hairpin 1 → 2: opened by 1, inbound for 2, a SNAT port towards 2's port 80. */
	o = tup(0x0644fea9, 0x010012c6, 3000, 20001, 1, IPPROTO_TCP_);
	rt = tup(0x0644fea9, 0x010012c6, 80, 33000, 2, IPPROTO_TCP_);
	CHECK(ct_insert(ct, &o, &rt, CT_TCP_SYN_SENT, 100, &why));
	CHECK_EQ(ct_zone_opened(ct, 1), 16);
	CHECK_EQ(ct_zone_inbound(ct, 2), 1);
	CHECK_EQ(ct_ep_count(ct, 1, 2, 0x0644fea9, 80, IPPROTO_TCP_), 1);
	CHECK_EQ(ct_ep_count(ct, 1, 3, 0x0644fea9, 80, IPPROTO_TCP_), 0);
	check_counts(ct);
	/* Expiry: the unreplied UDP flows go after 30 s, the established TCP ones stay. */
	ct_expire(ct, 100 + 31, 1000);
	CHECK_EQ(ct_zone_opened(ct, 1), 6);
	CHECK_EQ(ct_zone_opened(ct, 2), 0);
	CHECK_EQ(ct_ep_count(ct, 1, 0, res, 53, IPPROTO_UDP_), 0);
	CHECK_EQ(ct_ep_count(ct, 1, 0, other, 443, IPPROTO_TCP_), 5);
	check_counts(ct);
	/* Eviction: fill the table with zone 4's SYNs; each new one evicts the oldest. */
	for (i = 0; ct->used < ct->capacity; i++)
		CHECK(egress(ct, 4, res, 80, 4000 + i, 34000 + i, IPPROTO_TCP_, CT_TCP_SYN_SENT,
			     140));
	/* The oldest not-established session is the inbound SYN of zone 3 (t = 100). */
	CHECK(egress(ct, 5, res, 80, 4000, 40000, IPPROTO_TCP_, CT_TCP_SYN_SENT, 141));
	CHECK_EQ(ct->cnt.evicted, 1);
	CHECK_EQ(ct_zone_opened(ct, 5), 1);
	CHECK_EQ(ct_zone_inbound(ct, 3), 0);
	CHECK_EQ(ct_zone_opened(ct, 4), i);
	check_counts(ct);
	/* Delete one, then flush zone 1 (its hairpin leaves zone 2's inbound count too). */
	s = egress(ct, 6, other, 443, 9, 45000, IPPROTO_TCP_, CT_TCP_SYN_SENT, 300);
	CHECK(s);
	CHECK_EQ(ct_zone_opened(ct, 6), 1);
	ct_delete(ct, s);
	CHECK_EQ(ct_zone_opened(ct, 6), 0);
	CHECK_EQ(ct_ep_count(ct, 6, 0, other, 443, IPPROTO_TCP_), 0);
	ct_flush_zone(ct, 1);
	CHECK_EQ(ct_zone_opened(ct, 1), 0);
	CHECK_EQ(ct_zone_inbound(ct, 2), 0);
	CHECK_EQ(ct_ep_count(ct, 1, 0, other, 443, IPPROTO_TCP_), 0);
	check_counts(ct);
	ct_destroy(ct);
}

/* A world client's session towards zone 3's exposed port, in 'state'. */
static struct ct_session *
inbound(struct ct_table *ct, uint16_t cport, uint8_t state, uint32_t now)
{
	struct ct_tuple o = tup(0x0900a8c6, 0x010012c6, cport, 20000, 0, IPPROTO_TCP_);
	struct ct_tuple rt = tup(0x0644fea9, 0x0900a8c6, 80, cport, 3, IPPROTO_TCP_);
	enum ct_refuse why;

	return ct_insert(ct, &o, &rt, state, now, &why);
}

/*
 * Closed sessions (TIME_WAIT, CLOSE) leave the zone and endpoint counts when they close, not
 * again when they expire or are evicted, and come back when revived (their SNAT port, still
 * taken, goes to a new SYN that finds no free one: dp_snat.h). A recount gives the same at
 * every step.
 */
static void
test_closed_counts(void)
{
	struct ct_table *ct = ct_create(16, 8, NULL);
	uint32_t res = 0x0100a8c6, i;
	struct ct_session *s, *e;

	CHECK(ct != NULL);
	s = inbound(ct, 5000, CT_TCP_SYN_SENT, 100);
	CHECK(s);
	ct_touch(ct, s, CT_TCP_ESTABLISHED, 101);
	CHECK_EQ(ct_zone_inbound(ct, 3), 1);
	ct_touch(ct, s, CT_TCP_FIN_WAIT, 102);
	CHECK_EQ(ct_zone_inbound(ct, 3), 1);
	ct_touch(ct, s, CT_TCP_TIME_WAIT, 103);
	CHECK_EQ(ct_zone_inbound(ct, 3), 0);
	check_counts(ct);
	/* Packets on the closed session keep it out; a SYN revives it. */
	ct_touch(ct, s, CT_TCP_TIME_WAIT, 104);
	CHECK_EQ(ct_zone_inbound(ct, 3), 0);
	ct_touch(ct, s, CT_TCP_SYN_SENT, 105);
	CHECK_EQ(ct_zone_inbound(ct, 3), 1);
	check_counts(ct);
	ct_touch(ct, s, CT_TCP_CLOSE, 106);
	CHECK_EQ(ct_zone_inbound(ct, 3), 0);
	/* Egress of zone 1 closing: out of the zone count and its endpoint's; a SYN revives. */
	e = egress(ct, 1, res, 443, 1000, 30000, IPPROTO_TCP_, CT_TCP_ESTABLISHED, 106);
	CHECK(e);
	CHECK_EQ(ct_ep_count(ct, 1, 0, res, 443, IPPROTO_TCP_), 1);
	ct_touch(ct, e, CT_TCP_TIME_WAIT, 107);
	CHECK_EQ(ct_zone_opened(ct, 1), 0);
	CHECK_EQ(ct_ep_count(ct, 1, 0, res, 443, IPPROTO_TCP_), 0);
	check_counts(ct);
	ct_touch(ct, e, CT_TCP_SYN_SENT, 107);
	CHECK_EQ(ct_ep_count(ct, 1, 0, res, 443, IPPROTO_TCP_), 1);
	check_counts(ct);
	ct_touch(ct, e, CT_TCP_TIME_WAIT, 107);
	CHECK_EQ(ct_ep_count(ct, 1, 0, res, 443, IPPROTO_TCP_), 0);
	/* Expiry of the closed ones: nothing goes below zero. */
	ct_expire(ct, 106 + 10, 100);
	CHECK_EQ(ct->used, 1);
	CHECK_EQ(ct_zone_inbound(ct, 3), 0);
	ct_expire(ct, 107 + 120, 100);
	CHECK_EQ(ct->used, 0);
	CHECK_EQ(ct_zone_opened(ct, 1), 0);
	CHECK_EQ(ct_ep_count(ct, 1, 0, res, 443, IPPROTO_TCP_), 0);
	check_counts(ct);
	/* Eviction: a table full of closed and live sessions; evicted closed ones count once. */
	for (i = 0; i < ct->capacity; i++) {
		s = inbound(ct, (uint16_t)(6000 + i), CT_TCP_SYN_SENT, 300 + i);
		CHECK(s);
		if (s && i % 2 == 0)
			ct_touch(ct, s, CT_TCP_TIME_WAIT, 300 + i);
	}
	CHECK_EQ(ct_zone_inbound(ct, 3), ct->capacity / 2);
	for (i = 0; i < 4; i++)
		CHECK(inbound(ct, (uint16_t)(7000 + i), CT_TCP_SYN_SENT, 320));
	CHECK_EQ(ct->cnt.evicted, 4);
	/* The four oldest went: two closed, two live (SYN_SENT), four live came. */
	CHECK_EQ(ct_zone_inbound(ct, 3), ct->capacity / 2 + 2);
	check_counts(ct);
	ct_flush_zone(ct, 3);
	CHECK_EQ(ct_zone_inbound(ct, 3), 0);
	check_counts(ct);
	ct_destroy(ct);
}

int
main(void)
{
	test_zone_counts();
	test_closed_counts();
	test_seed();
	test_index_overflow();
	test_index_fill();
	test_dump();
	test_tcp_machine();
	test_lookup_zones();
	test_expiry();
	test_full();
	test_churn();
	return t_done("test_ct");
}
