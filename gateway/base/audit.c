/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/audit.h"
#include "base/jsonfast.h"
#include "base/log.h"
#include "base/str.h"

struct audit {
	pthread_mutex_t lock;
	char *path;
	int fd;
	long long size;
	long long max_bytes;
	long long keep;
	unsigned long long failed;	/* lines that could not be written */
	time_t when_sec;		/* the second a->when spells */
	char when[64];
	struct strbuf pending;		/* the holder's lines not written yet */
	pthread_t holder;
	bool held;
};

/* Held lines are written once this much waits, whatever the holder does. */
#define AUDIT_PENDING_MAX	(64 * 1024)

static int
audit_reopen(struct audit *a)
{
	struct stat st;

	a->fd = open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (a->fd < 0)
		return -errno;
	a->size = fstat(a->fd, &st) == 0 ? (long long)st.st_size : 0;
	return 0;
}

struct audit *
audit_open(const char *path, long long max_bytes, long long keep, char **err)
{
	struct audit *a;
	char *dir, *slash;
	int rc;

	if (path == NULL || !path[0] || strcmp(path, "none") == 0)
		return NULL;
	/* Its directory, one level, as /var/log/<ours> would be on a fresh template. */
	dir = strdup(path);
	slash = dir ? strrchr(dir, '/') : NULL;
	if (slash && slash != dir) {
		*slash = '\0';
		(void)mkdir(dir, 0755);
	}
	free(dir);
	a = calloc(1, sizeof(*a));
	if (a == NULL || (a->path = strdup(path)) == NULL) {
		free(a);
		err_set(err, -ENOMEM, "audit log: out of memory");
		return NULL;
	}
	a->max_bytes = max_bytes > 0 ? max_bytes : 10LL << 20;
	a->keep = keep >= 0 ? keep : 3;
	rc = audit_reopen(a);
	if (rc) {
		err_set(err, rc, "audit log %s: %s (--audit-log none turns it off)", path,
			strerror(-rc));
		free(a->path);
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	return a;
}

/* path.<keep-1> → path.<keep>, ..., path → path.1; with keep 0 the full file goes. */
static void
audit_rotate(struct audit *a)
{
	size_t n = strlen(a->path) + 24;
	char *from = malloc(n), *to = malloc(n);

	close(a->fd);
	a->fd = -1;
	if (from && to) {
		for (long long k = a->keep; k > 1; k--) {
			snprintf(from, n, "%s.%lld", a->path, k - 1);
			snprintf(to, n, "%s.%lld", a->path, k);
			(void)rename(from, to);
		}
		if (a->keep > 0) {
			snprintf(to, n, "%s.1", a->path);
			(void)rename(a->path, to);
		} else {
			(void)unlink(a->path);
		}
	}
	free(from);
	free(to);
	if (audit_reopen(a))
		a->fd = -1;
}

/*
 * One line per call on the hot path of every tools/call, so it is written as text rather
 * than built as a JSON object and dumped: the same fields in the same order.
 */

/* The arguments' shape: their names, and the size of their JSON text. */
static int
audit_shape(struct strbuf *sb, json_t *args)
{
	const char *k, *sep = "";
	json_t *v;
	int rc;

	rc = sb_appends(sb, "{\"type\":\"");
	rc |= sb_appends(sb, args ? json_is_object(args) ? "object" : "other" : "none");
	rc |= sb_appends(sb, "\",\"keys\":[");
	json_object_foreach(args, k, v) {
		rc |= sb_appends(sb, sep);
		rc |= sb_json_string(sb, k);
		sep = ",";
	}
	rc |= sb_appends(sb, "],\"bytes\":");
	rc |= sb_append_int(sb, (long long)json_dump_size(args), 1);
	return rc | sb_appends(sb, "}");
}

/* The time as ISO 8601 in UTC to the millisecond; the date part is kept per second. */
static int
audit_when(struct audit *a, struct strbuf *sb)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != a->when_sec) {
		gmtime_r(&ts.tv_sec, &tm);
		snprintf(a->when, sizeof(a->when), "%04d-%02d-%02dT%02d:%02d:%02d",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec);
		a->when_sec = ts.tv_sec;
	}
	return sb_appends(sb, a->when) | sb_appends(sb, ".") |
	       sb_append_int(sb, ts.tv_nsec / 1000000, 3);
}

/* One line onto 'sb', without its time's value (the caller's lock covers a->when). */
static int
audit_line(struct audit *a, struct strbuf *sb, const struct audit_call *c)
{
	/* Milliseconds to three places, rounded to the microsecond. */
	unsigned long long us = c->ns > 0 ? ((unsigned long long)c->ns + 500) / 1000 : 0;
	int rc;

	rc = sb_appends(sb, "{\"time\":\"");
	rc |= audit_when(a, sb);
	rc |= sb_appends(sb, "Z\",\"server\":");
	rc |= sb_json_string(sb, c->server ? c->server : "");
	rc |= sb_appends(sb, ",\"tool\":");
	rc |= sb_json_string(sb, c->tool ? c->tool : "");
	rc |= sb_appends(sb, ",\"args\":");
	rc |= audit_shape(sb, c->args);
	rc |= sb_appends(sb, ",\"status\":\"");
	rc |= sb_appends(sb, c->status);
	rc |= sb_appends(sb, "\",\"ms\":");
	rc |= sb_append_int(sb, (long long)(us / 1000), 1);
	rc |= sb_appends(sb, ".");
	rc |= sb_append_int(sb, (long long)(us % 1000), 3);
	if (c->code) {
		rc |= sb_appends(sb, ",\"code\":");
		rc |= sb_append_int(sb, c->code, 1);
	}
	return rc | sb_appends(sb, "}\n");
}

/* Under a->lock: whatever waits goes to the file, and the file rotates once it is full. */
static void
audit_flush_locked(struct audit *a)
{
	ssize_t w;

	if (a->pending.len == 0)
		return;
	if (a->fd >= 0) {
		w = write(a->fd, a->pending.buf, a->pending.len);
		if (w == (ssize_t)a->pending.len)
			a->size += w;
		else if (a->failed++ == 0)
			log_error("audit log write failed", "path=%s", a->path);
		if (a->size >= a->max_bytes)
			audit_rotate(a);
	}
	a->pending.len = 0;
}

void
audit_write(struct audit *a, const struct audit_call *c)
{
	size_t start;

	if (a == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	start = a->pending.len;
	if (audit_line(a, &a->pending, c))
		a->pending.len = start;		/* out of memory: the line goes, not the others */
	if (!a->held || !pthread_equal(a->holder, pthread_self()) ||
	    a->pending.len >= AUDIT_PENDING_MAX)
		audit_flush_locked(a);
	pthread_mutex_unlock(&a->lock);
}

void
audit_hold(struct audit *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	a->holder = pthread_self();
	a->held = true;
	pthread_mutex_unlock(&a->lock);
}

void
audit_flush(struct audit *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	audit_flush_locked(a);
	pthread_mutex_unlock(&a->lock);
}

void
audit_close(struct audit *a)
{
	if (a == NULL)
		return;
	audit_flush(a);
	if (a->fd >= 0)
		close(a->fd);
	sb_free(&a->pending);
	pthread_mutex_destroy(&a->lock);
	free(a->path);
	free(a);
}
