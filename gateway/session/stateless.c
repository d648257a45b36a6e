/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: what a 2026-07-28 (stateless) request must carry before it is routed: the
 * Mcp-Method, Mcp-Name and Mcp-Param-* headers repeating the body (SEP-2243), its version
 * and capabilities in _meta (SEP-2575), and the HTTP status each refusal is answered with.
 * The upstreams never see any of this: they speak their own revision over stdio.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/routes.h"
#include "session/session.h"
#include "wire/reply.h"
#include "wire/rpc.h"

static const char *const versions[] = {
	MCP_2026_07_28, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

json_t *
stateless_versions(void)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; versions[i]; i++)
		json_array_append_new(a, json_string(versions[i]));
	return a;
}

/*
 * A version the gateway does not speak. A request in the stateless shape (its version in
 * _meta) gets the JSON-RPC error the revision defines, with the versions it could use;
 * anything else gets the plain-text 400 of the older revisions.
 */
enum hd_result
stateless_bad_version(struct hd_conn *c, const char *body, size_t len, const char *pv)
{
	json_t *msg = len ? json_loadb(body, len, 0, NULL) : NULL;
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
	json_t *e;

	if (!json_is_string(json_object_get(meta, META_VERSION))) {
		json_decref(msg);
		return reply_text(c, HTTP_BAD_REQUEST, "Bad Request: Unsupported protocol "
				  "version (supported versions: 2024-11-05, 2025-03-26, "
				  "2025-06-18, 2025-11-25)\n");
	}
	e = rpc_error(json_object_get(msg, "id"), RPC_UNSUPPORTED_VERSION,
		      "Unsupported protocol version");
	json_object_set_new(json_object_get(e, "error"), "data", json_pack("{s:o,s:s}",
			    "supported", stateless_versions(), "requested", pv));
	json_decref(msg);
	return reply_json(c, HTTP_BAD_REQUEST, e, NULL);
}

/* A header's value without the optional whitespace around it (RFC 9110 5.5); malloc'd. */
static char *
ows_trim(const char *v)
{
	size_t n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return strndup(v, n);
}

static int
b64_value(char ch)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = ch ? strchr(a, ch) : NULL;

	return p ? (int)(p - a) : -1;
}

/* Strict base64: whole quanta, '=' only as padding at the end. NULL when not valid. */
static char *
b64_decode(const char *s, size_t n, size_t *outlen)
{
	char *out;
	size_t i, o = 0;

	if (n == 0 || n % 4)
		return NULL;
	out = malloc(n / 4 * 3 + 1);
	for (i = 0; out && i < n; i += 4) {
		int v[4], k, pad = 0;

		for (k = 0; k < 4; k++) {
			bool last = i + 4 == n;

			if (s[i + k] == '=' && last && k >= 2 && (k == 3 || s[i + 3] == '=')) {
				v[k] = 0;
				pad++;
				continue;
			}
			if ((v[k] = b64_value(s[i + k])) < 0 || pad) {
				free(out);
				return NULL;
			}
		}
		out[o++] = (char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] = (char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (char)((v[2] & 3) << 6 | v[3]);
	}
	if (out) {
		out[o] = '\0';
		*outlen = o;
	}
	return out;
}

/*
 * Whether a header repeats want: its value trimmed, and a "=?base64?...?=" value decoded
 * first (that form carries what a header cannot). A missing header repeats nothing.
 */
bool
stateless_header_repeats(const char *raw, const char *want, size_t wantlen)
{
	char *v = raw ? ows_trim(raw) : NULL, *dec = NULL;
	size_t n = v ? strlen(v) : 0, dlen = 0;
	bool ok;

	if (v == NULL)
		return false;
	if (n >= 11 && strncmp(v, "=?base64?", 9) == 0 && strcmp(v + n - 2, "?=") == 0) {
		dec = b64_decode(v + 9, n - 11, &dlen);
		ok = dec && dlen == wantlen && memcmp(dec, want, wantlen) == 0;
	} else {
		ok = n == wantlen && memcmp(v, want, wantlen) == 0;
	}
	free(dec);
	free(v);
	return ok;
}

/* The name a request's Mcp-Name header must repeat, if its method has one. */
static const char *
name_of(const char *method, json_t *params)
{
	if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
		return json_string_value(json_object_get(params, "name"));
	if (strcmp(method, "resources/read") == 0)
		return json_string_value(json_object_get(params, "uri"));
	if (tasks_method(method))
		return json_string_value(json_object_get(params, "taskId"));
	return NULL;
}

/* An argument as its Mcp-Param header carries it: strings as they are, the rest as JSON. */
static char *
param_text(json_t *v)
{
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

struct repeat_check {
	struct http_server *h;
	struct hd_conn *c;
	json_t *params;
	bool ok;
};

/* Under the tables' read lock (lists_read). */
static void
params_check(void *arg)
{
	struct repeat_check *rc = arg;
	const char *tool = json_string_value(json_object_get(rc->params, "name"));
	json_t *args = json_object_get(rc->params, "arguments"), *props, *schema;
	const struct tool_route *r;
	const char *key;

	r = tool ? routes_find(rc->h->conf.tools, tool) : NULL;
	props = r ? json_object_get(json_object_get(r->tool, "inputSchema"), "properties") : NULL;
	json_object_foreach(props, key, schema) {
		const char *hname = json_string_value(json_object_get(schema, "x-mcp-header"));
		json_t *arg = json_object_get(args, key);
		char hdr[160], *want;

		if (hname == NULL || arg == NULL || json_is_null(arg))
			continue;
		snprintf(hdr, sizeof(hdr), "Mcp-Param-%s", hname);
		want = param_text(arg);
		rc->ok = want && stateless_header_repeats(hd_header(rc->c, hdr), want,
								 strlen(want));
		free(want);
		if (!rc->ok)
			break;
	}
}

/*
 * tools/call: every argument whose schema names an "x-mcp-header" must be repeated in
 * Mcp-Param-<that name>. Reads the routing table, so it runs under the table's read lock.
 */
static bool
params_repeated(struct http_server *h, struct hd_conn *c, json_t *params)
{
	struct repeat_check rc = { h, c, params, true };

	lists_read(h, params_check, &rc);
	return rc.ok;
}

static json_t *
mismatch(json_t *id, const char *msg)
{
	return rpc_error(id, RPC_HEADER_MISMATCH, msg);
}

/* The headers against the body; NULL when they agree. */
static json_t *
headers_check(struct http_server *h, struct hd_conn *c, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const char *hm = hd_header(c, "Mcp-Method");
	json_t *params = json_object_get(msg, "params"), *id = json_object_get(msg, "id");
	const char *name;

	if (method == NULL)
		return NULL;
	if (!stateless_header_repeats(hm, method, strlen(method)))
		return mismatch(id, "Header mismatch: the Mcp-Method header must name the body's "
				"method");
	name = name_of(method, params);
	if (name && !stateless_header_repeats(hd_header(c, "Mcp-Name"), name, strlen(name)))
		return mismatch(id, "Header mismatch: the Mcp-Name header must repeat the body's "
				"name, uri or taskId");
	if (strcmp(method, "tools/call") == 0 && !params_repeated(h, c, params))
		return mismatch(id, "Header mismatch: an argument the tool mirrors into an "
				"Mcp-Param header is missing from it or differs");
	return NULL;
}

json_t *
stateless_check(struct http_server *h, struct hd_conn *c, json_t *msg,
		unsigned int *status)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
	json_t *id = json_object_get(msg, "id"), *e;
	const char *v = json_string_value(json_object_get(meta, META_VERSION));

	*status = HTTP_BAD_REQUEST;
	if (!json_is_object(msg))
		return rpc_error(NULL, RPC_INVALID_REQUEST, "Invalid Request: 2026-07-28 has no "
				 "batches");
	if ((e = headers_check(h, c, msg)) != NULL)
		return e;
	if (json_object_get(msg, "method") == NULL || id == NULL) {
		*status = HTTP_OK;
		return NULL;
	}
	if (v == NULL || !json_is_object(json_object_get(meta, META_CAPS)))
		return rpc_error(id, RPC_INVALID_PARAMS, "Invalid params: _meta must carry "
				 META_VERSION " and " META_CAPS);
	/* The header said 2026-07-28 (that is how this request got here): the body must too. */
	if (strcmp(v, MCP_2026_07_28) != 0)
		return mismatch(id, "Header mismatch: MCP-Protocol-Version and _meta's "
				META_VERSION " differ");
	*status = HTTP_OK;
	return NULL;
}

static void
stateless_session_init(struct session *s, json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
	const char *lvl = json_string_value(json_object_get(meta, META_LOG_LEVEL));

	s->stateless = true;
	s->initialized = true;
	snprintf(s->version, sizeof(s->version), "%s", MCP_2026_07_28);
	s->caps = rpc_client_caps(json_object_get(meta, META_CAPS));
	s->tasks = json_object_get(json_object_get(json_object_get(meta, META_CAPS),
						   "extensions"), EXT_TASKS) != NULL;
	/* Log messages are an opt-in per request. */
	s->log_level = lvl ? rpc_log_level(lvl) : 8;
}

void
stateless_result(json_t *msg, const char *method)
{
	json_t *res = json_object_get(msg, "result"), *err = json_object_get(msg, "error");

	/* A missing resource has one code in 2026-07-28, whatever the server's revision said. */
	if (method && strcmp(method, "resources/read") == 0 &&
	    json_integer_value(json_object_get(err, "code")) == -32002)
		json_object_set_new(err, "code", json_integer(RPC_INVALID_PARAMS));
	if (!json_is_object(res))
		return;
	/* A server's input_required or task result is its own answer, relayed as it is. */
	if (!json_is_string(json_object_get(res, "resultType")))
		json_object_set_new(res, "resultType", json_string("complete"));
	/*
	 * Lists and reads are cacheable results; they may change under a client that cannot
	 * hear it (no subscriptions/listen here), so: do not cache.
	 */
	if (method && (strstr(method, "/list") || strcmp(method, "resources/read") == 0) &&
	    !json_object_get(res, "ttlMs")) {
		json_object_set_new(res, "ttlMs", json_integer(0));
		json_object_set_new(res, "cacheScope", json_string("private"));
	}
}

/*
 * A one-request session for a 2026-07-28 request, or NULL with the refusal queued in *ret.
 */
struct session *
stateless_session(struct http_server *h, struct hd_conn *c, json_t *msg,
		  enum hd_result *ret)
{
	unsigned int status = HTTP_OK;
	json_t *e = stateless_check(h, c, msg, &status);
	struct session *s;

	if (e) {
		*ret = reply_json(c, status, e, NULL);
		return NULL;
	}
	s = session_new();
	if (s == NULL) {
		*ret = reply_text(c, HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
		return NULL;
	}
	stateless_session_init(s, msg);
	return s;
}
