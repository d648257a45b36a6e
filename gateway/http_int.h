/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: what the HTTP side's files share (http.c: transport, sessions; mcp.c: MCP
 * methods; relay.c: requests relayed to upstreams and the SSE streams that carry their
 * traffic back). Locks: h->lock guards sessions and everything in them; a stream's own
 * lock guards its queue. Order: an upstream's lock, then h->lock, then a stream's lock;
 * nothing calls into an upstream while holding h->lock or a stream lock.
 */
#ifndef GW_HTTP_INT_H
#define GW_HTTP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include "gw.h"

#define SESSION_ID_LEN	26
#define SREQ_MAX	256	/* server requests awaiting a client's answer, per session */
#define EVENT_KEEP	64	/* GET stream events kept for Last-Event-ID replay */
/* The stateless revision: every request carries its version and capabilities in _meta. */
#define MCP_2026_07_28	"2026-07-28"
#define META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define META_CAPS	"io.modelcontextprotocol/clientCapabilities"
#define META_INFO	"io.modelcontextprotocol/clientInfo"
#define META_LOG_LEVEL	"io.modelcontextprotocol/logLevel"
#define RPC_HEADER_MISMATCH	(-32020)
#define RPC_MISSING_CAPABILITY	(-32021)
#define RPC_UNSUPPORTED_VERSION	(-32022)
#define META_SERVER_INFO	"io.modelcontextprotocol/serverInfo"
#define EXT_TASKS	"io.modelcontextprotocol/tasks"
#define META_SUB_ID	"io.modelcontextprotocol/subscriptionId"
#define LISTEN_TOOLS		1u
#define LISTEN_PROMPTS		2u
#define LISTEN_RESOURCES	4u
#define LISTEN_ON		8u	/* set for every listener, whatever it asked for */

enum rpc_code {
	RPC_PARSE = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL = -32603,
};

struct stream;

/* A client request in flight on a session: its id (JSON text) and the stream relaying it. */
struct inflight {
	char *idtext;
	struct stream *st;	/* NULL when answered by the gateway itself */
	struct inflight *next;
};

/* A server request relayed to this session's client, until the client answers it. */
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
	bool stateless;	/* a one-request session of a 2026-07-28 client */
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
	struct session *next;
};

enum tab_kind {
	TAB_TOOLS,
	TAB_PROMPTS,
	TAB_RESOURCES,
	TAB_TEMPLATES,
	TAB_COUNT,
};

struct http_server {
	struct http_conf conf;	/* conf.tools .. conf.templates point into tabs */
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct session *sessions;
	size_t nsessions;
	int active;		/* requests between first callback and completion */
	pthread_rwlock_t tlock;	/* tabs and health: readers route, the refresher swaps */
	struct tool_table tabs[TAB_COUNT];
	char *health;
	pthread_t refresher;
	bool refresher_on;
	bool refresh_stop;	/* under lock, like stale */
	bool *stale;		/* per upstream: list it again */
	pthread_cond_t rcond;
	struct park *parks;	/* 2026-07-28 requests waiting for input, under lock */
	struct stream *resumable;	/* POST streams a client may resume, under lock */
	size_t ndetached;	/* of those, the ones waiting for their client */
	json_int_t next_park_key;
	struct task_map *tasks;	/* tasks.c: the client's task ids, under lock */
	size_t ntasks;
};

/* lists.c */
int lists_start(struct http_server *h);
void lists_stop(struct http_server *h);
void lists_stale_locked(struct http_server *h, struct upstream *u);
char *lists_health(struct http_server *h);

/* session.c */
struct session *session_new(void);
void session_unref_locked(struct session *s);
struct session *session_get(struct http_server *h, const char *id);
void session_put(struct http_server *h, struct session *s);
int session_insert(struct http_server *h, struct session *s);
bool session_remove(struct http_server *h, const char *id);
bool session_id_claim(struct http_server *h, struct session *s, const char *idtext);
void session_id_release(struct http_server *h, struct session *s, const char *idtext);
void session_cancel(struct http_server *h, struct session *s, json_t *params);
/* With h->lock held: a listener's session leaves the table when its stream ends. */
void session_unlist_locked(struct http_server *h, struct session *s);

/* http.c */
/* CORS headers for the request this thread serves. */
void http_decorate(struct MHD_Response *r);
enum MHD_Result http_queue_sse(struct MHD_Connection *c, struct MHD_Response *r,
			       const char *session_id);
enum MHD_Result http_reply_text(struct MHD_Connection *c, unsigned int status,
				const char *text);

/* guard.c */
bool guard_host_allowed(const struct http_conf *conf, const char *hostport);
bool guard_origin_allowed(const struct http_conf *conf, const char *origin);

/* mcp.c: the gateway's own answers and which upstream gets the rest. */
json_t *rpc_error(json_t *id, int code, const char *msg);
json_t *rpc_result(json_t *id, json_t *result);
int mcp_log_level(const char *name);
unsigned mcp_client_caps(json_t *caps);
/* A 2026-07-28 result: resultType, and cache hints on lists (in place). */
void stateless_result(json_t *msg, const char *method);
/* A one-request session from a 2026-07-28 request's _meta. */
void stateless_session_init(struct session *s, json_t *msg);

struct forward {
	struct upstream *u;	/* NULL: answered here (see reply) */
	char *method;
	json_t *params;		/* what the upstream gets */
	json_t *reply;		/* the gateway's own answer when u is NULL */
	const char *what;	/* for error messages: "tools/call" */
};

void mcp_route(struct http_server *h, struct session *s, json_t *req, struct forward *f);
void mcp_forward_fini(struct forward *f);

/* stateless.c: the checks of 2026-07-28 requests. */
json_t *stateless_versions(void);
/* The HTTP status a 2026-07-28 answer goes out with: 404 and 400 for the refusals. */
unsigned int stateless_status(json_t *msg);
enum MHD_Result stateless_bad_version(struct MHD_Connection *c, const char *body, size_t len,
				      const char *pv);
/* Headers and _meta: NULL when fine, else the error to answer with *status. */
json_t *stateless_check(struct http_server *h, struct MHD_Connection *c, json_t *msg,
			unsigned int *status);
struct session *stateless_session(struct http_server *h, struct MHD_Connection *c,
				  json_t *msg, enum MHD_Result *ret);
/* Whether a header value (NULL: missing) repeats want: trimmed, base64 form decoded. */
bool stateless_header_repeats(const char *raw, const char *want, size_t wantlen);

/* tasks.c: the tasks extension; a task id the client sees names one upstream's task. */
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

/* relay.c */
struct stream *stream_new(struct http_server *h, struct session *s, json_t *id, bool sse,
			  int fd);
void stream_unref(struct stream *st);
struct stream *stream_hold(struct stream *st);
/* No more events: the SSE stream ends once what is queued is out. */
void stream_end(struct stream *st);
void stream_set_id(struct stream *st, json_t *id);
json_t *stream_wait_final(struct stream *st, bool *gone);
/* Submits f; on failure the stream gets the error as its answer. */
void stream_forward(struct stream *st, struct forward *f, int64_t timeout_ns);
enum MHD_Result stream_reply(struct MHD_Connection *c, struct stream *st,
			     const char *session_id);
/* A client's notifications/cancelled for one of its requests. */
void stream_cancel(struct stream *st, const char *reason);
/* A client's answer to a server request: 0, or -ENOENT for an id we never sent. */
int sreq_answer(struct http_server *h, struct session *s, json_t *msg);
void sreqs_free_locked(struct session *s);
struct sreq *sreq_add_locked(struct session *s, struct upstream *u, json_t *upid);
/* Events that belong to no request, for every session that listens; see up_event_fn. */
bool relay_event(void *ctx, struct upstream *u, json_t *msg);
/* A client's notifications/roots/list_changed, for the servers that asked for roots. */
void roots_changed(struct http_server *h, struct session *s);
/* One notification of the gateway's own to every session that wants it. */
void relay_broadcast(struct http_server *h, json_t *msg);
/* 2026-07-28 retries: the parked stream that answers, or NULL for an unknown requestState. */
struct stream *park_resume(struct http_server *h, json_t *params, json_t *id, int fd,
			   bool sse);
void parks_free(struct http_server *h);
/* Whether a requestState is one the gateway handed out (else a server's own). */
bool park_owns(json_t *state);
enum MHD_Result stream_get(struct http_server *h, struct MHD_Connection *c, struct session *s,
			   const char *last_event_id);
/* 2026-07-28 subscriptions/listen: s (a one-request session) becomes a listener. */
enum MHD_Result listen_start(struct http_server *h, struct MHD_Connection *c,
			     struct session *s, json_t *msg, int fd);
/* resume.c: POST streams a client can resume with GET and Last-Event-ID. */
void resume_start(struct http_server *h, struct stream *st, bool priming);
struct stream *resume_take(struct http_server *h, struct session *s, const char *last,
			   int fd);
/* Cancels what waited too long; the ns until the next is due, 0 for none. */
int64_t resume_sweep(struct http_server *h);
void resume_free_all(struct http_server *h);
/* At shutdown: listeners get their final result, GET streams just end. */
void streams_close_locked(struct http_server *h);

#endif /* GW_HTTP_INT_H */
