/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the aggregated tools, prompts, resources and templates, and how they follow
 * the servers. A server that says its list changed, or one that was restarted, is marked
 * stale and listed again on the housekeeping tick (http.c; never on its own reader, which
 * must keep reading the answers); the tables are rebuilt and swapped under a write lock,
 * and sessions hear the gateway's own list_changed on their GET streams when the merged
 * list differs. Both locks are this file's alone.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/str.h"
#include "session/routes.h"
#include "session/session.h"
#include "upstream/upstream.h"

enum tab_kind {
	TAB_TOOLS,
	TAB_PROMPTS,
	TAB_RESOURCES,
	TAB_TEMPLATES,
	TAB_COUNT,
};

struct lists {
	pthread_rwlock_t tlock;	/* tabs and health: readers route, the refresh swaps */
	struct tool_table tabs[TAB_COUNT];
	char *health;
	pthread_mutex_t lock;	/* stale */
	bool *stale;		/* per upstream: list it again */
};

static const struct {
	const struct route_kind *kind;
	int list;		/* enum up_list, or -1 for tools */
	const char *changed;	/* the notification a change of this table sends */
} kinds[TAB_COUNT] = {
	[TAB_TOOLS] = {&routes_kind_tools, -1, "notifications/tools/list_changed"},
	[TAB_PROMPTS] = {&routes_kind_prompts, UP_LIST_PROMPTS, "notifications/prompts/list_changed"},
	[TAB_RESOURCES] = {&routes_kind_resources, UP_LIST_RESOURCES,
			   "notifications/resources/list_changed"},
	[TAB_TEMPLATES] = {&routes_kind_templates, UP_LIST_TEMPLATES,
			   "notifications/resources/list_changed"},
};

/* Tables from snapshots of every server's lists, servers in name order. */
static int
tables_build(struct http_server *h, struct tool_table out[TAB_COUNT])
{
	struct tool_source *src = calloc(h->conf.nups + 1, sizeof(*src));
	size_t i;
	int k, rc = 0;

	if (src == NULL)
		return -ENOMEM;
	memset(out, 0, sizeof(struct tool_table) * TAB_COUNT);
	for (k = 0; k < TAB_COUNT && rc == 0; k++) {
		for (i = 0; i < h->conf.nups; i++) {
			src[i].server = h->conf.servers[i];
			src[i].tools = upstream_snapshot(h->conf.ups[i], kinds[k].list);
			src[i].ctx = h->conf.ups[i];
		}
		rc = routes_build(src, h->conf.nups, kinds[k].kind, &out[k]);
		for (i = 0; i < h->conf.nups; i++)
			json_decref(src[i].tools);
	}
	free(src);
	if (rc)
		for (k = 0; k < TAB_COUNT; k++)
			routes_free(&out[k]);
	return rc;
}

static bool
table_same(const struct tool_table *a, const struct tool_table *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->v[i].ctx != b->v[i].ctx || !json_equal(a->v[i].tool, b->v[i].tool))
			return false;
	return true;
}

static char *
health_body(struct http_server *h)
{
	json_t *servers = json_array(), *o;
	char *s, *out;
	size_t i;

	for (i = 0; h->conf.servers && h->conf.servers[i]; i++)
		json_array_append_new(servers, json_string(h->conf.servers[i]));
	o = json_pack("{s:o,s:s,s:I,s:I,s:I,s:I}", "servers", servers, "status", "ok", "tools",
		      (json_int_t)h->conf.tools->n, "prompts", (json_int_t)h->conf.prompts->n,
		      "resources", (json_int_t)h->conf.resources->n, "resourceTemplates",
		      (json_int_t)h->conf.templates->n);
	if (o && h->conf.isolation)
		json_object_set(o, "isolation", h->conf.isolation);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	out = s ? str_printf("%s\n", s) : NULL;
	free(s);
	return out;
}

char *
lists_health(struct http_server *h)
{
	struct lists *l = h->lists;
	char *s;

	pthread_rwlock_rdlock(&l->tlock);
	s = strdup(l->health ? l->health : "");
	pthread_rwlock_unlock(&l->tlock);
	return s;
}

void
lists_read(struct http_server *h, void (*fn)(void *arg), void *arg)
{
	pthread_rwlock_rdlock(&h->lists->tlock);
	fn(arg);
	pthread_rwlock_unlock(&h->lists->tlock);
}

/* Rebuilds the tables; tells every session what changed. */
static void
lists_rebuild(struct http_server *h)
{
	struct lists *l = h->lists;
	struct tool_table fresh[TAB_COUNT];
	bool changed[TAB_COUNT];
	char *health;
	int k;

	if (tables_build(h, fresh))
		return;
	pthread_rwlock_wrlock(&l->tlock);
	for (k = 0; k < TAB_COUNT; k++) {
		struct tool_table old = l->tabs[k];

		changed[k] = !table_same(&old, &fresh[k]);
		l->tabs[k] = fresh[k];
		fresh[k] = old;
	}
	health = health_body(h);
	if (health) {
		free(l->health);
		l->health = health;
	}
	pthread_rwlock_unlock(&l->tlock);
	for (k = 0; k < TAB_COUNT; k++) {
		routes_free(&fresh[k]);
		/* Templates and resources share one notification: send it once. */
		if (changed[k] && !(k == TAB_TEMPLATES && changed[TAB_RESOURCES])) {
			json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
					      kinds[k].changed);

			log_info("list changed", "what=%s", kinds[k].kind->what);
			if (n)
				events_broadcast(h, n);
			json_decref(n);
		}
	}
}

bool
lists_refresh(struct http_server *h)
{
	struct lists *l = h->lists;
	size_t i, n = h->conf.nups;
	bool *todo = calloc(n + 1, sizeof(*todo)), any = false;

	if (todo == NULL)
		return false;
	pthread_mutex_lock(&l->lock);
	for (i = 0; i < n; i++) {
		todo[i] = l->stale[i];
		l->stale[i] = false;
		any |= todo[i];
	}
	pthread_mutex_unlock(&l->lock);
	for (i = 0; any && i < n; i++) {
		char *err = NULL;

		if (todo[i] && upstream_refresh(h->conf.ups[i], &err))
			log_warn("cannot list server again", "server=%s error=\"%s\"",
				 h->conf.servers[i], err ? err : "");
		free(err);
	}
	if (any)
		lists_rebuild(h);
	free(todo);
	return any;
}

void
lists_stale(struct http_server *h, struct upstream *u)
{
	struct lists *l = h->lists;
	bool rang = false;
	size_t i;

	pthread_mutex_lock(&l->lock);
	for (i = 0; i < h->conf.nups; i++) {
		if (h->conf.ups[i] == u) {
			l->stale[i] = true;
			rang = true;
		}
	}
	pthread_mutex_unlock(&l->lock);
	if (rang)
		bell_ring(&h->tick);
}

int
lists_start(struct http_server *h)
{
	static const struct tool_table empty;
	struct lists *l = calloc(1, sizeof(*l));
	const struct tool_table **given[TAB_COUNT] = {
		&h->conf.tools, &h->conf.prompts, &h->conf.resources, &h->conf.templates,
	};
	int k, rc;

	if (l == NULL)
		return -ENOMEM;
	h->lists = l;
	pthread_rwlock_init(&l->tlock, NULL);
	pthread_mutex_init(&l->lock, NULL);
	l->stale = calloc(h->conf.nups + 1, sizeof(*l->stale));
	if (l->stale == NULL)
		return -ENOMEM;
	if (h->conf.nups == 0) {
		/* Tables handed in as they are (tests): nothing to follow. */
		for (k = 0; k < TAB_COUNT; k++)
			if (*given[k] == NULL)
				*given[k] = &empty;
		l->health = health_body(h);
		return l->health ? 0 : -ENOMEM;
	}
	rc = tables_build(h, l->tabs);
	if (rc)
		return rc;
	for (k = 0; k < TAB_COUNT; k++)
		*given[k] = &l->tabs[k];
	l->health = health_body(h);
	return l->health ? 0 : -ENOMEM;
}

void
lists_stop(struct http_server *h)
{
	struct lists *l = h->lists;
	int k;

	if (l == NULL)
		return;
	for (k = 0; k < TAB_COUNT; k++)
		routes_free(&l->tabs[k]);
	free(l->stale);
	free(l->health);
	pthread_rwlock_destroy(&l->tlock);
	pthread_mutex_destroy(&l->lock);
	free(l);
	h->lists = NULL;
}
