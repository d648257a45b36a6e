/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the HTTP server's answers (httpd.h, httpd_int.h): the status line and headers
 * written once into the connection's output with the body of a known length behind them, so
 * that both leave in one send; a streamed answer framed in chunks in place as its reader
 * fills the output.
 */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wire/httpd_int.h"

#define CHUNK_HEAD	10	/* room for a chunk's size line: 8 hex digits and CRLF */

struct hd_resp *
hd_resp_buffer(size_t len, const char *body, bool owned)
{
	struct hd_resp *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->body = body;
	r->len = len;
	r->owned = owned;
	return r;
}

struct hd_resp *
hd_resp_reader(size_t block, hd_reader_fn fn, void *cls, void (*free_cb)(void *cls))
{
	struct hd_resp *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->reader = fn;
	r->rcls = cls;
	r->rfree = free_cb;
	r->block = block;
	return r;
}

void
hd_resp_header(struct hd_resp *r, const char *name, const char *value)
{
	sb_appends(&r->hdrs, name);
	sb_append(&r->hdrs, ": ", 2);
	sb_appends(&r->hdrs, value);
	sb_append(&r->hdrs, "\r\n", 2);
}

void
hd_resp_free(struct hd_resp *r)
{
	if (r == NULL)
		return;
	if (r->owned)
		free((char *)r->body);
	if (r->rfree)
		r->rfree(r->rcls);
	sb_free(&r->hdrs);
	free(r);
}

/* The Date header, formatted once a second per thread (a server's loop runs on one). */
static void
date_line(struct strbuf *out)
{
	static __thread time_t date_s;
	static __thread char date[48];
	time_t now = time(NULL);

	if (now != date_s) {
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
		date_s = now;
	}
	sb_appends(out, date);
}

/* The status line, r's headers and the framing: a length, chunks, or the end of the line. */
static void
status_head(struct hd_conn *c, unsigned int status, struct hd_resp *r)
{
	struct strbuf *out = &c->out;
	char num[STR_INT_MAX];

	sb_append(out, "HTTP/1.1 ", 9);
	sb_appends(out, str_of_int(num, status, 3));
	sb_append(out, " ", 1);
	sb_appends(out, hd_reason(status));
	sb_append(out, "\r\n", 2);
	date_line(out);
	sb_append(out, r->hdrs.buf, r->hdrs.len);
	if (status >= 200 && status != 204 && status != 304) {
		if (r->chunked) {
			sb_appends(out, "Transfer-Encoding: chunked\r\n");
		} else if (!r->reader) {
			sb_appends(out, "Content-Length: ");
			sb_appends(out, str_of_int(num, (long long)r->len, 1));
			sb_append(out, "\r\n", 2);
		}
	}
	if (c->close_after)
		sb_appends(out, "Connection: close\r\n");
	sb_append(out, "\r\n", 2);
}

enum hd_result
hd_queue(struct hd_conn *c, unsigned int status, struct hd_resp *r)
{
	if (r == NULL)
		return HD_NO;
	if (c->resp) {
		hd_resp_free(r);
		return HD_NO;
	}
	c->resp = r;
	r->chunked = r->reader && !c->http10 && !c->head_only;
	/*
	 * An answer before the whole body came (a refusal) ends the connection: what is still
	 * on its way is not read. So does a stream to a client that cannot take chunks.
	 */
	c->close_after = !c->keep || !c->body_done || (r->reader && !r->chunked);
	status_head(c, status, r);
	if (!r->reader || c->head_only) {
		if (!c->head_only)
			sb_append(&c->out, r->body, r->len);
		c->resp_done = true;
	}
	return HD_YES;
}

/* One chunk of n bytes, read at out.len + CHUNK_HEAD, framed in place: its size line moves
 * up against what is before it. */
static void
chunk_frame(struct strbuf *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char size[CHUNK_HEAD];
	size_t k = 0, v = n;

	do {
		size[k++] = hex[v & 15];
		v >>= 4;
	} while (v);
	for (size_t i = 0; i < k; i++)
		out->buf[out->len + i] = size[k - 1 - i];
	out->buf[out->len + k] = '\r';
	out->buf[out->len + k + 1] = '\n';
	memmove(out->buf + out->len + k + 2, out->buf + out->len + CHUNK_HEAD, n);
	out->len += k + 2 + n;
	out->buf[out->len++] = '\r';
	out->buf[out->len++] = '\n';
}

bool
hd_pump(struct hd_conn *c)
{
	struct hd_resp *r = c->resp;
	bool moved = false;

	while (!c->resp_done && c->out.len - c->out_off < HD_PUMP_MAX) {
		ssize_t n;

		/* Unchunked (HTTP/1.0): the bytes go where they belong, with no frame. */
		size_t at = r->chunked ? CHUNK_HEAD : 0;

		if (sb_reserve(&c->out, at + r->block + 2)) {
			c->broken = c->resp_done = true;
			return true;
		}
		n = r->reader(r->rcls, c->out.buf + c->out.len + at, r->block);
		if (n > 0 && r->chunked) {
			chunk_frame(&c->out, (size_t)n);
		} else if (n > 0) {
			c->out.len += (size_t)n;
		} else if (n == 0) {
			break;
		} else {
			if (n == HD_READ_END && r->chunked)
				sb_appends(&c->out, "0\r\n\r\n");
			c->broken = n != HD_READ_END;
			c->resp_done = true;
		}
		moved = true;
	}
	return moved;
}
