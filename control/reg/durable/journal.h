/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The journal beside the state file: one line per acknowledged change, so a change costs an
 * append and an fdatasync instead of a rewrite of every registration. The state file is the
 * snapshot; the journal holds what happened after it (docs/architecture.md, "Registrations
 * and the state file").
 *
 * Format: a header line {"format":"cubevs-fp-journal","version":1,"base":S} (S: the last
 * sequence number the snapshot it follows includes), then records, one JSON object per line,
 * numbered base+1, base+2, ...: {"seq":N,"op":...,...,"crc":"xxxxxxxx"}, the CRC-32 of the
 * line's bytes before ,"crc". Zeroes follow the last record: the file is written ahead in
 * zeroes (16 KiB at a time) and records go into that room, so that a sync does not also
 * write the file's new length. The file only ever takes records after its last one or is
 * replaced whole (temp file, fsync, rename), so a crash leaves a good prefix and at most one
 * torn record.
 *
 * Writers number their change under the caller's ordering lock (the registry's), and make it
 * durable later with journal_sync() (group commit: one fdatasync covers every change written
 * before it). After a failed write nothing more is written to that file: the next compaction
 * (journal_mark() ... journal_switch()) replaces it, carrying every change. Plain libc and
 * jansson, so the unit tests run it.
 */
#ifndef CVS_JOURNAL_H
#define CVS_JOURNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define JOURNAL_FORMAT		"cubevs-fp-journal"
#define JOURNAL_VERSION		1

struct journal {
	pthread_mutex_t lock;		/* everything below */
	pthread_mutex_t sync_lock;	/* one fdatasync or switch at a time */
	pthread_cond_t synced;		/* a leader's sync ended (journal_sync()) */
	bool syncing;			/* a leader is syncing or about to */
	char path[512];
	int fd;			/* -1: not open */
	bool fd_ok;		/* every numbered change so far is written to fd */
	uint64_t seq;		/* the last change numbered */
	uint64_t durable;	/* every change up to here is on disk */
	uint64_t bytes;		/* length of the file's good prefix */
	uint64_t room;		/* the file's length: zeroes after the prefix */
	/* From journal_mark() to journal_switch(): the lines the new file must carry. */
	bool collecting;
	bool tail_lost;		/* out of memory while collecting: the switch must fail */
	char *tail;
	size_t tail_len, tail_cap;
	uint64_t syncs;		/* fdatasync calls, for the figures */
	uint64_t slow_syncs;	/* of them, those that took JOURNAL_SLOW_SYNC_NS or more */
};

/* What journal_read() found. */
struct journal_info {
	bool missing;		/* no journal file */
	uint64_t base;		/* the header's */
	uint64_t last;		/* the last good record's sequence (base when none) */
	uint32_t records;	/* good records */
	uint64_t bytes;		/* the good prefix */
	bool torn;		/* a torn last record was left out */
	char torn_why[160];
};

/* Called for every good record in order; non-zero (with err) stops the read as corrupt. */
typedef int (*journal_record_fn)(void *arg, uint64_t seq, const char *op, json_t *rec,
				 char *err, size_t errlen);

/*
 * Read the journal at path: the header, then every record to fn. A torn last record (a crash
 * in the middle of an append, never acknowledged) is left out and reported in info; a bad
 * header, a bad record followed by more, or a sequence out of order is an error (-EINVAL and
 * a message; the file is not touched). A missing file is info->missing and 0.
 */
int journal_read(const char *path, journal_record_fn fn, void *arg, struct journal_info *info,
		 char *err, size_t errlen);

void journal_init(struct journal *j, const char *path);
void journal_fini(struct journal *j);

/*
 * Start the journal over at 'base' (the snapshot just written includes everything up to
 * it): the file is replaced by a header alone and opened for appends. Returns 0 or -errno.
 */
int journal_start(struct journal *j, uint64_t base, char *err, size_t errlen);

/*
 * Number a change and write its line: {"seq":N,"op":op, the members of 'fields'}. Call it
 * under the lock that orders the changes. Returns N; the line is written only while the file
 * is good (journal_sync() reports the rest). fields NULL (the caller ran out of memory) numbers
 * the change and makes the file bad, so a compaction carries it.
 */
uint64_t journal_append(struct journal *j, const char *op, json_t *fields);

/*
 * Make every change up to 'upto' durable with one fdatasync shared by all who wait. Returns 0,
 * or -EIO when the file went bad (a compaction must carry the changes), -errno with err.
 */
int journal_sync(struct journal *j, uint64_t upto, char *err, size_t errlen);

/*
 * Compaction. journal_mark(), under the ordering lock while the snapshot is rendered, returns
 * the snapshot's sequence and collects every later line. Once that snapshot is on disk,
 * journal_switch() replaces the file by a header at that base plus the collected lines, or
 * journal_settle() (the switch was not possible) records that the snapshot is durable.
 */
uint64_t journal_mark(struct journal *j);
int journal_switch(struct journal *j, uint64_t base, char *err, size_t errlen);
void journal_settle(struct journal *j, uint64_t base, bool snapshot_written);

/* Readers for the store. */
uint64_t journal_last(struct journal *j);
uint64_t journal_durable(struct journal *j);
bool journal_good(struct journal *j);
uint64_t journal_bytes(struct journal *j);
/*
 * The journal's fdatasync calls and the slow ones among them: a change's answer waits for one,
 * so a disk that stalls shows here before anywhere else (cubevs_state_syncs_total).
 */
#define JOURNAL_SLOW_SYNC_NS	10000000ull
void journal_sync_counts(struct journal *j, uint64_t *syncs, uint64_t *slow);

/* The CRC-32 (IEEE) of a buffer, as in the records. */
uint32_t journal_crc32(const void *buf, size_t len);

#endif /* CVS_JOURNAL_H */
