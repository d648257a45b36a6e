/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: what a stdio MCP server writes, through the gateway's line framer into its
 * JSON-RPC envelope handling (response matching, server requests, garbage). The first byte
 * picks the chunk size, so lines split across reads at every place; the framer limit is small
 * so oversized lines are reached. Checks: every line handed on is within the limit and holds
 * no newline, and the byte count adds up; and where the fast JSON parser takes a line, its
 * value is jansson's (base/jsonfast.h), and the fast writer writes it as jansson does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "base/frame.h"
#include "base/jsonfast.h"
#include "config/config.h"
#include "upstream/upstream.h"

#define FUZZ_LINE_MAX	512

struct frame_tally {
	struct upstream *u;
	size_t bytes;
};

static void
jsonfast_check(const char *line, size_t len)
{
	json_t *fast = jsonfast_parse(line, len), *slow;
	char *a, *b;
	struct strbuf sb = {0};

	if (fast == NULL)
		return;
	slow = json_loadb(line, len, 0, NULL);
	a = json_dumps(fast, JSON_COMPACT | JSON_ENCODE_ANY);
	b = slow ? json_dumps(slow, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	if (!a || !b || strcmp(a, b) || !json_equal(fast, slow))
		fuzz_fail_at("fuzz_gw_frame", "the fast parser's value is not jansson's", NULL);
	if (jsonfast_dump(&sb, slow) == 0 && (sb.len != strlen(b) || memcmp(sb.buf, b, sb.len)))
		fuzz_fail_at("fuzz_gw_frame", "the fast writer's text is not jansson's", NULL);
	sb_free(&sb);
	free(a);
	free(b);
	json_decref(fast);
	json_decref(slow);
}

static void
on_line(void *ctx, const char *line, size_t len)
{
	struct frame_tally *t = ctx;

	if (len == 0 || len > FUZZ_LINE_MAX || memchr(line, '\n', len))
		fuzz_fail_at("fuzz_gw_frame", "line handed on is empty, too long or split", NULL);
	t->bytes += len;
	jsonfast_check(line, len);
	upstream_input(t->u, line, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct server_spec spec = { .name = (char *)"fuzz" };
static struct upstream *up;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	up = upstream_new(&spec, "fuzz");
	return up ? 0 : -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_tally t = { .u = up };
	struct line_framer fr;
	size_t chunk, off = 0, newlines = 0, i;
	int rc, over = 0;

	if (size < 1)
		return 0;
	chunk = (size_t)data[0] % 64 + 1;
	data++;
	size--;
	framer_init(&fr, FUZZ_LINE_MAX);
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk;

		rc = framer_feed(&fr, (const char *)data + off, n, on_line, &t);
		if (rc < 0)
			fuzz_fail_at("fuzz_gw_frame", "out of memory", NULL);
		over += rc;
		off += n;
	}
	if (fr.buf.len > FUZZ_LINE_MAX)
		fuzz_fail_at("fuzz_gw_frame", "pending line over the limit", NULL);
	for (i = 0; i < size; i++)
		newlines += data[i] == '\n';
	/* Without a dropped line, every byte is delivered, a newline, or still pending. */
	if (fr.dropped == 0 && t.bytes + newlines + fr.buf.len != size)
		fuzz_fail_at("fuzz_gw_frame", "bytes lost without a dropped line", NULL);
	if ((uint64_t)over != fr.dropped)
		fuzz_fail_at("fuzz_gw_frame", "dropped lines miscounted", NULL);
	framer_fini(&fr);
	return 0;
}
