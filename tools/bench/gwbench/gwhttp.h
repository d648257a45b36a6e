/* SPDX-License-Identifier: BSD-3-Clause */
/* The load generator's streamable-HTTP client (gwhttp.c): one blocking keep-alive HTTP/1.1
 * connection per session, loopback only. */
#ifndef GWHTTP_H
#define GWHTTP_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

struct gw_url {
	char host[64];		/* dotted IPv4, 127.0.0.0/8 only */
	int port;
	char path[256];
};

struct gw_conn {
	int fd;
	char *rbuf;		/* bytes read but not consumed yet */
	size_t rpos, rlen, rcap;
	char *body;		/* the body of the last answer, decoded (chunks joined) */
	size_t blen, bcap;
	size_t scan;		/* SSE: where the next event of body starts */
	int status;
	int sse;		/* Content-Type: text/event-stream */
	int keep;		/* the server keeps the connection (no Connection: close) */
	long clen;		/* Content-Length, -1 without */
	int chunked;
	char sid[160];		/* Mcp-Session-Id of the last answer, "" without */
	json_int_t want;	/* the id whose answer the caller waits for, -1: none */
	json_t *answer;		/* that answer, once read (owned) */
	struct timespec t_answer;	/* when it was complete */
};

/* What a request sends besides its body. */
struct gw_req {
	const char *method;	/* POST, GET, DELETE */
	const char *token;	/* bearer token or NULL */
	const char *sid;	/* Mcp-Session-Id or NULL */
	const char *proto;	/* MCP-Protocol-Version or NULL */
	const char *accept;
};

int gw_parse_url(const char *s, struct gw_url *u);
/* Request headers and body in two writes (gwload --split); one write without. */
extern int gw_split_writes;
int gw_connect(struct gw_conn *c, const struct gw_url *u, int timeout_ms);
void gw_close(struct gw_conn *c);
/* Sends one request and reads the whole answer (headers and body). want >= 0: the JSON-RPC
 * id whose response is looked for in the body (JSON or SSE); c->answer and c->t_answer are set
 * once it is seen, which may be before the body ends (an SSE stream's last chunk). Returns the
 * HTTP status, or -1 on a transport error or timeout. */
int gw_request(struct gw_conn *c, const struct gw_url *u, const struct gw_req *r,
	const char *body, json_int_t want);
/* Sends a GET for the standalone SSE stream and reads only its status and headers. */
int gw_open_stream(struct gw_conn *c, const struct gw_url *u, const struct gw_req *r);

static inline double gw_us(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e6 + (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

#endif
