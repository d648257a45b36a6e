/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: client requests relayed to upstreams. The request's stream is the link the
 * upstream's reader thread hands everything to that the server sends for it: progress under
 * the client's token, log messages at the session's level, the server's own requests under
 * an id of the session's (or parked, for a 2026-07-28 client), finally the answer.
 */

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "base/audit.h"
#include "base/clock.h"
#include "session/session.h"
#include "session/stream_int.h"
#include "upstream/upstream.h"
#include "wire/rpc.h"

static struct stream *
link_stream(const struct up_link *l)
{
	return (struct stream *)((char *)l - offsetof(struct stream, link));
}

/* The audit line of a tools/call that ends with 'status' (and 'code', for "error"). */
static void
relay_audit_status(struct stream *st, const char *status, int code)
{
	struct audit_call c = { .tool = st->audit_tool, .args = st->audit_args };

	/* Only a tools/call with the log on has a start time (relay_forward). */
	if (!st->audit_t0)
		return;
	c.server = st->u ? upstream_name(st->u) : "";
	c.status = status;
	c.code = code;
	c.ns = time_mono_ns() - st->audit_t0;
	audit_write(st->h->conf.audit, &c);
}

/* The audit line of a tools/call that ends with answer 'out' (or an error of ours). */
static void
relay_audit(struct stream *st, json_t *out)
{
	json_t *e = json_object_get(out, "error");

	relay_audit_status(st, e ? "error" : json_is_true(json_object_get(
		json_object_get(out, "result"), "isError")) ? "tool_error" : "ok",
		e ? (int)json_integer_value(json_object_get(e, "code")) : 0);
}

static void
link_done(const struct up_link *l, json_t *msg, const char *err)
{
	struct stream *st = link_stream(l);
	json_t *out, *v;

	if (msg) {
		out = json_pack("{s:s,s:O}", "jsonrpc", "2.0", "id", st->cid);
		v = json_object_get(msg, "error");
		if (json_is_object(v))
			json_object_set(out, "error", v);
		else if ((v = json_object_get(msg, "result")) != NULL)
			json_object_set(out, "result", v);
		else
			json_object_set_new(out, "error", json_pack("{s:i,s:s}", "code",
				RPC_INTERNAL, "message", "malformed response from server"));
	} else {
		out = stream_error(st, err ? err : "no answer");
	}
	relay_audit(st, out);
	if (st->stateless) {
		tasks_result(st->h, st->u, out);
		stateless_result(out, st->what);
	}
	stream_unlink(st);
	stream_keep_answer(st, out);
	stream_finish(st, out);
	json_decref(out);
	stream_unref(st);
}

/*
 * An answer in the simple shape (upstream/answer.h) goes on as the server wrote it: link_done
 * would parse it, build {"jsonrpc":"2.0","id":<the client's id>,"result":<result>} and dump
 * that, and answer.c takes only answers whose result text is what that dump writes, so the
 * bytes here are the same, the id spliced in as the client sent it (st->idtext, its compact
 * dump, claimed on the session). The audit line gets what it would have: isError, found by
 * the scanner. Declined (parsed for link_done) where the answer is read or reshaped as JSON:
 * a 2026-07-28 stream (tasks_result, stateless_result, its HTTP status, parking) and a
 * batch's stream (no idtext: batch_collect reads st->final).
 */
static bool
link_done_text(const struct up_link *l, const struct up_answer *a)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":", mid[] = ",\"result\":";
	struct stream *st = link_stream(l);
	struct iovec v[5];

	if (st->stateless || st->idtext == NULL)
		return false;
	v[0] = (struct iovec){ (void *)head, sizeof(head) - 1 };
	v[1] = (struct iovec){ st->idtext, strlen(st->idtext) };
	v[2] = (struct iovec){ (void *)mid, sizeof(mid) - 1 };
	v[3] = (struct iovec){ (void *)a->result, a->result_len };
	v[4] = (struct iovec){ (void *)"}", 1 };
	relay_audit_status(st, a->is_error ? "tool_error" : "ok", 0);
	stream_unlink(st);
	stream_finish_text(st, v, 5);
	stream_unref(st);
	return true;
}

/* A server request for this client: it gets an id of the session's, the answer goes back. */
static json_t *
relay_request(struct stream *st, json_t *msg)
{
	json_t *id = json_object_get(msg, "id"), *out;
	json_int_t cid;

	if (!st->sse)
		return rpc_error(id, RPC_METHOD_NOT_FOUND, "mcp-gateway: the calling client "
				 "accepts only application/json responses, which cannot carry "
				 "server requests");
	if (st->stateless)
		return park_request(st, msg);
	cid = session_sreq_add(st->h, st->s, st->u, id);
	if (cid == 0)
		return rpc_error(id, RPC_METHOD_NOT_FOUND, "mcp-gateway: too many unanswered "
				 "server requests for this client");
	out = json_copy(msg);
	json_object_set_new(out, "id", json_integer(cid));
	stream_push(st, out, NULL);
	json_decref(out);
	return NULL;
}

static json_t *
link_relay(const struct up_link *l, json_t *msg)
{
	struct stream *st = link_stream(l);
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params"), *out, *p;

	if (json_object_get(msg, "id"))
		return relay_request(st, msg);
	if (strcmp(method, "notifications/progress") == 0) {
		/* Back to the token the client chose. */
		if (st->token == NULL)
			return NULL;
		out = json_copy(msg);
		p = json_copy(params);
		json_object_set(p, "progressToken", st->token);
		json_object_set_new(out, "params", p);
		stream_push(st, out, NULL);
		json_decref(out);
		return NULL;
	}
	if (strcmp(method, "notifications/message") == 0) {
		int lvl = rpc_log_level(json_string_value(json_object_get(params, "level")));

		if (lvl < session_log_level(st->h, st->s))
			return NULL;
	}
	stream_push(st, msg, NULL);
	return NULL;
}

/*
 * The request goes to its server; a refusal (it cannot start) is the stream's answer. False
 * when the server must be started first and may_defer lets the caller do that elsewhere.
 */
static bool
relay_submit(struct stream *st, const char *method, json_t *params, bool may_defer)
{
	char *err = NULL;
	int64_t id = 0;
	int rc;

	rc = upstream_submit(st->u, method, params, &st->link, &id, &err);
	if (rc == -EWOULDBLOCK && may_defer) {
		free(err);
		return false;
	}
	if (rc == 0) {
		stream_set_upid(st, id);
	} else {
		json_t *e;

		/* The link's reference: upstream_submit() did not take it. */
		if (stream_unlink(st))
			stream_unref(st);
		e = stream_error(st, err ? err : "call failed");
		relay_audit(st, e);
		stream_finish(st, e);
		json_decref(e);
	}
	free(err);
	return true;
}

/* A request for a server that must be started first, off the loop (see relay_forward). */
struct late_submit {
	struct stream *st;
	char *method;
	json_t *params;
};

static void *
late_submit_main(void *arg)
{
	struct late_submit *j = arg;
	struct http_server *h = j->st->h;

	relay_submit(j->st, j->method, j->params, false);
	stream_unref(j->st);
	free(j->method);
	json_decref(j->params);
	free(j);
	__atomic_sub_fetch(&h->late_submits, 1, __ATOMIC_RELEASE);
	return NULL;
}

void
relay_wait(struct http_server *h)
{
	struct timespec ts = {0, 10 * 1000000};

	/* Closing the servers failed their starts, so these end soon. */
	for (int i = 0; i < 1000 && __atomic_load_n(&h->late_submits, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ts, NULL);
}

/*
 * A server that is not running is started by the call that needs it, which waits for its
 * handshake: on the event loop's thread that would stall every client meanwhile (and the
 * loop reads the answers a start waits for), so such a call is submitted from a thread of
 * its own. False: it could not be.
 */
static bool
relay_submit_late(struct stream *st, const char *method, json_t *params)
{
	struct late_submit *j;
	pthread_attr_t attr;
	pthread_t th;
	bool ok;

	j = calloc(1, sizeof(*j));
	if (j == NULL || (j->method = strdup(method)) == NULL) {
		free(j);
		return false;
	}
	j->st = st;
	j->params = json_incref(params);
	stream_ref(st);
	__atomic_add_fetch(&st->h->late_submits, 1, __ATOMIC_RELAXED);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ok = pthread_create(&th, &attr, late_submit_main, j) == 0;
	pthread_attr_destroy(&attr);
	if (!ok) {
		__atomic_sub_fetch(&st->h->late_submits, 1, __ATOMIC_RELAXED);
		stream_unref(st);
		free(j->method);
		json_decref(j->params);
		free(j);
	}
	return ok;
}

void
relay_forward(struct stream *st, struct forward *f, int64_t timeout_ns)
{
	json_t *meta = json_object_get(f->params, "_meta");

	st->u = f->u;
	str_copy(st->what, sizeof(st->what), f->what ? f->what : f->method);
	st->token = json_incref(json_object_get(meta, "progressToken"));
	st->timeout_ns = timeout_ns;
	st->link.relay = link_relay;
	st->link.done = link_done;
	st->link.done_text = link_done_text;
	if (st->h->conf.audit && f->method && strcmp(f->method, "tools/call") == 0) {
		str_copy(st->audit_tool, sizeof(st->audit_tool),
			 json_string_value(json_object_get(f->params, "name")) ?: "");
		st->audit_args = json_incref(json_object_get(f->params, "arguments"));
		st->audit_t0 = time_mono_ns();
	}
	/* The call's time runs from here, a server's start included. */
	if (timeout_ns > 0)
		st->deadline = time_mono_ns() + timeout_ns;
	stream_ref(st);
	st->linked = true;
	if (!relay_submit(st, f->method, f->params, true) &&
	    !relay_submit_late(st, f->method, f->params))
		relay_submit(st, f->method, f->params, false);
}
