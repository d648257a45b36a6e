/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the fast JSON parser and writer (jsonfast.h). Recursive descent over the
 * buffer, values made with jansson's own constructors, so they are freed, dumped and
 * compared as any other. Every path that meets something outside the subset returns NULL
 * or -1 ("leave it to jansson"), having freed what it made or written.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonfast.h"

struct jp {
	const char *p, *end;
	int depth;
	char *tmp;		/* unescaped text of a string with escapes */
	size_t tmpcap;
};

static json_t *jp_value(struct jp *j);

static void
jp_space(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

/*
 * A string at j->p (its opening quote): its text in *s, *len; false outside the subset.
 * Without escapes the text is the input's own bytes; with them, j->tmp's.
 */
static bool
jp_string(struct jp *j, const char **s, size_t *len)
{
	const char *start = ++j->p, *q;
	size_t n = 0;

	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;

		if (c < 0x20 || c >= 0x80)
			return false;
		if (c == '\\') {
			if (j->p + 1 >= j->end || !j->p[1] || !strchr("\"\\/bfnrt", j->p[1]))
				return false;
			j->p++;
			n++;	/* one escape: one byte out */
		}
		j->p++;
	}
	if (j->p >= j->end)
		return false;
	*len = (size_t)(j->p - start) - n;
	*s = start;
	j->p++;
	if (n == 0)
		return true;
	if (j->tmpcap < *len + 1) {
		free(j->tmp);
		j->tmpcap = *len + 64;
		if ((j->tmp = malloc(j->tmpcap)) == NULL) {
			j->tmpcap = 0;
			return false;
		}
	}
	n = 0;
	for (q = start; q < j->p - 1; q++) {
		if (*q != '\\') {
			j->tmp[n++] = *q;
			continue;
		}
		switch (*++q) {
		case 'b': j->tmp[n++] = '\b'; break;
		case 'f': j->tmp[n++] = '\f'; break;
		case 'n': j->tmp[n++] = '\n'; break;
		case 'r': j->tmp[n++] = '\r'; break;
		case 't': j->tmp[n++] = '\t'; break;
		default: j->tmp[n++] = *q; break;	/* " \ / */
		}
	}
	*s = j->tmp;
	return true;
}

/* An integer of at most 18 digits (no overflow), without a fraction or an exponent. */
static json_t *
jp_integer(struct jp *j)
{
	bool neg = *j->p == '-';
	const char *d = j->p + neg, *q = d;
	long long v = 0;

	/* Digits past the 18th are counted, not added: the number is jansson's then. */
	for (; q < j->end && *q >= '0' && *q <= '9'; q++)
		if (q - d < 18)
			v = v * 10 + (*q - '0');
	/* No digits, a leading zero, too long, or a real: jansson's. */
	if (q == d || (*d == '0' && q - d > 1) || q - d > 18 ||
	    (q < j->end && (*q == '.' || *q == 'e' || *q == 'E')))
		return NULL;
	j->p = q;
	return json_integer(neg ? -v : v);
}

static json_t *
jp_word(struct jp *j, const char *w, size_t n, json_t *v)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
		return NULL;
	j->p += n;
	return v;
}

static json_t *
jp_object(struct jp *j)
{
	json_t *o = json_object(), *v;
	const char *k;
	size_t klen;

	jp_space(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return o;
	}
	while (o && j->p < j->end && *j->p == '"') {
		/* A key with escapes lives in tmp, which the value's strings reuse: copied. */
		char key[128];

		if (!jp_string(j, &k, &klen) || klen >= sizeof(key))
			break;
		memcpy(key, k, klen);
		jp_space(j);
		if (j->p >= j->end || *j->p++ != ':' || json_object_getn(o, key, klen))
			break;
		jp_space(j);
		if ((v = jp_value(j)) == NULL || json_object_setn_new_nocheck(o, key, klen, v))
			break;
		jp_space(j);
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return o;
		}
		if (j->p >= j->end || *j->p++ != ',')
			break;
		jp_space(j);
	}
	json_decref(o);
	return NULL;
}

static json_t *
jp_array(struct jp *j)
{
	json_t *a = json_array(), *v;

	jp_space(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return a;
	}
	while (a && (v = jp_value(j)) != NULL) {
		if (json_array_append_new(a, v))
			break;
		jp_space(j);
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return a;
		}
		if (j->p >= j->end || *j->p++ != ',')
			break;
		jp_space(j);
	}
	json_decref(a);
	return NULL;
}

static json_t *
jp_value(struct jp *j)
{
	const char *s;
	size_t len;
	json_t *v = NULL;

	if (j->p >= j->end)
		return NULL;
	switch (*j->p) {
	case '{':
	case '[':
		if (++j->depth > JSONFAST_DEPTH)
			return NULL;
		j->p++;
		v = j->p[-1] == '{' ? jp_object(j) : jp_array(j);
		j->depth--;
		return v;
	case '"':
		return jp_string(j, &s, &len) ? json_stringn_nocheck(s, len) : NULL;
	case 't':
		return jp_word(j, "true", 4, json_true());
	case 'f':
		return jp_word(j, "false", 5, json_false());
	case 'n':
		return jp_word(j, "null", 4, json_null());
	default:
		return *j->p == '-' || (*j->p >= '0' && *j->p <= '9') ? jp_integer(j) : NULL;
	}
}

json_t *
jsonfast_parse(const char *buf, size_t len)
{
	struct jp j = { .p = buf, .end = buf + len };
	json_t *v = NULL;

	jp_space(&j);
	/* As json_loadb without JSON_DECODE_ANY: an object or an array, then only space. */
	if (j.p < j.end && (*j.p == '{' || *j.p == '[')) {
		v = jp_value(&j);
		jp_space(&j);
		if (v && j.p != j.end) {
			json_decref(v);
			v = NULL;
		}
	}
	free(j.tmp);
	return v;
}

json_t *
json_load_fast(const char *buf, size_t len, json_error_t *err)
{
	json_t *v = jsonfast_parse(buf, len);

	return v ? v : json_loadb(buf, len, 0, err);
}

/* ---- writing ------------------------------------------------------------------------------ */

/*
 * Where an output byte goes: appended to sb, or only counted (sb NULL). Failures of sb are
 * kept in 'bad' and end the walk at the top.
 */
struct jw {
	struct strbuf *sb;
	size_t n;
	bool bad;
};

static void
jw_put(struct jw *w, const char *p, size_t n)
{
	w->n += n;
	if (w->sb && sb_append(w->sb, p, n))
		w->bad = true;
}

/* jansson's spelling of a string: \" \\ and the short escapes, other controls as \u00XX. */
static int
jw_string(struct jw *w, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *run = s, *end = s + len;
	char esc[6] = { '\\', 'u', '0', '0' };

	jw_put(w, "\"", 1);
	for (; s < end; s++) {
		unsigned char c = (unsigned char)*s;
		size_t n = 2;

		if (c >= 0x80)
			return -1;	/* UTF-8 is jansson's to check */
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		jw_put(w, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'u';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		jw_put(w, esc, n);
	}
	jw_put(w, run, (size_t)(end - run));
	jw_put(w, "\"", 1);
	return 0;
}

static int
jw_value(struct jw *w, const json_t *v, int depth)
{
	char num[STR_INT_MAX];
	const char *sep = "";

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (depth >= JSONFAST_DEPTH)
			return -1;
		jw_put(w, "{", 1);
		for (void *it = json_object_iter((json_t *)v); it;
		     it = json_object_iter_next((json_t *)v, it)) {
			jw_put(w, sep, *sep != 0);
			if (jw_string(w, json_object_iter_key(it), json_object_iter_key_len(it)))
				return -1;
			jw_put(w, ":", 1);
			if (jw_value(w, json_object_iter_value(it), depth + 1))
				return -1;
			sep = ",";
		}
		jw_put(w, "}", 1);
		return 0;
	case JSON_ARRAY:
		if (depth >= JSONFAST_DEPTH)
			return -1;
		jw_put(w, "[", 1);
		for (size_t k = 0; k < json_array_size(v); k++) {
			jw_put(w, sep, *sep != 0);
			if (jw_value(w, json_array_get(v, k), depth + 1))
				return -1;
			sep = ",";
		}
		jw_put(w, "]", 1);
		return 0;
	case JSON_STRING:
		return jw_string(w, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: {
		const char *p = str_of_int(num, json_integer_value(v), 1);

		jw_put(w, p, strlen(p));
		return 0;
	}
	case JSON_TRUE:
		jw_put(w, "true", 4);
		return 0;
	case JSON_FALSE:
		jw_put(w, "false", 5);
		return 0;
	case JSON_NULL:
		jw_put(w, "null", 4);
		return 0;
	default:
		return -1;	/* a real: jansson's %.17g */
	}
}

int
jsonfast_dump(struct strbuf *sb, const json_t *v)
{
	struct jw w = { .sb = sb };
	size_t start = sb->len;

	if (v && jw_value(&w, v, 0) == 0 && !w.bad)
		return 0;
	sb->len = start;
	return -1;
}

static int
dump_to_sb(const char *buf, size_t size, void *data)
{
	return sb_append(data, buf, size) ? -1 : 0;
}

int
json_dump_fast(struct strbuf *sb, const json_t *v)
{
	size_t start = sb->len;

	if (jsonfast_dump(sb, v) == 0)
		return 0;
	if (json_dump_callback(v, dump_to_sb, sb, JSON_COMPACT | JSON_ENCODE_ANY) == 0)
		return 0;
	sb->len = start;
	return -ENOMEM;
}

size_t
json_dump_size(const json_t *v)
{
	struct jw w = {0};

	if (v == NULL)
		return 0;
	if (jw_value(&w, v, 0) == 0)
		return w.n;
	return json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
}
