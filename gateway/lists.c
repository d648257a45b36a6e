/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the aggregated tools, prompts, resources and templates, and how they follow
 * the servers. A server that says its list changed, or one that was restarted, is listed
 * again by a refresher thread (never its own reader, which must keep reading the answers);
 * the tables are rebuilt and swapped under a write lock, and sessions hear the gateway's
 * own list_changed on their GET streams when the merged list differs.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

static const struct {
	const struct route_kind *kind;
	int list;		/* enum up_list, or -1 for tools */
	const char *changed;	/* the notification a change of this table sends */
} kinds[TAB_COUNT] = {
	[TAB_TOOLS] = {&route_tools, -1, "notifications/tools/list_changed"},
	[TAB_PROMPTS] = {&route_prompts, UP_LIST_PROMPTS, "notifications/prompts/list_changed"},
	[TAB_RESOURCES] = {&route_resources, UP_LIST_RESOURCES,
			   "notifications/resources/list_changed"},
	[TAB_TEMPLATES] = {&route_templates, UP_LIST_TEMPLATES,
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
http_health(struct http_server *h)
{
	return lists_health(h);
}

char *
lists_health(struct http_server *h)
{
	char *s;

	pthread_rwlock_rdlock(&h->tlock);
	s = strdup(h->health ? h->health : "");
	pthread_rwlock_unlock(&h->tlock);
	return s;
}

/* Rebuilds the tables; tells every session what changed. */
static void
lists_rebuild(struct http_server *h)
{
	struct tool_table fresh[TAB_COUNT];
	bool changed[TAB_COUNT];
	char *health;
	int k;

	if (tables_build(h, fresh))
		return;
	pthread_rwlock_wrlock(&h->tlock);
	for (k = 0; k < TAB_COUNT; k++) {
		struct tool_table old = h->tabs[k];

		changed[k] = !table_same(&old, &fresh[k]);
		h->tabs[k] = fresh[k];
		fresh[k] = old;
	}
	health = health_body(h);
	if (health) {
		free(h->health);
		h->health = health;
	}
	pthread_rwlock_unlock(&h->tlock);
	for (k = 0; k < TAB_COUNT; k++) {
		routes_free(&fresh[k]);
		/* Templates and resources share one notification: send it once. */
		if (changed[k] && !(k == TAB_TEMPLATES && changed[TAB_RESOURCES])) {
			json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
					      kinds[k].changed);

			log_info("list changed", "what=%s", kinds[k].kind->what);
			if (n)
				relay_broadcast(h, n);
			json_decref(n);
		}
	}
}

static void *
refresher_main(void *arg)
{
	struct http_server *h = arg;
	size_t i, n = h->conf.nups;
	bool *todo = calloc(n + 1, sizeof(*todo));

	if (todo == NULL)
		return NULL;
	pthread_mutex_lock(&h->lock);
	for (;;) {
		bool any = false;

		for (i = 0; i < n; i++) {
			todo[i] = h->stale[i];
			h->stale[i] = false;
			any |= todo[i];
		}
		if (!any && h->refresh_stop)
			break;
		if (!any && h->ndetached) {
			/* This thread also ends POST streams nobody resumed (resume.c). */
			struct timespec ts;
			int64_t next;

			pthread_mutex_unlock(&h->lock);
			next = resume_sweep(h);
			pthread_mutex_lock(&h->lock);
			if (next > 0 && !h->refresh_stop) {
				time_deadline(&ts, next);
				pthread_cond_timedwait(&h->rcond, &h->lock, &ts);
			}
			continue;
		}
		if (!any) {
			pthread_cond_wait(&h->rcond, &h->lock);
			continue;
		}
		pthread_mutex_unlock(&h->lock);
		for (i = 0; i < n; i++) {
			char *err = NULL;

			if (todo[i] && upstream_refresh(h->conf.ups[i], &err))
				log_warn("cannot list server again", "server=%s error=\"%s\"",
					 h->conf.servers[i], err ? err : "");
			free(err);
		}
		lists_rebuild(h);
		pthread_mutex_lock(&h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	free(todo);
	return NULL;
}

/* With h->lock held. */
void
lists_stale_locked(struct http_server *h, struct upstream *u)
{
	size_t i;

	for (i = 0; i < h->conf.nups; i++) {
		if (h->conf.ups[i] == u) {
			h->stale[i] = true;
			pthread_cond_signal(&h->rcond);
		}
	}
}

int
lists_start(struct http_server *h)
{
	static const struct tool_table empty;
	const struct tool_table **given[TAB_COUNT] = {
		&h->conf.tools, &h->conf.prompts, &h->conf.resources, &h->conf.templates,
	};
	int k, rc;

	pthread_rwlock_init(&h->tlock, NULL);
	pthread_cond_init(&h->rcond, NULL);
	if (h->conf.nups == 0) {
		/* Tables handed in as they are (tests): nothing to follow. */
		for (k = 0; k < TAB_COUNT; k++)
			if (*given[k] == NULL)
				*given[k] = &empty;
		h->health = health_body(h);
		return h->health ? 0 : -ENOMEM;
	}
	h->stale = calloc(h->conf.nups, sizeof(*h->stale));
	if (h->stale == NULL)
		return -ENOMEM;
	rc = tables_build(h, h->tabs);
	if (rc)
		return rc;
	for (k = 0; k < TAB_COUNT; k++)
		*given[k] = &h->tabs[k];
	h->health = health_body(h);
	if (h->health == NULL)
		return -ENOMEM;
	if (pthread_create(&h->refresher, NULL, refresher_main, h))
		return -EAGAIN;
	h->refresher_on = true;
	return 0;
}

void
lists_stop(struct http_server *h)
{
	int k;

	if (h->refresher_on) {
		pthread_mutex_lock(&h->lock);
		h->refresh_stop = true;
		pthread_cond_signal(&h->rcond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->refresher, NULL);
		h->refresher_on = false;
	}
	for (k = 0; k < TAB_COUNT; k++)
		routes_free(&h->tabs[k]);
	free(h->stale);
	h->stale = NULL;
	free(h->health);
	h->health = NULL;
	pthread_rwlock_destroy(&h->tlock);
	pthread_cond_destroy(&h->rcond);
}
