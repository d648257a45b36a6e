/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the HTTP server's life besides the daemon (server.c): its state built and
 * freed in order, the upstreams' events taken, the housekeeping tick, and the event loop
 * that runs the daemon and reads the servers' output. http.c's daemon runs on top of it.
 */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/audit.h"
#include "base/clock.h"
#include "base/loop.h"
#include "base/str.h"
#include "http/http.h"
#include "http/server.h"
#include "session/http_conf.h"
#include "session/session.h"
#include "upstream/upstream.h"


/*
 * What upstreams send outside any call (up_event_fn): list changes mark the server stale,
 * task status goes to the tasks extension, the rest to every session that listens.
 */
static bool
upstream_event(void *ctx, struct upstream *u, json_t *msg)
{
	struct http_server *h = ctx;
	const char *method = json_string_value(json_object_get(msg, "method"));

	if (method == NULL)
		return false;
	if (json_object_get(msg, "id"))
		return strcmp(method, "roots/list") == 0 && session_roots_ask(h, u, msg);
	/* The merged lists change, not the server's: the gateway lists it and tells. */
	if (strcmp(method, "notifications/tools/list_changed") == 0 ||
	    strcmp(method, "notifications/prompts/list_changed") == 0 ||
	    strcmp(method, "notifications/resources/list_changed") == 0) {
		lists_stale(h, u);
		return false;
	}
	if (strcmp(method, "notifications/tasks/status") == 0)
		tasks_notify(h, u, msg);
	else
		events_broadcast(h, msg);
	return false;
}

/* ---- the server and its housekeeping tick ------------------------------------------------ */

/*
 * The tick: servers whose lists went stale are listed again, and POST streams nobody
 * resumed within --resume-window are cancelled. It sleeps until lists.c or resume.c rings.
 */
static void *
tick_main(void *arg)
{
	struct http_server *h = arg;

	for (;;) {
		if (lists_refresh(h))
			continue;
		if (bell_stopped(&h->tick))
			break;
		bell_wait(&h->tick, resume_sweep(h));
	}
	return NULL;
}

static void
tick_stop(struct http_server *h)
{
	if (!h->ticker_on)
		return;
	bell_stop(&h->tick);
	pthread_join(h->ticker, NULL);
	h->ticker_on = false;
}

void
server_free(struct http_server *h)
{
	size_t i;

	for (i = 0; i < h->conf.nups; i++)
		upstream_set_events(h->conf.ups[i], NULL, NULL);
	tick_stop(h);
	park_free_all(h);
	tasks_free(h);
	resume_free_all(h);
	session_free_all(h);
	lists_stop(h);
	waiter_free(h);
	bell_fini(&h->tick);
	pthread_mutex_destroy(&h->active_lock);
	pthread_cond_destroy(&h->active_cond);
	free(h);
}

/* Everything but the daemon: the lists built, the tick running, the upstreams' events ours. */
struct http_server *
server_new(const struct http_conf *conf, char **err)
{
	struct http_server *h = calloc(1, sizeof(*h));
	size_t i;

	if (h == NULL) {
		err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	h->conf = *conf;
	if (h->conf.port == 0)
		h->conf.port = GW_DEFAULT_PORT;
	session_init(h);
	pthread_mutex_init(&h->active_lock, NULL);
	pthread_cond_init(&h->active_cond, NULL);
	bell_init(&h->tick);
	if (lists_start(h)) {
		err_set(err, -ENOMEM, "build the aggregated lists: out of memory");
		server_free(h);
		return NULL;
	}
	if (park_init(h) || resume_init(h) || tasks_init(h) || waiter_init(h)) {
		err_set(err, -ENOMEM, "out of memory");
		server_free(h);
		return NULL;
	}
	if (pthread_create(&h->ticker, NULL, tick_main, h)) {
		err_set(err, -EAGAIN, "cannot start the housekeeping thread");
		server_free(h);
		return NULL;
	}
	h->ticker_on = true;
	for (i = 0; i < h->conf.nups; i++)
		upstream_set_events(h->conf.ups[i], upstream_event, h);
	return h;
}

/* ---- the event loop that runs the daemon ------------------------------------------------ */

/*
 * After every batch of the loop: the daemon's own work, which includes the connections
 * that the batch's answers resumed, so an answer leaves on the thread that read it.
 */
static int
daemon_turn(void *ctx)
{
	struct http_server *h = ctx;
	int ms;

	/*
	 * The audit lines of the calls this turn ended, read from the pipes before it or
	 * answered in it, leave in one write at its end (the first turn, before any event,
	 * makes this thread the log's holder).
	 */
	audit_hold(h->conf.audit);
	ms = hd_turn(h->d);
	audit_flush(h->conf.audit);
	return ms;
}

/* The HTTP server's connections in the loop's set, the servers' pipes beside them. */
int
server_loop_attach(struct http_server *h)
{
	h->loop = loop_new(daemon_turn, h);
	if (h->loop == NULL)
		return -ENOMEM;
	loop_set_busy_poll(h->loop, h->conf.busy_poll_ns);
	waiter_use_loop(h->waiter, h->loop);
	if (hd_attach(h->d, h->loop) || loop_start(h->loop))
		return -EAGAIN;
	for (size_t i = 0; i < h->conf.nups; i++)
		upstream_use_loop(h->conf.ups[i], h->loop);
	return 0;
}

void
server_loop_detach(struct http_server *h)
{
	/* The daemon is the loop's until its thread ends; the servers are closed by now. */
	for (size_t i = 0; h->loop && i < h->conf.nups; i++)
		upstream_use_loop(h->conf.ups[i], NULL);
	if (h->waiter)
		waiter_use_loop(h->waiter, NULL);
	loop_free(h->loop);
	h->loop = NULL;
}
