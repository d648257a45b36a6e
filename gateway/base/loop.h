/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the event loop (loop.c). One thread waits on one epoll set for the clients'
 * HTTP connections and the servers' stdout pipes, so that an answer
 * read from a server is written to its client by the thread that read it: no hand-off, no
 * wake-up of another thread per call.
 */
#ifndef GW_LOOP_H
#define GW_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;

/*
 * A descriptor the loop watches for input. ready() runs on the loop's thread with the
 * epoll events, or with 0 when the loop stops while it is still watched: the owner takes
 * the descriptor back (it is no longer in the set).
 */
struct loop_watch {
	int fd;
	void (*ready)(struct loop_watch *w, uint32_t events);
	struct loop_watch *next, **prev;	/* loop.c's, under its lock */
};

/*
 * Work for the end of the loop's turn (loop_defer()): run once on the loop's thread after
 * turn(), however often it was deferred in that turn, before the loop waits again (also when
 * another task deferred it).
 */
struct loop_task {
	void (*run)(struct loop_task *t);
	struct loop_task *next;		/* loop.c's */
	bool queued;			/* loop.c's */
};

/*
 * turn() runs on the loop's thread after every batch of events and when its timeout passes;
 * it returns the next timeout in ms (-1: none).
 */
struct loop *loop_new(int (*turn)(void *ctx), void *ctx);
int loop_start(struct loop *l);
/* Any thread; w->fd must stay open until it is deleted or given back. */
int loop_add(struct loop *l, struct loop_watch *w);
/*
 * The same with epoll events of the caller's choosing (EPOLLET, EPOLLOUT: an HTTP
 * connection watched once for its whole life).
 */
int loop_add_events(struct loop *l, struct loop_watch *w, uint32_t events);
/* On the loop's thread only (from a ready()), or after loop_stop(). */
void loop_del(struct loop *l, struct loop_watch *w);
/*
 * Any thread: the loop takes a turn soon (turn() runs even with no event); from the loop's
 * own thread, inside a ready() or turn(), it takes one more before it waits.
 */
void loop_wake(struct loop *l);
/*
 * Busy polling (0, the default: off). Set before loop_start(). With ns > 0, an owner that
 * has just sent something whose answer comes back to one of its watches (a request written
 * to a server's pipe) calls loop_expect() on the loop's thread: before it sleeps, the loop
 * then polls its set for a window of up to ns from that moment, so that an answer within it
 * is read without the thread being woken. The window adapts: it shrinks, down to none, while
 * windows pass empty, and regrows when answers come within ns. Elsewhere (another thread, a
 * NULL loop) loop_expect() does nothing. The counts (any thread): windows that took events
 * and windows that passed empty.
 */
void loop_set_busy_poll(struct loop *l, int64_t ns);
void loop_expect(struct loop *l);
void loop_poll_counts(const struct loop *l, uint64_t *hit, uint64_t *missed);
/*
 * On the loop's thread: t runs at the end of this turn (true). Elsewhere, or with a NULL
 * loop, nothing is deferred (false): the caller does the work itself.
 */
bool loop_defer(struct loop *l, struct loop_task *t);
/* Whether the caller is the loop's thread. */
bool loop_here(const struct loop *l);
/* Ends the thread; every watch still there is given back (ready(w, 0)). */
void loop_stop(struct loop *l);
void loop_free(struct loop *l);

#endif /* GW_LOOP_H */
