/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: JSON text to jansson values, faster than json_loadb() on the messages a
 * gateway reads on every call (issue 37: json_loadb was a fifth of the gateway's user-space
 * instructions per tools/call). A strict subset is parsed here: objects and arrays at most
 * JSONFAST_DEPTH deep, strings of printable ASCII with the short escapes (\" \\ \/ \b \f \n
 * \r \t), integers that fit in 18 digits, true, false, null, JSON's whitespace, no key twice
 * in an object. Anything else (a \u escape, a non-ASCII byte, a real, a duplicate key, an
 * error of any kind) is left to jansson, whose value or error is the one the caller gets.
 * Where this parser takes a text, its value is the one json_loadb(text, len, 0) makes:
 * the same types, the same members in the same order (tests/gateway/jsonfast.c).
 */
#ifndef GW_JSONFAST_H
#define GW_JSONFAST_H

#include <stddef.h>

#include <jansson.h>

#include "base/str.h"

#define JSONFAST_DEPTH	32

/* json_loadb(buf, len, 0, err), by the fast parser where it takes the text. */
json_t *json_load_fast(const char *buf, size_t len, json_error_t *err);
/* The fast parser alone: NULL where it leaves the text to jansson (for the tests). */
json_t *jsonfast_parse(const char *buf, size_t len);

/*
 * The other way: v's text as json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) spells it,
 * appended to sb; 0, or -ENOMEM with sb as it was. Written here for the same subset (no
 * reals, strings of ASCII, at most JSONFAST_DEPTH deep), by jansson otherwise.
 */
int json_dump_fast(struct strbuf *sb, const json_t *v);
/* The length of that text, without writing it; 0 for NULL or a value jansson cannot dump. */
size_t json_dump_size(const json_t *v);
/* The fast writer alone: -1 where it leaves v to jansson (sb as it was), for the tests. */
int jsonfast_dump(struct strbuf *sb, const json_t *v);

#endif /* GW_JSONFAST_H */
