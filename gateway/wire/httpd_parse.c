/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: reading HTTP/1.1 requests (httpd_int.h): the head, the body's framing, chunked
 * bodies. Strict where leniency would let two readers of one request disagree (a folded
 * header, a length and a chunked body together, a bare CR), lenient where clients differ
 * harmlessly (bare LF line ends, empty lines before a request).
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire/httpd_int.h"

/* A size no request of ours comes near; it keeps the arithmetic far from overflow. */
#define BODY_MAX	(1ULL << 40)
#define CHUNK_LINE_MAX	1024

void
hd_take(struct hd_conn *c, size_t n)
{
	if (n < c->in_len)
		memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

const char *
hd_reason(unsigned int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Status";
	}
}

/* RFC 9110 token characters (a method, a header's name), as a table: every header's name
 * goes through it. */
static const bool tchar[256] = {
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1,
	['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
};

static bool
is_token(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!tchar[(unsigned char)s[i]])
			return false;
	return true;
}

/* The line at *pos (its end in *next), CR before LF cut, NUL-terminated in place. */
static char *
line_at(char *pos, char *end, char **next)
{
	char *nl = memchr(pos, '\n', (size_t)(end - pos));

	if (nl == NULL)
		return NULL;
	*next = nl + 1;
	if (nl > pos && nl[-1] == '\r')
		nl--;
	*nl = '\0';
	return pos;
}

/*
 * The path a target names, cut in place: "/path?query" (the query means nothing to us),
 * "http://host/path" (absolute form, which servers must accept), or "*". NULL: none.
 */
static const char *
target_path(char *t)
{
	char *q;

	if (strncasecmp(t, "http://", 7) == 0 || strncasecmp(t, "https://", 8) == 0) {
		t = strchr(strstr(t, "//") + 2, '/');
		if (t == NULL)
			return "/";
	}
	if (strcmp(t, "*") == 0)
		return t;
	if (*t != '/')
		return NULL;
	q = strchr(t, '?');
	if (q)
		*q = '\0';
	return t;
}

/* "METHOD target HTTP/1.x": 0, or the status of the refusal. */
static int
request_line(struct hd_conn *c, char *line)
{
	char *sp1 = strchr(line, ' '), *sp2, *q;

	if (sp1 == NULL || !is_token(line, (size_t)(sp1 - line)))
		return HTTP_BAD_REQUEST;
	*sp1 = '\0';
	sp2 = strchr(sp1 + 1, ' ');
	if (sp2 == NULL || sp2 == sp1 + 1)
		return HTTP_BAD_REQUEST;
	*sp2 = '\0';
	for (q = sp1 + 1; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f)
			return HTTP_BAD_REQUEST;
	if (strcmp(sp2 + 1, "HTTP/1.1") == 0)
		c->http10 = false;
	else if (strcmp(sp2 + 1, "HTTP/1.0") == 0)
		c->http10 = true;
	else
		return strncmp(sp2 + 1, "HTTP/", 5) == 0 ? HTTP_VERSION_NOT_SUPPORTED :
		       HTTP_BAD_REQUEST;
	c->method = line;
	c->url = target_path(sp1 + 1);
	return c->url ? 0 : HTTP_BAD_REQUEST;
}

/* "Name: value", the value trimmed: 0, or the status of the refusal. */
static int
header_line(struct hd_conn *c, char *line)
{
	char *colon = strchr(line, ':'), *v, *e;

	/* A folded line (obs-fold) or a name with spaces is refused, not guessed at. */
	if (colon == NULL || !is_token(line, (size_t)(colon - line)))
		return HTTP_BAD_REQUEST;
	if (c->nhdr == HD_HEADERS_MAX)
		return HTTP_HEADERS_TOO_LARGE;
	*colon = '\0';
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t'); e--)
		;
	*e = '\0';
	for (char *p = v; p < e; p++)
		if (((unsigned char)*p < ' ' && *p != '\t') || *p == 0x7f)
			return HTTP_BAD_REQUEST;
	c->hdr[c->nhdr].name = line;
	c->hdr[c->nhdr].value = v;
	c->hdr[c->nhdr].len = (size_t)(colon - line);
	c->nhdr++;
	return 0;
}

/* Whether a comma-separated header value lists tok (any case). */
static bool
lists_token(const char *v, const char *tok)
{
	size_t n = strlen(tok);

	while (v && *v) {
		while (*v == ' ' || *v == '\t' || *v == ',')
			v++;
		if (strncasecmp(v, tok, n) == 0 && (v[n] == '\0' || v[n] == ',' || v[n] == ' ' ||
						    v[n] == '\t'))
			return true;
		v = strchr(v, ',');
	}
	return false;
}

static int
parse_lines(struct hd_conn *c, char *head, size_t len)
{
	char *end = head + len, *next, *line;
	const char *conn, *expect;
	int st;

	if (memchr(head, '\0', len))
		return HTTP_BAD_REQUEST;
	line = line_at(head, end, &next);
	st = line ? request_line(c, line) : HTTP_BAD_REQUEST;
	while (st == 0 && (line = line_at(next, end, &next)) != NULL && *line)
		st = header_line(c, line);
	if (st)
		return st;
	/* RFC 9112: a 1.1 request without Host is refused. */
	if (!c->http10 && hd_header(c, "Host") == NULL)
		return HTTP_BAD_REQUEST;
	conn = hd_header(c, "Connection");
	c->keep = !c->http10 && !lists_token(conn, "close");
	expect = hd_header(c, "Expect");
	c->expect100 = !c->http10 && expect && strcasecmp(expect, "100-continue") == 0;
	c->head_only = strcmp(c->method, "HEAD") == 0;
	return 0;
}

int
hd_parse_head(struct hd_conn *c)
{
	char *in = c->in, *nl, *end = NULL;
	size_t skip = 0, len, scan;

	/* Empty lines before a request line are a client's stray CRLF after a body. */
	while (skip < c->in_len && (in[skip] == '\r' || in[skip] == '\n'))
		skip++;
	hd_take(c, skip);
	scan = c->in_len < HD_HEAD_MAX ? c->in_len : HD_HEAD_MAX;
	for (size_t i = 0; i < scan; i++) {
		nl = memchr(in + i, '\n', scan - i);
		if (nl == NULL)
			break;
		i = (size_t)(nl - in);
		if (i + 1 < scan && in[i + 1] == '\n') {
			end = in + i + 2;
			break;
		}
		if (i + 2 < scan && in[i + 1] == '\r' && in[i + 2] == '\n') {
			end = in + i + 3;
			break;
		}
	}
	if (end == NULL)
		return c->in_len >= HD_HEAD_MAX ? HTTP_HEADERS_TOO_LARGE : 1;
	len = (size_t)(end - in);
	c->head = malloc(len + 1);
	if (c->head == NULL)
		return HTTP_INTERNAL_SERVER_ERROR;
	memcpy(c->head, in, len);
	c->head[len] = '\0';
	hd_take(c, len);
	return parse_lines(c, c->head, len);
}

/* Digits only, one value however often it is sent: else the length is not trusted. */
static int
content_length(struct hd_conn *c, uint64_t *out)
{
	bool seen = false;

	for (unsigned int i = 0; i < c->nhdr; i++) {
		const char *v = c->hdr[i].value;
		uint64_t n = 0;

		if (strcasecmp(c->hdr[i].name, "Content-Length") != 0)
			continue;
		if (*v == '\0')
			return HTTP_BAD_REQUEST;
		for (; *v; v++) {
			if (*v < '0' || *v > '9')
				return HTTP_BAD_REQUEST;
			n = n * 10 + (uint64_t)(*v - '0');
			if (n > BODY_MAX)
				return HTTP_CONTENT_TOO_LARGE;
		}
		if (seen && n != *out)
			return HTTP_BAD_REQUEST;
		seen = true;
		*out = n;
	}
	return seen ? 0 : 1;
}

int
hd_parse_framing(struct hd_conn *c)
{
	const char *te = NULL;
	uint64_t len = 0;
	unsigned int nte = 0;
	int cl = content_length(c, &len);

	if (cl > 1)
		return cl;
	for (unsigned int i = 0; i < c->nhdr; i++)
		if (strcasecmp(c->hdr[i].name, "Transfer-Encoding") == 0) {
			te = c->hdr[i].value;
			nte++;
		}
	if (te) {
		/* Both framings, or a coding we do not speak: which one is meant is not guessed. */
		if (c->http10 || cl == 0 || nte > 1)
			return HTTP_BAD_REQUEST;
		if (strcasecmp(te, "chunked") != 0)
			return HTTP_NOT_IMPLEMENTED;
		c->chunked = true;
		c->cstate = HC_SIZE;
		c->body_done = false;
		return 0;
	}
	c->body_len = c->body_left = len;
	c->body_done = len == 0;
	return 0;
}

/* "<hex>[;ext]" at the start of c->in, its line taken: 1, 0 (incomplete) or -1. */
static int
chunk_size(struct hd_conn *c)
{
	char *nl = c->in_len ? memchr(c->in, '\n', c->in_len) : NULL;
	uint64_t v = 0;
	size_t i;

	if (nl == NULL)
		return c->in_len > CHUNK_LINE_MAX ? -1 : 0;
	for (i = 0; c->in + i < nl; i++) {
		char ch = c->in[i];
		int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
			ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;

		if (d < 0)
			break;
		v = v * 16 + (uint64_t)d;
		if (v > BODY_MAX)
			return -1;
	}
	if (i == 0 || (c->in + i < nl && c->in[i] != ';' && c->in[i] != '\r' &&
		       c->in[i] != ' ' && c->in[i] != '\t'))
		return -1;
	hd_take(c, (size_t)(nl - c->in) + 1);
	c->body_left = v;
	c->cstate = v ? HC_DATA : HC_TRAILER;
	return 1;
}

/* The CRLF after a chunk's bytes, or the trailer: 1 taken, 0 incomplete, -1 bad. */
static int
chunk_framing(struct hd_conn *c)
{
	char *nl;

	if (c->cstate == HC_DATA_END) {
		if (c->in_len == 0 || (c->in[0] == '\r' && c->in_len < 2))
			return 0;
		if (c->in[0] == '\n') {
			hd_take(c, 1);
		} else if (c->in[0] == '\r' && c->in[1] == '\n') {
			hd_take(c, 2);
		} else {
			return -1;
		}
		c->cstate = HC_SIZE;
		return 1;
	}
	nl = c->in_len ? memchr(c->in, '\n', c->in_len) : NULL;
	if (nl == NULL)
		return c->in_len > HD_HEAD_MAX ? -1 : 0;
	if (nl == c->in || (nl == c->in + 1 && c->in[0] == '\r'))
		c->body_done = true;
	hd_take(c, (size_t)(nl - c->in) + 1);
	return 1;
}

int
hd_body_piece(struct hd_conn *c, const char **p, size_t *n)
{
	*p = c->in;
	*n = 0;
	while (!c->body_done) {
		int r;

		if (!c->chunked || c->cstate == HC_DATA) {
			size_t m = c->in_len < c->body_left ? c->in_len : (size_t)c->body_left;

			*p = c->in;
			*n = m;
			c->body_left -= m;
			if (c->body_left == 0) {
				if (c->chunked)
					c->cstate = HC_DATA_END;
				else
					c->body_done = true;
			}
			return 0;
		}
		r = c->cstate == HC_SIZE ? chunk_size(c) : chunk_framing(c);
		if (r <= 0)
			return r;
	}
	return 0;
}
