/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: client requests relayed to upstreams. Each one gets a stream: the upstream's
 * reader thread queues what the server sends for it (progress, log messages, the server's own
 * requests, finally the answer) and the client's connection thread hands that out as SSE
 * events, or, for a client that accepts only JSON, waits for the answer alone. The connection
 * thread also notices a client that goes away and a call that outlives --call-timeout, and
 * tells the server to cancel.
 */

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "stream_int.h"

#define SSE_BLOCK	(64 * 1024)

static struct stream *
link_stream(const struct up_link *l)
{
	return (struct stream *)((char *)l - offsetof(struct stream, link));
}

void
stream_wake(struct stream *st)
{
	uint64_t one = 1;
	ssize_t n = write(st->efd, &one, sizeof(one));

	(void)n;
}

/* With st->lock held. */
void
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
		resume_mark_locked(st);
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

/* The last message: the answer (NULL for a request the client cancelled). */
void
stream_finish(struct stream *st, json_t *final)
{
	pthread_mutex_lock(&st->lock);
	if (!st->done) {
		if (final)
			push_locked(st, final, NULL);
		/* 2026-07-28 streams keep it too: its HTTP status may depend on it. */
		if ((!st->sse || st->s->stateless) && final)
			st->final = json_incref(final);
		st->done = true;
	}
	pthread_mutex_unlock(&st->lock);
	stream_wake(st);
}

static void
inflight_release_locked(struct session *s, const char *idtext)
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

void
stream_unref(struct stream *st)
{
	struct http_server *h = st->h;
	int left;

	pthread_mutex_lock(&st->lock);
	left = --st->refs;
	pthread_mutex_unlock(&st->lock);
	if (left > 0)
		return;
	pthread_mutex_lock(&h->lock);
	if (st->idtext)
		inflight_release_locked(st->s, st->idtext);
	if (st->s->get == st)
		st->s->get = NULL;
	if (st->s->listen && !st->s->closed)
		session_unlist_locked(h, st->s);
	st->s->inflight--;
	st->s->last_used = time_mono_ns();
	session_unref_locked(st->s);
	pthread_mutex_unlock(&h->lock);
	close(st->efd);
	free(st->ends);
	sb_free(&st->out);
	json_decref(st->final);
	json_decref(st->held);
	json_decref(st->cid);
	json_decref(st->token);
	free(st->idtext);
	pthread_mutex_destroy(&st->lock);
	free(st);
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
stream_end(struct stream *st)
{
	stream_finish(st, NULL);
}

/* The id an answer carries, for a stream that claims none on the session (batches). */
void
stream_set_id(struct stream *st, json_t *id)
{
	json_decref(st->cid);
	st->cid = json_incref(id);
}

/* The upstream lets go of the link; true only for the one caller that got it back. */
static bool
unlink_take(struct stream *st)
{
	bool was;

	pthread_mutex_lock(&st->lock);
	was = st->linked;
	st->linked = false;
	pthread_mutex_unlock(&st->lock);
	return was;
}

static json_t *
answer_error(struct stream *st, const char *err)
{
	char *m = str_printf("mcp server \"%s\": %s", upstream_name(st->u), err);
	json_t *e = rpc_error(st->cid, RPC_INTERNAL, m ? m : err);

	free(m);
	return e;
}

/* ---- the upstream's side (its reader thread) ---------------------------------------------- */

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
		out = answer_error(st, err ? err : "no answer");
	}
	if (st->s->stateless) {
		tasks_result(st->h, st->u, out);
		stateless_result(out, st->what);
	}
	unlink_take(st);
	pthread_mutex_lock(&st->lock);
	if (st->parked) {
		/* The retry that takes the stream over delivers it. */
		json_decref(st->held);
		st->held = json_incref(out);
	}
	pthread_mutex_unlock(&st->lock);
	stream_finish(st, out);
	json_decref(out);
	stream_unref(st);
}

json_t *
server_request_refuse(json_t *id, const char *why)
{
	return json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
			 RPC_METHOD_NOT_FOUND, "message", why);
}

/*
 * With h->lock held: a server request that session s's client is to answer, under an id of
 * the session's (r->cid); NULL when too many wait already or memory is out.
 */
struct sreq *
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

/* A server request for this client: it gets an id of the session's, the answer goes back. */
static json_t *
relay_request(struct stream *st, json_t *msg)
{
	json_t *id = json_object_get(msg, "id"), *out;
	struct sreq *r;
	json_int_t cid = 0;

	if (!st->sse)
		return server_request_refuse(id, "mcp-gateway: the calling client accepts only "
					     "application/json responses, which cannot carry "
					     "server requests");
	if (st->s->stateless)
		return park_request(st, msg);
	pthread_mutex_lock(&st->h->lock);
	r = sreq_add_locked(st->s, st->u, id);
	if (r)
		cid = r->cid;
	pthread_mutex_unlock(&st->h->lock);
	if (r == NULL)
		return server_request_refuse(id, "mcp-gateway: too many unanswered server "
					     "requests for this client");
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
		int lvl = mcp_log_level(json_string_value(json_object_get(params, "level")));
		int min;

		pthread_mutex_lock(&st->h->lock);
		min = st->s->log_level;
		pthread_mutex_unlock(&st->h->lock);
		if (lvl < min)
			return NULL;
	}
	stream_push(st, msg, NULL);
	return NULL;
}

/* ---- the client's side (its connection thread) -------------------------------------------- */

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
	st->link.relay = link_relay;
	st->link.done = link_done;
	pthread_mutex_lock(&h->lock);
	s->refs++;
	s->inflight++;
	st->link.caps = s->caps;
	if (id) {
		struct inflight *r;

		st->idtext = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
		for (r = s->reqs; r && st->idtext; r = r->next)
			if (strcmp(r->idtext, st->idtext) == 0 && r->st == NULL)
				r->st = st;
	}
	pthread_mutex_unlock(&h->lock);
	return st;
}

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
	if (unlink_take(st))
		stream_unref(st);
}

void
stream_cancel(struct stream *st, const char *reason)
{
	if (st->u == NULL || !upstream_cancel(st->u, st->upid, reason))
		return;
	stream_finish(st, NULL);
	if (unlink_take(st))
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
	e = answer_error(st, m ? m : "timeout");
	stream_finish(st, e);
	json_decref(e);
	free(m);
	if (unlink_take(st))
		stream_unref(st);
}

void
stream_forward(struct stream *st, struct forward *f, int64_t timeout_ns)
{
	json_t *meta = json_object_get(f->params, "_meta");
	char *err = NULL;
	int rc;

	st->u = f->u;
	snprintf(st->what, sizeof(st->what), "%s", f->what ? f->what : f->method);
	st->token = json_incref(json_object_get(meta, "progressToken"));
	st->timeout_ns = timeout_ns;
	stream_ref(st);
	st->linked = true;
	rc = upstream_submit(f->u, f->method, f->params, &st->link, &st->upid, &err);
	if (rc) {
		json_t *e;

		st->linked = false;
		stream_unref(st);
		e = answer_error(st, err ? err : "call failed");
		stream_finish(st, e);
		json_decref(e);
		st->u = NULL;
	} else if (timeout_ns > 0) {
		st->deadline = time_mono_ns() + timeout_ns;
	}
	free(err);
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
	if (st->off == st->out.len && !(st->no && resume_keep_locked(st)))
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
			size_t n = stream_take_locked(st, buf, max);

			pthread_mutex_unlock(&st->lock);
			return (ssize_t)n;
		}
		if (st->done) {
			pthread_mutex_unlock(&st->lock);
			if (st->no)
				resume_drop(st);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		pthread_mutex_unlock(&st->lock);
		w = stream_wait(st);
		if (w == WAIT_GONE) {
			/* A resumable stream waits for its client instead (stream_free_cb). */
			if (!st->no)
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
		if (st->no)
			resume_detach(st, rd->gen);
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
	bool stateless = st->s->stateless, gone;
	json_t *final = stream_wait_final(st, &gone);
	char *js = final ? json_dumps(final, JSON_COMPACT) : NULL;
	unsigned int status = !js ? MHD_HTTP_ACCEPTED : stateless ? stateless_status(final) :
			      MHD_HTTP_OK;
	struct MHD_Response *r;
	enum MHD_Result ret;

	json_decref(final);
	if (gone)
		return MHD_NO;
	if (js == NULL)
		r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	else
		r = MHD_create_response_from_buffer(strlen(js), js, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(js);
		return MHD_NO;
	}
	if (js)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	http_decorate(r);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
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
		refused = st->done && st->final && stateless_status(st->final) != MHD_HTTP_OK;
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

	if (!st->sse || (st->s->stateless && stream_refused(st, &gone)))
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
	return http_queue_sse(c, r, session_id);
}

/* ---- server requests ---------------------------------------------------------------------- */

int
sreq_answer(struct http_server *h, struct session *s, json_t *msg)
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

void
sreqs_free_locked(struct session *s)
{
	struct sreq *r;

	while ((r = s->sreqs) != NULL) {
		s->sreqs = r->next;
		json_decref(r->upid);
		json_decref(r->ask);
		free(r);
	}
	s->nsreqs = 0;
}

