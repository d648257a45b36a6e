/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the tasks extension (io.modelcontextprotocol/tasks, SEP-2663) for 2026-07-28
 * clients. Servers create and run the tasks; the gateway only names them. A task id is a
 * server's, unique on that server alone, so the client gets an id of the gateway's that
 * maps to (server, its id), as request ids do; tasks/get, tasks/update and tasks/cancel go
 * to the owner under its own id, and its answers and status notifications come back under
 * the client's. The gateway never parses what a task holds.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/files.h"
#include "session/session.h"
#include "upstream/upstream.h"
#include "wire/rpc.h"

#define TASK_MAX	4096	/* mapped ids kept at once; the oldest goes first */
#define TASK_TTL_MS	3600000LL	/* a task that names no ttlMs */
#define TASK_TTL_MAX_MS	(24LL * 3600000LL)

struct task {
	char id[SESSION_ID_LEN + 1];	/* the client's */
	struct upstream *u;
	char *upid;			/* the server's */
	int64_t expires;		/* monotonic ns */
	struct task *next;		/* newest first */
};

/* The client's task ids, under a lock of this file's alone. */
struct task_map {
	pthread_mutex_t lock;
	struct task *list;
	size_t n;
};

int
tasks_init(struct http_server *h)
{
	h->tasks = calloc(1, sizeof(*h->tasks));
	if (h->tasks == NULL)
		return -ENOMEM;
	pthread_mutex_init(&h->tasks->lock, NULL);
	return 0;
}

bool
tasks_method(const char *method)
{
	return strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
	       strcmp(method, "tasks/cancel") == 0;
}

bool
tasks_offered(struct http_server *h)
{
	size_t i;

	for (i = 0; i < h->conf.nups; i++)
		if (json_object_get(json_object_get(upstream_caps(h->conf.ups[i]), "extensions"),
				    EXT_TASKS))
			return true;
	return false;
}

/* With the map's lock held: the live mapping of a client's id, dropping expired ones. */
static struct task *
find_locked(struct task_map *m, const char *id, struct upstream *u, const char *upid)
{
	int64_t now = time_mono_ns();
	struct task **pp = &m->list, *t;

	while ((t = *pp) != NULL) {
		if (t->expires < now) {
			*pp = t->next;
			free(t->upid);
			free(t);
			m->n--;
			continue;
		}
		if (id ? strcmp(t->id, id) == 0 : t->u == u && strcmp(t->upid, upid) == 0)
			return t;
		pp = &t->next;
	}
	return NULL;
}

/* With the map's lock held: a new client id for a server's task; NULL: out of memory. */
static struct task *
add_locked(struct task_map *m, struct upstream *u, const char *upid, json_int_t ttl_ms)
{
	struct task *t = calloc(1, sizeof(*t)), **pp;
	unsigned char rnd[SESSION_ID_LEN];
	size_t i;

	if (t == NULL || (t->upid = strdup(upid)) == NULL || rand_bytes(rnd, sizeof(rnd))) {
		if (t)
			free(t->upid);
		free(t);
		return NULL;
	}
	for (i = 0; i < SESSION_ID_LEN; i++)
		t->id[i] = "abcdefghijklmnopqrstuvwxyz234567"[rnd[i] & 31];
	if (ttl_ms <= 0 || ttl_ms > TASK_TTL_MAX_MS)
		ttl_ms = ttl_ms <= 0 ? TASK_TTL_MS : TASK_TTL_MAX_MS;
	/* A minute beyond the task's own lifetime: a late tasks/get still finds its owner. */
	t->expires = time_mono_ns() + (ttl_ms + 60000) * 1000000LL;
	t->u = u;
	t->next = m->list;
	m->list = t;
	if (++m->n > TASK_MAX) {
		for (pp = &m->list; (*pp)->next; pp = &(*pp)->next)
			;
		free((*pp)->upid);
		free(*pp);
		*pp = NULL;
		m->n--;
	}
	return t;
}

void
tasks_route(struct http_server *h, struct session *s, json_t *id, json_t *params,
	    struct forward *f)
{
	const char *tid = json_string_value(json_object_get(params, "taskId"));
	struct task *t;
	char *upid = NULL;

	if (!s->tasks) {
		json_t *e = rpc_error(id, RPC_MISSING_CAPABILITY, "Missing required client "
				      "capability: the tasks extension (" EXT_TASKS ")");

		json_object_set_new(json_object_get(e, "error"), "data", json_pack("{s:{s:{s:{}}}}",
				    "requiredCapabilities", "extensions", EXT_TASKS));
		f->reply = e;
		return;
	}
	pthread_mutex_lock(&h->tasks->lock);
	t = tid ? find_locked(h->tasks, tid, NULL, NULL) : NULL;
	if (t) {
		f->u = t->u;
		upid = strdup(t->upid);
	}
	pthread_mutex_unlock(&h->tasks->lock);
	if (t == NULL || upid == NULL) {
		free(upid);
		f->u = NULL;
		f->reply = rpc_error(id, RPC_INVALID_PARAMS, tid ?
				     "Invalid params: unknown taskId" :
				     "Invalid params: missing taskId");
		return;
	}
	f->params = json_copy(params);
	json_object_set_new(f->params, "taskId", json_string(upid));
	free(upid);
}

/* obj's taskId, a server's, becomes the client's (a new one for a task just created). */
static bool
rename_task(struct http_server *h, struct upstream *u, json_t *obj, bool created)
{
	const char *upid = json_string_value(json_object_get(obj, "taskId"));
	struct task *t;
	char id[SESSION_ID_LEN + 1];

	if (upid == NULL)
		return false;
	pthread_mutex_lock(&h->tasks->lock);
	t = find_locked(h->tasks, NULL, u, upid);
	if (t == NULL && created)
		t = add_locked(h->tasks, u, upid, json_integer_value(json_object_get(obj, "ttlMs")));
	if (t)
		memcpy(id, t->id, sizeof(id));
	pthread_mutex_unlock(&h->tasks->lock);
	if (t == NULL)
		return false;
	json_object_set_new(obj, "taskId", json_string(id));
	return true;
}

void
tasks_result(struct http_server *h, struct upstream *u, json_t *msg)
{
	json_t *res = json_object_get(msg, "result");
	const char *type = json_string_value(json_object_get(res, "resultType"));

	if (json_is_object(res) && u != NULL)
		rename_task(h, u, res, type && strcmp(type, "task") == 0);
}

void
tasks_notify(struct http_server *h, struct upstream *u, json_t *msg)
{
	json_t *out = json_deep_copy(msg);

	if (out && rename_task(h, u, json_object_get(out, "params"), false))
		events_broadcast(h, out);
	json_decref(out);
}

void
tasks_free(struct http_server *h)
{
	struct task *t;

	if (h->tasks == NULL)
		return;
	while ((t = h->tasks->list) != NULL) {
		h->tasks->list = t->next;
		free(t->upid);
		free(t);
	}
	pthread_mutex_destroy(&h->tasks->lock);
	free(h->tasks);
	h->tasks = NULL;
}
