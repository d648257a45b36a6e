/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Restart benchmark, the part that needs no network: how long a restarted cubevs-fp takes to
 * adopt a session region (every check of control/restart/region.c and ct_region.c) with N sessions,
 * against making a fresh region of the same size, and the adoption after a crash in the middle
 * of an update (a class list that does not hold: the table is rebuilt from its sessions). Also
 * the lookup cost on the adopted table against the same table built in private memory, to see
 * whether the shared mapping costs anything (TLB) on this machine. Last, the carry of the
 * region into another shape (an upgrade whose --max-sandboxes default doubled; then twice the
 * workers), as a ratio to the plain adoption of the same sessions.
 *
 *   adoptbench [--sessions N] [--workers W] [--dir DIR]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "ct_region.h"
#include "pkt.h"
#include "region.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct ct_tuple
tup(uint32_t i, int dir)
{
	struct ct_tuple t;

	if (dir)
		ct_tuple_set(&t, htonl(0x08080808 + (i >> 15)), 0x010212c6, 443,
			     htons((uint16_t)(30000 + (i & 0x7fff))), 0, IPPROTO_TCP_);
	else
		ct_tuple_set(&t, htonl(0xc0a80002 + (i & 0xff)), htonl(0x08080808 + (i >> 15)),
			     htons((uint16_t)(1024 + (i >> 8 & 0x7f))), 443,
			     (uint16_t)(1 + (i >> 8) % 64), IPPROTO_TCP_);
	return t;
}

static uint32_t
fill(struct ct_table *ct, uint32_t first, uint32_t n)
{
	enum ct_refuse why;
	uint32_t i, ok = 0;

	for (i = first; i < first + n; i++) {
		struct ct_tuple o = tup(i, 0), r = tup(i, 1);

		ok += ct_insert(ct, &o, &r, CT_TCP_ESTABLISHED, 1, &why) != NULL;
	}
	return ok;
}

/* Nanoseconds per lookup of random sessions, both directions. */
static double
lookups(struct ct_table *ct, uint32_t first, uint32_t n)
{
	uint32_t i, x = 12345, hits = 0, rounds = 2000000;
	double t0 = now_s();
	int d;

	for (i = 0; i < rounds; i++) {
		struct ct_tuple t;

		x = x * 1103515245u + 12345u;
		t = tup(first + (x >> 4) % n, (int)(x & 1));
		hits += ct_lookup(ct, &t, &d) != NULL;
	}
	if (hits != rounds)
		fprintf(stderr, "adoptbench: %u of %u lookups missed\n", rounds - hits, rounds);
	return (now_s() - t0) * 1e9 / rounds;
}

/* Reopen with 'w' (another shape): the carry's time and what it kept. */
static double
carry_one(const char *dir, const struct region_want *w, uint32_t *kept)
{
	struct region rg;
	char err[256];
	double t0 = now_s(), t;

	if (region_open(&rg, dir, "bench.region", w, err, sizeof(err)) || rg.info.refused ||
	    !rg.info.carried_from[0]) {
		fprintf(stderr, "adoptbench: the carry failed: %s%s\n", err, rg.info.why);
		exit(1);
	}
	t = now_s() - t0;
	*kept = rg.info.adopted;
	region_close(&rg);
	return t;
}

static void
carry(const char *dir, const struct region_want *from, uint32_t got, double t_adopt)
{
	struct region_want w = *from;
	uint32_t kept;
	double t;

	w.nzones = from->nzones * 2;
	t = carry_one(dir, &w, &kept);
	printf("adoptbench: carry to %u sandboxes %.1f ms (%.0f ns per session, %.2fx the "
	       "adoption after a crash), %u of %u kept\n", w.nzones, t * 1e3,
	       t * 1e9 / (got ? got : 1), t / t_adopt, kept, got);
	w.nworkers = from->nworkers * 2;
	w.capacity = (from->capacity + 1) / 2 + from->capacity / 16;
	t = carry_one(dir, &w, &kept);
	printf("adoptbench: carry to %u workers %.1f ms (%.0f ns per session, %.2fx), %u of %u "
	       "kept (the rest answer to SNAT ports of another worker's share)\n", w.nworkers,
	       t * 1e3, t * 1e9 / (got ? got : 1), t / t_adopt, kept, got);
}

int
main(int argc, char **argv)
{
	uint32_t sessions = 1u << 20, workers = 1, w, got = 0, per;
	const char *dir = "/dev/shm/cvs-adoptbench";
	struct region_want want = { .node_ip = 0x010212c6, .snat_lo = 30000, .snat_hi = 65535 };
	struct region rg;
	struct ct_table *priv;
	double t0, t_fresh, t_adopt, ns_shared, ns_priv;
	char err[256], path[300];
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sessions"))
			sessions = (uint32_t)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--workers"))
			workers = (uint32_t)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
	}
	per = (sessions + workers - 1) / workers;
	want.nworkers = workers;
	want.capacity = per + per / 8;
	want.nzones = 4096;
	snprintf(path, sizeof(path), "%s/bench.region", dir);
	unlink(path);
	t0 = now_s();
	if (region_open(&rg, dir, "bench.region", &want, err, sizeof(err))) {
		fprintf(stderr, "adoptbench: %s\n", err);
		return 1;
	}
	t_fresh = now_s() - t0;
	for (w = 0; w < workers; w++)
		got += fill(rg.ct[w], w * per, per);
	region_close(&rg);
	t0 = now_s();
	if (region_open(&rg, dir, "bench.region", &want, err, sizeof(err)) || rg.info.refused) {
		fprintf(stderr, "adoptbench: adoption failed: %s%s\n", err, rg.info.why);
		return 1;
	}
	t_adopt = now_s() - t0;
	priv = ct_create(want.capacity, want.nzones, NULL);
	if (!priv)
		return 1;
	ct_set_seed(priv, rg.ct[0]->seed);
	fill(priv, 0, per);
	/* Alternate, best of three each: the machine is shared and noisy. */
	ns_shared = ns_priv = 1e9;
	for (i = 0; i < 3; i++) {
		double a = lookups(rg.ct[0], 0, per), b = lookups(priv, 0, per);

		ns_shared = a < ns_shared ? a : ns_shared;
		ns_priv = b < ns_priv ? b : ns_priv;
	}
	printf("adoptbench: %u sessions on %u worker(s), region %.1f MiB in %s%s\n", got, workers,
	       (double)rg.info.bytes / 1048576.0, dir, rg.info.hugetlb ? " (hugetlbfs)" : "");
	printf("adoptbench: fresh region %.1f ms, adoption (every check) %.1f ms (%.0f ns per "
	       "session), reported %u us\n", t_fresh * 1e3, t_adopt * 1e3,
	       t_adopt * 1e9 / (got ? got : 1), rg.info.adopt_us);
	printf("adoptbench: lookup %.1f ns in the shared region, %.1f ns in private memory "
	       "(ratio %.2f)\n", ns_shared, ns_priv, ns_shared / ns_priv);
	ct_destroy(priv);
	/* What a kill -9 between two link writes of a move leaves: one list that does not hold. */
	rg.ct[0]->lru_head[CT_C_TCP_ESTABLISHED] = rg.ct[0]->capacity + 1;
	region_close(&rg);
	t0 = now_s();
	if (region_open(&rg, dir, "bench.region", &want, err, sizeof(err)) || rg.info.refused ||
	    !rg.info.rebuilt || rg.info.adopted != got) {
		fprintf(stderr, "adoptbench: the crashed region was not rebuilt whole: %s%s\n", err,
			rg.info.why);
		return 1;
	}
	t_adopt = now_s() - t0;
	printf("adoptbench: adoption after a crash mid-update (table rebuilt from its sessions) "
	       "%.1f ms (%.0f ns per session), %u kept\n", t_adopt * 1e3,
	       t_adopt * 1e9 / (got ? got : 1), rg.info.adopted);
	region_close(&rg);
	carry(dir, &want, got, t_adopt);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bench.region.lock", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}
