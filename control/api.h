/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control HTTP API (libmicrohttpd + jansson) and its one route table. Each module
 * registers its routes ({method, pattern, handler}) before the server starts, as OVS modules
 * register their unixctl commands; the table answers 404 for a path no pattern matches and 405
 * with Allow for a method the matching patterns do not serve. Handlers never see HTTP: they
 * get the matched path arguments, the body and the query, and fill a status and an answer.
 */
#ifndef CVS_API_H
#define CVS_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define CVS_API_MAX_BODY (1u << 20)
/* Connections served at once, a thread and a socket each. */
#define CVS_API_MAX_CONNECTIONS 2048u

#define API_QUERY_MAX	8
#define API_ARGS_MAX	4	/* {name} segments in one pattern */
#define API_SEGS_MAX	5	/* segments in one pattern */
#define API_ROUTES_MAX	32

struct api;

/* The query string of a request, as libmicrohttpd decoded it. */
struct api_query {
	int n;
	bool overflow;		/* more than API_QUERY_MAX arguments */
	const char *key[API_QUERY_MAX];
	const char *val[API_QUERY_MAX];	/* NULL for "?key" without a value */
};

/* One request as a handler sees it. */
struct api_request {
	const char *method;
	const char *path;
	const char *arg[API_ARGS_MAX];	/* the segments that matched {name}, in pattern order */
	const char *body;		/* NULL without a body; not NUL-terminated for handlers */
	size_t len;
	const struct api_query *query;
};

/* An answer: JSON (NULL for none), or text with its content type (malloc'ed, the API frees it). */
struct api_reply {
	int status;
	json_t *json;
	char *text;
	size_t text_len;
	const char *ctype;
	char allow[64];		/* the Allow header of a 405, "" otherwise */
};

/* Fill rep (status is 200 on entry, json and text NULL). */
typedef void (*api_handler_fn)(void *ctx, const struct api_request *rq, struct api_reply *rep);

/*
 * A pattern is "/"-separated segments, each a literal or "{name}", which matches any one
 * segment. A path is compared segment by segment; empty segments (a doubled or a trailing
 * slash) do not count, so "/sandboxes/" is "/sandboxes". With API_EXACT the path must be the
 * pattern itself, character for character (no arguments): the observability and test routes
 * have always been matched so, and "/healthz/" stays a 404.
 */
#define API_EXACT	1u

struct api_route {
	const char *method;
	const char *pattern;
	unsigned int flags;
	api_handler_fn fn;
	void *ctx;
};

struct api_routes {
	uint32_t n;
	struct api_route r[API_ROUTES_MAX];
};

void api_routes_init(struct api_routes *t);
/*
 * Add a route; the strings must outlive the table. The first route that matches a request's
 * method and path answers it. Returns 0, -EINVAL for a malformed pattern, -ENOSPC when full.
 */
int api_register(struct api_routes *t, const char *method, const char *pattern,
		 unsigned int flags, api_handler_fn fn, void *ctx);
/*
 * Answer one request from the table: the handler's answer, 405 with Allow, or 404. Separate
 * from the HTTP server so tests and fuzzers drive it directly. 'q' may be NULL (no query).
 */
void api_dispatch(const struct api_routes *t, const char *method, const char *path,
		  const char *body, size_t len, const struct api_query *q, struct api_reply *rep);
void api_reply_free(struct api_reply *rep);

/* Where the API listens. */
struct api_listen {
	uint32_t addr;		/* TCP: network order address */
	uint16_t port;		/* host order */
	const char *sock;	/* a unix socket as well ("" or NULL: none) */
	uint32_t sock_mode;	/* its file mode (0600: root only) */
	bool sock_optional;	/* a default: a directory that is not there only costs it */
};

/*
 * Serve the table on addr:port and on the unix socket. A socket file left by a process that
 * is gone is replaced; a live one, or another kind of file at the path, is an error. An
 * optional socket whose directory is not there is left out: the answer is the daemon, with
 * the reason in err (a warning to log).
 */
struct api *api_start(const struct api_listen *l, const struct api_routes *t, char *err,
		      size_t errlen);
void api_stop(struct api *a);

const char *api_query_get(const struct api_query *q, const char *key);

/*
 * {"error": message}. The message may quote what a client sent (an id, a path); bytes that
 * would make it invalid UTF-8 become '?', so the answer always has its body.
 */
json_t *api_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CVS_API_H */
