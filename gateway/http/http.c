/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the HTTP side, the top of its layers (session/session.h). /mcp speaks MCP
 * streamable HTTP: POST carries JSON-RPC messages (requests relayed to upstreams are
 * answered on an SSE stream that also carries what the upstream sends for them, see
 * relay.c), GET opens the session's stream for notifications that belong to no request,
 * DELETE ends a session. /health is a public summary. One loop thread serves every
 * connection (epoll): nothing here blocks, a request whose answer is not there yet
 * suspends its connection (session/waiter.c) and is called again once it resumes. The
 * HTTP/1.1 server under all of it is wire/httpd.c, on the loop of server.c. Also
 * here: what upstreams send outside any call, and the housekeeping tick.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/audit.h"
#include "base/clock.h"
#include "base/jsonfast.h"
#include "base/str.h"
#include "http/guard.h"
#include "http/http.h"
#include "http/server.h"
#include "session/http_conf.h"
#include "session/session.h"
#include "upstream/upstream.h"
#include "wire/reply.h"
#include "wire/rpc.h"

#define DRAIN_FACTOR	4ULL
#define CONN_MAX	8192
#define CONN_TIMEOUT_S	120
#define HEAD_TIMEOUT_S	30

/* A batch whose answers are not all in: what is collected, the streams still waited for. */
struct batch {
	struct stream **sts;
	size_t n;
	json_t *out;
};

struct req_ctx {
	struct strbuf body;
	uint64_t seen;
	bool mcp_post;
	bool too_big;
	const char *origin;	/* the allowed Origin, for CORS on every answer */
	/* A suspended request waits for one of these (stream_reply, or a batch's answers). */
	struct stream *again;
	struct batch *batch;
};

/* ---- POST /mcp ---------------------------------------------------------------------------- */

struct accept_scan {
	bool json;
	bool sse;
};

/* Whether the n bytes at p are the media range t (any case). */
static bool
range_is(const char *p, size_t n, const char *t)
{
	return n == strlen(t) && strncasecmp(p, t, n) == 0;
}

/* Every request has one or two Accept headers: read in place, no copy of them. */
static void
accept_iter(void *cls, const char *key, const char *value)
{
	struct accept_scan *a = cls;
	const char *v = value;

	if (strcasecmp(key, "Accept") != 0 || v == NULL)
		return;
	while (*v) {
		const char *start, *end;
		size_t n;

		while (*v == ' ' || *v == '\t' || *v == ',')
			v++;
		for (start = v; *v && *v != ',' && *v != ';'; v++)
			;
		for (end = v; end > start && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		n = (size_t)(end - start);
		if (range_is(start, n, "*/*") || range_is(start, n, "application/*") ||
		    range_is(start, n, "application/json"))
			a->json = true;
		if (range_is(start, n, "*/*") || range_is(start, n, "text/*") ||
		    range_is(start, n, "text/event-stream"))
			a->sse = true;
		while (*v && *v != ',')
			v++;	/* the range's parameters */
	}
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

static bool
id_valid(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

/* What one POST carries, checked once: how answers go back and which session it is for. */
struct post {
	struct hd_conn *c;
	struct req_ctx *rq;
	struct session *s;
	bool fresh;		/* s is new: only an initialize may create one */
	bool json_only;		/* the client accepts application/json, not SSE */
	bool stateless;		/* MCP-Protocol-Version 2026-07-28 */
};

/* A response or a notification from the client: nothing goes back but 202. */
static enum hd_result
post_no_reply(struct http_server *h, struct post *p, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));

	if (method == NULL)
		session_sreq_answer(h, p->s, msg);
	else if (strcmp(method, "notifications/cancelled") == 0)
		session_cancel(h, p->s, json_object_get(msg, "params"));
	else if (strcmp(method, "notifications/roots/list_changed") == 0 && !p->s->stateless)
		events_roots_changed(h, p->s);
	return reply_empty(p->c, HTTP_ACCEPTED);
}

static enum hd_result
post_own_reply(struct http_server *h, struct post *p, json_t *msg, json_t *resp)
{
	const char *sid = NULL;

	if (p->fresh) {
		bool init = strcmp(json_string_value(json_object_get(msg, "method")),
				   "initialize") == 0;

		if (init && json_object_get(resp, "result")) {
			if (session_insert(h, p->s) < 0) {
				json_decref(resp);
				resp = rpc_error(json_object_get(msg, "id"), RPC_INTERNAL,
						 "too many sessions");
			} else {
				sid = p->s->id;
			}
		}
	}
	if (p->json_only || (p->s->stateless && rpc_status(resp) != HTTP_OK))
		return reply_json(p->c, p->s->stateless ? rpc_status(resp) : HTTP_OK, resp,
				  sid);
	{
		enum hd_result ret = reply_sse(p->c, resp, sid);

		json_decref(resp);
		return ret;
	}
}

/* One JSON-RPC message that is not part of a batch. */
static enum hd_result
post_message(struct http_server *h, struct post *p, json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	struct forward f;
	struct stream *st;
	enum hd_result ret;
	char *idtext;

	if (!json_is_string(json_object_get(msg, "method"))) {
		if (json_object_get(msg, "result") || json_object_get(msg, "error"))
			return post_no_reply(h, p, msg);
		return reply_rpc_error(p->c, HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				       "Invalid Request: missing method");
	}
	if (id == NULL)
		return post_no_reply(h, p, msg);
	if (!id_valid(id))
		return reply_rpc_error(p->c, HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				       "Invalid Request: invalid request id");
	idtext = rpc_id_text(id);
	if (idtext == NULL || !session_id_claim(h, p->s, idtext)) {
		free(idtext);
		return reply_json(p->c, HTTP_BAD_REQUEST,
				  rpc_error(id, RPC_INVALID_REQUEST, "duplicate request id"), NULL);
	}
	if (p->s->stateless && strcmp(json_string_value(json_object_get(msg, "method")),
				   "subscriptions/listen") == 0) {
		session_id_release(h, p->s, idtext);
		free(idtext);
		if (p->json_only)
			return reply_json(p->c, HTTP_OK, rpc_error(id, RPC_INVALID_REQUEST,
					  "subscriptions/listen needs text/event-stream"), NULL);
		return events_listen(h, p->c, p->s, msg, hd_fd(p->c));
	}
	/* Other requestStates are a server's own: they go to it untouched with the retry. */
	if (p->s->stateless && park_owns(json_object_get(json_object_get(msg, "params"),
						      "requestState"))) {
		session_id_release(h, p->s, idtext);
		free(idtext);
		st = park_resume(h, json_object_get(msg, "params"), id, hd_fd(p->c),
				 !p->json_only);
		if (st == NULL)
			return reply_json(p->c, HTTP_OK, rpc_error(id, RPC_INVALID_PARAMS,
					  "unknown or expired requestState"), NULL);
		return stream_reply(p->c, st, &p->rq->again);
	}
	mcp_route(h, p->s, msg, &f);
	if (f.reply) {
		session_id_release(h, p->s, idtext);
		free(idtext);
		if (p->s->stateless)
			stateless_result(f.reply, json_string_value(json_object_get(msg, "method")));
		ret = post_own_reply(h, p, msg, json_incref(f.reply));
		mcp_forward_fini(&f);
		return ret;
	}
	st = session_stream_new(h, p->s, id, idtext, !p->json_only, hd_fd(p->c));
	free(idtext);
	if (st == NULL) {
		mcp_forward_fini(&f);
		return reply_text(p->c, HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	/* 2026-07-28 requests have no session to resume on. */
	if (!p->json_only && !p->s->stateless)
		resume_start(h, st, strcmp(p->s->version, "2025-11-25") >= 0);
	relay_forward(st, &f, h->conf.call_timeout_ns);
	mcp_forward_fini(&f);
	return stream_reply(p->c, st, &p->rq->again);
}

static bool
batch_allowed(const char *version)
{
	/* JSON-RPC batches came with 2025-03-26 and left with 2025-06-18. */
	return strcmp(version, "2025-03-26") == 0 || strcmp(version, "2024-11-05") == 0;
}

static void
batch_free(struct batch *b, struct hd_conn *c)
{
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++)
		if (b->sts[i])
			stream_drop(b->sts[i], c);
	free(b->sts);
	json_decref(b->out);
	free(b);
}

/* The answers of a batch as they come in; the connection sleeps while one is missing. */
static enum hd_result
batch_collect(struct hd_conn *c, struct req_ctx *rq)
{
	struct batch *b = rq->batch;
	json_t *out, *msg;
	size_t i;

	for (i = 0; i < b->n; i++) {
		enum stream_wait w;

		if (b->sts[i] == NULL)
			continue;
		w = stream_final(b->sts[i], c, &msg);
		if (w == SW_ASLEEP)
			return HD_YES;
		if (w == SW_GONE) {
			batch_free(b, c);
			rq->batch = NULL;
			return HD_NO;
		}
		stream_unref(b->sts[i]);
		b->sts[i] = NULL;
		if (msg)
			json_array_append_new(b->out, msg);
	}
	out = b->out;
	b->out = NULL;
	batch_free(b, c);
	rq->batch = NULL;
	if (json_array_size(out) == 0) {
		json_decref(out);
		return reply_empty(c, HTTP_ACCEPTED);
	}
	return reply_json(c, HTTP_OK, out, NULL);
}

/* A batch: every request runs at once, the answers come back together as one JSON array. */
static enum hd_result
post_batch(struct http_server *h, struct post *p, json_t *batch)
{
	size_t i, n = json_array_size(batch);
	struct batch *b = calloc(1, sizeof(*b));
	json_t *msg, *id;

	if (b)
		b->sts = calloc(n + 1, sizeof(*b->sts));
	if (b)
		b->out = json_array();
	if (b == NULL || b->sts == NULL || b->out == NULL) {
		batch_free(b, p->c);
		return reply_text(p->c, HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	b->n = n;
	json_array_foreach(batch, i, msg) {
		const char *method = json_string_value(json_object_get(msg, "method"));
		struct forward f;

		id = json_object_get(msg, "id");
		if (!json_is_object(msg)) {
			json_array_append_new(b->out, rpc_error(NULL, RPC_INVALID_REQUEST,
								"Invalid Request"));
			continue;
		}
		if (method == NULL || id == NULL) {
			if (method == NULL)
				session_sreq_answer(h, p->s, msg);
			else if (strcmp(method, "notifications/cancelled") == 0)
				session_cancel(h, p->s, json_object_get(msg, "params"));
			continue;
		}
		if (!id_valid(id) || strcmp(method, "initialize") == 0) {
			json_array_append_new(b->out, rpc_error(id_valid(id) ? id : NULL,
				RPC_INVALID_REQUEST, "Invalid Request"));
			continue;
		}
		mcp_route(h, p->s, msg, &f);
		if (f.reply) {
			json_array_append(b->out, f.reply);
		} else {
			b->sts[i] = session_stream_new(h, p->s, NULL, NULL, false, hd_fd(p->c));
			if (b->sts[i]) {
				stream_set_id(b->sts[i], id);
				relay_forward(b->sts[i], &f, h->conf.call_timeout_ns);
			}
		}
		mcp_forward_fini(&f);
	}
	p->rq->batch = b;
	return batch_collect(p->c, p->rq);
}

/*
 * A 2026-07-28 request: no session, its version and capabilities in _meta, its method (and
 * name) repeated in headers. Returns HD_YES with p->s set to a one-request session, or the
 * refusal already queued.
 */
static enum hd_result
post_stateless(struct http_server *h, struct post *p, json_t *msg, bool *refused)
{
	enum hd_result ret = HD_YES;

	p->s = stateless_session(h, p->c, msg, &ret);
	p->fresh = p->s != NULL;
	*refused = p->s == NULL;
	return ret;
}

static enum hd_result
post_checked(struct http_server *h, struct hd_conn *c, struct req_ctx *rq,
	     struct post *p)
{
	const char *sid = hd_header(c, "Mcp-Session-Id");
	json_error_t jerr;
	json_t *body;
	enum hd_result ret;
	bool init;

	body = rq->body.len ? json_load_fast(rq->body.buf, rq->body.len, &jerr) : NULL;
	if (body == NULL) {
		char msg[256];

		snprintf(msg, sizeof(msg), "Parse error: %s", rq->body.len ? jerr.text :
			 "empty body");
		return reply_rpc_error(c, HTTP_BAD_REQUEST, RPC_PARSE, msg);
	}
	if (!json_is_object(body) && !json_is_array(body)) {
		json_decref(body);
		return reply_rpc_error(c, HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				       "Invalid Request: not a JSON-RPC message");
	}
	init = json_is_object(body) && json_is_string(json_object_get(body, "method")) &&
	       strcmp(json_string_value(json_object_get(body, "method")), "initialize") == 0;
	if (p->stateless) {
		bool refused;

		ret = post_stateless(h, p, body, &refused);
		if (refused) {
			json_decref(body);
			return ret;
		}
	} else if (sid) {
		p->s = session_get(h, sid);
		if (p->s == NULL) {
			json_decref(body);
			return reply_rpc_error(c, HTTP_NOT_FOUND, -32001,
					       "Session not found");
		}
	} else if (init) {
		p->s = session_new();
		if (p->s == NULL) {
			json_decref(body);
			return reply_text(c, HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
		}
		p->fresh = true;
	} else {
		json_decref(body);
		return reply_rpc_error(c, HTTP_BAD_REQUEST, -32000,
				       "Bad Request: Mcp-Session-Id header is required");
	}
	if (json_is_array(body)) {
		if (!batch_allowed(p->s->version) || json_array_size(body) == 0)
			ret = reply_rpc_error(c, HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					      "Invalid Request: batches need protocol version "
					      "2025-03-26 or older");
		else
			ret = post_batch(h, p, body);
	} else {
		ret = post_message(h, p, body);
	}
	json_decref(body);
	/* Streams that outlive this POST count themselves. */
	session_put(h, p->s);
	return ret;
}

static enum hd_result
mcp_post(struct http_server *h, struct hd_conn *c, struct req_ctx *rq)
{
	const char *pv = hd_header(c, "Mcp-Protocol-Version");
	const char *ct = hd_header(c, "Content-Type");
	struct accept_scan acc = {false, false};
	struct post p = { .c = c, .rq = rq };

	p.stateless = pv && strcmp(pv, MCP_2026_07_28) == 0;
	if (pv && !p.stateless && !upstream_proto_supported(pv))
		return stateless_bad_version(c, rq->body.buf, rq->body.len, pv);
	if (!ctype_is_json(ct))
		return reply_text(c, HTTP_UNSUPPORTED_MEDIA_TYPE,
				       "Unsupported Media Type: Content-Type must be "
				       "application/json\n");
	hd_header_each(c, accept_iter, &acc);
	if (!acc.json)
		return reply_text(c, HTTP_NOT_ACCEPTABLE, "Not Acceptable: Accept must "
				       "contain 'application/json' (and 'text/event-stream' for "
				       "streamed answers)\n");
	p.json_only = !acc.sse;
	if (rq->too_big)
		return reply_text(c, HTTP_CONTENT_TOO_LARGE, "request body too large\n");
	return post_checked(h, c, rq, &p);
}

static enum hd_result
mcp_delete(struct http_server *h, struct hd_conn *c)
{
	const char *sid = hd_header(c, "Mcp-Session-Id");

	if (sid == NULL)
		return reply_text(c, HTTP_BAD_REQUEST, "Bad Request: missing session ID\n");
	if (!session_remove(h, sid))
		return reply_text(c, HTTP_NOT_FOUND, "session not found\n");
	return reply_empty(c, HTTP_NO_CONTENT);
}

static enum hd_result
mcp_get(struct http_server *h, struct hd_conn *c)
{
	const char *sid = hd_header(c, "Mcp-Session-Id");
	const char *last = hd_header(c, "Last-Event-ID");
	struct accept_scan acc = {false, false};
	struct session *s;
	enum hd_result ret;

	hd_header_each(c, accept_iter, &acc);
	if (!acc.sse)
		return reply_text(c, HTTP_NOT_ACCEPTABLE, "Not Acceptable: Accept must "
				       "contain 'text/event-stream'\n");
	if (sid == NULL)
		return reply_text(c, HTTP_BAD_REQUEST, "Bad Request: missing session ID\n");
	s = session_get(h, sid);
	if (s == NULL)
		return reply_text(c, HTTP_NOT_FOUND, "session not found\n");
	ret = events_get(h, c, s, last, hd_fd(c));
	session_put(h, s);
	return ret;
}

/* ---- the server's calls ------------------------------------------------------------------ */

/* DNS rebinding protection: a page cannot name our host or send its own Origin. */
static enum hd_result
mcp_guard(struct http_server *h, struct hd_conn *c, struct req_ctx *rq, bool *refused)
{
	const char *host = hd_header(c, "Host");
	const char *origin = hd_header(c, "Origin");

	*refused = true;
	reply_origin_set(NULL);
	if (!guard_host_allowed(&h->conf, host))
		return reply_text(c, HTTP_FORBIDDEN, "Forbidden: Host not allowed\n");
	if (origin && !guard_origin_allowed(&h->conf, origin))
		return reply_text(c, HTTP_FORBIDDEN, "Forbidden: Origin not allowed\n");
	rq->origin = origin;
	reply_origin_set(origin);
	*refused = false;
	return HD_YES;
}

static enum hd_result
http_first(struct http_server *h, struct hd_conn *c, struct req_ctx *rq, bool mcp,
	   const char *method)
{
	bool refused = false;
	enum hd_result ret;

	if (mcp) {
		ret = mcp_guard(h, c, rq, &refused);
		if (refused)
			return ret;
		if (strcmp(method, "OPTIONS") == 0)
			return reply_preflight(c);
	}
	/* The token check comes next, and an unauthorised body is never buffered. */
	if (mcp && !guard_token_equal(hd_header(c, "Authorization"), h->conf.token))
		return reply_unauthorized(c);
	rq->mcp_post = mcp && strcmp(method, "POST") == 0;
	/*
	 * A client still sending when we answer and close sees a reset instead of the 413,
	 * so moderately oversized bodies are read and dropped; absurd ones are not.
	 */
	if (rq->mcp_post && hd_body_length(c) > DRAIN_FACTOR * h->conf.max_body)
		return reply_text(c, HTTP_CONTENT_TOO_LARGE, "request body too large\n");
	return HD_YES;
}

static enum hd_result
http_access(void *cls, struct hd_conn *c, const char *url, const char *method,
	    const char *upload, size_t *upload_size, void **con_cls)
{
	struct http_server *h = cls;
	struct req_ctx *rq = *con_cls;
	bool mcp = strcmp(url, "/mcp") == 0;

	if (rq == NULL) {
		rq = calloc(1, sizeof(*rq));
		if (rq == NULL)
			return HD_NO;
		*con_cls = rq;
		pthread_mutex_lock(&h->active_lock);
		h->active++;
		pthread_mutex_unlock(&h->active_lock);
		return http_first(h, c, rq, mcp, method);
	}
	/* Other connections' requests ran on this thread since its last callback. */
	reply_origin_set(rq->origin);
	if (rq->again) {
		struct stream *st = rq->again;

		return stream_reply(c, st, &rq->again);
	}
	if (rq->batch)
		return batch_collect(c, rq);
	if (*upload_size) {
		rq->seen += *upload_size;
		if (rq->mcp_post && !rq->too_big) {
			if (rq->body.len + *upload_size > h->conf.max_body) {
				rq->too_big = true;
				sb_free(&rq->body);
			} else if (sb_append(&rq->body, upload, *upload_size)) {
				return HD_NO;
			}
		}
		*upload_size = 0;
		if (rq->seen > DRAIN_FACTOR * h->conf.max_body)
			return HD_NO;
		return HD_YES;
	}
	if (strcmp(url, "/health") == 0) {
		char *body = lists_health(h);

		if (body == NULL)
			return HD_NO;
		return reply_buffer(c, HTTP_OK, "application/json", body, strlen(body), true,
				    NULL, NULL);
	}
	if (!mcp)
		return reply_text(c, HTTP_NOT_FOUND, "404 page not found\n");
	if (strcmp(method, "POST") == 0)
		return mcp_post(h, c, rq);
	if (strcmp(method, "DELETE") == 0)
		return mcp_delete(h, c);
	if (strcmp(method, "GET") == 0)
		return mcp_get(h, c);
	return reply_buffer(c, HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			    "method not allowed\n", 19, false, "Allow",
			    "GET, POST, DELETE");
}

static void
http_completed(void *cls, struct hd_conn *c, void **con_cls)
{
	struct http_server *h = cls;
	struct req_ctx *rq = *con_cls;

	if (rq == NULL)
		return;
	/* A request that ended asleep (the gateway stops, the connection broke). */
	if (rq->again)
		stream_drop(rq->again, c);
	batch_free(rq->batch, c);
	sb_free(&rq->body);
	free(rq);
	*con_cls = NULL;
	pthread_mutex_lock(&h->active_lock);
	h->active--;
	pthread_cond_broadcast(&h->active_cond);
	pthread_mutex_unlock(&h->active_lock);
}

/* ---- the daemon -------------------------------------------------------------------------- */

/* The audit lines of this loop turn's calls are written before any of their answers leaves. */
static void
http_before_send(void *cls)
{
	struct http_server *h = cls;

	audit_flush(h->conf.audit);
}

/* Connections are cheap now; the file limit (sockets, pipes, a few to spare) is the bound. */
static unsigned int
conn_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return CONN_MAX;
	return rl.rlim_cur < 256 ? 64 : rl.rlim_cur - 128 > CONN_MAX ? CONN_MAX :
	       (unsigned int)(rl.rlim_cur - 128);
}

struct http_server *
http_start(const struct http_conf *conf, int listen_fd, char **err)
{
	struct http_server *h = server_new(conf, err);
	struct hd_conf hc = {
		.access = http_access, .completed = http_completed, .listen_fd = listen_fd,
		.conn_limit = conn_limit(), .timeout_s = CONN_TIMEOUT_S,
		.head_timeout_s = HEAD_TIMEOUT_S, .before_send = http_before_send,
	};

	if (h == NULL)
		return NULL;
	/*
	 * Event-driven on one thread of ours (server_loop_attach): the server's connections are
	 * in its loop, and a request that waits suspends its connection.
	 */
	hc.cls = h;
	h->d = hd_new(&hc);
	if (h->d == NULL || server_loop_attach(h)) {
		err_set(err, -EIO, "start HTTP server failed");
		http_stop(h);
		return NULL;
	}
	return h;
}

char *
http_health(struct http_server *h)
{
	return lists_health(h);
}

/* Stop accepting and let requests in flight finish, for at most grace_ms. */
void
http_quiesce(struct http_server *h, int grace_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)grace_ms * 1000000;

	if (h == NULL)
		return;
	hd_quiesce(h->d);
	/* GET and listen streams never end by themselves. */
	events_close_all(h);
	pthread_mutex_lock(&h->active_lock);
	while (h->active > 0 && time_mono_ns() < deadline) {
		struct timespec ts;

		time_deadline(&ts, 50 * 1000000);
		pthread_cond_timedwait(&h->active_cond, &h->active_lock, &ts);
	}
	pthread_mutex_unlock(&h->active_lock);
}

void
http_stop(struct http_server *h)
{
	if (h == NULL)
		return;
	/* Suspended requests end first, each with its completion, while the loop still runs. */
	waiter_stop(h);
	relay_wait(h);
	server_loop_detach(h);
	hd_free(h->d);
	server_free(h);
}
