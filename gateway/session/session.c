/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: MCP sessions, the core under every request. A session is created by
 * initialize (or is a one-request session of a 2026-07-28 client), named by a random id,
 * referenced by every request and stream in flight on it, and ended by DELETE or idleness.
 * All of it is guarded by h->lock, which this file alone takes: the files above call these
 * functions, or hand in a function that runs under it (session_each, session_attach).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/files.h"
#include "session/session.h"
#include "session/stream_int.h"
#include "upstream/upstream.h"
#include "wire/rpc.h"

#define ROOTS_ASK_NS	(60LL * 1000000000LL)	/* a re-list this long after a change */

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
	/* The reference of the request that creates it, counted in flight until session_put(). */
	s->refs = 1;
	s->inflight = 1;
	strcpy(s->version, "2025-03-26");
	s->last_used = time_mono_ns();
	return s;
}

void
session_sreqs_free(struct sreq *list)
{
	struct sreq *r;

	while ((r = list) != NULL) {
		list = r->next;
		json_decref(r->upid);
		json_decref(r->ask);
		free(r);
	}
}

/*
 * Its bucket: ids are ours and random (25 bits in their first five characters, taken as
 * their base32 values so that every bucket is as likely), so a client's id, whatever it is,
 * can only pick a bucket, never fill one.
 */
static struct session **
bucket(struct http_server *h, const char *id)
{
	unsigned v = 0;

	for (int i = 0; i < 5 && id[i]; i++) {
		unsigned char c = (unsigned char)id[i];

		v = v * 32 + ((c >= 'A' ? c - 'A' : c - '2' + 26) & 31);
	}
	return &h->by_id[v % SESSION_BUCKETS];
}

/* With h->lock held: the session of that id, or NULL. */
static struct session *
find_locked(struct http_server *h, const char *id)
{
	struct session *s;

	for (s = *bucket(h, id); s && strcmp(s->id, id) != 0; s = s->hnext)
		;
	return s;
}

static void
unbucket_locked(struct http_server *h, struct session *s)
{
	struct session **pp;

	for (pp = bucket(h, s->id); *pp; pp = &(*pp)->hnext) {
		if (*pp == s) {
			*pp = s->hnext;
			return;
		}
	}
}

static void
unref_locked(struct session *s)
{
	struct inflight *r;

	if (--s->refs > 0)
		return;
	while ((r = s->reqs) != NULL) {
		s->reqs = r->next;
		free(r->idtext);
		free(r);
	}
	session_sreqs_free(s->sreqs);
	json_decref(s->events);
	json_decref(s->subs);
	json_decref(s->listen_id);
	free(s);
}

/* With h->lock held: the session leaves the table, if it is in it; false if not. */
static bool
unlink_locked(struct http_server *h, struct session *s)
{
	if (s->pprev == NULL)
		return false;
	*s->pprev = s->next;
	if (s->next)
		s->next->pprev = s->pprev;
	s->pprev = NULL;
	unbucket_locked(h, s);
	s->closed = true;
	h->nsessions--;
	return true;
}

/* With h->lock held: the session leaves the table, with the table's reference. */
static void
unlist_locked(struct http_server *h, struct session *s)
{
	if (unlink_locked(h, s))
		unref_locked(s);
}

/* With h->lock held: the same, and its GET stream ends. */
static void
drop_locked(struct http_server *h, struct session *s)
{
	if (!unlink_locked(h, s))
		return;
	if (s->get)
		stream_end(s->get);
	unref_locked(s);
}

/* Sessions idle past the limit go; one with a request in flight is never idle. */
static void
expire_locked(struct http_server *h)
{
	int64_t now = time_mono_ns(), next = now + h->conf.session_idle_ns;
	struct session *s, *n;

	/*
	 * Every request looks here: the walk is only taken once the earliest expiry is due.
	 * A session in use is not counted: it is given a later expiry when it is put back.
	 */
	if (now < h->expire_at)
		return;
	for (s = h->sessions; s; s = n) {
		n = s->next;
		if (s->inflight == 0 && now - s->last_used > h->conf.session_idle_ns) {
			drop_locked(h, s);
			continue;
		}
		if (s->inflight == 0 && s->last_used + h->conf.session_idle_ns < next)
			next = s->last_used + h->conf.session_idle_ns;
	}
	h->expire_at = next;
}

struct session *
session_get(struct http_server *h, const char *id)
{
	struct session *s;

	pthread_mutex_lock(&h->lock);
	expire_locked(h);
	s = find_locked(h, id);
	if (s) {
		s->refs++;
		s->inflight++;
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
	unref_locked(s);
	pthread_mutex_unlock(&h->lock);
}

int
session_insert(struct http_server *h, struct session *s)
{
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	expire_locked(h);
	if (h->nsessions >= h->conf.max_sessions) {
		rc = -ENOSPC;
	} else {
		s->refs++;
		s->next = h->sessions;
		if (s->next)
			s->next->pprev = &s->next;
		s->pprev = &h->sessions;
		h->sessions = s;
		s->hnext = *bucket(h, s->id);
		*bucket(h, s->id) = s;
		h->nsessions++;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

bool
session_remove(struct http_server *h, const char *id)
{
	struct session *s;

	pthread_mutex_lock(&h->lock);
	s = find_locked(h, id);
	if (s)
		drop_locked(h, s);
	pthread_mutex_unlock(&h->lock);
	return s != NULL;
}

void
session_init(struct http_server *h)
{
	pthread_mutex_init(&h->lock, NULL);
}

void
session_free_all(struct http_server *h)
{
	struct session *s;

	pthread_mutex_lock(&h->lock);
	while ((s = h->sessions) != NULL) {
		h->sessions = s->next;
		unref_locked(s);
	}
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_destroy(&h->lock);
}

void
session_each(struct http_server *h, void (*fn)(struct session *s, void *arg), void *arg)
{
	struct session *s;

	pthread_mutex_lock(&h->lock);
	for (s = h->sessions; s; s = s->next)
		fn(s, arg);
	pthread_mutex_unlock(&h->lock);
}

/* ---- requests in flight ------------------------------------------------------------------- */

/* With h->lock held: the request id leaves the session's in-flight list. */
static void
id_release_locked(struct session *s, const char *idtext)
{
	struct inflight **pp, *r;

	for (pp = &s->reqs; (r = *pp) != NULL; pp = &r->next) {
		if (strcmp(r->idtext, idtext) == 0) {
			*pp = r->next;
			free(r->idtext);
			free(r);
			return;
		}
	}
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
	pthread_mutex_lock(&h->lock);
	id_release_locked(s, idtext);
	pthread_mutex_unlock(&h->lock);
}

/* A client's notifications/cancelled: the request's upstream hears it with its own id. */
void
session_cancel(struct http_server *h, struct session *s, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	const char *why = json_string_value(json_object_get(params, "reason"));
	char *idtext = rid ? rpc_id_text(rid) : NULL;
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

/* ---- the session's streams ---------------------------------------------------------------- */

/* The stream's last reference went: what the session counted for it goes too. */
static void
stream_released(struct stream *st)
{
	struct http_server *h = st->h;

	pthread_mutex_lock(&h->lock);
	if (st->idtext)
		id_release_locked(st->s, st->idtext);
	if (st->s->get == st)
		st->s->get = NULL;
	if (st->s->listen && !st->s->closed)
		unlist_locked(h, st->s);
	st->s->inflight--;
	st->s->last_used = time_mono_ns();
	unref_locked(st->s);
	pthread_mutex_unlock(&h->lock);
}

struct stream *
session_stream_new(struct http_server *h, struct session *s, json_t *id, const char *idtext,
		   bool sse, int fd)
{
	struct stream *st = stream_new(h, s, id, sse, fd);

	if (st == NULL)
		return NULL;
	st->stateless = s->stateless;
	st->release = stream_released;
	pthread_mutex_lock(&h->lock);
	s->refs++;
	s->inflight++;
	st->link.caps = s->caps;
	if (idtext) {
		struct inflight *r;

		st->idtext = strdup(idtext);
		for (r = s->reqs; r && st->idtext; r = r->next)
			if (strcmp(r->idtext, st->idtext) == 0 && r->st == NULL)
				r->st = st;
	}
	pthread_mutex_unlock(&h->lock);
	return st;
}

void
session_attach(struct http_server *h, struct session *s, struct stream *st,
	       void (*fn)(struct session *s, struct stream *st, void *arg), void *arg)
{
	pthread_mutex_lock(&h->lock);
	/*
	 * A client reconnects when it thinks its stream broke, possibly before we noticed:
	 * the new stream takes over and the old one ends.
	 */
	if (s->get)
		stream_end(s->get);
	s->get = st;
	if (fn)
		fn(s, st, arg);
	pthread_mutex_unlock(&h->lock);
}

/* ---- what the session's client chose ------------------------------------------------------ */

int
session_log_level(struct http_server *h, struct session *s)
{
	int lvl;

	pthread_mutex_lock(&h->lock);
	lvl = s->log_level;
	pthread_mutex_unlock(&h->lock);
	return lvl;
}

void
session_set_log_level(struct http_server *h, struct session *s, int level)
{
	pthread_mutex_lock(&h->lock);
	s->log_level = level;
	pthread_mutex_unlock(&h->lock);
}

/* Updates go to the sessions that subscribed, on their GET streams. */
void
session_subscribe(struct http_server *h, struct session *s, const char *uri, bool on)
{
	pthread_mutex_lock(&h->lock);
	if (on) {
		if (s->subs == NULL)
			s->subs = json_object();
		json_object_set_new(s->subs, uri, json_true());
	} else {
		json_object_del(s->subs, uri);
	}
	pthread_mutex_unlock(&h->lock);
}

/* The number of a new resumable POST stream: the first half of its event ids. */
unsigned
session_post_number(struct http_server *h, struct session *s)
{
	unsigned no;

	pthread_mutex_lock(&h->lock);
	no = ++s->post_seq;
	pthread_mutex_unlock(&h->lock);
	return no;
}

void
session_roots_changed(struct http_server *h, struct session *s)
{
	pthread_mutex_lock(&h->lock);
	s->roots_changed = time_mono_ns();
	pthread_mutex_unlock(&h->lock);
}

/* ---- server requests ---------------------------------------------------------------------- */

/* With h->lock held: a server request s's client is to answer, under an id of the session's. */
static struct sreq *
sreq_add_locked(struct session *s, struct upstream *u, json_t *upid)
{
	struct sreq *r;

	if (s->nsreqs >= SREQ_MAX || (r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->cid = ++s->next_cid;
	r->u = u;
	r->upid = json_incref(upid);
	r->next = s->sreqs;
	s->sreqs = r;
	s->nsreqs++;
	return r;
}

json_int_t
session_sreq_add(struct http_server *h, struct session *s, struct upstream *u, json_t *upid)
{
	struct sreq *r;
	json_int_t cid = 0;

	pthread_mutex_lock(&h->lock);
	r = sreq_add_locked(s, u, upid);
	if (r)
		cid = r->cid;
	pthread_mutex_unlock(&h->lock);
	return cid;
}

int
session_sreq_answer(struct http_server *h, struct session *s, json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	struct sreq **pp, *r = NULL;

	if (!json_is_integer(id))
		return -ENOENT;
	pthread_mutex_lock(&h->lock);
	for (pp = &s->sreqs; *pp; pp = &(*pp)->next) {
		if ((*pp)->cid == json_integer_value(id)) {
			r = *pp;
			*pp = r->next;
			s->nsreqs--;
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
	if (r == NULL)
		return -ENOENT;
	upstream_respond(r->u, r->upid, json_object_get(msg, "result"),
			 json_is_object(json_object_get(msg, "error")) ?
			 json_object_get(msg, "error") : NULL);
	json_decref(r->upid);
	free(r);
	return 0;
}

/*
 * A server's roots/list with no call in flight, after a client said its roots changed: the
 * latest such client with a GET stream is asked there, and its answer goes back as for any
 * server request. False when there is none (the upstream answers with no roots).
 */
bool
session_roots_ask(struct http_server *h, struct upstream *u, json_t *req)
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
