/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: JSON-RPC messages (rpc.c) and the protocol's names: error codes, the
 * 2026-07-28 revision's _meta keys, log levels, a client's capabilities.
 */
#ifndef GW_RPC_H
#define GW_RPC_H

#include <stdbool.h>

#include <jansson.h>

/* The stateless revision: every request carries its version and capabilities in _meta. */
#define MCP_2026_07_28	"2026-07-28"
#define META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define META_CAPS	"io.modelcontextprotocol/clientCapabilities"
#define META_INFO	"io.modelcontextprotocol/clientInfo"
#define META_LOG_LEVEL	"io.modelcontextprotocol/logLevel"
#define RPC_HEADER_MISMATCH	(-32020)
#define RPC_MISSING_CAPABILITY	(-32021)
#define RPC_UNSUPPORTED_VERSION	(-32022)
#define META_SERVER_INFO	"io.modelcontextprotocol/serverInfo"
#define EXT_TASKS	"io.modelcontextprotocol/tasks"
#define META_SUB_ID	"io.modelcontextprotocol/subscriptionId"

enum rpc_code {
	RPC_PARSE = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL = -32603,
};

json_t *rpc_error(json_t *id, int code, const char *msg);
/*
 * A request id as compact JSON text (malloc'd, NULL without memory): what json_dumps
 * spells, an integer written directly since nearly every id is one.
 */
char *rpc_id_text(json_t *id);
json_t *rpc_result(json_t *id, json_t *result);
/* The HTTP status a 2026-07-28 answer goes out with: 404 and 400 for the refusals. */
unsigned int rpc_status(json_t *msg);
/* The syslog order of a level name (an index into the names), unknown ones the highest. */
int rpc_log_level(const char *name);
bool rpc_log_level_valid(const char *name);
/* UP_CAP_* of a client's capabilities object. */
unsigned rpc_client_caps(json_t *caps);

#endif /* GW_RPC_H */
