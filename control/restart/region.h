/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The session region: one shared-memory file under --runtime-dir that holds every worker's
 * session table and the sandbox of each zone, so a restarted (or crashed) cubevs-fp adopts
 * the sessions of the one before it. SNAT ports need nothing more: a port is taken exactly
 * while a session holds it. The worker clock counts seconds from the clock base in the header
 * (CLOCK_BOOTTIME), so session timestamps keep their meaning in the next process.
 *
 * Adoption is validated, never trusted: the header (magic, format, checksum, layout version
 * of the session structures, node IP and SNAT range, size against the shape it states) and
 * then every table (ct_region_adopt()) are checked before a worker runs. A region of another
 * shape (worker count, sessions per worker, sandboxes: an upgrade whose defaults changed, or
 * an operator's new flags) is carried into a new one of this start's shape, each session to
 * the worker that owns it now. Each worker has a second block for its IPv6 table when the
 * start asks for one (capacity6); a region without (a release before IPv6 sessions were kept)
 * is carried into one with empty IPv6 tables, and a damaged IPv6 part, or one made for
 * another --node-ip6, gives empty IPv6 tables beside the adopted IPv4 ones (region6.c). A
 * region that fails is renamed aside and a fresh one is made; the caller logs region_info
 * (the module is plain libc so the unit tests and the fuzz target run it). Control thread
 * only.
 */
#ifndef CVS_REGION_H
#define CVS_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ct.h"
#include "ct6.h"

#define REGION_MAX_WORKERS	16
/* Where the header keeps the generation (tests change it alone). */
#define REGION_GENERATION_OFF	40

/* Which sandbox a zone (slot + 1) belonged to, so an adopted session meets the same one. */
struct region_slot {
	uint32_t ip;		/* network order; 0 = slot free */
	uint32_t id_hash;	/* of the sandbox id */
};

/* The shape and addressing a region is made for; a region of another is refused. */
struct region_want {
	uint32_t nworkers;
	uint32_t capacity;	/* sessions per worker */
	uint32_t nzones;	/* max sandboxes */
	uint32_t node_ip;
	uint16_t snat_lo;
	uint16_t snat_hi;
	uint32_t capacity6;	/* IPv6 sessions per worker; 0: no IPv6 block (the region of
				 * a release before them, which such a release reads) */
	uint8_t node_ip6[16];	/* what the IPv6 sessions are translated to */
	const uint32_t *timeouts;
	const char *release;	/* "0.2.0 (commit …)" recorded as the region's last user; NULL:
				 * cleared (a rollback to a release that records none) */
};

struct region_info {
	uint64_t generation;	/* 1 for a fresh region, +1 per adoption */
	uint64_t bytes;
	uint32_t adopted;	/* sessions adopted at start, both families */
	uint32_t adopted6;	/* of which IPv6 */
	uint32_t refused6;	/* IPv6 tables started empty, the IPv4 ones adopted: a damaged
				 * IPv6 record or table, another --node-ip6 (why6 says which) */
	uint32_t discarded_gone;	/* adopted, then dropped: their sandbox did not come back */
	uint32_t discarded_bad;	/* dropped by a rebuild: inconsistent or duplicate sessions */
	uint32_t rebuilt;	/* tables rebuilt from their sessions (a crash mid-update) */
	uint32_t refused;	/* regions refused at start (0 or 1) */
	uint32_t adopt_us;	/* time the checks took */
	uint32_t carried_from[3];	/* workers, sessions each, sandboxes of a region carried
					 * into this start's shape (an upgrade); 0 when not */
	uint32_t carry_dropped;	/* sessions the new shape could not take (see region_reshape) */
	bool hugetlb;		/* on hugetlbfs */
	char written_by[48];	/* the release that used the region last, as it recorded it;
				 * "0.1.0 or earlier" when none did; "" for a fresh region */
	char why[200];		/* why the region was refused, "" when not */
	char why6[200];		/* why the IPv6 tables were refused, "" when not */
	char rebuild_why[200];	/* the first failed check of a rebuilt table */
	char path[300];
	char aside[340];	/* where the refused region went */
};

struct region {
	void *base;
	size_t bytes;
	struct ct_table *ct[REGION_MAX_WORKERS];
	struct ct6_table *ct6[REGION_MAX_WORKERS];	/* NULL without an IPv6 block */
	struct region_slot *slots;	/* in the region: kept current */
	struct region_slot *old_slots;	/* as adopted, for region_slots_gone() */
	uint32_t nzones;
	int lock_fd;		/* flock of PATH.lock while we use the region */
	struct region_info info;
};

/*
 * Open or make the region of 'name' in 'dir' (made 0700 when missing; refused when it is not
 * a directory owned by us with no access for others). Adopts what it can; when it cannot,
 * says why in the log, moves the file aside and starts empty. Returns 0, or -errno with
 * 'err' when no region can be had (the caller may run with private tables).
 */
int region_open(struct region *rg, const char *dir, const char *name,
		const struct region_want *w, char *err, size_t errlen);
void region_close(struct region *rg);

/* Seconds since the region's clock base: where the worker clock starts. */
uint32_t region_clock_now(const struct region *rg);

/* The zone records: what the sandbox of each slot is now (the start, after the restore). */
void region_set_slots(struct region *rg, const struct region_slot *cur);
/* One zone record, in one store (a registration change: the one slot it touched). */
void region_set_slot(struct region *rg, uint32_t slot, const struct region_slot *cur);
/*
 * Compare the records the region came with to the registrations restored ('cur', nzones
 * entries): sets gone[z] for each slot whose sandbox is another or missing. Returns how many.
 */
uint32_t region_slots_gone(const struct region *rg, const struct region_slot *cur, bool *gone);

uint32_t region_id_hash(const char *id);
/* Recompute the header checksum of a region image (the fuzz target changes headers on purpose). */
void region_seal_header(void *base);

#endif /* CVS_REGION_H */
