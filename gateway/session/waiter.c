/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: connections that wait (stream_int.h). One loop thread serves every
 * connection, so a connection whose stream has nothing to hand out yet is suspended
 * (hd_suspend) instead of blocking its thread, and resumed by whoever gives it
 * something to do: the stream's wake-up (an answer, an event, the end), the client hanging
 * up, or a deadline (a call timeout, the wait for a 2026-07-28 status). The HTTP server does
 * not look at a suspended connection, so one thread here does: an epoll set of the clients'
 * sockets, for hang-ups only, and the earliest deadline as its timeout. Most sleeps end within a
 * fraction of a millisecond (a call answered), so a socket joins the set only once its
 * connection has slept WATCH_AFTER_NS: a sleep costs no system call, and a client that hangs
 * up is noticed that much later (the set reports a hang-up that came before it joined).
 *
 * A sleeper is registered exactly while its connection is suspended, under the waiter's
 * lock (this file's alone); whoever unregisters it resumes the connection, so each
 * suspension ends once. While registered, the connection keeps the stream, and so the
 * sleeper, alive. Lock order: a stream's lock, then this one; the HTTP server's own lock is
 * taken inside suspend and resume and never held while it calls us.
 */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/loop.h"
#include "session/session.h"
#include "session/stream_int.h"

/*
 * With a deadline pending, the thread looks at least this often, so that a sleeper whose
 * deadline is later than the next look needs no wake-up of the thread to register.
 */
#define LOOK_NS		(1000LL * 1000000LL)
#define WATCH_AFTER_NS	(20LL * 1000000LL)
#define NEVER		INT64_MAX
#define EVENTS_MAX	64

struct waiter {
	pthread_mutex_t lock;
	int epfd;
	int evfd;		/* rung to make the thread look again (token 0) */
	/*
	 * The sleepers, each on one list: 'fresh' (a socket not in the set yet), 'timed' (a
	 * deadline) and 'idle' (neither: a stream that waits for events, watched). A look walks
	 * the first two only: the calls of the last WATCH_AFTER_NS and those with a timeout,
	 * not the thousand GET streams of a busy gateway.
	 */
	struct sleeper *fresh, *timed, *idle;
	uint64_t next_token;
	int64_t next_look;	/* when the thread looks next, NEVER: only when rung */
	bool stopping;
	pthread_t thread;
	bool thread_on;
	struct loop *loop;	/* the daemon's, rung after a resume from elsewhere */
};

void
waiter_use_loop(struct waiter *w, struct loop *l)
{
	pthread_mutex_lock(&w->lock);
	w->loop = l;
	pthread_mutex_unlock(&w->lock);
}

static void
ring(struct waiter *w)
{
	uint64_t one = 1;
	ssize_t n = write(w->evfd, &one, sizeof(one));

	(void)n;
}

/* With w->lock held: sl leaves the list it is on. */
static void
list_del(struct sleeper *sl)
{
	*sl->prev = sl->next;
	if (sl->next)
		sl->next->prev = sl->prev;
}

/* With w->lock held: sl leaves the set; its connection is returned, still suspended. */
static struct hd_conn *
unlink_locked(struct waiter *w, struct sleeper *sl)
{
	struct hd_conn *c = sl->c;

	list_del(sl);
	if (sl->watched)
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, sl->fd, NULL);
	sl->c = NULL;
	sl->prev = NULL;
	sl->next = NULL;
	sl->watched = false;
	return c;
}

/*
 * With w->lock held: sl leaves the set and its connection resumes. The HTTP server runs
 * resumed connections at the loop's next turn, which this asks for (from the loop's own
 * thread that costs no system call).
 */
static void
wake_locked(struct waiter *w, struct sleeper *sl)
{
	hd_resume(unlink_locked(w, sl));
	loop_wake(w->loop);
}

/* With w->lock held: sl joins the list its state says (see struct waiter). */
static void
link_locked(struct waiter *w, struct sleeper *sl)
{
	struct sleeper **head = sl->fd >= 0 && !sl->watched ? &w->fresh :
				sl->deadline ? &w->timed : &w->idle;

	sl->next = *head;
	if (sl->next)
		sl->next->prev = &sl->next;
	sl->prev = head;
	*head = sl;
}

bool
waiter_sleep(struct waiter *w, struct sleeper *sl, struct hd_conn *c, int fd,
	     int64_t deadline)
{
	int64_t look;
	bool slept = false;

	pthread_mutex_lock(&w->lock);
	if (w->stopping)
		goto out;
	/* Another connection still asleep on it (a reader that a resume replaced) goes on. */
	if (sl->c)
		wake_locked(w, sl);
	sl->token = ++w->next_token;
	sl->fd = fd;
	sl->hup = false;
	sl->watch_at = fd >= 0 ? time_mono_ns() + WATCH_AFTER_NS : 0;
	sl->c = c;
	sl->deadline = deadline;
	link_locked(w, sl);
	hd_suspend(c);
	look = deadline && (!sl->watch_at || deadline < sl->watch_at) ? deadline : sl->watch_at;
	if (look && look < w->next_look) {
		w->next_look = look;
		ring(w);
	}
	slept = true;
out:
	pthread_mutex_unlock(&w->lock);
	return slept;
}

bool
waiter_hung_up(struct waiter *w, struct sleeper *sl)
{
	bool hup;

	pthread_mutex_lock(&w->lock);
	hup = sl->hup;
	sl->hup = false;
	pthread_mutex_unlock(&w->lock);
	return hup;
}

void
waiter_wake(struct waiter *w, struct sleeper *sl)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->lock);
	if (sl->c)
		wake_locked(w, sl);
	pthread_mutex_unlock(&w->lock);
}

/*
 * A connection closed while asleep (the gateway stops, a handler gave up) ends its sleep
 * without a resume, as it is about to be freed.
 */
void
waiter_forget(struct waiter *w, struct sleeper *sl, struct hd_conn *c)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->lock);
	if (sl->c == c)
		unlink_locked(w, sl);
	sl->hup = false;
	pthread_mutex_unlock(&w->lock);
}

/* With w->lock held: sl's socket joins the set, for a hang-up now or later. */
static void
watch_locked(struct waiter *w, struct sleeper *sl)
{
	struct epoll_event ev = { .events = EPOLLRDHUP | EPOLLONESHOT, .data.u64 = sl->token };

	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, sl->fd, &ev) &&
	    (errno != EEXIST || epoll_ctl(w->epfd, EPOLL_CTL_MOD, sl->fd, &ev)))
		sl->fd = -1;	/* Not watched: the deadline or the stream still wakes it. */
	else
		sl->watched = true;
}

/*
 * With w->lock held: the sleepers due wake, those asleep long enough are watched; returns
 * when the thread should look next.
 */
static int64_t
due_locked(struct waiter *w)
{
	int64_t now = time_mono_ns(), next = NEVER;
	struct sleeper *sl, *n;

	for (sl = w->fresh; sl; sl = n) {
		n = sl->next;
		if (sl->watch_at > now) {
			if (sl->watch_at < next)
				next = sl->watch_at;
			continue;
		}
		/* Asleep long enough: its socket joins the set, and it moves to its list. */
		list_del(sl);
		watch_locked(w, sl);	/* not watchable: fd -1, off 'fresh' all the same */
		link_locked(w, sl);
	}
	for (int l = 0; l < 2; l++) {
		for (sl = l ? w->timed : w->fresh; sl; sl = n) {
			n = sl->next;
			if (!sl->deadline)
				continue;
			if (sl->deadline <= now)
				wake_locked(w, sl);
			else if (sl->deadline < next)
				next = sl->deadline;
		}
	}
	if (next != NEVER && next > now + LOOK_NS)
		next = now + LOOK_NS;
	return next;
}

/* With w->lock held: the sleeper an epoll event names, if it is still registered. */
static void
hangup_locked(struct waiter *w, uint64_t token)
{
	struct sleeper *lists[] = { w->fresh, w->timed, w->idle };

	/* Hang-ups are rare: a walk is cheaper than keeping an index. */
	for (int l = 0; l < 3; l++) {
		for (struct sleeper *sl = lists[l]; sl; sl = sl->next) {
			if (sl->token == token) {
				sl->hup = true;
				wake_locked(w, sl);
				return;
			}
		}
	}
}

static void *
waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct epoll_event evs[EVENTS_MAX];
	int64_t look = NEVER;

	for (;;) {
		int timeout = -1, n, i;

		if (look != NEVER) {
			int64_t left = look - time_mono_ns();

			timeout = left > 0 ? (int)((left + 999999) / 1000000) : 0;
		}
		n = epoll_wait(w->epfd, evs, EVENTS_MAX, timeout);
		pthread_mutex_lock(&w->lock);
		if (w->stopping) {
			pthread_mutex_unlock(&w->lock);
			break;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.u64 == 0) {
				uint64_t v;
				ssize_t r = read(w->evfd, &v, sizeof(v));

				(void)r;
			} else {
				hangup_locked(w, evs[i].data.u64);
			}
		}
		look = due_locked(w);
		w->next_look = look;
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

int
waiter_init(struct http_server *h)
{
	struct waiter *w = calloc(1, sizeof(*w));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };

	if (w == NULL)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	w->next_look = NEVER;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->waiter = w;
	if (w->epfd < 0 || w->evfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev))
		return -errno;
	if (pthread_create(&w->thread, NULL, waiter_main, w))
		return -EAGAIN;
	w->thread_on = true;
	return 0;
}

/* Before the daemon stops: every sleeper resumes, and no connection suspends again. */
void
waiter_stop(struct http_server *h)
{
	struct waiter *w = h->waiter;

	if (w == NULL)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	while (w->fresh || w->timed || w->idle)
		wake_locked(w, w->fresh ? w->fresh : w->timed ? w->timed : w->idle);
	ring(w);
	pthread_mutex_unlock(&w->lock);
	if (w->thread_on)
		pthread_join(w->thread, NULL);
	w->thread_on = false;
}

/* Last of all, after the daemon and every stream that could wake a sleeper. */
void
waiter_free(struct http_server *h)
{
	struct waiter *w = h->waiter;

	if (w == NULL)
		return;
	waiter_stop(h);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->evfd >= 0)
		close(w->evfd);
	pthread_mutex_destroy(&w->lock);
	free(w);
	h->waiter = NULL;
}
