/* SPDX-License-Identifier: BSD-3-Clause */
/* The control HTTP API (libmicrohttpd + jansson). */
#ifndef CVS_API_H
#define CVS_API_H

#include <stdint.h>
#include <jansson.h>

#include "registry.h"

#define CVS_API_MAX_BODY (1u << 20)

struct api;

/*
 * Extra routes served by the owner. Return NULL for "no such route"; otherwise the answer with
 * *status set (and *allow for 405).
 */
typedef json_t *(*api_extra_fn)(void *ctx, const char *method, const char *path,
				const char *body, size_t len, int *status, const char **allow);

struct api *api_start(uint32_t addr, uint16_t port, struct registry *reg, api_extra_fn extra,
		      void *extra_ctx, char *err, size_t errlen);
void api_stop(struct api *a);

/*
 * Route one request: method, path, body → status and JSON (NULL for no body). 'allow' is set
 * for 405 answers. Separate from the HTTP server so it can be driven directly.
 */
int api_route(struct registry *reg, api_extra_fn extra, void *extra_ctx, const char *method,
	      const char *path, const char *body, size_t len, json_t **out, const char **allow);

#endif /* CVS_API_H */
