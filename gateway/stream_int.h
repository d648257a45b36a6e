/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the inside of a relay stream, shared by relay.c (streams and relaying),
 * park.c (2026-07-28 input_required round trips) and events.c (GET streams).
 */
#ifndef GW_STREAM_INT_H
#define GW_STREAM_INT_H

#include "http_int.h"

enum wait_result {
	WAIT_READY,
	WAIT_GONE,
	WAIT_TIMEOUT,
};

struct stream {
	pthread_mutex_t lock;	/* refs and everything below */
	int refs;
	int efd;		/* readable while something waits in out, or once done */
	int fd;			/* the client's socket, watched for hang-ups; -1 stops that */
	struct strbuf out;	/* SSE text not handed out yet */
	size_t off;
	bool done;		/* nothing more will be queued */
	bool sse;
	bool get;		/* the session's GET stream */
	bool linked;		/* the upstream still references the link */
	json_t *final;		/* the answer, for JSON-only clients */
	bool parked;		/* answered input_required: waits for the client's retry */
	json_t *held;		/* the server's answer that came while parked */
	struct http_server *h;
	struct session *s;	/* referenced, and counted as in flight */
	char *idtext;		/* the client's request id, claimed on the session */
	json_t *cid;
	json_t *token;		/* the client's progress token */
	struct upstream *u;
	int64_t upid;
	int64_t deadline;	/* monotonic ns; 0: none */
	int64_t timeout_ns;
	char what[48];
	struct up_link link;
	/* resume.c: a session's POST stream that a client can resume (no: 0 when not). */
	unsigned no;		/* its number in the session, the first half of event ids */
	size_t *ends;		/* ends[k]: where event k ends, counting bytes let go */
	size_t nends, capends;
	size_t gone;		/* bytes handed out and let go from the front of out */
	int gen;		/* the reader that hands out; an older one ends */
	int64_t detached;	/* under h->lock: when its reader left before the end */
	struct stream *rnext, **rprev;	/* h->resumable, under h->lock */
};

void stream_wake(struct stream *st);
/* With st->lock held: one SSE event onto the queue (SSE streams only). */
void push_locked(struct stream *st, json_t *msg, const char *evid);
void stream_push(struct stream *st, json_t *msg, const char *evid);
/* The last message: the answer (NULL for a request the client cancelled). */
void stream_finish(struct stream *st, json_t *final);
void stream_ref(struct stream *st);
/* No answer will be waited for: tell the server, if it still has the request. */
void stream_abandon(struct stream *st, const char *reason);
json_t *server_request_refuse(json_t *id, const char *why);
/* park.c: a 2026-07-28 client's server request, parked as an input_required answer. */
json_t *park_request(struct stream *st, json_t *msg);

/* resume.c */
/* With st->lock held: an event ended at out.len; the next one gets seq + 1. */
void resume_mark_locked(struct stream *st);
/* With st->lock held: whether handed-out text stays for replay (else it is let go). */
bool resume_keep_locked(struct stream *st);
/* The stream's end was handed out: it leaves the resumable list. */
void resume_drop(struct stream *st);
/* Its reader's connection broke before the end: wait --resume-window for a resume. */
void resume_detach(struct stream *st, int gen);

#endif /* GW_STREAM_INT_H */
