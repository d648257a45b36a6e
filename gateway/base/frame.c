/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: line framing of a stdio server's output. MCP over stdio is one JSON message per
 * line; a server that never sends a newline must not make the gateway buffer without end, so a
 * line longer than the limit is dropped (and reported) instead of kept.
 */

#include <errno.h>
#include <string.h>

#include "base/frame.h"
#include "base/str.h"

#define FRAMER_KEEP	(1u << 20)

void
framer_init(struct line_framer *f, size_t max)
{
	memset(f, 0, sizeof(*f));
	f->max = max;
}

void
framer_fini(struct line_framer *f)
{
	sb_free(&f->buf);
}

int
framer_feed(struct line_framer *f, const char *data, size_t n, framer_line_fn cb, void *ctx)
{
	int over = 0;

	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t seg = nl ? (size_t)(nl - data) : n;
		size_t step = seg + (nl ? 1 : 0);

		if (f->skipping) {
			/* The rest of an oversized line: thrown away up to its newline. */
			if (nl)
				f->skipping = false;
		} else if (f->buf.len + seg > f->max) {
			over++;
			f->dropped++;
			sb_free(&f->buf);
			f->skipping = nl == NULL;
		} else if (nl && f->buf.len == 0) {
			/* A whole line inside this chunk: no copy needed. */
			if (seg)
				cb(ctx, data, seg);
		} else {
			if (sb_append(&f->buf, data, seg))
				return -ENOMEM;
			if (nl) {
				cb(ctx, f->buf.buf, f->buf.len);
				/* Give a big line's memory back rather than keep it per server. */
				if (f->buf.cap > FRAMER_KEEP)
					sb_free(&f->buf);
				else
					f->buf.len = 0;
			}
		}
		data += step;
		n -= step;
	}
	return over;
}
