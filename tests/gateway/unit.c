/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the gateway's pure parts: acceptance cases 19-25 of the behaviour notes
 * (prefix writer, catalog and config resolution, error table, catalog override) plus the
 * helpers whose output users see (durations, %q quoting, token comparison, aggregation).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "base/frame.h"
#include "base/log.h"
#include "base/str.h"
#include "config/config.h"
#include "http/guard.h"
#include "isolate/isolate.h"
#include "session/http_conf.h"
#include "session/routes.h"
#include "session/session.h"
#include "upstream/upstream.h"



static json_t *
builtin(void)
{
	json_t *cat = NULL;
	char *err = NULL;

	if (catalog_load(NULL, &cat, &err)) {
		fprintf(stderr, "built-in catalog: %s\n", err);
		exit(1);
	}
	return cat;
}

/* Resolves text; returns rc and fills *err (caller frees) or the list. */
static int
resolve(const char *text, json_t *cat, struct server_list *l, char **err)
{
	json_t *cfg = NULL;
	int rc;

	*err = NULL;
	memset(l, 0, sizeof(*l));
	rc = config_parse_text(text, &cfg, err);
	if (rc)
		return rc;
	rc = config_resolve(cfg, cat, "/srv", "https://github.com", l, err);
	json_decref(cfg);
	return rc;
}

static char *
argv_str(char **v)
{
	return strv_join(v, " ");
}

static void
expect_error(json_t *cat, const char *text, const char *needle)
{
	struct server_list l;
	char *err = NULL;
	int rc = resolve(text, cat, &l, &err);

	CHECK(rc < 0, "%s: expected an error containing '%s'", text, needle);
	CHECK(err && strstr(err, needle), "%s: error '%s' lacks '%s'", text, err ? err : "(null)",
	      needle);
	if (rc == 0)
		server_list_free(&l);
	free(err);
}

/* Case 19. */
static void
test_prefix_writer(void)
{
	struct prefixw w;
	char buf[256];
	int p[2];
	ssize_t n;

	if (pipe(p) < 0)
		abort();
	prefixw_init(&w, p[1], "x");
	prefixw_write(&w, "a\nb", 3);
	prefixw_write(&w, "c\n", 2);
	prefixw_write(&w, "", 0);
	prefixw_write(&w, "d\n\ne", 4);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strcmp(buf, "[x] a\n[x] bc\n[x] d\n[x] \n[x] e") == 0, "got '%s'", buf);
	close(p[0]);
	prefixw_fini(&w);
}

/* Case 20: built-in catalog resolution. */
static void
test_catalog_resolution(json_t *cat)
{
	struct server_list l;
	char *err = NULL, *s;
	int rc;

	rc = resolve("{\"time\":null,\"filesystem\":{\"paths\":[\"/a\",\"/b\"]},"
		     "\"arxiv\":{\"storagePath\":\"/data\"}}", cat, &l, &err);
	CHECK(rc == 0, "resolve: %s", err ? err : "");
	if (rc == 0) {
		CHECK(l.n == 3, "n=%zu", l.n);
		CHECK(strcmp(l.v[0].name, "arxiv") == 0, "first %s", l.v[0].name);
		CHECK(strcmp(l.v[2].name, "time") == 0, "last %s", l.v[2].name);
		s = argv_str(l.v[0].argv);
		CHECK(strcmp(s, "uvx arxiv-mcp-server --storage-path /data") == 0, "%s", s);
		free(s);
		s = argv_str(l.v[1].argv);
		CHECK(strcmp(s, "npx -y @modelcontextprotocol/server-filesystem /a /b") == 0,
		      "%s", s);
		free(s);
		s = argv_str(l.v[2].argv);
		CHECK(strcmp(s, "uvx mcp-server-time") == 0, "%s", s);
		free(s);
		/* Catalog installs run only through pull, never at start. */
		CHECK(l.v[0].install == NULL && l.v[1].install == NULL, "install at start");
		CHECK(strcmp(l.v[1].dir, "/") == 0, "catalog dir %s", l.v[1].dir);
		CHECK(l.v[0].kind == SERVER_CATALOG, "kind");
		server_list_free(&l);
	}
	free(err);
	/* ...but pull has something to run. */
	CHECK(json_array_size(json_object_get(json_object_get(cat, "time"), "install")) == 1,
	      "time install list");
	CHECK(json_array_size(json_object_get(json_object_get(cat, "filesystem"), "install")) == 1,
	      "filesystem install list");
	s = catalog_names(cat);
	CHECK(strcmp(s, "arxiv, duckduckgo, fetch, filesystem, memory, sequentialthinking, "
		     "time") == 0, "names %s", s);
	free(s);
}

/* Case 21: an optional group disappears; unknown properties warn once each. */
static void
test_optional_and_warnings(json_t *cat)
{
	struct server_list l;
	char *err = NULL, *s;
	int rc;

	rc = resolve("{\"arxiv\":{\"futureOption\":true}}", cat, &l, &err);
	CHECK(rc == 0, "resolve: %s", err ? err : "");
	if (rc == 0) {
		s = argv_str(l.v[0].argv);
		CHECK(strcmp(s, "uvx arxiv-mcp-server") == 0, "%s", s);
		free(s);
		CHECK(strv_len(l.warnings) == 1, "warnings %zu", strv_len(l.warnings));
		CHECK(l.warnings && strstr(l.warnings[0], "futureOption") &&
		      strstr(l.warnings[0], "ignoring unknown property"), "warning %s",
		      l.warnings ? l.warnings[0] : "");
		server_list_free(&l);
	}
	free(err);
	rc = resolve("{\"local\":{\"runCmd\":\"x\",\"zeta\":1,\"alpha\":2}}", cat, &l, &err);
	CHECK(rc == 0 && strv_len(l.warnings) == 2 && strstr(l.warnings[0], "\"alpha\"") &&
	      strstr(l.warnings[1], "\"zeta\""), "sorted local warnings");
	if (rc == 0)
		server_list_free(&l);
	free(err);
}

/* Case 22. */
static void
test_github(json_t *cat)
{
	struct server_list l;
	char *err = NULL, *s;
	int rc;

	rc = resolve("{\"github/acme/weather-mcp\":{\"installCmd\":\"npm ci\",\"runCmd\":"
		     "\"node dist/index.js\",\"envs\":{\"KEY\":\"v\",\"A_1\":\"w\"}}}", cat, &l,
		     &err);
	CHECK(rc == 0, "resolve: %s", err ? err : "");
	if (rc == 0) {
		CHECK(l.v[0].kind == SERVER_GITHUB, "kind");
		CHECK(strcmp(l.v[0].repo, "https://github.com/acme/weather-mcp.git") == 0, "%s",
		      l.v[0].repo);
		CHECK(strcmp(l.v[0].dir, "/srv/github/acme/weather-mcp") == 0, "%s", l.v[0].dir);
		s = argv_str(l.v[0].argv);
		CHECK(strcmp(s, "/bin/sh -c node dist/index.js") == 0, "%s", s);
		free(s);
		s = argv_str(l.v[0].install);
		CHECK(strcmp(s, "/bin/sh -c npm ci") == 0, "%s", s);
		free(s);
		s = argv_str(l.v[0].env);
		CHECK(strcmp(s, "A_1=w KEY=v") == 0, "env %s", s);
		free(s);
		server_list_free(&l);
	}
	free(err);
}

/* Case 23. */
static void
test_local(json_t *cat)
{
	struct server_list l;
	char *err = NULL;
	int rc;

	rc = resolve("{\"mine\":{\"runCmd\":\"my-server --stdio\",\"installCmd\":\"  \"}}", cat,
		     &l, &err);
	CHECK(rc == 0, "resolve: %s", err ? err : "");
	if (rc == 0) {
		CHECK(l.v[0].kind == SERVER_LOCAL, "kind");
		CHECK(l.v[0].repo == NULL, "repo");
		CHECK(strcmp(l.v[0].dir, "/") == 0, "dir %s", l.v[0].dir);
		CHECK(l.v[0].install == NULL, "blank install kept");
		server_list_free(&l);
	}
	free(err);
	/* A catalog name with runCmd stays a catalog server; runCmd only warns. */
	rc = resolve("{\"time\":{\"runCmd\":\"x\"}}", cat, &l, &err);
	CHECK(rc == 0 && l.v[0].kind == SERVER_CATALOG && strv_len(l.warnings) == 1,
	      "catalog name with runCmd");
	if (rc == 0)
		server_list_free(&l);
	free(err);
	rc = resolve("{}", cat, &l, &err);
	CHECK(rc == 0 && l.n == 0, "empty config");
	if (rc == 0)
		server_list_free(&l);
	free(err);
}

/* Case 24: the error table. */
static void
test_errors(json_t *cat)
{
	char longname[200];

	expect_error(cat, "[\"duckduckgo\"]", "JSON object");
	expect_error(cat, "null", "JSON object");
	expect_error(cat, "not json", "mcp config must be a JSON object keyed by server name: "
		     "not a JSON object");
	expect_error(cat, "{\"a\":", "mcp config must be a JSON object keyed by server name: ");
	expect_error(cat, "{\"duckduckgo\":\"yes\"}", "mcp server \"duckduckgo\": configuration "
		     "must be a JSON object");
	expect_error(cat, "{\"nope\":{}}", "unknown MCP server \"nope\"; supported servers: "
		     "arxiv, duckduckgo, fetch, filesystem, memory, sequentialthinking, time, or "
		     "github/<owner>/<repo> with runCmd");
	expect_error(cat, "{\"\":{}}", "mcp server name must not be empty");
	expect_error(cat, "{\"filesystem\":{}}", "mcp server \"filesystem\": property \"paths\" "
		     "is required");
	expect_error(cat, "{\"filesystem\":{\"paths\":[]}}", "property \"paths\" must not be "
		     "empty");
	expect_error(cat, "{\"arxiv\":{\"storagePath\":1}}", "mcp server \"arxiv\": property "
		     "\"storagePath\": must be a string");
	expect_error(cat, "{\"filesystem\":{\"paths\":[1]}}", "must be an array of strings");
	expect_error(cat, "{\"github/a/b\":{\"installCmd\":\"make\"}}", "mcp server "
		     "\"github/a/b\": runCmd is required");
	expect_error(cat, "{\"github/a\":{\"runCmd\":\"x\"}}", "expected "
		     "github/<owner>/<repo>");
	expect_error(cat, "{\"github/a/b/c\":{\"runCmd\":\"x\"}}", "github/<owner>/<repo>");
	expect_error(cat, "{\"github/../b\":{\"runCmd\":\"x\"}}", "invalid GitHub owner or "
		     "repository name");
	expect_error(cat, "{\"github/a/b c\":{\"runCmd\":\"x\"}}", "invalid GitHub");
	expect_error(cat, "{\"github/a/b\":{\"runCmd\":1}}", "runCmd and installCmd must be "
		     "strings and envs must map names to strings");
	expect_error(cat, "{\"x\":{\"runCmd\":\"y\",\"envs\":{\"A\":1}}}", "must be strings");
	expect_error(cat, "{\"x\":{\"runCmd\":\"y\",\"envs\":{\"A-B\":\"1\"}}}", "invalid "
		     "environment variable name \"A-B\"");
	expect_error(cat, "{\"x\":{\"runCmd\":\"   \"}}", "runCmd is required");
	expect_error(cat, "{\"a\\u0001\":{}}", "mcp server name \"a\\x01\" contains control "
		     "characters");
	memset(longname, 'n', 129);
	longname[129] = '\0';
	{
		char *text = str_printf("{\"%s\":{}}", longname);

		expect_error(cat, text, "is longer than 128 characters");
		free(text);
	}
	/* The first error in name order wins. */
	expect_error(cat, "{\"zz\":{},\"aa\":{}}", "unknown MCP server \"aa\"");
}

static char *
tmp_write(const char *text)
{
	char *path = strdup("/tmp/gw-unit-XXXXXX");
	int fd = mkstemp(path);
	ssize_t n;

	if (fd < 0)
		abort();
	n = write(fd, text, strlen(text));
	(void)n;
	close(fd);
	return path;
}

/* Case 25: the override file. */
static void
test_override(void)
{
	struct server_list l;
	json_t *cat = NULL;
	char *err = NULL, *s, *path;
	int rc;

	path = tmp_write("{\"weather\":{\"description\":\"Weather.\",\"command\":"
			 "[[\"weather-mcp\"],[\"--city\",\"{{city}}\"]],\"env\":{\"CITY\":"
			 "\"{{city}}\",\"FIXED\":\"1\",\"GONE\":\"{{unset}}\"},\"properties\":"
			 "{\"city\":{\"type\":\"string\",\"default\":\"Shenzhen\"}}},"
			 "\"time\":{\"command\":[[\"/usr/local/bin/time-mcp\"]]},"
			 "\"num\":{\"command\":[[\"n\",\"{{x}}\",\"{{b}}\",\"--x={{x}}\"]],"
			 "\"properties\":{\"x\":{\"type\":\"number\",\"default\":1.5},"
			 "\"b\":{\"type\":\"boolean\",\"default\":false}}}}");
	rc = catalog_load(path, &cat, &err);
	CHECK(rc == 0, "load: %s", err ? err : "");
	unlink(path);
	free(path);
	if (rc)
		return;
	rc = resolve("{\"weather\":{},\"time\":{},\"num\":{\"x\":42}}", cat, &l, &err);
	CHECK(rc == 0, "resolve: %s", err ? err : "");
	if (rc == 0) {
		s = argv_str(l.v[2].argv);
		CHECK(strcmp(s, "weather-mcp --city Shenzhen") == 0, "%s", s);
		free(s);
		s = argv_str(l.v[2].env);
		CHECK(strcmp(s, "CITY=Shenzhen FIXED=1") == 0, "env %s", s);
		free(s);
		s = argv_str(l.v[1].argv);
		CHECK(strcmp(s, "/usr/local/bin/time-mcp") == 0, "%s", s);
		free(s);
		s = argv_str(l.v[0].argv);
		CHECK(strcmp(s, "n 42 false --x={{x}}") == 0, "%s", s);
		free(s);
		server_list_free(&l);
	}
	free(err);
	err = NULL;
	rc = resolve("{\"num\":{}}", cat, &l, &err);
	if (rc == 0) {
		s = argv_str(l.v[0].argv);
		CHECK(strcmp(s, "n 1.5 false --x={{x}}") == 0, "%s", s);
		free(s);
		server_list_free(&l);
	}
	free(err);
	err = NULL;
	s = catalog_names(cat);
	CHECK(strstr(s, "duckduckgo") && strstr(s, "weather"), "merged names %s", s);
	free(s);
	json_decref(cat);

	cat = NULL;
	rc = catalog_load("/nonexistent/gw-unit/catalog.json", &cat, &err);
	CHECK(rc == 0 && cat, "missing override file is fine");
	json_decref(cat);

	path = tmp_write("{\"bad\":{\"command\":[]}}");
	cat = NULL;
	rc = catalog_load(path, &cat, &err);
	CHECK(rc < 0 && err && strstr(err, "server \"bad\": command is empty") &&
	      strstr(err, "catalog "), "bad override: %s", err ? err : "");
	free(err);
	err = NULL;
	unlink(path);
	free(path);
	path = tmp_write("{\"bad\":{\"command\":[[\"x\"]],\"properties\":{\"p\":"
			 "{\"type\":\"object\"}}}}");
	rc = catalog_load(path, &cat, &err);
	CHECK(rc < 0 && err && strstr(err, "property \"p\" has unsupported type \"object\""),
	      "bad type: %s", err ? err : "");
	free(err);
	unlink(path);
	free(path);
}

static void
test_durations(void)
{
	static const struct {
		const char *in;
		int64_t ns;
		const char *out;
	} t[] = {
		{"55s", 55000000000LL, "55s"}, {"1s", 1000000000LL, "1s"},
		{"500ms", 500000000LL, "500ms"}, {"1m30s", 90000000000LL, "1m30s"},
		{"1.5s", 1500000000LL, "1.5s"}, {"0", 0, "0s"}, {"2h", 7200000000000LL, "2h0m0s"},
		{"1m", 60000000000LL, "1m0s"},
	};
	char buf[64];
	int64_t ns;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK(dur_parse(t[i].in, &ns) == 0 && ns == t[i].ns, "parse %s", t[i].in);
		dur_format(t[i].ns, buf, sizeof(buf));
		CHECK(strcmp(buf, t[i].out) == 0, "format %s -> %s", t[i].in, buf);
	}
	CHECK(dur_parse("10", &ns) < 0, "bare number");
	CHECK(dur_parse("abc", &ns) < 0, "abc");
	CHECK(dur_parse("", &ns) < 0, "empty");
	CHECK(dur_parse("5x", &ns) < 0, "bad unit");
}

static void
test_helpers(void)
{
	char *q = str_quote("a\"b\\c\n\x01");

	CHECK(strcmp(q, "\"a\\\"b\\\\c\\n\\x01\"") == 0, "quote %s", q);
	free(q);
	CHECK(guard_token_equal("Bearer tok", "tok"), "match");
	CHECK(!guard_token_equal("Bearer nope", "tok"), "wrong");
	CHECK(!guard_token_equal("tok", "tok"), "no scheme");
	CHECK(!guard_token_equal("Bearer tok2", "tok"), "longer");
	CHECK(!guard_token_equal("Bearer to", "tok"), "shorter");
	CHECK(!guard_token_equal(NULL, "tok"), "missing");
	/* Case 14: an empty configured token rejects everything, "Bearer " included. */
	CHECK(!guard_token_equal("Bearer ", ""), "empty token");
	CHECK(!guard_token_equal("Bearer", ""), "empty token 2");
	q = routes_name_sanitise("github/acme/tools");
	CHECK(strcmp(q, "github_acme_tools") == 0, "sanitise %s", q);
	free(q);
	CHECK(strcmp(upstream_proto_negotiate("2025-06-18"), "2025-06-18") == 0, "negotiate known");
	CHECK(strcmp(upstream_proto_negotiate("1999-01-01"), "2025-11-25") == 0, "negotiate unknown");
	q = num_format(0.1);
	CHECK(strcmp(q, "0.1") == 0, "num %s", q);
	free(q);
}

/* Section 9 example, built from tool lists directly. */
static void
test_aggregation(void)
{
	json_t *a = json_loads("[{\"name\":\"echo\"},{\"name\":\"alpha_env\"},"
			       "{\"name\":\"alpha_crash\",\"inputSchema\":{\"type\":\"object\"}}]",
			       0, NULL);
	json_t *b = json_loads("[{\"name\":\"echo\",\"title\":\"T\"},{\"name\":\"beta_env\"},"
			       "{\"name\":\"beta_crash\"},{\"name\":\"bad\",\"inputSchema\":"
			       "{\"type\":\"string\"}}]", 0, NULL);
	/* Second "echo" of one server: both names taken, so it is skipped. */
	json_t *c = json_loads("[{\"name\":\"echo\"},{\"name\":\"beta_echo\"},"
			       "{\"name\":\"echo\"}]", 0, NULL);
	struct tool_source src[] = {
		{"alpha", a, (void *)1}, {"beta", b, (void *)2}, {"github/x/y", c, (void *)3},
	};
	static const char *const want[] = {
		"alpha_crash", "alpha_env", "beta_crash", "beta_echo", "beta_env", "echo",
		"github_x_y_beta_echo", "github_x_y_echo",
	};
	const struct tool_route *r;
	struct tool_table t;
	size_t i;

	CHECK(routes_build_tools(src, 3, &t) == 0, "build");
	CHECK(t.n == 8, "n=%zu", t.n);
	for (i = 0; i < t.n && i < 8; i++)
		CHECK(strcmp(t.v[i].name, want[i]) == 0, "tool %zu: %s", i, t.v[i].name);
	r = routes_find(&t, "echo");
	CHECK(r && r->ctx == (void *)1 && strcmp(r->orig, "echo") == 0, "echo -> alpha");
	r = routes_find(&t, "beta_echo");
	CHECK(r && r->ctx == (void *)2 && strcmp(r->orig, "echo") == 0, "beta_echo -> beta");
	CHECK(r && strcmp(json_string_value(json_object_get(r->tool, "title")), "T") == 0,
	      "fields kept");
	CHECK(r && json_is_object(json_object_get(r->tool, "inputSchema")), "schema default");
	CHECK(routes_find(&t, "bad") == NULL, "invalid schema skipped");
	CHECK(routes_find(&t, "nope") == NULL, "unknown");
	routes_free(&t);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

struct lines {
	int n;
	char last[64];
};

static void
lines_add(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	l->n++;
	snprintf(l->last, sizeof(l->last), "%.*s", (int)(len < 63 ? len : 63), line);
}

/* Issue 7: a server's output is framed in bounded memory; an oversized line is dropped. */
static void
test_framer(void)
{
	struct line_framer f;
	struct lines l = {0};
	char big[100];
	int rc, i;

	framer_init(&f, 16);
	rc = framer_feed(&f, "{\"a\":1}\n{\"b\"", 12, lines_add, &l);
	CHECK(rc == 0 && l.n == 1 && strcmp(l.last, "{\"a\":1}") == 0, "first line");
	rc = framer_feed(&f, ":2}\n\n\n", 6, lines_add, &l);
	CHECK(rc == 0 && l.n == 2 && strcmp(l.last, "{\"b\":2}") == 0, "split line, empty skipped");
	memset(big, 'x', sizeof(big));
	/* 100 bytes without a newline, fed in pieces: dropped once, memory stays bounded. */
	for (i = 0, rc = 0; i < 10; i++)
		rc += framer_feed(&f, big, 10, lines_add, &l);
	CHECK(rc == 1 && f.dropped == 1 && f.buf.len <= 16, "oversized line dropped once");
	rc = framer_feed(&f, "tail\nok\n", 8, lines_add, &l);
	CHECK(rc == 0 && l.n == 3 && strcmp(l.last, "ok") == 0, "the rest of it skipped");
	framer_fini(&f);
}

/* Prompts are renamed like tools; a URI stays with the first server that lists it. */
static void
test_routes(void)
{
	json_t *pa = json_loads("[{\"name\":\"greet\"},{\"name\":\"only_a\"}]", 0, NULL);
	json_t *pb = json_loads("[{\"name\":\"greet\",\"title\":\"B\"}]", 0, NULL);
	json_t *ra = json_loads("[{\"uri\":\"file:///x\",\"name\":\"a\"}]", 0, NULL);
	json_t *rb = json_loads("[{\"uri\":\"file:///x\",\"name\":\"b\"},"
				"{\"uri\":\"file:///y\"}]", 0, NULL);
	struct tool_source ps[] = {{"a", pa, (void *)1}, {"b", pb, (void *)2}};
	struct tool_source rs[] = {{"a", ra, (void *)1}, {"b", rb, (void *)2}};
	const struct tool_route *r;
	struct tool_table t;

	CHECK(routes_build(ps, 2, &routes_kind_prompts, &t) == 0, "prompts");
	CHECK(t.n == 3, "prompts n=%zu", t.n);
	r = routes_find(&t, "b_greet");
	CHECK(r && r->ctx == (void *)2 && strcmp(r->orig, "greet") == 0, "b_greet -> b greet");
	CHECK(r && json_object_get(r->tool, "inputSchema") == NULL, "no schema added to prompts");
	r = routes_find(&t, "greet");
	CHECK(r && r->ctx == (void *)1, "greet stays with a");
	routes_free(&t);
	CHECK(routes_build(rs, 2, &routes_kind_resources, &t) == 0, "resources");
	CHECK(t.n == 2, "resources n=%zu", t.n);
	r = routes_find(&t, "file:///x");
	CHECK(r && r->ctx == (void *)1 &&
	      strcmp(json_string_value(json_object_get(r->tool, "name")), "a") == 0,
	      "the first server keeps a URI");
	CHECK(routes_find(&t, "b_file:///x") == NULL, "URIs are never renamed");
	routes_free(&t);
	json_decref(pa);
	json_decref(pb);
	json_decref(ra);
	json_decref(rb);

	CHECK(routes_template_match("test://template/{id}/data", "test://template/42/data"), "simple");
	CHECK(!routes_template_match("test://template/{id}/data", "test://template/4/2/data"),
	      "{id} is one segment");
	CHECK(!routes_template_match("test://template/{id}/data", "test://template//data"), "empty");
	CHECK(routes_template_match("file:///{+path}", "file:///a/b/c.txt"), "{+path} spans /");
	CHECK(routes_template_match("demo://r/{id}{?q}", "demo://r/7?q=1"), "query expression");
	CHECK(!routes_template_match("demo://r/{id}", "other://r/7"), "literal prefix");
}

/* Host and Origin: what the platform sends passes, a rebinding page does not. */
static void
test_guard(void)
{
	char *hosts[] = {"mcp.example.org", "*.corp.example", NULL};
	char *origins[] = {"https://app.example.org", NULL};
	struct http_conf c = { .port = 50005 };
	static const char *const good[] = {
		"localhost", "localhost:50005", "127.0.0.1:50005", "127.1.2.3", "[::1]:50005",
		"50005-sbx-abc.cube.example.com", "50005-1.d", "app.localhost", NULL,
	};
	static const char *const bad[] = {
		"evil.example.com", "50005.evil.com", "50005-", "50006-sbx.cube.example.com",
		"127.0.0.1.evil.com", "localhost.evil.com", "[::1", "", NULL,
	};
	size_t i;

	for (i = 0; good[i]; i++)
		CHECK(guard_host_allowed(&c, good[i]), "host %s", good[i]);
	for (i = 0; bad[i]; i++)
		CHECK(!guard_host_allowed(&c, bad[i]), "host %s refused", bad[i]);
	CHECK(guard_host_allowed(&c, NULL), "no Host (HTTP/1.0)");
	CHECK(!guard_host_allowed(&c, "mcp.example.org"), "not by default");
	CHECK(guard_origin_allowed(&c, "http://localhost:3000"), "local origin");
	CHECK(guard_origin_allowed(&c, "https://50005-sbx.cube.example.com"), "sandbox origin");
	CHECK(!guard_origin_allowed(&c, "http://evil.example.com"), "foreign origin");
	CHECK(!guard_origin_allowed(&c, "null"), "opaque origin");
	c.allowed_hosts = hosts;
	c.allowed_origins = origins;
	CHECK(guard_host_allowed(&c, "mcp.example.org:443"), "listed host with a port");
	CHECK(guard_host_allowed(&c, "a.corp.example"), "wildcard host");
	CHECK(!guard_host_allowed(&c, "corp.example"), "wildcard needs a subdomain");
	CHECK(guard_origin_allowed(&c, "https://app.example.org"), "listed origin");
	CHECK(!guard_origin_allowed(&c, "https://app.example.org.evil"), "listed origin exactly");
}

/* Masking: whole secrets only, also when split over reads; a short tail waits. */
static void
test_mask(void)
{
	char *secrets[] = {"s3cr3t-value", "another-one", NULL}, buf[512];
	struct strbuf held = {0};
	struct prefixw w;
	int p[2];
	ssize_t n;

	if (pipe(p) < 0)
		abort();
	prefixw_init(&w, p[1], "m");
	prefixw_write_masked(&w, secrets, &held, "key=s3cr3t-", 11);
	CHECK(held.len == 7, "held %zu bytes of a possible secret", held.len);
	prefixw_write_masked(&w, secrets, &held, "value and s3cr3t-valu\n", 22);
	prefixw_write_masked(&w, secrets, &held, "another-one!another-on", 22);
	prefixw_write_masked(&w, secrets, &held, NULL, 0);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strcmp(buf, "[m] key=******** and s3cr3t-valu\n[m] ********!another-on") == 0,
	      "got '%s'", buf);
	close(p[0]);
	prefixw_fini(&w);
	sb_free(&held);
}

static bool
taken_odd(uid_t u, void *ctx)
{
	(void)ctx;
	return u % 2 == 1;
}

static bool
taken_none(uid_t u, void *ctx)
{
	(void)u;
	(void)ctx;
	return false;
}

static void
test_isolation_parts(json_t *cat)
{
	struct server_spec s = {0};
	struct server_list l;
	char *env_[] = {"FAKE=1", "SHORT=1234567", "LONG=12345678", NULL}, *err = NULL;
	char **env, **sec;
	long long x;
	uid_t lo, hi, a;

	a = iso_uid_pick("alpha", 100, 199, taken_none, NULL);
	CHECK(a >= 100 && a <= 199 && a == iso_uid_pick("alpha", 100, 199, taken_none, NULL),
	      "uid %u not stable in range", (unsigned)a);
	CHECK(a != iso_uid_pick("beta", 100, 199, taken_none, NULL), "alpha and beta share");
	CHECK(iso_uid_pick("alpha", 100, 199, taken_odd, NULL) % 2 == 0, "took a taken uid");
	CHECK(iso_range_parse("60100-61099", &lo, &hi) == 0 && lo == 60100 && hi == 61099, "range");
	CHECK(iso_range_parse("0-5", &lo, &hi) < 0 && iso_range_parse("9-3", &lo, &hi) < 0 &&
	      iso_range_parse("1-65535", &lo, &hi) < 0 && iso_range_parse("x", &lo, &hi) < 0,
	      "bad ranges accepted");
	CHECK(iso_size_parse("2G", &x) == 0 && x == 2LL << 30, "2G");
	CHECK(iso_size_parse("max", &x) == 0 && x == -1, "max");
	CHECK(iso_size_parse("2GB", &x) < 0 && iso_size_parse("-1", &x) < 0, "bad sizes");
	CHECK(iso_cpus_parse("0.5", &x) == 0 && x == 50000, "0.5 cpus = %lld", x);
	CHECK(iso_cpus_parse("0", &x) < 0 && iso_cpus_parse("two", &x) < 0, "bad cpus");
	s.name = "t";
	s.env = env_;
	s.home = "/h/t";
	env = iso_env(&s);
	CHECK(env && strv_len(env) >= 6, "env too short");
	for (size_t i = 0; env && env[i]; i++)
		CHECK(!strncmp(env[i], "PATH=", 5) || !strncmp(env[i], "LANG", 4) ||
		      !strncmp(env[i], "LC_", 3) || !strncmp(env[i], "TERM=", 5) ||
		      !strncmp(env[i], "TZ=", 3) || !strcmp(env[i], "HOME=/h/t") ||
		      !strcmp(env[i], "TMPDIR=/h/t/.tmp") || !strncmp(env[i], "FAKE=", 5) ||
		      !strncmp(env[i], "SHORT=", 6) || !strncmp(env[i], "LONG=", 5),
		      "unexpected %s", env[i]);
	strv_free(env);
	sec = iso_secrets(&s);
	CHECK(strv_len(sec) == 1 && strcmp(sec[0], "12345678") == 0, "secrets: 8 chars or more");
	strv_free(sec);
	expect_error(cat, "{\"a\":{\"runCmd\":\"x\",\"runAs\":\"admin\"}}",
		     "runAs must be \"isolated\" (the default) or \"root\"");
	expect_error(cat, "{\"time\":{\"runAs\":1}}", "runAs must be");
	expect_error(cat, "{\"a\":{\"runCmd\":\"x\",\"paths\":[\"rel\"]}}",
		     "paths must be an array of absolute paths");
	CHECK(resolve("{\"a\":{\"runCmd\":\"x\",\"runAs\":\"root\",\"paths\":[\"/d\"]},"
		      "\"filesystem\":{\"paths\":[\"/p\"],\"runAs\":\"isolated\"}}", cat, &l,
		      &err) == 0, "%s", err ? err : "");
	CHECK(l.n == 2 && l.v[0].root && strv_len(l.v[0].rw_paths) == 1 && !l.v[1].root &&
	      l.v[1].rw_paths && strcmp(l.v[1].rw_paths[0], "/p") == 0, "runAs/paths resolved");
	CHECK(l.warnings == NULL, "runAs or paths warned about");
	server_list_free(&l);
	free(err);
}

/* 2026-07-28 header values (SEP-2243): whitespace around them, and the base64 form. */
static void
test_header_values(void)
{
	static const struct {
		const char *raw, *want;
		bool same;
	} cases[] = {
		{"tools/call", "tools/call", true},
		{"  tools/call\t", "tools/call", true},
		{"TOOLS/CALL", "tools/call", false},
		{NULL, "tools/call", false},
		{"", "", true},
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{" =?base64?SGVsbA==?= ", "Hell", true},
		{"=?base64?SGVsbG8?=", "Hello", false},		/* padding missing */
		{"=?base64?SGVs!!!bG8=?=", "Hello", false},	/* not the alphabet */
		{"=?base64?SGVsbA=a?=", "Hell", false},	/* data after padding */
		{"=?base64?Q===?=", "@", false},		/* three pad characters */
		{"=?base64?QQ==?=", "A", true},
		{"=?base64?" "?=", "", false},			/* split: no trigraph */
		{"SGVsbG8=", "SGVsbG8=", true},			/* no prefix: literal */
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true},	/* no suffix: literal */
		{"=?base64?SGVsbG8=?=", "=?base64?SGVsbG8=?=", false},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(stateless_header_repeats(cases[i].raw, cases[i].want,
					       strlen(cases[i].want)) == cases[i].same,
		      "'%s' vs '%s'", cases[i].raw ? cases[i].raw : "(none)", cases[i].want);
	/* A decoded value may hold a NUL: compared by length, not as a C string. */
	CHECK(stateless_header_repeats("=?base64?YQBi?=", "a\0b", 3), "NUL inside");
	CHECK(!stateless_header_repeats("=?base64?YQBi?=", "a", 1), "NUL does not end it");
}

/* Integers as text without printf: the same as "%0*lld". */
static void
test_int_text(void)
{
	static const long long v[] = { 0, 5, 123, -7, 1000000, LLONG_MAX, LLONG_MIN, -1 };
	char buf[STR_INT_MAX], want[64];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (int w = 1; w <= 20; w += 2) {
			snprintf(want, sizeof(want), "%0*lld", v[i] < 0 ? w + 1 : w, v[i]);
			CHECK(strcmp(str_of_int(buf, v[i], w), want) == 0, "%lld width %d: %s, not %s",
			      v[i], w, str_of_int(buf, v[i], w), want);
		}
	}
}

int
main(void)
{
	json_t *cat = builtin();

	test_prefix_writer();
	test_catalog_resolution(cat);
	test_optional_and_warnings(cat);
	test_github(cat);
	test_local(cat);
	test_errors(cat);
	test_override();
	test_durations();
	test_helpers();
	test_aggregation();
	test_framer();
	test_routes();
	test_guard();
	test_mask();
	test_isolation_parts(cat);
	test_header_values();
	test_int_text();
	json_decref(cat);
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
