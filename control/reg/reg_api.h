/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry's HTTP routes (/sandboxes/...): request bodies parsed into registry requests,
 * the registry's outcomes mapped to HTTP statuses, and every successful change made durable
 * before it is answered.
 */
#ifndef CVS_REG_API_H
#define CVS_REG_API_H

#include <stddef.h>

#include "api.h"
#include "registry.h"

/* Register the /sandboxes routes of 'r' in the table. 0 or -errno. */
int reg_api_register(struct api_routes *t, struct registry *r);

/*
 * The body of PUT /sandboxes/{id} → a request: known fields only, each well-formed, the
 * sandboxIP one the registry may hand out. 0, or -EINVAL with the reason in err.
 */
int reg_req_parse(const struct registry *r, const char *body, size_t len, struct reg_req *q,
		  char *err, size_t errlen);

/* The HTTP status of an enum reg_status. */
int reg_api_status(int status);

#endif /* CVS_REG_API_H */
