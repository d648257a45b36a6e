/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The session region's IPv6 blocks: IPv6 sessions written by one "process" are found by the
 * next; a region without IPv6 blocks (the previous release's) is adopted, its IPv4 sessions
 * carried into a region with empty IPv6 tables; a region with them is carried back to one
 * without for a start without --node-ip6 (or a rollback), which a release before reads; a
 * damaged IPv6 record or table, or another --node-ip6, costs the IPv6 sessions alone.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "ct6_region.h"
#include "pkt.h"
#include "region.h"

static char dir[64];
static const char *name = "sessions-test6.region";
static const uint8_t node6[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0x01, [15] = 1 };

static struct region_want
want(uint32_t nw, uint32_t cap6)
{
	struct region_want w = {
		.nworkers = nw, .capacity = 1000, .nzones = 8, .node_ip = 0x010212c6,
		.snat_lo = 30000, .snat_hi = 65535, .capacity6 = cap6,
	};

	/* As region_want_of(): the address only with IPv6 tables. */
	if (cap6)
		memcpy(w.node_ip6, node6, 16);
	return w;
}

static void
path_of(char *p, size_t len)
{
	snprintf(p, len, "%s/%s", dir, name);
}

static uint32_t
asides(void)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	uint32_t n = 0;

	while (dh && (e = readdir(dh)))
		n += strstr(e->d_name, ".refused-") != NULL;
	if (dh)
		closedir(dh);
	return n;
}

/* Guest fd00::i:port → 2001:2:0:2::8 port 80 in zone 1 + i % 3, replied to node6:30000+i. */
static void
tuples6(uint32_t i, uint32_t salt, struct ct6_tuple *o, struct ct6_tuple *r)
{
	uint8_t g[16] = { 0xfd, [12] = (uint8_t)(i >> 8), [13] = (uint8_t)i, [15] = (uint8_t)salt };
	uint8_t wld[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0x02, [15] = 8 };

	ct6_tuple_set(o, g, wld, htons((uint16_t)(1000 + i)), htons(80), (uint16_t)(1 + i % 3),
		      IPPROTO_TCP_);
	ct6_tuple_set(r, wld, node6, htons(80), htons((uint16_t)(30000 + i + salt * 1000)), 0,
		      IPPROTO_TCP_);
}

/* n IPv6 sessions, every fifth deleted; how many are kept. */
static uint32_t
fill6(struct ct6_table *ct, uint32_t n, uint32_t salt)
{
	uint32_t i, kept = 0;
	enum ct_refuse why;

	for (i = 0; i < n; i++) {
		struct ct6_tuple o, r;
		struct ct6_session *s;

		tuples6(i, salt, &o, &r);
		s = ct6_insert(ct, &o, &r, CT_TCP_ESTABLISHED, 5, &why);
		CHECK(s != NULL);
		if (!s)
			continue;
		s->end[0] = 1000 + i;	/* window state comes along */
		s->maxwin[1] = 77;
		if (i % 5 == 4)
			ct6_delete(ct, s);
		else
			kept++;
	}
	return kept;
}

static uint32_t
found6(struct ct6_table *ct, uint32_t n, uint32_t salt)
{
	uint32_t i, hits = 0;
	int d;

	for (i = 0; i < n; i++) {
		struct ct6_tuple o, r;
		struct ct6_session *a, *b;

		tuples6(i, salt, &o, &r);
		a = ct6_lookup(ct, &o, &d);
		b = ct6_lookup(ct, &r, &d);
		if (i % 5 == 4) {
			CHECK(!a && !b);
			continue;
		}
		hits += a && a == b && d == CT_DIR_REPLY && a->end[0] == 1000 + i &&
			a->maxwin[1] == 77;
	}
	return hits;
}

/* IPv4 sessions, as test_region.c fills them: n of them, all kept. */
static uint32_t
fill4(struct ct_table *ct, uint32_t n)
{
	uint32_t i, kept = 0;
	enum ct_refuse why;

	for (i = 0; i < n; i++) {
		struct ct_tuple o = { 0x0a000001 + i, 0x08080808, htons((uint16_t)(1000 + i)),
				      htons(80), (uint16_t)(1 + i % 3), IPPROTO_TCP_, 0 };
		struct ct_tuple r = { 0x08080808, 0x010212c6, htons(80),
				      htons((uint16_t)(30000 + i)), 0, IPPROTO_TCP_, 0 };

		kept += ct_insert(ct, &o, &r, CT_TCP_ESTABLISHED, 5, &why) != NULL;
	}
	return kept;
}

static uint32_t
header_layout(void)
{
	char p[128];
	uint32_t v = 0;
	int fd;

	path_of(p, sizeof(p));
	fd = open(p, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, &v, 4, 16) == 4);	/* magic, format, size, layout */
	close(fd);
	return v;
}

static void
poke(off_t off, const void *v, size_t len)
{
	char p[128];
	int fd;

	path_of(p, sizeof(p));
	fd = open(p, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, v, len, off) == (ssize_t)len);
	close(fd);
}

/* Where worker k's IPv6 block starts in a region of want(2, cap6). */
static off_t
block6(uint32_t k)
{
	return 8192 + 2 * (off_t)ct_region_bytes(1000, 8) + k * (off_t)ct6_region_bytes(1024, 8);
}

/* A region of two workers with 'n4' IPv4 and IPv6 sessions; returns IPv6 kept per worker. */
static void
make6(uint32_t n4, uint32_t *k6)
{
	struct region_want w = want(2, 1024);
	struct region rg;
	char err[256], p[128];

	path_of(p, sizeof(p));
	unlink(p);
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK(rg.ct6[0] && rg.ct6[1] && rg.ct6[0]->capacity == 1024);
	CHECK_EQ(fill4(rg.ct[0], n4), n4);
	k6[0] = fill6(rg.ct6[0], 600, 0);
	k6[1] = fill6(rg.ct6[1], 300, 1);
	region_close(&rg);
}

static void
test_adopt6(void)
{
	struct region_want w = want(2, 1024);
	struct region rg;
	char err[256];
	uint32_t k6[2];

	make6(50, k6);
	CHECK(header_layout() != ct_layout_version());
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused + rg.info.refused6, 0);
	CHECK_EQ(rg.info.generation, 2);
	CHECK_EQ(rg.info.adopted6, k6[0] + k6[1]);
	CHECK_EQ(rg.info.adopted, 50 + k6[0] + k6[1]);
	CHECK_EQ(found6(rg.ct6[0], 600, 0), k6[0]);
	CHECK_EQ(found6(rg.ct6[1], 300, 1), k6[1]);
	/* Zone lists and counts rebuilt, the lists expire, the table takes new sessions. */
	CHECK_EQ(ct6_zone_opened(rg.ct6[0], 2), 160);
	CHECK_EQ(ct6_flush_zone(rg.ct6[0], 2), 160);
	CHECK_EQ(ct6_expire(rg.ct6[1], 5 + 10800 - 1, 100000), 0);
	CHECK_EQ(ct6_expire(rg.ct6[1], 5 + 10800 + 61, 100000), k6[1]);
	CHECK_EQ(fill6(rg.ct6[1], 300, 1), k6[1]);
	region_close(&rg);
	CHECK_EQ(asides(), 0);
}

/*
 * The previous release's region: the same code without IPv6 blocks writes it (its header's
 * layout is the IPv4 one alone). This build adopts it: the IPv4 sessions carried, IPv6 empty.
 * And back: a start without --node-ip6, or a rollback, gets such a region again.
 */
static void
test_legacy(void)
{
	struct region_want old = want(2, 0), w = want(2, 1024);
	struct region rg;
	char err[256], p[128];
	uint32_t k6[2];

	path_of(p, sizeof(p));
	unlink(p);
	CHECK_EQ(region_open(&rg, dir, name, &old, err, sizeof(err)), 0);
	CHECK(!rg.ct6[0]);
	CHECK_EQ(fill4(rg.ct[0], 70), 70);
	CHECK_EQ(fill4(rg.ct[1], 30), 30);
	region_close(&rg);
	CHECK_EQ(header_layout(), ct_layout_version());
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused, 0);
	CHECK_EQ(rg.info.carried_from[0], 2);
	CHECK_EQ(rg.info.adopted, 100);
	CHECK_EQ(rg.info.carry_dropped, 0);
	CHECK(rg.ct6[0] && rg.ct6[1] && rg.ct6[0]->used == 0);
	CHECK_EQ(rg.ct[0]->used, 70);
	CHECK_EQ(fill6(rg.ct6[0], 100, 0), 80);
	region_close(&rg);
	/* Adopted as it is from now on. */
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.carried_from[0], 0);
	CHECK_EQ(rg.info.adopted, 180);
	CHECK_EQ(rg.info.adopted6, 80);
	region_close(&rg);
	/* Without IPv6: the IPv6 sessions are what the shape cannot take. */
	CHECK_EQ(region_open(&rg, dir, name, &old, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.carried_from[0], 2);
	CHECK_EQ(rg.info.adopted, 100);
	CHECK_EQ(rg.info.carry_dropped, 80);
	CHECK_EQ(rg.info.refused6, 0);
	CHECK(!rg.ct6[0]);
	region_close(&rg);
	CHECK_EQ(header_layout(), ct_layout_version());
	make6(10, k6);
	make6(10, k6);
	CHECK_EQ(asides(), 0);
}

/* What costs the IPv6 sessions alone: the IPv4 ones are adopted every time. */
static void
test_refused6(void)
{
	struct region_want w = want(2, 1024);
	struct region rg;
	char err[256];
	uint32_t k6[2], bad = 99;
	uint8_t junk = 0x5a;

	make6(40, k6);
	w.node_ip6[15] ^= 1;
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused, 0);
	CHECK_EQ(rg.info.refused6, 2);
	CHECK(strstr(rg.info.why6, "--node-ip6") != NULL);
	CHECK_EQ(rg.info.adopted, 40);
	CHECK(rg.ct6[0] && rg.ct6[0]->used == 0 && rg.ct6[1]->used == 0);
	CHECK_EQ(fill6(rg.ct6[0], 10, 0), 8);
	region_close(&rg);
	/* The record was rewritten for the new address: adopted from now on. */
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused6, 0);
	CHECK_EQ(rg.info.adopted6, 8);
	region_close(&rg);

	/* A damaged IPv6 record. */
	make6(40, k6);
	poke(1024 + 9, &junk, 1);
	w = want(2, 1024);
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused6, 2);
	CHECK(strstr(rg.info.why6, "damaged IPv6 record") != NULL);
	CHECK_EQ(rg.info.adopted, 40);
	region_close(&rg);

	/* Worker 1's IPv6 table of another shape: that one alone starts empty. */
	make6(40, k6);
	poke(block6(1) + (off_t)offsetof(struct ct6_table, capacity), &bad, 4);
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused6, 1);
	CHECK(strstr(rg.info.why6, "worker 1") != NULL);
	CHECK_EQ(rg.info.adopted6, k6[0]);
	CHECK_EQ(found6(rg.ct6[0], 600, 0), k6[0]);
	CHECK_EQ(rg.ct6[1]->used, 0);
	region_close(&rg);

	/* A crash in the middle of an update of worker 0's IPv6 table: rebuilt, nothing lost. */
	make6(40, k6);
	poke(block6(0) + (off_t)offsetof(struct ct6_table, lru_head), &bad, 4);
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused6, 0);
	CHECK_EQ(rg.info.rebuilt, 1);
	CHECK(strstr(rg.info.rebuild_why, "IPv6") != NULL);
	CHECK_EQ(rg.info.adopted6, k6[0] + k6[1]);
	CHECK_EQ(found6(rg.ct6[0], 600, 0), k6[0]);
	CHECK_EQ(ct6_expire(rg.ct6[0], 5 + 10800 + 61, 100000), k6[0]);
	region_close(&rg);
	CHECK_EQ(asides(), 0);
}

/* Another worker count: each IPv6 session to its sandbox's worker, as IPv4 ones go. */
static void
test_carry6(void)
{
	struct region_want w1 = want(1, 1024), w2 = want(2, 1024);
	struct region rg;
	char err[256];
	uint32_t k6[2];

	make6(0, k6);
	CHECK_EQ(region_open(&rg, dir, name, &w1, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.carried_from[0], 2);
	/* One worker: all of them whose SNAT port is the sandbox's worker's (one share). */
	CHECK_EQ(rg.info.adopted6, k6[0] + k6[1]);
	CHECK_EQ(found6(rg.ct6[0], 600, 0), k6[0]);
	CHECK_EQ(found6(rg.ct6[0], 300, 1), k6[1]);
	region_close(&rg);
	/* Two again: only where the port's share and the sandbox's worker agree. */
	CHECK_EQ(region_open(&rg, dir, name, &w2, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.adopted6 + rg.info.carry_dropped, k6[0] + k6[1]);
	CHECK(rg.info.adopted6 > 0 && rg.info.carry_dropped > 0);
	region_close(&rg);
}

int
main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/cvs-region6-%d", (int)getpid());
	test_adopt6();
	test_legacy();
	test_refused6();
	test_carry6();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return t_done("test_region6");
}
