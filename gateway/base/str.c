/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <math.h>

#include <jansson.h>

#include "base/str.h"

int
sb_reserve(struct strbuf *sb, size_t n)
{
	size_t cap = sb->cap ? sb->cap : 256;
	char *nb;

	if (sb->len + n + 1 <= sb->cap)
		return 0;
	while (cap < sb->len + n + 1)
		cap *= 2;
	nb = realloc(sb->buf, cap);
	if (nb == NULL)
		return -ENOMEM;
	sb->buf = nb;
	sb->cap = cap;
	return 0;
}

int
sb_append(struct strbuf *sb, const void *p, size_t n)
{
	if (sb_reserve(sb, n))
		return -ENOMEM;
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

/* s as a JSON string, quoted; UTF-8 passes as it is, as jansson's own dump leaves it. */
int
sb_json_string(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;
	int rc = sb_append(sb, "\"", 1);

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char esc[6] = { '\\', (char)ch };
		size_t n = 2;

		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		rc |= sb_append(sb, run, (size_t)(s - run));
		run = s + 1;
		if (ch == '\n' || ch == '\r' || ch == '\t' || ch == '\b' || ch == '\f') {
			esc[1] = ch == '\n' ? 'n' : ch == '\r' ? 'r' : ch == '\t' ? 't' :
				 ch == '\b' ? 'b' : 'f';
		} else if (ch < 0x20) {
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[ch >> 4];
			esc[5] = hex[ch & 15];
			n = 6;
		}
		rc |= sb_append(sb, esc, n);
	}
	rc |= sb_append(sb, run, (size_t)(s - run));
	return rc | sb_append(sb, "\"", 1);
}

void
str_copy(char *dst, size_t n, const char *src)
{
	size_t len = src ? strnlen(src, n - 1) : 0;

	if (len)
		memcpy(dst, src, len);
	dst[len] = '\0';
}

char *
str_of_int(char buf[STR_INT_MAX], long long v, int width)
{
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	char *p = buf + STR_INT_MAX - 1;
	int n = 0;

	*p = '\0';
	if (width > 20)
		width = 20;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
		n++;
	} while (u || n < width);
	if (v < 0)
		*--p = '-';
	return p;
}

int
sb_append_int(struct strbuf *sb, long long v, int width)
{
	char buf[STR_INT_MAX];

	return sb_appends(sb, str_of_int(buf, v, width));
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
