/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the stream object (stream_int.h). The upstream's reader thread, or a
 * broadcast, queues what a request's answer carries (progress, log messages, the server's
 * own requests, finally the answer) and the client's connection hands that out as SSE
 * events, or, for a client that accepts only JSON, the answer alone. A connection with
 * nothing to hand out is suspended (waiter.c) and woken by what is queued, so a few daemon
 * threads serve every connection. It also notices a client that goes away and a call that
 * outlives --call-timeout, and tells the server to cancel. Its lock is taken here only.
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/str.h"
#include "session/session.h"
#include "session/stream_int.h"
#include "upstream/upstream.h"
#include "wire/reply.h"
#include "wire/rpc.h"

#define SSE_BLOCK	(16 * 1024)
#define RESUME_KEEP	(8u << 20)	/* sent bytes kept for replay before they are let go */

struct stream *
stream_new(struct http_server *h, struct session *s, json_t *id, bool sse, int fd)
{
	struct stream *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	st->sleep.fd = -1;
	pthread_mutex_init(&st->lock, NULL);
	st->refs = 1;
	st->fd = fd;
	st->sse = sse;
	st->h = h;
	st->s = s;
	st->cid = json_incref(id);
	return st;
}

/* The connection asleep on the stream, if any, looks at it again. */
void
stream_wake(struct stream *st)
{
	waiter_wake(st->h->waiter, &st->sleep);
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

/*
 * With st->lock held: one SSE event onto the queue (SSE streams only), its data the message's
 * JSON text given in n pieces, which must hold no CR or LF (compact JSON holds none).
 */
static void
push_text_locked(struct stream *st, const struct iovec *text, int n, const char *evid)
{
	if (!st->sse)
		return;
	if (evid) {
		sb_appendf(&st->out, "id: %s\n", evid);
	} else if (st->no) {
		/* Every answer of a resumable stream: no printf for it. */
		sb_appends(&st->out, "id: ");
		sb_append_int(&st->out, st->no, 1);
		sb_append(&st->out, "-", 1);
		sb_append_int(&st->out, (long long)st->nends, 1);
		sb_append(&st->out, "\n", 1);
	}
	sb_appends(&st->out, "event: message\ndata: ");
	for (int i = 0; i < n; i++)
		sb_append(&st->out, text[i].iov_base, text[i].iov_len);
	sb_appends(&st->out, "\n\n");
	if (st->no)
		mark_locked(st);
}

/* With st->lock held: one SSE event onto the queue (SSE streams only). */
static void
push_locked(struct stream *st, json_t *msg, const char *evid)
{
	struct iovec v;
	char *js;

	if (!st->sse)
		return;
	js = json_dumps(msg, JSON_COMPACT);
	if (js == NULL)
		return;
	v.iov_base = js;
	v.iov_len = strlen(js);
	push_text_locked(st, &v, 1, evid);
	free(js);
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
stream_finish_text(struct stream *st, const struct iovec *text, int n)
{
	struct strbuf final = {0};
	int rc = 0;

	/*
	 * A JSON-only client's answer is kept as text (out of memory, it gets none, as when
	 * reply_json_final's dump fails); an SSE client's goes onto the queue.
	 */
	if (!st->sse) {
		for (int i = 0; i < n; i++)
			rc |= sb_append(&final, text[i].iov_base, text[i].iov_len);
		if (rc)
			sb_free(&final);
	}
	pthread_mutex_lock(&st->lock);
	if (!st->done) {
		push_text_locked(st, text, n, NULL);
		if (!st->sse) {
			st->final_text = final.buf;
			st->final_len = final.len;
			final.buf = NULL;
		}
		st->done = true;
	}
	pthread_mutex_unlock(&st->lock);
	sb_free(&final);
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
	free(st->ends);
	sb_free(&st->out);
	json_decref(st->final);
	free(st->final_text);
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


/* ---- the client's side (its connection, in a daemon thread) -------------------------------- */

/*
 * How long a relayed call's SSE answer may hold its status line back, so that an answer that
 * comes at once leaves with its headers as one response of known length (no chunks). A call
 * that is still quiet by then is streamed; its priming event, if any, goes out then.
 */
#define HOLD_NS		(20LL * 1000000LL)
/*
 * 2026-07-28 refuses with HTTP statuses (400, 404) that an SSE stream cannot take back once
 * its 200 is out, so the status line waits for the first event: an answer that comes first
 * and is such a refusal goes out as JSON with its status. Refusals come at once; a call
 * that is still quiet after STATUS_WAIT_NS is streamed, so that no client's wait for
 * headers runs out on a long call.
 */
#define STATUS_WAIT_NS	(2LL * 1000000000LL)

void
stream_set_upid(struct stream *st, int64_t id)
{
	pthread_mutex_lock(&st->lock);
	st->upid = id;
	pthread_mutex_unlock(&st->lock);
}

/* The server's id of the request; 0 while it is being submitted from another thread. */
static int64_t
upid_get(struct stream *st)
{
	int64_t id;

	pthread_mutex_lock(&st->lock);
	id = st->upid;
	pthread_mutex_unlock(&st->lock);
	return id;
}

/* No answer will be waited for: tell the server, if it still has the request. */
void
stream_abandon(struct stream *st, const char *reason)
{
	if (st->u == NULL || !upstream_cancel(st->u, upid_get(st), reason))
		return;
	if (stream_unlink(st))
		stream_unref(st);
}

/* The client left: a resumable stream waits for it to come back, any other is abandoned. */
static void
stream_left(struct stream *st)
{
	if (st->hooks)
		st->hooks->detached(st, stream_gen(st));
	else
		stream_abandon(st, "the client closed the connection");
}

void
stream_cancel(struct stream *st, const char *reason)
{
	if (st->u == NULL || !upstream_cancel(st->u, upid_get(st), reason))
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
	if (st->u == NULL || !upstream_cancel(st->u, upid_get(st),
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
	struct hd_conn *c;
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

/*
 * The content reader of an SSE stream. It never blocks its daemon thread: with nothing to
 * hand out it suspends the connection and returns 0, which httpd.c allows only for a
 * suspended connection; what is queued next, a hang-up or the call's deadline resumes it.
 */
static ssize_t
stream_read(void *cls, char *buf, size_t max)
{
	struct reader *rd = cls;
	struct stream *st = rd->st;
	bool idle, slept = false;

	for (;;) {
		pthread_mutex_lock(&st->lock);
		if (rd->gen != st->gen) {
			pthread_mutex_unlock(&st->lock);
			return HD_READ_END;
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
			return HD_READ_END;
		}
		pthread_mutex_unlock(&st->lock);
		if (waiter_hung_up(st->h->waiter, &st->sleep)) {
			/* A resumable stream waits for its client instead (stream_free_cb). */
			if (!st->hooks)
				stream_abandon(st, "the client closed the connection");
			return HD_READ_ERROR;
		}
		if (st->deadline && time_mono_ns() >= st->deadline) {
			stream_timeout(st);
			continue;
		}
		/* Checked again under the lock: whatever is queued after it wakes the sleeper. */
		pthread_mutex_lock(&st->lock);
		idle = rd->gen == st->gen && st->off >= st->out.len && !st->done;
		if (idle)
			slept = waiter_sleep(st->h->waiter, &st->sleep, rd->c, st->fd,
					     st->deadline);
		pthread_mutex_unlock(&st->lock);
		if (slept)
			return 0;
		if (idle)
			return HD_READ_ERROR;	/* the gateway stops */
	}
}

static void
stream_free_cb(void *cls)
{
	struct reader *rd = cls;
	struct stream *st = rd->st;
	bool current, unsent;

	waiter_forget(st->h->waiter, &st->sleep, rd->c);
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

void
stream_drop(struct stream *st, struct hd_conn *c)
{
	waiter_forget(st->h->waiter, &st->sleep, c);
	stream_left(st);
	stream_unref(st);
}

/* With st->lock held: the end is there, or with any, something to hand out. */
static bool
ready_locked(struct stream *st, bool any)
{
	return st->done || (any && st->out.len > st->off);
}

/*
 * A request handler's wait for its stream (see ready_locked) that ends by until (0: never)
 * at the latest. SW_READY also when until passed; SW_ASLEEP: c is suspended until the stream
 * wakes it. Without c nothing is waited for. The call's deadline is dealt with here.
 */
static enum stream_wait
stream_await(struct stream *st, struct hd_conn *c, bool any, int64_t until)
{
	for (;;) {
		int64_t now, wake;
		bool ready, slept = false;

		pthread_mutex_lock(&st->lock);
		ready = ready_locked(st, any);
		pthread_mutex_unlock(&st->lock);
		if (ready || c == NULL)
			return SW_READY;
		if (waiter_hung_up(st->h->waiter, &st->sleep))
			return SW_GONE;
		now = time_mono_ns();
		if (st->deadline && now >= st->deadline) {
			stream_timeout(st);
			continue;
		}
		if (until && now >= until)
			return SW_READY;
		wake = st->deadline && (!until || st->deadline < until) ? st->deadline : until;
		pthread_mutex_lock(&st->lock);
		ready = ready_locked(st, any);
		if (!ready)
			slept = waiter_sleep(st->h->waiter, &st->sleep, c, st->fd, wake);
		pthread_mutex_unlock(&st->lock);
		if (slept)
			return SW_ASLEEP;
		if (!ready)
			return SW_GONE;	/* the gateway stops */
	}
}

enum stream_wait
stream_final(struct stream *st, struct hd_conn *c, json_t **final)
{
	enum stream_wait w = stream_await(st, c, false, 0);

	*final = NULL;
	if (w == SW_GONE) {
		stream_abandon(st, "the client closed the connection");
	} else if (w == SW_READY) {
		pthread_mutex_lock(&st->lock);
		*final = json_incref(st->final);
		pthread_mutex_unlock(&st->lock);
	}
	return w;
}

/* The answer alone, as JSON (202 and no body for a cancelled request). */
static enum hd_result
reply_json_final(struct hd_conn *c, struct stream *st)
{
	json_t *final;
	char *js;
	size_t len;
	unsigned int status;

	pthread_mutex_lock(&st->lock);
	final = json_incref(st->final);
	/* Or kept as text (stream_finish_text: never on a 2026-07-28 stream), handed out once. */
	js = st->final_text;
	len = st->final_len;
	st->final_text = NULL;
	pthread_mutex_unlock(&st->lock);
	if (js == NULL && final) {
		js = json_dumps(final, JSON_COMPACT);
		len = js ? strlen(js) : 0;
	}
	status = !js ? HTTP_ACCEPTED : st->stateless ? rpc_status(final) : HTTP_OK;
	json_decref(final);
	stream_unref(st);
	return reply_buffer(c, status, js ? "application/json" : NULL, js ? js : "",
			    js ? len : 0, js != NULL, NULL, NULL);
}

/* A finished stream: all its events in one response of known length, with the headers. */
static enum hd_result
reply_sse_whole(struct hd_conn *c, struct stream *st)
{
	struct hd_resp *r;
	size_t len;
	char *body;

	pthread_mutex_lock(&st->lock);
	len = st->out.len - st->off;
	body = malloc(len + 1);
	if (body) {
		memcpy(body, st->out.buf + st->off, len);
		st->off = st->out.len;
	}
	pthread_mutex_unlock(&st->lock);
	if (body && st->hooks)
		st->hooks->drained(st);
	stream_unref(st);
	r = body ? hd_resp_buffer(len, body, true) : NULL;
	if (r == NULL) {
		free(body);
		return HD_NO;
	}
	return reply_sse_stream(c, r, NULL);
}

/* A stream still going: a content reader hands it out as it comes. */
static enum hd_result
reply_sse_reader(struct hd_conn *c, struct stream *st)
{
	struct hd_resp *r;
	struct reader *rd = malloc(sizeof(*rd));

	r = rd ? hd_resp_reader(SSE_BLOCK, stream_read, rd, stream_free_cb) : NULL;
	if (r == NULL) {
		free(rd);
		stream_abandon(st, "the gateway is out of memory");
		stream_unref(st);
		return HD_NO;
	}
	rd->st = st;
	rd->c = c;
	pthread_mutex_lock(&st->lock);
	rd->gen = st->gen;
	pthread_mutex_unlock(&st->lock);
	return reply_sse_stream(c, r, NULL);
}

enum hd_result
stream_reply(struct hd_conn *c, struct stream *st, struct stream **again)
{
	enum stream_wait w = SW_READY;
	bool done, refused;

	if (again)
		*again = NULL;
	if (!st->sse) {
		w = stream_await(st, again ? c : NULL, false, 0);
	} else if (again && !st->get) {
		/* Each HTTP request that hands the stream out holds its own status line. */
		if (!st->hold)
			st->hold = time_mono_ns() + (st->stateless ? STATUS_WAIT_NS : HOLD_NS);
		w = stream_await(st, c, st->stateless, st->hold);
	}
	if (w == SW_ASLEEP) {
		*again = st;
		return HD_YES;
	}
	st->hold = 0;
	if (w == SW_GONE) {
		stream_left(st);
		stream_unref(st);
		return HD_NO;
	}
	pthread_mutex_lock(&st->lock);
	done = st->done;
	refused = done && st->final && rpc_status(st->final) != HTTP_OK;
	pthread_mutex_unlock(&st->lock);
	if (!st->sse || (st->stateless && refused))
		return reply_json_final(c, st);
	return done ? reply_sse_whole(c, st) : reply_sse_reader(c, st);
}
