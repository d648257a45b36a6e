/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: the built-in server catalog and the template's override file. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "base/str.h"
#include "config/config.h"

/* Same format as the override file, so one parser validates both. */
static const char catalog_builtin[] =
	"{"
	"\"duckduckgo\":{\"description\":\"Web search through DuckDuckGo.\","
	"\"command\":[[\"uvx\",\"duckduckgo-mcp-server\"]],"
	"\"install\":[[\"uv\",\"tool\",\"install\",\"duckduckgo-mcp-server\"]]},"
	"\"arxiv\":{\"description\":\"Search, download, and read arXiv papers.\","
	"\"command\":[[\"uvx\",\"arxiv-mcp-server\"],[\"--storage-path\",\"{{storagePath}}\"]],"
	"\"install\":[[\"uv\",\"tool\",\"install\",\"arxiv-mcp-server\"]],"
	"\"properties\":{\"storagePath\":{\"type\":\"string\",\"writable\":true}}},"
	"\"fetch\":{\"description\":\"Fetch web pages and convert them to Markdown.\","
	"\"command\":[[\"uvx\",\"mcp-server-fetch\"]],"
	"\"install\":[[\"uv\",\"tool\",\"install\",\"mcp-server-fetch\"]]},"
	"\"time\":{\"description\":\"Current time and time zone conversion.\","
	"\"command\":[[\"uvx\",\"mcp-server-time\"]],"
	"\"install\":[[\"uv\",\"tool\",\"install\",\"mcp-server-time\"]]},"
	"\"filesystem\":{\"description\":"
	"\"Read and write files under the configured directories.\","
	"\"command\":[[\"npx\",\"-y\",\"@modelcontextprotocol/server-filesystem\"],"
	"[\"{{paths}}\"]],"
	"\"install\":[[\"npm\",\"cache\",\"add\",\"@modelcontextprotocol/server-filesystem\"]],"
	"\"properties\":{\"paths\":{\"type\":\"array\",\"required\":true,"
	"\"writable\":true}}},"
	"\"memory\":{\"description\":\"Knowledge-graph based persistent memory.\","
	"\"command\":[[\"npx\",\"-y\",\"@modelcontextprotocol/server-memory\"]],"
	"\"install\":[[\"npm\",\"cache\",\"add\",\"@modelcontextprotocol/server-memory\"]]},"
	"\"sequentialthinking\":{\"description\":\"Structured step-by-step problem solving.\","
	"\"command\":[[\"npx\",\"-y\",\"@modelcontextprotocol/server-sequential-thinking\"]],"
	"\"install\":[[\"npm\",\"cache\",\"add\","
	"\"@modelcontextprotocol/server-sequential-thinking\"]]}"
	"}";

static bool
strarray_valid(json_t *a)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a))
		return false;
	json_array_foreach(a, i, v)
		if (!json_is_string(v))
			return false;
	return true;
}

static int
entry_check(const char *name, json_t *e, char **err)
{
	json_t *cmd = json_object_get(e, "command");
	json_t *props, *env, *inst, *v, *p;
	const char *k;
	size_t i;

	if (!json_is_object(e))
		return err_set(err, -EINVAL, "server \"%s\": entry must be a JSON object", name);
	if (json_object_get(e, "description") &&
	    !json_is_string(json_object_get(e, "description")))
		return err_set(err, -EINVAL, "server \"%s\": description must be a string", name);
	if (cmd != NULL && !json_is_null(cmd) && !json_is_array(cmd))
		return err_set(err, -EINVAL, "server \"%s\": command must be a list of argument "
			       "lists", name);
	if (!json_is_array(cmd) || json_array_size(cmd) == 0 ||
	    !json_is_array(json_array_get(cmd, 0)) ||
	    json_array_size(json_array_get(cmd, 0)) == 0)
		return err_set(err, -EINVAL, "server \"%s\": command is empty", name);
	json_array_foreach(cmd, i, v)
		if (!strarray_valid(v))
			return err_set(err, -EINVAL, "server \"%s\": command must be a list of "
				       "argument lists", name);
	env = json_object_get(e, "env");
	if (env && !json_is_null(env)) {
		if (!json_is_object(env))
			return err_set(err, -EINVAL, "server \"%s\": env must map names to "
				       "strings", name);
		json_object_foreach(env, k, v)
			if (!json_is_string(v))
				return err_set(err, -EINVAL, "server \"%s\": env must map names "
					       "to strings", name);
	}
	inst = json_object_get(e, "install");
	if (inst && !json_is_null(inst)) {
		if (!json_is_array(inst))
			return err_set(err, -EINVAL, "server \"%s\": install must be a list of "
				       "commands", name);
		json_array_foreach(inst, i, v)
			if (!strarray_valid(v) || json_array_size(v) == 0)
				return err_set(err, -EINVAL, "server \"%s\": install must be a "
					       "list of non-empty commands", name);
	}
	props = json_object_get(e, "properties");
	if (props && !json_is_null(props)) {
		if (!json_is_object(props))
			return err_set(err, -EINVAL, "server \"%s\": properties must be an "
				       "object", name);
		json_object_foreach(props, k, p) {
			const char *t = json_string_value(json_object_get(p, "type"));

			if (!json_is_object(p))
				return err_set(err, -EINVAL, "server \"%s\": property \"%s\" must "
					       "be an object", name, k);
			if (t == NULL || (strcmp(t, "string") && strcmp(t, "array") &&
					  strcmp(t, "number") && strcmp(t, "boolean")))
				return err_set(err, -EINVAL, "server \"%s\": property \"%s\" has "
					       "unsupported type \"%s\"", name, k, t ? t : "");
		}
	}
	return 0;
}

int
catalog_parse(const char *text, const char *origin, json_t **out, char **err)
{
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr), *e;
	const char *name;
	int rc;

	if (root == NULL)
		return err_set(err, -EINVAL, "%s%s", origin ? origin : "", jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return err_set(err, -EINVAL, "%scatalog must be a JSON object",
			       origin ? origin : "");
	}
	json_object_foreach(root, name, e) {
		char *msg = NULL;

		rc = entry_check(name, e, &msg);
		if (rc) {
			err_set(err, rc, "%s%s", origin ? origin : "", msg ? msg : "");
			free(msg);
			json_decref(root);
			return rc;
		}
	}
	*out = root;
	return 0;
}

/* Override entries replace built-ins of the same name wholesale; a missing file is fine. */
int
catalog_load(const char *override_path, json_t **out, char **err)
{
	json_t *cat = NULL, *over = NULL;
	char *text, *origin;
	int rc;

	rc = catalog_parse(catalog_builtin, "built-in catalog: ", &cat, err);
	if (rc)
		return rc;
	if (override_path == NULL || *override_path == '\0')
		goto done;
	text = file_read_all(override_path, NULL, &rc);
	if (text == NULL) {
		if (rc == -ENOENT)
			goto done;
		json_decref(cat);
		return err_set(err, rc, "read catalog %s: %s", override_path, strerror(-rc));
	}
	origin = str_printf("catalog %s: ", override_path);
	rc = catalog_parse(text, origin, &over, err);
	free(origin);
	free(text);
	if (rc) {
		json_decref(cat);
		return rc;
	}
	json_object_update(cat, over);
	json_decref(over);
done:
	*out = cat;
	return 0;
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, comma-space separated: the list shown in "unknown MCP server" errors. */
char *
catalog_names(json_t *catalog)
{
	size_t n = json_object_size(catalog), i = 0;
	const char **names = calloc(n + 1, sizeof(*names));
	const char *k;
	json_t *v;
	char *s;

	if (names == NULL)
		return NULL;
	json_object_foreach(catalog, k, v)
		names[i++] = k;
	qsort(names, n, sizeof(*names), str_cmp);
	s = strv_join((char *const *)names, ", ");
	free(names);
	return s;
}
