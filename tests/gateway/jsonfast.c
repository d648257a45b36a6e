/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the fast JSON parser and writer (gateway/base/jsonfast.c, issue 37): wherever
 * the parser takes a text, json_loadb(text, len, 0) must take it too and make the same value:
 * the same dump (types, members and their order) and json_equal(). Wherever the writer takes
 * a value, its text must be json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) byte for byte, and
 * json_dump_size() its length. And both must take what a gateway handles on every call, or
 * they would be dead weight. Checked on a table of edge cases and on random documents in
 * random spellings and their random mutations, from fixed seeds.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "base/jsonfast.h"
#include "base/str.h"

static int taken, left, written, unwritten;


/* The writer's property, on a value jansson made. */
static void
same_text(const json_t *v)
{
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	struct strbuf sb = {0};

	sb_append(&sb, "x", 1);	/* written after what the buffer holds */
	if (jsonfast_dump(&sb, v) == 0) {
		CHECK(want && sb.len == strlen(want) + 1 && memcmp(sb.buf + 1, want, sb.len - 1) == 0,
		      "written %.*s, jansson %s", (int)sb.len - 1, sb.buf + 1, want ? want : "-");
		written++;
	} else {
		CHECK(sb.len == 1, "a declined write left %zu bytes", sb.len - 1);
		unwritten++;
	}
	CHECK(want && json_dump_size(v) == strlen(want), "size %zu, jansson's %zu",
	      json_dump_size(v), want ? strlen(want) : 0);
	sb.len = 0;
	CHECK(json_dump_fast(&sb, v) == 0 && want && sb.len == strlen(want) &&
	      memcmp(sb.buf, want, sb.len) == 0, "json_dump_fast %.*s, jansson %s",
	      (int)sb.len, sb.buf, want ? want : "-");
	sb_free(&sb);
	free(want);
}

/* The properties, on one text; returns whether the fast parser took it. */
static bool
same(const char *text, size_t len)
{
	json_t *fast = jsonfast_parse(text, len), *slow = json_loadb(text, len, 0, NULL);
	bool took = fast != NULL;

	if (slow)
		same_text(slow);
	if (fast) {
		char *a = json_dumps(fast, JSON_COMPACT | JSON_ENCODE_ANY);
		char *b = slow ? json_dumps(slow, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

		CHECK(slow != NULL, "taken, jansson refuses: %.*s", (int)len, text);
		CHECK(a && b && strcmp(a, b) == 0, "dumps differ: %s / %s for %.*s", a ? a : "-",
		      b ? b : "-", (int)len, text);
		CHECK(json_equal(fast, slow), "not equal: %.*s", (int)len, text);
		free(a);
		free(b);
		taken++;
	} else {
		left++;
	}
	json_decref(fast);
	json_decref(slow);
	return took;
}

static void
table(void)
{
	static const char *const take[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
		"{\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":"
		"\"a\\nb\\\"c\\\\d\\/e\\tf\"},\"_meta\":{\"progressToken\":3}},\"jsonrpc\":\"2.0\","
		"\"id\":\"abc\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
		"\"text\":\"x\"}],\"isError\":false}}",
		" \r\n\t{ \"a\" : [ 1 , -2 , 0 , -0 , true , false , null , [ ] , { } ] } \n",
		"[]", "{}", "[[[[1]]]]", "{\"\":\"\"}", "[123456789012345678]",
		"[-123456789012345678]", "{\"a\\\"b\":1}", "[\"\x7f\"]",
	};
	static const char *const leave[] = {
		"", " ", "1", "\"s\"", "true", "null", "{", "[", "{\"a\":1,}", "[1,]", "[01]",
		"[1.5]", "[1e3]", "[1E3]", "[-]", "[123456789012345678901]",
		"{\"a\":1,\"a\":2}", "[\"\\u0041\"]", "[\"\xc3\xa9\"]", "[\"a\x01\"]",
		"[\"\\x\"]", "{\"a\" 1}", "{1:2}", "[tru]", "[nul]", "[1] x", "[1][2]",
		"[\"unterminated]", "{\"a\":1", "[\"\\\"]",
	};
	char deep[2 * (JSONFAST_DEPTH + 2) + 1];

	for (size_t i = 0; i < sizeof(take) / sizeof(take[0]); i++)
		CHECK(same(take[i], strlen(take[i])), "not taken: %s", take[i]);
	for (size_t i = 0; i < sizeof(leave) / sizeof(leave[0]); i++)
		CHECK(!same(leave[i], strlen(leave[i])), "taken: %s", leave[i]);
	/* Embedded NUL bytes, and a depth beyond the limit (jansson's, then). */
	CHECK(!same("[\"a\0b\"]", 7), "NUL taken");
	CHECK(!same("{\"a\":1}\0", 8), "trailing NUL taken");
	memset(deep, '[', JSONFAST_DEPTH + 1);
	memset(deep + JSONFAST_DEPTH + 1, ']', JSONFAST_DEPTH + 1);
	CHECK(!same(deep, 2 * (JSONFAST_DEPTH + 1)), "too deep taken");
	CHECK(same(deep + 1, 2 * JSONFAST_DEPTH), "at the limit not taken");
}

/* ---- random documents ------------------------------------------------------------------- */

static void
ws(struct strbuf *sb)
{
	static const char *const w[] = { "", "", "", " ", "\n", "\t", "\r\n ", "  " };

	sb_appends(sb, w[rnd(8)]);
}

static void
gen_string(struct strbuf *sb)
{
	static const char *const parts[] = { "a", "tools/call", "\\n", "\\\"", "\\\\", "\\/",
		"\\t", "\\b", "\\f", "\\r", " ", "~", "\x7f", "\\u00e9", "\xc3\xa9", "\\u0000",
		"\x01", "\\q", "{", "]" };
	int n = (int)rnd(6);

	sb_append(sb, "\"", 1);
	for (int i = 0; i < n; i++)
		sb_appends(sb, parts[rnd(rnd(4) ? 13 : 20)]);
	sb_append(sb, "\"", 1);
}

static void
gen_value(struct strbuf *sb, int depth)
{
	static const char *const nums[] = { "0", "-0", "7", "-42", "123456789012345678",
		"1234567890123456789", "9223372036854775807", "1.5", "1e2", "-", "00", "01" };
	static const char *const keys[] = { "\"a\"", "\"id\"", "\"b\"", "\"method\"", "\"\"",
		"\"a\\\"b\"", "\"a\"" };
	uint32_t k = depth > 6 ? rnd(5) : rnd(7);

	ws(sb);
	switch (k) {
	case 0: gen_string(sb); break;
	case 1: sb_appends(sb, nums[rnd(rnd(3) ? 5 : 12)]); break;
	case 2: sb_appends(sb, (const char *[]){ "true", "false", "null" }[rnd(3)]); break;
	case 3: gen_string(sb); break;
	case 4: sb_appends(sb, nums[rnd(5)]); break;
	case 5:
	case 6: {
		bool obj = k == 5;
		int n = (int)rnd(4);

		sb_append(sb, obj ? "{" : "[", 1);
		for (int i = 0; i < n; i++) {
			if (i)
				sb_append(sb, ",", 1);
			if (obj) {
				ws(sb);
				sb_appends(sb, keys[rnd(rnd(4) ? 5 : 7)]);
				ws(sb);
				sb_append(sb, ":", 1);
			}
			gen_value(sb, depth + 1);
		}
		ws(sb);
		sb_append(sb, obj ? "}" : "]", 1);
		break;
	}
	}
	ws(sb);
}

static void
mutate(char *s, size_t len)
{
	static const char bytes[] = "{}[]\",:\\0123456789.eE-tfn \x01\x80";

	for (int m = (int)rnd(3) + 1; m > 0 && len; m--)
		s[rnd((uint32_t)len)] = bytes[rnd(sizeof(bytes) - 1)];
}

static void
random_docs(int n)
{
	for (int i = 0; i < n; i++) {
		struct strbuf sb = {0};

		gen_value(&sb, 0);
		if (sb.buf == NULL)
			continue;
		same(sb.buf, sb.len);
		mutate(sb.buf, sb.len);
		same(sb.buf, sb.len);
		sb_free(&sb);
	}
}

int
main(void)
{
	table();
	random_docs(1000000);
	/* The random documents must exercise both sides, or the property says little. */
	CHECK(taken > 50000 && left > 50000, "taken %d, left %d", taken, left);
	CHECK(written > 50000 && unwritten > 5000, "written %d, left %d", written, unwritten);
	/* Scalars and strings jansson makes with escapes the parser leaves: the writer's side. */
	{
		json_t *s = json_stringn("a\0b\x01\x1f\x7f/\"\\", 10);
		json_t *o = json_pack("{s:O,s:I,s:I,s:b,s:n,s:[]}", "s", s, "min",
				      (json_int_t)INT64_MIN, "max", (json_int_t)INT64_MAX, "t", 1,
				      "z", "empty");

		CHECK(s && o, "test values not made");
		same_text(s);
		same_text(o);
		json_decref(o);
		json_decref(s);
	}
	printf("jsonfast: %d checks, %d texts parsed here, %d left to jansson; %d values written "
	       "here, %d left to jansson; %d failures\n", checks, taken, left, written, unwritten,
	       failures);
	return failures ? 1 : 0;
}
