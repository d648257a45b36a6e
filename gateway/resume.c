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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_int.h"

#define RESUME_KEEP	(8u << 20)	/* sent bytes kept for replay before they are let go */
#define RESUME_RETRY_MS	1000

/* With h->lock held. */
static void
resumable_unlink_locked(struct http_server *h, struct stream *st)
{
	if (st->rprev == NULL)
		return;
	*st->rprev = st->rnext;
	if (st->rnext)
		st->rnext->rprev = st->rprev;
	st->rprev = NULL;
	st->rnext = NULL;
	if (st->detached)
		h->ndetached--;
}

void
resume_start(struct http_server *h, struct stream *st, bool priming)
{
	pthread_mutex_lock(&h->lock);
	st->no = ++st->s->post_seq;
	st->rnext = h->resumable;
	if (st->rnext)
		st->rnext->rprev = &st->rnext;
	st->rprev = &h->resumable;
	h->resumable = st;
	pthread_mutex_unlock(&h->lock);
	/* The list's reference: the stream outlives a connection that breaks. */
	stream_ref(st);
	pthread_mutex_lock(&st->lock);
	if (priming)
		sb_appendf(&st->out, "id: %u-0\nretry: %d\ndata: \n\n", st->no, RESUME_RETRY_MS);
	resume_mark_locked(st);
	pthread_mutex_unlock(&st->lock);
}

/* With st->lock held: an event ended at out.len; the next one gets seq + 1. */
void
resume_mark_locked(struct stream *st)
{
	if (st->nends == st->capends) {
		size_t cap = st->capends ? st->capends * 2 : 8;
		size_t *n = realloc(st->ends, cap * sizeof(*n));

		if (n == NULL) {
			/* Replay stops short of this event; delivery goes on. */
			return;
		}
		st->ends = n;
		st->capends = cap;
	}
	st->ends[st->nends++] = st->gone + st->out.len;
}

/* With st->lock held: what a reader has handed out need not stay, past a bound. */
bool
resume_keep_locked(struct stream *st)
{
	if (st->out.len < RESUME_KEEP)
		return true;
	st->gone += st->out.len;
	return false;
}

/* The stream leaves the list (its end was handed out): drops the list's reference. */
void
resume_drop(struct stream *st)
{
	struct http_server *h = st->h;
	bool listed;

	pthread_mutex_lock(&h->lock);
	listed = st->rprev != NULL;
	resumable_unlink_locked(h, st);
	pthread_mutex_unlock(&h->lock);
	if (listed)
		stream_unref(st);
}

/* The reader's connection broke before the end: wait for a resume. */
void
resume_detach(struct stream *st, int gen)
{
	struct http_server *h = st->h;
	bool current;

	pthread_mutex_lock(&h->lock);
	pthread_mutex_lock(&st->lock);
	current = st->gen == gen;
	pthread_mutex_unlock(&st->lock);
	if (current && st->rprev && !st->detached) {
		st->detached = time_mono_ns();
		h->ndetached++;
		pthread_cond_signal(&h->rcond);
	}
	pthread_mutex_unlock(&h->lock);
}

/*
 * GET with a Last-Event-ID of a POST stream: the stream, its reader moved to this connection
 * and its queue rewound to the event after that id (the reference passes to the caller), or
 * NULL for an id of no stream kept.
 */
struct stream *
resume_take(struct http_server *h, struct session *s, const char *last, int fd)
{
	unsigned no, seq;
	char tail;
	struct stream *st;

	if (sscanf(last, "%u-%u%c", &no, &seq, &tail) != 2)
		return NULL;
	pthread_mutex_lock(&h->lock);
	for (st = h->resumable; st; st = st->rnext)
		if (st->s == s && st->no == no)
			break;
	if (st) {
		bool ok;

		pthread_mutex_lock(&st->lock);
		ok = seq < st->nends && st->ends[seq] >= st->gone;
		if (ok) {
			st->off = st->ends[seq] - st->gone;
			st->gen++;
			st->fd = fd;
			st->refs++;
		}
		pthread_mutex_unlock(&st->lock);
		if (!ok)
			st = NULL;
		else if (st->detached) {
			st->detached = 0;
			h->ndetached--;
		}
	}
	pthread_mutex_unlock(&h->lock);
	if (st)
		stream_wake(st);
	return st;
}

/*
 * Streams nobody resumed within the window: the server is told to cancel (if the call still
 * runs) and the stream goes. Returns the delay until the next one is due, 0 for none.
 */
int64_t
resume_sweep(struct http_server *h)
{
	int64_t now = time_mono_ns(), next = 0;
	struct stream *due = NULL, *st, *n;

	pthread_mutex_lock(&h->lock);
	for (st = h->resumable; st; st = n) {
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
		resumable_unlink_locked(h, st);
		st->rnext = due;
		due = st;
	}
	pthread_mutex_unlock(&h->lock);
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
	struct stream *st;

	for (;;) {
		pthread_mutex_lock(&h->lock);
		st = h->resumable;
		if (st)
			resumable_unlink_locked(h, st);
		pthread_mutex_unlock(&h->lock);
		if (st == NULL)
			break;
		stream_abandon(st, "the gateway is stopping");
		stream_unref(st);
	}
}
