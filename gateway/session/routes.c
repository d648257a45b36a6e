/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the routing tables: the tools, prompts, resources and templates of all servers
 * merged into one namespace each. Servers come in name order; the first keeps an item's plain
 * name and later ones get "<server>_<name>" (where the kind renames), so the exported names
 * are stable for a given config. Also which template a resource URI expands.
 */

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/str.h"
#include "session/routes.h"

char *
routes_name_sanitise(const char *s)
{
	char *d = strdup(s), *p;

	for (p = d; p && *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-'))
			*p = '_';
	return d;
}

static bool
schema_is_object(json_t *schema)
{
	const char *t = json_string_value(json_object_get(schema, "type"));

	return json_is_object(schema) && t && strcmp(t, "object") == 0;
}

static bool
table_has(const struct tool_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			return true;
	return false;
}

static int
route_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tool_route *)a)->name, ((const struct tool_route *)b)->name);
}

static int
table_add(struct tool_table *t, const struct route_kind *k, const char *name,
	  const char *orig, void *ctx, json_t *item)
{
	struct tool_route *nv = realloc(t->v, (t->n + 1) * sizeof(*nv));
	json_t *copy;

	if (nv == NULL)
		return -ENOMEM;
	t->v = nv;
	copy = json_deep_copy(item);
	if (copy == NULL)
		return -ENOMEM;
	json_object_set_new(copy, k->key, json_string(name));
	if (k->tools && (json_object_get(copy, "inputSchema") == NULL ||
			 json_is_null(json_object_get(copy, "inputSchema"))))
		json_object_set_new(copy, "inputSchema", json_pack("{s:s}", "type", "object"));
	nv[t->n].name = strdup(name);
	nv[t->n].orig = strdup(orig);
	nv[t->n].ctx = ctx;
	nv[t->n].tool = copy;
	t->n++;
	return 0;
}

const struct route_kind routes_kind_tools = {"tool", "name", true, true, "skipping duplicate tool"};
const struct route_kind routes_kind_prompts = {"prompt", "name", true, false,
					 "skipping duplicate prompt"};
const struct route_kind routes_kind_resources = {"resource", "uri", false, false,
					   "skipping duplicate URI"};
const struct route_kind routes_kind_templates = {"resource template", "uriTemplate", false, false,
					   "skipping duplicate URI template"};

/* The exported name of one item, or NULL to skip it (alt holds a malloc'd new name). */
static const char *
route_name(const struct tool_table *t, const struct route_kind *k, const char *server,
	   const char *san, const char *orig, char **alt)
{
	*alt = NULL;
	if (!table_has(t, orig))
		return orig;
	if (k->rename) {
		*alt = str_printf("%s_%s", san, orig);
		if (*alt && !table_has(t, *alt))
			return *alt;
		free(*alt);
		*alt = NULL;
	}
	/* URIs name the same thing everywhere: the first server (in name order) keeps it. */
	log_warn(k->dup_msg, "server=%s %s=%s", server, k->key, orig);
	return NULL;
}

int
routes_build(const struct tool_source *src, size_t n, const struct route_kind *k,
	     struct tool_table *t)
{
	size_t i, j;
	json_t *item;
	int rc;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++) {
		char *san = routes_name_sanitise(src[i].server);

		json_array_foreach(src[i].tools, j, item) {
			const char *orig = json_string_value(json_object_get(item, k->key));
			json_t *schema = json_object_get(item, "inputSchema");
			const char *name;
			char *alt;

			if (!json_is_object(item) || orig == NULL || *orig == '\0')
				continue;
			/* The reference's SDK refuses such tools; clients might too. */
			if (k->tools && schema && !json_is_null(schema) &&
			    !schema_is_object(schema)) {
				log_warn("skipping tool with invalid schema", "server=%s tool=%s",
					 src[i].server, orig);
				continue;
			}
			name = route_name(t, k, src[i].server, san, orig, &alt);
			if (name == NULL)
				continue;
			rc = table_add(t, k, name, orig, src[i].ctx, item);
			free(alt);
			if (rc) {
				free(san);
				routes_free(t);
				return rc;
			}
		}
		free(san);
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), route_cmp);
	return 0;
}

int
routes_build_tools(const struct tool_source *src, size_t n, struct tool_table *t)
{
	return routes_build(src, n, &routes_kind_tools, t);
}

const struct tool_route *
routes_find(const struct tool_table *t, const char *name)
{
	struct tool_route key = {.name = (char *)name};

	if (t->n == 0)
		return NULL;
	return bsearch(&key, t->v, t->n, sizeof(*t->v), route_cmp);
}

void
routes_free(struct tool_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].orig);
		json_decref(t->v[i].tool);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/*
 * Literal text must match; "{var}" matches a non-empty run without '/', any other
 * expression ({+var}, {/var}, {?q}, ...) matches whatever is left of that stretch.
 */
bool
routes_template_match(const char *tpl, const char *uri)
{
	while (*tpl) {
		if (*tpl == '{') {
			const char *close = strchr(tpl, '}');
			bool simple = tpl[1] != '+' && tpl[1] != '#' && tpl[1] != '/' &&
				      tpl[1] != '?' && tpl[1] != '&' && tpl[1] != '.' &&
				      tpl[1] != ';';

			if (close == NULL)
				return false;
			tpl = close + 1;
			if (!simple) {
				if (*tpl == '\0')
					return true;
				for (; *uri; uri++)
					if (routes_template_match(tpl, uri))
						return true;
				return false;
			}
			if (*uri == '\0' || *uri == '/')
				return false;
			for (uri++; ; uri++) {
				if (routes_template_match(tpl, uri))
					return true;
				if (*uri == '\0' || *uri == '/')
					return false;
			}
		}
		if (*tpl++ != *uri++)
			return false;
	}
	return *uri == '\0';
}
