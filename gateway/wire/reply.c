/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: every HTTP answer the gateway queues goes through here, so that each one
 * carries the CORS headers of the request it answers.
 */

#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "wire/httpd.h"
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
reply_decorate(struct hd_resp *r)
{
	if (tl_origin == NULL)
		return;
	hd_resp_header(r, "Access-Control-Allow-Origin", tl_origin);
	hd_resp_header(r, "Access-Control-Expose-Headers",
				"Mcp-Session-Id, Mcp-Protocol-Version");
	hd_resp_header(r, "Vary", "Origin");
}

/* body, owned (freed here) or not, with a Content-Type and one more header if given. */
enum hd_result
reply_buffer(struct hd_conn *c, unsigned int status, const char *ctype, char *body,
	     size_t len, bool owned, const char *hname, const char *hval)
{
	struct hd_resp *r;

	r = hd_resp_buffer(len, body, owned);
	if (r == NULL) {
		if (owned)
			free(body);
		return HD_NO;
	}
	if (ctype)
		hd_resp_header(r, "Content-Type", ctype);
	if (hname)
		hd_resp_header(r, hname, hval);
	reply_decorate(r);
	return hd_queue(c, status, r);
}

enum hd_result
reply_text(struct hd_conn *c, unsigned int status, const char *text)
{
	return reply_buffer(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
			    false, NULL, NULL);
}

enum hd_result
reply_empty(struct hd_conn *c, unsigned int status)
{
	return reply_buffer(c, status, NULL, "", 0, false, NULL, NULL);
}

enum hd_result
reply_unauthorized(struct hd_conn *c)
{
	return reply_buffer(c, HTTP_UNAUTHORIZED, "text/plain; charset=utf-8",
			    "unauthorized\n", 13, false, "WWW-Authenticate",
			    "Bearer realm=\"mcp-gateway\"");
}

enum hd_result
reply_json(struct hd_conn *c, unsigned int status, json_t *msg, const char *session_id)
{
	char *js = msg ? json_dumps(msg, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	json_decref(msg);
	if (js == NULL)
		return HD_NO;
	return reply_buffer(c, status, "application/json", js, strlen(js), true,
			    session_id ? "Mcp-Session-Id" : NULL, session_id);
}

enum hd_result
reply_rpc_error(struct hd_conn *c, unsigned int status, int code, const char *msg)
{
	return reply_json(c, status, rpc_error(NULL, code, msg), NULL);
}

enum hd_result
reply_sse_stream(struct hd_conn *c, struct hd_resp *r, const char *session_id)
{

	hd_resp_header(r, "Content-Type", "text/event-stream");
	hd_resp_header(r, "Cache-Control", "no-cache, no-transform");
	if (session_id)
		hd_resp_header(r, "Mcp-Session-Id", session_id);
	reply_decorate(r);
	return hd_queue(c, HTTP_OK, r);
}

enum hd_result
reply_sse(struct hd_conn *c, json_t *msg, const char *session_id)
{
	struct hd_resp *r;
	struct strbuf sb = {0};
	char *js = json_dumps(msg, JSON_COMPACT);

	if (js == NULL)
		return HD_NO;
	sb_appends(&sb, "event: message\ndata: ");
	sb_appends(&sb, js);
	sb_appends(&sb, "\n\n");
	free(js);
	r = hd_resp_buffer(sb.len, sb.buf, true);
	if (r == NULL) {
		sb_free(&sb);
		return HD_NO;
	}
	return reply_sse_stream(c, r, session_id);
}

/* CORS preflight: browsers send it without credentials, so it comes before the token. */
enum hd_result
reply_preflight(struct hd_conn *c)
{
	struct hd_resp *r = hd_resp_buffer(0, "", false);

	if (r == NULL)
		return HD_NO;
	reply_decorate(r);
	hd_resp_header(r, "Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
	hd_resp_header(r, "Access-Control-Allow-Headers", CORS_HEADERS);
	hd_resp_header(r, "Access-Control-Max-Age", "86400");
	return hd_queue(c, HTTP_NO_CONTENT, r);
}
