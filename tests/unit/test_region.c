/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The session region: sessions written by one "process" (open, insert, close) are found by the
 * next after adoption; a region of another shape (workers, sessions per worker, sandboxes) is
 * carried into the new one, each session to the worker that owns it; one of another node IP or
 * SNAT range, a corrupt, truncated, loose or foreign one is refused with its reason, moved
 * aside, and replaced by an empty one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "ct_region.h"
#include "pkt.h"
#include "region.h"

static char dir[64];
static const char *name = "sessions-test.region";

static struct region_want
want(uint32_t nw, uint32_t cap)
{
	struct region_want w = {
		.nworkers = nw, .capacity = cap, .nzones = 8, .node_ip = 0x010212c6,
		.snat_lo = 30000, .snat_hi = 65535, .timeouts = NULL,
	};

	return w;
}

static struct ct_tuple
tup(uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, uint16_t zone)
{
	struct ct_tuple t = { s, d, sp, dp, zone, IPPROTO_TCP_, 0 };

	return t;
}

/* n sessions in table ct, sandbox zone 1 + i % 3 towards the world, every fifth deleted. */
static uint32_t
fill(struct ct_table *ct, uint32_t n, uint32_t salt)
{
	uint32_t i, kept = 0;
	enum ct_refuse why;

	for (i = 0; i < n; i++) {
		struct ct_tuple o = tup(0x0a000001 + i, 0x08080808, (uint16_t)(1000 + i), 80,
					(uint16_t)(1 + i % 3));
		struct ct_tuple r = tup(0x08080808, 0x010212c6 + salt, 80, (uint16_t)(30000 + i),
					0);
		struct ct_session *s = ct_insert(ct, &o, &r, CT_TCP_ESTABLISHED, 5, &why);

		if (!s)
			fprintf(stderr, "insert %u of %u: refused %d, used %u\n", i, n, why,
				ct->used);
		CHECK(s != NULL);
		if (s && i % 5 == 4)
			ct_delete(ct, s);
		else
			kept++;
	}
	return kept;
}

static uint32_t
found(struct ct_table *ct, uint32_t n, uint32_t salt)
{
	uint32_t i, hits = 0;
	int d;

	for (i = 0; i < n; i++) {
		struct ct_tuple o = tup(0x0a000001 + i, 0x08080808, (uint16_t)(1000 + i), 80,
					(uint16_t)(1 + i % 3));
		struct ct_tuple r = tup(0x08080808, 0x010212c6 + salt, 80, (uint16_t)(30000 + i),
					0);
		struct ct_session *a = ct_lookup(ct, &o, &d), *b = ct_lookup(ct, &r, &d);

		if (i % 5 == 4) {
			CHECK(!a && !b);
			continue;
		}
		hits += a && a == b && d == CT_DIR_REPLY;
	}
	return hits;
}

/* Every fourth session of ct to TIME_WAIT; opened[z]: the live count of zones 1-3 after. */
static uint32_t
close_some(struct ct_table *ct, uint32_t opened[4])
{
	uint32_t i, n = 0, z;

	for (i = 0; i < ct->hiwater; i++)
		if ((ct->s[i].flags & CT_F_USED) && i % 4 == 0) {
			ct_touch(ct, &ct->s[i], CT_TCP_TIME_WAIT, 5);
			n++;
		}
	for (z = 1; z <= 3; z++)
		opened[z] = ct_zone_opened(ct, (uint16_t)z);
	return n;
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

static void
path_of(char *p, size_t len)
{
	snprintf(p, len, "%s/%s", dir, name);
}

static void
test_adopt(void)
{
	struct region_want w = want(2, 1000);
	struct region_slot cur[8] = { { 0 } };
	bool gone[8];
	struct region rg;
	char err[256], p[128];
	uint32_t k0, k1, opened[4], closed, z;
	struct stat st;

	w.release = "0.2.0 (commit test)";
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.generation, 1);
	CHECK_EQ(rg.info.refused, 0);
	CHECK_EQ(rg.info.written_by[0], '\0');
	path_of(p, sizeof(p));
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	/* A second instance on the same region is refused while the first holds it. */
	{
		struct region rg2;

		CHECK(region_open(&rg2, dir, name, &w, err, sizeof(err)) < 0);
		CHECK(strstr(err, "another cubevs-fp") != NULL);
	}
	k0 = fill(rg.ct[0], 600, 0);
	k1 = fill(rg.ct[1], 300, 1);
	closed = close_some(rg.ct[0], opened);
	cur[0].ip = 0x0a000001;
	cur[0].id_hash = region_id_hash("a");
	cur[1].ip = 0x0a000002;
	cur[1].id_hash = region_id_hash("b");
	region_set_slots(&rg, cur);
	CHECK(region_clock_now(&rg) < 5);
	region_close(&rg);

	/* The next process: everything back, in both directions, and the table still works. */
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused, 0);
	CHECK_EQ(rg.info.generation, 2);
	/* The release that used it last, as recorded; one that records none (a rollback's). */
	CHECK(!strcmp(rg.info.written_by, "0.2.0 (commit test)"));
	CHECK_EQ(rg.info.adopted, k0 + k1);
	CHECK_EQ(found(rg.ct[0], 600, 0), k0);
	CHECK_EQ(found(rg.ct[1], 300, 1), k1);
	CHECK_EQ(rg.ct[0]->used, k0);
	/* The recount keeps the closed sessions out of the zone counts, as the worker did. */
	for (z = 1; z <= 3; z++)
		CHECK_EQ(ct_zone_opened(rg.ct[0], (uint16_t)z), opened[z]);
	CHECK_EQ(opened[1] + opened[2] + opened[3] + closed, k0);
	/* Zone lists were rebuilt: a flush of zone 2 removes exactly its sessions. */
	CHECK_EQ(ct_flush_zone(rg.ct[0], 2), 160);
	CHECK_EQ(ct_expire(rg.ct[1], 5 + 10800 + 61, 100000), k1);
	CHECK_EQ(fill(rg.ct[1], 300, 1), k1);
	region_close(&rg);
	w.release = NULL;
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	region_close(&rg);
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK(!strcmp(rg.info.written_by, "0.1.0 or earlier"));
	CHECK_EQ(rg.info.adopted, k0 - 160 + k1);
	/* Sandbox b came back as another one, c is new: only b's zone is gone. */
	cur[1].id_hash = region_id_hash("b2");
	cur[2].ip = 0x0a000003;
	CHECK_EQ(region_slots_gone(&rg, cur, gone), 1);
	CHECK(gone[1] && !gone[0] && !gone[2]);
	region_close(&rg);
	CHECK_EQ(asides(), 0);
}

/* Open with 'w' after the region was made with the default shape; expect a refusal. */
static void
expect_refused(const struct region_want *w, const char *reason)
{
	struct region rg;
	char err[256];
	uint32_t before = asides();

	CHECK_EQ(region_open(&rg, dir, name, w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused, 1);
	CHECK_EQ(rg.info.adopted, 0);
	CHECK_EQ(rg.info.generation, 1);
	if (!strstr(rg.info.why, reason))
		fprintf(stderr, "reason '%s', expected '%s'\n", rg.info.why, reason);
	CHECK(strstr(rg.info.why, reason) != NULL);
	CHECK_EQ(asides(), before + 1);
	CHECK(rg.ct[0] && rg.ct[0]->used == 0);
	region_close(&rg);
}

static void
make_default(void)
{
	struct region_want w = want(2, 1000);
	struct region rg;
	char err[256], p[128];

	path_of(p, sizeof(p));
	unlink(p);
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused, 0);
	fill(rg.ct[0], 100, 0);
	region_close(&rg);
}

/* Write 'len' bytes of 'v' at 'off' in the region file. */
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

static void
test_refused(void)
{
	struct region_want w = want(2, 1000);
	char p[128], junk[8192];
	uint32_t nil = 0x12345;
	size_t i;
	int fd;

	path_of(p, sizeof(p));
	make_default();
	w.snat_lo = 40000;
	expect_refused(&w, "--snat-port-range");
	w = want(2, 1000);
	make_default();
	w.node_ip ^= 1;
	expect_refused(&w, "--node-ip");
	w = want(2, 1000);
	/* Header bytes changed: the checksum sees it. */
	make_default();
	poke(20, &nil, sizeof(nil));
	expect_refused(&w, "checksum");
	/* A table whose own shape is wrong behind a valid header: worker 0's line count. */
	make_default();
	poke(8192 + offsetof(struct ct_table, nlines), &nil, sizeof(nil));
	expect_refused(&w, "worker 0");
	/* Random bytes. */
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 2654435761u >> 13);
	fd = open(p, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk));
	close(fd);
	expect_refused(&w, "magic");
	/* Truncated. */
	make_default();
	CHECK(truncate(p, 100000) == 0);
	expect_refused(&w, "truncated");
	/* Looser modes, and another owner (root only can make one). */
	make_default();
	CHECK(chmod(p, 0644) == 0);
	expect_refused(&w, "mode");
	if (geteuid() == 0) {
		make_default();
		CHECK(chown(p, 65534, 65534) == 0);
		expect_refused(&w, "owned by uid 65534");
	} else {
		printf("test_region: not root, the foreign-owner case is skipped\n");
	}
}

/* The region file's bytes at [off, off + len) into buf, or from buf into the file. */
static void
file_io(bool put, off_t off, void *buf, size_t len)
{
	char p[128];
	int fd;

	path_of(p, sizeof(p));
	fd = open(p, put ? O_WRONLY : O_RDONLY);
	CHECK(fd >= 0);
	CHECK((put ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off)) == (ssize_t)len);
	close(fd);
}

/* The update a worker was in when the process died: a delete, an insert, a move. */
#define CR_DEL	7	/* fill()'s session 7: deleted */
#define CR_MOVE	12	/* session 12: moved to another class list */
static void
crash_update(struct ct_table *ct)
{
	struct ct_tuple o = tup(0x0b000001, 0x08080808, 999, 80, 1);
	struct ct_tuple r = tup(0x08080808, 0x010212c6, 80, 29999, 0);
	struct ct_tuple del = tup(0x0a000001 + CR_DEL, 0x08080808, 1000 + CR_DEL, 80,
				  1 + CR_DEL % 3);
	struct ct_tuple mv = tup(0x0a000001 + CR_MOVE, 0x08080808, 1000 + CR_MOVE, 80,
				 1 + CR_MOVE % 3);
	struct ct_session *s;
	enum ct_refuse why;
	int d;

	s = ct_lookup(ct, &del, &d);
	CHECK(s != NULL);
	if (s)
		ct_delete(ct, s);
	CHECK(ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, 6, &why) != NULL);
	s = ct_lookup(ct, &mv, &d);
	CHECK(s != NULL);
	if (s)
		ct_touch_move(ct, s, CT_C_TCP_FIN_WAIT);
}

/* Sessions of fill(300) other than the two the update touched: all there, both ways. */
static uint32_t
crash_kept(struct ct_table *ct)
{
	uint32_t i, n = 0;
	int d;

	for (i = 0; i < 300; i++) {
		struct ct_tuple o = tup(0x0a000001 + i, 0x08080808, (uint16_t)(1000 + i), 80,
					(uint16_t)(1 + i % 3));
		struct ct_tuple r = tup(0x08080808, 0x010212c6, 80, (uint16_t)(30000 + i), 0);
		struct ct_session *a = ct_lookup(ct, &o, &d), *b = ct_lookup(ct, &r, &d);

		if (i % 5 == 4 || i == CR_DEL)
			continue;
		n += a && a == b;
	}
	return n;
}

/*
 * kill -9 at any point of an update: the words the update changed, applied in part (every
 * prefix, in three store orders), as the file a crash leaves. Each must be adopted, with
 * every session the update did not touch, and drain cleanly through expiry.
 */
static void
test_crash(void)
{
	struct region_want w = want(1, 1000);
	struct region rg;
	size_t tb = ct_region_bytes(1000, 8), nd = 0, i, k, o;
	uint32_t *before = malloc(tb), *after = malloc(tb), *img = malloc(tb);
	uint32_t *diff = malloc(tb), rebuilt = 0, cases = 0, left;
	char err[256], p[128];

	path_of(p, sizeof(p));
	unlink(p);
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	fill(rg.ct[0], 300, 0);
	region_close(&rg);
	/* As the next process adopted it (pointers, policy versions written): the base. */
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	memcpy(before, rg.ct[0], tb);
	crash_update(rg.ct[0]);
	memcpy(after, rg.ct[0], tb);
	region_close(&rg);
	for (i = 0; i < tb / 4; i++)
		if (before[i] != after[i])
			diff[nd++] = (uint32_t)i;
	CHECK(nd > 20);
	for (o = 0; o < 3; o++) {
		for (k = 0; k <= nd; k++) {
			struct ct_table *ct;

			memcpy(img, before, tb);
			/* Order 0: address order; 1: reverse; 2: every other word first. */
			for (i = 0; i < k; i++) {
				size_t j = o == 0 ? i : o == 1 ? nd - 1 - i :
					   (2 * i < nd ? 2 * i : 2 * (i - (nd + 1) / 2) + 1);

				img[diff[j]] = after[diff[j]];
			}
			file_io(true, 8192, img, tb);
			CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
			CHECK_EQ(rg.info.refused, 0);
			ct = rg.ct[0];
			if (rg.info.refused || !ct) {
				fprintf(stderr, "order %zu, %zu of %zu words: %s\n", o, k, nd,
					rg.info.why);
				region_close(&rg);
				continue;
			}
			if (crash_kept(ct) != 239)
				fprintf(stderr, "order %zu, %zu of %zu words: %u kept\n", o, k, nd,
					crash_kept(ct));
			CHECK_EQ(crash_kept(ct), 239);
			rebuilt += rg.info.rebuilt;
			cases++;
			left = ct->used;
			CHECK_EQ(ct_expire(ct, 6 + 10800 + 700, 100000), left);
			CHECK_EQ(ct->used, 0);
			region_close(&rg);
		}
	}
	printf("test_region: %u crash points over %zu changed words, %u needed a rebuild\n",
	       cases, nd, rebuilt);
	CHECK(rebuilt > 0);
	free(before);
	free(after);
	free(img);
	free(diff);
	/* The generation alone changed (the one store an adoption makes): still adopted. */
	{
		uint64_t g = 12345;

		file_io(true, REGION_GENERATION_OFF, &g, sizeof(g));
		CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
		CHECK_EQ(rg.info.refused, 0);
		CHECK_EQ(rg.info.generation, 12346);
		region_close(&rg);
	}
}

/*
 * Carried sessions, as the data plane makes them: sandbox zone z (1..CA_ZONES) to the world,
 * the reply to the node IP at SNAT port 'port', both in network order.
 */
#define CA_ZONES	6
#define CA_N		240
static uint16_t
carry_port(uint32_t i)
{
	return (uint16_t)(30000 + i * 149 % 35000);
}

static void
carry_tuples(uint32_t i, struct ct_tuple *o, struct ct_tuple *r)
{
	*o = tup(htonl(0xc0a80002 + i), htonl(0xc6120063), htons((uint16_t)(1000 + i)),
		 htons(443), (uint16_t)(1 + i % CA_ZONES));
	*r = tup(htonl(0xc6120063), 0x010212c6, htons(443), htons(carry_port(i)), 0);
}

/* Would session i be owned by worker k of nw (its zone's worker and its port's share)? */
static bool
carry_owned(uint32_t i, uint32_t nw, uint32_t nzones, uint32_t *k)
{
	uint32_t z = 1 + i % CA_ZONES, span = 65535 - 30000 + 1;
	uint32_t share = (uint32_t)(((uint64_t)(carry_port(i) - 30000 + 1) * nw - 1) / span);

	*k = (z - 1) % nw;
	return z <= nzones && share == *k;
}

/* Which sessions the region holds now: those made, less what each carry could not take. */
static bool ca_live[CA_N];

static uint32_t
carry_live(void)
{
	uint32_t i, n = 0;

	for (i = 0; i < CA_N; i++)
		n += ca_live[i];
	return n;
}

/*
 * Each live session owned under w found in its worker's table and nowhere else; the others
 * nowhere (and no longer live). Returns the hits, *want_n what should have hit.
 */
static uint32_t
carry_found(const struct region *rg, const struct region_want *w, uint32_t *want_n)
{
	uint32_t i, k, j, hits = 0;
	int d;

	*want_n = 0;
	for (i = 0; i < CA_N; i++) {
		struct ct_tuple o, r;

		ca_live[i] = ca_live[i] && carry_owned(i, w->nworkers, w->nzones, &k);
		carry_owned(i, w->nworkers, w->nzones, &k);
		carry_tuples(i, &o, &r);
		*want_n += ca_live[i];
		for (j = 0; j < w->nworkers; j++) {
			struct ct_session *a = ct_lookup(rg->ct[j], &o, &d);
			struct ct_session *b = ct_lookup(rg->ct[j], &r, &d);

			if (ca_live[i] && j == k)
				hits += a && a == b && a->state == CT_TCP_ESTABLISHED;
			else
				CHECK(!a && !b);
		}
	}
	return hits;
}

/* Reopen with w: a region of another shape is carried, never refused. */
static void
carry_to(const struct region_want *w, const struct region_want *from)
{
	struct region rg;
	uint32_t n, k, used = 0, before = carry_live(), aside = asides();
	char err[256];

	CHECK_EQ(region_open(&rg, dir, name, w, err, sizeof(err)), 0);
	CHECK_EQ(rg.info.refused, 0);
	CHECK_EQ(rg.info.carried_from[0], from->nworkers);
	CHECK_EQ(rg.info.carried_from[1], from->capacity);
	CHECK_EQ(rg.info.carried_from[2], from->nzones);
	CHECK_EQ(carry_found(&rg, w, &n), n);
	for (k = 0; k < w->nworkers; k++)
		used += rg.ct[k]->used;
	CHECK_EQ(used, n);
	CHECK_EQ(rg.info.adopted, n);
	CHECK_EQ(rg.info.carry_dropped, before - n);
	/* The clock base came along: the sessions' times (5) are not in the future. */
	CHECK(region_clock_now(&rg) < 5);
	region_close(&rg);
	CHECK_EQ(asides(), aside);
}

static void
test_carry(void)
{
	struct region_want w = want(2, 1000), w1 = want(1, 1000), w4 = want(4, 600);
	struct region_want big = want(2, 4000), few = want(2, 1000);
	struct region_slot cur[8] = { { 0 } };
	struct region rg;
	enum ct_refuse why;
	uint32_t i, k, n = 0;
	char err[256], p[128];

	path_of(p, sizeof(p));
	unlink(p);
	CHECK_EQ(region_open(&rg, dir, name, &w, err, sizeof(err)), 0);
	for (i = 0; i < CA_N; i++) {
		struct ct_tuple o, r;

		ca_live[i] = carry_owned(i, 2, 8, &k);
		if (!ca_live[i])
			continue;
		carry_tuples(i, &o, &r);
		CHECK(ct_insert(rg.ct[k], &o, &r, CT_TCP_ESTABLISHED, 5, &why) != NULL);
		n++;
	}
	cur[2].ip = 0x0a000003;
	cur[2].id_hash = region_id_hash("c");
	region_set_slots(&rg, cur);
	region_close(&rg);
	/* More sandboxes and sessions (an upgrade whose defaults grew): everything comes. */
	big.nzones = 16;
	CHECK(n > 60);
	carry_to(&big, &w);
	/* The zone records of the sandboxes both shapes have came along. */
	{
		bool gone[16];

		CHECK_EQ(region_open(&rg, dir, name, &big, err, sizeof(err)), 0);
		CHECK_EQ(rg.info.carried_from[0], 0);
		CHECK_EQ(region_slots_gone(&rg, cur, gone), 0);
		cur[2].id_hash = 7;
		CHECK_EQ(region_slots_gone(&rg, cur, gone), 1);
		region_close(&rg);
	}
	/* Fewer sandboxes: the sessions of slots the new shape has not stay behind. */
	few.nzones = 4;
	carry_to(&few, &big);
	/* One worker: every session, the port shares are one. */
	w1.nzones = 4;
	carry_to(&w1, &few);
	/* Four workers: each to its sandbox's worker, when its port's share is that worker's. */
	w4.nzones = 4;
	carry_to(&w4, &w1);
	/* Fewer sessions per worker than there are: the rest is counted, not lost silently. */
	{
		struct region_want tiny = want(1, 16);
		uint32_t used = 0;

		tiny.nzones = 4;
		CHECK_EQ(region_open(&rg, dir, name, &tiny, err, sizeof(err)), 0);
		for (k = 0; k < 1; k++) {
			CHECK(rg.ct[k]->used <= 16);
			used += rg.ct[k]->used;
		}
		CHECK(used > 0);
		CHECK_EQ(rg.info.adopted, used);
		CHECK(rg.info.carry_dropped > 0);
		/* The class lists hold: every carried session expires with its class. */
		for (k = 0; k < 1; k++) {
			uint32_t had = rg.ct[k]->used;

			CHECK_EQ(ct_expire(rg.ct[k], 5 + 10800 - 1, 100000), 0);
			CHECK_EQ(ct_expire(rg.ct[k], 5 + 10800 + 61, 100000), had);
		}
		region_close(&rg);
	}
}

static void
test_dir(void)
{
	struct region_want w = want(1, 100);
	struct region rg;
	char err[256], sub[96];

	snprintf(sub, sizeof(sub), "%s/loose", dir);
	CHECK(mkdir(sub, 0755) == 0);
	CHECK(region_open(&rg, sub, name, &w, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "mode 0700") != NULL);
	rmdir(sub);
}

int
main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/cvs-region-%d", (int)getpid());
	test_adopt();
	test_refused();
	test_crash();
	test_carry();
	test_dir();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return t_done("test_region");
}
