/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: messages that belong to no request: kept per session for Last-Event-ID
 * replay and sent on the session's GET stream.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_int.h"

/* With h->lock held: whether session s wants this event. */
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
		return mcp_log_level(json_string_value(json_object_get(params, "level"))) >=
		       s->log_level;
	return true;
}

#define ROOTS_ASK_NS	(60LL * 1000000000LL)	/* a re-list this long after a change */

void
roots_changed(struct http_server *h, struct session *s)
{
	pthread_mutex_lock(&h->lock);
	s->roots_changed = time_mono_ns();
	pthread_mutex_unlock(&h->lock);
	for (size_t i = 0; i < h->conf.nups; i++)
		upstream_roots_changed(h->conf.ups[i]);
}

/*
 * A server's roots/list with no call in flight, after a client said its roots changed: the
 * latest such client with a GET stream is asked there, and its answer goes back as for any
 * server request. False when there is none (the upstream answers with no roots).
 */
static bool
roots_ask(struct http_server *h, struct upstream *u, json_t *req)
{
	int64_t now = time_mono_ns();
	struct session *s, *best = NULL;
	struct sreq *r = NULL;
	json_t *out;

	pthread_mutex_lock(&h->lock);
	for (s = h->sessions; s; s = s->next)
		if (s->get && !s->stateless && !s->closed && (s->caps & UP_CAP_ROOTS) &&
		    s->roots_changed && now - s->roots_changed < ROOTS_ASK_NS &&
		    (best == NULL || s->roots_changed > best->roots_changed))
			best = s;
	if (best)
		r = sreq_add_locked(best, u, json_object_get(req, "id"));
	if (r) {
		out = json_copy(req);
		json_object_set_new(out, "id", json_integer(r->cid));
		stream_push(best->get, out, NULL);
		json_decref(out);
	}
	pthread_mutex_unlock(&h->lock);
	return r != NULL;
}

bool
relay_event(void *ctx, struct upstream *u, json_t *msg)
{
	struct http_server *h = ctx;
	const char *method = json_string_value(json_object_get(msg, "method"));

	if (method == NULL)
		return false;
	if (json_object_get(msg, "id"))
		return strcmp(method, "roots/list") == 0 && roots_ask(h, u, msg);
	/* The merged lists change, not the server's: the gateway lists it and tells. */
	if (strcmp(method, "notifications/tools/list_changed") == 0 ||
	    strcmp(method, "notifications/prompts/list_changed") == 0 ||
	    strcmp(method, "notifications/resources/list_changed") == 0) {
		pthread_mutex_lock(&h->lock);
		lists_stale_locked(h, u);
		pthread_mutex_unlock(&h->lock);
		return false;
	}
	if (strcmp(method, "notifications/tasks/status") == 0)
		tasks_notify(h, u, msg);
	else
		relay_broadcast(h, msg);
	return false;
}

void
relay_broadcast(struct http_server *h, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");
	struct session *s;
	char *js = json_dumps(msg, JSON_COMPACT);

	if (js == NULL || method == NULL) {
		free(js);
		return;
	}
	pthread_mutex_lock(&h->lock);
	for (s = h->sessions; s; s = s->next) {
		char evid[32];

		if (!event_wanted(s, method, params))
			continue;
		if (s->stateless) {
			/* Each notification names the subscription it belongs to. */
			json_t *out = json_deep_copy(msg), *p;

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
			continue;
		}
		snprintf(evid, sizeof(evid), "%llu", (unsigned long long)++s->event_seq);
		/* Kept for a client that reconnects with Last-Event-ID. */
		if (s->events == NULL)
			s->events = json_array();
		json_array_append_new(s->events, json_pack("[s,s]", evid, js));
		if (json_array_size(s->events) > EVENT_KEEP)
			json_array_remove(s->events, 0);
		if (s->get)
			stream_push(s->get, msg, evid);
	}
	pthread_mutex_unlock(&h->lock);
	free(js);
}

/* With h->lock held: the events after last_event_id, in order, onto st. */
static void
events_replay_locked(struct session *s, struct stream *st, const char *last)
{
	unsigned long long after = strtoull(last, NULL, 10);
	size_t i;
	json_t *e;

	pthread_mutex_lock(&st->lock);
	json_array_foreach(s->events, i, e) {
		const char *id = json_string_value(json_array_get(e, 0));

		if (strtoull(id, NULL, 10) <= after)
			continue;
		sb_appendf(&st->out, "id: %s\nevent: message\ndata: %s\n\n", id,
			   json_string_value(json_array_get(e, 1)));
	}
	pthread_mutex_unlock(&st->lock);
}

enum MHD_Result
stream_get(struct http_server *h, struct MHD_Connection *c, struct session *s,
	   const char *last_event_id)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct stream *st;

	if (last_event_id && strchr(last_event_id, '-')) {
		/* An event of a POST stream: that stream goes on here (resume.c). */
		st = resume_take(h, s, last_event_id, ci ? ci->connect_fd : -1);
		if (st)
			return stream_reply(c, st, NULL);
		return http_reply_text(c, MHD_HTTP_BAD_REQUEST, "Bad Request: Last-Event-ID names "
				       "no stream that is kept\n");
	}
	st = stream_new(h, s, NULL, true, ci ? ci->connect_fd : -1);
	if (st == NULL)
		return MHD_NO;
	st->get = true;
	/* How long a client should wait before it reconnects, and a first byte to flush. */
	sb_appends(&st->out, "retry: 3000\n\n");
	pthread_mutex_lock(&h->lock);
	/*
	 * A client reconnects when it thinks its stream broke, possibly before we noticed:
	 * the new stream takes over and the old one ends.
	 */
	if (s->get)
		stream_end(s->get);
	s->get = st;
	if (last_event_id)
		events_replay_locked(s, st, last_event_id);
	pthread_mutex_unlock(&h->lock);
	return stream_reply(c, st, NULL);
}

enum MHD_Result
listen_start(struct http_server *h, struct MHD_Connection *c, struct session *s, json_t *msg,
	     int fd)
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
	st = stream_new(h, s, NULL, true, fd);
	if (st == NULL)
		return MHD_NO;
	stream_set_id(st, id);
	/* What is honoured: all of it (resource updates come from the owning servers). */
	agreed = json_is_object(want) ? json_deep_copy(want) : json_object();
	ack = json_pack("{s:s,s:s,s:{s:o,s:{s:O}}}", "jsonrpc", "2.0", "method",
			"notifications/subscriptions/acknowledged", "params", "notifications",
			agreed, "_meta", META_SUB_ID, id);
	stream_push(st, ack, NULL);
	json_decref(ack);
	pthread_mutex_lock(&h->lock);
	s->get = st;
	pthread_mutex_unlock(&h->lock);
	if (session_insert(h, s) < 0) {
		stream_end(st);
		stream_unref(st);
		return MHD_NO;
	}
	return stream_reply(c, st, NULL);
}

void
streams_close_locked(struct http_server *h)
{
	struct session *s;

	for (s = h->sessions; s; s = s->next) {
		json_t *res;

		if (s->get == NULL)
			continue;
		if (!s->listen) {
			stream_end(s->get);
			continue;
		}
		/* A listen stream ends with the listen request's result. */
		res = json_pack("{s:s,s:O,s:{s:s,s:{s:O}}}", "jsonrpc", "2.0", "id", s->listen_id,
				"result", "resultType", "complete", "_meta", META_SUB_ID,
				s->listen_id);
		stream_finish(s->get, res);
		json_decref(res);
	}
}

