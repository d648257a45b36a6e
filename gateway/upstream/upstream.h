/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: one stdio MCP server (upstream.c). Requests of clients are relayed through an
 * up_link: everything the server sends that belongs to such a request (its answer, progress,
 * log messages, its own requests to the client) goes to that link.
 */
#ifndef GW_UPSTREAM_H
#define GW_UPSTREAM_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "upstream/answer.h"

/* The name the gateway gives itself, to servers (clientInfo) and to clients (serverInfo). */
#define GW_CLIENT_NAME		"cube-mcp-gateway"

struct loop;
struct server_spec;
struct upstream;

/* Client capabilities a server request may need. */
#define UP_CAP_ROOTS		1u
#define UP_CAP_SAMPLING		2u
#define UP_CAP_ELICITATION	4u

/*
 * Where a relayed request's traffic goes. Both callbacks run where the server's output is
 * read (its reader thread, or the loop: upstream_use_loop);
 * they must not call back into the upstream. The upstream references the link from a
 * successful upstream_submit() until it calls done() or upstream_cancel() returns true.
 */
struct up_link {
	/*
	 * A message that belongs to the request: a notification, or a server request. For a
	 * request it may return the response to send back instead (it takes ownership).
	 */
	json_t *(*relay)(const struct up_link *l, json_t *msg);
	/* The last call: the server's response (msg), or why there is none (err). */
	void (*done)(const struct up_link *l, json_t *msg, const char *err);
	/*
	 * Optional, instead of done for an answer in the simple shape (answer.h): its text as
	 * the server wrote it, no jansson. False: the link wants it parsed, and done gets it.
	 */
	bool (*done_text)(const struct up_link *l, const struct up_answer *a);
	unsigned caps;		/* UP_CAP_* the client declared */
};

/*
 * Messages that belong to no request (list changes, resource updates, stray log lines), and
 * a roots/list asked between calls: true when it took that request (it answers it later with
 * upstream_respond), false to have the upstream answer it itself.
 */
typedef bool (*up_event_fn)(void *ctx, struct upstream *u, json_t *msg);

enum up_list {
	UP_LIST_PROMPTS,
	UP_LIST_RESOURCES,
	UP_LIST_TEMPLATES,
	UP_LIST_COUNT,
};

struct upstream *upstream_new(const struct server_spec *spec, const char *version);
int upstream_start(struct upstream *u, char **err);
/* A copy of the tools (which < 0) or of one enum up_list, safe against a refresh. */
json_t *upstream_snapshot(struct upstream *u, int which);
/* Lists tools, prompts, resources and templates again (after a list_changed). */
int upstream_refresh(struct upstream *u, char **err);
/* The server's capabilities from its initialize answer. */
json_t *upstream_caps(struct upstream *u);
void upstream_set_events(struct upstream *u, up_event_fn fn, void *ctx);
/*
 * The server's output is read on loop l from now on, once its handshake is done, so that
 * answers reach their clients on the loop's thread (base/loop.h). Before the loop stops.
 * Its callbacks (struct up_link, up_event_fn) then run on the loop's thread, which must
 * never wait for this server's answer.
 */
void upstream_use_loop(struct upstream *u, struct loop *l);
/*
 * Sends a request (a dead server is restarted first) and returns at once; its request id
 * goes to *id. A progress token in params._meta is replaced by that id on the way.
 */
int upstream_submit(struct upstream *u, const char *method, json_t *params,
		    const struct up_link *link, int64_t *id, char **err);
/* Whether the server runs now (else the next submit starts it, and waits for that). */
bool upstream_running(struct upstream *u);
/* Stops relaying request id and tells the server; false when it was answered already. */
bool upstream_cancel(struct upstream *u, int64_t id, const char *reason);
/* A client's answer to a server request (id as the server sent it). */
/* A client's roots changed: a server that has asked for roots hears it. */
void upstream_roots_changed(struct upstream *u);
void upstream_respond(struct upstream *u, json_t *id, json_t *result, json_t *error);
void upstream_kill(struct upstream *u);
void upstream_close(struct upstream *u);
void upstream_free(struct upstream *u);
const char *upstream_name(const struct upstream *u);
/* Whether the server's toolRules let clients see and call its tool 'name'. */
bool upstream_tool_allowed(const struct upstream *u, const char *name);
/* The protocol versions the gateway speaks: whether v is one; v echoed, else the latest. */
bool upstream_proto_supported(const char *v);
const char *upstream_proto_negotiate(const char *requested);
/* One line of the server's output: match a response, answer a server request, or skip it. */
void upstream_input(struct upstream *u, const char *line, size_t len);

#endif /* GW_UPSTREAM_H */
