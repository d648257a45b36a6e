/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the stream object (stream.c), the core of every answer that is relayed or
 * streamed: a queue of SSE text that the upstream's reader thread (or a broadcast) fills and
 * the client's connection hands out, or the one final answer a JSON-only client waits for.
 * Its lock is stream.c's alone. A connection with nothing to do sleeps on the stream
 * (waiter.c) until it is woken. The files above it hook in: session.c is told when the last
 * reference goes, relay.c is the upstream's link, resume.c keeps the queue for replay.
 */
#ifndef GW_STREAM_INT_H
#define GW_STREAM_INT_H

#include <sys/uio.h>

#include "base/str.h"
#include "session/session.h"
#include "upstream/upstream.h"

/* What a resumable stream tells resume.c; both run with no lock held. */
struct stream_hooks {
	/* The stream's end was handed out. */
	void (*drained)(struct stream *st);
	/* Its reader (generation gen) left before the end. */
	void (*detached)(struct stream *st, int gen);
};

/* A connection suspended until its stream wakes it; all of it under the waiter's lock. */
struct sleeper {
	struct hd_conn *c;	/* suspended on it; NULL: none */
	uint64_t token;		/* names this sleep in the epoll set */
	int fd;			/* the client's socket, watched for a hang-up; -1: not */
	bool watched;		/* fd is in the waiter's epoll set */
	bool hup;		/* woken by a hang-up, not seen yet by waiter_hung_up() */
	int64_t watch_at;	/* when fd joins the set, if the sleep lasts */
	int64_t deadline;	/* monotonic ns it wakes at; 0: none */
	struct sleeper *next, **prev;
};

struct stream {
	pthread_mutex_t lock;	/* refs and everything below that is not set before use */
	int refs;
	struct sleeper sleep;	/* the waiter's, under its lock */
	int fd;			/* the client's socket, watched for hang-ups; -1 stops that */
	int64_t hold;		/* stream_reply's: until when its status line may wait */
	struct strbuf out;	/* SSE text not handed out yet */
	size_t off;
	bool done;		/* nothing more will be queued */
	bool sse;
	bool get;		/* the session's GET stream */
	bool stateless;		/* its session is a 2026-07-28 one-request session */
	bool linked;		/* the upstream still references the link */
	json_t *final;		/* the answer, for JSON-only clients */
	char *final_text;	/* or its text (stream_finish_text), final_len bytes */
	size_t final_len;
	bool parked;		/* answered input_required: waits for the client's retry */
	json_t *held;		/* the server's answer that came while parked */
	struct http_server *h;
	struct session *s;	/* referenced, and counted as in flight */
	/* The last reference went: the owner lets go of what it counted (session.c). */
	void (*release)(struct stream *st);
	char *idtext;		/* the client's request id, claimed on the session */
	json_t *cid;
	json_t *token;		/* the client's progress token */
	struct upstream *u;
	int64_t upid;
	int64_t deadline;	/* monotonic ns; 0: none */
	int64_t timeout_ns;
	char what[48];
	/* A tools/call for the audit log: when it left, the tool, its arguments. */
	int64_t audit_t0;
	char audit_tool[96];
	json_t *audit_args;
	struct up_link link;
	/* A resumable POST stream (resume.c); no is 0 and hooks NULL when it is not one. */
	const struct stream_hooks *hooks;
	unsigned no;		/* its number in the session, the first half of event ids */
	size_t *ends;		/* ends[k]: where event k ends, counting bytes let go */
	size_t nends, capends;
	size_t gone;		/* bytes handed out and let go from the front of out */
	int gen;		/* the reader that hands out; an older one ends */
	int64_t detached;	/* resume.c's, under its lock: when its reader left */
	struct stream *rnext, **rprev;	/* resume.c's list, under its lock */
};

/* waiter.c: c (in one of its callbacks) is suspended until waiter_wake(sl), a hang-up on fd
 * (-1: none) or deadline (0: none); false when the gateway is stopping and c must not wait. */
bool waiter_sleep(struct waiter *w, struct sleeper *sl, struct hd_conn *c, int fd,
		  int64_t deadline);
/* Whether the last sleep on sl ended with the client's hang-up (once: it is forgotten). */
bool waiter_hung_up(struct waiter *w, struct sleeper *sl);
/* The connection asleep on sl, if any, resumes. */
void waiter_wake(struct waiter *w, struct sleeper *sl);
/* c, being closed, sleeps on sl no more (if it did); it is not resumed. */
void waiter_forget(struct waiter *w, struct sleeper *sl, struct hd_conn *c);

/* A stream with no owner yet: the caller sets release, s and the link before it is shared. */
struct stream *stream_new(struct http_server *h, struct session *s, json_t *id, bool sse,
			  int fd);
void stream_ref(struct stream *st);
void stream_wake(struct stream *st);
/*
 * The last message given as JSON text in n pieces (relay.c: a server's answer passed on as
 * it came), like stream_finish(). Only for a stream whose final message no one reads as
 * JSON: not a batch's (stream_final) nor a 2026-07-28 one's.
 */
void stream_finish_text(struct stream *st, const struct iovec *text, int n);
/* Raw SSE text onto the queue (a retry hint, replayed events). */
void stream_append(struct stream *st, const char *text);
/* No answer will be waited for: tell the server, if it still has the request. */
void stream_abandon(struct stream *st, const char *reason);
/* The server's id of the request, once it is submitted. */
void stream_set_upid(struct stream *st, int64_t id);
/* The upstream lets go of the link; true only for the one caller that got it back. */
bool stream_unlink(struct stream *st);
/* The error answer "mcp server "<name>": err" for the stream's request. */
json_t *stream_error(struct stream *st, const char *err);

/* park.c's: a 2026-07-28 request's input_required round trips. */
/* Marks the stream parked; false when it is parked already or done. */
bool stream_park(struct stream *st);
/* The server's answer came: kept for the retry if the stream is parked. */
void stream_keep_answer(struct stream *st, json_t *answer);
/*
 * The client's retry takes the stream over: its id, socket and kind, the queue emptied. True
 * when the answer that came meanwhile is its final message; else parked again if park.
 */
bool stream_retry(struct stream *st, json_t *id, int fd, bool sse, bool park);

/* resume.c's: the event ids of a resumable stream and where its reader resumes. */
/* Number no, its first event a priming one if asked; hooks tell resume.c the rest. */
void stream_resumable(struct stream *st, unsigned no, int priming_retry_ms,
		      const struct stream_hooks *hooks);
int stream_gen(struct stream *st);
/* A new reader on fd from the event after seq; a reference for it. False: not kept. */
bool stream_rewind(struct stream *st, unsigned seq, int fd);

#endif /* GW_STREAM_INT_H */
