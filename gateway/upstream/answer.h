/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: a server's answer relayed as the text it came in (answer.c), without parsing it
 * into jansson and dumping it again (issue 37: parsing and dumping were a fifth of the
 * gateway's user time per call). Only an answer in the one simple shape whose relayed text is
 * certain to be byte for byte what the jansson path would send is taken; every other line
 * goes that path. And a request written as its line without building it as an object first.
 */
#ifndef GW_ANSWER_H
#define GW_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/str.h"

/* A successful answer: our request id, and where its result's JSON text is in the line. */
struct up_answer {
	int64_t id;
	const char *result;
	size_t result_len;
	bool is_error;		/* the result is an object whose isError is true */
};

/*
 * Whether line (without its newline) is exactly {"jsonrpc":"2.0","id":<integer>,"result":
 * <value>} in any order of the three members, each once and nothing else, and written the
 * way jansson's compact dump writes it (no whitespace, no escape jansson would not write,
 * integers only, no duplicate key in any object, well-formed UTF-8, a bounded depth). Then
 * the result's text is what json_dumps() of the parsed result gives, and a fills in.
 * False: anything else, for the caller to parse with jansson as before.
 */
bool up_answer_scan(const char *line, size_t len, struct up_answer *a);

/*
 * The other way, a request to a server as one line with its newline, appended to sb: the
 * bytes json_dumps(JSON_COMPACT) of {"jsonrpc":"2.0","id":id,"method":method,"params":params}
 * gives (params NULL: no member), without building that object. -EINVAL for a method that
 * would need escaping (none the gateway sends): the caller dumps the object instead.
 */
int up_request_line(struct strbuf *sb, int64_t id, const char *method, json_t *params);

#endif /* GW_ANSWER_H */
