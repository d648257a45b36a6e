/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: one thread on one epoll set (loop.h). Level-triggered unless a watch asks
 * otherwise: a watch that leaves input unread is called again on the next turn, so a ready()
 * may read a bounded amount.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/loop.h"

#define EVENTS_MAX	64

struct loop {
	int epfd;
	int evfd;		/* rung for a turn, or to stop (its events carry NULL) */
	int (*turn)(void *ctx);
	void *ctx;
	pthread_mutex_t lock;	/* the list of watches */
	struct loop_watch *watches;
	pthread_t thread;
	bool running;
	bool again;		/* the thread's own loop_wake(): no wait before the next turn */
	bool stopping;		/* atomic: read by the thread without the lock */
	/* Busy polling (loop_wait()): the thread's own but the counters (atomic). */
	int64_t busy_ns;	/* the longest window, loop_set_busy_poll() */
	int64_t poll_ns;	/* the window now */
	int64_t expect_at;	/* monotonic ns of the last loop_expect(); 0: no window */
	bool expect_seen;	/* the window has taken events */
	uint64_t polls_hit;	/* windows that took events */
	uint64_t polls_missed;	/* windows that passed empty */
	struct loop_task *deferred;	/* the thread's own: run after the turn */
};

struct loop *
loop_new(int (*turn)(void *ctx), void *ctx)
{
	struct loop *l = calloc(1, sizeof(*l));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	if (l == NULL)
		return NULL;
	pthread_mutex_init(&l->lock, NULL);
	l->turn = turn;
	l->ctx = ctx;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->epfd < 0 || l->evfd < 0 || epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->evfd, &ev)) {
		loop_free(l);
		return NULL;
	}
	return l;
}

/*
 * Busy polling. After loop_expect(), the thread looks at its set without sleeping for up to
 * poll_ns before it sleeps, so that an answer due within it is taken without a wake-up: on
 * a VM a wake-up costs the waker an IPI and the woken tens of microseconds before it runs,
 * twice per relayed call. poll_ns adapts as the guest's haltpoll does: a window that saw
 * nothing halves it (down to 0, no polling), so a server slower than busy_ns soon costs no
 * polling; an answer a longer window would have caught doubles it (at least to twice that
 * answer's time), up to busy_ns. The clock is read only while the set is empty.
 */
static void
poll_missed(struct loop *l)
{
	l->poll_ns /= 2;
	if (l->poll_ns < l->busy_ns / 16)
		l->poll_ns = 0;
	__atomic_add_fetch(&l->polls_missed, 1, __ATOMIC_RELAXED);
}

static void
poll_regrow(struct loop *l, int64_t waited)
{
	int64_t want = 2 * (l->poll_ns > waited ? l->poll_ns : waited);

	l->poll_ns = want < l->busy_ns ? want : l->busy_ns;
}

static int
loop_wait(struct loop *l, struct epoll_event *evs, int timeout)
{
	int64_t since = l->expect_at, waited;
	bool seen = l->expect_seen;
	int n;

	if (timeout == 0 || since == 0)
		return epoll_wait(l->epfd, evs, EVENTS_MAX, timeout);
	n = 0;
	if (l->poll_ns > 0)
		while ((n = epoll_wait(l->epfd, evs, EVENTS_MAX, 0)) == 0 &&
		       time_mono_ns() - since < l->poll_ns)
			;
	if (n > 0) {
		if (!seen)
			__atomic_add_fetch(&l->polls_hit, 1, __ATOMIC_RELAXED);
		l->expect_seen = true;
		return n;
	}
	/* The window passed with nothing more: it was wasted if it saw nothing at all. */
	l->expect_at = 0;
	if (!seen && l->poll_ns > 0)
		poll_missed(l);
	/* The sleep keeps the turn's whole timeout: a window is far below its unit, 1 ms. */
	n = epoll_wait(l->epfd, evs, EVENTS_MAX, timeout);
	waited = time_mono_ns() - since;
	if (n > 0 && !seen && waited < l->busy_ns)
		poll_regrow(l, waited);
	return n;
}

/*
 * The turn, then what it and the batch before it deferred, in the order deferred; and what
 * those tasks defer in turn (a held request's failed write reads the server's output, which
 * may answer the server), so that nothing deferred waits through the sleep.
 */
static int
loop_turn(struct loop *l)
{
	int timeout = l->turn(l->ctx);
	struct loop_task *t, *rev;

	while (l->deferred) {
		rev = NULL;
		while ((t = l->deferred) != NULL) {
			l->deferred = t->next;
			t->next = rev;
			rev = t;
		}
		while ((t = rev) != NULL) {
			rev = t->next;
			t->queued = false;
			t->run(t);
		}
	}
	return timeout;
}

static void *
loop_main(void *arg)
{
	struct loop *l = arg;
	struct epoll_event evs[EVENTS_MAX];
	int timeout = loop_turn(l);

	while (!__atomic_load_n(&l->stopping, __ATOMIC_ACQUIRE)) {
		int n = loop_wait(l, evs, timeout);

		for (int i = 0; i < n; i++) {
			struct loop_watch *w = evs[i].data.ptr;
			uint64_t v;

			if (w)
				w->ready(w, evs[i].events);
			else if (read(l->evfd, &v, sizeof(v)) < 0)
				continue;	/* rung twice, drained once */
		}
		l->again = false;
		timeout = loop_turn(l);
		if (l->again)
			timeout = 0;
	}
	return NULL;
}

int
loop_start(struct loop *l)
{
	if (pthread_create(&l->thread, NULL, loop_main, l))
		return -EAGAIN;
	l->running = true;
	return 0;
}

int
loop_add(struct loop *l, struct loop_watch *w)
{
	return loop_add_events(l, w, EPOLLIN);
}

int
loop_add_events(struct loop *l, struct loop_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	if (l->stopping || epoll_ctl(l->epfd, EPOLL_CTL_ADD, w->fd, &ev)) {
		rc = l->stopping ? -ESHUTDOWN : -errno;
	} else {
		w->next = l->watches;
		if (w->next)
			w->next->prev = &w->next;
		w->prev = &l->watches;
		l->watches = w;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

void
loop_del(struct loop *l, struct loop_watch *w)
{
	pthread_mutex_lock(&l->lock);
	if (w->prev) {
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
		*w->prev = w->next;
		if (w->next)
			w->next->prev = w->prev;
		w->next = NULL;
		w->prev = NULL;
	}
	pthread_mutex_unlock(&l->lock);
}

void
loop_wake(struct loop *l)
{
	uint64_t one = 1;
	ssize_t n;

	if (l == NULL)
		return;
	if (loop_here(l)) {
		l->again = true;
		return;
	}
	n = write(l->evfd, &one, sizeof(one));
	(void)n;
}

void
loop_set_busy_poll(struct loop *l, int64_t ns)
{
	l->busy_ns = ns > 0 ? ns : 0;
	l->poll_ns = l->busy_ns;
}

void
loop_expect(struct loop *l)
{
	if (l && l->busy_ns && loop_here(l)) {
		l->expect_at = time_mono_ns();
		l->expect_seen = false;
	}
}

bool
loop_defer(struct loop *l, struct loop_task *t)
{
	if (!loop_here(l))
		return false;
	if (!t->queued) {
		t->queued = true;
		t->next = l->deferred;
		l->deferred = t;
	}
	return true;
}

void
loop_poll_counts(const struct loop *l, uint64_t *hit, uint64_t *missed)
{
	*hit = __atomic_load_n(&l->polls_hit, __ATOMIC_RELAXED);
	*missed = __atomic_load_n(&l->polls_missed, __ATOMIC_RELAXED);
}

bool
loop_here(const struct loop *l)
{
	return l && l->running && pthread_equal(l->thread, pthread_self());
}

void
loop_stop(struct loop *l)
{
	struct loop_watch *w;

	if (l == NULL || !l->running)
		return;
	pthread_mutex_lock(&l->lock);
	__atomic_store_n(&l->stopping, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&l->lock);
	loop_wake(l);
	pthread_join(l->thread, NULL);
	l->running = false;
	/* No thread reads them now: their owners do again. */
	for (;;) {
		pthread_mutex_lock(&l->lock);
		w = l->watches;
		pthread_mutex_unlock(&l->lock);
		if (w == NULL)
			break;
		loop_del(l, w);
		w->ready(w, 0);
	}
}

void
loop_free(struct loop *l)
{
	if (l == NULL)
		return;
	loop_stop(l);
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->evfd >= 0)
		close(l->evfd);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
