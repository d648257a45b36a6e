/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the registrations are kept across restarts: the state file as a snapshot (state.h)
 * and the journal beside it (journal.h, PATH.journal). A change costs one journal record and
 * an fdatasync shared with the changes of other clients; a compaction writes the snapshot
 * again and starts the journal over once the journal has grown past the snapshot's size, from
 * the control loop, off the requests' path. At start the snapshot is read and the journal's
 * later records are applied over it, before anything on the node changes.
 *
 * It serves the registry's reg_store_ops (registry.h); plain libc and jansson, so the unit
 * tests run it against a registry of fakes.
 */
#ifndef CVS_STORE_H
#define CVS_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "journal.h"
#include "registry.h"

/* A journal smaller than this is never compacted, whatever the snapshot's size. */
#define STORE_COMPACT_MIN	(256u << 10)

struct store {
	char path[512];			/* the state file */
	struct journal j;		/* path + ".journal" */
	struct registry *reg;
	pthread_mutex_t compact_lock;	/* one compaction at a time; mark below */
	uint64_t mark;			/* the change the snapshot being written ends at */
	size_t snap_bytes;		/* the last snapshot's size: the journal's bound */
	uint64_t snap_seq;		/* the change the last snapshot ends at */
	uint64_t compactions;
	uint64_t compact_errors;
	uint64_t next_try_ms;		/* store_tick() after a failed compaction */
	bool open;
};

/* What store_load() read, for the start's log line. */
struct store_loaded {
	uint64_t snap_seq;	/* the change the state file includes */
	uint64_t last;		/* the last change of the two (where numbering goes on) */
	uint32_t replayed;	/* journal records applied over the snapshot */
	uint32_t skipped;	/* records the snapshot already included */
	bool journal_missing;
	bool torn;		/* a torn last record was left out: torn_why */
	char torn_why[160];
};

/* The journal beside a state file. */
void store_journal_path(const char *path, char *out, size_t len);

/*
 * Read the state file and apply its journal: *sandboxes and *holds (NULL: none) are what
 * reg_restore() and reg_holds_restore() take. A missing state file without a journal is a
 * first start. Anything that cannot be read back as it was written (a corrupt state file or
 * journal, a journal of another snapshot, a journal without its state file) is -EINVAL with a
 * message; neither file is touched.
 */
int store_load(const char *path, json_t **sandboxes, json_t **holds, struct store_loaded *info,
	       char *err, size_t errlen);

/*
 * What store_load() gave, written for a release without the journal (--rollback-to): one
 * snapshot without journalSeq, and the journal removed. Returns 0 or -errno with err.
 */
int store_fold(const char *path, json_t *sandboxes, json_t *holds, char *err, size_t errlen);

/*
 * Take over the state file for the restored registry: write the snapshot at 'seq' (from
 * store_loaded.last) and start an empty journal after it. This also proves the directory
 * writable before the first change needs it. Returns 0 or -errno with err.
 */
int store_open(struct store *s, const char *path, struct registry *reg, uint64_t seq,
	       char *err, size_t errlen);
/* A last compaction (the state file alone then holds everything), then the files closed. */
void store_close(struct store *s);

/*
 * What the registry's reg_store_ops call (main.c's counts its writes around them): one
 * journal record per change, and durable before the answer.
 */
void store_change(struct store *s, const struct reg_change *c);
int store_commit(struct store *s, char *err, size_t errlen);

/*
 * Snapshot and a fresh journal now; with upto != 0 only when the change 'upto' is not durable
 * yet. Returns 0 or -errno with err.
 */
int store_compact(struct store *s, uint64_t upto, char *err, size_t errlen);
/*
 * From the control loop: compact once the journal has outgrown its bound. Returns 1 when it
 * compacted, 0 when not due, -errno with err when it failed (tried again 10 s later).
 */
int store_tick(struct store *s, uint64_t now_ms, char *err, size_t errlen);
/* The journal's syncs and the slow ones (journal_sync_counts()); 0 while not open. */
void store_sync_counts(struct store *s, uint64_t *syncs, uint64_t *slow);

#endif /* CVS_STORE_H */
