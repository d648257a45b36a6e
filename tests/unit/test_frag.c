/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shallow virtual reassembly (frag.h) on real IPv4 fragments: UDP datagrams split by
 * mtu_fragment(), or fragments built here at any offset. Each fragment must come out exactly
 * once, byte for byte, with its datagram's translation, whatever the order; what cannot be
 * completed is dropped and counted; one zone's flood never stops another zone's datagrams.
 * Hand-over, flush and random windows: test_frag_random.c.
 */
#include "frag_bed.h"

static void
test_in_order(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	struct frag_xlat x = xl_of(1), got;
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t n = split(ip4("10.1.0.2"), 7, 4000, 1500), i;

	CHECK_EQ(n, 3);
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 10, &x, &v, &why), 0);
	CHECK_EQ(v, FRAG_FORWARD);
	CHECK_EQ(frag_in_use(t), 1);
	for (i = 1; i < n; i++) {
		CHECK_EQ(other(t, bufs[i], lens[i], 1, 10, &got, &why), FRAG_FORWARD);
		CHECK(xl_eq(&got, &x));
	}
	CHECK_EQ(frag_in_use(t), 0);
	CHECK_EQ(frag_stats(t)->completed, 1);
	CHECK_EQ(frag_stats(t)->forwarded, 2);
	CHECK_EQ(frag_stats(t)->contexts, 1);
	/* A late repeat finds no context: held, then dropped at the timeout. */
	OTHER(t, bufs[1], lens[1], 1, 11, FRAG_HELD, 0);
	CHECK_EQ(frag_expire(t, 14, 8), 1);
	CHECK_EQ(drops(t, FRAG_R_EXPIRED), 1);
	CHECK_EQ(frag_in_use(t) + frag_held_in_use(t), 0);
	/* Another zone is another datagram, even with the same addresses and id. */
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 20, &x, &v, &why), 0);
	OTHER(t, bufs[1], lens[1], 2, 20, FRAG_HELD, 0);
	OTHER(t, bufs[1], lens[1], CVS_ZONE_HOST, 20, FRAG_HELD, 0);
	CHECK_EQ(frag_in_use(t), 3);
	frag_destroy(t);
}

static void
test_reversed(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	struct frag_xlat x = xl_of(2);
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t n = split(ip4("10.1.0.3"), 8, 9000, 1280), i, order[NOUT];

	CHECK_EQ(n, 8);
	for (i = n - 1; i >= 1; i--) {
		OTHER(t, bufs[i], lens[i], 3, 5, FRAG_HELD, 0);
		order[n - 1 - i] = i;
	}
	CHECK_EQ(frag_held_in_use(t), n - 1);
	CHECK_EQ(first(t, bufs[0], lens[0], 3, 6, &x, &v, &why), n - 1);
	CHECK_EQ(v, FRAG_FORWARD);
	/* Complete at its first: forgotten at once, the copies still to take. */
	CHECK_EQ(frag_in_use(t), 0);
	take_expect(t, order, n - 1, &x);
	CHECK_EQ(frag_held_in_use(t), 0);
	CHECK_EQ(frag_stats(t)->released, n - 1);
	CHECK_EQ(frag_stats(t)->held, n - 1);
	frag_destroy(t);
}

/* Every fragment of one datagram, in the order 'perm', each out exactly once. */
static void
run_order(struct frag_table *t, uint32_t n, const uint32_t *perm, uint32_t id)
{
	struct frag_xlat x = xl_of(id), got;
	uint32_t i, order[NOUT], nheld = 0;
	enum frag_verdict v;
	enum frag_reason why;

	for (i = 0; i < n; i++) {
		uint32_t j = perm[i];

		if (j == 0) {
			CHECK_EQ(first(t, bufs[0], lens[0], 4, 1, &x, &v, &why), nheld);
			CHECK_EQ(v, FRAG_FORWARD);
			take_expect(t, order, nheld, &x);
			nheld = n;	/* none held from now on */
		} else if (nheld < n) {
			OTHER(t, bufs[j], lens[j], 4, 1, FRAG_HELD, 0);
			order[nheld++] = j;
		} else {
			CHECK_EQ(other(t, bufs[j], lens[j], 4, 1, &got, &why), FRAG_FORWARD);
			CHECK(xl_eq(&got, &x));
		}
	}
	CHECK_EQ(frag_in_use(t), 0);
	CHECK_EQ(frag_held_in_use(t), 0);
}

static void
test_permutations(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	uint32_t n = split(ip4("10.1.0.4"), 9, 20000, 576), perm[NOUT], i, k;

	CHECK_EQ(n, 37);
	for (k = 0; k < 300; k++) {
		for (i = 0; i < n; i++)
			perm[i] = i;
		shuffle(perm, n);
		run_order(t, n, perm, k);
	}
	for (i = 0; i < FRAG_R_MAX; i++)
		CHECK_EQ(drops(t, i), 0);
	CHECK_EQ(frag_stats(t)->completed, 300);
	frag_destroy(t);
}

static void
test_overlap(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	struct frag_xlat x = xl_of(3), got;
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("10.1.0.5"), n = split(s, 10, 4000, 1500), l;
	uint8_t f[ROOM];

	/* Before the first: a repeat, then one that overlaps, neither held. */
	OTHER(t, bufs[1], lens[1], 1, 1, FRAG_HELD, 0);
	OTHER(t, bufs[1], lens[1], 1, 1, FRAG_DROP, FRAG_R_DUPLICATE);
	l = mkfrag(f, s, 10, 1488, 64, true);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_OVERLAP);
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 1, &x, &v, &why), 1);
	take_expect(t, (uint32_t[]){ 1 }, 1, &x);
	/* After it: a repeat, one over the first's bytes, a second first: the datagram lives. */
	OTHER(t, bufs[1], lens[1], 1, 1, FRAG_DROP, FRAG_R_DUPLICATE);
	l = mkfrag(f, s, 10, 8, 64, true);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_OVERLAP);
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 1, &x, &v, &why), 0);
	CHECK_EQ(v, FRAG_DROP);
	CHECK_EQ(why, FRAG_R_BAD_FIRST);
	CHECK_EQ(other(t, bufs[2], lens[2], 1, 1, &got, &why), FRAG_FORWARD);
	CHECK(xl_eq(&got, &x));
	CHECK_EQ(frag_in_use(t), 0);
	CHECK_EQ(n, 3);

	/* Data past the end the last fragment set, another end: dropped, the datagram lives. */
	l = mkfrag(f, s, 13, 0, 1480, true);
	CHECK_EQ(first(t, f, l, 1, 1, &x, &v, &why), 0);
	l = mkfrag(f, s, 13, 2960, 1048, false);
	OTHER(t, f, l, 1, 1, FRAG_FORWARD, 0);
	l = mkfrag(f, s, 13, 4008, 16, true);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_BAD_LENGTH);
	l = mkfrag(f, s, 13, 4008, 8, false);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_BAD_LENGTH);
	l = mkfrag(f, s, 13, 1480, 1480, true);
	OTHER(t, f, l, 1, 1, FRAG_FORWARD, 0);
	CHECK_EQ(frag_in_use(t), 0);

	/* A last fragment ending before data seen; MF data not a multiple of 8; no data. */
	l = mkfrag(f, s, 11, 800, 80, true);
	OTHER(t, f, l, 1, 1, FRAG_HELD, 0);
	l = mkfrag(f, s, 11, 400, 80, false);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_BAD_LENGTH);
	l = mkfrag(f, s, 11, 1600, 81, true);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_BAD_LENGTH);
	l = mkfrag(f, s, 11, 1600, 0, false);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_BAD_LENGTH);
	/* A first that overlaps a held fragment: refused, and the datagram with it. */
	l = mkfrag(f, s, 11, 0, 808, true);
	CHECK_EQ(first(t, f, l, 1, 1, &x, &v, &why), 0);
	CHECK_EQ(v, FRAG_DROP);
	CHECK_EQ(why, FRAG_R_OVERLAP);
	CHECK_EQ(drops(t, FRAG_R_FORGOTTEN), 1);
	CHECK_EQ(frag_held_in_use(t), 0);
	l = mkfrag(f, s, 11, 880, 80, false);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_BAD_FIRST);
	l = mkfrag(f, s, 11, 0, 800, true);
	CHECK_EQ(first(t, f, l, 1, 1, &x, &v, &why), 0);
	CHECK_EQ(why, FRAG_R_BAD_FIRST);
	/* An offset of 0 is frag_first()'s; a "first" with MF clear is no fragment. */
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_BAD_FIRST);
	l = mkfrag(f, s, 12, 0, 800, false);
	CHECK_EQ(first(t, f, l, 1, 1, &x, &v, &why), 0);
	CHECK_EQ(why, FRAG_R_BAD_LENGTH);
	frag_destroy(t);
}

static void
test_too_many(void)
{
	struct frag_cfg cfg = { .max_frags = 4 };
	struct frag_table *t = frag_create(&cfg, 16);
	struct frag_xlat x = xl_of(4);
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("10.1.0.6"), k, l;
	uint8_t f[ROOM];

	/* Six fragments of 8 bytes before their first: the fourth is one too many. */
	for (k = 1; k <= 3; k++) {
		l = mkfrag(f, s, 20, 8 * k, 8, true);
		OTHER(t, f, l, 1, 1, FRAG_HELD, 0);
	}
	l = mkfrag(f, s, 20, 32, 8, true);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_TOO_MANY);
	CHECK_EQ(drops(t, FRAG_R_FORGOTTEN), 3);
	l = mkfrag(f, s, 20, 40, 8, false);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_TOO_MANY);
	l = mkfrag(f, s, 20, 0, 8, true);
	CHECK_EQ(first(t, f, l, 1, 1, &x, &v, &why), 0);
	CHECK_EQ(why, FRAG_R_TOO_MANY);
	CHECK_EQ(frag_held_in_use(t), 0);
	/* In order, the same: four pass, the fifth and sixth do not. */
	l = mkfrag(f, s, 21, 0, 8, true);
	CHECK_EQ(first(t, f, l, 1, 1, &x, &v, &why), 0);
	for (k = 1; k <= 5; k++) {
		l = mkfrag(f, s, 21, 8 * k, 8, k < 5);
		OTHER(t, f, l, 1, 1, k < 4 ? FRAG_FORWARD : FRAG_DROP, FRAG_R_TOO_MANY);
	}
	/* Exactly max_frags, three of them ahead of their first: complete. */
	for (k = 3; k >= 1; k--) {
		l = mkfrag(f, s, 22, 8 * k, 8, k < 3);
		OTHER(t, f, l, 1, 1, FRAG_HELD, 0);
	}
	l = mkfrag(f, s, 22, 0, 8, true);
	CHECK_EQ(first(t, f, l, 1, 1, &x, &v, &why), 3);
	CHECK_EQ(v, FRAG_FORWARD);
	frag_destroy(t);
	cfg.max_frags = 1;
	CHECK(frag_create(&cfg, 16) == NULL);
	cfg.max_frags = FRAG_MAX_FRAGS_LIMIT + 1;
	CHECK(frag_create(&cfg, 16) == NULL);
}

static void
test_too_long(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	struct frag_xlat x = xl_of(5);
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("10.1.0.7"), l, n, i, order[NOUT];
	uint8_t f[ROOM];

	l = mkfrag(f, s, 30, 65528, 8, false);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_TOO_LONG);
	l = mkfrag(f, s, 30, 65512, 8, false);
	OTHER(t, f, l, 1, 1, FRAG_DROP, FRAG_R_TOO_LONG);
	/* 20 + 65,512 + 3 = 65,535: the largest datagram there is. */
	l = mkfrag(f, s, 30, 65512, 3, false);
	OTHER(t, f, l, 1, 1, FRAG_HELD, 0);
	/* A whole 65,535-byte datagram at MTU 1500: 45 fragments, reversed. */
	n = split(s, 31, 65535 - 28, 1500);
	CHECK_EQ(n, 45);
	for (i = n - 1; i >= 1; i--) {
		OTHER(t, bufs[i], lens[i], 1, 1, FRAG_HELD, 0);
		order[n - 1 - i] = i;
	}
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 1, &x, &v, &why), 44);
	take_expect(t, order, 44, &x);
	CHECK_EQ(frag_in_use(t), 1);
	frag_destroy(t);
}

static void
test_expiry(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	struct frag_xlat x = xl_of(6);
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("10.1.0.8"), n = split(s, 40, 9000, 1500), i;

	for (i = 1; i <= 3; i++)
		OTHER(t, bufs[i], lens[i], 1, 100, FRAG_HELD, 0);
	split(s, 41, 9000, 1500);
	for (i = 1; i <= 2; i++)
		OTHER(t, bufs[i], lens[i], 1, 101, FRAG_HELD, 0);
	split(s, 42, 9000, 1500);
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 101, &x, &v, &why), 0);
	CHECK_EQ(frag_in_use(t), 3);
	/* Lives at least the timeout (2 s) after its last fragment. */
	CHECK_EQ(frag_expire(t, 102, 100), 0);
	CHECK_EQ(frag_expire(t, 103, 1), 1);
	CHECK_EQ(drops(t, FRAG_R_EXPIRED), 3);
	CHECK_EQ(frag_expire(t, 103, 100), 0);
	CHECK_EQ(frag_expire(t, 104, 100), 2);
	CHECK_EQ(drops(t, FRAG_R_EXPIRED), 5);
	CHECK_EQ(frag_stats(t)->expired, 3);
	CHECK_EQ(frag_in_use(t) + frag_held_in_use(t), 0);
	/* One not collected yet counts as gone when its datagram shows again. */
	OTHER(t, bufs[3], lens[3], 1, 200, FRAG_HELD, 0);
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 203, &x, &v, &why), 0);
	CHECK_EQ(v, FRAG_FORWARD);
	CHECK_EQ(drops(t, FRAG_R_EXPIRED), 6);
	CHECK_EQ(frag_in_use(t), 1);
	CHECK_EQ(n, 7);
	frag_destroy(t);
}

static void
test_refuse(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	struct frag_xlat x = xl_of(7);
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("10.1.0.9"), i;
	struct frag_key k;

	split(s, 50, 9000, 1500);
	k = key_of(bufs[0], 2);
	OTHER(t, bufs[3], lens[3], 2, 10, FRAG_HELD, 0);
	OTHER(t, bufs[1], lens[1], 2, 10, FRAG_HELD, 0);
	frag_refuse(t, &k, 10);
	CHECK_EQ(drops(t, FRAG_R_FORGOTTEN), 2);
	CHECK_EQ(frag_held_in_use(t), 0);
	/* Refused while its fragments keep coming, each within the timeout of the one before. */
	for (i = 2; i < 7; i++)
		OTHER(t, bufs[i], lens[i], 2, 10 + 2 * (i - 1), FRAG_DROP, FRAG_R_BAD_FIRST);
	CHECK_EQ(first(t, bufs[0], lens[0], 2, 22, &x, &v, &why), 0);
	CHECK_EQ(why, FRAG_R_BAD_FIRST);
	CHECK_EQ(frag_expire(t, 24, 10), 0);
	CHECK_EQ(frag_expire(t, 25, 10), 1);
	OTHER(t, bufs[1], lens[1], 2, 25, FRAG_HELD, 0);
	/* Refused before any fragment came: the later ones are not held either. */
	split(s, 51, 9000, 1500);
	k = key_of(bufs[0], 2);
	frag_refuse(t, &k, 30);
	OTHER(t, bufs[2], lens[2], 2, 30, FRAG_DROP, FRAG_R_BAD_FIRST);
	CHECK_EQ(frag_in_use(t), 2);
	frag_destroy(t);
}

struct zstat {
	uint32_t sent;
	uint32_t drops;
};

/* One datagram of zone 7, in order or reversed: every fragment must come out. */
static void
zone7_datagram(struct frag_table *t, uint32_t id, uint32_t now, bool reversed,
	       struct zstat *z)
{
	struct frag_xlat x = xl_of(id), got;
	uint32_t n = split(ip4("10.7.0.2"), (uint16_t)id, 4000 + id % 1000, 1500), i, out = 0;
	enum frag_verdict v;
	enum frag_reason why;
	uint8_t *f;
	uint32_t l;

	for (i = 0; i < n; i++) {
		uint32_t j = reversed ? (i + 1) % n : i;

		z->sent++;
		if (j == 0) {
			out += first(t, bufs[0], lens[0], 7, now, &x, &v, &why) + 1;
			z->drops += v == FRAG_DROP;
			while (frag_take(t, &f, &l, &got))
				CHECK(xl_eq(&got, &x));
			continue;
		}
		v = other(t, bufs[j], lens[j], 7, now, &got, &why);
		z->drops += v == FRAG_DROP;
		out += v == FRAG_FORWARD;
	}
	CHECK_EQ(out, n);
}

/* Zones 5 and 6 send fragments whose first never comes; zone 7's datagrams all pass. */
static void
test_zone_share(void)
{
	struct frag_cfg cfg = { .contexts = 512, .held = 1024 };
	struct frag_table *t = frag_create(&cfg, 16);
	struct zstat z7 = { 0 };
	uint32_t it, now = 1000, max5 = 0, held = 0, k;
	uint8_t f[ROOM];

	CHECK_EQ(frag_config(t)->zone_share, 64);
	CHECK_EQ(frag_config(t)->held_share, 128);
	for (it = 0; it < 40000; it++) {
		uint16_t zone = it & 1 ? 5 : 6;

		if (it % 400 == 0)
			now++;
		frag_expire(t, now, 64);
		for (k = 1; k <= 3; k++) {
			uint32_t l = mkfrag(f, ip4("10.5.0.2"), (uint16_t)it, 1480 * k, 1480, true);
			struct frag_xlat x;
			enum frag_reason why;

			held += other(t, f, l, zone, now, &x, &why) == FRAG_HELD;
		}
		if (frag_zone_in_use(t, 5) > max5)
			max5 = frag_zone_in_use(t, 5);
		if (it % 7 == 0)
			zone7_datagram(t, it, now, it % 2, &z7);
	}
	CHECK_EQ(z7.drops, 0);
	CHECK(z7.sent > 10000);
	CHECK_EQ(max5, 64);
	CHECK(held > 0);
	CHECK(drops(t, FRAG_R_ZONE_SHARE) + drops(t, FRAG_R_HOLD_SHARE) > 10000);
	CHECK_EQ(drops(t, FRAG_R_NO_CONTEXT) + drops(t, FRAG_R_NO_HOLD), 0);
	CHECK(drops(t, FRAG_R_EXPIRED) > 0);
	frag_destroy(t);
}

static void
test_table_full(void)
{
	struct frag_cfg cfg = { .contexts = 32, .zone_share = 32 };
	struct frag_table *t = frag_create(&cfg, 16);
	struct frag_xlat x = xl_of(8);
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("10.1.0.10"), id;

	for (id = 0; id < 32; id++) {
		split(s, (uint16_t)id, 3000, 1500);
		OTHER(t, bufs[1], lens[1], 1, 10, FRAG_HELD, 0);
	}
	/* Zone 1 holds its share (the whole table here); for zone 2 the table is full. */
	split(s, 32, 3000, 1500);
	OTHER(t, bufs[1], lens[1], 1, 11, FRAG_DROP, FRAG_R_ZONE_SHARE);
	OTHER(t, bufs[1], lens[1], 2, 11, FRAG_DROP, FRAG_R_NO_CONTEXT);
	CHECK_EQ(first(t, bufs[0], lens[0], 2, 11, &x, &v, &why), 0);
	CHECK_EQ(why, FRAG_R_NO_CONTEXT);
	/* Live datagrams still complete, and free their context. */
	split(s, 0, 3000, 1500);
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 12, &x, &v, &why), 1);
	while (frag_take(t, &(uint8_t *){ 0 }, &(uint32_t){ 0 }, &x))
		;
	OTHER(t, bufs[2], lens[2], 1, 12, FRAG_FORWARD, 0);
	CHECK_EQ(frag_in_use(t), 31);
	split(s, 32, 3000, 1500);
	OTHER(t, bufs[1], lens[1], 2, 12, FRAG_HELD, 0);
	OTHER(t, bufs[2], lens[2], 2, 12, FRAG_HELD, 0);
	/* Full again; at 13 the others have timed out: a new datagram takes one of them. */
	split(s, 33, 3000, 1500);
	OTHER(t, bufs[1], lens[1], 3, 12, FRAG_DROP, FRAG_R_NO_CONTEXT);
	OTHER(t, bufs[1], lens[1], 3, 13, FRAG_HELD, 0);
	CHECK(drops(t, FRAG_R_EXPIRED) >= 1);
	CHECK_EQ(frag_in_use(t), 32 + 1 - drops(t, FRAG_R_EXPIRED));
	frag_destroy(t);
}

static void
test_held_out(void)
{
	struct frag_cfg cfg = { .held = 16 };
	struct frag_table *t = frag_create(&cfg, 16);
	struct frag_xlat x = xl_of(9), got;
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("10.1.0.11"), id, l;
	uint8_t *f;

	CHECK_EQ(frag_config(t)->held_share, 16);
	for (id = 0; id < 16; id++) {
		split(s, (uint16_t)id, 3000, 1500);
		OTHER(t, bufs[1], lens[1], 1, 1, FRAG_HELD, 0);
	}
	split(s, 16, 3000, 1500);
	OTHER(t, bufs[1], lens[1], 2, 1, FRAG_DROP, FRAG_R_NO_HOLD);
	OTHER(t, bufs[2], lens[2], 2, 1, FRAG_DROP, FRAG_R_NO_HOLD);
	CHECK_EQ(first(t, bufs[0], lens[0], 2, 1, &x, &v, &why), 0);
	CHECK_EQ(why, FRAG_R_NO_HOLD);
	/* A released copy is lent until the next frag_take(): then its buffer is free again. */
	split(s, 0, 3000, 1500);
	CHECK_EQ(first(t, bufs[0], lens[0], 1, 1, &x, &v, &why), 1);
	CHECK(frag_take(t, &f, &l, &got));
	CHECK(!memcmp(f, bufs[1], l));
	split(s, 17, 3000, 1500);
	OTHER(t, bufs[1], lens[1], 3, 1, FRAG_DROP, FRAG_R_NO_HOLD);
	CHECK(!frag_take(t, &f, &l, &got));
	split(s, 18, 3000, 1500);
	OTHER(t, bufs[1], lens[1], 3, 1, FRAG_HELD, 0);
	frag_destroy(t);

	/* A zone's share of copies; a frame larger than a copy buffer. */
	cfg.held = 64;
	cfg.held_share = 8;
	t = frag_create(&cfg, 16);
	for (id = 0; id < 9; id++) {
		split(s, (uint16_t)id, 3000, 1500);
		OTHER(t, bufs[1], lens[1], 1, 1, id < 8 ? FRAG_HELD : FRAG_DROP, FRAG_R_HOLD_SHARE);
	}
	OTHER(t, bufs[1], lens[1], 2, 1, FRAG_HELD, 0);
	/*
	 * A jumbo network's fragment takes a large copy (a share counts it as any); one larger
	 * than a large copy is not held, nor one when the few large copies are taken.
	 */
	l = mkfrag(big, s, 100, 1480, 2072, true);
	CHECK(l > FRAG_HOLD_ROOM);
	OTHER(t, big, l, 4, 1, FRAG_HELD, 0);
	l = mkfrag(big, s, 100, 0, 1480, true);
	CHECK_EQ(first(t, big, l, 4, 1, &x, &v, &why), 1);
	CHECK(frag_take(t, &f, &l, &got) && l == 34 + 2072 && f[34] == (uint8_t)(1480 + 100));
	CHECK(!frag_take(t, &f, &l, &got));
	l = mkfrag(big, s, 102, 8, 9216, true);
	CHECK(l > FRAG_JUMBO_ROOM);
	OTHER(t, big, l, 4, 1, FRAG_DROP, FRAG_R_NO_HOLD);
	CHECK_EQ(frag_config(t)->held_jumbo, 4u);
	for (id = 0; id < 5; id++) {
		l = mkfrag(big, s, (uint16_t)(200 + id), 8960, 8960, true);
		OTHER(t, big, l, (uint16_t)(5 + id), 1, id < 4 ? FRAG_HELD : FRAG_DROP,
		      FRAG_R_NO_HOLD);
	}
	split(s, 300, 3000, 1500);
	OTHER(t, bufs[1], lens[1], 10, 1, FRAG_HELD, 0);
	/* Once its first is known it needs no copy: it is forwarded. */
	l = mkfrag(big, s, 101, 0, 1480, true);
	CHECK_EQ(first(t, big, l, 4, 1, &x, &v, &why), 0);
	l = mkfrag(big, s, 101, 1480, 2072, true);
	OTHER(t, big, l, 4, 1, FRAG_FORWARD, 0);
	frag_destroy(t);
	cfg.held_share = 65;
	CHECK(frag_create(&cfg, 16) == NULL);
}

int
main(void)
{
	srand(5);
	frag_bed_init();
	CHECK_EQ(strcmp(cvs_drop_names[CVS_DROP_FRAG_BASE + FRAG_R_OVERLAP], "frag_overlap"), 0);
	test_in_order();
	test_reversed();
	test_permutations();
	test_overlap();
	test_too_many();
	test_too_long();
	test_expiry();
	test_refuse();
	test_zone_share();
	test_table_full();
	test_held_out();
	return t_done("unit-frag");
}
