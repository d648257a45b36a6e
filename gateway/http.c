/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the HTTP side. /mcp speaks MCP streamable HTTP (POST requests answered with
 * one SSE event, DELETE ends a session, GET has no standalone stream: 405), /health is a
 * public summary. One thread per connection, so a long tool call simply blocks its thread.
 */

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "gw.h"

#define SESSION_ID_LEN	26
#define CURSOR_PREFIX	"gwc1:"
#define DRAIN_FACTOR	4ULL

struct session {
	char id[SESSION_ID_LEN + 1];
	char version[16];
	bool initialized;
	bool closed;
	int refs;		/* the table's reference plus one per request in flight */
	int inflight;
	int64_t last_used;
	char **ids;		/* JSON text of request ids in flight */
	struct session *next;
};

struct http_server {
	struct http_conf conf;
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct session *sessions;
	size_t nsessions;
	int active;		/* requests between first callback and completion */
	char *health;
};

struct req_ctx {
	struct strbuf body;
	uint64_t seen;
	bool mcp_post;
	bool too_big;
};

enum mcp_err {
	RPC_PARSE = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL = -32603,
};

bool
token_equal(const char *header, const char *token)
{
	static const char scheme[] = "Bearer ";
	size_t hl, tl, i;
	unsigned char diff = 0;

	if (header == NULL || token == NULL || *token == '\0')
		return false;
	hl = strlen(header);
	tl = strlen(token);
	/* Constant time in the secret: every byte of the token is compared whatever matches. */
	diff |= hl != tl + sizeof(scheme) - 1;
	for (i = 0; i < sizeof(scheme) - 1; i++)
		diff |= (unsigned char)(i < hl ? header[i] : 0) ^ (unsigned char)scheme[i];
	for (i = 0; i < tl; i++) {
		size_t hi = i + sizeof(scheme) - 1;

		diff |= (unsigned char)(hi < hl ? header[hi] : 0) ^ (unsigned char)token[i];
	}
	return diff == 0;
}

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned int status, const char *ctype, char *body, size_t len,
      bool owned, const char *hname, const char *hval)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE :
					    MHD_RESPMEM_PERSISTENT);
	if (r == NULL) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	if (ctype)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (hname)
		MHD_add_response_header(r, hname, hval);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
reply_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text), false,
		     NULL, NULL);
}

static enum MHD_Result
reply_textf(struct MHD_Connection *c, unsigned int status, const char *fmt, const char *arg)
{
	char *s = str_printf(fmt, arg);

	if (s == NULL)
		return MHD_NO;
	return reply(c, status, "text/plain; charset=utf-8", s, strlen(s), true, NULL, NULL);
}

static enum MHD_Result
reply_unauthorized(struct MHD_Connection *c)
{
	return reply(c, MHD_HTTP_UNAUTHORIZED, "text/plain; charset=utf-8", "unauthorized\n", 13,
		     false, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"mcp-gateway\"");
}

/* ---- sessions ----------------------------------------------------------------------------- */

static struct session *
session_new(void)
{
	static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	unsigned char rnd[SESSION_ID_LEN];
	struct session *s = calloc(1, sizeof(*s));
	size_t i;

	if (s == NULL || rand_bytes(rnd, sizeof(rnd))) {
		free(s);
		return NULL;
	}
	for (i = 0; i < SESSION_ID_LEN; i++)
		s->id[i] = b32[rnd[i] & 31];
	s->refs = 1;
	strcpy(s->version, "2025-03-26");
	s->last_used = time_mono_ns();
	return s;
}

static void
session_unref_locked(struct session *s)
{
	if (--s->refs > 0)
		return;
	strv_free(s->ids);
	free(s);
}

/* Sessions idle past the limit go; one with a request in flight is never idle. */
static void
sessions_expire_locked(struct http_server *h)
{
	int64_t now = time_mono_ns();
	struct session **pp = &h->sessions;

	while (*pp) {
		struct session *s = *pp;

		if (s->inflight == 0 && now - s->last_used > h->conf.session_idle_ns) {
			*pp = s->next;
			s->closed = true;
			h->nsessions--;
			session_unref_locked(s);
			continue;
		}
		pp = &s->next;
	}
}

static struct session *
session_get(struct http_server *h, const char *id)
{
	struct session *s;

	pthread_mutex_lock(&h->lock);
	sessions_expire_locked(h);
	for (s = h->sessions; s; s = s->next) {
		if (strcmp(s->id, id) == 0) {
			s->refs++;
			s->inflight++;
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return s;
}

static void
session_put(struct http_server *h, struct session *s)
{
	pthread_mutex_lock(&h->lock);
	s->inflight--;
	s->last_used = time_mono_ns();
	session_unref_locked(s);
	pthread_mutex_unlock(&h->lock);
}

static int
session_insert(struct http_server *h, struct session *s)
{
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	sessions_expire_locked(h);
	if (h->nsessions >= h->conf.max_sessions) {
		rc = -ENOSPC;
	} else {
		s->refs++;
		s->next = h->sessions;
		h->sessions = s;
		h->nsessions++;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static bool
session_remove(struct http_server *h, const char *id)
{
	struct session **pp;
	bool found = false;

	pthread_mutex_lock(&h->lock);
	for (pp = &h->sessions; *pp; pp = &(*pp)->next) {
		struct session *s = *pp;

		if (strcmp(s->id, id) == 0) {
			*pp = s->next;
			s->closed = true;
			h->nsessions--;
			session_unref_locked(s);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return found;
}

/* Registers a request id as in flight; false when the same id is already running. */
static bool
session_id_claim(struct http_server *h, struct session *s, const char *idtext)
{
	bool ok = true;
	size_t i;

	pthread_mutex_lock(&h->lock);
	for (i = 0; s->ids && s->ids[i]; i++)
		if (strcmp(s->ids[i], idtext) == 0)
			ok = false;
	if (ok)
		strv_push(&s->ids, idtext);
	pthread_mutex_unlock(&h->lock);
	return ok;
}

static void
session_id_release(struct http_server *h, struct session *s, const char *idtext)
{
	size_t i, n;

	pthread_mutex_lock(&h->lock);
	n = strv_len(s->ids);
	for (i = 0; i < n; i++) {
		if (strcmp(s->ids[i], idtext) == 0) {
			free(s->ids[i]);
			s->ids[i] = s->ids[n - 1];
			s->ids[n - 1] = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
}

/* ---- MCP methods -------------------------------------------------------------------------- */

static json_t *
rpc_error(json_t *id, int code, const char *msg)
{
	return json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
			 code, "message", msg);
}

static json_t *
rpc_result(json_t *id, json_t *result)
{
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static json_t *
mcp_initialize(struct http_server *h, struct session *s, json_t *id, json_t *params)
{
	const char *req = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = proto_negotiate(req);
	json_t *caps;

	snprintf(s->version, sizeof(s->version), "%s", v);
	s->initialized = true;
	caps = json_pack("{s:{},s:{s:b}}", "logging", "tools", "listChanged", 1);
	return rpc_result(id, json_pack("{s:s,s:o,s:{s:s,s:s}}", "protocolVersion", v,
					"capabilities", caps, "serverInfo", "name",
					GW_CLIENT_NAME, "version", h->conf.version));
}

static json_t *
mcp_tools_list(struct http_server *h, json_t *id, json_t *params)
{
	const struct tool_table *t = h->conf.tools;
	json_t *cursor = json_object_get(params, "cursor"), *tools, *res;
	size_t off = 0, end, i;

	if (cursor && !json_is_null(cursor)) {
		const char *c = json_string_value(cursor);
		char *e;

		if (c == NULL || strncmp(c, CURSOR_PREFIX, strlen(CURSOR_PREFIX)))
			return rpc_error(id, RPC_INVALID_PARAMS, "invalid cursor");
		c += strlen(CURSOR_PREFIX);
		errno = 0;
		off = strtoul(c, &e, 10);
		if (!isdigit((unsigned char)*c) || *e || errno || off == 0 || off >= t->n)
			return rpc_error(id, RPC_INVALID_PARAMS, "invalid cursor");
	}
	end = off + h->conf.page_size;
	if (end > t->n)
		end = t->n;
	tools = json_array();
	for (i = off; i < end; i++)
		json_array_append(tools, t->v[i].tool);
	res = json_pack("{s:o}", "tools", tools);
	if (end < t->n) {
		char buf[64];

		snprintf(buf, sizeof(buf), CURSOR_PREFIX "%zu", end);
		json_object_set_new(res, "nextCursor", json_string(buf));
	}
	return rpc_result(id, res);
}

static json_t *
mcp_tools_call(struct http_server *h, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct tool_route *r;
	json_t *fwd, *res = NULL, *uerr = NULL, *out, *v;
	char *err = NULL;
	int rc;

	if (name == NULL)
		return rpc_error(id, RPC_INVALID_PARAMS, "missing tool name");
	r = tools_find(h->conf.tools, name);
	if (r == NULL) {
		char *q = str_quote(name), *m = str_printf("unknown tool %s", q);

		out = rpc_error(id, RPC_INVALID_PARAMS, m ? m : "unknown tool");
		free(q);
		free(m);
		return out;
	}
	fwd = json_pack("{s:s}", "name", r->orig);
	v = json_object_get(params, "arguments");
	if (v)
		json_object_set(fwd, "arguments", v);
	v = json_object_get(params, "_meta");
	if (v)
		json_object_set(fwd, "_meta", v);
	rc = upstream_call(r->ctx, "tools/call", fwd, &res, &uerr, &err);
	json_decref(fwd);
	if (rc) {
		char *m = str_printf("mcp server \"%s\": %s", upstream_name(r->ctx),
				     err ? err : "call failed");

		out = rpc_error(id, RPC_INTERNAL, m ? m : "call failed");
		free(m);
	} else if (uerr) {
		out = json_pack("{s:s,s:O,s:O}", "jsonrpc", "2.0", "id", id, "error", uerr);
		json_decref(uerr);
	} else {
		out = rpc_result(id, res);
	}
	free(err);
	return out;
}

static json_t *
mcp_dispatch(struct http_server *h, struct session *s, json_t *req)
{
	const char *method = json_string_value(json_object_get(req, "method"));
	json_t *id = json_object_get(req, "id");
	json_t *params = json_object_get(req, "params");

	if (strcmp(method, "initialize") == 0)
		return mcp_initialize(h, s, id, params);
	if (strcmp(method, "ping") == 0 || strcmp(method, "logging/setLevel") == 0)
		return rpc_result(id, json_object());
	if (!s->initialized) {
		char *m = str_printf("method \"%s\" is invalid during session initialization",
				     method);
		json_t *out = rpc_error(id, RPC_INVALID_REQUEST, m ? m : "not initialized");

		free(m);
		return out;
	}
	if (strcmp(method, "tools/list") == 0)
		return mcp_tools_list(h, id, params);
	if (strcmp(method, "tools/call") == 0)
		return mcp_tools_call(h, id, params);
	return rpc_error(id, RPC_METHOD_NOT_FOUND, "method not found");
}

/* ---- POST /mcp ---------------------------------------------------------------------------- */

struct accept_scan {
	bool json;
	bool sse;
};

static enum MHD_Result
accept_iter(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct accept_scan *a = cls;
	char *dup, *tok, *save = NULL;

	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_ACCEPT) != 0 || value == NULL)
		return MHD_YES;
	dup = strdup(value);
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *semi = strchr(tok, ';'), *t;

		if (semi)
			*semi = '\0';
		t = str_trim_dup(tok, strlen(tok));
		if (t == NULL)
			continue;
		if (!strcasecmp(t, "*/*") || !strcasecmp(t, "application/*") ||
		    !strcasecmp(t, "application/json"))
			a->json = true;
		if (!strcasecmp(t, "*/*") || !strcasecmp(t, "text/*") ||
		    !strcasecmp(t, "text/event-stream"))
			a->sse = true;
		free(t);
	}
	free(dup);
	return MHD_YES;
}

static bool
ctype_is_json(const char *ct)
{
	size_t len;
	char *t;
	bool ok;

	if (ct == NULL)
		return false;
	len = strcspn(ct, ";");
	t = str_trim_dup(ct, len);
	ok = t && strcasecmp(t, "application/json") == 0;
	free(t);
	return ok;
}

static enum MHD_Result
reply_sse(struct MHD_Connection *c, json_t *msg, const char *session_id)
{
	struct MHD_Response *r;
	struct strbuf sb = {0};
	enum MHD_Result ret;
	char *js = json_dumps(msg, JSON_COMPACT);

	if (js == NULL)
		return MHD_NO;
	sb_appends(&sb, "event: message\ndata: ");
	sb_appends(&sb, js);
	sb_appends(&sb, "\n\n");
	free(js);
	r = MHD_create_response_from_buffer(sb.len, sb.buf, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		sb_free(&sb);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, no-transform");
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static bool
id_valid(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

static enum MHD_Result
mcp_post(struct http_server *h, struct MHD_Connection *c, struct req_ctx *rq)
{
	const char *pv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Protocol-Version");
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_TYPE);
	struct accept_scan acc = {false, false};
	struct session *s = NULL;
	json_t *body = NULL, *resp = NULL, *id;
	json_error_t jerr;
	enum MHD_Result ret;
	char *idtext = NULL;
	bool fresh = false;

	if (pv && !proto_supported(pv))
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "Bad Request: Unsupported protocol "
				  "version (supported versions: 2024-11-05, 2025-03-26, "
				  "2025-06-18, 2025-11-25)\n");
	if (!ctype_is_json(ct))
		return reply_text(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
				  "Unsupported Media Type: Content-Type must be "
				  "application/json\n");
	MHD_get_connection_values(c, MHD_HEADER_KIND, accept_iter, &acc);
	if (!acc.json || !acc.sse)
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "Bad Request: Accept must contain both "
				  "'application/json' and 'text/event-stream'\n");
	if (rq->too_big)
		return reply_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large\n");
	if (sid) {
		s = session_get(h, sid);
		if (s == NULL)
			return reply_text(c, MHD_HTTP_NOT_FOUND, "session not found\n");
	} else {
		s = session_new();
		if (s == NULL)
			return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
		s->inflight = 1;
		fresh = true;
	}
	if (rq->body.len == 0) {
		ret = reply_text(c, MHD_HTTP_BAD_REQUEST, "Bad Request: empty body\n");
		goto out;
	}
	body = json_loadb(rq->body.buf, rq->body.len, 0, &jerr);
	if (body == NULL) {
		ret = reply_textf(c, MHD_HTTP_BAD_REQUEST, "malformed payload: %s\n", jerr.text);
		goto out;
	}
	/* No mainstream client batches, and 2025-06-18 removed batching: refuse all of them. */
	if (json_is_array(body)) {
		ret = reply_text(c, MHD_HTTP_BAD_REQUEST, "Bad Request: batch requests are not "
				 "supported\n");
		goto out;
	}
	if (!json_is_object(body)) {
		ret = reply_text(c, MHD_HTTP_BAD_REQUEST, "malformed payload: not a JSON-RPC "
				 "message\n");
		goto out;
	}
	id = json_object_get(body, "id");
	if (!json_is_string(json_object_get(body, "method"))) {
		/* A response or error from the client: nothing we asked, so nothing to route. */
		if (json_object_get(body, "result") || json_object_get(body, "error")) {
			ret = reply(c, MHD_HTTP_ACCEPTED, NULL, "", 0, false, NULL, NULL);
			goto out;
		}
		ret = reply_text(c, MHD_HTTP_BAD_REQUEST, "malformed payload: missing method\n");
		goto out;
	}
	if (id == NULL) {
		/* Notifications (initialized, cancelled, ...) need no answer. */
		ret = reply(c, MHD_HTTP_ACCEPTED, NULL, "", 0, false, NULL, NULL);
		goto out;
	}
	if (!id_valid(id)) {
		ret = reply_text(c, MHD_HTTP_BAD_REQUEST, "Bad Request: invalid request id\n");
		goto out;
	}
	idtext = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
	if (idtext == NULL || !session_id_claim(h, s, idtext)) {
		json_t *e = rpc_error(id, RPC_INVALID_REQUEST, "duplicate request id");
		char *js = json_dumps(e, JSON_COMPACT);

		json_decref(e);
		free(idtext);
		idtext = NULL;
		ret = js ? reply(c, MHD_HTTP_BAD_REQUEST, "application/json", js, strlen(js),
				 true, NULL, NULL) : MHD_NO;
		goto out;
	}
	resp = mcp_dispatch(h, s, body);
	session_id_release(h, s, idtext);
	if (fresh && s->initialized &&
	    strcmp(json_string_value(json_object_get(body, "method")), "initialize") == 0 &&
	    json_object_get(resp, "result")) {
		if (session_insert(h, s) < 0) {
			json_decref(resp);
			resp = rpc_error(id, RPC_INTERNAL, "too many sessions");
			ret = reply_sse(c, resp, NULL);
			goto out;
		}
		ret = reply_sse(c, resp, s->id);
		goto out;
	}
	ret = reply_sse(c, resp, NULL);
out:
	free(idtext);
	json_decref(resp);
	json_decref(body);
	if (s) {
		if (fresh) {
			pthread_mutex_lock(&h->lock);
			s->inflight = 0;
			s->last_used = time_mono_ns();
			session_unref_locked(s);
			pthread_mutex_unlock(&h->lock);
		} else {
			session_put(h, s);
		}
	}
	return ret;
}

static enum MHD_Result
mcp_delete(struct http_server *h, struct MHD_Connection *c)
{
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");

	if (sid == NULL)
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "Bad Request: missing session ID\n");
	if (!session_remove(h, sid))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "session not found\n");
	return reply(c, MHD_HTTP_NO_CONTENT, NULL, "", 0, false, NULL, NULL);
}

/* ---- MHD glue ----------------------------------------------------------------------------- */

static enum MHD_Result
http_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	    const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct http_server *h = cls;
	struct req_ctx *rq = *con_cls;
	bool mcp = strcmp(url, "/mcp") == 0;

	(void)version;
	if (rq == NULL) {
		const char *cl;

		rq = calloc(1, sizeof(*rq));
		if (rq == NULL)
			return MHD_NO;
		*con_cls = rq;
		pthread_mutex_lock(&h->lock);
		h->active++;
		pthread_mutex_unlock(&h->lock);
		/* The token check comes first, and an unauthorised body is never buffered. */
		if (mcp && !token_equal(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								    MHD_HTTP_HEADER_AUTHORIZATION),
					h->conf.token))
			return reply_unauthorized(c);
		rq->mcp_post = mcp && strcmp(method, MHD_HTTP_METHOD_POST) == 0;
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						 MHD_HTTP_HEADER_CONTENT_LENGTH);
		/*
		 * A client still sending when we answer and close sees a reset instead of the
		 * 413, so moderately oversized bodies are read and dropped; absurd ones are not.
		 */
		if (rq->mcp_post && cl && strtoull(cl, NULL, 10) > DRAIN_FACTOR * h->conf.max_body)
			return reply_text(c, MHD_HTTP_CONTENT_TOO_LARGE,
					  "request body too large\n");
		return MHD_YES;
	}
	if (*upload_size) {
		rq->seen += *upload_size;
		if (rq->mcp_post && !rq->too_big) {
			if (rq->body.len + *upload_size > h->conf.max_body) {
				rq->too_big = true;
				sb_free(&rq->body);
			} else if (sb_append(&rq->body, upload, *upload_size)) {
				return MHD_NO;
			}
		}
		*upload_size = 0;
		if (rq->seen > DRAIN_FACTOR * h->conf.max_body)
			return MHD_NO;
		return MHD_YES;
	}
	if (strcmp(url, "/health") == 0)
		return reply(c, MHD_HTTP_OK, "application/json", h->health, strlen(h->health),
			     false, NULL, NULL);
	if (!mcp)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "404 page not found\n");
	if (strcmp(method, MHD_HTTP_METHOD_POST) == 0)
		return mcp_post(h, c, rq);
	if (strcmp(method, MHD_HTTP_METHOD_DELETE) == 0)
		return mcp_delete(h, c);
	/* No standalone SSE stream: clients treat 405 on GET as "not offered". */
	if (strcmp(method, MHD_HTTP_METHOD_GET) == 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			     "method not allowed\n", 19, false, MHD_HTTP_HEADER_ALLOW,
			     "POST, DELETE");
	return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
		     "method not allowed\n", 19, false, MHD_HTTP_HEADER_ALLOW,
		     "GET, POST, DELETE");
}

static void
http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
	       enum MHD_RequestTerminationCode toe)
{
	struct http_server *h = cls;
	struct req_ctx *rq = *con_cls;

	(void)c;
	(void)toe;
	if (rq == NULL)
		return;
	sb_free(&rq->body);
	free(rq);
	*con_cls = NULL;
	pthread_mutex_lock(&h->lock);
	h->active--;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static char *
health_body(const struct http_conf *conf)
{
	json_t *servers = json_array(), *o;
	char *s, *out;
	size_t i;

	for (i = 0; conf->servers && conf->servers[i]; i++)
		json_array_append_new(servers, json_string(conf->servers[i]));
	o = json_pack("{s:o,s:s,s:I}", "servers", servers, "status", "ok", "tools",
		      (json_int_t)conf->tools->n);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	out = s ? str_printf("%s\n", s) : NULL;
	free(s);
	return out;
}

struct http_server *
http_start(const struct http_conf *conf, int listen_fd, char **err)
{
	struct http_server *h = calloc(1, sizeof(*h));

	if (h == NULL) {
		err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	h->conf = *conf;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->health = health_body(conf);
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
				MHD_USE_ITC | MHD_USE_POLL, 0, NULL, NULL, http_access, h,
				MHD_OPTION_LISTEN_SOCKET, listen_fd,
				MHD_OPTION_NOTIFY_COMPLETED, http_completed, h,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
				MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
				MHD_OPTION_END);
	if (h->d == NULL) {
		err_set(err, -EIO, "start HTTP server failed");
		free(h->health);
		free(h);
		return NULL;
	}
	return h;
}

/* Stop accepting and let requests in flight finish, for at most grace_ms. */
void
http_quiesce(struct http_server *h, int grace_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)grace_ms * 1000000;
	MHD_socket fd;

	if (h == NULL)
		return;
	fd = MHD_quiesce_daemon(h->d);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	pthread_mutex_lock(&h->lock);
	while (h->active > 0 && time_mono_ns() < deadline) {
		struct timespec ts;

		time_deadline(&ts, 50 * 1000000);
		pthread_cond_timedwait(&h->cond, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
}

void
http_stop(struct http_server *h)
{
	struct session *s;

	if (h == NULL)
		return;
	MHD_stop_daemon(h->d);
	while ((s = h->sessions) != NULL) {
		h->sessions = s->next;
		session_unref_locked(s);
	}
	free(h->health);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	free(h);
}
