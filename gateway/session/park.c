/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: 2026-07-28 has no server requests: a server's request during a relayed call
 * becomes an input_required answer with a requestState, and the client's retry carries the
 * answers back to the server, whose request stayed in flight.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/files.h"
#include "session/session.h"
#include "session/stream_int.h"
#include "upstream/upstream.h"
#include "wire/rpc.h"

/*
 * The gateway's requestStates carry this prefix; a retry with any other requestState is
 * for a server that answered input_required itself, and goes to it unread.
 */
#define PARK_PREFIX	"mcp-gateway."

/*
 * A relayed request of a 2026-07-28 client whose server asked the client something: the
 * HTTP answer was an input_required result naming the questions and a requestState; the
 * upstream request stays in flight until the client retries with that state and its
 * answers. Parks live in h->parks, under its lock (this file's alone), and hold a stream
 * reference.
 */
struct park {
	char state[sizeof(PARK_PREFIX) + SESSION_ID_LEN];
	struct stream *st;
	struct sreq *reqs;	/* questions not answered yet, keyed "k<cid>" */
	int64_t since;
	struct park *next;
};

#define PARK_MAX_NS	(600LL * 1000000000LL)	/* a retry that never comes */

struct parks {
	pthread_mutex_t lock;
	struct park *list;
	json_int_t next_key;
};

int
park_init(struct http_server *h)
{
	h->parks = calloc(1, sizeof(*h->parks));
	if (h->parks == NULL)
		return -ENOMEM;
	pthread_mutex_init(&h->parks->lock, NULL);
	return 0;
}

static json_t *
input_required(struct park *pk)
{
	json_t *reqs = json_object(), *res;
	struct sreq *r;

	for (r = pk->reqs; r; r = r->next) {
		char key[32];

		snprintf(key, sizeof(key), "k%lld", (long long)r->cid);
		json_object_set(reqs, key, r->ask);
	}
	res = json_pack("{s:s,s:o,s:s}", "resultType", "input_required", "inputRequests", reqs,
			"requestState", pk->state);
	return rpc_result(pk->st->cid, res);
}

/* With the parks' lock held: parks whose client never came back give their request up. */
static void
expire_locked(struct parks *ps, struct park **dead)
{
	int64_t now = time_mono_ns();
	struct park **pp = &ps->list;

	while (*pp) {
		struct park *pk = *pp;

		if (now - pk->since > PARK_MAX_NS) {
			*pp = pk->next;
			pk->next = *dead;
			*dead = pk;
			continue;
		}
		pp = &pk->next;
	}
}

static void
park_free(struct park *pk, bool cancel)
{
	if (cancel)
		stream_abandon(pk->st, "the client did not come back with the input asked for");
	session_sreqs_free(pk->reqs);
	stream_unref(pk->st);
	free(pk);
}

/* A fresh requestState: the prefix and random base32. */
static int
park_state(char *state)
{
	unsigned char rnd[SESSION_ID_LEN];

	if (rand_bytes(rnd, sizeof(rnd)))
		return -EIO;
	memcpy(state, PARK_PREFIX, strlen(PARK_PREFIX));
	for (size_t i = 0; i < SESSION_ID_LEN; i++)
		state[strlen(PARK_PREFIX) + i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[rnd[i] & 31];
	return 0;
}

/* With the parks' lock held: st's park, a new one if it has none; NULL: out of memory. */
static struct park *
park_get_locked(struct parks *ps, struct stream *st)
{
	struct park *pk;

	for (pk = ps->list; pk && pk->st != st; pk = pk->next)
		;
	if (pk)
		return pk;
	pk = calloc(1, sizeof(*pk));
	if (pk == NULL || park_state(pk->state)) {
		free(pk);
		return NULL;
	}
	pk->st = stream_hold(st);
	pk->since = time_mono_ns();
	pk->next = ps->list;
	ps->list = pk;
	return pk;
}

json_t *
park_request(struct stream *st, json_t *msg)
{
	struct parks *ps = st->h->parks;
	json_t *id = json_object_get(msg, "id"), *out = NULL;
	struct sreq *r = calloc(1, sizeof(*r));
	struct park *pk;

	if (r == NULL)
		return rpc_error(id, RPC_METHOD_NOT_FOUND, "mcp-gateway: out of memory");
	r->u = st->u;
	r->upid = json_incref(id);
	r->ask = json_pack("{s:O,s:O}", "method", json_object_get(msg, "method"), "params",
			   json_object_get(msg, "params") ? json_object_get(msg, "params") :
			   json_object());
	/*
	 * This runs on the server's reader with its lock held: nothing here may cancel a
	 * request (that takes the lock again), so expiry happens on the client side.
	 */
	pthread_mutex_lock(&ps->lock);
	pk = park_get_locked(ps, st);
	if (pk) {
		r->cid = ++ps->next_key;
		r->next = pk->reqs;
		pk->reqs = r;
		r = NULL;
		if (stream_park(st))
			out = input_required(pk);
	}
	pthread_mutex_unlock(&ps->lock);
	if (r) {
		json_decref(r->upid);
		json_decref(r->ask);
		free(r);
		return rpc_error(id, RPC_METHOD_NOT_FOUND, "mcp-gateway: out of memory");
	}
	if (out) {
		stream_finish(st, out);
		json_decref(out);
	}
	return NULL;
}

bool
park_owns(json_t *state)
{
	return json_is_string(state) && strncmp(json_string_value(state), PARK_PREFIX,
						strlen(PARK_PREFIX)) == 0;
}

/*
 * A 2026-07-28 retry naming a requestState: the answers go to the server under its own ids
 * and the stream, with its request still in flight, answers this HTTP request instead.
 * Returns the stream (the reference passes to the caller), or NULL for an unknown state.
 */
/* The answers the retry carries go to their server; the questions left stay on pk. */
static void
answers_send(struct park *pk, json_t *answers)
{
	struct sreq **rp, *r;

	for (rp = &pk->reqs; (r = *rp) != NULL; ) {
		char key[32];
		json_t *a;

		snprintf(key, sizeof(key), "k%lld", (long long)r->cid);
		a = json_object_get(answers, key);
		if (a == NULL) {
			rp = &r->next;
			continue;
		}
		*rp = r->next;
		upstream_respond(r->u, r->upid, a, NULL);
		json_decref(r->upid);
		json_decref(r->ask);
		free(r);
	}
}

/* pk leaves the list for good: its stream reference becomes the caller's. */
static struct stream *
park_close(struct park *pk)
{
	struct stream *st = pk->st;

	pk->st = NULL;
	session_sreqs_free(pk->reqs);
	free(pk);
	return st;
}

/*
 * A 2026-07-28 retry naming a requestState: the answers go to the server under its own ids
 * and the stream, with its request still in flight, answers this HTTP request instead.
 * Returns the stream (the reference passes to the caller), or NULL for an unknown state.
 */
struct stream *
park_resume(struct http_server *h, json_t *params, json_t *id, int fd, bool sse)
{
	const char *state = json_string_value(json_object_get(params, "requestState"));
	struct parks *ps = h->parks;
	struct park **pp, *pk = NULL, *dead = NULL;
	struct stream *st;
	json_t *again;

	if (state == NULL)
		return NULL;
	pthread_mutex_lock(&ps->lock);
	expire_locked(ps, &dead);
	for (pp = &ps->list; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->state, state) == 0) {
			pk = *pp;
			*pp = pk->next;
			break;
		}
	}
	pthread_mutex_unlock(&ps->lock);
	while (dead) {
		struct park *next = dead->next;

		park_free(dead, true);
		dead = next;
	}
	if (pk == NULL)
		return NULL;
	answers_send(pk, json_object_get(params, "inputResponses"));
	st = pk->st;
	again = NULL;
	/* Questions the client has not answered yet: ask again. */
	if (!stream_retry(st, id, fd, sse, pk->reqs != NULL) && pk->reqs)
		again = input_required(pk);
	if (again) {
		stream_ref(st);
		pthread_mutex_lock(&ps->lock);
		pk->since = time_mono_ns();
		pk->next = ps->list;
		ps->list = pk;
		pthread_mutex_unlock(&ps->lock);
		stream_finish(st, again);
		json_decref(again);
		return st;
	}
	st = park_close(pk);
	stream_wake(st);
	return st;
}

void
park_free_all(struct http_server *h)
{
	struct park *pk;

	if (h->parks == NULL)
		return;
	while ((pk = h->parks->list) != NULL) {
		h->parks->list = pk->next;
		park_free(pk, true);
	}
	pthread_mutex_destroy(&h->parks->lock);
	free(h->parks);
	h->parks = NULL;
}
