/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: the HTTP side's interface to serve (http.c; its files are in http_int.h). */
#ifndef GW_HTTP_H
#define GW_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

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
	json_t *isolation;	/* what /health reports of the servers' isolation, or NULL */
	struct audit *audit;	/* one line per tool call (audit.h), or NULL */
};

struct http_server;
struct audit;

/* The flags of conf.allowed_hosts and conf.allowed_origins (comma-separated), for flags.h. */
#define HTTP_GUARD_FLAGS(hosts, origins) \
	{"allowed-hosts", FLAG_STRING, &(hosts), "comma-separated Host names " \
	 "accepted besides the defaults (localhost, loopback, <port>-*.<domain>); " \
	 "\"*\" accepts any", false}, \
	{"allowed-origins", FLAG_STRING, &(origins), "comma-separated Origins " \
	 "accepted besides those of default hosts; \"*\" accepts any", false}

struct http_server *http_start(const struct http_conf *conf, int listen_fd, char **err);
void http_quiesce(struct http_server *h, int grace_ms);
void http_stop(struct http_server *h);
/* The /health body: servers and counts of the merged lists. */
char *http_health(struct http_server *h);

#endif /* GW_HTTP_H */
