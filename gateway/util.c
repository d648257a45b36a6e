/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: strings, durations, files and environment helpers. */

#include <ctype.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gw.h"

extern char **environ;

int
sb_append(struct strbuf *sb, const void *p, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 256;
		char *nb;

		while (cap < sb->len + n + 1)
			cap *= 2;
		nb = realloc(sb->buf, cap);
		if (nb == NULL)
			return -ENOMEM;
		sb->buf = nb;
		sb->cap = cap;
	}
	if (n)
		memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return 0;
}

int
sb_appends(struct strbuf *sb, const char *s)
{
	return sb_append(sb, s, strlen(s));
}

int
sb_appendf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n, rc;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	rc = sb_append(sb, s, (size_t)n);
	free(s);
	return rc;
}

char *
sb_steal(struct strbuf *sb)
{
	char *s = sb->buf;

	if (s == NULL)
		s = strdup("");
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return s;
}

void
sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

int
err_set(char **err, int rc, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (err == NULL)
		return rc;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	free(*err);
	*err = s;
	return rc;
}

char *
str_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* Go's %q: the reference's error messages quote names this way. */
char *
str_quote(const char *s)
{
	struct strbuf sb = {0};
	const unsigned char *p;

	sb_append(&sb, "\"", 1);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			sb_appends(&sb, "\\\"");
			break;
		case '\\':
			sb_appends(&sb, "\\\\");
			break;
		case '\a':
			sb_appends(&sb, "\\a");
			break;
		case '\b':
			sb_appends(&sb, "\\b");
			break;
		case '\f':
			sb_appends(&sb, "\\f");
			break;
		case '\n':
			sb_appends(&sb, "\\n");
			break;
		case '\r':
			sb_appends(&sb, "\\r");
			break;
		case '\t':
			sb_appends(&sb, "\\t");
			break;
		case '\v':
			sb_appends(&sb, "\\v");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				sb_appendf(&sb, "\\x%02x", *p);
			else
				sb_append(&sb, p, 1);
		}
	}
	sb_append(&sb, "\"", 1);
	return sb_steal(&sb);
}

bool
str_blank(const char *s)
{
	if (s == NULL)
		return true;
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

char *
str_trim_dup(const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	return strndup(s, len);
}

/* Go time.ParseDuration: "55s", "1m30s", "1.5s", "500ms"; a bare "0" is the only unitless value. */
int
dur_parse(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {
		{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3}, {"ms", 1e6},
		{"s", 1e9}, {"m", 60e9}, {"h", 3600e9},
	};
	const char *p = s;
	double total = 0;
	bool neg = false;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (strcmp(p, "0") == 0) {
		*ns = 0;
		return 0;
	}
	if (*p == '\0')
		return -EINVAL;
	while (*p) {
		double whole = 0, frac = 0, scale = 1;
		bool digits = false;
		size_t i, ulen = 0, best = SIZE_MAX;

		while (isdigit((unsigned char)*p)) {
			whole = whole * 10 + (*p++ - '0');
			digits = true;
		}
		if (*p == '.') {
			p++;
			while (isdigit((unsigned char)*p)) {
				scale /= 10;
				frac += (*p++ - '0') * scale;
				digits = true;
			}
		}
		if (!digits)
			return -EINVAL;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].unit);

			if (strncmp(p, units[i].unit, l) == 0 && l > ulen) {
				ulen = l;
				best = i;
			}
		}
		if (best == SIZE_MAX)
			return -EINVAL;
		p += ulen;
		total += (whole + frac) * units[best].mult;
		if (total > 9.2e18)
			return -ERANGE;
	}
	*ns = (int64_t)llround(neg ? -total : total);
	return 0;
}

static void
frac_trim(char *buf)
{
	char *dot = strchr(buf, '.');
	size_t l;

	if (dot == NULL)
		return;
	l = strlen(buf);
	while (l > 0 && buf[l - 1] == '0')
		buf[--l] = '\0';
	if (l > 0 && buf[l - 1] == '.')
		buf[--l] = '\0';
}

/* Go time.Duration.String, so timeout messages read the same as the reference's. */
void
dur_format(int64_t ns, char *buf, size_t len)
{
	uint64_t u = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";
	char num[64];

	if (u == 0) {
		snprintf(buf, len, "0s");
		return;
	}
	if (u < 1000) {
		snprintf(buf, len, "%s%lluns", sign, (unsigned long long)u);
		return;
	}
	if (u < 1000000) {
		snprintf(num, sizeof(num), "%llu.%03llu", (unsigned long long)(u / 1000),
			 (unsigned long long)(u % 1000));
		frac_trim(num);
		snprintf(buf, len, "%s%s\xc2\xb5s", sign, num);
		return;
	}
	if (u < 1000000000) {
		snprintf(num, sizeof(num), "%llu.%06llu", (unsigned long long)(u / 1000000),
			 (unsigned long long)(u % 1000000));
		frac_trim(num);
		snprintf(buf, len, "%s%sms", sign, num);
		return;
	}
	{
		uint64_t secs = u / 1000000000, frac = u % 1000000000;
		uint64_t h = secs / 3600, m = (secs / 60) % 60, s = secs % 60;
		char sec[48];

		snprintf(sec, sizeof(sec), "%llu.%09llu", (unsigned long long)s,
			 (unsigned long long)frac);
		frac_trim(sec);
		if (h)
			snprintf(buf, len, "%s%lluh%llum%ss", sign, (unsigned long long)h,
				 (unsigned long long)m, sec);
		else if (m)
			snprintf(buf, len, "%s%llum%ss", sign, (unsigned long long)m, sec);
		else
			snprintf(buf, len, "%s%ss", sign, sec);
	}
}

/* Shortest text that reads back as the same double; integers print without a fraction. */
char *
num_format(double v)
{
	char buf[64];
	int prec;

	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, sizeof(buf), "%.0f", v);
		return strdup(buf);
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return strdup(buf);
}

int
rand_bytes(void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = getrandom((char *)buf + off, len - off, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	return 0;
}

int
rand_hex(char *out, size_t nbytes)
{
	unsigned char b[256];
	size_t i;
	int rc;

	if (nbytes > sizeof(b))
		return -EINVAL;
	rc = rand_bytes(b, nbytes);
	if (rc)
		return rc;
	for (i = 0; i < nbytes; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * nbytes] = '\0';
	return 0;
}

int
dir_make_parents(const char *dir, mode_t mode)
{
	char *p, *tmp = strdup(dir);
	int rc = 0;

	if (tmp == NULL)
		return -ENOMEM;
	for (p = tmp + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (tmp[0] && mkdir(tmp, mode) < 0 && errno != EEXIST) {
				rc = -errno;
				break;
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	free(tmp);
	return rc;
}

int
path_parent_make(const char *path, mode_t mode)
{
	char *dir = strdup(path), *slash;
	int rc = 0;

	if (dir == NULL)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		rc = dir_make_parents(dir, mode);
	}
	free(dir);
	return rc;
}

static int
remove_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int
path_remove_all(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (nftw(path, remove_cb, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return -errno;
	return 0;
}

/* cvs_file_replace, creating the parent directories, with the message as gateway errors are. */
int
file_write_atomic(const char *path, const void *data, size_t len, mode_t mode, mode_t dirmode,
		  char **err)
{
	char msg[512];
	int rc = path_parent_make(path, dirmode);

	if (rc)
		return err_set(err, rc, "mkdir %s: %s", path, strerror(-rc));
	rc = cvs_file_replace(path, data, len, mode, msg, sizeof(msg));
	return rc ? err_set(err, rc, "%s", msg) : 0;
}

char *
file_read_all(const char *path, size_t *len, int *rc)
{
	struct strbuf sb = {0};
	char buf[65536];
	int dummy, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (rc == NULL)
		rc = &dummy;
	if (fd < 0) {
		*rc = -errno;
		return NULL;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*rc = -errno;
			close(fd);
			sb_free(&sb);
			return NULL;
		}
		if (n == 0)
			break;
		sb_append(&sb, buf, (size_t)n);
	}
	close(fd);
	*rc = 0;
	if (len)
		*len = sb.len;
	return sb_steal(&sb);
}

bool
fd_is_valid(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

size_t
strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

char **
strv_dup(char *const *v)
{
	size_t i, n = strv_len(v);
	char **d = calloc(n + 1, sizeof(*d));

	if (d == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		d[i] = strdup(v[i]);
	return d;
}

char *
strv_join(char *const *v, const char *sep)
{
	struct strbuf sb = {0};
	size_t i;

	for (i = 0; v && v[i]; i++) {
		if (i)
			sb_appends(&sb, sep);
		sb_appends(&sb, v[i]);
	}
	return sb_steal(&sb);
}

int
strv_push(char ***v, const char *s)
{
	size_t n = strv_len(*v);
	char **nv = realloc(*v, (n + 2) * sizeof(*nv));

	if (nv == NULL)
		return -ENOMEM;
	nv[n] = strdup(s);
	nv[n + 1] = NULL;
	*v = nv;
	return nv[n] ? 0 : -ENOMEM;
}

void
strv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Secrets (envs, the config) are blanked before their memory goes back to malloc. */
void
str_free_secure(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

void
strv_free_secure(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		str_free_secure(v[i]);
	free(v);
}

static void
scrub_free(void *p)
{
	if (p == NULL)
		return;
	explicit_bzero(p, malloc_usable_size(p));
	free(p);
}

/*
 * jansson frees the config's strings itself; with this hook every block it gives back is
 * blanked first, so no copy of the envs outlives the json_t that held it.
 */
void
jansson_scrub_frees(void)
{
	json_set_alloc_funcs(malloc, scrub_free);
}

static bool
env_has_key(char *const *extra, const char *kv)
{
	size_t klen = strcspn(kv, "=");
	size_t i;

	for (i = 0; extra && extra[i]; i++)
		if (strncmp(extra[i], kv, klen) == 0 && extra[i][klen] == '=')
			return true;
	return false;
}

/*
 * The environment a child sees: ours minus the access token (absent, not empty), with the
 * server's own variables replacing inherited ones of the same name.
 */
char **
env_build(char *const *extra)
{
	static const char tok[] = GW_TOKEN_ENV "=";
	char **env = NULL;
	size_t i;

	for (i = 0; environ && environ[i]; i++) {
		if (strncmp(environ[i], tok, sizeof(tok) - 1) == 0)
			continue;
		if (env_has_key(extra, environ[i]))
			continue;
		if (strv_push(&env, environ[i]))
			goto fail;
	}
	for (i = 0; extra && extra[i]; i++) {
		if (strncmp(extra[i], tok, sizeof(tok) - 1) == 0)
			continue;
		if (strv_push(&env, extra[i]))
			goto fail;
	}
	if (env == NULL)
		env = calloc(1, sizeof(*env));
	return env;
fail:
	strv_free(env);
	return NULL;
}

/* PATH search in the parent, so the forked child only has to call execve(). */
char *
exec_lookup(const char *name, char *const *envp)
{
	const char *path = NULL;
	char *dup, *dir, *save = NULL;
	size_t i;

	if (strchr(name, '/'))
		return strdup(name);
	for (i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			path = envp[i] + 5;
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	dup = strdup(path);
	if (dup == NULL)
		return NULL;
	for (dir = strtok_r(dup, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *cand = str_printf("%s/%s", *dir ? dir : ".", name);
		struct stat st;

		if (cand && stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(cand, X_OK) == 0) {
			free(dup);
			return cand;
		}
		free(cand);
	}
	free(dup);
	return NULL;
}

void
status_format(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal: %s", strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "wait status %d", status);
}

void
time_deadline(struct timespec *ts, int64_t ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)(ns / 1000000000LL);
	ts->tv_nsec += (long)(ns % 1000000000LL);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int64_t
time_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void
bell_init(struct bell *b)
{
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->rung = false;
	b->stop = false;
}

void
bell_fini(struct bell *b)
{
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->cond);
}

void
bell_ring(struct bell *b)
{
	pthread_mutex_lock(&b->lock);
	b->rung = true;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

void
bell_stop(struct bell *b)
{
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

bool
bell_stopped(struct bell *b)
{
	bool stop;

	pthread_mutex_lock(&b->lock);
	stop = b->stop;
	pthread_mutex_unlock(&b->lock);
	return stop;
}

void
bell_wait(struct bell *b, int64_t ns)
{
	struct timespec ts;

	if (ns > 0)
		time_deadline(&ts, ns);
	pthread_mutex_lock(&b->lock);
	while (!b->rung && !b->stop) {
		if (ns <= 0)
			pthread_cond_wait(&b->cond, &b->lock);
		else if (pthread_cond_timedwait(&b->cond, &b->lock, &ts) != 0)
			break;
	}
	b->rung = false;
	pthread_mutex_unlock(&b->lock);
}
