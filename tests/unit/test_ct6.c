/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 session table: lookups both ways, clash, full, expiry of each class, zones and
 * their counts, the SNAT port search, the dump, and a random run against a reference model.
 */
#include <errno.h>
#include <stddef.h>
#include <arpa/inet.h>

#include "t.h"
#include "ct6.h"
#include "pkt.h"

/* Addresses: fd00::<n> for guests, 2001:db8::<n> for the world, 2001:db8:ffff::1 the node. */
static const uint8_t node6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, [15] = 1 };

static void
addr6(uint8_t *a, uint16_t prefix0, uint16_t prefix1, uint32_t n)
{
	memset(a, 0, 16);
	a[0] = (uint8_t)(prefix0 >> 8);
	a[1] = (uint8_t)prefix0;
	a[2] = (uint8_t)(prefix1 >> 8);
	a[3] = (uint8_t)prefix1;
	a[12] = (uint8_t)(n >> 24);
	a[13] = (uint8_t)(n >> 16);
	a[14] = (uint8_t)(n >> 8);
	a[15] = (uint8_t)n;
}

/*
 * An egress flow of sandbox 'zone' from guest port gp to world host 'host' port rp, SNATed
 * to the node's port np: orig guest → host in the zone, reply host → node in zone 0.
 */
static void
egress_tuples(struct ct6_tuple *o, struct ct6_tuple *r, uint16_t zone, uint32_t host,
	      uint16_t gp, uint16_t rp, uint16_t np, uint8_t proto)
{
	uint8_t g[16], w[16];

	addr6(g, 0xfd00, 0, 2);
	addr6(w, 0x2001, 0x0db8, host);
	ct6_tuple_set(o, g, w, htons(gp), htons(rp), zone, proto);
	ct6_tuple_set(r, w, node6, htons(rp), htons(np), 0, proto);
}

static struct ct6_session *
egress(struct ct6_table *ct, uint16_t zone, uint32_t host, uint16_t gp, uint16_t np,
       uint8_t proto, uint8_t state, uint32_t now)
{
	struct ct6_tuple o, r;
	enum ct_refuse why;

	egress_tuples(&o, &r, zone, host, gp, 443, np, proto);
	return ct6_insert(ct, &o, &r, state, now, &why);
}

/*
 * A world client 'host' to the exposed port of sandbox 'zone' (or, from a sandbox zone 'from',
 * a hairpin): orig client → node, reply guest → client in the sandbox's zone.
 */
static struct ct6_session *
inbound(struct ct6_table *ct, uint16_t from, uint16_t zone, uint32_t host, uint16_t cp,
	uint8_t state, uint32_t now)
{
	struct ct6_tuple o, r;
	uint8_t g[16], w[16];
	enum ct_refuse why;

	addr6(g, 0xfd00, 0, 2);
	addr6(w, from ? 0xfd00 : 0x2001, from ? 0 : 0x0db8, host);
	ct6_tuple_set(&o, w, node6, htons(cp), htons(8080), from, IPPROTO_TCP_);
	ct6_tuple_set(&r, g, w, htons(80), htons(cp), zone, IPPROTO_TCP_);
	return ct6_insert(ct, &o, &r, state, now, &why);
}

static void
test_layout(void)
{
	CHECK_EQ(sizeof(struct ct6_session), 128);
	CHECK_EQ(offsetof(struct ct6_session, t[0]), 24);
	CHECK_EQ(offsetof(struct ct6_session, t[1]), 64);
	CHECK(offsetof(struct ct6_session, maxwin) < 64 && offsetof(struct ct6_session, end) < 64);
}

static void
test_lookup_clash(void)
{
	struct ct6_table *ct = ct6_create(64, 4, NULL);
	struct ct6_tuple o, r, x;
	struct ct6_session *s;
	enum ct_refuse why;
	int d = -1;

	CHECK(ct);
	egress_tuples(&o, &r, 1, 7, 40000, 443, 30000, IPPROTO_TCP_);
	s = ct6_insert(ct, &o, &r, CT_TCP_SYN_SENT, 100, &why);
	CHECK(s);
	CHECK_EQ(why, CT_OK);
	CHECK(ct6_lookup(ct, &o, &d) == s);
	CHECK_EQ(d, CT_DIR_ORIG);
	CHECK(ct6_lookup(ct, &r, &d) == s);
	CHECK_EQ(d, CT_DIR_REPLY);
	CHECK_EQ(s->cls, CT_C_TCP_SYN);
	CHECK_EQ(ct->class_count[CT_C_TCP_SYN], 1);
	/* The pad byte does not matter; every other byte does. */
	x = o;
	x.pad = 0x5a;
	CHECK(ct6_lookup(ct, &x, &d) == s);
	for (size_t i = 0; i < 32; i++) {
		x = o;
		((uint8_t *)&x)[i] ^= 1;
		CHECK(!ct6_lookup(ct, &x, &d));
	}
	x = o;
	x.zone = 2;
	CHECK(!ct6_lookup(ct, &x, &d));
	x = o;
	x.proto = IPPROTO_UDP_;
	CHECK(!ct6_lookup(ct, &x, &d));
	/* Clash: the same orig, the same reply, or a tuple that is its own reply. */
	x = r;
	x.sport = htons(444);
	CHECK(!ct6_insert(ct, &o, &x, CT_TCP_SYN_SENT, 100, &why));
	CHECK_EQ(why, CT_CLASH);
	x = o;
	x.sport = htons(40001);
	CHECK(!ct6_insert(ct, &x, &r, CT_TCP_SYN_SENT, 100, &why));
	CHECK_EQ(why, CT_CLASH);
	CHECK(!ct6_insert(ct, &x, &x, CT_TCP_SYN_SENT, 100, &why));
	CHECK_EQ(why, CT_CLASH);
	CHECK_EQ(ct->cnt.refused_clash, 3);
	CHECK_EQ(ct->used, 1);
	ct6_delete(ct, s);
	CHECK(!ct6_lookup(ct, &o, &d));
	CHECK(!ct6_lookup(ct, &r, &d));
	CHECK_EQ(ct->used, 0);
	CHECK_EQ(ct->class_count[CT_C_TCP_SYN], 0);
	ct6_destroy(ct);
}

static void
test_full(void)
{
	struct ct6_table *ct = ct6_create(8, 4, NULL);
	struct ct6_session *s;
	uint32_t i;

	CHECK(ct);
	for (i = 0; i < 8; i++)
		CHECK(egress(ct, 1, 1, (uint16_t)(1000 + i), (uint16_t)(30000 + i), IPPROTO_TCP_,
			     CT_TCP_ESTABLISHED, 100 + i));
	/* Full of established sessions: refused, nothing evicted. */
	CHECK(!egress(ct, 1, 1, 2000, 31000, IPPROTO_TCP_, CT_TCP_SYN_SENT, 120));
	CHECK_EQ(ct->cnt.refused_full, 1);
	CHECK_EQ(ct->cnt.evicted, 0);
	/* Two of them half-open again: the older one goes for a new flow. */
	{
		struct ct6_tuple o, r;
		int d;

		egress_tuples(&o, &r, 1, 1, 1003, 443, 30003, IPPROTO_TCP_);
		s = ct6_lookup(ct, &o, &d);
		CHECK(s);
		ct6_touch(ct, s, CT_TCP_SYN_SENT, 121);
		egress_tuples(&o, &r, 1, 1, 1005, 443, 30005, IPPROTO_TCP_);
		ct6_touch(ct, ct6_lookup(ct, &o, &d), CT_TCP_SYN_SENT, 122);
		CHECK(egress(ct, 1, 1, 2001, 31001, IPPROTO_TCP_, CT_TCP_SYN_SENT, 130));
		CHECK_EQ(ct->cnt.evicted, 1);
		egress_tuples(&o, &r, 1, 1, 1003, 443, 30003, IPPROTO_TCP_);
		CHECK(!ct6_lookup(ct, &o, &d));
		egress_tuples(&o, &r, 1, 1, 1005, 443, 30005, IPPROTO_TCP_);
		CHECK(ct6_lookup(ct, &o, &d));
	}
	/* An expired session is reused before anything is evicted. */
	CHECK(egress(ct, 1, 1, 2002, 31002, IPPROTO_TCP_, CT_TCP_SYN_SENT, 121 + 60 + 1));
	CHECK_EQ(ct->cnt.evicted, 1);
	CHECK_EQ(ct->cnt.expired, 1);
	CHECK_EQ(ct->used, 8);
	ct6_destroy(ct);
}

/* A protocol and state that put a new session in class c. */
static void
class_flow(enum ct_class c, uint8_t *proto, uint8_t *state)
{
	static const uint8_t tcp[] = {
		[CT_C_TCP_SYN] = CT_TCP_SYN_SENT, [CT_C_TCP_ESTABLISHED] = CT_TCP_ESTABLISHED,
		[CT_C_TCP_FIN_WAIT] = CT_TCP_FIN_WAIT, [CT_C_TCP_CLOSE_WAIT] = CT_TCP_CLOSE_WAIT,
		[CT_C_TCP_LAST_ACK] = CT_TCP_LAST_ACK, [CT_C_TCP_TIME_WAIT] = CT_TCP_TIME_WAIT,
		[CT_C_TCP_CLOSE] = CT_TCP_CLOSE,
	};

	if (c <= CT_C_TCP_CLOSE) {
		*proto = IPPROTO_TCP_;
		*state = tcp[c];
	} else if (c == CT_C_ICMP) {
		*proto = IPPROTO_ICMPV6_;
		*state = CT_UNREPLIED;
	} else {
		*proto = IPPROTO_UDP_;
		*state = c == CT_C_UDP_REPLIED ? CT_REPLIED : CT_UNREPLIED;
	}
}

static void
test_expiry(void)
{
	uint32_t to[CT_C_MAX], c, i;

	/* Each class alone: kept one second before its timeout, gone at it. */
	for (c = 0; c < CT_C_MAX; c++) {
		struct ct6_table *ct = ct6_create(16, 2, NULL);
		uint8_t proto, state;

		class_flow((enum ct_class)c, &proto, &state);
		CHECK(egress(ct, 1, 3, 1000, 30000, proto, state, 1000));
		CHECK_EQ(ct->class_count[c], 1);
		CHECK_EQ(ct6_expire(ct, 1000 + ct_default_timeouts[c] - 1, 16), 0);
		CHECK_EQ(ct6_expire(ct, 1000 + ct_default_timeouts[c], 16), 1);
		CHECK_EQ(ct->used, 0);
		ct6_destroy(ct);
	}
	/* Timeouts of our own; oldest first within the budget; a touch moves it back. */
	for (c = 0; c < CT_C_MAX; c++)
		to[c] = 100 + c;
	{
		struct ct6_table *ct = ct6_create(16, 2, to);
		struct ct6_session *s[4];

		for (i = 0; i < 4; i++)
			s[i] = egress(ct, 1, 3, (uint16_t)(1000 + i), (uint16_t)(30000 + i),
				      IPPROTO_UDP_, CT_UNREPLIED, 10 + i);
		/* UDP replied moves class (timeout 100 + 8). */
		ct6_touch(ct, s[0], CT_REPLIED, 20);
		CHECK_EQ(s[0]->cls, CT_C_UDP_REPLIED);
		CHECK_EQ(ct->class_count[CT_C_UDP_UNREPLIED], 3);
		CHECK_EQ(ct6_expire(ct, 10 + 107 + 3, 1), 1);
		CHECK(!(s[1]->flags & CT_F_USED));
		CHECK(s[2]->flags & CT_F_USED);
		CHECK_EQ(ct6_expire(ct, 10 + 107 + 3, 10), 2);
		CHECK_EQ(ct->used, 1);
		CHECK_EQ(ct6_expire(ct, 20 + 108 - 1, 10), 0);
		CHECK_EQ(ct6_expire(ct, 20 + 108, 10), 1);
		CHECK_EQ(ct->cnt.expired, 4);
		ct6_destroy(ct);
	}
}

static void
zone_counts(const struct ct6_table *ct, const uint32_t want[6][2])
{
	for (uint16_t z = 0; z < 6; z++) {
		CHECK_EQ(ct6_zone_opened(ct, z), want[z][0]);
		CHECK_EQ(ct6_zone_inbound(ct, z), want[z][1]);
	}
}

static void
test_zones(void)
{
	struct ct6_table *ct = ct6_create(64, 4, NULL);
	struct ct6_session *s;
	uint8_t w[16];

	CHECK(ct);
	/* Zone 1 opens two egress flows to host 9, one of them closed. */
	CHECK(egress(ct, 1, 9, 1000, 30000, IPPROTO_TCP_, CT_TCP_ESTABLISHED, 10));
	s = egress(ct, 1, 9, 1001, 30001, IPPROTO_TCP_, CT_TCP_ESTABLISHED, 10);
	CHECK(egress(ct, 1, 10, 1002, 30002, IPPROTO_UDP_, CT_UNREPLIED, 10));
	addr6(w, 0x2001, 0x0db8, 9);
	CHECK_EQ(ct6_zone_opened(ct, 1), 3);
	CHECK_EQ(ct6_ep_count(ct, 1, 0, w, htons(443), IPPROTO_TCP_), 2);
	ct6_touch(ct, s, CT_TCP_TIME_WAIT, 11);
	CHECK_EQ(ct6_zone_opened(ct, 1), 2);
	CHECK_EQ(ct6_ep_count(ct, 1, 0, w, htons(443), IPPROTO_TCP_), 1);
	/* The world to zone 2's exposed port; zone 1 to it (hairpin); zone 3 to itself. */
	CHECK(inbound(ct, 0, 2, 20, 5000, CT_TCP_SYN_SENT, 12));
	CHECK(inbound(ct, 1, 2, 3, 5001, CT_TCP_SYN_SENT, 12));
	CHECK(inbound(ct, 3, 3, 4, 5002, CT_TCP_SYN_SENT, 12));
	/* Opened and inbound of zones 0 to 5 (none is beyond the table's four). */
	zone_counts(ct, (const uint32_t[][2]){ { 0, 0 }, { 3, 0 }, { 0, 2 }, { 1, 0 },
					       { 0, 0 }, { 0, 0 } });
	/* Flushing zone 2 takes both flows towards it, the hairpin one out of zone 1's too. */
	CHECK_EQ(ct6_flush_zone(ct, 2), 2);
	CHECK_EQ(ct->used, 4);
	CHECK_EQ(ct6_flush_zone(ct, 3), 1);
	zone_counts(ct, (const uint32_t[][2]){ { 0, 0 }, { 2, 0 }, { 0, 0 }, { 0, 0 },
					       { 0, 0 }, { 0, 0 } });
	/* Zone 1's three egress flows, the closed one included; nothing else. */
	CHECK_EQ(ct6_flush_zone(ct, 1), 3);
	CHECK_EQ(ct6_flush_zone(ct, 1), 0);
	CHECK_EQ(ct6_flush_zone(ct, 0), 0);
	CHECK_EQ(ct->used, 0);
	CHECK_EQ(ct6_zone_opened(ct, 1), 0);
	CHECK_EQ(ct6_ep_count(ct, 1, 0, w, htons(443), IPPROTO_TCP_), 0);
	CHECK_EQ(ct->cnt.flushed, 6);
	ct6_destroy(ct);
}

static void
test_snat(void)
{
	struct ct6_table *ct = ct6_create(64, 4, NULL);
	struct ct6_snat_req rq = { .lo = 30000, .hi = 30009, .zone = 1, .probes = 64, .now = 50 };
	struct ct6_tuple o, rt, tmpl;
	struct ct6_session *closed, *s;
	uint32_t i;

	CHECK(ct);
	egress_tuples(&o, &tmpl, 1, 5, 1000, 443, 0, IPPROTO_TCP_);
	/* Empty: the start position. */
	rt = tmpl;
	rq.start = 3;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, &closed), 0);
	CHECK_EQ(ntohs(rt.dport), 30003);
	/* Taken ports are skipped; the search wraps past hi to lo. */
	CHECK(egress(ct, 1, 5, 1000, 30009, IPPROTO_TCP_, CT_TCP_ESTABLISHED, 10));
	CHECK(egress(ct, 2, 5, 1000, 30000, IPPROTO_TCP_, CT_TCP_ESTABLISHED, 10));
	rt = tmpl;
	rq.start = 9;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, &closed), 0);
	CHECK_EQ(ntohs(rt.dport), 30001);
	/* Another endpoint: its ports are its own (endpoint-dependent). */
	egress_tuples(&o, &rt, 1, 6, 1000, 443, 0, IPPROTO_TCP_);
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, &closed), 0);
	CHECK_EQ(ntohs(rt.dport), 30009);
	/* Every port of the range held: exhausted, no closed one to take over. */
	for (i = 1; i < 9; i++)
		CHECK(egress(ct, 1, 5, (uint16_t)(1000 + i), (uint16_t)(30000 + i), IPPROTO_TCP_,
			     CT_TCP_ESTABLISHED, 10 + i));
	rt = tmpl;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, &closed), -EADDRINUSE);
	CHECK(!closed);
	/* Closed ones: zone 1's own first, then the idlest. */
	egress_tuples(&o, &rt, 1, 5, 1004, 443, 30004, IPPROTO_TCP_);
	{
		int d;

		s = ct6_lookup(ct, &o, &d);
		ct6_touch(ct, s, CT_TCP_TIME_WAIT, 40);
		egress_tuples(&o, &rt, 1, 5, 1006, 443, 30006, IPPROTO_TCP_);
		ct6_touch(ct, ct6_lookup(ct, &o, &d), CT_TCP_TIME_WAIT, 30);
		egress_tuples(&o, &rt, 2, 5, 1000, 443, 30000, IPPROTO_TCP_);
		ct6_touch(ct, ct6_lookup(ct, &o, &d), CT_TCP_CLOSE, 5);
	}
	rt = tmpl;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, &closed), -EADDRINUSE);
	CHECK(closed && ntohs(closed->t[1].dport) == 30006);
	rq.zone = 2;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, &closed), -EADDRINUSE);
	CHECK(closed && ntohs(closed->t[1].dport) == 30000);
	/* Fewer probes than ports: only those are tried. */
	ct6_delete(ct, s);
	rq.start = 0;
	rq.probes = 4;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, NULL), -EADDRINUSE);
	rq.probes = 5;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, NULL), 0);
	CHECK_EQ(ntohs(rt.dport), 30004);
	/* ICMPv6: the id is both ports. */
	egress_tuples(&o, &rt, 1, 5, 0, 0, 0, IPPROTO_ICMPV6_);
	rq.probes = 64;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, NULL), 0);
	CHECK_EQ(rt.sport, rt.dport);
	CHECK_EQ(ntohs(rt.dport), 30000);
	rq.lo = 2;
	rq.hi = 1;
	CHECK_EQ(ct6_snat_port(ct, &rt, &rq, NULL), -EINVAL);
	ct6_destroy(ct);
}

static void
test_dump(void)
{
	struct ct6_table *ct = ct6_create(64, 4, NULL);
	struct ct6_dump_entry out[64];
	struct ct_dump_req q;
	uint32_t i, total = 0, calls = 0;

	CHECK(ct);
	for (i = 0; i < 20; i++)
		CHECK(egress(ct, (uint16_t)(1 + i % 2), 5, (uint16_t)(1000 + i),
			     (uint16_t)(30000 + i), i % 4 ? IPPROTO_TCP_ : IPPROTO_UDP_,
			     i % 4 ? CT_TCP_SYN_SENT : CT_UNREPLIED, 10));
	memset(&q, 0, sizeof(q));
	q.max = 64;
	q.budget = 1000;
	ct6_dump(ct, 20, &q, out);
	CHECK_EQ(q.n, 20);
	CHECK_EQ(q.cursor, CT_NIL);
	CHECK_EQ(out[1].idle, 10);
	CHECK_EQ(out[1].expires, 50);
	CHECK_EQ(out[1].state, CT_TCP_SYN_SENT);
	CHECK_EQ(ntohs(out[1].t[1].dport), 30001);
	q.cursor = 0;
	q.zone = 2;
	q.proto = IPPROTO_TCP_;
	ct6_dump(ct, 20, &q, out);
	CHECK_EQ(q.n, 10);
	/* Pages of 3 entries, 4 slots looked at per call: every session once. */
	memset(&q, 0, sizeof(q));
	q.max = 3;
	q.budget = 4;
	do {
		ct6_dump(ct, 20, &q, out);
		total += q.n;
		calls++;
	} while (q.cursor != CT_NIL && calls < 100);
	CHECK_EQ(total, 20);
	ct6_destroy(ct);
}

/*
 * The reference model: what the table should hold, by session index (a new session takes the
 * slot the last removed one left, so an eviction's victim is the slot the new session got).
 */
#define M_ZONES		4
#define M_CAP_MAX	4096

struct m_ent {
	struct ct6_tuple o, r;
	uint32_t last_seen;
	uint8_t state;
	bool used;
};

static struct m_ent m_tab[M_CAP_MAX];
static uint32_t m_n, m_seed = 12345;

static uint32_t
m_rand(void)
{
	m_seed = m_seed * 1103515245u + 12345u;
	return m_seed >> 8;
}

/* Small pools of every field, so tuples repeat and inserts clash often. */
static void
m_tuple(struct ct6_tuple *t)
{
	static const uint8_t protos[] = { IPPROTO_TCP_, IPPROTO_UDP_, IPPROTO_ICMPV6_ };
	uint8_t a[16], b[16];

	addr6(a, 0xfd00, (uint16_t)(m_rand() % 2), m_rand() % 4);
	addr6(b, 0x2001, 0x0db8, m_rand() % 4);
	ct6_tuple_set(t, a, b, (uint16_t)(m_rand() % 8), (uint16_t)(m_rand() % 8),
		      (uint16_t)(m_rand() % (M_ZONES + 2)), protos[m_rand() % 3]);
	t->pad = (uint8_t)m_rand();
}

static uint8_t
m_state(uint8_t proto)
{
	if (proto == IPPROTO_TCP_)
		return (uint8_t)(m_rand() % CT_TCP_MAX);
	return proto == IPPROTO_UDP_ ? (uint8_t)(m_rand() % 2) : CT_UNREPLIED;
}

static enum ct_class
m_class(const struct m_ent *e)
{
	return ct_class_of(e->o.proto, e->state);
}

/* A model entry holding tuple t in either direction. */
static bool
m_has(const struct ct6_tuple *t)
{
	for (uint32_t i = 0; i < M_CAP_MAX; i++)
		if (m_tab[i].used && (ct6_tuple_eq(&m_tab[i].o, t) || ct6_tuple_eq(&m_tab[i].r, t)))
			return true;
	return false;
}

static bool
m_gone(struct ct6_table *ct, uint32_t i)
{
	return !(ct->s[i].flags & CT_F_USED) || !ct6_tuple_eq(&ct->s[i].t[0], &m_tab[i].o);
}

static void
m_insert(struct ct6_table *ct, uint32_t now)
{
	struct m_ent e = { .last_seen = now, .used = true };
	struct ct6_session *s;
	enum ct_refuse why;
	bool clash;
	uint32_t i;

	m_tuple(&e.o);
	m_tuple(&e.r);
	e.r.proto = e.o.proto;
	e.state = m_state(e.o.proto);
	clash = m_has(&e.o) || m_has(&e.r) || ct6_tuple_eq(&e.o, &e.r);
	s = ct6_insert(ct, &e.o, &e.r, e.state, now, &why);
	if (clash || !s) {
		CHECK(!s);
		CHECK_EQ(why, clash ? CT_CLASH : CT_FULL);
		/* Full only when nothing could be evicted: every session established. */
		for (i = 0; !clash && i < ct->capacity; i++)
			CHECK(!m_tab[i].used || ct_class_established(m_class(&m_tab[i])));
		return;
	}
	i = ct6_index(ct, s);
	if (m_tab[i].used) {
		/* The victim of a full table: expired, or not established. */
		CHECK(now - m_tab[i].last_seen >= ct->timeout[m_class(&m_tab[i])] ||
		      !ct_class_established(m_class(&m_tab[i])));
		m_n--;
	}
	m_tab[i] = e;
	m_n++;
}

/* A used entry, from a random place on; capacity when none. */
static uint32_t
m_pick(const struct ct6_table *ct)
{
	uint32_t start = m_rand() % ct->capacity, i;

	for (i = 0; i < ct->capacity; i++)
		if (m_tab[(start + i) % ct->capacity].used)
			return (start + i) % ct->capacity;
	return ct->capacity;
}

static void
m_expire(struct ct6_table *ct, uint32_t now)
{
	uint32_t budget = m_rand() % 2 ? UINT32_MAX : 1 + m_rand() % 20, n, gone = 0, i;

	n = ct6_expire(ct, now, budget);
	CHECK(n <= budget);
	for (i = 0; i < ct->capacity; i++) {
		struct m_ent *e = &m_tab[i];
		enum ct_class c = m_class(e);

		if (!e->used)
			continue;
		if (m_gone(ct, i)) {
			CHECK(now - e->last_seen >= ct->timeout[c]);
			e->used = false;
			gone++;
			m_n--;
		} else if (budget == UINT32_MAX) {
			/* Lists are in 'queued' order: at most a grain late. */
			CHECK(now - e->last_seen < ct->timeout[c] + ct->grain[c]);
		}
	}
	CHECK_EQ(gone, n);
}

static void
m_flush(struct ct6_table *ct)
{
	uint16_t z = (uint16_t)(m_rand() % (M_ZONES + 2));
	uint32_t want = 0, i;

	for (i = 0; i < ct->capacity; i++) {
		struct m_ent *e = &m_tab[i];

		if (e->used && z && z <= M_ZONES && (e->o.zone == z || e->r.zone == z)) {
			e->used = false;
			want++;
			m_n--;
		}
	}
	CHECK_EQ(ct6_flush_zone(ct, z), want);
}

static void
m_verify(struct ct6_table *ct)
{
	uint32_t cls[CT_C_MAX] = { 0 }, opened[M_ZONES + 2] = { 0 }, in[M_ZONES + 2] = { 0 };
	uint32_t i, z, *ep = malloc(CT_EP_BUCKETS * sizeof(*ep)), bad = 0;
	struct ct6_tuple t;
	int d;

	CHECK_EQ(ct->used, m_n);
	for (i = 0; i < ct->capacity; i++) {
		const struct m_ent *e = &m_tab[i];

		if (!e->used)
			continue;
		CHECK(ct6_lookup(ct, &e->o, &d) == &ct->s[i] && d == CT_DIR_ORIG);
		CHECK(ct6_lookup(ct, &e->r, &d) == &ct->s[i] && d == CT_DIR_REPLY);
		CHECK_EQ(ct->s[i].cls, m_class(e));
		cls[m_class(e)]++;
		if (!ct_class_live(m_class(e)))
			continue;
		if (e->o.zone <= M_ZONES)
			opened[e->o.zone]++;
		if (e->r.zone <= M_ZONES && e->r.zone != e->o.zone)
			in[e->r.zone]++;
	}
	for (i = 0; i < CT_C_MAX; i++)
		CHECK_EQ(ct->class_count[i], cls[i]);
	for (z = 1; z <= M_ZONES + 1; z++) {
		CHECK_EQ(ct6_zone_opened(ct, (uint16_t)z), z <= M_ZONES ? opened[z] : 0);
		CHECK_EQ(ct6_zone_inbound(ct, (uint16_t)z), z <= M_ZONES ? in[z] : 0);
	}
	/* The endpoint counts kept by every change against a recount. */
	CHECK(ep);
	if (ep) {
		memcpy(ep, ct->ep_cnt, CT_EP_BUCKETS * sizeof(*ep));
		ct6_recount_zones(ct);
		for (i = 0; i < CT_EP_BUCKETS; i++)
			bad += ep[i] != ct->ep_cnt[i];
		CHECK_EQ(bad, 0);
		free(ep);
	}
	for (i = 0; i < 32; i++) {
		m_tuple(&t);
		if (!m_has(&t))
			CHECK(!ct6_lookup(ct, &t, &d));
	}
}

/*
 * Random inserts, deletes, touches, expiry and flushes against the model; the clock moves by
 * up to 'tick' - 1 seconds before each expiry.
 */
static void
m_run(uint32_t capacity, uint32_t ops, uint32_t tick)
{
	struct ct6_table *ct = ct6_create(capacity, M_ZONES, NULL);
	uint32_t now = 1000, op, i, j, k;

	CHECK(ct);
	memset(m_tab, 0, sizeof(m_tab));
	m_n = 0;
	for (op = 0; op < ops; op++) {
		uint32_t r = m_rand() % 100;

		if (r < 50) {
			m_insert(ct, now);
		} else if (r < 65 && (k = m_pick(ct)) < capacity) {
			ct6_delete(ct, &ct->s[k]);
			m_tab[k].used = false;
			m_n--;
		} else if (r < 85 && (k = m_pick(ct)) < capacity) {
			now += m_rand() % 16 == 0;
			m_tab[k].state = m_state(m_tab[k].o.proto);
			m_tab[k].last_seen = now;
			ct6_touch(ct, &ct->s[k], m_tab[k].state, now);
		} else if (r < 99) {
			now += m_rand() % tick;
			m_expire(ct, now);
		} else if (m_rand() % 16 == 0) {
			/* Rare: a flush takes a third of the table. */
			m_flush(ct);
		}
		if (op % 64 == 0)
			m_verify(ct);
	}
	m_verify(ct);
	/* Everything gone: every index slot and overflow count back to 0. */
	ct6_expire(ct, now + 1000000, UINT32_MAX);
	CHECK_EQ(ct->used, 0);
	for (i = 0, k = 0; i < ct->nlines; i++)
		for (j = 0; j <= CT_LINE_SLOTS; j++)
			k += ct->lines[i].w[j] != 0;
	CHECK_EQ(k, 0);
	ct6_destroy(ct);
}

static void
test_model(void)
{
	/* Room to spare: clashes, expiry, flushes; then a small table, full most of the time. */
	m_run(M_CAP_MAX, 20000, 1);
	m_run(48, 20000, 10);
}

int
main(void)
{
	test_layout();
	test_lookup_clash();
	test_full();
	test_expiry();
	test_zones();
	test_snat();
	test_dump();
	test_model();
	return t_done("test_ct6");
}
