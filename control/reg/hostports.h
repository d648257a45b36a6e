/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host-port policy on top of the round-robin allocator: which ports may be handed out
 * (never a reserved one, never one a kernel service of the node listens on), and holds that
 * give a sandbox id its host ports back when it is registered again soon after a DELETE
 * (pause → resume re-creates a sandbox under the same id). Owned by the registry and called
 * under its lock; no DPDK, so it runs in unit tests. Times are wall-clock seconds, passed in,
 * because holds are kept in the state file across restarts.
 */
#ifndef CVS_HOSTPORTS_H
#define CVS_HOSTPORTS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "config.h"
#include "portalloc.h"

#define HOSTPORTS_MAX_CONFLICTS	16	/* ports named in /readyz; the count is exact */

struct hp_hold {
	char id[65];
	uint16_t cport;
	uint16_t hport;
	uint64_t until;		/* wall-clock seconds */
	int32_t next;		/* the next hold in its id's chain, -1 at the end */
};

#define HOSTPORTS_ID_BUCKETS	1024u	/* chains of holds by id */

struct hostports_stats {
	uint64_t holds_reused;		/* a port given back to its sandbox id */
	uint64_t holds_expired;
	uint64_t holds_broken;		/* a hold given up because the range ran short */
	uint64_t scan_errors;		/* the kernel could not be asked (sock_diag) */
};

struct hostports {
	struct portalloc pa;
	uint32_t node_ip;		/* network order; listeners on it or a wildcard count */
	uint32_t hold_s;		/* 0 = no holds */
	uint64_t *reserved;		/* bit per port of the range */
	uint64_t *listening;		/* bit per port: kernel listener at the last scan */
	/*
	 * The holds, with two indexes so a registration never walks all of them: the hold of
	 * each port (hold_at, -1: none) and chains by id (id_head). min_until is at most the
	 * earliest 'until', so expiry looks at the holds only once one may have run out.
	 */
	struct hp_hold *holds;
	uint32_t nholds;
	uint32_t cap;
	int32_t *hold_at;
	int32_t id_head[HOSTPORTS_ID_BUCKETS];
	uint64_t min_until;
	/* Handed-out ports on which a kernel listener appeared (the node service is shadowed). */
	uint32_t nconflicts;
	uint16_t conflicts[HOSTPORTS_MAX_CONFLICTS];
	struct hostports_stats st;
};

int hostports_init(struct hostports *h, struct cvs_range range, const struct cvs_range *reserved,
		   uint32_t n_reserved, uint32_t node_ip, uint32_t hold_s);
void hostports_fini(struct hostports *h);
/* Replace the reserved ports and the hold time (ports already handed out stay). */
void hostports_configure(struct hostports *h, const struct cvs_range *reserved, uint32_t n,
			 uint32_t hold_s);

/*
 * Ask the kernel which ports of the range have a listener now (at start and on the
 * registry's tick; an allocation asks about its one candidate instead). Returns the number
 * of handed-out ports a listener shadows (>0: report it), or a negative errno.
 */
int hostports_scan(struct hostports *h);

/*
 * A host port for (id, cport): its held port if it has one, else the next free port of the
 * round robin that is neither reserved nor listened on, else the port of the oldest hold.
 * -ENOSPC when none is left.
 */
int hostports_get(struct hostports *h, const char *id, uint16_t cport, uint64_t now,
		  uint16_t *out);
/* Undo a hostports_get() of this request (all-or-nothing updates): no hold is made. */
void hostports_unget(struct hostports *h, uint16_t port);
/* Take a port recorded in the state file; its hold, if any, ends. */
int hostports_take(struct hostports *h, uint16_t port);
/*
 * A port asked for by number for sandbox 'id' (a CNI runtime's portMappings): taken when it is
 * free, or held for this id. -ERANGE outside the range; -EBUSY when it is handed out, held for
 * another id, reserved or listened on by a node process, with which in 'who'.
 */
int hostports_claim(struct hostports *h, const char *id, uint16_t port, char *who, size_t len);
uint16_t hostports_lo(const struct hostports *h);
uint16_t hostports_hi(const struct hostports *h);
/* The sandbox id no longer uses the port: held for hold_s, then free. */
void hostports_release(struct hostports *h, const char *id, uint16_t cport, uint16_t port,
		       uint64_t now);
/* End the holds that have run out. */
void hostports_expire(struct hostports *h, uint64_t now);

uint32_t hostports_free(const struct hostports *h);
uint32_t hostports_used(const struct hostports *h);
uint32_t hostports_size(const struct hostports *h);
/* Ports of the range with a kernel listener at the last scan (skipped by allocation). */
uint32_t hostports_listening(const struct hostports *h);

/*
 * The holds as a JSON array for the state file, and back (expired entries are dropped). With
 * an id: only that id's holds, without the "id" member (a journal record names it).
 */
json_t *hostports_holds_json(const struct hostports *h, const char *id);
int hostports_holds_restore(struct hostports *h, const json_t *arr, uint64_t now, char *err,
			    size_t errlen);

#endif /* CVS_HOSTPORTS_H */
