/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: what the files of the session floor (session/) share. The HTTP side is three
 * floors, and within this one too a file calls only the files on the lines below its own,
 * never one above:
 *
 *   http/         the daemon (http.c): POST/GET/DELETE /mcp; server.c: its state, upstream
 *                 events, the housekeeping tick; guard.c: token, Host, Origin
 *   mcp.c         the MCP methods: the gateway's own answers, which upstream gets the rest
 *   relay.c       a request relayed to its upstream: the link that carries its traffic back
 *   stateless.c   2026-07-28 requests: headers, _meta, one-request sessions, result shapes
 *   park.c        2026-07-28 server requests parked as input_required round trips
 *   lists.c       the merged tables and /health; tasks.c: the tasks extension's ids
 *   events.c      traffic of no request: broadcasts, GET and subscriptions/listen streams
 *   resume.c      POST streams a client resumes with Last-Event-ID
 *   session.c     the core: the session table (the owner of h->lock)
 *   stream.c      the core: the stream object, with hooks for the files above
 *   waiter.c      the core: connections suspended until their stream wakes them
 *   routes.c      the tables: items of all servers merged, renamed on clashes
 *   wire/         every HTTP answer (reply.c), JSON-RPC messages (rpc.c)
 *
 * Below them all are upstream/ and the floors it stands on (docs/architecture.md).
 *
 * Locks: each has one owner, the only file that takes it. h->lock (session.c) guards the
 * session table and everything in the sessions; a stream's lock (stream.c) its queue; park.c,
 * resume.c, tasks.c and lists.c each keep their state behind a lock of their own, and http.c
 * its count of requests in flight. Order: an upstream's lock, then park.c's or h->lock, then
 * a stream's lock, then the waiter's (waiter.c); nothing calls into an upstream while
 * holding one of them.
 */
#ifndef GW_SESSION_H
#define GW_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/loop.h"
#include "session/http_conf.h"
#include "wire/httpd.h"

#define SESSION_ID_LEN	26
#define SESSION_BUCKETS	4096
#define SREQ_MAX	256	/* server requests awaiting a client's answer, per session */
#define EVENT_KEEP	64	/* GET stream events kept for Last-Event-ID replay */
#define LISTEN_TOOLS		1u
#define LISTEN_PROMPTS		2u
#define LISTEN_RESOURCES	4u
#define LISTEN_ON		8u	/* set for every listener, whatever it asked for */


struct stream;

/* A client request in flight on a session: its id (JSON text) and the stream relaying it. */
struct inflight {
	char *idtext;
	struct stream *st;	/* NULL when answered by the gateway itself */
	struct inflight *next;
};

/* A server request relayed to a client, until the client answers it. */
struct sreq {
	json_int_t cid;		/* the id the client sees */
	struct upstream *u;
	json_t *upid;		/* the id the server used */
	json_t *ask;		/* 2026-07-28: {method, params} for inputRequests */
	struct sreq *next;
};

struct session {
	char id[SESSION_ID_LEN + 1];
	char version[16];
	bool initialized;
	bool closed;
	bool stateless;		/* a one-request session of a 2026-07-28 client */
	bool tasks;		/* it declared the tasks extension (2026-07-28) */
	unsigned listen;	/* LISTEN_*: a subscriptions/listen stream, in the table */
	json_t *listen_id;	/* its request id, the subscription id */
	int refs;		/* the table's reference plus one per request in flight */
	int inflight;
	int64_t last_used;
	unsigned caps;		/* UP_CAP_* from initialize */
	int log_level;		/* lowest level relayed (index into the syslog order) */
	struct inflight *reqs;
	struct sreq *sreqs;
	size_t nsreqs;
	json_int_t next_cid;
	struct stream *get;	/* the GET /mcp stream, if one is open */
	json_t *events;		/* recent GET events: [[id, json text], ...] for replay */
	uint64_t event_seq;
	json_t *subs;		/* subscribed resource URIs: object uri -> true */
	unsigned post_seq;	/* POST streams numbered so far (resume.c) */
	int64_t roots_changed;	/* when its client last said its roots changed; 0: never */
	struct session *next, **pprev;	/* h->sessions; pprev NULL: not in the table */
	struct session *hnext;	/* the next of its bucket of h->by_id */
};

struct lists;
struct parks;
struct resumable;
struct task_map;
struct waiter;

struct http_server {
	struct http_conf conf;	/* conf.tools .. conf.templates point into lists.c's tables */
	struct hd *d;		/* the HTTP server (wire/httpd.h) */
	struct loop *loop;	/* http.c's: the thread that runs d and reads the servers */
	/* session.c's alone: the table and everything in the sessions. */
	pthread_mutex_t lock;
	struct session *sessions;
	/* The same sessions by id: every request looks its session up, among up to 10,000. */
	struct session *by_id[SESSION_BUCKETS];
	size_t nsessions;
	int64_t expire_at;	/* no session can expire before: the table is walked then */
	/* http.c's: requests between their first callback and completion. */
	pthread_mutex_t active_lock;
	pthread_cond_t active_cond;
	int active;
	struct bell tick;	/* rung by lists.c and resume.c, waited on by http.c */
	pthread_t ticker;
	bool ticker_on;
	/* Each behind its owner's lock. */
	struct lists *lists;	/* lists.c: the merged tables, /health, stale servers */
	struct parks *parks;	/* park.c: 2026-07-28 requests waiting for input */
	struct resumable *resumable;	/* resume.c: POST streams a client may resume */
	struct task_map *tasks;	/* tasks.c: the client's task ids */
	struct waiter *waiter;	/* waiter.c: connections suspended on a stream */
	int late_submits;	/* relay.c's, atomic: its submit threads still running */
};

/* ---- the core: sessions (session.c, the owner of h->lock) ----------------------------------- */

struct session *session_new(void);
struct session *session_get(struct http_server *h, const char *id);
void session_put(struct http_server *h, struct session *s);
int session_insert(struct http_server *h, struct session *s);
bool session_remove(struct http_server *h, const char *id);
void session_init(struct http_server *h);
/* At shutdown, after the daemon stopped: the table's references go, and h->lock. */
void session_free_all(struct http_server *h);
bool session_id_claim(struct http_server *h, struct session *s, const char *idtext);
void session_id_release(struct http_server *h, struct session *s, const char *idtext);
/* A client's notifications/cancelled: the request's stream cancels it at its server. */
void session_cancel(struct http_server *h, struct session *s, json_t *params);
/*
 * A stream for a request of s (id: claimed on s as idtext, rpc_id_text()'s spelling; or both
 * NULL); s counts it as in flight.
 */
struct stream *session_stream_new(struct http_server *h, struct session *s, json_t *id,
				  const char *idtext, bool sse, int fd);
/* st becomes s's GET stream (an older one ends); fn, if any, runs under h->lock. */
void session_attach(struct http_server *h, struct session *s, struct stream *st,
		    void (*fn)(struct session *s, struct stream *st, void *arg), void *arg);
/* fn for every session in the table, under h->lock (it may push onto streams). */
void session_each(struct http_server *h, void (*fn)(struct session *s, void *arg), void *arg);
/* A server request for s's client: the id the client sees, or 0 when too many wait. */
json_int_t session_sreq_add(struct http_server *h, struct session *s, struct upstream *u,
			    json_t *upid);
/* A list of server requests freed (the session's own, or a park's). */
void session_sreqs_free(struct sreq *list);
/* A client's answer to a server request: 0, or -ENOENT for an id we never sent. */
int session_sreq_answer(struct http_server *h, struct session *s, json_t *msg);
int session_log_level(struct http_server *h, struct session *s);
void session_set_log_level(struct http_server *h, struct session *s, int level);
void session_subscribe(struct http_server *h, struct session *s, const char *uri, bool on);
unsigned session_post_number(struct http_server *h, struct session *s);
void session_roots_changed(struct http_server *h, struct session *s);
/* A server's roots/list between calls: asked of the latest client whose roots changed. */
bool session_roots_ask(struct http_server *h, struct upstream *u, json_t *req);

/* ---- the core: streams (stream.c, see stream_int.h) ----------------------------------------- */

struct stream *stream_hold(struct stream *st);
void stream_unref(struct stream *st);
void stream_push(struct stream *st, json_t *msg, const char *evid);
/* The last message: the answer (NULL for a request the client cancelled). */
void stream_finish(struct stream *st, json_t *final);
/* No more events: the SSE stream ends once what is queued is out. */
void stream_end(struct stream *st);
/* The id an answer carries, for a stream that claims none on the session (batches). */
void stream_set_id(struct stream *st, json_t *id);
enum stream_wait {
	SW_READY,	/* what was waited for is there */
	SW_ASLEEP,	/* c is suspended: ask again once it resumes */
	SW_GONE,	/* the client left (or the gateway stops): no answer will go */
};
/* Batches: *final, the answer (NULL when cancelled), once st is done; keeps the reference. */
enum stream_wait stream_final(struct stream *st, struct hd_conn *c, json_t **final);
/*
 * Queues the response that hands the stream out; the reference passes to it. Where an
 * answer is worth waiting for (JSON-only clients, 2026-07-28 statuses, a call likely to
 * answer at once, so that it leaves in one piece) and again is given, c may be suspended
 * instead: *again is st, and the caller calls stream_reply again once c resumes.
 */
enum hd_result stream_reply(struct hd_conn *c, struct stream *st,
			     struct stream **again);
/* A request on c that will not hand st out after all lets go of it (the call is abandoned). */
void stream_drop(struct stream *st, struct hd_conn *c);
/* A client's notifications/cancelled for one of its requests. */
void stream_cancel(struct stream *st, const char *reason);

/* waiter.c: its thread; stopped before the daemon, freed after every stream. */
int waiter_init(struct http_server *h);
/* Resumes from threads other than l's ring l (NULL: none). */
void waiter_use_loop(struct waiter *w, struct loop *l);
void waiter_stop(struct http_server *h);
void waiter_free(struct http_server *h);

/* ---- above the core ------------------------------------------------------------------------- */

/* relay.c: a request relayed to f->u; on failure the stream gets the error as its answer. */
struct forward;
void relay_forward(struct stream *st, struct forward *f, int64_t timeout_ns);
/* At shutdown, once the servers are closed: relay_forward's threads have ended. */
void relay_wait(struct http_server *h);

/* events.c: traffic that belongs to no request, the GET and listen streams. */
/* One notification of the gateway's own to every session that wants it. */
void events_broadcast(struct http_server *h, json_t *msg);
/* A client's notifications/roots/list_changed, for the servers that asked for roots. */
void events_roots_changed(struct http_server *h, struct session *s);
/* GET /mcp on fd: the session's stream, or a POST stream resumed (Last-Event-ID "n-m"). */
enum hd_result events_get(struct http_server *h, struct hd_conn *c, struct session *s,
			   const char *last_event_id, int fd);
/* 2026-07-28 subscriptions/listen: s (a one-request session) becomes a listener. */
enum hd_result events_listen(struct http_server *h, struct hd_conn *c,
			      struct session *s, json_t *msg, int fd);
/* At shutdown: listeners get their final result, GET streams just end. */
void events_close_all(struct http_server *h);

/* park.c: 2026-07-28 requests waiting for their client's input. */
int park_init(struct http_server *h);
/* At shutdown: every parked request is given up. */
void park_free_all(struct http_server *h);
/* Whether a requestState is one the gateway handed out (else a server's own). */
bool park_owns(json_t *state);
/* A server request during a 2026-07-28 call: parked as an input_required answer. */
json_t *park_request(struct stream *st, json_t *msg);
/* A retry: the parked stream that answers, or NULL for an unknown requestState. */
struct stream *park_resume(struct http_server *h, json_t *params, json_t *id, int fd,
			   bool sse);

/* resume.c: POST streams a client can resume with GET and Last-Event-ID. */
int resume_init(struct http_server *h);
void resume_start(struct http_server *h, struct stream *st, bool priming);
struct stream *resume_take(struct http_server *h, struct session *s, const char *last,
			   int fd);
/* Cancels what waited too long; the ns until the next is due, 0 for none. */
int64_t resume_sweep(struct http_server *h);
/* At shutdown, after the daemon stopped: every kept stream goes. */
void resume_free_all(struct http_server *h);

/* lists.c: the merged tables and /health, rebuilt when a server's lists change. */
int lists_start(struct http_server *h);
void lists_stop(struct http_server *h);
void lists_stale(struct http_server *h, struct upstream *u);
/* The servers marked stale listed again and the tables rebuilt; false when none was. */
bool lists_refresh(struct http_server *h);
char *lists_health(struct http_server *h);
/* fn with the tables held for reading: conf.tools .. conf.templates stay as they are. */
void lists_read(struct http_server *h, void (*fn)(void *arg), void *arg);

/* ---- the MCP methods ------------------------------------------------------------------------ */

/* mcp.c: the gateway's own answers and which upstream gets the rest. */

struct forward {
	struct upstream *u;	/* NULL: answered here (see reply) */
	char *method;
	json_t *params;		/* what the upstream gets */
	json_t *reply;		/* the gateway's own answer when u is NULL */
	const char *what;	/* for error messages: "tools/call" */
};

void mcp_route(struct http_server *h, struct session *s, json_t *req, struct forward *f);
void mcp_forward_fini(struct forward *f);

/* stateless.c: 2026-07-28 requests. */
json_t *stateless_versions(void);
enum hd_result stateless_bad_version(struct hd_conn *c, const char *body, size_t len,
				      const char *pv);
/* Headers and _meta: NULL when fine, else the error to answer with *status. */
json_t *stateless_check(struct http_server *h, struct hd_conn *c, json_t *msg,
			unsigned int *status);
/* A one-request session for a 2026-07-28 request, or NULL with the refusal queued. */
struct session *stateless_session(struct http_server *h, struct hd_conn *c,
				  json_t *msg, enum hd_result *ret);
/* A 2026-07-28 result: resultType, and cache hints on lists (in place). */
void stateless_result(json_t *msg, const char *method);
/* Whether a header value (NULL: missing) repeats want: trimmed, base64 form decoded. */
bool stateless_header_repeats(const char *raw, const char *want, size_t wantlen);

/* tasks.c: the tasks extension; a task id the client sees names one upstream's task. */
int tasks_init(struct http_server *h);
bool tasks_offered(struct http_server *h);
/* tasks/get, tasks/update, tasks/cancel: the methods that name a task. */
bool tasks_method(const char *method);
/* tasks/get, tasks/update, tasks/cancel: to the owner under its own id, or f->reply. */
void tasks_route(struct http_server *h, struct session *s, json_t *id, json_t *params,
		 struct forward *f);
/* An upstream's answer to a 2026-07-28 client: its task ids become the client's. */
void tasks_result(struct http_server *h, struct upstream *u, json_t *msg);
/* notifications/tasks/status from u: relayed under the client's id, if it has one. */
void tasks_notify(struct http_server *h, struct upstream *u, json_t *msg);
void tasks_free(struct http_server *h);

#endif /* GW_SESSION_H */
