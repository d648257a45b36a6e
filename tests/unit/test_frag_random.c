/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shallow virtual reassembly (frag.h), continued from test_frag.c: held fragments handed to
 * the worker that translated their datagram's first, a flush when a sandbox goes, and windows
 * of random datagrams fragmented at random, shuffled, repeated and expired, each fragment
 * coming out exactly once with its datagram's translation.
 */
#include "frag_bed.h"

/* What frag_handover() gave, in order. */
struct given {
	uint32_t n;
	uint32_t len[8];
	uint8_t frame[8][ROOM];
};

static void
give(void *arg, const uint8_t *frame, uint32_t len)
{
	struct given *g = arg;

	if (g->n < 8 && len <= ROOM) {
		memcpy(g->frame[g->n], frame, len);
		g->len[g->n] = len;
	}
	g->n++;
}

/*
 * A datagram's first fragment went to another worker: what was held here goes there in the
 * order it came, and the datagram is forgotten here. A datagram whose first was translated
 * here, or one unknown, has nothing to give.
 */
static void
test_handover(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	static struct given g;
	struct frag_xlat x = xl_of(3);
	struct frag_key k;
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("10.1.0.12");

	CHECK_EQ(split(s, 7, 5000, 1500), 4u);
	OTHER(t, bufs[3], lens[3], 2, 1, FRAG_HELD, 0);
	OTHER(t, bufs[1], lens[1], 2, 1, FRAG_HELD, 0);
	k = key_of(bufs[0], 2);
	CHECK_EQ(frag_handover(t, &k, 1, give, &g), 2u);
	CHECK_EQ(g.n, 2u);
	CHECK(g.len[0] == lens[3] && !memcmp(g.frame[0], bufs[3], lens[3]));
	CHECK(g.len[1] == lens[1] && !memcmp(g.frame[1], bufs[1], lens[1]));
	CHECK_EQ(frag_in_use(t), 0u);
	CHECK_EQ(frag_held_in_use(t), 0u);
	CHECK_EQ(frag_zone_in_use(t, 2), 0u);
	CHECK_EQ(frag_stats(t)->handed_over, 2u);
	CHECK_EQ(frag_handover(t, &k, 1, give, &g), 0u);
	/* Translated here: it stays, and its later fragments are forwarded. */
	CHECK_EQ(split(s, 8, 3000, 1500), 3u);
	CHECK_EQ(first(t, bufs[0], lens[0], 2, 1, &x, &v, &why), 0u);
	k = key_of(bufs[0], 2);
	CHECK_EQ(frag_handover(t, &k, 1, give, &g), 0u);
	OTHER(t, bufs[1], lens[1], 2, 1, FRAG_FORWARD, 0);
	CHECK_EQ(g.n, 2u);
	frag_destroy(t);
}

static void
test_flush(void)
{
	struct frag_table *t = frag_create(NULL, 16);
	struct frag_xlat x2 = xl_of(2), x4 = xl_of(4);
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t s = ip4("203.0.113.9");

	split(s, 60, 3000, 1500);
	OTHER(t, bufs[1], lens[1], 3, 1, FRAG_HELD, 0);		/* zone 3 */
	split(s, 61, 3000, 1500);
	first(t, bufs[0], lens[0], 0, 1, &x2, &v, &why);		/* towards slot 2 */
	split(s, 62, 3000, 1500);
	first(t, bufs[0], lens[0], 0, 1, &x4, &v, &why);		/* towards slot 4 */
	split(s, 63, 3000, 1500);
	OTHER(t, bufs[2], lens[2], 0, 1, FRAG_HELD, 0);
	CHECK_EQ(first(t, bufs[0], lens[0], 0, 1, &x2, &v, &why), 1);	/* released, not taken */
	CHECK_EQ(frag_flush(t, 3, DP_TO_SANDBOX, 2), 3);
	CHECK_EQ(drops(t, FRAG_R_FLUSHED), 2);
	CHECK(!frag_take(t, &(uint8_t *){ 0 }, &(uint32_t){ 0 }, &x2));
	CHECK_EQ(frag_in_use(t), 1);
	CHECK_EQ(frag_held_in_use(t), 0);
	frag_destroy(t);
}

#define W	100
#define MAXF	20

struct rdg {
	uint32_t n;
	uint16_t zone;
	uint16_t id;
	struct frag_xlat x;
	uint8_t f[MAXF][ROOM];
	uint32_t len[MAXF];
	uint8_t seen[MAXF];
};

static struct rdg rd[W];

/* Which fragment of the window a copy is: its datagram by id, its place by offset. */
static void
random_taken(uint32_t base, const uint8_t *f, uint32_t len, const struct frag_xlat *x)
{
	const struct ip4_hdr *ip = (const struct ip4_hdr *)(f + 14);
	uint32_t d = (uint16_t)(ntohs(ip->id) - base), j;

	CHECK(d < W);
	if (d >= W)
		return;
	CHECK(xl_eq(x, &rd[d].x));
	for (j = 0; j < rd[d].n; j++)
		if (rd[d].len[j] == len && !memcmp(rd[d].f[j], f, len))
			break;
	CHECK(j < rd[d].n);
	if (j < rd[d].n)
		rd[d].seen[j]++;
}

/* W datagrams of random sizes, zones and MTUs, their fragments all shuffled together. */
static void
random_window(struct frag_table *t, uint32_t base, uint32_t now, bool dups)
{
	static const uint32_t mtus[] = { 576, 1000, 1280, 1500 };
	static uint32_t items[W * MAXF * 2];
	uint32_t ni = 0, i, j, l, src, size;
	struct frag_xlat got;
	enum frag_verdict v;
	enum frag_reason why;
	uint8_t *f;

	for (i = 0; i < W; i++) {
		struct rdg *r = &rd[i];

		r->id = (uint16_t)(base + i);
		r->zone = (uint16_t)(rand() % 10 == 0 ? CVS_ZONE_HOST : (uint32_t)rand() % 9);
		r->x = xl_of(base + i);
		src = htonl(0x0a000000u + (uint32_t)rand() % 64);
		size = (uint32_t)rand() % 8000 + 1;
		r->n = split(src, r->id, size, mtus[rand() % 4]);
		CHECK(r->n >= 1 && r->n <= MAXF);
		if (r->n == 1)	/* no fragment at all: not the table's */
			r->n = split(htonl(0x0a000000u), r->id, 3000, 1500);
		for (j = 0; j < r->n; j++) {
			memcpy(r->f[j], bufs[j], lens[j]);
			r->len[j] = lens[j];
			r->seen[j] = 0;
			items[ni++] = i << 8 | j;
			if (dups && rand() % 8 == 0)
				items[ni++] = i << 8 | j;
		}
	}
	shuffle(items, ni);
	for (i = 0; i < ni; i++) {
		struct rdg *r = &rd[items[i] >> 8];
		uint32_t k = items[i] & 0xff;
		struct frag_key key = key_of(r->f[k], r->zone);

		if (k == 0) {
			frag_first(t, &key, r->f[0], r->len[0], &r->x, now, &v, &why);
			if (v == FRAG_FORWARD)
				r->seen[0]++;
			else
				CHECK(dups && why == FRAG_R_BAD_FIRST);
			while (frag_take(t, &f, &l, &got))
				random_taken(base, f, l, &got);
			continue;
		}
		v = frag_other(t, &key, r->f[k], r->len[k], now, &got, &why);
		if (v == FRAG_FORWARD) {
			CHECK(xl_eq(&got, &r->x));
			r->seen[k]++;
		} else if (v == FRAG_DROP) {
			CHECK(dups && why == FRAG_R_DUPLICATE);
		}
	}
	for (i = 0; i < W; i++)
		for (j = 0; j < rd[i].n; j++)
			CHECK(dups ? rd[i].seen[j] >= 1 : rd[i].seen[j] == 1);
}

static void
test_random(void)
{
	struct frag_cfg cfg = { .held = 8192 };
	struct frag_table *t = frag_create(&cfg, 16);
	uint32_t w, now = 1;

	for (w = 0; w < 40; w++, now++) {
		random_window(t, w * W, now, false);
		CHECK_EQ(frag_in_use(t), 0);
		CHECK_EQ(frag_held_in_use(t), 0);
	}
	CHECK_EQ(frag_stats(t)->held, frag_stats(t)->released);
	for (w = 0; w < FRAG_R_MAX; w++)
		CHECK_EQ(drops(t, w), 0);
	/* Repeats: each fragment out at least once; what they leave behind expires. */
	for (w = 40; w < 80; w++, now++) {
		frag_expire(t, now, 1024);
		random_window(t, w * W, now, true);
	}
	CHECK(drops(t, FRAG_R_DUPLICATE) > 0);
	frag_expire(t, now + 3, UINT32_MAX);
	CHECK_EQ(frag_in_use(t), 0);
	CHECK_EQ(frag_held_in_use(t), 0);
	frag_destroy(t);
}

int
main(void)
{
	srand(5);
	frag_bed_init();
	test_handover();
	test_flush();
	test_random();
	return t_done("unit-frag_random");
}
