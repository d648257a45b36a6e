/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: MCP sessions. A session is created by initialize, named by a random id,
 * referenced by every request in flight on it and ended by DELETE or an hour of idleness.
 * All of it is guarded by h->lock.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

struct session *
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

void
session_unref_locked(struct session *s)
{
	struct inflight *r;

	if (--s->refs > 0)
		return;
	while ((r = s->reqs) != NULL) {
		s->reqs = r->next;
		free(r->idtext);
		free(r);
	}
	sreqs_free_locked(s);
	json_decref(s->events);
	json_decref(s->subs);
	json_decref(s->listen_id);
	free(s);
}

/* With h->lock held: the session leaves the table; its GET stream ends. */
static void
session_drop_locked(struct http_server *h, struct session **pp)
{
	struct session *s = *pp;

	*pp = s->next;
	s->closed = true;
	h->nsessions--;
	if (s->get)
		stream_end(s->get);
	session_unref_locked(s);
}

void
session_unlist_locked(struct http_server *h, struct session *s)
{
	struct session **pp;

	for (pp = &h->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			s->closed = true;
			h->nsessions--;
			session_unref_locked(s);
			return;
		}
	}
}

/* Sessions idle past the limit go; one with a request in flight is never idle. */
void
sessions_expire_locked(struct http_server *h)
{
	int64_t now = time_mono_ns();
	struct session **pp = &h->sessions;

	while (*pp) {
		struct session *s = *pp;

		if (s->inflight == 0 && now - s->last_used > h->conf.session_idle_ns) {
			session_drop_locked(h, pp);
			continue;
		}
		pp = &s->next;
	}
}

struct session *
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

void
session_put(struct http_server *h, struct session *s)
{
	pthread_mutex_lock(&h->lock);
	s->inflight--;
	s->last_used = time_mono_ns();
	session_unref_locked(s);
	pthread_mutex_unlock(&h->lock);
}

int
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

bool
session_remove(struct http_server *h, const char *id)
{
	struct session **pp;
	bool found = false;

	pthread_mutex_lock(&h->lock);
	for (pp = &h->sessions; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->id, id) == 0) {
			session_drop_locked(h, pp);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return found;
}

/* Registers a request id as in flight; false when the same id is already running. */
bool
session_id_claim(struct http_server *h, struct session *s, const char *idtext)
{
	struct inflight *r;
	bool ok = true;

	pthread_mutex_lock(&h->lock);
	for (r = s->reqs; r; r = r->next)
		if (strcmp(r->idtext, idtext) == 0)
			ok = false;
	if (ok) {
		r = calloc(1, sizeof(*r));
		if (r)
			r->idtext = strdup(idtext);
		if (r && r->idtext) {
			r->next = s->reqs;
			s->reqs = r;
		} else {
			free(r);
			ok = false;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return ok;
}

void
session_id_release(struct http_server *h, struct session *s, const char *idtext)
{
	struct inflight **pp, *r;

	pthread_mutex_lock(&h->lock);
	for (pp = &s->reqs; (r = *pp) != NULL; pp = &r->next) {
		if (strcmp(r->idtext, idtext) == 0) {
			*pp = r->next;
			free(r->idtext);
			free(r);
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
}

/* A client's notifications/cancelled: the request's upstream hears it with its own id. */
void
session_cancel(struct http_server *h, struct session *s, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	const char *why = json_string_value(json_object_get(params, "reason"));
	char *idtext = rid ? json_dumps(rid, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	struct stream *st = NULL;
	struct inflight *r;

	if (idtext == NULL)
		return;
	pthread_mutex_lock(&h->lock);
	for (r = s->reqs; r; r = r->next)
		if (strcmp(r->idtext, idtext) == 0 && r->st)
			st = stream_hold(r->st);
	pthread_mutex_unlock(&h->lock);
	free(idtext);
	if (st == NULL)
		return;
	stream_cancel(st, why ? why : "cancelled by the client");
	stream_unref(st);
}

