/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: the checks of a request before any other (guard.c): token, Host, Origin. */
#ifndef GW_GUARD_H
#define GW_GUARD_H

#include <stdbool.h>

#include "session/http_conf.h"

bool guard_token_equal(const char *header, const char *token);
bool guard_host_allowed(const struct http_conf *conf, const char *hostport);
bool guard_origin_allowed(const struct http_conf *conf, const char *origin);

#endif /* GW_GUARD_H */
