/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: every HTTP answer the gateway queues goes through here, so that each one
 * carries the CORS headers of the request it answers.
 */

#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/str.h"
#include "wire/reply.h"
#include "wire/rpc.h"

#define CORS_HEADERS	"Authorization, Content-Type, Accept, Mcp-Session-Id, " \
			"Mcp-Protocol-Version, Last-Event-ID"

/*
 * The allowed Origin of the request this daemon thread serves right now: every response to
 * it names that origin for CORS. A thread serves many connections in turn, so http.c sets
 * it again at every callback of a request.
 */
static __thread const char *tl_origin;

void
reply_origin_set(const char *origin)
{
	tl_origin = origin;
}

void
reply_decorate(struct MHD_Response *r)
{
	if (tl_origin == NULL)
		return;
	MHD_add_response_header(r, "Access-Control-Allow-Origin", tl_origin);
	MHD_add_response_header(r, "Access-Control-Expose-Headers",
				"Mcp-Session-Id, Mcp-Protocol-Version");
	MHD_add_response_header(r, "Vary", "Origin");
}

/* body, owned (freed here) or not, with a Content-Type and one more header if given. */
enum MHD_Result
reply_buffer(struct MHD_Connection *c, unsigned int status, const char *ctype, char *body,
	     size_t len, bool owned, const char *hname, const char *hval)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE :
					    MHD_RESPMEM_PERSISTENT);
	if (r == NULL) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	if (ctype)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (hname)
		MHD_add_response_header(r, hname, hval);
	reply_decorate(r);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result
reply_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
	return reply_buffer(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
			    false, NULL, NULL);
}

enum MHD_Result
reply_empty(struct MHD_Connection *c, unsigned int status)
{
	return reply_buffer(c, status, NULL, "", 0, false, NULL, NULL);
}

enum MHD_Result
reply_unauthorized(struct MHD_Connection *c)
{
	return reply_buffer(c, MHD_HTTP_UNAUTHORIZED, "text/plain; charset=utf-8",
			    "unauthorized\n", 13, false, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
			    "Bearer realm=\"mcp-gateway\"");
}

enum MHD_Result
reply_json(struct MHD_Connection *c, unsigned int status, json_t *msg, const char *session_id)
{
	char *js = msg ? json_dumps(msg, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	json_decref(msg);
	if (js == NULL)
		return MHD_NO;
	return reply_buffer(c, status, "application/json", js, strlen(js), true,
			    session_id ? "Mcp-Session-Id" : NULL, session_id);
}

enum MHD_Result
reply_rpc_error(struct MHD_Connection *c, unsigned int status, int code, const char *msg)
{
	return reply_json(c, status, rpc_error(NULL, code, msg), NULL);
}

enum MHD_Result
reply_sse_stream(struct MHD_Connection *c, struct MHD_Response *r, const char *session_id)
{
	enum MHD_Result ret;

	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, no-transform");
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	reply_decorate(r);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result
reply_sse(struct MHD_Connection *c, json_t *msg, const char *session_id)
{
	struct MHD_Response *r;
	struct strbuf sb = {0};
	char *js = json_dumps(msg, JSON_COMPACT);

	if (js == NULL)
		return MHD_NO;
	sb_appends(&sb, "event: message\ndata: ");
	sb_appends(&sb, js);
	sb_appends(&sb, "\n\n");
	free(js);
	r = MHD_create_response_from_buffer(sb.len, sb.buf, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		sb_free(&sb);
		return MHD_NO;
	}
	return reply_sse_stream(c, r, session_id);
}

/* CORS preflight: browsers send it without credentials, so it comes before the token. */
enum MHD_Result
reply_preflight(struct MHD_Connection *c)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (r == NULL)
		return MHD_NO;
	reply_decorate(r);
	MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
	MHD_add_response_header(r, "Access-Control-Allow-Headers", CORS_HEADERS);
	MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
	ret = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, r);
	MHD_destroy_response(r);
	return ret;
}
