/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: merging the tools, prompts, resources and templates of all servers (routes.c). */
#ifndef GW_ROUTES_H
#define GW_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct tool_source {
	const char *server;	/* sorted by name */
	json_t *tools;		/* array, in upstream order */
	void *ctx;
};

struct tool_route {
	char *name;		/* exported */
	char *orig;
	void *ctx;
	json_t *tool;		/* exported object (name replaced) */
};

struct tool_table {
	struct tool_route *v;
	size_t n;
};

/* What one table holds: the key field, whether clashes are renamed "<server>_<name>". */
struct route_kind {
	const char *what;
	const char *key;
	bool rename;
	bool tools;		/* inputSchema checks */
	const char *dup_msg;	/* the warning for an item skipped as a duplicate */
};

extern const struct route_kind routes_kind_tools, routes_kind_prompts, routes_kind_resources,
	routes_kind_templates;

int routes_build(const struct tool_source *src, size_t n, const struct route_kind *k,
		 struct tool_table *t);
int routes_build_tools(const struct tool_source *src, size_t n, struct tool_table *t);
const struct tool_route *routes_find(const struct tool_table *t, const char *name);
void routes_free(struct tool_table *t);
char *routes_name_sanitise(const char *s);
/* Whether uri is an expansion of the RFC 6570 template tpl, as far as routing needs. */
bool routes_template_match(const char *tpl, const char *uri);

#endif /* GW_ROUTES_H */
