/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"
#include "store.h"

#define STORE_RETRY_MS	10000u

void
store_journal_path(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s.journal", path);
}

/* ---- reading back: the snapshot, then the journal's later records over it ---- */

/*
 * The registrations as the journal leaves them: by id, in the snapshot's order and then in
 * the order ids first appear. Built only when there is a record to apply, so a start from a
 * compacted state (the usual case) hands the snapshot on untouched.
 */
struct store_model {
	json_t *snap;		/* the snapshot's array */
	json_t *snap_holds;	/* its holds (NULL: none) */
	uint64_t snap_seq;
	json_t *recs;		/* id → record; NULL until the first record to apply */
	json_t *touched;	/* id → its holds after its last record */
	uint32_t replayed, skipped;
};

/* The snapshot by id; a record without an id is kept under a key no id has, for the restore. */
static int
store_model_build(struct store_model *m)
{
	char key[32];
	json_t *rec;
	size_t i;

	m->recs = json_object();
	m->touched = json_object();
	if (!m->recs || !m->touched)
		return -ENOMEM;
	json_array_foreach(m->snap, i, rec) {
		const char *id = json_string_value(json_object_get(rec, "sandboxID"));

		if (!id || json_object_get(m->recs, id)) {
			snprintf(key, sizeof(key), "\001%zu", i);
			id = key;
		}
		json_object_set(m->recs, id, rec);
	}
	return 0;
}

static int
store_apply(void *arg, uint64_t seq, const char *op, json_t *rec, char *why, size_t whylen)
{
	struct store_model *m = arg;
	json_t *sb = NULL, *holds = NULL;
	const char *id = NULL;

	if (!strcmp(op, "put")) {
		if (json_unpack(rec, "{s:I,s:s,s:o,s?o,s:s!}", "seq", &(json_int_t){ 0 }, "op", &op,
				"sandbox", &sb, "holds", &holds, "crc", &(const char *){ NULL }) ||
		    !json_is_object(sb) || !json_is_string(json_object_get(sb, "sandboxID"))) {
			snprintf(why, whylen, "a put record has \"sandbox\" (a state-file record) "
				 "and optionally \"holds\", nothing else");
			return -EINVAL;
		}
		id = json_string_value(json_object_get(sb, "sandboxID"));
	} else if (!strcmp(op, "delete")) {
		if (json_unpack(rec, "{s:I,s:s,s:s,s?o,s:s!}", "seq", &(json_int_t){ 0 }, "op",
				&op, "sandboxID", &id, "holds", &holds, "crc",
				&(const char *){ NULL })) {
			snprintf(why, whylen, "a delete record has \"sandboxID\" and optionally "
				 "\"holds\", nothing else");
			return -EINVAL;
		}
	} else {
		snprintf(why, whylen, "unknown op \"%.16s\"", op);
		return -EINVAL;
	}
	if (holds && !json_is_array(holds)) {
		snprintf(why, whylen, "\"holds\" must be an array");
		return -EINVAL;
	}
	/* Already in the snapshot: a crash came between writing it and starting over. */
	if (seq <= m->snap_seq) {
		m->skipped++;
		return 0;
	}
	if (!m->recs && store_model_build(m)) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	if (sb)
		json_object_set(m->recs, id, sb);
	else
		json_object_del(m->recs, id);
	json_object_set_new(m->touched, id, holds ? json_incref(holds) : json_array());
	m->replayed++;
	return 0;
}

/*
 * The holds after the journal: each touched id's last holds first (the newer ones win a port
 * two holds name), then the snapshot's holds of ids no record touched.
 */
static json_t *
store_model_holds(const struct store_model *m)
{
	json_t *out = json_array(), *arr, *h;
	const char *id;
	size_t i;

	json_object_foreach(m->touched, id, arr) {
		json_array_foreach(arr, i, h) {
			json_t *named = json_pack("{s:s}", "id", id);

			json_object_update(named, h);
			json_array_append_new(out, named);
		}
	}
	json_array_foreach(m->snap_holds, i, h) {
		const char *hid = json_string_value(json_object_get(h, "id"));

		if (!hid || !json_object_get(m->touched, hid))
			json_array_append(out, h);
	}
	return out;
}

static int
store_check_base(const char *path, const char *jpath, bool have_state,
		 const struct journal_info *ji, uint64_t snap_seq, char *err, size_t errlen)
{
	if (ji->missing)
		return 0;
	if (!have_state) {
		snprintf(err, errlen, "journal %s exists without its state file %s: put the state "
			 "file back, or move the journal away too to start without registrations",
			 jpath, path);
		return -EINVAL;
	}
	if (ji->base > snap_seq) {
		snprintf(err, errlen, "journal %s follows change %llu but state file %s includes "
			 "changes up to %llu only: the changes between are missing (is the state "
			 "file an older copy?); both were left as they are", jpath,
			 (unsigned long long)ji->base, path, (unsigned long long)snap_seq);
		return -EINVAL;
	}
	return 0;
}

static void
store_model_free(struct store_model *m)
{
	json_decref(m->snap);
	json_decref(m->snap_holds);
	json_decref(m->recs);
	json_decref(m->touched);
}

int
store_load(const char *path, json_t **sandboxes, json_t **holds, struct store_loaded *info,
	   char *err, size_t errlen)
{
	struct store_model m = { .snap = NULL };
	struct journal_info ji;
	char jpath[600];
	bool have_state = access(path, F_OK) == 0;
	int ret;

	memset(info, 0, sizeof(*info));
	*sandboxes = *holds = NULL;
	store_journal_path(path, jpath, sizeof(jpath));
	ret = state_load_seq(path, &m.snap, &m.snap_holds, &m.snap_seq, err, errlen);
	if (!ret)
		ret = journal_read(jpath, store_apply, &m, &ji, err, errlen);
	if (!ret)
		ret = store_check_base(path, jpath, have_state, &ji, m.snap_seq, err, errlen);
	if (ret) {
		store_model_free(&m);
		return ret;
	}
	info->snap_seq = m.snap_seq;
	info->last = ji.last > m.snap_seq ? ji.last : m.snap_seq;
	info->replayed = m.replayed;
	info->skipped = m.skipped;
	info->journal_missing = ji.missing;
	info->torn = ji.torn;
	snprintf(info->torn_why, sizeof(info->torn_why), "%s", ji.torn_why);
	if (m.recs) {
		const char *id;
		json_t *rec;

		*sandboxes = json_array();
		json_object_foreach(m.recs, id, rec)
			json_array_append(*sandboxes, rec);
		*holds = store_model_holds(&m);
	} else {
		*sandboxes = json_incref(m.snap);
		*holds = json_incref(m.snap_holds);
	}
	store_model_free(&m);
	return 0;
}

/* Here rather than in the rollback: the journal's file is this module's alone. */
int
store_fold(const char *path, json_t *sandboxes, json_t *holds, char *err, size_t errlen)
{
	char jpath[600];
	int ret;

	ret = state_save(path, sandboxes, holds, err, errlen);
	if (ret)
		return ret;
	store_journal_path(path, jpath, sizeof(jpath));
	if (unlink(jpath) && errno != ENOENT) {
		snprintf(err, errlen, "cannot remove %.300s: %s", jpath, strerror(errno));
		return -errno;
	}
	return 0;
}

/* ---- writing: a record per change, durable before the answer ---- */

/*
 * The last record this thread wrote: the change a request made is on the thread that
 * answers it (the API handler), and its answer waits for that record, not for the
 * journal's last one. Waiting for the last one, a request whose record the sync in flight
 * already carried waited for one more sync whenever another change came in between, and
 * on a busy CPU one usually did: the unlock wakes the next request, which runs its change
 * before this thread gets back to its commit.
 */
static __thread uint64_t store_mine;

void
store_change(struct store *s, const struct reg_change *c)
{
	json_t *f;

	if (!s->open)
		return;
	if (c->deleted)
		f = json_pack("{s:s,s:O}", "sandboxID", c->sb->id, "holds", c->holds);
	else
		f = json_pack("{s:O,s:O}", "sandbox", c->rec, "holds", c->holds);
	/* Without its fields (out of memory) the change is numbered and the journal goes bad. */
	store_mine = journal_append(&s->j, c->deleted ? "delete" : "put", f);
	json_decref(f);
}

int
store_commit(struct store *s, char *err, size_t errlen)
{
	uint64_t upto;
	int ret;

	if (!s->open)
		return 0;
	upto = store_mine;
	ret = journal_sync(&s->j, upto, err, errlen);
	/*
	 * The journal cannot take it (full, read-only, an earlier failure): a snapshot carries
	 * every change so far, and when it cannot be written either the answer says why.
	 */
	if (ret)
		ret = store_compact(s, upto, err, errlen);
	return ret;
}

/* Under the registry lock, right after the snapshot's render: where the snapshot ends. */
static void
store_mark(void *arg)
{
	struct store *s = arg;

	s->mark = journal_mark(&s->j);
}

int
store_compact(struct store *s, uint64_t upto, char *err, size_t errlen)
{
	json_t *arr, *holds = NULL;
	size_t bytes = 0;
	int ret;

	pthread_mutex_lock(&s->compact_lock);
	if (upto && journal_durable(&s->j) >= upto) {
		pthread_mutex_unlock(&s->compact_lock);
		return 0;
	}
	arr = reg_state_at(s->reg, &holds, store_mark, s);
	ret = state_save_seq(s->path, arr, holds, s->mark, &bytes, err, errlen);
	json_decref(arr);
	json_decref(holds);
	if (ret) {
		journal_settle(&s->j, s->mark, false);
	} else {
		s->snap_bytes = bytes;
		s->snap_seq = s->mark;
		ret = journal_switch(&s->j, s->mark, err, errlen);
	}
	if (ret)
		s->compact_errors++;
	else
		s->compactions++;
	pthread_mutex_unlock(&s->compact_lock);
	return ret;
}

int
store_tick(struct store *s, uint64_t now_ms, char *err, size_t errlen)
{
	uint64_t bound = s->snap_bytes > STORE_COMPACT_MIN ? s->snap_bytes : STORE_COMPACT_MIN;
	int ret;

	if (!s->open || now_ms < s->next_try_ms || journal_bytes(&s->j) < bound)
		return 0;
	ret = store_compact(s, 0, err, errlen);
	if (ret) {
		s->next_try_ms = now_ms + STORE_RETRY_MS;
		return ret;
	}
	return 1;
}

int
store_open(struct store *s, const char *path, struct registry *reg, uint64_t seq, char *err,
	   size_t errlen)
{
	char jpath[600];
	json_t *arr, *holds = NULL;
	size_t bytes = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
	store_journal_path(path, jpath, sizeof(jpath));
	journal_init(&s->j, jpath);
	pthread_mutex_init(&s->compact_lock, NULL);
	s->reg = reg;
	arr = reg_state_at(reg, &holds, NULL, NULL);
	ret = state_save_seq(path, arr, holds, seq, &bytes, err, errlen);
	json_decref(arr);
	json_decref(holds);
	if (!ret)
		ret = journal_start(&s->j, seq, err, errlen);
	if (ret) {
		journal_fini(&s->j);
		pthread_mutex_destroy(&s->compact_lock);
		return ret;
	}
	s->snap_bytes = bytes;
	s->snap_seq = seq;
	s->open = true;
	return 0;
}

void
store_close(struct store *s)
{
	char err[512];

	if (!s->open)
		return;
	/* Failing here loses nothing: the journal still holds what the snapshot lacks. */
	if (journal_last(&s->j) > s->snap_seq)
		store_compact(s, 0, err, sizeof(err));
	s->open = false;
	journal_fini(&s->j);
	pthread_mutex_destroy(&s->compact_lock);
}

void
store_sync_counts(struct store *s, uint64_t *syncs, uint64_t *slow)
{
	*syncs = *slow = 0;
	if (s->open)
		journal_sync_counts(&s->j, syncs, slow);
}
