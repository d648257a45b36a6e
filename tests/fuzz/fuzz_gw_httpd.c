/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the gateway's HTTP request reader (gateway/wire/httpd_parse.c) on
 * whatever a client may send, in pieces of whatever size a socket hands over:
 *
 *   input = piece:1 bytes:rest      (piece: the most one read returns, 1..256)
 *
 * Requests follow each other on the connection as long as they parse (pipelining). Checks:
 * nothing read outside its buffer (ASan), a parsed head has a method, a path and token-named
 * headers, a body of known length is handed on whole and no more, a chunked body is never
 * more than the bytes that came, and the reader only ever asks for more, refuses, or goes on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "wire/httpd_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_fail(const char *what, const char *detail)
{
	fuzz_fail_at("fuzz_gw_httpd", what, detail);
}

static void
check_head(struct hd_conn *c)
{
	if (c->method == NULL || c->url == NULL || *c->method == '\0' || *c->url == '\0')
		fuzz_fail("a parsed head without method or path", c->head);
	if (c->nhdr > HD_HEADERS_MAX)
		fuzz_fail("more headers than the table holds", c->head);
	for (unsigned int i = 0; i < c->nhdr; i++)
		if (*c->hdr[i].name == '\0' || strpbrk(c->hdr[i].name, " \t:\r\n"))
			fuzz_fail("a header name that is not a token", c->hdr[i].name);
}

/* The body of the request just parsed, from what is in c->in now: 1 done, 0 more, -1 bad. */
static int
body_step(struct hd_conn *c, uint64_t *handed)
{
	for (;;) {
		const char *p;
		size_t n;

		if (hd_body_piece(c, &p, &n) < 0)
			return -1;
		if (n == 0)
			return c->body_done ? 1 : 0;
		if (p != c->in || n > c->in_len)
			fuzz_fail("a body piece outside the input", NULL);
		*handed += n;
		hd_take(c, n);
	}
}

static void
request_reset(struct hd_conn *c)
{
	free(c->head);
	c->head = NULL;
	c->nhdr = 0;
	c->method = c->url = NULL;
	c->chunked = c->body_done = false;
	c->body_left = 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hd_conn c;
	size_t piece, off = 1, fed = 0;
	uint64_t handed = 0, want = 0;
	bool in_body = false;

	if (size < 1)
		return 0;
	piece = 1 + data[0];
	memset(&c, 0, sizeof(c));
	c.in = malloc(HD_IN_SIZE);
	for (;;) {
		size_t n = size - off;

		if (n > piece)
			n = piece;
		if (n > HD_IN_SIZE - c.in_len)
			n = HD_IN_SIZE - c.in_len;
		memcpy(c.in + c.in_len, data + off, n);
		c.in_len += n;
		off += n;
		fed += n;
		for (;;) {
			int r;

			if (!in_body) {
				r = hd_parse_head(&c);
				if (r == 1)
					break;
				if (r == 0)
					r = hd_parse_framing(&c);
				if (r) {
					if (r < 400 || r > 505)
						fuzz_fail("a refusal with a status we do not send", NULL);
					goto out;
				}
				check_head(&c);
				in_body = true;
				handed = 0;
				want = c.chunked ? 0 : c.body_left;
			}
			r = body_step(&c, &handed);
			if (r < 0)
				goto out;
			if (r == 0)
				break;
			if (!c.chunked && handed != want)
				fuzz_fail("a body of known length not handed on whole", NULL);
			if (handed > fed)
				fuzz_fail("more body than the bytes that came", NULL);
			in_body = false;
			request_reset(&c);
		}
		if (off == size || (n == 0 && c.in_len == HD_IN_SIZE))
			break;
	}
out:
	request_reset(&c);
	free(c.in);
	return 0;
}
