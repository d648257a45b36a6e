/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cvs_common.h"
#include "ct6_region.h"
#include "owner.h"
#include "region.h"
#include "region_int.h"

#define REGION_MAGIC	"CVSFPRG"	/* 8 bytes with its NUL */
#define REGION_FORMAT	1u
#define HUGETLBFS_MAGIC_ 0x958458f6
/*
 * The release that used the region last, in the header's page (REGION_RELEASE_OFF): outside the
 * checksum, which 0.1.0 computes over the header alone and so still accepts, and written in
 * stores whose tearing can only garble this record, never refuse the region.
 */
#define REGION_RELEASE_MAGIC	0x4c525643u	/* "CVRL" */
struct region_release {
	uint32_t magic;
	char release[44];
};

struct region_hdr {
	char magic[8];
	uint32_t format;
	uint32_t hdr_bytes;
	uint32_t layout;	/* ct_layout_version() */
	uint32_t nworkers;
	uint32_t capacity;
	uint32_t nzones;
	uint64_t file_bytes;
	uint64_t generation;	/* not in the checksum: one aligned store, whenever it dies */
	int64_t clock_base;	/* CLOCK_BOOTTIME seconds at worker time 0 */
	uint32_t node_ip;
	uint16_t snat_lo;
	uint16_t snat_hi;
	uint64_t seed[REGION_MAX_WORKERS];
	uint64_t table_off[REGION_MAX_WORKERS];
	uint64_t slots_off;
	uint32_t capacity6;	/* IPv6 sessions per worker; 0 (a release before them): none */
	uint32_t sum;		/* FNV-1a of everything above */
};


static uint32_t
fnv(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

uint32_t
region_id_hash(const char *id)
{
	return fnv(id, strlen(id), 2166136261u) | 1;
}

_Static_assert(offsetof(struct region_hdr, generation) == REGION_GENERATION_OFF, "region.h");

/* Everything but the sum and the generation, which changes alone. */
static uint32_t
hdr_sum(const struct region_hdr *h)
{
	uint32_t v = fnv(h, offsetof(struct region_hdr, generation), 2166136261u);

	return fnv(&h->clock_base, offsetof(struct region_hdr, sum) -
		   offsetof(struct region_hdr, clock_base), v);
}

void
region_seal_header(void *base)
{
	struct region_hdr *h = base;

	h->sum = hdr_sum(h);
}

static int64_t
boot_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec;
}

static size_t
rnd(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

_Static_assert(REGION_RELEASE_OFF + sizeof(struct region_release) <= REGION_ALIGN &&
	       sizeof(struct region_hdr) <= REGION6_OFF, "the records' places");

/*
 * The header's layout version: the IPv4 structures' alone without IPv6 blocks, so a region of
 * a release before them is read as it was written (and the region this build writes for such
 * a release, a rollback's, is that release's); both families' with them.
 */
static uint32_t
region_layout_version(uint32_t capacity6)
{
	uint32_t v = ct_layout_version(), v6 = ct6_layout_version();

	return capacity6 ? fnv(&v6, sizeof(v6), v) : v;
}

static void
region_release_read(const void *base, char *out, size_t len)
{
	const struct region_release *r = (const void *)((const uint8_t *)base + REGION_RELEASE_OFF);

	if (r->magic == REGION_RELEASE_MAGIC)
		snprintf(out, len, "%.*s", (int)sizeof(r->release), r->release);
	else
		snprintf(out, len, "0.1.0 or earlier");
}

static void
region_release_write(void *base, const char *release)
{
	struct region_release *r = (void *)((uint8_t *)base + REGION_RELEASE_OFF);

	memset(r, 0, sizeof(*r));
	if (release && release[0]) {
		snprintf(r->release, sizeof(r->release), "%s", release);
		r->magic = REGION_RELEASE_MAGIC;
	}
}

/*
 * Where everything goes: header, zone records, one IPv4 table block per worker, then one
 * IPv6 block per worker (when capacity6; table6_off may be NULL).
 */
size_t
region_layout(const struct region_want *w, uint64_t *table_off, uint64_t *table6_off,
	      uint64_t *slots_off, size_t align)
{
	size_t off = REGION_ALIGN, tb = ct_region_bytes(w->capacity, w->nzones);
	uint32_t i;

	*slots_off = off;
	off = rnd(off + (size_t)w->nzones * sizeof(struct region_slot), REGION_ALIGN);
	for (i = 0; i < w->nworkers; i++) {
		table_off[i] = off;
		off += tb;
	}
	for (i = 0; w->capacity6 && i < w->nworkers; i++) {
		if (table6_off)
			table6_off[i] = off;
		off += ct6_region_bytes(w->capacity6, w->nzones);
	}
	return rnd(off, align);
}

/* The size a region of this shape takes on the file system of fd. */
static size_t
region_size(int fd, const struct region_want *w)
{
	uint64_t off[REGION_MAX_WORKERS], soff;
	struct statfs sf;
	size_t align = REGION_ALIGN;

	if (!fstatfs(fd, &sf) && sf.f_type == HUGETLBFS_MAGIC_)
		align = (size_t)sf.f_bsize;
	return region_layout(w, off, NULL, &soff, align);
}

uint32_t
region_clock_now(const struct region *rg)
{
	const struct region_hdr *h = rg->base;
	int64_t d = boot_seconds() - h->clock_base;

	return d > 0 ? (uint32_t)d : 0;
}

/*
 * Header checks, in order; the first that fails is the reason given. 'w' is the shape the
 * region says it has (region_own_shape()): a region of another shape is carried, not refused.
 */
static bool
region_hdr_ok(const struct region_hdr *h, size_t size, const struct region_want *w,
	      char *why, size_t len)
{
	uint64_t off[REGION_MAX_WORKERS], soff;
	uint32_t i;

	if (size < sizeof(*h))
		snprintf(why, len, "truncated: %zu bytes, the header alone needs %zu", size,
			 sizeof(*h));
	else if (memcmp(h->magic, REGION_MAGIC, 8))
		snprintf(why, len, "not a cubevs-fp session region (bad magic)");
	else if (h->format != REGION_FORMAT || h->hdr_bytes != sizeof(*h))
		snprintf(why, len, "region format %u, this build reads %u%s", h->format,
			 REGION_FORMAT, h->format > REGION_FORMAT ? " (a newer release wrote it)" :
			 "");
	else if (h->sum != hdr_sum(h))
		snprintf(why, len, "corrupt header (checksum)");
	else if (h->layout != region_layout_version(h->capacity6))
		snprintf(why, len, "session layout %08x, this build has %08x (an upgrade that "
			 "changed the session structures)", h->layout,
			 region_layout_version(h->capacity6));
	else if (h->nworkers == 0 || h->nworkers > REGION_MAX_WORKERS ||
		 h->capacity == 0 || h->capacity >= 1u << 30 || h->nzones >= UINT16_MAX ||
		 h->capacity6 >= 1u << 30)
		snprintf(why, len, "shape out of bounds: %u workers, %u sessions each, %u "
			 "sandboxes", h->nworkers, h->capacity, h->nzones);
	else if (h->node_ip != w->node_ip)
		snprintf(why, len, "made for another --node-ip: its sessions are translated to it");
	else if (h->snat_lo != w->snat_lo || h->snat_hi != w->snat_hi)
		snprintf(why, len, "made for --snat-port-range %u-%u, now %u-%u: its sessions hold "
			 "ports of that range", h->snat_lo, h->snat_hi, w->snat_lo, w->snat_hi);
	else if (h->file_bytes != size)
		snprintf(why, len, "truncated or grown: %zu bytes, the header says %llu", size,
			 (unsigned long long)h->file_bytes);
	else if (h->clock_base > boot_seconds())
		snprintf(why, len, "clock base in the future (made before a reboot)");
	else {
		region_layout(w, off, NULL, &soff, 1);
		if (h->slots_off != soff)
			goto bad_off;
		for (i = 0; i < w->nworkers; i++)
			if (h->table_off[i] != off[i] ||
			    off[i] + ct_region_bytes(w->capacity, w->nzones) > size)
				goto bad_off;
		return true;
bad_off:
		snprintf(why, len, "table offsets do not match the layout");
	}
	return false;
}

/* The want of this start with the shape the header says the region has. */
static void
region_own_shape(const struct region_hdr *h, const struct region_want *w,
		 struct region_want *own)
{
	*own = *w;
	own->nworkers = h->nworkers;
	own->capacity = h->capacity;
	own->nzones = h->nzones;
	own->capacity6 = h->capacity6;
}

static bool
region_same_shape(const struct region_want *a, const struct region_want *b)
{
	return a->nworkers == b->nworkers && a->capacity == b->capacity &&
	       a->nzones == b->nzones && a->capacity6 == b->capacity6;
}

static int
region_map(struct region *rg, int fd, size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	/* Random lookups over tens of MiB: huge pages where tmpfs allows them (shmem THP). */
	if (!rg->info.hugetlb)
		madvise(p, bytes, MADV_HUGEPAGE);
	rg->base = p;
	rg->bytes = bytes;
	return 0;
}

/* Adopt the file open on fd, in the shape it was made with (*own); false with the reason. */
static bool
region_adopt(struct region *rg, int fd, const struct region_want *w, struct region_want *own)
{
	struct region_hdr *h, copy;
	struct stat st;
	uint32_t i;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(rg->info.why, sizeof(rg->info.why), "not a regular file");
		return false;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(rg->info.why, sizeof(rg->info.why), "owned by uid %u with mode %04o; "
			 "only uid %u and mode 0600 are trusted", st.st_uid, st.st_mode & 07777,
			 geteuid());
		return false;
	}
	{
		struct statfs sf;

		rg->info.hugetlb = !fstatfs(fd, &sf) && sf.f_type == HUGETLBFS_MAGIC_;
	}
	/* The header from a read, so a file of any size is judged before it is mapped. */
	memset(&copy, 0, sizeof(copy));
	if (pread(fd, &copy, sizeof(copy), 0) < 0)
		memset(&copy, 0, sizeof(copy));
	region_own_shape(&copy, w, own);
	if (!region_hdr_ok(&copy, (size_t)st.st_size, own, rg->info.why, sizeof(rg->info.why)))
		return false;
	if (st.st_size != (off_t)region_size(fd, own)) {
		snprintf(rg->info.why, sizeof(rg->info.why), "truncated or grown: %lld bytes, "
			 "this shape takes %zu", (long long)st.st_size, region_size(fd, own));
		return false;
	}
	if (region_map(rg, fd, (size_t)st.st_size)) {
		snprintf(rg->info.why, sizeof(rg->info.why), "cannot map: %s", strerror(errno));
		return false;
	}
	h = rg->base;
	/* Judged again on the mapping: the file may have changed since the read. */
	region_own_shape(h, w, own);
	if (!region_hdr_ok(h, (size_t)st.st_size, own, rg->info.why, sizeof(rg->info.why)))
		return false;
	for (i = 0; i < own->nworkers; i++) {
		struct ct_adopt_stats as;
		char why[160];

		why[0] = '\0';
		rg->ct[i] = ct_region_adopt((uint8_t *)rg->base + h->table_off[i], own->capacity,
					    own->nzones, w->timeouts, &as, why, sizeof(why));
		if (!rg->ct[i] || rg->ct[i]->seed != h->seed[i]) {
			snprintf(rg->info.why, sizeof(rg->info.why), "worker %u's table: %s", i,
				 rg->ct[i] ? "hash seed differs from the header" : why);
			return false;
		}
		rg->info.adopted += as.sessions;
		rg->info.discarded_bad += as.dropped;
		if (as.rebuilt && !rg->info.rebuilt++)
			snprintf(rg->info.rebuild_why, sizeof(rg->info.rebuild_why),
				 "worker %u's table: %s", i, why);
	}
	region6_adopt(rg, w, own);
	region_release_read(rg->base, rg->info.written_by, sizeof(rg->info.written_by));
	region_release_write(rg->base, w->release);
	h->generation++;
	rg->info.generation = h->generation;
	return true;
}

static void
region_unmap(struct region *rg)
{
	size_t i;

	/* Before the mapping goes: the tables live in it, their counts in our heap. */
	for (i = 0; i < sizeof(rg->ct) / sizeof(rg->ct[0]); i++) {
		ct_destroy(rg->ct[i]);
		ct6_destroy(rg->ct6[i]);
	}
	if (rg->base)
		munmap(rg->base, rg->bytes);
	rg->base = NULL;
	memset(rg->ct, 0, sizeof(rg->ct));
	memset(rg->ct6, 0, sizeof(rg->ct6));
}

/*
 * A region laid out at 'tmp' and mapped, with empty tables; 'from' (the header of a region
 * being carried) gives it that region's clock base and generation, so session times keep
 * their meaning. The caller renames it into place.
 */
static int
region_make(struct region *rg, const char *tmp, const struct region_want *w,
	    const struct region_hdr *from, char *err, size_t errlen)
{
	struct region_hdr *h;
	struct statfs sf;
	uint64_t off[REGION_MAX_WORKERS], off6[REGION_MAX_WORKERS], soff, seed;
	size_t bytes, align = REGION_ALIGN;
	uint32_t i;
	int fd, ret;

	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -errno;
	}
	if (!fstatfs(fd, &sf) && sf.f_type == HUGETLBFS_MAGIC_) {
		rg->info.hugetlb = true;
		align = (size_t)sf.f_bsize;
	}
	bytes = region_layout(w, off, off6, &soff, align);
	/* Reserve the space now: a short tmpfs would otherwise SIGBUS a worker later. */
	ret = rg->info.hugetlb ? (ftruncate(fd, (off_t)bytes) ? errno : 0) :
	      posix_fallocate(fd, 0, (off_t)bytes);
	if (ret || region_map(rg, fd, bytes)) {
		snprintf(err, errlen, "%s: cannot reserve %zu bytes: %s", tmp, bytes,
			 strerror(ret ? ret : errno));
		close(fd);
		unlink(tmp);
		return -ENOSPC;
	}
	close(fd);
	h = rg->base;
	for (i = 0; i < w->nworkers; i++) {
		if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
			seed = 0x9e3779b97f4a7c15ull * (i + 1);
		rg->ct[i] = ct_region_init((uint8_t *)rg->base + off[i], w->capacity, w->nzones,
					   w->timeouts, seed);
		h->seed[i] = seed;
		h->table_off[i] = off[i];
		if (w->capacity6)
			rg->ct6[i] = ct6_region_init((uint8_t *)rg->base + off6[i], w->capacity6,
						     w->nzones, w->timeouts);
	}
	memcpy(h->magic, REGION_MAGIC, 8);
	h->format = REGION_FORMAT;
	h->hdr_bytes = sizeof(*h);
	h->layout = region_layout_version(w->capacity6);
	h->capacity6 = w->capacity6;
	h->nworkers = w->nworkers;
	h->capacity = w->capacity;
	h->nzones = w->nzones;
	h->file_bytes = bytes;
	h->generation = from ? from->generation : 1;
	h->clock_base = from ? from->clock_base : boot_seconds();
	h->node_ip = w->node_ip;
	h->snat_lo = w->snat_lo;
	h->snat_hi = w->snat_hi;
	h->slots_off = soff;
	h->sum = hdr_sum(h);
	region6_write(rg->base, w);
	region_release_write(rg->base, w->release);
	rg->info.generation = h->generation;
	return 0;
}

/* Put the made region at 'tmp' in place of 'path'; on failure nothing is left of it. */
static int
region_place(struct region *rg, const char *tmp, const char *path, char *err, size_t errlen)
{
	if (!rename(tmp, path))
		return 0;
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	region_unmap(rg);
	unlink(tmp);
	return -EIO;
}

/* A fresh region: made under a temporary name, laid out, then renamed into place. */
static int
region_create(struct region *rg, const char *path, const struct region_want *w, char *err,
	      size_t errlen)
{
	char tmp[320];
	int ret;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	ret = region_make(rg, tmp, w, NULL, err, errlen);
	return ret ? ret : region_place(rg, tmp, path, err, errlen);
}

/* Where a carried session goes (region_int.h): its old worker's table, or its owner's now. */
static int
region_dest_of(const struct ct_session *s, void *arg)
{
	const struct region_dest *o = arg;
	uint32_t z = s->t[0].zone, own, snat;
	bool in;
	int d;

	if (o->same >= 0)
		return o->same;
	if (z == 0 || z == CVS_ZONE_HOST)
		z = s->t[1].zone;
	if (z == 0 || z == CVS_ZONE_HOST || z > o->w->nzones)
		return -1;	/* no sandbox of this shape: nobody can own it */
	own = dp_slot_owner(z - 1u, o->w->nworkers);
	/*
	 * A tuple that answers to a SNAT port of the node reaches the worker whose share holds
	 * the port (dp_owner): carried only where that is the sandbox's worker too.
	 */
	for (d = 0; d < 2; d++) {
		const struct ct_tuple *t = &s->t[d];

		if (t->daddr != o->w->node_ip || (t->zone && t->proto == IPPROTO_ICMP_))
			continue;
		snat = dp_snat_owner(o->w->snat_lo, o->w->snat_hi, ntohs(t->dport),
				     o->w->nworkers, &in);
		if (in && snat != own)
			return -1;
	}
	return (int)own;
}

/*
 * The adopted region (shape *own) carried into a new one of this start's shape: sessions
 * into the table of the worker that owns them now, the zone records of the sandboxes both
 * shapes have, the clock base. The new file replaces the old one only when complete, so a
 * crash here leaves the old region for the next start. False with the reason in info.why.
 */
static bool
region_reshape(struct region *rg, const struct region_want *w, const struct region_want *own)
{
	struct region old = *rg;
	const struct region_hdr *oh = old.base;
	uint32_t k, before = 0, after = 0, nz = own->nzones < w->nzones ? own->nzones : w->nzones;
	char tmp[320], err[400];

	rg->base = NULL;
	memset(rg->ct, 0, sizeof(rg->ct));
	memset(rg->ct6, 0, sizeof(rg->ct6));
	snprintf(tmp, sizeof(tmp), "%s.new", rg->info.path);
	if (region_make(rg, tmp, w, oh, err, sizeof(err))) {
		snprintf(rg->info.why, sizeof(rg->info.why), "cannot carry it: %.170s", err);
		region_unmap(&old);
		return false;
	}
	for (k = 0; k < own->nworkers; k++) {
		struct region_dest o = { w, w->nworkers == own->nworkers ? (int)k : -1 };

		before += old.ct[k]->used;
		ct_region_carry(rg->ct, w->nworkers, old.ct[k], region_dest_of, &o);
		before += region6_carry(rg, w, old.ct6[k], &o);
	}
	rg->info.adopted6 = 0;
	for (k = 0; k < w->nworkers; k++) {
		ct_region_settle(rg->ct[k]);
		after += rg->ct[k]->used;
		if (!rg->ct6[k])
			continue;
		ct6_region_settle(rg->ct6[k]);
		rg->info.adopted6 += rg->ct6[k]->used;
		after += rg->ct6[k]->used;
	}
	memcpy((uint8_t *)rg->base + ((const struct region_hdr *)rg->base)->slots_off,
	       (const uint8_t *)old.base + oh->slots_off, (size_t)nz * sizeof(struct region_slot));
	region_unmap(&old);
	if (region_place(rg, tmp, rg->info.path, err, sizeof(err))) {
		snprintf(rg->info.why, sizeof(rg->info.why), "cannot carry it: %.170s", err);
		return false;
	}
	rg->info.carried_from[0] = own->nworkers;
	rg->info.carried_from[1] = own->capacity;
	rg->info.carried_from[2] = own->nzones;
	rg->info.adopted = after;
	rg->info.carry_dropped = before - after;
	return true;
}

/* Keep a refused region for a post-mortem: renamed, never deleted. */
static void
region_aside(const char *path, char *to, size_t len)
{
	struct stat st;
	int k = 0;

	do
		snprintf(to, len, "%s.refused-%lld-%d", path, (long long)time(NULL), k++);
	while (!lstat(to, &st) && k < 1000);
	if (rename(path, to))
		snprintf(to, len, "(could not move it: %s)", strerror(errno));
}

int
region_open(struct region *rg, const char *dir, const char *name,
	    const struct region_want *w, char *err, size_t errlen)
{
	const struct region_hdr *h;
	struct timespec t0, t1;
	char aside[340];
	int fd, ret;

	memset(rg, 0, sizeof(*rg));
	if (w->nworkers == 0 || w->nworkers > REGION_MAX_WORKERS) {
		snprintf(err, errlen, "%u workers: a region holds 1 to %u", w->nworkers,
			 REGION_MAX_WORKERS);
		return -EINVAL;
	}
	ret = cvs_private_dir(dir, "--runtime-dir ", err, errlen);
	if (ret)
		return ret;
	snprintf(rg->info.path, sizeof(rg->info.path), "%s/%s", dir, name);
	/* One process per region: a second instance on the same interface and directory. */
	snprintf(aside, sizeof(aside), "%s.lock", rg->info.path);
	rg->lock_fd = open(aside, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (rg->lock_fd < 0 || flock(rg->lock_fd, LOCK_EX | LOCK_NB)) {
		snprintf(err, errlen, "%s: %s", aside, errno == EWOULDBLOCK ?
			 "another cubevs-fp uses this session region" : strerror(errno));
		ret = -errno;
		if (rg->lock_fd >= 0)
			close(rg->lock_fd);
		rg->lock_fd = -1;
		return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = open(rg->info.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT) {
		snprintf(rg->info.why, sizeof(rg->info.why), "cannot open: %s", strerror(errno));
	} else if (fd >= 0) {
		struct region_want own;
		bool ok = region_adopt(rg, fd, w, &own);

		close(fd);
		if (ok && (region_same_shape(w, &own) || region_reshape(rg, w, &own)))
			goto done;
	}
	if (rg->info.why[0]) {
		region_unmap(rg);
		region_aside(rg->info.path, aside, sizeof(aside));
		rg->info.refused = 1;
		rg->info.adopted = rg->info.discarded_bad = rg->info.rebuilt = 0;
		rg->info.adopted6 = rg->info.refused6 = 0;
		rg->info.why6[0] = '\0';
		snprintf(rg->info.aside, sizeof(rg->info.aside), "%s", aside);
	}
	ret = region_create(rg, rg->info.path, w, err, errlen);
	if (ret) {
		close(rg->lock_fd);
		rg->lock_fd = -1;
		return ret;
	}
done:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rg->info.adopt_us = (uint32_t)((t1.tv_sec - t0.tv_sec) * 1000000 +
				       (t1.tv_nsec - t0.tv_nsec) / 1000);
	h = rg->base;
	rg->info.bytes = rg->bytes;
	rg->nzones = w->nzones;
	rg->slots = (struct region_slot *)((uint8_t *)rg->base + h->slots_off);
	rg->old_slots = calloc(w->nzones ? w->nzones : 1, sizeof(*rg->old_slots));
	if (rg->old_slots && !rg->info.refused && rg->info.generation > 1)
		memcpy(rg->old_slots, rg->slots, (size_t)w->nzones * sizeof(*rg->slots));
	return 0;
}

void
region_close(struct region *rg)
{
	region_unmap(rg);
	free(rg->old_slots);
	rg->old_slots = NULL;
	if (rg->lock_fd > 0)
		close(rg->lock_fd);
	rg->lock_fd = -1;
}

_Static_assert(sizeof(struct region_slot) == sizeof(uint64_t), "a slot is one store");

void
region_set_slots(struct region *rg, const struct region_slot *cur)
{
	uint32_t i;

	/* Slot by slot in one store each: a crash leaves each one old or new, never half. */
	for (i = 0; rg->base && i < rg->nzones; i++) {
		uint64_t v;

		memcpy(&v, &cur[i], sizeof(v));
		__atomic_store_n((uint64_t *)(void *)&rg->slots[i], v, __ATOMIC_RELAXED);
	}
}

void
region_set_slot(struct region *rg, uint32_t slot, const struct region_slot *cur)
{
	uint64_t v;

	if (!rg->base || slot >= rg->nzones)
		return;
	memcpy(&v, cur, sizeof(v));
	__atomic_store_n((uint64_t *)(void *)&rg->slots[slot], v, __ATOMIC_RELAXED);
}

uint32_t
region_slots_gone(const struct region *rg, const struct region_slot *cur, bool *gone)
{
	uint32_t i, n = 0;

	for (i = 0; rg->old_slots && i < rg->nzones; i++) {
		gone[i] = rg->old_slots[i].ip && (rg->old_slots[i].ip != cur[i].ip ||
			  rg->old_slots[i].id_hash != cur[i].id_hash);
		n += gone[i];
	}
	return n;
}
