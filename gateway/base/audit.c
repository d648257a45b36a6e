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
};

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

/* The arguments' shape: their names, sorted, and the size of their JSON text. */
static json_t *
audit_shape(json_t *args)
{
	json_t *keys = json_array();
	const char *k;
	json_t *v;
	size_t bytes;

	json_object_foreach(args, k, v)
		json_array_append_new(keys, json_string(k));
	bytes = args ? json_dumpb(args, NULL, 0, JSON_COMPACT) : 0;
	return json_pack("{s:s,s:o,s:I}", "type", args ? json_is_object(args) ? "object" :
			 "other" : "none", "keys", keys, "bytes", (json_int_t)bytes);
}

void
audit_write(struct audit *a, const struct audit_call *c)
{
	struct timespec ts;
	struct tm tm;
	char when[80];
	json_t *line;
	char *text;
	ssize_t w;

	if (a == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 ts.tv_nsec / 1000000);
	line = json_pack("{s:s,s:s,s:s,s:o,s:s,s:f}", "time", when, "server",
			 c->server ? c->server : "", "tool", c->tool ? c->tool : "", "args",
			 audit_shape(c->args), "status", c->status, "ms", (double)c->ns / 1e6);
	if (line && c->code)
		json_object_set_new(line, "code", json_integer(c->code));
	text = line ? json_dumps(line, JSON_COMPACT) : NULL;
	json_decref(line);
	if (text == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	if (a->fd >= 0) {
		size_t n = strlen(text);

		text[n] = '\n';
		w = write(a->fd, text, n + 1);
		text[n] = '\0';
		if (w == (ssize_t)(n + 1))
			a->size += w;
		else if (a->failed++ == 0)
			log_error("audit log write failed", "path=%s", a->path);
		if (a->size >= a->max_bytes)
			audit_rotate(a);
	}
	pthread_mutex_unlock(&a->lock);
	free(text);
}

void
audit_close(struct audit *a)
{
	if (a == NULL)
		return;
	if (a->fd >= 0)
		close(a->fd);
	pthread_mutex_destroy(&a->lock);
	free(a->path);
	free(a);
}
