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
#include "wire/httpd.h"

void reply_origin_set(const char *origin);
void reply_decorate(struct hd_resp *r);
enum hd_result reply_buffer(struct hd_conn *c, unsigned int status, const char *ctype,
			     char *body, size_t len, bool owned, const char *hname,
			     const char *hval);
enum hd_result reply_text(struct hd_conn *c, unsigned int status, const char *text);
enum hd_result reply_empty(struct hd_conn *c, unsigned int status);
/* A JSON-RPC message as a plain JSON body (msg is consumed). */
enum hd_result reply_json(struct hd_conn *c, unsigned int status, json_t *msg,
			   const char *session_id);
/* An HTTP-level refusal that JSON-RPC clients can still read: an error with a null id. */
enum hd_result reply_rpc_error(struct hd_conn *c, unsigned int status, int code,
				const char *msg);
/* One message as a one-event SSE stream (msg is not consumed). */
enum hd_result reply_sse(struct hd_conn *c, json_t *msg, const char *session_id);
/* An event stream's answer: its headers, the session's id, CORS; r is consumed. */
enum hd_result reply_sse_stream(struct hd_conn *c, struct hd_resp *r,
				 const char *session_id);
enum hd_result reply_unauthorized(struct hd_conn *c);
enum hd_result reply_preflight(struct hd_conn *c);

#endif /* GW_REPLY_H */
