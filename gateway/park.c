/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: 2026-07-28 has no server requests: a server's request during a relayed call
 * becomes an input_required answer with a requestState, and the client's retry carries the
 * answers back to the server, whose request stayed in flight.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_int.h"

/*
 * The gateway's requestStates carry this prefix; a retry with any other requestState is
 * for a server that answered input_required itself, and goes to it unread.
 */
#define PARK_PREFIX	"mcp-gateway."

/*
 * A relayed request of a 2026-07-28 client whose server asked the client something: the
 * HTTP answer was an input_required result naming the questions and a requestState; the
 * upstream request stays in flight until the client retries with that state and its
 * answers. Parks live in h->parks under h->lock and hold a stream reference.
 */
struct park {
	char state[sizeof(PARK_PREFIX) + SESSION_ID_LEN];
	struct stream *st;
	struct sreq *reqs;	/* questions not answered yet, keyed "k<cid>" */
	int64_t since;
	struct park *next;
};

#define PARK_MAX_NS	(600LL * 1000000000LL)	/* a retry that never comes */

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

/* With h->lock held: parks whose client never came back give their request up. */
static void
parks_expire_locked(struct http_server *h, struct park **dead)
{
	int64_t now = time_mono_ns();
	struct park **pp = &h->parks;

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
	struct sreq *r;

	if (cancel)
		stream_abandon(pk->st, "the client did not come back with the input asked for");
	while ((r = pk->reqs) != NULL) {
		pk->reqs = r->next;
		json_decref(r->upid);
		json_decref(r->ask);
		free(r);
	}
	stream_unref(pk->st);
	free(pk);
}

json_t *
park_request(struct stream *st, json_t *msg)
{
	struct http_server *h = st->h;
	struct sreq *r = calloc(1, sizeof(*r));
	struct park *pk;
	unsigned char rnd[SESSION_ID_LEN];
	json_t *out = NULL;
	bool first;

	if (r == NULL)
		return server_request_refuse(json_object_get(msg, "id"), "mcp-gateway: out of "
					     "memory");
	r->u = st->u;
	r->upid = json_incref(json_object_get(msg, "id"));
	r->ask = json_pack("{s:O,s:O}", "method", json_object_get(msg, "method"), "params",
			   json_object_get(msg, "params") ? json_object_get(msg, "params") :
			   json_object());
	/*
	 * This runs on the server's reader with its lock held: nothing here may cancel a
	 * request (that takes the lock again), so expiry happens on the client side.
	 */
	pthread_mutex_lock(&h->lock);
	for (pk = h->parks; pk && pk->st != st; pk = pk->next)
		;
	first = pk == NULL;
	if (first && (pk = calloc(1, sizeof(*pk))) != NULL &&
	    rand_bytes(rnd, sizeof(rnd)) == 0) {
		memcpy(pk->state, PARK_PREFIX, strlen(PARK_PREFIX));
		for (size_t i = 0; i < SESSION_ID_LEN; i++)
			pk->state[strlen(PARK_PREFIX) + i] =
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[rnd[i] & 31];
		pk->st = stream_hold(st);
		pk->since = time_mono_ns();
		pk->next = h->parks;
		h->parks = pk;
	} else if (first) {
		free(pk);
		pk = NULL;
	}
	if (pk) {
		r->cid = ++h->next_park_key;
		r->next = pk->reqs;
		pk->reqs = r;
		r = NULL;
		pthread_mutex_lock(&st->lock);
		/* A question that comes while parked waits for the next retry. */
		if (!st->parked && !st->done) {
			st->parked = true;
			out = input_required(pk);
		}
		pthread_mutex_unlock(&st->lock);
	}
	pthread_mutex_unlock(&h->lock);
	if (r) {
		json_t *id = json_incref(r->upid);

		json_decref(r->upid);
		json_decref(r->ask);
		free(r);
		r = (void *)server_request_refuse(id, "mcp-gateway: out of memory");
		json_decref(id);
		return (json_t *)r;
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
struct stream *
park_resume(struct http_server *h, json_t *params, json_t *id, int fd, bool sse)
{
	const char *state = json_string_value(json_object_get(params, "requestState"));
	json_t *answers = json_object_get(params, "inputResponses"), *again = NULL;
	struct park **pp, *pk = NULL, *dead = NULL;
	struct sreq **rp, *r;
	struct stream *st;

	if (state == NULL)
		return NULL;
	pthread_mutex_lock(&h->lock);
	parks_expire_locked(h, &dead);
	for (pp = &h->parks; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->state, state) == 0) {
			pk = *pp;
			*pp = pk->next;
			break;
		}
	}
	pthread_mutex_unlock(&h->lock);
	while (dead) {
		struct park *next = dead->next;

		park_free(dead, true);
		dead = next;
	}
	if (pk == NULL)
		return NULL;
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
	st = pk->st;
	pthread_mutex_lock(&st->lock);
	json_decref(st->cid);
	st->cid = json_incref(id);
	st->fd = fd;
	st->sse = sse;
	st->out.len = st->off = 0;
	json_decref(st->final);
	st->final = NULL;
	st->parked = false;
	st->done = st->held != NULL;
	if (st->held) {
		json_object_set(st->held, "id", id);
		push_locked(st, st->held, NULL);
		st->final = st->held;
		st->held = NULL;
	} else if (pk->reqs) {
		/* Questions the client has not answered yet: ask again. */
		st->parked = true;
		again = input_required(pk);
	}
	pthread_mutex_unlock(&st->lock);
	if (again) {
		pthread_mutex_lock(&h->lock);
		pk->since = time_mono_ns();
		pk->next = h->parks;
		h->parks = pk;
		stream_ref(st);
		pthread_mutex_unlock(&h->lock);
		stream_finish(st, again);
		json_decref(again);
		return st;
	}
	/* The park's reference becomes the caller's. */
	pk->st = NULL;
	while ((r = pk->reqs) != NULL) {
		pk->reqs = r->next;
		json_decref(r->upid);
		json_decref(r->ask);
		free(r);
	}
	free(pk);
	stream_wake(st);
	return st;
}

/* At shutdown: every parked request is given up. */
void
parks_free(struct http_server *h)
{
	struct park *pk;

	while ((pk = h->parks) != NULL) {
		h->parks = pk->next;
		park_free(pk, true);
	}
}

