/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the stream object (stream_int.h). The upstream's reader thread, or a
 * broadcast, queues what a request's answer carries (progress, log messages, the server's
 * own requests, finally the answer) and the client's connection thread hands that out as
 * SSE events, or, for a client that accepts only JSON, waits for the answer alone. The
 * connection thread also notices a client that goes away and a call that outlives
 * --call-timeout, and tells the server to cancel. Its lock is taken here only.
 */

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/str.h"
#include "session/session.h"
#include "session/stream_int.h"
#include "upstream/upstream.h"
#include "wire/reply.h"
#include "wire/rpc.h"

#define SSE_BLOCK	(64 * 1024)
#define RESUME_KEEP	(8u << 20)	/* sent bytes kept for replay before they are let go */

enum wait_result {
	WAIT_READY,
	WAIT_GONE,
	WAIT_TIMEOUT,
};

struct stream *
stream_new(struct http_server *h, struct session *s, json_t *id, bool sse, int fd)
{
	struct stream *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	st->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (st->efd < 0) {
		free(st);
		return NULL;
	}
	pthread_mutex_init(&st->lock, NULL);
	st->refs = 1;
	st->fd = fd;
	st->sse = sse;
	st->h = h;
	st->s = s;
	st->cid = json_incref(id);
	return st;
}

void
stream_wake(struct stream *st)
{
	uint64_t one = 1;
	ssize_t n = write(st->efd, &one, sizeof(one));

	(void)n;
}

/* With st->lock held: an event ended at out.len; the next one gets seq + 1. */
static void
mark_locked(struct stream *st)
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

/* With st->lock held: one SSE event onto the queue (SSE streams only). */
static void
push_locked(struct stream *st, json_t *msg, const char *evid)
{
	char *js;

	if (!st->sse)
		return;
	js = json_dumps(msg, JSON_COMPACT);
	if (js == NULL)
		return;
	if (evid)
		sb_appendf(&st->out, "id: %s\n", evid);
	else if (st->no)
		sb_appendf(&st->out, "id: %u-%zu\n", st->no, st->nends);
	sb_appends(&st->out, "event: message\ndata: ");
	sb_appends(&st->out, js);
	sb_appends(&st->out, "\n\n");
	free(js);
	if (st->no)
		mark_locked(st);
}

void
stream_push(struct stream *st, json_t *msg, const char *evid)
{
	pthread_mutex_lock(&st->lock);
	if (!st->done)
		push_locked(st, msg, evid);
	pthread_mutex_unlock(&st->lock);
	stream_wake(st);
}

void
stream_append(struct stream *st, const char *text)
{
	pthread_mutex_lock(&st->lock);
	sb_appends(&st->out, text);
	pthread_mutex_unlock(&st->lock);
}

void
stream_finish(struct stream *st, json_t *final)
{
	pthread_mutex_lock(&st->lock);
	if (!st->done) {
		if (final)
			push_locked(st, final, NULL);
		/* 2026-07-28 streams keep it too: its HTTP status may depend on it. */
		if ((!st->sse || st->stateless) && final)
			st->final = json_incref(final);
		st->done = true;
	}
	pthread_mutex_unlock(&st->lock);
	stream_wake(st);
}

void
stream_end(struct stream *st)
{
	stream_finish(st, NULL);
}

void
stream_set_id(struct stream *st, json_t *id)
{
	json_decref(st->cid);
	st->cid = json_incref(id);
}

void
stream_ref(struct stream *st)
{
	pthread_mutex_lock(&st->lock);
	st->refs++;
	pthread_mutex_unlock(&st->lock);
}

struct stream *
stream_hold(struct stream *st)
{
	stream_ref(st);
	return st;
}

void
stream_unref(struct stream *st)
{
	int left;

	pthread_mutex_lock(&st->lock);
	left = --st->refs;
	pthread_mutex_unlock(&st->lock);
	if (left > 0)
		return;
	if (st->release)
		st->release(st);
	close(st->efd);
	free(st->ends);
	sb_free(&st->out);
	json_decref(st->final);
	json_decref(st->held);
	json_decref(st->cid);
	json_decref(st->token);
	json_decref(st->audit_args);
	free(st->idtext);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

bool
stream_unlink(struct stream *st)
{
	bool was;

	pthread_mutex_lock(&st->lock);
	was = st->linked;
	st->linked = false;
	pthread_mutex_unlock(&st->lock);
	return was;
}

json_t *
stream_error(struct stream *st, const char *err)
{
	char *m = str_printf("mcp server \"%s\": %s", upstream_name(st->u), err);
	json_t *e = rpc_error(st->cid, RPC_INTERNAL, m ? m : err);

	free(m);
	return e;
}

/* ---- parked and resumable streams ----------------------------------------------------------- */

bool
stream_park(struct stream *st)
{
	bool parked = false;

	pthread_mutex_lock(&st->lock);
	/* A question that comes while parked waits for the next retry. */
	if (!st->parked && !st->done) {
		st->parked = true;
		parked = true;
	}
	pthread_mutex_unlock(&st->lock);
	return parked;
}

void
stream_keep_answer(struct stream *st, json_t *answer)
{
	pthread_mutex_lock(&st->lock);
	if (st->parked) {
		/* The retry that takes the stream over delivers it. */
		json_decref(st->held);
		st->held = json_incref(answer);
	}
	pthread_mutex_unlock(&st->lock);
}

bool
stream_retry(struct stream *st, json_t *id, int fd, bool sse, bool park)
{
	bool answered;

	pthread_mutex_lock(&st->lock);
	json_decref(st->cid);
	st->cid = json_incref(id);
	st->fd = fd;
	st->sse = sse;
	st->out.len = st->off = 0;
	json_decref(st->final);
	st->final = NULL;
	st->parked = false;
	answered = st->held != NULL;
	st->done = answered;
	if (answered) {
		json_object_set(st->held, "id", id);
		push_locked(st, st->held, NULL);
		st->final = st->held;
		st->held = NULL;
	} else if (park) {
		st->parked = true;
	}
	pthread_mutex_unlock(&st->lock);
	return answered;
}

void
stream_resumable(struct stream *st, unsigned no, int priming_retry_ms,
		 const struct stream_hooks *hooks)
{
	pthread_mutex_lock(&st->lock);
	st->no = no;
	st->hooks = hooks;
	if (priming_retry_ms)
		sb_appendf(&st->out, "id: %u-0\nretry: %d\ndata: \n\n", st->no, priming_retry_ms);
	mark_locked(st);
	pthread_mutex_unlock(&st->lock);
}

int
stream_gen(struct stream *st)
{
	int gen;

	pthread_mutex_lock(&st->lock);
	gen = st->gen;
	pthread_mutex_unlock(&st->lock);
	return gen;
}

bool
stream_rewind(struct stream *st, unsigned seq, int fd)
{
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
	if (ok)
		stream_wake(st);
	return ok;
}

/* With st->lock held: what a reader has handed out need not stay, past a bound. */
static bool
keep_locked(struct stream *st)
{
	if (st->out.len < RESUME_KEEP)
		return true;
	st->gone += st->out.len;
	return false;
}

/* ---- the client's side (its connection thread) ---------------------------------------------- */

/* Waits until something is queued, the client hangs up or deadline (0: none) passes. */
static enum wait_result
stream_wait_until(struct stream *st, int64_t deadline)
{
	struct pollfd pfd[2] = {
		{ .fd = st->efd, .events = POLLIN },
		{ .fd = st->fd, .events = POLLRDHUP },
	};
	uint64_t v;
	int timeout = -1, n;

	if (deadline) {
		int64_t left = deadline - time_mono_ns();

		if (left <= 0)
			return WAIT_TIMEOUT;
		timeout = (int)((left + 999999) / 1000000);
	}
	n = poll(pfd, st->fd >= 0 ? 2 : 1, timeout);
	if (n == 0)
		return WAIT_TIMEOUT;
	if (n < 0)
		return WAIT_READY;
	if (pfd[0].revents & POLLIN) {
		ssize_t r = read(st->efd, &v, sizeof(v));

		(void)r;
	}
	if (st->fd >= 0 && (pfd[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return WAIT_GONE;
	/* More bytes from the client (pipelining): not a hang-up; stop watching. */
	if (st->fd >= 0 && (pfd[1].revents & POLLIN))
		st->fd = -1;
	return WAIT_READY;
}

static enum wait_result
stream_wait(struct stream *st)
{
	return stream_wait_until(st, st->deadline);
}

/* No answer will be waited for: tell the server, if it still has the request. */
void
stream_abandon(struct stream *st, const char *reason)
{
	if (st->u == NULL || !upstream_cancel(st->u, st->upid, reason))
		return;
	if (stream_unlink(st))
		stream_unref(st);
}

void
stream_cancel(struct stream *st, const char *reason)
{
	if (st->u == NULL || !upstream_cancel(st->u, st->upid, reason))
		return;
	stream_finish(st, NULL);
	if (stream_unlink(st))
		stream_unref(st);
}

static void
stream_timeout(struct stream *st)
{
	char dur[32], *m;
	json_t *e;

	st->deadline = 0;
	if (st->u == NULL || !upstream_cancel(st->u, st->upid,
					       "the gateway's call timeout expired"))
		return;
	dur_format(st->timeout_ns, dur, sizeof(dur));
	log_warn("mcp server did not answer in time", "server=%s method=%s timeout=%s",
		 upstream_name(st->u), st->what, dur);
	m = str_printf("server %s did not answer %s within %s", upstream_name(st->u), st->what,
		       dur);
	e = stream_error(st, m ? m : "timeout");
	stream_finish(st, e);
	json_decref(e);
	free(m);
	if (stream_unlink(st))
		stream_unref(st);
}

/* One connection handing a stream out; a resumed stream gets a new one, the old one ends. */
struct reader {
	struct stream *st;
	int gen;
};

/* With st->lock held: n bytes of the queue into buf. */
static size_t
stream_take_locked(struct stream *st, char *buf, size_t max)
{
	size_t n = st->out.len - st->off;

	if (n > max)
		n = max;
	memcpy(buf, st->out.buf + st->off, n);
	st->off += n;
	/* A resumable stream keeps what went out, for a client that reconnects. */
	if (st->off == st->out.len && !(st->no && keep_locked(st)))
		st->off = st->out.len = 0;
	return n;
}

static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct reader *rd = cls;
	struct stream *st = rd->st;

	(void)pos;
	for (;;) {
		enum wait_result w;

		pthread_mutex_lock(&st->lock);
		if (rd->gen != st->gen) {
			pthread_mutex_unlock(&st->lock);
			/* A wake-up this reader took may have been the new reader's. */
			stream_wake(st);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (st->off < st->out.len) {
			/*
			 * The last bytes of a finished stream: it leaves the resumable list
			 * before they go out, as a client that has read its answer may at once
			 * ask for the stream again and must find it gone.
			 */
			bool last = st->done && st->out.len - st->off <= max;
			size_t n = stream_take_locked(st, buf, max);

			pthread_mutex_unlock(&st->lock);
			if (last && st->hooks)
				st->hooks->drained(st);
			return (ssize_t)n;
		}
		if (st->done) {
			pthread_mutex_unlock(&st->lock);
			if (st->hooks)
				st->hooks->drained(st);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		pthread_mutex_unlock(&st->lock);
		w = stream_wait(st);
		if (w == WAIT_GONE) {
			/* A resumable stream waits for its client instead (stream_free_cb). */
			if (!st->hooks)
				stream_abandon(st, "the client closed the connection");
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		if (w == WAIT_TIMEOUT)
			stream_timeout(st);
	}
}

static void
stream_free_cb(void *cls)
{
	struct reader *rd = cls;
	struct stream *st = rd->st;
	bool current, unsent;

	pthread_mutex_lock(&st->lock);
	current = rd->gen == st->gen;
	unsent = !st->done || st->off < st->out.len;
	pthread_mutex_unlock(&st->lock);
	if (current && unsent) {
		if (st->hooks)
			st->hooks->detached(st, rd->gen);
		else
			stream_abandon(st, "the client closed the connection");
	}
	free(rd);
	stream_unref(st);
}

/*
 * JSON-only clients and batches: the connection thread waits for the answer itself. Returns
 * it (NULL when cancelled or the client went away) and drops the caller's reference.
 */
json_t *
stream_wait_final(struct stream *st, bool *gone)
{
	json_t *final = NULL;
	bool done;

	if (gone)
		*gone = false;
	for (;;) {
		enum wait_result w;

		pthread_mutex_lock(&st->lock);
		done = st->done;
		if (done)
			final = json_incref(st->final);
		pthread_mutex_unlock(&st->lock);
		if (done)
			break;
		w = stream_wait(st);
		if (w == WAIT_GONE) {
			stream_abandon(st, "the client closed the connection");
			if (gone)
				*gone = true;
			break;
		}
		if (w == WAIT_TIMEOUT)
			stream_timeout(st);
	}
	stream_unref(st);
	return final;
}

static enum MHD_Result
reply_json_final(struct MHD_Connection *c, struct stream *st, const char *session_id)
{
	bool stateless = st->stateless, gone;
	json_t *final = stream_wait_final(st, &gone);
	char *js = final ? json_dumps(final, JSON_COMPACT) : NULL;
	unsigned int status = !js ? MHD_HTTP_ACCEPTED : stateless ? rpc_status(final) :
			      MHD_HTTP_OK;

	json_decref(final);
	if (gone) {
		free(js);
		return MHD_NO;
	}
	return reply_buffer(c, status, js ? "application/json" : NULL, js ? js : "",
			    js ? strlen(js) : 0, js != NULL, session_id ? "Mcp-Session-Id" : NULL,
			    session_id);
}

/*
 * 2026-07-28 refuses with HTTP statuses (400, 404) that an SSE stream cannot take back once
 * its 200 is out, so the status line waits for the first event: an answer that comes first
 * and is such a refusal goes out as JSON with its status. Refusals come at once; a call
 * that is still quiet after STATUS_WAIT_NS is streamed, so that no client's wait for
 * headers runs out on a long call. *gone: the client left meanwhile.
 */
#define STATUS_WAIT_NS	(2LL * 1000000000LL)

static bool
stream_refused(struct stream *st, bool *gone)
{
	int64_t until = time_mono_ns() + STATUS_WAIT_NS;

	*gone = false;
	for (;;) {
		bool ready, refused;
		enum wait_result w;

		pthread_mutex_lock(&st->lock);
		ready = st->done || st->out.len > st->off;
		refused = st->done && st->final && rpc_status(st->final) != MHD_HTTP_OK;
		pthread_mutex_unlock(&st->lock);
		if (ready) {
			/* The wait took the wake-up the SSE reader would have had. */
			stream_wake(st);
			return refused;
		}
		w = stream_wait_until(st, st->deadline && st->deadline < until ? st->deadline :
				      until);
		if (w == WAIT_GONE) {
			stream_abandon(st, "the client closed the connection");
			*gone = true;
			return false;
		}
		if (w != WAIT_TIMEOUT)
			continue;
		if (!st->deadline || time_mono_ns() < st->deadline)
			return false;
		stream_timeout(st);
	}
}

/* Queues the response that hands the stream out; the reference passes to it. */
enum MHD_Result
stream_reply(struct MHD_Connection *c, struct stream *st, const char *session_id)
{
	struct MHD_Response *r;
	struct reader *rd;
	bool gone = false;

	if (!st->sse || (st->stateless && stream_refused(st, &gone)))
		return reply_json_final(c, st, session_id);
	if (gone) {
		stream_unref(st);
		return MHD_NO;
	}
	rd = malloc(sizeof(*rd));
	r = rd ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, stream_read,
						   rd, stream_free_cb) : NULL;
	if (r == NULL) {
		free(rd);
		stream_abandon(st, "the gateway is out of memory");
		stream_unref(st);
		return MHD_NO;
	}
	rd->st = st;
	pthread_mutex_lock(&st->lock);
	rd->gen = st->gen;
	pthread_mutex_unlock(&st->lock);
	return reply_sse_stream(c, r, session_id);
}
