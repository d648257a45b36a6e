/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: every HTTP answer (reply.c), with CORS headers for the Origin of the request
 * this thread serves.
 */
#ifndef GW_REPLY_H
#define GW_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <microhttpd.h>

void reply_origin_set(const char *origin);
void reply_decorate(struct MHD_Response *r);
enum MHD_Result reply_buffer(struct MHD_Connection *c, unsigned int status, const char *ctype,
			     char *body, size_t len, bool owned, const char *hname,
			     const char *hval);
enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *text);
enum MHD_Result reply_empty(struct MHD_Connection *c, unsigned int status);
/* A JSON-RPC message as a plain JSON body (msg is consumed). */
enum MHD_Result reply_json(struct MHD_Connection *c, unsigned int status, json_t *msg,
			   const char *session_id);
/* An HTTP-level refusal that JSON-RPC clients can still read: an error with a null id. */
enum MHD_Result reply_rpc_error(struct MHD_Connection *c, unsigned int status, int code,
				const char *msg);
/* One message as a one-event SSE stream (msg is not consumed). */
enum MHD_Result reply_sse(struct MHD_Connection *c, json_t *msg, const char *session_id);
/* An event stream's answer: its headers, the session's id, CORS; r is consumed. */
enum MHD_Result reply_sse_stream(struct MHD_Connection *c, struct MHD_Response *r,
				 const char *session_id);
enum MHD_Result reply_unauthorized(struct MHD_Connection *c);
enum MHD_Result reply_preflight(struct MHD_Connection *c);

#endif /* GW_REPLY_H */
