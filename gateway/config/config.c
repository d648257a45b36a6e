/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: validation and resolution of the "mcp" object into server specs. Pure: no
 * files are written and nothing is spawned, so the launcher can reject a bad config before
 * it touches the system.
 */

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "base/str.h"
#include "config/config.h"

#define CFG_NOT_OBJECT "mcp config must be a JSON object keyed by server name"
/* The per-server opt-out of isolation, for any kind of server. */
#define CFG_RUN_AS "runAs"
#define CFG_TOOL_RULES "toolRules"

int
config_parse_text(const char *text, json_t **out, char **err)
{
	json_error_t jerr;
	const char *p = text;
	json_t *root;

	while (*p && isspace((unsigned char)*p))
		p++;
	if (*p != '{')
		return err_set(err, -EINVAL, CFG_NOT_OBJECT ": not a JSON object");
	/* The reference ignores text after the first JSON value; so do we. */
	root = json_loads(p, JSON_DISABLE_EOF_CHECK, &jerr);
	if (root == NULL)
		return err_set(err, -EINVAL, CFG_NOT_OBJECT ": %s", jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return err_set(err, -EINVAL, CFG_NOT_OBJECT ": not a JSON object");
	}
	*out = root;
	return 0;
}

int
config_text_read(const char *config, const char *config_file, char **text, char **err)
{
	char *m;
	int rc;

	if (config && config_file)
		return err_set(err, -EINVAL, "--config and --config-file are mutually exclusive");
	if (!config && !config_file)
		return err_set(err, -EINVAL, "--config is required");
	if (config_file == NULL) {
		*text = strdup(config);
		return *text ? 0 : err_set(err, -ENOMEM, "out of memory");
	}
	*text = file_read_all(config_file, NULL, &rc);
	if (*text)
		return 0;
	/* Go prints OS errors in lower case; keep messages looking the same. */
	m = strdup(strerror(-rc));
	if (m && m[0])
		m[0] = (char)tolower((unsigned char)m[0]);
	err_set(err, rc, "open %s: %s", config_file, m ? m : "error");
	free(m);
	return rc;
}

/* A config that came as any JSON value: an object, or the launcher's error for it. */
static int
config_object(json_t **cfg, char **err)
{
	char *text;
	int rc;

	if (json_is_object(*cfg))
		return 0;
	text = json_dumps(*cfg, JSON_ENCODE_ANY);
	json_decref(*cfg);
	*cfg = NULL;
	rc = config_parse_text(text ? text : "", cfg, err);
	free(text);
	return rc;
}

void
config_sources_init(struct config_sources *src)
{
	src->catalog_file = strdup(GW_CATALOG_FILE);
	src->servers_dir = strdup(GW_SERVERS_DIR);
	src->github_base = strdup(GW_GITHUB_BASE);
}

void
config_sources_fini(struct config_sources *src)
{
	free(src->catalog_file);
	free(src->servers_dir);
	free(src->github_base);
}

int
config_servers(const struct config_sources *src, const char *text, json_t **cfg,
	       json_t **catalog, struct server_list *list, char **err)
{
	int rc = text ? 0 : config_object(cfg, err);

	if (rc == 0)
		rc = catalog_load(src->catalog_file, catalog, err);
	if (rc == 0 && text)
		rc = config_parse_text(text, cfg, err);
	if (rc == 0)
		rc = config_resolve(*cfg, *catalog, src->servers_dir, src->github_base, list, err);
	return rc;
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Object keys in byte order: servers, properties and warnings are all processed sorted. */
static const char **
keys_sorted(json_t *obj, size_t *n)
{
	size_t cnt = json_object_size(obj), i = 0;
	const char **keys = calloc(cnt + 1, sizeof(*keys));
	const char *k;
	json_t *v;

	if (keys == NULL)
		return NULL;
	json_object_foreach(obj, k, v)
		keys[i++] = k;
	qsort(keys, cnt, sizeof(*keys), str_cmp);
	*n = cnt;
	return keys;
}

static bool
env_name_valid(const char *k)
{
	const char *p;

	if (!(isalpha((unsigned char)*k) || *k == '_'))
		return false;
	for (p = k + 1; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return false;
	return true;
}

static bool
gh_part_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (i = 0; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return false;
	return true;
}

static int
warn_add(struct server_list *out, const char *qname, const char *key)
{
	char *qk = str_quote(key);
	char *w = str_printf("mcp server %s: ignoring unknown property %s", qname, qk);
	int rc = w ? strv_push(&out->warnings, w) : -ENOMEM;

	free(w);
	free(qk);
	return rc;
}

/* A {{prop}} argument: returns the property name or NULL for a literal. */
static char *
template_name(const char *arg)
{
	size_t len = strlen(arg), i;

	if (len < 5 || strncmp(arg, "{{", 2) || strcmp(arg + len - 2, "}}"))
		return NULL;
	for (i = 2; i < len - 2; i++)
		if (!(isalnum((unsigned char)arg[i]) || arg[i] == '_'))
			return NULL;
	return strndup(arg + 2, len - 4);
}

static int
prop_values(const char *qname, const char *pname, const char *type, json_t *v, char ***out,
	    char **err)
{
	size_t i;
	json_t *it;

	if (strcmp(type, "string") == 0) {
		if (!json_is_string(v))
			goto bad;
		return strv_push(out, json_string_value(v));
	}
	if (strcmp(type, "number") == 0) {
		char *s;
		int rc;

		if (json_is_integer(v))
			s = str_printf("%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			s = num_format(json_real_value(v));
		else
			goto bad;
		rc = s ? strv_push(out, s) : -ENOMEM;
		free(s);
		return rc;
	}
	if (strcmp(type, "boolean") == 0) {
		if (!json_is_boolean(v))
			goto bad;
		return strv_push(out, json_is_true(v) ? "true" : "false");
	}
	if (!json_is_array(v))
		goto bad;
	json_array_foreach(v, i, it)
		if (!json_is_string(it))
			goto bad;
	json_array_foreach(v, i, it)
		strv_push(out, json_string_value(it));
	if (*out == NULL)
		*out = calloc(1, sizeof(char *));
	return 0;
bad:
	if (strcmp(type, "array") == 0)
		return err_set(err, -EINVAL, "mcp server %s: property \"%s\": must be an array "
			       "of strings", qname, pname);
	return err_set(err, -EINVAL, "mcp server %s: property \"%s\": must be a %s", qname,
		       pname, type);
}

/* One property's value (the config's, else its default) into values; writable paths into s. */
static int
catalog_prop(struct server_spec *s, const char *qname, const char *key, json_t *p, json_t *val,
	     json_t *values, char **err)
{
	const char *type = json_string_value(json_object_get(p, "type"));
	json_t *cv = json_object_get(val, key), *arr;
	bool wr = json_is_true(json_object_get(p, "writable"));
	char **list = NULL;
	int rc;

	if (cv == NULL || json_is_null(cv))
		cv = json_object_get(p, "default");
	if (cv == NULL || json_is_null(cv)) {
		if (json_is_true(json_object_get(p, "required")))
			return err_set(err, -EINVAL, "mcp server %s: property \"%s\" is required",
				       qname, key);
		return 0;
	}
	rc = prop_values(qname, key, type, cv, &list, err);
	if (rc)
		return rc;
	if (strv_len(list) == 0 && json_is_true(json_object_get(p, "required"))) {
		strv_free(list);
		return err_set(err, -EINVAL, "mcp server %s: property \"%s\" must not be empty",
			       qname, key);
	}
	arr = json_array();
	for (size_t j = 0; list && list[j]; j++) {
		json_array_append_new(arr, json_string(list[j]));
		if (wr)
			strv_push(&s->rw_paths, list[j]);
	}
	json_object_set_new(values, key, arr);
	strv_free(list);
	return 0;
}

/* Every property of the entry, in name order; a warning for each key it does not declare. */
static int
catalog_props(struct server_spec *s, const char *qname, json_t *val, json_t *props,
	      json_t *values, struct server_list *out, char **err)
{
	const char **keys = NULL;
	size_t nkeys = 0, i;
	int rc = 0;

	if (json_is_object(props)) {
		keys = keys_sorted(props, &nkeys);
		for (i = 0; i < nkeys && rc == 0; i++)
			rc = catalog_prop(s, qname, keys[i], json_object_get(props, keys[i]), val,
					  values, err);
		free(keys);
		if (rc)
			return rc;
	}
	keys = keys_sorted(val, &nkeys);
	for (i = 0; i < nkeys; i++)
		if ((!json_is_object(props) || json_object_get(props, keys[i]) == NULL) &&
		    strcmp(keys[i], CFG_RUN_AS) != 0 && strcmp(keys[i], CFG_TOOL_RULES) != 0)
			warn_add(out, qname, keys[i]);
	free(keys);
	return 0;
}

/* The command: a group that references an unset property disappears ("--flag {{x}}"). */
static void
catalog_command(struct server_spec *s, json_t *entry, json_t *values)
{
	json_t *group, *v;
	size_t i, j;

	json_array_foreach(json_object_get(entry, "command"), i, group) {
		char **args = NULL;
		bool drop = false;

		json_array_foreach(group, j, v) {
			const char *a = json_string_value(v);
			char *pn = template_name(a);
			json_t *list, *it;
			size_t x;

			if (pn == NULL) {
				strv_push(&args, a);
				continue;
			}
			list = json_object_get(values, pn);
			free(pn);
			if (list == NULL) {
				drop = true;
				break;
			}
			json_array_foreach(list, x, it)
				strv_push(&args, json_string_value(it));
		}
		for (j = 0; !drop && args && args[j]; j++)
			strv_push(&s->argv, args[j]);
		strv_free(args);
	}
}

/* The env: "{{x}}" becomes the property's values joined by commas; unset ones are left out. */
static void
catalog_env(struct server_spec *s, json_t *entry, json_t *values)
{
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(entry, "env"), k, v) {
		const char *ev = json_string_value(v);
		char *pn = template_name(ev), *kv;

		if (pn) {
			json_t *list = json_object_get(values, pn), *it;
			struct strbuf sb = {0};
			size_t x;

			free(pn);
			if (list == NULL)
				continue;
			json_array_foreach(list, x, it) {
				if (x)
					sb_append(&sb, ",", 1);
				sb_appends(&sb, json_string_value(it));
			}
			kv = str_printf("%s=%s", k, sb.buf ? sb.buf : "");
			sb_free(&sb);
		} else {
			kv = str_printf("%s=%s", k, ev);
		}
		strv_push(&s->env, kv);
		free(kv);
	}
}

static int
resolve_catalog(struct server_spec *s, const char *qname, json_t *val, json_t *entry,
		struct server_list *out, char **err)
{
	json_t *values = json_object();
	int rc;

	if (values == NULL)
		return err_set(err, -ENOMEM, "out of memory");
	rc = catalog_props(s, qname, val, json_object_get(entry, "properties"), values, out, err);
	if (rc == 0) {
		catalog_command(s, entry, values);
		if (strv_len(s->argv) == 0)
			rc = err_set(err, -EINVAL, "mcp server %s: command is empty", qname);
	}
	if (rc == 0) {
		catalog_env(s, entry, values);
		s->dir = strdup("/");
	}
	json_decref(values);
	return rc;
}

/* "paths" of a local or GitHub server: absolute directories it may write. */
static int
paths_parse(struct server_spec *s, const char *qname, json_t *paths, char **err)
{
	size_t i;
	json_t *v;

	if (paths == NULL || json_is_null(paths))
		return 0;
	if (!json_is_array(paths))
		goto bad;
	json_array_foreach(paths, i, v) {
		if (!json_is_string(v) || json_string_value(v)[0] != '/')
			goto bad;
		strv_push(&s->rw_paths, json_string_value(v));
	}
	return 0;
bad:
	return err_set(err, -EINVAL, "mcp server %s: paths must be an array of absolute paths",
		       qname);
}

/* One list of "toolRules": an array of tool names. */
static int
tool_names_parse(char ***out, const char *qname, const char *key, json_t *v, char **err)
{
	size_t i;
	json_t *n;

	if (!json_is_array(v))
		goto bad;
	json_array_foreach(v, i, n) {
		if (!json_is_string(n) || !json_string_value(n)[0])
			goto bad;
		strv_push(out, json_string_value(n));
	}
	return 0;
bad:
	return err_set(err, -EINVAL, "mcp server %s: toolRules.%s must be an array of tool "
		       "names", qname, key);
}

/*
 * "toolRules": {"allow": [...], "deny": [...]}, both optional: which of the server's tools
 * clients see and may call. A wrong shape is an error, not ignored: a rule that silently does
 * nothing would leave a tool open that its operator meant to close.
 */
static int
tool_rules_parse(struct server_spec *s, const char *qname, json_t *v, char **err)
{
	const char *k;
	json_t *l;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return err_set(err, -EINVAL, "mcp server %s: toolRules must be an object with "
			       "\"allow\" and/or \"deny\"", qname);
	json_object_foreach(v, k, l) {
		if (strcmp(k, "allow") == 0) {
			s->tools_allow_set = true;
			if (tool_names_parse(&s->tools_allow, qname, k, l, err))
				return -EINVAL;
		} else if (strcmp(k, "deny") == 0) {
			if (tool_names_parse(&s->tools_deny, qname, k, l, err))
				return -EINVAL;
		} else {
			return err_set(err, -EINVAL, "mcp server %s: toolRules has \"%s\"; it takes "
				       "\"allow\" and \"deny\"", qname, k);
		}
	}
	return 0;
}

bool
server_tool_allowed(const struct server_spec *s, const char *name)
{
	char **p;

	for (p = s->tools_deny; p && *p; p++)
		if (strcmp(*p, name) == 0)
			return false;
	if (!s->tools_allow_set)
		return true;
	for (p = s->tools_allow; p && *p; p++)
		if (strcmp(*p, name) == 0)
			return true;
	return false;
}

/* An unknown value is an error, never a silent default: the opt-out weakens isolation. */
static int
run_as_parse(struct server_spec *s, const char *qname, json_t *v, char **err)
{
	const char *t = json_string_value(v);

	if (v == NULL || json_is_null(v) || (t && strcmp(t, "isolated") == 0))
		return 0;
	if (t && strcmp(t, "root") == 0) {
		s->root = true;
		return 0;
	}
	return err_set(err, -EINVAL, "mcp server %s: runAs must be \"isolated\" (the default) "
		       "or \"root\"", qname);
}

static int
resolve_command(struct server_spec *s, const char *qname, json_t *val,
		struct server_list *out, char **err)
{
	json_t *run = json_object_get(val, "runCmd");
	json_t *inst = json_object_get(val, "installCmd");
	json_t *envs = json_object_get(val, "envs"), *v;
	const char **keys;
	size_t n, i;
	const char *k;

	if ((run && !json_is_null(run) && !json_is_string(run)) ||
	    (inst && !json_is_null(inst) && !json_is_string(inst)) ||
	    (envs && !json_is_null(envs) && !json_is_object(envs)))
		goto bad_types;
	json_object_foreach(envs, k, v)
		if (!json_is_string(v))
			goto bad_types;
	keys = keys_sorted(val, &n);
	for (i = 0; keys && i < n; i++)
		if (strcmp(keys[i], "runCmd") && strcmp(keys[i], "installCmd") &&
		    strcmp(keys[i], "envs") && strcmp(keys[i], CFG_RUN_AS) &&
		    strcmp(keys[i], "paths") && strcmp(keys[i], CFG_TOOL_RULES))
			warn_add(out, qname, keys[i]);
	free(keys);
	if (paths_parse(s, qname, json_object_get(val, "paths"), err))
		return -EINVAL;
	if (str_blank(json_string_value(run)))
		return err_set(err, -EINVAL, "mcp server %s: runCmd is required", qname);
	keys = keys_sorted(envs, &n);
	for (i = 0; keys && i < n; i++) {
		char *kv;

		if (!env_name_valid(keys[i])) {
			char *qk = str_quote(keys[i]);

			err_set(err, -EINVAL, "mcp server %s: invalid environment variable name %s",
				qname, qk);
			free(qk);
			free(keys);
			return -EINVAL;
		}
		kv = str_printf("%s=%s", keys[i], json_string_value(json_object_get(envs,
										    keys[i])));
		strv_push(&s->env, kv);
		free(kv);
	}
	free(keys);
	strv_push(&s->argv, "/bin/sh");
	strv_push(&s->argv, "-c");
	strv_push(&s->argv, json_string_value(run));
	if (!str_blank(json_string_value(inst))) {
		strv_push(&s->install, "/bin/sh");
		strv_push(&s->install, "-c");
		strv_push(&s->install, json_string_value(inst));
	}
	return 0;
bad_types:
	return err_set(err, -EINVAL, "mcp server %s: runCmd and installCmd must be strings and "
		       "envs must map names to strings", qname);
}

static int
resolve_github(struct server_spec *s, const char *qname, const char *servers_dir,
	       const char *base, char **err)
{
	const char *rest = s->name + strlen("github/");
	const char *slash = strchr(rest, '/');
	size_t olen, blen;

	if (slash == NULL || strchr(slash + 1, '/') != NULL)
		return err_set(err, -EINVAL, "mcp server %s: expected github/<owner>/<repo>",
			       qname);
	olen = (size_t)(slash - rest);
	if (!gh_part_valid(rest, olen) || !gh_part_valid(slash + 1, strlen(slash + 1)))
		return err_set(err, -EINVAL, "mcp server %s: invalid GitHub owner or repository "
			       "name", qname);
	/* Tolerate a trailing slash on the base URL. */
	blen = strlen(base);
	if (blen > 1 && base[blen - 1] == '/')
		blen--;
	s->repo = str_printf("%.*s/%s.git", (int)blen, base, rest);
	s->dir = str_printf("%s/github/%s", servers_dir, rest);
	return s->repo && s->dir ? 0 : err_set(err, -ENOMEM, "out of memory");
}

static int
name_check(const char *name, char **err)
{
	const unsigned char *p;
	char *q;

	if (*name == '\0')
		return err_set(err, -EINVAL, "mcp server name must not be empty");
	q = str_quote(name);
	if (strlen(name) > GW_NAME_MAX) {
		err_set(err, -EINVAL, "mcp server name %s is longer than %d characters", q,
			GW_NAME_MAX);
		free(q);
		return -EINVAL;
	}
	for (p = (const unsigned char *)name; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			err_set(err, -EINVAL, "mcp server name %s contains control characters", q);
			free(q);
			return -EINVAL;
		}
	}
	free(q);
	return 0;
}

static int
resolve_one(const char *name, json_t *val, json_t *catalog, const char *servers_dir,
	    const char *github_base, struct server_spec *s, struct server_list *out, char **err)
{
	json_t *entry = json_object_get(catalog, name);
	char *qname;
	int rc;

	rc = name_check(name, err);
	if (rc)
		return rc;
	qname = str_quote(name);
	s->name = strdup(name);
	if (json_is_null(val))
		val = NULL;
	if (val != NULL && !json_is_object(val)) {
		rc = err_set(err, -EINVAL, "mcp server %s: configuration must be a JSON object",
			     qname);
		goto out;
	}
	{
		json_t *empty = json_object();

		if (val == NULL)
			val = empty;
		rc = run_as_parse(s, qname, json_object_get(val, CFG_RUN_AS), err);
		if (rc == 0)
			rc = tool_rules_parse(s, qname, json_object_get(val, CFG_TOOL_RULES), err);
		if (rc) {
			json_decref(empty);
			goto out;
		}
		if (strncmp(name, "github/", 7) == 0) {
			s->kind = SERVER_GITHUB;
			rc = resolve_github(s, qname, servers_dir, github_base, err);
			if (rc == 0)
				rc = resolve_command(s, qname, val, out, err);
		} else if (entry != NULL) {
			s->kind = SERVER_CATALOG;
			rc = resolve_catalog(s, qname, val, entry, out, err);
		} else if (json_object_get(val, "runCmd") &&
			   !json_is_null(json_object_get(val, "runCmd"))) {
			s->kind = SERVER_LOCAL;
			s->dir = strdup("/");
			rc = resolve_command(s, qname, val, out, err);
		} else {
			char *names = catalog_names(catalog);

			rc = err_set(err, -EINVAL, "unknown MCP server %s; supported servers: %s, "
				     "or github/<owner>/<repo> with runCmd", qname,
				     names ? names : "");
			free(names);
		}
		json_decref(empty);
	}
out:
	free(qname);
	return rc;
}

static void
spec_fini(struct server_spec *s)
{
	free(s->name);
	strv_free(s->argv);
	strv_free_secure(s->env);
	strv_free(s->install);
	free(s->dir);
	free(s->repo);
	strv_free(s->rw_paths);
	strv_free(s->tools_allow);
	strv_free(s->tools_deny);
	free(s->home);
	free(s->cgroup);
	memset(s, 0, sizeof(*s));
}

void
server_list_free(struct server_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		spec_fini(&l->v[i]);
	free(l->v);
	strv_free(l->warnings);
	memset(l, 0, sizeof(*l));
}

int
config_resolve(json_t *cfg, json_t *catalog, const char *servers_dir, const char *github_base,
	       struct server_list *out, char **err)
{
	const char **names;
	size_t n = 0, i;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(cfg))
		return err_set(err, -EINVAL, CFG_NOT_OBJECT ": not a JSON object");
	names = keys_sorted(cfg, &n);
	out->v = calloc(n + 1, sizeof(*out->v));
	if (names == NULL || out->v == NULL) {
		free(names);
		return err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		rc = resolve_one(names[i], json_object_get(cfg, names[i]), catalog, servers_dir,
				 github_base, &out->v[i], out, err);
		out->n = i + 1;
		if (rc)
			break;
	}
	free(names);
	if (rc)
		server_list_free(out);
	return rc;
}
