/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: the catalog and the mcp object resolved into server specs (catalog.c, config.c). */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

#include "base/flags.h"

#define GW_CATALOG_FILE		"/etc/mcp-gateway/catalog.json"
#define GW_SERVERS_DIR		"/opt/mcp-gateway/servers"
#define GW_GITHUB_BASE		"https://github.com"
#define GW_NAME_MAX		128

int catalog_parse(const char *text, const char *origin, json_t **out, char **err);
int catalog_load(const char *override_path, json_t **out, char **err);
char *catalog_names(json_t *catalog);

enum server_kind {
	SERVER_CATALOG,
	SERVER_GITHUB,
	SERVER_LOCAL,
};

struct server_spec {
	char *name;
	enum server_kind kind;
	char **argv;		/* run command */
	char **env;		/* extra "K=V" entries, override the inherited environment */
	char **install;		/* install argv or NULL; catalog installs only run via pull */
	char *dir;		/* working directory */
	char *repo;		/* clone URL (GitHub servers) */
	bool root;		/* "runAs": "root": the opt-out, runs unisolated */
	char **rw_paths;	/* declared paths it may write ("paths", writable properties) */
	/* "toolRules": which of its tools clients see and may call (server_tool_allowed()). */
	char **tools_allow;	/* only these, when tools_allow_set (an empty list: none) */
	char **tools_deny;	/* never these */
	bool tools_allow_set;
	/* Assigned by iso_setup() in serve. */
	uid_t uid;
	gid_t gid;
	char *home;		/* its HOME, and the working directory of a non-GitHub server */
	char *cgroup;		/* its cgroup directory, NULL without limits */
};

struct server_list {
	struct server_spec *v;
	size_t n;
	char **warnings;
};

/* Where launch and serve find the servers of a config: the catalog, clones, GitHub. */
struct config_sources {
	char *catalog_file;
	char *servers_dir;
	char *github_base;
};

/* Their flags, for a struct flag table (flags.h), and their defaults (above). */
#define CONFIG_SOURCE_FLAGS(src) \
	{"catalog-file", FLAG_STRING, &(src).catalog_file, "catalog override file (default " \
	 GW_CATALOG_FILE ")", false}, \
	{"servers-dir", FLAG_STRING, &(src).servers_dir, "clone root for GitHub servers " \
	 "(default " GW_SERVERS_DIR ")", false}, \
	{"github-base-url", FLAG_STRING, &(src).github_base, "base URL GitHub repositories " \
	 "are cloned from (default " GW_GITHUB_BASE ")", false}

void config_sources_init(struct config_sources *src);
void config_sources_fini(struct config_sources *src);

int config_parse_text(const char *text, json_t **out, char **err);
/* --config or --config-file, exactly one of them: the config's text in *text (malloc'd). */
int config_text_read(const char *config, const char *config_file, char **text, char **err);
/*
 * The servers a config names, as launch and serve both find them: the catalog (built in,
 * then the override file) and the config resolved against it. The config is text (parsed
 * after the catalog loads) or, with text NULL, *cfg (which must be an object).
 */
int config_servers(const struct config_sources *src, const char *text, json_t **cfg,
		   json_t **catalog, struct server_list *list, char **err);
int config_resolve(json_t *cfg, json_t *catalog, const char *servers_dir,
		   const char *github_base, struct server_list *out, char **err);
void server_list_free(struct server_list *l);
/* Whether the server's "toolRules" let clients see and call its tool 'name' (exact names). */
bool server_tool_allowed(const struct server_spec *s, const char *name);

#endif /* GW_CONFIG_H */
