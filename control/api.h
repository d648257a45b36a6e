/* SPDX-License-Identifier: BSD-3-Clause */
/* The control HTTP API (libmicrohttpd + jansson). */
#ifndef CVS_API_H
#define CVS_API_H

#include <stdint.h>
#include <jansson.h>

#include "registry.h"

#define CVS_API_MAX_BODY (1u << 20)

#define API_QUERY_MAX 8

struct api;

/*
 * Extra routes served by the owner. Return NULL for "no such route"; otherwise the answer with
 * *status set (and *allow for 405).
 */
typedef json_t *(*api_extra_fn)(void *ctx, const char *method, const char *path,
				const char *body, size_t len, int *status, const char **allow);

/* The query string of a request, as libmicrohttpd decoded it. */
struct api_query {
	int n;
	bool overflow;		/* more than API_QUERY_MAX arguments */
	const char *key[API_QUERY_MAX];
	const char *val[API_QUERY_MAX];	/* NULL for "?key" without a value */
};

/* An answer: JSON, or text with its content type (malloc'ed, the API frees it). */
struct api_reply {
	int status;
	json_t *json;
	char *text;
	size_t text_len;
	const char *ctype;
	const char *allow;
};

/*
 * Routes served by the owner that need the query string or answer in text (observability:
 * /metrics, /readyz, /sessions...). Returns false for "not mine"; then the registry routes and
 * 'extra' are tried.
 */
typedef bool (*api_obs_fn)(void *ctx, const char *method, const char *path,
			   const struct api_query *q, struct api_reply *rep);

struct api *api_start(uint32_t addr, uint16_t port, struct registry *reg, api_extra_fn extra,
		      void *extra_ctx, api_obs_fn obs, void *obs_ctx, char *err, size_t errlen);
const char *api_query_get(const struct api_query *q, const char *key);
void api_stop(struct api *a);

/*
 * Route one request: method, path, body → status and JSON (NULL for no body). 'allow' is set
 * for 405 answers. Separate from the HTTP server so it can be driven directly.
 */
int api_route(struct registry *reg, api_extra_fn extra, void *extra_ctx, const char *method,
	      const char *path, const char *body, size_t len, json_t **out, const char **allow);

#endif /* CVS_API_H */
