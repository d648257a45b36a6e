/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the strict scanner of a server's answer (answer.h). Why it is safe to relay the
 * server's bytes: the jansson path parses the line and sends json_dumps(JSON_COMPACT) of
 * {"jsonrpc":"2.0","id":<client id>,"result":<the parsed result>}. Every JSON value has many
 * spellings but exactly one is what that dump writes: no whitespace, keys in the order they
 * came (jansson keeps insertion order), strings with only ", \ and the control characters
 * \b \f \n \r \t escaped and every other character as its UTF-8 bytes (other controls as
 * \u00XX), integers in plain decimal. This scanner accepts only text that is already that
 * spelling, in a grammar with one spelling per value (no \u, no \/, no reals, no "-0"),
 * so its bytes equal the dump of what jansson would parse from them, and rejects whatever
 * jansson would refuse or change (invalid UTF-8, integers it cannot hold, a duplicate key,
 * which jansson would fold into one). A false from here costs nothing but speed: the line
 * goes to jansson, which is what every line did before.
 *
 * What a hostile server gains: nothing it did not have. The result was always relayed
 * unchanged (tool rules apply to names, in routing and listing, not to results; listing
 * answers are the gateway's own requests and never come here); the id is always ours,
 * replaced by the client's; the audit line reads only isError, found here at the result's
 * top level exactly as json_is_true() would. A second "id", a "method" (a server request or
 * notification posing as an answer), an "error", escapes that spell a key another way, a raw
 * CR or control byte that could split an SSE event, or any key not named above: not taken.
 */

#include <errno.h>
#include <string.h>

#include "base/jsonfast.h"
#include "upstream/answer.h"

#define SCAN_DEPTH	32	/* deeper nesting goes to jansson (its limit is 2048) */
#define SCAN_KEYS	32	/* an object with more keys goes to jansson: bounds the
				 * duplicate check, which compares each key with the earlier ones */
#define SCAN_DIGITS	18	/* longer integers go to jansson, which holds up to 19 */

struct scan {
	const char *p;
	const char *end;
	int depth;
};

struct span {
	const char *p;
	size_t n;
};

/* At a byte >= 0x80: one well-formed UTF-8 sequence (Unicode table 3-7), as jansson checks. */
static bool
scan_utf8(struct scan *s)
{
	const unsigned char *p = (const unsigned char *)s->p;
	size_t left = (size_t)(s->end - s->p), n, i;
	unsigned char lo = 0x80, hi = 0xBF;

	if (p[0] >= 0xC2 && p[0] <= 0xDF) {
		n = 2;
	} else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		n = 3;
		if (p[0] == 0xE0)
			lo = 0xA0;	/* overlong */
		if (p[0] == 0xED)
			hi = 0x9F;	/* surrogates */
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		n = 4;
		if (p[0] == 0xF0)
			lo = 0x90;	/* overlong */
		if (p[0] == 0xF4)
			hi = 0x8F;	/* above U+10FFFF */
	} else {
		return false;
	}
	if (left < n || p[1] < lo || p[1] > hi)
		return false;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return false;
	s->p += n;
	return true;
}

/* At '"': a string spelled as jansson's dump spells it. */
static bool
scan_string(struct scan *s)
{
	const char *p = s->p + 1;

	for (;;) {
		unsigned char c;

		if (p >= s->end)
			return false;
		c = (unsigned char)*p;
		if (c == '"') {
			s->p = p + 1;
			return true;
		}
		if (c < 0x20)
			return false;	/* raw control bytes: jansson refuses them */
		if (c == '\\') {
			/* \/ and \u have another spelling in the dump (or, \u0000, none). */
			if (p + 1 >= s->end || !strchr("\"\\bfnrt", p[1]) || p[1] == '\0')
				return false;
			p += 2;
		} else if (c >= 0x80) {
			s->p = p;
			if (!scan_utf8(s))
				return false;
			p = s->p;
		} else {
			p++;
		}
	}
}

/* An integer in plain decimal that jansson holds (*v, if asked); reals are not taken. */
static bool
scan_integer(struct scan *s, int64_t *v)
{
	const char *p = s->p, *digits;
	bool neg = p < s->end && *p == '-';
	int64_t n = 0;

	if (neg)
		p++;
	digits = p;
	/* Counted, not summed, past what an int64_t holds: such a number is refused below. */
	for (; p < s->end && *p >= '0' && *p <= '9'; p++)
		if (p - digits < SCAN_DIGITS)
			n = n * 10 + (*p - '0');
	if (p == digits || p - digits > SCAN_DIGITS)
		return false;
	/* "01" is not JSON; "-0" parses as 0, which the dump writes "0". */
	if (*digits == '0' && (p - digits > 1 || neg))
		return false;
	if (p < s->end && (*p == '.' || *p == 'e' || *p == 'E'))
		return false;
	if (v)
		*v = neg ? -n : n;
	s->p = p;
	return true;
}

static bool
scan_word(struct scan *s, const char *w, size_t n)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return false;
	s->p += n;
	return true;
}

static bool scan_value(struct scan *s, bool *is_error);

/*
 * The keys are compared as they are spelled: with one spelling per string, equal bytes are
 * equal keys and different bytes different ones.
 */
static bool
key_seen(const struct span *keys, int n, struct span k)
{
	for (int i = 0; i < n; i++)
		if (keys[i].n == k.n && memcmp(keys[i].p, k.p, k.n) == 0)
			return true;
	return false;
}

/* At '{'. With is_error: whether its member "isError" is true (the audit's tool_error). */
static bool
scan_object(struct scan *s, bool *is_error)
{
	struct span keys[SCAN_KEYS];
	int n = 0;

	s->p++;
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		return true;
	}
	for (;;) {
		struct span k = { s->p, 0 };
		const char *v;

		if (n == SCAN_KEYS || s->p >= s->end || *s->p != '"' || !scan_string(s))
			return false;
		k.n = (size_t)(s->p - k.p);
		if (key_seen(keys, n, k))
			return false;
		keys[n++] = k;
		if (s->p >= s->end || *s->p != ':')
			return false;
		v = ++s->p;
		if (!scan_value(s, NULL))
			return false;
		if (is_error && k.n == 9 && memcmp(k.p, "\"isError\"", 9) == 0)
			*is_error = s->p - v == 4 && memcmp(v, "true", 4) == 0;
		if (s->p >= s->end)
			return false;
		if (*s->p == '}') {
			s->p++;
			return true;
		}
		if (*s->p != ',')
			return false;
		s->p++;
	}
}

/* At '['. */
static bool
scan_array(struct scan *s)
{
	s->p++;
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return true;
	}
	for (;;) {
		if (!scan_value(s, NULL) || s->p >= s->end)
			return false;
		if (*s->p == ']') {
			s->p++;
			return true;
		}
		if (*s->p != ',')
			return false;
		s->p++;
	}
}

static bool
scan_value(struct scan *s, bool *is_error)
{
	bool ok;

	if (s->p >= s->end)
		return false;
	switch (*s->p) {
	case '"':
		return scan_string(s);
	case '{':
	case '[':
		if (s->depth == SCAN_DEPTH)
			return false;
		s->depth++;
		ok = *s->p == '{' ? scan_object(s, is_error) : scan_array(s);
		s->depth--;
		return ok;
	case 't':
		return scan_word(s, "true", 4);
	case 'f':
		return scan_word(s, "false", 5);
	case 'n':
		return scan_word(s, "null", 4);
	default:
		return scan_integer(s, NULL);
	}
}

/* One member of the answer object: which of the three it is, each taken once. */
static bool
scan_member(struct scan *s, unsigned *seen, struct up_answer *a)
{
	static const struct span names[] = {
		{ "\"jsonrpc\"", 9 }, { "\"id\"", 4 }, { "\"result\"", 8 },
	};
	struct span k = { s->p, 0 };
	unsigned i;

	if (s->p >= s->end || *s->p != '"' || !scan_string(s))
		return false;
	k.n = (size_t)(s->p - k.p);
	for (i = 0; i < 3; i++)
		if (names[i].n == k.n && memcmp(names[i].p, k.p, k.n) == 0)
			break;
	if (i == 3 || (*seen & (1u << i)) || s->p >= s->end || *s->p++ != ':')
		return false;
	*seen |= 1u << i;
	if (i == 0)
		return scan_word(s, "\"2.0\"", 5);
	if (i == 1)
		return scan_integer(s, &a->id);
	a->result = s->p;
	if (!scan_value(s, &a->is_error))
		return false;
	a->result_len = (size_t)(s->p - a->result);
	return true;
}

bool
up_answer_scan(const char *line, size_t len, struct up_answer *a)
{
	struct scan s = { line, line + len, 1 };
	unsigned seen = 0;

	memset(a, 0, sizeof(*a));
	if (len < 2 || line[0] != '{')
		return false;
	s.p++;
	for (;;) {
		if (!scan_member(&s, &seen, a) || s.p >= s.end)
			return false;
		if (*s.p == '}')
			break;
		if (*s.p != ',')
			return false;
		s.p++;
	}
	/* The object ends the line: trailing bytes (even whitespace) go to jansson. */
	return s.p + 1 == s.end && seen == 7;
}

/* ---- requests ------------------------------------------------------------------------------ */

/*
 * The same bytes as the dump of the object: jansson writes an object's members in the order
 * they were set, and params is written here as it would be in place (json_dump_fast). The
 * method is written as it is, which is its JSON spelling when it holds no byte jansson
 * escapes (nor any non-ASCII one, to be simple).
 */
int
up_request_line(struct strbuf *sb, int64_t id, const char *method, json_t *params)
{
	int rc;

	for (const unsigned char *m = (const unsigned char *)method; *m; m++)
		if (*m < 0x20 || *m >= 0x80 || *m == '"' || *m == '\\')
			return -EINVAL;
	rc = sb_appends(sb, "{\"jsonrpc\":\"2.0\",\"id\":");
	rc |= sb_append_int(sb, id, 1);
	rc |= sb_appends(sb, ",\"method\":\"");
	rc |= sb_appends(sb, method);
	rc |= sb_append(sb, "\"", 1);
	if (params && !rc) {
		rc = sb_appends(sb, ",\"params\":");
		if (!rc)
			rc = json_dump_fast(sb, params);
	}
	rc |= sb_append(sb, "}\n", 2);
	return rc ? -ENOMEM : 0;
}
