/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: key=value log lines and the "[name] " prefixing copier for child output. */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/str.h"
#include "cvs_common.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * The log fd is shared: when one writer left a line unfinished and another writes, the
 * newcomer starts a fresh line and the interrupted writer re-prefixes its continuation.
 * last_mid is only non-NULL while that writer is alive (pumps finish their line at EOF).
 */
static struct prefixw *last_mid;
static bool log_mid;

static void
log_break_locked(struct prefixw *who, struct strbuf *sb)
{
	if (!log_mid || last_mid == who)
		return;
	sb_append(sb, "\n", 1);
	if (last_mid)
		last_mid->mid_line = false;
	last_mid = NULL;
	log_mid = false;
}

void
log_write(const char *level, const char *msg, const char *kvfmt, ...)
{
	struct strbuf sb = {0};
	struct timeval tv;
	struct tm tm;
	char ts[64];
	va_list ap;
	char *kv = NULL;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	va_start(ap, kvfmt);
	if (kvfmt && vasprintf(&kv, kvfmt, ap) < 0)
		kv = NULL;
	va_end(ap);
	sb_appendf(&sb, "time=%s.%03ld level=%s msg=\"%s\"%s%s\n", ts, (long)tv.tv_usec / 1000,
		   level, msg, kv && *kv ? " " : "", kv ? kv : "");
	pthread_mutex_lock(&log_lock);
	if (log_mid)
		cvs_write_all(2, "\n", 1);
	if (last_mid)
		last_mid->mid_line = false;
	last_mid = NULL;
	log_mid = false;
	cvs_write_all(2, sb.buf, sb.len);
	pthread_mutex_unlock(&log_lock);
	free(kv);
	sb_free(&sb);
}

int
prefixw_init(struct prefixw *w, int fd, const char *name)
{
	w->fd = fd;
	w->prefix = str_printf("[%s] ", name);
	w->plen = w->prefix ? strlen(w->prefix) : 0;
	w->mid_line = false;
	return w->prefix ? 0 : -ENOMEM;
}

/*
 * Line state survives across calls: a line split over two reads gets one prefix. Each call
 * ends in a single write() so that lines from different servers interleave whole.
 */
int
prefixw_write(struct prefixw *w, const void *buf, size_t len)
{
	const char *p = buf, *end = p + len;
	struct strbuf sb = {0};
	int rc;

	pthread_mutex_lock(&log_lock);
	if (w->fd == 2)
		log_break_locked(w, &sb);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl + 1 : end;

		if (!w->mid_line)
			sb_append(&sb, w->prefix, w->plen);
		sb_append(&sb, p, (size_t)(stop - p));
		w->mid_line = nl == NULL;
		p = stop;
	}
	rc = cvs_write_all(w->fd, sb.buf ? sb.buf : "", sb.len);
	if (w->fd == 2 && len) {
		log_mid = w->mid_line;
		last_mid = w->mid_line ? w : NULL;
	}
	pthread_mutex_unlock(&log_lock);
	sb_free(&sb);
	return rc;
}

void
prefixw_fini(struct prefixw *w)
{
	free(w->prefix);
	w->prefix = NULL;
}

/* A detached thread copying one pipe into the log; freed by whichever side lets go last. */
struct pump {
	int fd;
	struct prefixw pw;
	char **secrets;		/* values masked in the output */
	struct strbuf held;	/* a tail that may be the start of a secret */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int refs;
	char denied[256];	/* the first path the child said it was denied, "" for none */
};

static void
pump_unref(struct pump *p)
{
	bool last;

	pthread_mutex_lock(&p->lock);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (!last)
		return;
	prefixw_fini(&p->pw);
	strv_free_secure(p->secrets);
	sb_free(&p->held);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

#define MASK_TEXT "********"

/* 1: a secret starts at d[0..n) and is complete, 2: d is a proper prefix of one, 0: neither. */
static int
secret_at(char *const *secrets, const char *d, size_t n, size_t *len)
{
	int found = 0;

	for (size_t i = 0; secrets[i]; i++) {
		size_t l = strlen(secrets[i]);

		if (d[0] != secrets[i][0])
			continue;
		if (n >= l && memcmp(d, secrets[i], l) == 0) {
			*len = l;
			return 1;
		}
		if (n < l && memcmp(d, secrets[i], n) == 0)
			found = 2;
	}
	return found;
}

/*
 * Masks every whole secret in held + in and writes the rest; a tail that could be the start
 * of a secret split over two reads waits for the next read (or EOF: in == NULL).
 */
int
prefixw_write_masked(struct prefixw *w, char *const *secrets, struct strbuf *held,
		     const char *in, size_t n)
{
	struct strbuf out = {0};
	const char *d;
	size_t len, i = 0, l = 0;
	int rc;

	if (in)
		sb_append(held, in, n);
	d = held->buf;
	len = held->len;
	while (i < len) {
		int m = secret_at(secrets, d + i, len - i, &l);

		if (m == 1) {
			sb_appends(&out, MASK_TEXT);
			i += l;
			continue;
		}
		if (m == 2 && in)
			break;
		sb_append(&out, d + i, 1);
		i++;
	}
	rc = out.len ? prefixw_write(w, out.buf, out.len) : 0;
	if (held->buf)
		memmove(held->buf, d + i, len - i);
	held->len = len - i;
	sb_free(&out);
	return rc;
}

/*
 * The path of the first "permission denied" the child printed, in any runtime's words:
 * Node's "EACCES: permission denied, open '/p'", Python's "[Errno 13] Permission denied:
 * '/p'", sh's "/p: Permission denied". A start that fails on it can then name it.
 */
static void
pump_note_denied(struct pump *p, const char *buf, size_t n)
{
	const char *end = buf + n, *line, *eol, *s;

	if (p->denied[0])
		return;
	for (line = buf; line < end; line = eol + 1) {
		eol = memchr(line, '\n', (size_t)(end - line));
		if (eol == NULL)
			eol = end;
		if (!memmem(line, (size_t)(eol - line), "ermission denied", 16))
			continue;
		for (s = line; s < eol; s++) {
			size_t len;

			if (*s != '/' || (s > line && !strchr("'\" ", s[-1])))
				continue;
			len = strcspn(s, "'\" ,:\n");
			if (s + len > eol)
				len = (size_t)(eol - s);
			pthread_mutex_lock(&p->lock);
			snprintf(p->denied, sizeof(p->denied), "%.*s", (int)len, s);
			pthread_mutex_unlock(&p->lock);
			return;
		}
	}
}

static void *
pump_main(void *arg)
{
	struct pump *p = arg;
	char buf[16384];

	for (;;) {
		ssize_t n = read(p->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		pump_note_denied(p, buf, (size_t)n);
		if (p->secrets)
			prefixw_write_masked(&p->pw, p->secrets, &p->held, buf, (size_t)n);
		else
			prefixw_write(&p->pw, buf, (size_t)n);
	}
	if (p->secrets)
		prefixw_write_masked(&p->pw, p->secrets, &p->held, NULL, 0);
	/* Finish an unterminated last line so the next log entry starts on its own line. */
	pthread_mutex_lock(&log_lock);
	if (p->pw.mid_line)
		cvs_write_all(p->pw.fd, "\n", 1);
	p->pw.mid_line = false;
	if (last_mid == &p->pw) {
		last_mid = NULL;
		log_mid = false;
	}
	pthread_mutex_unlock(&log_lock);
	close(p->fd);
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pump_unref(p);
	return NULL;
}

struct pump *
pump_start(int fd, const char *name, int logfd)
{
	return pump_start_masked(fd, name, logfd, NULL);
}

struct pump *
pump_start_masked(int fd, const char *name, int logfd, char *const *secrets)
{
	struct pump *p = calloc(1, sizeof(*p));
	pthread_attr_t attr;
	pthread_t th;

	if (p == NULL)
		return NULL;
	p->fd = fd;
	p->refs = 2;
	p->secrets = secrets && secrets[0] ? strv_dup(secrets) : NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (prefixw_init(&p->pw, logfd, name)) {
		strv_free_secure(p->secrets);
		free(p);
		return NULL;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&th, &attr, pump_main, p)) {
		pthread_attr_destroy(&attr);
		prefixw_fini(&p->pw);
		strv_free_secure(p->secrets);
		free(p);
		return NULL;
	}
	pthread_attr_destroy(&attr);
	return p;
}

/* Waits for EOF (timeout_ms < 0: forever); -ETIMEDOUT. */
int
pump_settle(struct pump *p, int timeout_ms)
{
	struct timespec ts;
	int rc = 0;

	if (p == NULL)
		return 0;
	if (timeout_ms >= 0)
		time_deadline(&ts, (int64_t)timeout_ms * 1000000);
	pthread_mutex_lock(&p->lock);
	while (!p->done && rc == 0) {
		if (timeout_ms < 0)
			pthread_cond_wait(&p->cond, &p->lock);
		else
			rc = pthread_cond_timedwait(&p->cond, &p->lock, &ts) ? -ETIMEDOUT : 0;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* Waits for EOF as pump_settle() does and drops the caller's reference. */
int
pump_wait(struct pump *p, int timeout_ms)
{
	int rc = pump_settle(p, timeout_ms);

	if (p)
		pump_unref(p);
	return rc;
}

bool
pump_denied(struct pump *p, char *out, size_t len)
{
	if (p == NULL)
		return false;
	pthread_mutex_lock(&p->lock);
	snprintf(out, len, "%s", p->denied);
	pthread_mutex_unlock(&p->lock);
	return out[0] != '\0';
}

/* A command's failure on stderr, before there is a log (the launcher, pull, catalog). */
void
die_msg(const char *msg)
{
	fprintf(stderr, "mcp-gateway: %s\n", msg);
}
