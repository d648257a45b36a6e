/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: one stdio server's start-up and its lists. A start is the clone (GitHub
 * servers), the install command, the child connected (upstream_rpc.c: spawn and handshake),
 * then its tools, prompts, resources and templates listed; a server that says its lists
 * changed is listed again (upstream_refresh). Calls upstream_rpc.c and upstream.c, never
 * the other way round.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/log.h"
#include "base/str.h"
#include "config/config.h"
#include "isolate/isolate.h"
#include "upstream/upstream.h"
#include "upstream/upstream_int.h"

/* The upstream's parts are made and freed by their files: the child's and the protocol's. */
struct upstream *
upstream_new(const struct server_spec *spec, const char *version)
{
	struct upstream *u = calloc(1, sizeof(*u));

	if (u == NULL)
		return NULL;
	u->spec = spec;
	u->version = version;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	up_child_init(&u->child);
	up_proto_init(&u->proto);
	return u;
}

void
upstream_free(struct upstream *u)
{
	if (u == NULL)
		return;
	up_proto_fini(&u->proto);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
	up_child_fini(&u->child);
	free(u);
}

#define UP_MAX_PAGES	1000

/* Follows the pagination of one list method into arr (cleared first). */
static int
list_fetch(struct upstream *u, const char *method, const char *key, json_t *arr, char **err)
{
	json_t *cursor = NULL;
	int page, rc = 0;

	json_array_clear(arr);
	for (page = 0; page < UP_MAX_PAGES; page++) {
		json_t *params = json_object(), *msg = NULL, *res, *items, *next;

		if (cursor)
			json_object_set_new(params, "cursor", cursor);
		cursor = NULL;
		rc = upstream_request(u, method, params, &msg, err);
		json_decref(params);
		if (rc)
			break;
		res = json_object_get(msg, "result");
		items = json_object_get(res, key);
		if (!json_is_array(items)) {
			json_t *e = json_object_get(msg, "error");
			const char *m = json_string_value(json_object_get(e, "message"));

			rc = err_set(err, -EPROTO, "%s", m ? m : "malformed result");
			json_decref(msg);
			break;
		}
		json_array_extend(arr, items);
		next = json_object_get(res, "nextCursor");
		if (json_is_string(next) && *json_string_value(next))
			cursor = json_incref(next);
		json_decref(msg);
		if (cursor == NULL)
			break;
	}
	json_decref(cursor);
	return rc;
}

/* Readers take snapshots under u->lock: a list is replaced whole, never edited in place. */
static void
list_swap(struct upstream *u, json_t **slot, json_t *arr)
{
	json_t *old;

	pthread_mutex_lock(&u->lock);
	old = *slot;
	*slot = arr;
	pthread_mutex_unlock(&u->lock);
	json_decref(old);
}

/*
 * The tools its toolRules hide leave the list here, at every fetch (a list_changed included):
 * what no table routes, no client sees or calls, whatever the server lists later.
 */
static void
tools_filter(struct upstream *u, json_t *arr)
{
	size_t i = 0;

	while (i < json_array_size(arr)) {
		const char *n = json_string_value(json_object_get(json_array_get(arr, i), "name"));

		if (n && !server_tool_allowed(u->spec, n))
			json_array_remove(arr, i);
		else
			i++;
	}
}

static int
tools_fetch(struct upstream *u, char **err)
{
	json_t *arr = json_array();
	char *m = NULL;
	int rc = arr ? list_fetch(u, "tools/list", "tools", arr, &m) : -ENOMEM;

	if (rc) {
		err_set(err, rc, "list tools: %s", m ? m : "failed");
	} else {
		tools_filter(u, arr);
		list_swap(u, &u->proto.tools, json_incref(arr));
	}
	json_decref(arr);
	free(m);
	return rc;
}

/*
 * Prompts, resources and templates of a server that offers them. A server that offers them
 * and then fails to list them still serves its tools: the failure is logged, the list empty.
 */
static void
lists_fetch(struct upstream *u)
{
	static const struct {
		const char *cap;
		const char *method;
		const char *key;
	} l[UP_LIST_COUNT] = {
		[UP_LIST_PROMPTS] = {"prompts", "prompts/list", "prompts"},
		[UP_LIST_RESOURCES] = {"resources", "resources/list", "resources"},
		[UP_LIST_TEMPLATES] = {"resources", "resources/templates/list",
				       "resourceTemplates"},
	};

	for (int i = 0; i < UP_LIST_COUNT; i++) {
		char *err = NULL;

		json_t *arr;

		if (json_object_get(u->proto.caps, l[i].cap) == NULL)
			continue;
		arr = json_array();
		if (arr && list_fetch(u, l[i].method, l[i].key, arr, &err))
			log_warn("cannot list, serving none", "server=%s method=%s error=\"%s\"",
				 u->spec->name, l[i].method, err ? err : "");
		list_swap(u, &u->proto.lists[i], arr);
		free(err);
	}
}

json_t *
upstream_snapshot(struct upstream *u, int which)
{
	json_t *copy;

	pthread_mutex_lock(&u->lock);
	copy = json_deep_copy(which < 0 ? u->proto.tools : u->proto.lists[which]);
	pthread_mutex_unlock(&u->lock);
	return copy;
}

int
upstream_refresh(struct upstream *u, char **err)
{
	int rc = -ESRCH;

	pthread_mutex_lock(&u->child.start_lock);
	pthread_mutex_lock(&u->lock);
	if (u->child.state == UP_RUNNING)
		rc = 0;
	pthread_mutex_unlock(&u->lock);
	if (rc == 0)
		rc = tools_fetch(u, err);
	else
		err_set(err, rc, "server is not running");
	if (rc == 0)
		lists_fetch(u);
	pthread_mutex_unlock(&u->child.start_lock);
	return rc;
}

int
upstream_start(struct upstream *u, char **err)
{
	char *msg = NULL;
	int rc;

	pthread_mutex_lock(&u->child.start_lock);
	if (u->spec->repo) {
		rc = install_repo_clone(u, err);
		if (rc)
			goto out;
	}
	if (u->spec->install) {
		log_info("running install command", "server=%s", u->spec->name);
		rc = install_run_logged(u, u->spec->install, iso_cwd(u->spec), &msg);
		if (rc) {
			err_set(err, rc, "installCmd: %s", msg ? msg : "failed");
			goto out;
		}
	}
	rc = upstream_connect(u, err);
	if (rc)
		goto out;
	rc = tools_fetch(u, err);
	if (rc) {
		upstream_child_stop(u, false);
		goto out;
	}
	lists_fetch(u);
	pthread_mutex_lock(&u->lock);
	u->child.was_ready = true;
	pthread_mutex_unlock(&u->lock);
	log_info("mcp server ready", "server=%s tools=%zu", u->spec->name,
		 json_array_size(u->proto.tools));
out:
	pthread_mutex_unlock(&u->child.start_lock);
	free(msg);
	return rc;
}
