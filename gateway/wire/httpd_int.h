/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: what httpd.c and httpd_parse.c share: a connection and its request.
 */
#ifndef GW_HTTPD_INT_H
#define GW_HTTPD_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/loop.h"
#include "base/str.h"
#include "wire/httpd.h"

/* A request's head (request line and headers) fits in this; beyond it the answer is 431. */
#define HD_HEAD_MAX	(8 * 1024)
#define HD_HEADERS_MAX	64
/* What one read takes: a head, or a piece of a body handed on at once. */
#define HD_IN_SIZE	(16 * 1024)

/* What a streamed answer may have waiting for the socket before its reader is asked again. */
#define HD_PUMP_MAX	(64 * 1024)

struct hd_resp {
	struct strbuf hdrs;	/* "Name: value\r\n" lines */
	const char *body;
	size_t len;
	bool owned;
	hd_reader_fn reader;
	void *rcls;
	void (*rfree)(void *cls);
	size_t block;
	bool chunked;
};


enum hd_state {
	HS_HEAD,	/* reading a request's head */
	HS_BODY,	/* reading its body, handed on piece by piece */
	HS_HANDLE,	/* all of it in: the handler is asked until it answers */
	HS_SEND,	/* the answer goes out */
	HS_LINGER,	/* answered before its body came: what is still coming is read and dropped */
};

enum hd_chunk {
	HC_SIZE,	/* a chunk's size line */
	HC_DATA,	/* its bytes */
	HC_DATA_END,	/* the CRLF after them */
	HC_TRAILER,	/* the trailer lines after the last chunk */
};

struct hd_header {
	const char *name;
	const char *value;
	size_t len;		/* of the name */
};

struct hd_conn {
	struct loop_watch w;
	struct hd *d;
	int fd;
	struct hd_conn *next, **pprev;	/* every connection (loop thread) */
	struct hd_conn *rnext;		/* the resumed ones (under d->rlock) */
	bool susp, rqueued, dead;	/* under d->rlock */
	bool watched;			/* in the loop's set */
	bool can_read, can_write, eof;
	bool peer_closed;		/* its FIN was reported: a short read is the last */
	enum hd_state state;
	int64_t active_at;		/* the last read or write that moved */
	int64_t head_at;		/* when the head being read began to come */

	char *in;			/* HD_IN_SIZE bytes while there is input */
	size_t in_len;

	/* The request. */
	char *head;			/* its head, parsed in place */
	const char *method, *url;
	struct hd_header hdr[HD_HEADERS_MAX];
	unsigned int nhdr;
	bool started;			/* the handler has seen it */
	bool http10, keep, head_only, expect100;
	bool chunked;
	enum hd_chunk cstate;
	uint64_t body_len;		/* declared by Content-Length */
	uint64_t body_left;		/* of the body, or of the current chunk */
	bool body_done;
	void *con_cls;

	/* The answer. */
	struct hd_resp *resp;
	bool resp_done, close_after, broken;
	size_t lingered;		/* bytes dropped in HS_LINGER */
	struct strbuf out;
	size_t out_off;
};

/*
 * Parses the head in c->in (what ends with an empty line), or says why not: 0 parsed (its
 * bytes taken from c->in), 1 more is needed, else the HTTP status of the refusal.
 */
int hd_parse_head(struct hd_conn *c);
/*
 * The body's framing from the headers: 0, or the status of the refusal. Sets body_left,
 * chunked, body_done.
 */
int hd_parse_framing(struct hd_conn *c);
/*
 * The next piece of the body in c->in, at *p for *n bytes (0: more input is needed, or the
 * body is done), counted as delivered: the caller hands it on, then hd_take()s it. The
 * chunked framing around pieces is taken here. -1: bad chunked framing.
 */
int hd_body_piece(struct hd_conn *c, const char **p, size_t *n);
/* n bytes of c->in are used up. */
void hd_take(struct hd_conn *c, size_t n);
const char *hd_reason(unsigned int status);

/* httpd_answer.c: what c's streamed answer has, into c->out; true if anything came or the
 * stream ended (c->resp_done, c->broken). */
bool hd_pump(struct hd_conn *c);
void hd_resp_free(struct hd_resp *r);

#endif /* GW_HTTPD_INT_H */
