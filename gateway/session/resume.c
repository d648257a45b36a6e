/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: resumable POST streams (streamable HTTP, "Resumability and Redelivery").
 * Every event of a session's POST SSE stream carries an id "<stream>-<event>"; sessions of
 * 2025-11-25 and later get a priming event (an id, a retry hint, empty data) first. The
 * stream's text stays queued until its last byte is handed out, so a client whose connection
 * broke can GET /mcp with Last-Event-ID and read on from the event after it, on the new
 * connection. A disconnection is not a cancellation (the specification says so): the call
 * goes on for --resume-window, and only a stream nobody resumed by then is cancelled at the
 * server. 2026-07-28 requests have no session to resume on: their streams are not resumable.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "session/session.h"
#include "session/stream_int.h"

#define RESUME_RETRY_MS	1000

/* The streams a client may resume, under a lock of this file's alone. */
struct resumable {
	pthread_mutex_t lock;
	struct stream *list;
	size_t ndetached;	/* of those, the ones waiting for their client */
};

static void stream_drained(struct stream *st);
static void stream_detached(struct stream *st, int gen);

static const struct stream_hooks hooks = {
	.drained = stream_drained,
	.detached = stream_detached,
};

int
resume_init(struct http_server *h)
{
	h->resumable = calloc(1, sizeof(*h->resumable));
	if (h->resumable == NULL)
		return -ENOMEM;
	pthread_mutex_init(&h->resumable->lock, NULL);
	return 0;
}

/* With the list's lock held. */
static void
unlink_locked(struct resumable *rs, struct stream *st)
{
	if (st->rprev == NULL)
		return;
	*st->rprev = st->rnext;
	if (st->rnext)
		st->rnext->rprev = st->rprev;
	st->rprev = NULL;
	st->rnext = NULL;
	if (st->detached)
		rs->ndetached--;
}

void
resume_start(struct http_server *h, struct stream *st, bool priming)
{
	struct resumable *rs = h->resumable;
	unsigned no;

	no = session_post_number(h, st->s);
	/* The list's reference: the stream outlives a connection that breaks. */
	stream_ref(st);
	/* Numbered before it is listed, so that resume_take never sees it half made. */
	stream_resumable(st, no, priming ? RESUME_RETRY_MS : 0, &hooks);
	pthread_mutex_lock(&rs->lock);
	st->rnext = rs->list;
	if (st->rnext)
		st->rnext->rprev = &st->rnext;
	st->rprev = &rs->list;
	rs->list = st;
	pthread_mutex_unlock(&rs->lock);
}

/* The stream leaves the list (its end was handed out): drops the list's reference. */
static void
stream_drained(struct stream *st)
{
	struct resumable *rs = st->h->resumable;
	bool listed;

	pthread_mutex_lock(&rs->lock);
	listed = st->rprev != NULL;
	unlink_locked(rs, st);
	pthread_mutex_unlock(&rs->lock);
	if (listed)
		stream_unref(st);
}

/* The reader's connection broke before the end: wait for a resume. */
static void
stream_detached(struct stream *st, int gen)
{
	struct resumable *rs = st->h->resumable;
	bool rang = false;

	pthread_mutex_lock(&rs->lock);
	if (stream_gen(st) == gen && st->rprev && !st->detached) {
		st->detached = time_mono_ns();
		rs->ndetached++;
		rang = true;
	}
	pthread_mutex_unlock(&rs->lock);
	/* The housekeeping tick cancels it once --resume-window has passed. */
	if (rang)
		bell_ring(&st->h->tick);
}

/*
 * GET with a Last-Event-ID of a POST stream: the stream, its reader moved to this connection
 * and its queue rewound to the event after that id (the reference passes to the caller), or
 * NULL for an id of no stream kept.
 */
struct stream *
resume_take(struct http_server *h, struct session *s, const char *last, int fd)
{
	struct resumable *rs = h->resumable;
	unsigned no, seq;
	char tail;
	struct stream *st;

	if (sscanf(last, "%u-%u%c", &no, &seq, &tail) != 2)
		return NULL;
	pthread_mutex_lock(&rs->lock);
	for (st = rs->list; st; st = st->rnext)
		if (st->s == s && st->no == no)
			break;
	if (st && !stream_rewind(st, seq, fd))
		st = NULL;
	else if (st && st->detached) {
		st->detached = 0;
		rs->ndetached--;
	}
	pthread_mutex_unlock(&rs->lock);
	return st;
}

/*
 * Streams nobody resumed within the window: the server is told to cancel (if the call still
 * runs) and the stream goes. Returns the delay until the next one is due, 0 for none.
 */
int64_t
resume_sweep(struct http_server *h)
{
	struct resumable *rs = h->resumable;
	int64_t now = time_mono_ns(), next = 0;
	struct stream *due = NULL, *st, *n;

	pthread_mutex_lock(&rs->lock);
	for (st = rs->ndetached ? rs->list : NULL; st; st = n) {
		int64_t left;

		n = st->rnext;
		if (!st->detached)
			continue;
		left = st->detached + h->conf.resume_ns - now;
		if (left > 0) {
			if (next == 0 || left < next)
				next = left;
			continue;
		}
		unlink_locked(rs, st);
		st->rnext = due;
		due = st;
	}
	pthread_mutex_unlock(&rs->lock);
	for (st = due; st; st = n) {
		n = st->rnext;
		st->rnext = NULL;
		stream_abandon(st, "the client closed the connection and did not resume");
		stream_unref(st);
	}
	return next;
}

/* At shutdown, after the daemon stopped: every kept stream goes. */
void
resume_free_all(struct http_server *h)
{
	struct resumable *rs = h->resumable;
	struct stream *st;

	if (rs == NULL)
		return;
	for (;;) {
		pthread_mutex_lock(&rs->lock);
		st = rs->list;
		if (st)
			unlink_locked(rs, st);
		pthread_mutex_unlock(&rs->lock);
		if (st == NULL)
			break;
		stream_abandon(st, "the gateway is stopping");
		stream_unref(st);
	}
	pthread_mutex_destroy(&rs->lock);
	free(rs);
	h->resumable = NULL;
}
