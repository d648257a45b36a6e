/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: JSON-RPC messages of the gateway's own, the HTTP status they go out with, and
 * what two of MCP's fields mean: log level names and a client's capabilities.
 */

#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "upstream/upstream.h"
#include "wire/httpd.h"
#include "wire/rpc.h"

static const char *const log_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", NULL,
};

json_t *
rpc_error(json_t *id, int code, const char *msg)
{
	json_t *m = json_string(msg), *e;
	char *safe;

	/*
	 * A message that quotes what a client sent (jansson's parse errors do) may hold bytes
	 * that are no UTF-8, which no JSON string can: those become '?', so the error is still
	 * an answer (fuzz_gw_http found a request that got none).
	 */
	if (m == NULL && msg && (safe = strdup(msg)) != NULL) {
		for (unsigned char *p = (unsigned char *)safe; *p; p++)
			if (*p >= 0x80)
				*p = '?';
		m = json_string(safe);
		free(safe);
	}
	e = json_pack("{s:s,s:O,s:{s:i,s:o}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
		      "error", "code", code, "message", m ? m : json_string("error"));
	return e;
}

json_t *
rpc_result(json_t *id, json_t *result)
{
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

/* 2026-07-28 answers an unknown method with 404 and a malformed request with 400. */
unsigned int
rpc_status(json_t *msg)
{
	json_int_t code = json_integer_value(json_object_get(json_object_get(msg, "error"),
							     "code"));

	if (code == RPC_METHOD_NOT_FOUND)
		return HTTP_NOT_FOUND;
	if (code == RPC_HEADER_MISMATCH || code == RPC_MISSING_CAPABILITY ||
	    code == RPC_UNSUPPORTED_VERSION)
		return HTTP_BAD_REQUEST;
	return HTTP_OK;
}

/* The syslog order of a level name; unknown names count as the most severe (always kept). */
int
rpc_log_level(const char *name)
{
	int i;

	for (i = 0; name && log_levels[i]; i++)
		if (strcmp(name, log_levels[i]) == 0)
			return i;
	return name ? 7 : 0;
}

bool
rpc_log_level_valid(const char *name)
{
	for (int i = 0; log_levels[i]; i++)
		if (strcmp(name, log_levels[i]) == 0)
			return true;
	return false;
}

unsigned
rpc_client_caps(json_t *caps)
{
	unsigned bits = 0;

	if (json_object_get(caps, "roots"))
		bits |= UP_CAP_ROOTS;
	if (json_object_get(caps, "sampling"))
		bits |= UP_CAP_SAMPLING;
	if (json_object_get(caps, "elicitation"))
		bits |= UP_CAP_ELICITATION;
	return bits;
}

char *
rpc_id_text(json_t *id)
{
	char buf[STR_INT_MAX];

	if (!json_is_integer(id))
		return json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
	return strdup(str_of_int(buf, json_integer_value(id), 1));
}
