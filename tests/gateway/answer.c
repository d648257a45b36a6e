/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the answer relayed as text (gateway/upstream/answer.c, issue 37): whenever the
 * scanner takes a line, the text the gateway sends (the client's id spliced in, the result's
 * bytes as they came) must be byte for byte what the jansson path sends for that line
 * (relay.c link_done: parse, {"jsonrpc":"2.0","id":<cid>,"result":<result>}, dump), with
 * the same request id and the same isError for the audit log; and every line jansson
 * refuses, or reads as something other than a plain answer, must not be taken. Checked on a
 * table of shapes a hostile server might try, on random messages in random spellings and on
 * random mutations of accepted ones, all from fixed seeds. And the other way: a request
 * written as its line is the dump of the object it stands for.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "base/str.h"
#include "upstream/answer.h"

static int taken, refused;


/* What the jansson path makes of line: the text sent for client id cid, or NULL (no answer). */
static char *
slow_path(const char *line, size_t len, json_t *cid, int64_t *id, bool *is_error)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, len, 0, &jerr), *out, *v;
	char *text = NULL;

	/* upstream_input: an object with no method and an integer id is an answer. */
	if (!json_is_object(msg) || json_object_get(msg, "method") ||
	    !json_is_integer(json_object_get(msg, "id"))) {
		json_decref(msg);
		return NULL;
	}
	*id = json_integer_value(json_object_get(msg, "id"));
	/* relay.c link_done, and relay_audit's isError. */
	out = json_pack("{s:s,s:O}", "jsonrpc", "2.0", "id", cid);
	v = json_object_get(msg, "error");
	if (json_is_object(v))
		json_object_set(out, "error", v);
	else if ((v = json_object_get(msg, "result")) != NULL)
		json_object_set(out, "result", v);
	*is_error = !json_is_object(json_object_get(msg, "error")) &&
		    json_is_true(json_object_get(json_object_get(out, "result"), "isError"));
	text = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	json_decref(msg);
	return text;
}

/* What relay.c link_done_text sends, or NULL when the scanner does not take the line. */
static char *
fast_path(const char *line, size_t len, const char *cidtext, struct up_answer *a)
{
	struct strbuf sb = {0};

	if (!up_answer_scan(line, len, a))
		return NULL;
	sb_appends(&sb, "{\"jsonrpc\":\"2.0\",\"id\":");
	sb_appends(&sb, cidtext);
	sb_appends(&sb, ",\"result\":");
	sb_append(&sb, a->result, a->result_len);
	sb_append(&sb, "}", 1);
	return sb_steal(&sb);
}

/* The property, for one line and three client ids. Returns whether the scanner took it. */
static bool
check_line(const char *line, size_t len)
{
	static const char *const cids[] = { "7", "\"abc\"", "\"q\\\"\\\\\\n\xc3\xa9\"" };
	bool took = false;

	for (size_t i = 0; i < sizeof(cids) / sizeof(cids[0]); i++) {
		json_t *cid = json_loads(cids[i], JSON_DECODE_ANY, NULL);
		char *cidtext = json_dumps(cid, JSON_ENCODE_ANY | JSON_COMPACT);
		struct up_answer a;
		int64_t id = 0;
		bool is_error = false;
		char *slow = slow_path(line, len, cid, &id, &is_error);
		char *fast = fast_path(line, len, cidtext, &a);

		if (fast) {
			took = true;
			CHECK(slow != NULL, "taken, but jansson has no answer: %.*s", (int)len, line);
			CHECK(slow && strcmp(fast, slow) == 0, "line %.*s\n fast %s\n slow %s",
			      (int)len, line, fast, slow ? slow : "(none)");
			CHECK(a.id == id, "id %lld against %lld: %.*s", (long long)a.id,
			      (long long)id, (int)len, line);
			CHECK(a.is_error == is_error, "isError %d against %d: %.*s", a.is_error,
			      is_error, (int)len, line);
		}
		free(fast);
		free(slow);
		free(cidtext);
		json_decref(cid);
	}
	if (took)
		taken++;
	else
		refused++;
	return took;
}

static void
expect(const char *line, bool take, const char *why)
{
	bool took = check_line(line, strlen(line));

	CHECK(took == take, "%s: %s (%s)", why, line, take ? "should be taken" : "should not");
}

/* The shapes, named: what is taken. */
static void
test_taken(void)
{
	struct up_answer a;
	const char *l = "{\"jsonrpc\":\"2.0\",\"id\":-42,\"result\":7}";

	CHECK(up_answer_scan(l, strlen(l), &a) && a.id == -42 && a.result_len == 1 &&
	      a.result[0] == '7', "id and span");
	expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
	       "\"text\":\"hi\"}]}}", true, "the plain answer");
	expect("{\"result\":{\"content\":[]},\"jsonrpc\":\"2.0\",\"id\":12}", true,
	       "members in the SDK's order");
	expect("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"isError\":true,\"content\":[]}}", true,
	       "isError");
	expect("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"a\":{\"isError\":true},"
	       "\"isError\":\"true\"}}", true, "isError nested or a string: not an error");
	expect("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":[{\"isError\":true}]}", true,
	       "a result that is no object");
	expect("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"t\":\"a\\\"},\\\"id\\\":9,\\\"x\\\":"
	       "{\\\"\",\"n\":[1,-2,0,true,false,null,{},[]]}}", true, "an id inside a string");
	expect("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"t\":\"tab\\tnl\\ncr\\rbs\\\\q\\\"b\\bf\\f"
	       "\"}}", true, "the short escapes");
	expect("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"t\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
	       "\x7f\"}}", true, "UTF-8 and DEL as they are");
	expect("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"\":\"\"}}", true, "empty key");
}

/* What a hostile server might try instead: not taken, so jansson decides as it always did. */
static void
test_refused(void)
{
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{},\"id\":7}", false, "a second id");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{},\"result\":{}}", false, "a second result");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"a\":1,\"a\":2}}", false,
	       "a duplicate key in the result");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"x\":[{\"a\":1,\"b\":2,\"a\":3}]}}", false,
	       "a duplicate key deeper down");
	expect("{\"jsonrpc\":\"2.0\",\"i\\u0064\":6,\"result\":{}}", false, "an escaped key");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"isError\":true,\"is\\u0045rror\":false}}",
	       false, "isError spelt twice");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"\\u0041\"}}", false, "\\u escape");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"\\u0000\"}}", false, "NUL");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"a\\/b\"}}", false, "\\/");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"a\rb\"}}", false, "raw CR");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\r", false, "CR at the end");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{} }", false, "whitespace");
	expect(" {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}", false, "leading whitespace");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"n\":0.5}}", false, "a real");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"n\":1e3}}", false, "an exponent");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"n\":-0}}", false, "-0");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"n\":012}}", false, "leading zero");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"n\":99999999999999999999}}", false,
	       "an integer jansson cannot hold");
	expect("{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"result\":{}}", false, "a huge id");
	expect("{\"jsonrpc\":\"2.0\",\"id\":\"6\",\"result\":{}}", false, "a string id");
	expect("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", false, "a null id");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":1,\"message\":\"m\"}}", false,
	       "an error");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{},\"error\":{\"code\":1}}", false,
	       "result and error");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"sampling/createMessage\",\"result\":{}}",
	       false, "a server request posing as an answer");
	expect("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}", false,
	       "a notification");
	expect("[{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}]", false, "a batch");
	expect("{\"jsonrpc\":\"1.0\",\"id\":6,\"result\":{}}", false, "another jsonrpc");
	expect("{\"id\":6,\"result\":{}}", false, "no jsonrpc");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{},\"_meta\":{}}", false, "another member");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"\xc0\xaf\"}}", false, "overlong");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"\xed\xa0\x80\"}}", false,
	       "a surrogate in UTF-8");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"\xf4\x90\x80\x80\"}}", false,
	       "above U+10FFFF");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"\xe2\x82\"}}", false,
	       "a truncated sequence");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"t\":\"x\"}", false, "unterminated");
	expect("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}{}", false, "trailing bytes");
	expect("", false, "empty");
}

/* Bounds of the scanner: deeper or wider than it looks at goes to jansson. */
static void
test_bounds(void)
{
	{
		/* Nesting: the scanner's bound is below jansson's, so deep results go there. */
		char deep[256];
		int n = 0, d;

		n += snprintf(deep + n, sizeof(deep) - n, "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":");
		for (d = 0; d < 40; d++)
			deep[n++] = '[';
		for (d = 0; d < 40; d++)
			deep[n++] = ']';
		snprintf(deep + n, sizeof(deep) - n, "}");
		expect(deep, false, "deep nesting");
	}
	{
		/* An object with more keys than the duplicate check looks at. */
		struct strbuf sb = {0};

		sb_appends(&sb, "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{");
		for (int k = 0; k < 40; k++)
			sb_appendf(&sb, "%s\"k%d\":%d", k ? "," : "", k, k);
		sb_appends(&sb, "}}");
		expect(sb.buf, false, "many keys");
		sb_free(&sb);
	}
}

/* ---- random messages in random spellings ---------------------------------------------- */

static void
ws(struct strbuf *sb)
{
	static const char *const w[] = { " ", "\t", "\r", "\n", "  " };

	if (rnd(40) == 0)
		sb_appends(sb, w[rnd(5)]);
}

/* One character of a string, spelt one of the ways JSON allows (or a few it does not). */
static void
gen_char(struct strbuf *sb)
{
	static const char *const raw[] = {
		"a", "Z", "0", " ", "/", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\\\"", "\\\\", "\\n", "\\t", "\\r", "\\b", "\\f", "\\/", "\\u0041", "\\u00e9",
		"\\u001B", "\\u001b", "\\u0000", "\\ud83d\\ude00", "\\ud800", "\x01", "\r", "\xff",
		"\xc0\xaf", "\xed\xa0\x80", "\\x", "\\",
	};
	unsigned k = rnd(100);

	sb_appends(sb, raw[k < 60 ? rnd(5) : k < 80 ? 5 + rnd(11) : rnd(sizeof(raw) /
								   sizeof(raw[0]))]);
}

static void
gen_string(struct strbuf *sb)
{
	unsigned n = rnd(6);

	sb_append(sb, "\"", 1);
	while (n--)
		gen_char(sb);
	sb_append(sb, "\"", 1);
}

static void
gen_key(struct strbuf *sb)
{
	static const char *const keys[] = {
		"\"a\"", "\"b\"", "\"isError\"", "\"content\"", "\"id\"", "\"is\\u0045rror\"",
		"\"\"", "\"text\"",
	};

	if (rnd(4))
		sb_appends(sb, keys[rnd(sizeof(keys) / sizeof(keys[0]))]);
	else
		gen_string(sb);
}

static void
gen_number(struct strbuf *sb)
{
	static const char *const nums[] = {
		"0", "-1", "42", "-0", "0.5", "1e3", "1E-2", "-2.50", "01", "123456789012345678",
		"1234567890123456789", "-9223372036854775808", "99999999999999999999", "1.0",
		"3", "-", "1.", ".5",
	};

	sb_appends(sb, nums[rnd(sizeof(nums) / sizeof(nums[0]))]);
}

static void
gen_value(struct strbuf *sb, int depth)
{
	unsigned k = rnd(depth > 4 ? 6 : 10);

	ws(sb);
	switch (k) {
	case 0: case 1:
		gen_string(sb);
		break;
	case 2:
		gen_number(sb);
		break;
	case 3:
		sb_appends(sb, rnd(2) ? "true" : rnd(2) ? "false" : "null");
		break;
	case 4: case 5:
		sb_appends(sb, rnd(3) ? "\"x\"" : "1");
		break;
	case 6: case 7: case 8: {
		unsigned n = rnd(4);

		sb_append(sb, "{", 1);
		for (unsigned i = 0; i < n; i++) {
			if (i)
				sb_append(sb, ",", 1);
			ws(sb);
			gen_key(sb);
			ws(sb);
			sb_append(sb, ":", 1);
			gen_value(sb, depth + 1);
		}
		sb_append(sb, "}", 1);
		break;
	}
	default: {
		unsigned n = rnd(4);

		sb_append(sb, "[", 1);
		for (unsigned i = 0; i < n; i++) {
			if (i)
				sb_append(sb, ",", 1);
			gen_value(sb, depth + 1);
		}
		sb_append(sb, "]", 1);
	}
	}
	ws(sb);
}

/* A message: mostly the three members in some order, sometimes a fourth, a twin or a gap. */
static void
gen_message(struct strbuf *sb)
{
	static const char *const members[] = {
		"\"jsonrpc\":\"2.0\"", "\"id\":", "\"result\":", "\"id\":", "\"error\":{\"code\":-1}",
		"\"method\":\"x/y\"", "\"i\\u0064\":", "\"jsonrpc\":\"1.0\"", "\"_meta\":{}",
	};
	unsigned order[3] = { 0, 1, 2 }, n = 3, extra = rnd(4) == 0;

	for (unsigned i = 2; i > 0; i--) {
		unsigned j = rnd(i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	sb_append(sb, "{", 1);
	for (unsigned i = 0; i < n + extra; i++) {
		unsigned m = i < n ? order[i] : 3 + rnd(6);

		if (i)
			sb_append(sb, ",", 1);
		if (rnd(30) == 0)
			continue;	/* a member left out */
		sb_appends(sb, members[m]);
		if (m == 1 || m == 3 || m == 6) {
			if (rnd(6))
				sb_appendf(sb, "%u", rnd(5) + 1);
			else
				gen_number(sb);
		} else if (m == 2) {
			gen_value(sb, 0);
		}
	}
	sb_append(sb, "}", 1);
	ws(sb);
}

static void
test_random(void)
{
	int before = taken;

	for (int i = 0; i < 200000; i++) {
		struct strbuf sb = {0};

		gen_message(&sb);
		check_line(sb.buf, sb.len);
		/* And a mutation of it: a byte changed, dropped or put in. */
		if (sb.len > 2) {
			size_t at = rnd((unsigned)sb.len);
			static const char bytes[] = "\"\\{}[],:0aZ \r\x80\xc3\xff";

			switch (rnd(3)) {
			case 0:
				sb.buf[at] = bytes[rnd(sizeof(bytes) - 1)];
				break;
			case 1:
				memmove(sb.buf + at, sb.buf + at + 1, sb.len - at - 1);
				sb.len--;
				break;
			default:
				if (sb_append(&sb, " ", 1) == 0) {
					memmove(sb.buf + at + 1, sb.buf + at, sb.len - at - 1);
					sb.buf[at] = bytes[rnd(sizeof(bytes) - 1)];
				}
			}
			check_line(sb.buf, sb.len);
		}
		sb_free(&sb);
	}
	/* The property means something only if both sides are well visited. */
	CHECK(taken - before > 20000, "only %d random lines taken", taken - before);
	CHECK(refused > 100000, "only %d random lines refused", refused);
}

/* ---- requests: up_request_line against the dump of the object it stands for ------------ */

static void
expect_request(const char *method, const char *params_text)
{
	json_t *params = params_text ? json_loads(params_text, JSON_DECODE_ANY, NULL) : NULL;
	json_t *req = json_pack("{s:s,s:I,s:s}", "jsonrpc", "2.0", "id", (json_int_t)77, "method",
				method);
	struct strbuf sb = {0};
	char *want;
	int rc;

	if (params)
		json_object_set(req, "params", params);
	want = json_dumps(req, JSON_COMPACT);
	rc = up_request_line(&sb, 77, method, params);
	CHECK(rc == 0 && sb.len == strlen(want) + 1 && memcmp(sb.buf, want, sb.len - 1) == 0 &&
	      sb.buf[sb.len - 1] == '\n', "%s %s:\n line %s\n dump %s", method,
	      params_text ? params_text : "(none)", sb.buf ? sb.buf : "(none)", want);
	sb_free(&sb);
	free(want);
	json_decref(req);
	json_decref(params);
}

static void
test_request(void)
{
	struct strbuf sb = {0};

	expect_request("tools/call", "{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}");
	expect_request("tools/call", "{\"name\":\"e\",\"arguments\":{\"t\":\"\\u001b[0m\\/\\u00e9"
		       "\\ud83d\\ude00\\n\",\"n\":0.1,\"m\":1e300,\"z\":-0,\"k\":[true,null,{}]},"
		       "\"_meta\":{\"progressToken\":5}}");
	expect_request("initialize", NULL);
	expect_request("resources/read", "[1,2]");
	expect_request("resources/read", "\"s\"");
	expect_request("ping", "{}");
	CHECK(up_request_line(&sb, 1, "a\"b", NULL) == -EINVAL, "a quote in the method");
	CHECK(up_request_line(&sb, 1, "\xc3\xa9", NULL) == -EINVAL, "a non-ASCII method");
	CHECK(up_request_line(&sb, 1, "a\nb", NULL) == -EINVAL, "a newline in the method");
	sb_free(&sb);
}

int
main(void)
{
	test_request();
	test_taken();
	test_refused();
	test_bounds();
	test_random();
	printf("%d checks, %d failures (%d lines taken, %d left to jansson)\n", checks, failures,
	       taken, refused);
	return failures ? 1 : 0;
}
