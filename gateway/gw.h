/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the constants every part shares and one include for each module's header
 * (str.h, clock.h, files.h, frame.h, proc.h, log.h, flags.h, config.h, routes.h, upstream.h,
 * http.h).
 *
 * Error convention (docs/mcp-gateway.md, "Errors"): functions return 0 or a negative errno,
 * constructors NULL. Where the caller needs a human-readable reason (every user-visible
 * failure does), the function also takes `char **err` and stores a malloc'd message there
 * (err_set()); the caller frees it or wraps it with context. MCP clients get JSON-RPC
 * error codes, listed in that section.
 */
#ifndef GW_H
#define GW_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include <jansson.h>

#include "cvs_common.h"

#define GW_DEFAULT_PORT		50005
#define GW_DEFAULT_TIMEOUT_NS	(55LL * 1000000000LL)
#define GW_TOKEN_FILE		"/etc/mcp-gateway/.token"
#define GW_CATALOG_FILE		"/etc/mcp-gateway/catalog.json"
#define GW_PID_FILE		"/run/mcp-gateway.pid"
#define GW_AUDIT_FILE		"/var/log/mcp-gateway/audit.log"
#define GW_LOG_FILE		"/var/log/mcp-gateway.log"
#define GW_SERVERS_DIR		"/opt/mcp-gateway/servers"
#define GW_GITHUB_BASE		"https://github.com"
#define GW_TOKEN_ENV		"GATEWAY_ACCESS_TOKEN"
#define GW_CLIENT_NAME		"cube-mcp-gateway"
#define GW_NAME_MAX		128

#include "str.h"
#include "clock.h"
#include "files.h"
#include "frame.h"
#include "proc.h"
#include "log.h"
#include "flags.h"
#include "config.h"
#include "routes.h"
#include "upstream.h"
#include "http.h"

/* ---- commands ---------------------------------------------------------------------------- */

int cmd_launch(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_catalog(int argc, char **argv);

#endif /* GW_H */
