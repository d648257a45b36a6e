/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cvs_common.h"
#include "journal.h"

#define JOURNAL_MAX_BYTES	(256u << 20)
#define CRC_SUFFIX_LEN		18	/* ,"crc":"xxxxxxxx"} */
#define JOURNAL_ROOM		(16u << 10)

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void
crc_init(void)
{
	uint32_t i, k, c;

	for (i = 0; i < 256; i++) {
		for (c = i, k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t
journal_crc32(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t c = 0xffffffffu;

	pthread_once(&crc_once, crc_init);
	while (len--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* ---- reading ---- */

static int
journal_slurp(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret = 0;

	*buf = NULL;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > JOURNAL_MAX_BYTES) {
		snprintf(err, errlen, "journal %s is not a regular file under %u MiB", path,
			 JOURNAL_MAX_BYTES >> 20);
		close(fd);
		return -EINVAL;
	}
	*buf = malloc((size_t)st.st_size + 1);
	*len = 0;
	while (*buf && *len < (size_t)st.st_size) {
		ssize_t n = read(fd, *buf + *len, (size_t)st.st_size - *len);

		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		*len += (size_t)n;
	}
	close(fd);
	if (!*buf || ret) {
		snprintf(err, errlen, "cannot read journal %s: %s", path,
			 *buf ? strerror(-ret) : "out of memory");
		free(*buf);
		*buf = NULL;
		return ret ? ret : -ENOMEM;
	}
	return 0;
}

/* The header line; 0 with *base, or -EINVAL with why. */
static int
journal_header(const char *line, size_t len, uint64_t *base, char *why, size_t whylen)
{
	json_t *h = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	json_int_t b = -1, v = -1;
	const char *fmt = NULL;
	int ret = 0;

	if (!h || json_unpack(h, "{s:s,s:I,s:I!}", "format", &fmt, "version", &v, "base", &b) ||
	    strcmp(fmt, JOURNAL_FORMAT) || b < 0) {
		snprintf(why, whylen, "not a cubevs-fp journal (want a first line "
			 "{\"format\":\"%s\",\"version\":%d,\"base\":N})", JOURNAL_FORMAT,
			 JOURNAL_VERSION);
		ret = -EINVAL;
	} else if (v != JOURNAL_VERSION) {
		snprintf(why, whylen, "journal version %lld, this cubevs-fp reads version %d",
			 (long long)v, JOURNAL_VERSION);
		ret = -EINVAL;
	}
	*base = (uint64_t)b;
	json_decref(h);
	return ret;
}

/* One record line (without its newline): its CRC, its JSON, seq and op. */
static json_t *
journal_record(const char *line, size_t len, uint64_t *seq, const char **op, char *why,
	       size_t whylen)
{
	char hex[9];
	json_int_t s = -1;
	json_t *rec;

	if (len <= CRC_SUFFIX_LEN || memcmp(line + len - CRC_SUFFIX_LEN, ",\"crc\":\"", 8) ||
	    memcmp(line + len - 2, "\"}", 2)) {
		snprintf(why, whylen, "no CRC at its end");
		return NULL;
	}
	snprintf(hex, sizeof(hex), "%08" PRIx32,
		 journal_crc32(line, len - CRC_SUFFIX_LEN));
	if (memcmp(hex, line + len - 10, 8)) {
		snprintf(why, whylen, "CRC mismatch");
		return NULL;
	}
	rec = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	if (!rec || json_unpack(rec, "{s:I,s:s}", "seq", &s, "op", op) || s < 1) {
		snprintf(why, whylen, "not a record with \"seq\" and \"op\"");
		json_decref(rec);
		return NULL;
	}
	*seq = (uint64_t)s;
	return rec;
}

/* Only NUL bytes (a file extended by a crash without its data) or nothing. */
static bool
journal_blank(const char *p, size_t n)
{
	while (n && *p == '\0') {
		p++;
		n--;
	}
	return n == 0;
}

static int
journal_lines(const char *path, const char *buf, size_t len, size_t pos, journal_record_fn fn,
	      void *arg, struct journal_info *info, char *err, size_t errlen)
{
	uint64_t line_no = 1;

	/* The zeroes after the last record are the room written ahead (journal_room_for()). */
	while (pos < len && !journal_blank(buf + pos, len - pos)) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;
		char why[160] = "";
		const char *op = NULL;
		uint64_t seq = 0;
		json_t *rec;
		int ret;

		line_no++;
		rec = nl ? journal_record(buf + pos, end - pos, &seq, &op, why, sizeof(why)) :
			   NULL;
		if (rec && seq != info->last + 1) {
			snprintf(why, sizeof(why), "sequence %" PRIu64 " after %" PRIu64, seq,
				 info->last);
			json_decref(rec);
			rec = NULL;
		}
		if (!rec) {
			/* A cut-short append is the last thing in the file; anything else is damage. */
			if (!nl || journal_blank(nl + 1, len - end - 1)) {
				info->torn = true;
				snprintf(info->torn_why, sizeof(info->torn_why), "%zu bytes of a "
					 "record after sequence %" PRIu64 " left out (%s)", len - pos,
					 info->last, nl ? why : "no end of line");
				return 0;
			}
			snprintf(err, errlen, "journal %s is corrupt: line %" PRIu64 " (byte %zu): "
				 "%s, and %zu bytes follow it; it was left as it is", path, line_no,
				 pos, why, len - end - 1);
			return -EINVAL;
		}
		ret = fn(arg, seq, op, rec, why, sizeof(why));
		json_decref(rec);
		if (ret) {
			snprintf(err, errlen, "journal %s: line %" PRIu64 " (sequence %" PRIu64 "): "
				 "%s; it was left as it is", path, line_no, seq, why);
			return -EINVAL;
		}
		info->last = seq;
		info->records++;
		pos = end + 1;
		info->bytes = pos;
	}
	return 0;
}

int
journal_read(const char *path, journal_record_fn fn, void *arg, struct journal_info *info,
	     char *err, size_t errlen)
{
	const char *nl;
	char why[200];
	size_t len = 0;
	char *buf;
	int ret;

	memset(info, 0, sizeof(*info));
	ret = journal_slurp(path, &buf, &len, err, errlen);
	if (ret == -ENOENT) {
		info->missing = true;
		return 0;
	}
	if (ret) {
		if (ret != -EINVAL && ret != -ENOMEM)
			snprintf(err, errlen, "cannot read journal %s: %s", path, strerror(-ret));
		return ret;
	}
	/* The header is written with the file, atomically: a bad one is not a torn append. */
	nl = memchr(buf, '\n', len);
	ret = nl ? journal_header(buf, (size_t)(nl - buf), &info->base, why, sizeof(why)) :
		   -EINVAL;
	if (!nl)
		snprintf(why, sizeof(why), "no header line");
	if (ret) {
		snprintf(err, errlen, "journal %s: %s; it was left as it is", path, why);
		free(buf);
		return ret;
	}
	info->last = info->base;
	info->bytes = (size_t)(nl - buf) + 1;
	ret = journal_lines(path, buf, len, info->bytes, fn, arg, info, err, errlen);
	free(buf);
	return ret;
}

/* ---- writing ---- */

void
journal_init(struct journal *j, const char *path)
{
	memset(j, 0, sizeof(*j));
	pthread_mutex_init(&j->lock, NULL);
	pthread_mutex_init(&j->sync_lock, NULL);
	pthread_cond_init(&j->synced, NULL);
	snprintf(j->path, sizeof(j->path), "%s", path);
	j->fd = -1;
}

void
journal_fini(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	free(j->tail);
	j->tail = NULL;
	pthread_mutex_destroy(&j->lock);
	pthread_mutex_destroy(&j->sync_lock);
	pthread_cond_destroy(&j->synced);
}

/*
 * The file is written ahead of its records in zeroes, JOURNAL_ROOM at a time, and a record
 * goes into that room: an fdatasync then writes the record's page and flushes, while an
 * append that grows the file also has to write the inode (ext4 without a journal: one more
 * synchronous write per sync) or commit the file system's journal (ext4 with one). Under
 * 20 concurrent clients the sync was most of a change's time. A reader stops at the zeroes.
 */
static size_t
journal_room_for(size_t used)
{
	return (used / JOURNAL_ROOM + 1) * JOURNAL_ROOM;
}

static int
journal_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Room for len more bytes; when the disk has none, the record itself finds out. */
static void
journal_make_room(struct journal *j, size_t len)
{
	static const char zero[JOURNAL_ROOM];
	uint64_t want = journal_room_for(j->bytes + len);

	while (j->room < want && !journal_pwrite(j->fd, zero, JOURNAL_ROOM, j->room))
		j->room += JOURNAL_ROOM;
}

/*
 * Write the file 'path' (j->path, or the next journal of a switch) as a header at 'base'
 * plus 'extra' and its room, and make it j's: records go after 'extra' from now on.
 */
static int
journal_replace(struct journal *j, const char *path, uint64_t base, const char *extra,
		size_t extra_len, char *err, size_t errlen)
{
	char head[160];
	int hl = snprintf(head, sizeof(head), "{\"format\":\"%s\",\"version\":%d,\"base\":%"
			  PRIu64 "}\n", JOURNAL_FORMAT, JOURNAL_VERSION, base);
	size_t used = (size_t)hl + extra_len, size = journal_room_for(used);
	char *file = calloc(1, size);
	int ret, fd;

	if (!file) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(file, head, (size_t)hl);
	if (extra_len)
		memcpy(file + hl, extra, extra_len);
	ret = cvs_file_replace(path, file, size, 0600, err, errlen);
	free(file);
	if (ret)
		return ret;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open journal %s: %s", path, strerror(-ret));
		return ret;
	}
	if (j->fd >= 0)
		close(j->fd);
	j->fd = fd;
	j->fd_ok = true;
	j->bytes = used;
	j->room = size;
	return 0;
}

static void
journal_tail_drop(struct journal *j)
{
	free(j->tail);
	j->tail = NULL;
	j->tail_len = j->tail_cap = 0;
	j->tail_lost = false;
	j->collecting = false;
}

int
journal_start(struct journal *j, uint64_t base, char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&j->sync_lock);
	pthread_mutex_lock(&j->lock);
	ret = journal_replace(j, j->path, base, NULL, 0, err, errlen);
	if (!ret) {
		journal_tail_drop(j);
		j->seq = j->durable = base;
	}
	pthread_mutex_unlock(&j->lock);
	pthread_mutex_unlock(&j->sync_lock);
	return ret;
}

/* The line of a change, with its CRC, newline-terminated; NULL when out of memory. */
static char *
journal_line(uint64_t seq, const char *op, json_t *fields, size_t *len)
{
	json_t *o = json_pack("{s:I,s:s}", "seq", (json_int_t)seq, "op", op);
	char *body, *line = NULL;
	size_t n;

	if (o && fields)
		json_object_update(o, fields);
	body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!body)
		return NULL;
	n = strlen(body) - 1;	/* without its closing brace */
	if (asprintf(&line, "%.*s,\"crc\":\"%08" PRIx32 "\"}\n", (int)n, body,
		     journal_crc32(body, n)) < 0)
		line = NULL;
	free(body);
	if (line)
		*len = strlen(line);
	return line;
}

static void
journal_collect(struct journal *j, const char *line, size_t len)
{
	if (j->tail_len + len > j->tail_cap) {
		size_t cap = (j->tail_cap ? j->tail_cap * 2 : 4096) + len;
		char *n = realloc(j->tail, cap);

		if (!n) {
			j->tail_lost = true;
			return;
		}
		j->tail = n;
		j->tail_cap = cap;
	}
	memcpy(j->tail + j->tail_len, line, len);
	j->tail_len += len;
}

/*
 * A line into the room. One that could not be written leaves the file as it was (truncated
 * back when a write went half way) and nothing more is written to it: a gap in the middle
 * would make the whole journal unreadable, a missing last record does not.
 */
static void
journal_put(struct journal *j, const char *line, size_t len)
{
	if (!j->fd_ok)
		return;
	journal_make_room(j, len);
	if (journal_pwrite(j->fd, line, len, j->bytes)) {
		j->fd_ok = false;
		if (ftruncate(j->fd, (off_t)j->bytes))
			j->bytes = UINT64_MAX;
	} else {
		j->bytes += len;
	}
}

uint64_t
journal_append(struct journal *j, const char *op, json_t *fields)
{
	uint64_t seq;
	size_t len = 0;
	char *line;

	pthread_mutex_lock(&j->lock);
	seq = ++j->seq;
	line = fields ? journal_line(seq, op, fields, &len) : NULL;
	if (j->collecting && line)
		journal_collect(j, line, len);
	else if (j->collecting)
		j->tail_lost = true;
	if (line)
		journal_put(j, line, len);
	else
		j->fd_ok = false;	/* out of memory: the record is missing, so is what follows */
	pthread_mutex_unlock(&j->lock);
	free(line);
	return seq;
}

/*
 * Group commit. One caller at a time syncs (the leader); the others wait for it on a
 * condition and are all woken by its end. They used to queue on sync_lock instead, each
 * woken by the one before: under 20 concurrent clients that chain of wake-ups, one
 * scheduling delay after another on a busy CPU, was most of a change's time. Two leaders
 * at once measured the same as one (four rounds of 1,000 changes from 20 clients each way,
 * p99 12-26 ms with either), so the disk gets one flush at a time.
 */
int
journal_sync(struct journal *j, uint64_t upto, char *err, size_t errlen)
{
	uint64_t target, t0;
	int ret = 0, fd;
	bool need, slow;

	pthread_mutex_lock(&j->lock);
	while (j->durable < upto && j->syncing)
		pthread_cond_wait(&j->synced, &j->lock);
	if (j->durable >= upto) {
		pthread_mutex_unlock(&j->lock);
		return 0;
	}
	j->syncing = true;
	pthread_mutex_unlock(&j->lock);
	/* sync_lock before lock, as a switch takes them: no fdatasync during a replace. */
	pthread_mutex_lock(&j->sync_lock);
	pthread_mutex_lock(&j->lock);
	/* A compaction that came first may have made it durable already. */
	need = j->durable < upto;
	if (need && !j->fd_ok) {
		snprintf(err, errlen, "journal %s: an earlier write failed", j->path);
		ret = -EIO;
	}
	fd = j->fd;
	target = j->seq;
	pthread_mutex_unlock(&j->lock);
	/* Outside the lock: changes keep being written while the disk works. */
	t0 = need ? cvs_now_ns() : 0;
	if (!ret && need && fdatasync(fd)) {
		ret = -errno;
		snprintf(err, errlen, "cannot sync journal %s: %s", j->path, strerror(-ret));
	}
	slow = need && cvs_now_ns() - t0 >= JOURNAL_SLOW_SYNC_NS;
	pthread_mutex_lock(&j->lock);
	j->syncs += need;
	j->slow_syncs += slow;
	if (ret)
		j->fd_ok = false;
	else if (target > j->durable)
		j->durable = target;
	j->syncing = false;
	pthread_cond_broadcast(&j->synced);
	pthread_mutex_unlock(&j->lock);
	pthread_mutex_unlock(&j->sync_lock);
	return ret;
}

uint64_t
journal_mark(struct journal *j)
{
	uint64_t seq;

	pthread_mutex_lock(&j->lock);
	journal_tail_drop(j);
	j->collecting = true;
	seq = j->seq;
	pthread_mutex_unlock(&j->lock);
	return seq;
}

/*
 * The new file is written and synced beside the old one (PATH.next) with no lock held that a
 * change needs: changes go on into the old file and are collected meanwhile, and only those
 * few lines are added to the new file under the lock, before the rename. Done under the lock,
 * as before, the write and its fsync held every change (and the registry lock behind the
 * change) for 20-60 ms. No sync runs in between (sync_lock), so nothing written after the
 * copy was answered yet; the directory's sync, before any can be, makes the rename durable.
 */
int
journal_switch(struct journal *j, uint64_t base, char *err, size_t errlen)
{
	char next[sizeof(j->path) + 8];
	struct journal n = { .fd = -1 };
	size_t copied;
	uint64_t seq;
	char *copy;
	int ret = 0;

	snprintf(next, sizeof(next), "%s.next", j->path);
	pthread_mutex_lock(&j->sync_lock);
	pthread_mutex_lock(&j->lock);
	copied = j->tail_len;
	seq = j->seq;
	copy = malloc(copied + 1);
	if (copy && copied)	/* no tail yet: nothing came since the mark */
		memcpy(copy, j->tail, copied);
	pthread_mutex_unlock(&j->lock);
	/* j->fd and its figures are the lock's: the new file's go to a journal of its own. */
	if (copy)
		ret = journal_replace(&n, next, base, copy, copied, err, errlen);
	free(copy);
	pthread_mutex_lock(&j->lock);
	/* A line lost while collecting, before the copy or after it, is missing from it. */
	if (!copy || (!ret && j->tail_lost)) {
		snprintf(err, errlen, "out of memory while compacting the journal");
		ret = -ENOMEM;
	}
	/* What came after the copy, in the new file too; j changes only once it is in place. */
	if (!ret && j->tail_len > copied)
		journal_put(&n, j->tail + copied, j->tail_len - copied);
	if (!ret && !n.fd_ok) {
		snprintf(err, errlen, "cannot write %s", next);
		ret = -EIO;
	}
	if (!ret && rename(next, j->path)) {
		ret = -errno;
		snprintf(err, errlen, "cannot rename %s: %s", next, strerror(-ret));
	}
	if (!ret) {
		if (j->fd >= 0)
			close(j->fd);
		j->fd = n.fd;
		j->fd_ok = true;
		j->bytes = n.bytes;
		j->room = n.room;
		n.fd = -1;
	}
	if (!ret && seq > j->durable)
		j->durable = seq;
	else if (ret && base > j->durable)
		j->durable = base;
	journal_tail_drop(j);
	pthread_mutex_unlock(&j->lock);
	if (n.fd >= 0)
		close(n.fd);
	if (ret)
		unlink(next);
	else
		ret = cvs_dir_sync(j->path, err, errlen);
	pthread_mutex_unlock(&j->sync_lock);
	return ret;
}

void
journal_settle(struct journal *j, uint64_t base, bool snapshot_written)
{
	pthread_mutex_lock(&j->lock);
	journal_tail_drop(j);
	if (snapshot_written && base > j->durable)
		j->durable = base;
	pthread_mutex_unlock(&j->lock);
}

#define JOURNAL_GETTER(name, type, expr) \
type \
journal_##name(struct journal *j) \
{ \
	type v; \
	pthread_mutex_lock(&j->lock); \
	v = (expr); \
	pthread_mutex_unlock(&j->lock); \
	return v; \
}

JOURNAL_GETTER(last, uint64_t, j->seq)
JOURNAL_GETTER(durable, uint64_t, j->durable)
JOURNAL_GETTER(good, bool, j->fd_ok)
JOURNAL_GETTER(bytes, uint64_t, j->bytes)

void
journal_sync_counts(struct journal *j, uint64_t *syncs, uint64_t *slow)
{
	pthread_mutex_lock(&j->lock);
	*syncs = j->syncs;
	*slow = j->slow_syncs;
	pthread_mutex_unlock(&j->lock);
}
