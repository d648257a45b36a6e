/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: what serve hands the HTTP side (http_start()). The session floor keeps it in
 * struct http_server and reads it everywhere, so it is defined here, below the daemon.
 */
#ifndef GW_HTTP_CONF_H
#define GW_HTTP_CONF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct audit;
struct tool_table;
struct upstream;

struct http_conf {
	const char *token;
	const char *version;
	const struct tool_table *tools;
	const struct tool_table *prompts;
	const struct tool_table *resources;
	const struct tool_table *templates;
	struct upstream **ups;	/* every upstream, for requests no table routes */
	size_t nups;
	char **allowed_hosts;	/* NULL: the defaults (see host_allowed) */
	char **allowed_origins;
	int64_t call_timeout_ns;
	int port;		/* the listen port: "<port>-<sandbox>.<domain>" Hosts are ours */
	char **servers;		/* sorted names */
	size_t page_size;
	int64_t session_idle_ns;
	int64_t resume_ns;	/* how long a broken POST stream waits for its client */
	size_t max_body;
	size_t max_sessions;
	int64_t busy_poll_ns;	/* the loop's busy polling after a request to a server */
	json_t *isolation;	/* what /health reports of the servers' isolation, or NULL */
	struct audit *audit;	/* one line per tool call (audit.h), or NULL */
};

#endif /* GW_HTTP_CONF_H */
