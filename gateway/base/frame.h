/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: newline framing of a server's output in bounded memory (frame.c). */
#ifndef GW_FRAME_H
#define GW_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/str.h"

#define GW_MAX_LINE	(32u << 20)	/* longest message line accepted from a server */
#define GW_MAX_LINE_TEXT	"32 MiB"

typedef void (*framer_line_fn)(void *ctx, const char *line, size_t len);

struct line_framer {
	struct strbuf buf;	/* the unfinished line */
	size_t max;
	bool skipping;		/* inside a line that outgrew max: drop up to its newline */
	uint64_t dropped;
};

void framer_init(struct line_framer *f, size_t max);
/*
 * Feed bytes; cb gets every non-empty line without its newline. Returns how many lines
 * outgrew the limit in this chunk (they are dropped), or -ENOMEM.
 */
int framer_feed(struct line_framer *f, const char *data, size_t n, framer_line_fn cb,
		void *ctx);
void framer_fini(struct line_framer *f);

#endif /* GW_FRAME_H */
