/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: what http.c uses of server.c: the server's state without its daemon.
 */
#ifndef GW_HTTP_SERVER_H
#define GW_HTTP_SERVER_H

struct http_conf;
struct http_server;

/* Everything but the daemon: the lists built, the tick running, the upstreams' events ours. */
struct http_server *server_new(const struct http_conf *conf, char **err);
/*
 * The HTTP server (h->d, wire/httpd.h) on a loop thread of its own, which also reads the
 * servers' output (upstream_use_loop), so an answer leaves on the thread that read it.
 */
int server_loop_attach(struct http_server *h);
/* The loop stopped, the servers' pipes back with their readers; before the daemon stops. */
void server_loop_detach(struct http_server *h);
/* After the daemon stopped: everything server_new made, in order. */
void server_free(struct http_server *h);

#endif /* GW_HTTP_SERVER_H */
