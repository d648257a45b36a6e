/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the HTTP daemon's interface to serve (http.c). The files it runs on are the
 * floors below: session/ (session/session.h), wire/, upstream/.
 */
#ifndef GW_HTTP_H
#define GW_HTTP_H

#include "base/flags.h"
struct http_conf;

#define GW_DEFAULT_PORT		50005

struct http_server;

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
