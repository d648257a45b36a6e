/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state file: every registration, written atomically (temp file, fsync, rename, fsync of
 * the directory) so a crash leaves either the old or the new file, never a torn one. Since
 * the journal (journal.h, store.h) it is the snapshot: "journalSeq" says up to which change
 * of the journal beside it it includes (absent: none, as in files from before the journal).
 */
#ifndef CVS_STATE_H
#define CVS_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define CVS_STATE_VERSION	1

/*
 * Take the state file for this process (an flock on PATH.lock), so two instances never write
 * the same file. Returns the lock fd or -errno with a message.
 */
int state_lock(const char *path, char *err, size_t errlen);

/*
 * Read the state file. A missing file is a first start: *sandboxes is an empty array. A file
 * that cannot be read or parsed, or has an unknown version, is an error (-EINVAL and a message
 * telling the operator what to do); it is never touched. *holds (when asked for) is the
 * host-port holds array, NULL when the file has none.
 */
int state_load(const char *path, json_t **sandboxes, json_t **holds, char *err, size_t errlen);
/* The same, and the snapshot's sequence number (0 when it has none). */
int state_load_seq(const char *path, json_t **sandboxes, json_t **holds, uint64_t *seq,
		   char *err, size_t errlen);

/*
 * The release journaled snapshots record as their writer ("writtenBy"), once at start; a
 * snapshot without the journal's sequence (a rollback's) records none.
 */
void state_set_release(const char *release);

/*
 * Write the registrations (an array as reg_state() renders it) and the host-port holds (as
 * reg_holds_state() renders them; NULL or empty: none). Returns 0 or -errno.
 */
int state_save(const char *path, json_t *sandboxes, json_t *holds, char *err, size_t errlen);
/* The same as a snapshot including the journal up to 'seq' (0: none); *bytes: its size. */
int state_save_seq(const char *path, json_t *sandboxes, json_t *holds, uint64_t seq,
		   size_t *bytes, char *err, size_t errlen);

#endif /* CVS_STATE_H */
