/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: messages that belong to no request: what upstreams send between calls, and
 * the gateway's own list changes. Kept per session for Last-Event-ID replay and sent on the
 * session's GET stream, or on a 2026-07-28 listener's subscriptions/listen stream.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "session/session.h"
#include "session/stream_int.h"
#include "upstream/upstream.h"
#include "wire/reply.h"
#include "wire/rpc.h"

/* Under h->lock (session_each): whether session s wants this event. */
static bool
event_wanted(struct session *s, const char *method, json_t *params)
{
	static const struct {
		const char *method;
		unsigned bit;
	} lists[] = {
		{"notifications/tools/list_changed", LISTEN_TOOLS},
		{"notifications/prompts/list_changed", LISTEN_PROMPTS},
		{"notifications/resources/list_changed", LISTEN_RESOURCES},
	};

	if (!s->initialized || s->closed)
		return false;
	/* Task ids mean something only to clients of the tasks extension, which listen. */
	if (strcmp(method, "notifications/tasks/status") == 0)
		return s->stateless && s->listen && s->tasks;
	if (s->stateless) {
		/* A listener gets only what it asked for, and no stray log messages. */
		if (!s->listen)
			return false;
		for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
			if (strcmp(method, lists[i].method) == 0)
				return (s->listen & lists[i].bit) != 0;
		if (strcmp(method, "notifications/resources/updated") != 0)
			return false;
	}
	if (strcmp(method, "notifications/resources/updated") == 0) {
		const char *uri = json_string_value(json_object_get(params, "uri"));

		return uri && json_object_get(s->subs, uri) != NULL;
	}
	if (strcmp(method, "notifications/message") == 0)
		return rpc_log_level(json_string_value(json_object_get(params, "level"))) >=
		       s->log_level;
	return true;
}

void
events_roots_changed(struct http_server *h, struct session *s)
{
	session_roots_changed(h, s);
	for (size_t i = 0; i < h->conf.nups; i++)
		upstream_roots_changed(h->conf.ups[i]);
}

struct broadcast {
	json_t *msg;
	const char *method;
	json_t *params;
	char *js;
};

/* Under h->lock (session_each): the message to s, if it wants it. */
static void
broadcast_one(struct session *s, void *arg)
{
	struct broadcast *b = arg;
	char evid[32];

	if (!event_wanted(s, b->method, b->params))
		return;
	if (s->stateless) {
		/* Each notification names the subscription it belongs to. */
		json_t *out = json_deep_copy(b->msg), *p;

		p = json_object_get(out, "params");
		if (!json_is_object(p)) {
			p = json_object();
			json_object_set_new(out, "params", p);
		}
		if (!json_is_object(json_object_get(p, "_meta")))
			json_object_set_new(p, "_meta", json_object());
		json_object_set(json_object_get(p, "_meta"), META_SUB_ID, s->listen_id);
		if (s->get)
			stream_push(s->get, out, NULL);
		json_decref(out);
		return;
	}
	snprintf(evid, sizeof(evid), "%llu", (unsigned long long)++s->event_seq);
	/* Kept for a client that reconnects with Last-Event-ID. */
	if (s->events == NULL)
		s->events = json_array();
	json_array_append_new(s->events, json_pack("[s,s]", evid, b->js));
	if (json_array_size(s->events) > EVENT_KEEP)
		json_array_remove(s->events, 0);
	if (s->get)
		stream_push(s->get, b->msg, evid);
}

void
events_broadcast(struct http_server *h, json_t *msg)
{
	struct broadcast b = {
		.msg = msg,
		.method = json_string_value(json_object_get(msg, "method")),
		.params = json_object_get(msg, "params"),
		.js = json_dumps(msg, JSON_COMPACT),
	};

	if (b.js && b.method)
		session_each(h, broadcast_one, &b);
	free(b.js);
}

/* Under h->lock (session_attach): the events after last, in order, onto st. */
static void
replay(struct session *s, struct stream *st, void *arg)
{
	unsigned long long after = strtoull(arg, NULL, 10);
	size_t i;
	json_t *e;

	json_array_foreach(s->events, i, e) {
		const char *id = json_string_value(json_array_get(e, 0));
		char *ev;

		if (strtoull(id, NULL, 10) <= after)
			continue;
		ev = str_printf("id: %s\nevent: message\ndata: %s\n\n", id,
				json_string_value(json_array_get(e, 1)));
		if (ev)
			stream_append(st, ev);
		free(ev);
	}
}

enum hd_result
events_get(struct http_server *h, struct hd_conn *c, struct session *s,
	   const char *last_event_id, int fd)
{
	struct stream *st;

	if (last_event_id && strchr(last_event_id, '-')) {
		/* An event of a POST stream: that stream goes on here (resume.c). */
		st = resume_take(h, s, last_event_id, fd);
		if (st)
			return stream_reply(c, st, NULL);
		return reply_text(c, HTTP_BAD_REQUEST, "Bad Request: Last-Event-ID names "
				  "no stream that is kept\n");
	}
	st = session_stream_new(h, s, NULL, NULL, true, fd);
	if (st == NULL)
		return HD_NO;
	st->get = true;
	/* How long a client should wait before it reconnects, and a first byte to flush. */
	stream_append(st, "retry: 3000\n\n");
	session_attach(h, s, st, last_event_id ? replay : NULL, (void *)last_event_id);
	return stream_reply(c, st, NULL);
}

enum hd_result
events_listen(struct http_server *h, struct hd_conn *c, struct session *s,
	      json_t *msg, int fd)
{
	json_t *id = json_object_get(msg, "id");
	json_t *want = json_object_get(json_object_get(msg, "params"), "notifications");
	json_t *uris = json_object_get(want, "resourceSubscriptions"), *agreed, *ack, *u;
	struct stream *st;
	size_t i;

	s->listen = LISTEN_ON;
	if (json_is_true(json_object_get(want, "toolsListChanged")))
		s->listen |= LISTEN_TOOLS;
	if (json_is_true(json_object_get(want, "promptsListChanged")))
		s->listen |= LISTEN_PROMPTS;
	if (json_is_true(json_object_get(want, "resourcesListChanged")))
		s->listen |= LISTEN_RESOURCES;
	s->listen_id = json_incref(id);
	s->subs = json_object();
	json_array_foreach(uris, i, u)
		if (json_is_string(u))
			json_object_set_new(s->subs, json_string_value(u), json_true());
	st = session_stream_new(h, s, NULL, NULL, true, fd);
	if (st == NULL)
		return HD_NO;
	stream_set_id(st, id);
	/* What is honoured: all of it (resource updates come from the owning servers). */
	agreed = json_is_object(want) ? json_deep_copy(want) : json_object();
	ack = json_pack("{s:s,s:s,s:{s:o,s:{s:O}}}", "jsonrpc", "2.0", "method",
			"notifications/subscriptions/acknowledged", "params", "notifications",
			agreed, "_meta", META_SUB_ID, id);
	stream_push(st, ack, NULL);
	json_decref(ack);
	session_attach(h, s, st, NULL, NULL);
	if (session_insert(h, s) < 0) {
		stream_end(st);
		stream_unref(st);
		return HD_NO;
	}
	return stream_reply(c, st, NULL);
}

/* Under h->lock (session_each): a listen stream ends with the listen request's result. */
static void
close_one(struct session *s, void *arg)
{
	json_t *res;

	(void)arg;
	if (s->get == NULL)
		return;
	if (!s->listen) {
		stream_end(s->get);
		return;
	}
	res = json_pack("{s:s,s:O,s:{s:s,s:{s:O}}}", "jsonrpc", "2.0", "id", s->listen_id,
			"result", "resultType", "complete", "_meta", META_SUB_ID, s->listen_id);
	stream_finish(s->get, res);
	json_decref(res);
}

void
events_close_all(struct http_server *h)
{
	session_each(h, close_one, NULL);
}
