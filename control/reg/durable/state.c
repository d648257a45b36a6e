/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "cvs_common.h"
#include "state.h"

#define HOLDS_KEY	"hostPortHolds"
#define SEQ_KEY		"journalSeq"
#define BY_KEY		"writtenBy"
#define STATE_FORMAT	"cubevs-fp-state"
#define STATE_MAX_BYTES	(64u << 20)

/* What a journaled snapshot says wrote it (state_set_release); "" writes nothing. */
static char state_release[64];

void
state_set_release(const char *release)
{
	snprintf(state_release, sizeof(state_release), "%s", release);
}

/*
 * A file this build cannot read: when a release that records itself wrote it, the message
 * says which, and how to go back (the writer's --rollback-to).
 */
static void
state_newer_hint(json_t *root, char *err, size_t errlen)
{
	json_t *by = json_object_get(root, BY_KEY);
	size_t l = strlen(err);

	if (json_is_string(by) && l < errlen)
		snprintf(err + l, errlen - l, " (written by cubevs-fp %.48s: if that is a newer "
			 "release, run its 'cubevs-fp -- FLAGS --rollback-to <this release>' first, "
			 "docs/operations.md)", json_string_value(by));
}

static void
state_dir_of(const char *path, char *dir, size_t len)
{
	char tmp[512];

	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(dir, len, "%s", dirname(tmp));
}

int
state_lock(const char *path, char *err, size_t errlen)
{
	char lock[512], dir[512];
	int fd;

	snprintf(lock, sizeof(lock), "%s.lock", path);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		state_dir_of(path, dir, sizeof(dir));
		snprintf(err, errlen, "cannot create %s: %s%s", lock, strerror(e),
			 e == ENOENT ? " (create the directory or give --state-file)" : "");
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		snprintf(err, errlen, "state file %s is in use by another cubevs-fp (lock %s "
			 "held); give each instance its own --state-file", path, lock);
		close(fd);
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	return fd;
}

int
state_load(const char *path, json_t **sandboxes, json_t **holds, char *err, size_t errlen)
{
	return state_load_seq(path, sandboxes, holds, NULL, err, errlen);
}

/* The file's JSON: 0 with *root NULL when there is no file (a first start), else -errno. */
static int
state_read(const char *path, json_t **root, char *err, size_t errlen)
{
	json_error_t jerr;
	struct stat st;

	*root = NULL;
	if (stat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot read state file %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > STATE_MAX_BYTES) {
		snprintf(err, errlen, "state file %s is not a regular file under %u MiB", path,
			 STATE_MAX_BYTES >> 20);
		return -EINVAL;
	}
	*root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!*root) {
		snprintf(err, errlen, "state file %s is corrupt (line %d column %d: %s); it was "
			 "left as it is: repair it, or move it away to start without "
			 "registrations", path, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	return 0;
}

/* Format and version: what tells our state file from another file, or a newer release's. */
static int
state_check_head(const char *path, json_t *root, char *err, size_t errlen)
{
	json_t *ver = json_object_get(root, "version");
	json_t *arr = json_object_get(root, "sandboxes");

	if (!json_is_object(root) ||
	    !json_is_string(json_object_get(root, "format")) ||
	    strcmp(json_string_value(json_object_get(root, "format")), STATE_FORMAT) ||
	    !json_is_integer(ver) || !json_is_array(arr)) {
		snprintf(err, errlen, "state file %s is not a cubevs-fp state file (want "
			 "{\"format\":\"%s\",\"version\":%d,\"sandboxes\":[...]}); it was left "
			 "as it is", path, STATE_FORMAT, CVS_STATE_VERSION);
		return -EINVAL;
	}
	if (json_integer_value(ver) != CVS_STATE_VERSION) {
		snprintf(err, errlen, "state file %s has version %lld, this cubevs-fp reads "
			 "version %d; it was left as it is", path,
			 (long long)json_integer_value(ver), CVS_STATE_VERSION);
		state_newer_hint(root, err, errlen);
		return -EINVAL;
	}
	return 0;
}

/*
 * The fields beside the sandboxes: the holds and the journal's sequence, given to the caller
 * as they are checked, and no field this build does not know.
 */
static int
state_check_fields(const char *path, json_t *root, json_t **holds, uint64_t *seq, char *err,
		   size_t errlen)
{
	const char *key;
	json_t *v;

	v = json_object_get(root, HOLDS_KEY);
	if (v && !json_is_array(v)) {
		snprintf(err, errlen, "state file %s: \"%s\" must be an array; it was left as it "
			 "is", path, HOLDS_KEY);
		return -EINVAL;
	}
	if (holds && v)
		*holds = json_incref(v);
	v = json_object_get(root, SEQ_KEY);
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0)) {
		snprintf(err, errlen, "state file %s: \"%s\" must be a sequence number; it was "
			 "left as it is", path, SEQ_KEY);
		goto bad;
	}
	if (seq && v)
		*seq = (uint64_t)json_integer_value(v);
	json_object_foreach(root, key, v) {
		if (strcmp(key, "format") && strcmp(key, "version") && strcmp(key, "sandboxes") &&
		    strcmp(key, HOLDS_KEY) && strcmp(key, SEQ_KEY) && strcmp(key, BY_KEY)) {
			snprintf(err, errlen, "state file %s has an unknown field \"%.64s\"; it "
				 "was left as it is", path, key);
			state_newer_hint(root, err, errlen);
			goto bad;
		}
	}
	return 0;
bad:
	if (holds) {
		json_decref(*holds);
		*holds = NULL;
	}
	return -EINVAL;
}

int
state_load_seq(const char *path, json_t **sandboxes, json_t **holds, uint64_t *seq, char *err,
	       size_t errlen)
{
	json_t *root;
	int ret;

	*sandboxes = NULL;
	if (holds)
		*holds = NULL;
	if (seq)
		*seq = 0;
	ret = state_read(path, &root, err, errlen);
	if (ret)
		return ret;
	if (!root) {
		*sandboxes = json_array();
		return 0;
	}
	ret = state_check_head(path, root, err, errlen);
	if (!ret)
		ret = state_check_fields(path, root, holds, seq, err, errlen);
	if (!ret)
		*sandboxes = json_incref(json_object_get(root, "sandboxes"));
	json_decref(root);
	return ret;
}

int
state_save(const char *path, json_t *sandboxes, json_t *holds, char *err, size_t errlen)
{
	return state_save_seq(path, sandboxes, holds, 0, NULL, err, errlen);
}

int
state_save_seq(const char *path, json_t *sandboxes, json_t *holds, uint64_t seq,
	       size_t *bytes, char *err, size_t errlen)
{
	char *text, *file = NULL;
	json_t *root;
	int ret;

	root = json_pack("{s:s,s:i,s:O}", "format", STATE_FORMAT, "version", CVS_STATE_VERSION,
			 "sandboxes", sandboxes);
	/*
	 * Written only when there are holds: a file without them stays readable by a build
	 * from before holds existed, so a downgrade keeps its registrations.
	 */
	if (root && json_array_size(holds))
		json_object_set(root, HOLDS_KEY, holds);
	/* Likewise a node that never changed anything since the journal came keeps no seq. */
	if (root && seq)
		json_object_set_new(root, SEQ_KEY, json_integer((json_int_t)seq));
	/* With the journal's seq only: a file without either is what 0.1.0 reads (rollback). */
	if (root && seq && state_release[0])
		json_object_set_new(root, BY_KEY, json_string(state_release));
	text = root ? json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	/* A text file ends with a newline; json_dumps leaves it out. */
	if (!text || asprintf(&file, "%s\n", text) < 0) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	free(text);
	if (bytes)
		*bytes = strlen(file);
	ret = cvs_file_replace(path, file, strlen(file), 0600, err, errlen);
	free(file);
	return ret;
}
