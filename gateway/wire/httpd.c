/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the HTTP/1.1 server (httpd.h): connections on the loop's thread, each a small
 * state machine (head, body, handler, answer) run whenever its socket or a resume moves it.
 *
 * A connection joins the loop's set once, edge-triggered for input and output, and stays
 * there: suspending or resuming it makes no system call, and a read that returns less than
 * it asked for is known to have drained the socket, so no read is made to hear EAGAIN. An
 * answer of known length leaves in one send with its headers; a streamed one is sent in
 * chunks as its reader hands them out. Resumes from other threads are queued under one lock
 * and run at the loop's next turn (hd_turn), which the resumer asks for.
 */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "wire/httpd_int.h"

#define ACCEPT_BATCH	32
#define SWEEP_NS	(1000LL * 1000000LL)
/*
 * A connection answered before its body came is closed only once the client stopped sending
 * (its FIN), after this much more, or this long: closed with unread input, its socket would
 * send a reset, and a client still sending could lose the answer to it.
 */
#define LINGER_MAX	(1024 * 1024)
#define LINGER_NS	(2000LL * 1000000LL)
#define SPARE_MAX	64
/* Resumed connections run per turn at most, so sockets and pipes get theirs. */
#define RESUMED_MAX	4096

struct hd {
	struct hd_conf conf;
	struct loop *loop;
	struct loop_watch lw;	/* the listening socket */
	bool listening;
	pthread_mutex_t rlock;	/* the resumed list and every c->susp, rqueued, dead */
	struct hd_conn *rhead, *rtail;
	struct hd_conn *conns;	/* the loop thread's */
	unsigned int nconns;
	int64_t next_sweep;
	/*
	 * Input buffers of idle connections, for the next ones that read: a keep-alive
	 * connection gives its buffer back between requests (a thousand idle sessions hold
	 * none), and taking it from here costs no malloc of 16 KiB and no consolidation in free.
	 */
	char *spare[SPARE_MAX];
	unsigned int nspare;
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	bool quiesce, quiesced;	/* under qlock; quiesce also read without it */
};

enum step { STEP_NEXT, STEP_WAIT, STEP_CLOSE };

static void conn_run(struct hd_conn *c);

/* An answer of ours, not the handler's: the request was not one we can read. */
static enum step
refuse(struct hd_conn *c, unsigned int status)
{
	const char *text = hd_reason(status);
	struct hd_resp *r = hd_resp_buffer(strlen(text), text, false);

	if (r == NULL)
		return STEP_CLOSE;
	hd_resp_header(r, "Content-Type", "text/plain; charset=utf-8");
	c->keep = false;
	hd_queue(c, status, r);
	c->state = HS_SEND;
	return STEP_NEXT;
}

/* ---- the socket --------------------------------------------------------------------------- */

/* 1: bytes came or the input ended (c->eof); 0: none now. */
static int
conn_read(struct hd_conn *c)
{
	size_t room;

	if (c->in == NULL) {
		struct hd *d = c->d;

		c->in = d->nspare ? d->spare[--d->nspare] : malloc(HD_IN_SIZE);
		if (c->in == NULL) {
			c->eof = true;
			return 1;
		}
	}
	room = HD_IN_SIZE - c->in_len;
	if (room == 0)
		return 0;
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->in_len, room, 0);

		if (n > 0) {
			c->active_at = time_mono_ns();
			if (c->in_len == 0 && c->state == HS_HEAD)
				c->head_at = c->active_at;
			c->in_len += (size_t)n;
			/*
			 * Less than asked: the socket is drained until its next edge, and for
			 * good if the client's FIN came (with these bytes, maybe: no edge of
			 * its own would follow).
			 */
			if ((size_t)n < room) {
				c->can_read = false;
				c->eof = c->peer_closed;
			}
			return 1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		c->can_read = false;
		if (n < 0 && errno == EAGAIN)
			return 0;
		c->eof = true;
		return 1;
	}
}

/* 0: all of c->out sent; 1: the rest waits for the socket; -1: the connection broke. */
static int
conn_flush(struct hd_conn *c)
{
	if (c->out_off < c->out.len && c->can_write && c->d->conf.before_send)
		c->d->conf.before_send(c->d->conf.cls);
	while (c->out_off < c->out.len) {
		ssize_t n;

		if (!c->can_write)
			return 1;
		n = send(c->fd, c->out.buf + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
		if (n > 0) {
			c->out_off += (size_t)n;
			c->active_at = time_mono_ns();
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			c->can_write = false;	/* the edge of EPOLLOUT brings it back */
			return 1;
		} else {
			return -1;
		}
	}
	c->out.len = 0;
	c->out_off = 0;
	return 0;
}

static bool
is_susp(struct hd_conn *c)
{
	return __atomic_load_n(&c->susp, __ATOMIC_ACQUIRE);
}

/* Under d->rlock: c runs at the next turn. */
static void
enqueue_locked(struct hd *d, struct hd_conn *c)
{
	if (c->rqueued)
		return;
	c->rqueued = true;
	c->rnext = NULL;
	if (d->rtail)
		d->rtail->rnext = c;
	else
		d->rhead = c;
	d->rtail = c;
}

void
hd_suspend(struct hd_conn *c)
{
	pthread_mutex_lock(&c->d->rlock);
	__atomic_store_n(&c->susp, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->d->rlock);
}

void
hd_resume(struct hd_conn *c)
{
	struct hd *d = c->d;

	pthread_mutex_lock(&d->rlock);
	if (c->susp) {
		__atomic_store_n(&c->susp, false, __ATOMIC_RELEASE);
		enqueue_locked(d, c);
	}
	pthread_mutex_unlock(&d->rlock);
}

/* A handler or reader that neither answered nor slept is asked again at the next turn. */
static enum step
ask_again(struct hd_conn *c)
{
	pthread_mutex_lock(&c->d->rlock);
	if (!c->susp)
		enqueue_locked(c->d, c);
	pthread_mutex_unlock(&c->d->rlock);
	if (!is_susp(c))
		loop_wake(c->d->loop);
	return STEP_WAIT;
}

/* ---- the request -------------------------------------------------------------------------- */

static enum step
call_handler(struct hd_conn *c, const char *upload, size_t *size)
{
	struct hd *d = c->d;

	c->started = true;
	if (d->conf.access(d->conf.cls, c, c->url, c->method, upload, size, &c->con_cls) ==
	    HD_NO)
		return STEP_CLOSE;
	if (c->resp)
		c->state = HS_SEND;
	return STEP_NEXT;
}

static enum step
conn_head(struct hd_conn *c)
{
	size_t zero = 0;
	int st = c->in_len ? hd_parse_head(c) : 1;
	enum step s;

	if (st == 1) {
		if (c->eof)
			return STEP_CLOSE;
		if (!c->can_read || !conn_read(c))
			return STEP_WAIT;
		return STEP_NEXT;
	}
	if (st == 0)
		st = hd_parse_framing(c);
	if (st)
		return refuse(c, (unsigned int)st);
	s = call_handler(c, NULL, &zero);
	if (s != STEP_NEXT || c->resp)
		return s;
	if (c->expect100 && !c->body_done)
		sb_appends(&c->out, "HTTP/1.1 100 Continue\r\n\r\n");
	c->state = c->body_done ? HS_HANDLE : HS_BODY;
	return STEP_NEXT;
}

static enum step
conn_body(struct hd_conn *c)
{
	const char *p;
	size_t n;

	if (conn_flush(c) < 0)
		return STEP_CLOSE;
	if (hd_body_piece(c, &p, &n) < 0)
		return STEP_CLOSE;
	if (n) {
		size_t size = n;
		enum step s = call_handler(c, p, &size);

		hd_take(c, n);
		return s;
	}
	if (c->body_done) {
		c->state = HS_HANDLE;
		return STEP_NEXT;
	}
	if (c->eof)
		return STEP_CLOSE;
	if (!c->can_read || !conn_read(c))
		return STEP_WAIT;
	return STEP_NEXT;
}

static enum step
conn_handle(struct hd_conn *c)
{
	size_t zero = 0;
	enum step s = call_handler(c, NULL, &zero);

	if (s != STEP_NEXT || c->resp)
		return s;
	return is_susp(c) ? STEP_WAIT : ask_again(c);
}

/* ---- the answer --------------------------------------------------------------------------- */

/* The request's end for its handler (completed) and for us: its answer and head freed. */
static void
request_done(struct hd_conn *c)
{
	struct hd *d = c->d;

	if (c->started) {
		c->started = false;
		d->conf.completed(d->conf.cls, c, &c->con_cls);
	}
	hd_resp_free(c->resp);
	c->resp = NULL;
	free(c->head);
	c->head = NULL;
	c->nhdr = 0;
	c->con_cls = NULL;
	c->chunked = c->body_done = c->resp_done = c->close_after = false;
	c->expect100 = c->head_only = false;
	c->body_len = c->body_left = 0;
	if (c->out.cap > HD_PUMP_MAX * 2)
		sb_free(&c->out);
	c->out.len = c->out_off = 0;
}

/*
 * c's input buffer, if it holds nothing, goes to the pool: an idle connection holds none, so
 * a thousand open sessions stay small.
 */
static void
in_release(struct hd_conn *c)
{
	struct hd *d = c->d;

	if (c->in_len || c->in == NULL)
		return;
	if (d->nspare < SPARE_MAX)
		d->spare[d->nspare++] = c->in;
	else
		free(c->in);
	c->in = NULL;
}

/* The request is over: the next one on the connection, or its end. */
static enum step
request_end(struct hd_conn *c)
{
	bool close_it = c->close_after || c->broken;
	bool linger = close_it && !c->body_done && !c->broken && !c->eof;

	request_done(c);
	if (linger) {
		shutdown(c->fd, SHUT_WR);
		c->state = HS_LINGER;
		c->active_at = time_mono_ns();
		return STEP_NEXT;
	}
	if (close_it)
		return STEP_CLOSE;
	c->state = HS_HEAD;
	c->head_at = time_mono_ns();	/* for a next head already here, pipelined */
	in_release(c);
	return STEP_NEXT;
}

static enum step
conn_send(struct hd_conn *c)
{
	for (;;) {
		int f = conn_flush(c);

		if (f < 0)
			return STEP_CLOSE;
		if (f > 0)
			return STEP_WAIT;
		if (c->resp_done)
			return request_end(c);
		if (is_susp(c))
			return STEP_WAIT;
		if (!hd_pump(c))
			return is_susp(c) ? STEP_WAIT : ask_again(c);
	}
}

static enum step
conn_linger(struct hd_conn *c)
{
	while (!c->eof && c->lingered < LINGER_MAX) {
		if (!c->can_read || !conn_read(c))
			return STEP_WAIT;
		c->lingered += c->in_len;
		c->in_len = 0;
	}
	return STEP_CLOSE;
}

/* ---- connections -------------------------------------------------------------------------- */

static void
conn_close(struct hd_conn *c)
{
	struct hd *d = c->d;
	bool queued;

	if (c->watched)
		loop_del(d->loop, &c->w);
	c->watched = false;
	request_done(c);
	close(c->fd);
	c->in_len = 0;
	in_release(c);
	sb_free(&c->out);
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	d->nconns--;
	pthread_mutex_lock(&d->rlock);
	queued = c->rqueued;
	c->dead = true;
	pthread_mutex_unlock(&d->rlock);
	/* Still on the resumed list: hd_turn frees it when it comes to it. */
	if (!queued)
		free(c);
}

static void
conn_run(struct hd_conn *c)
{
	for (;;) {
		enum step s;

		if (is_susp(c)) {
			if (conn_flush(c) < 0)
				c->broken = true;
			return;
		}
		switch (c->state) {
		case HS_HEAD:
			s = conn_head(c);
			break;
		case HS_BODY:
			s = conn_body(c);
			break;
		case HS_HANDLE:
			s = conn_handle(c);
			break;
		case HS_LINGER:
			s = conn_linger(c);
			break;
		default:
			s = conn_send(c);
			break;
		}
		if (s == STEP_CLOSE)
			conn_close(c);
		if (s != STEP_NEXT)
			return;
	}
}

static void
conn_ready(struct loop_watch *w, uint32_t events)
{
	struct hd_conn *c = (struct hd_conn *)((char *)w - offsetof(struct hd_conn, w));

	if (events == 0) {
		c->watched = false;	/* the loop stops: hd_free closes it */
		return;
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		c->can_read = true;
	if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		c->peer_closed = true;
	if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		c->can_write = true;
	conn_run(c);
}

static void
conn_new(struct hd *d, int fd)
{
	struct hd_conn *c = calloc(1, sizeof(*c));
	int one = 1;

	if (c == NULL) {
		close(fd);
		return;
	}
	/* Events of a stream go out as they come, not when the last segment is acknowledged. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->d = d;
	c->fd = fd;
	c->w.fd = fd;
	c->w.ready = conn_ready;
	c->can_write = true;
	c->active_at = time_mono_ns();
	if (loop_add_events(d->loop, &c->w, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)) {
		close(fd);
		free(c);
		return;
	}
	c->watched = true;
	c->next = d->conns;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &d->conns;
	d->conns = c;
	d->nconns++;
}

static void
accept_ready(struct loop_watch *w, uint32_t events)
{
	struct hd *d = (struct hd *)((char *)w - offsetof(struct hd, lw));

	if (events == 0) {
		d->listening = false;
		return;
	}
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd = accept4(d->conf.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0)
			return;
		if (d->nconns >= d->conf.conn_limit)
			close(fd);
		else
			conn_new(d, fd);
	}
}

/* ---- the server --------------------------------------------------------------------------- */

struct hd *
hd_new(const struct hd_conf *conf)
{
	struct hd *d = calloc(1, sizeof(*d));
	int fl = fcntl(conf->listen_fd, F_GETFL);

	if (d == NULL || fl < 0 || fcntl(conf->listen_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		free(d);
		return NULL;
	}
	d->conf = *conf;
	pthread_mutex_init(&d->rlock, NULL);
	pthread_mutex_init(&d->qlock, NULL);
	pthread_cond_init(&d->qcond, NULL);
	d->lw.fd = conf->listen_fd;
	d->lw.ready = accept_ready;
	return d;
}

int
hd_attach(struct hd *d, struct loop *l)
{
	d->loop = l;
	if (loop_add(l, &d->lw))
		return -EIO;
	d->listening = true;
	return 0;
}

/* On the loop's thread: what hd_quiesce asked for. */
static void
quiesce_now(struct hd *d)
{
	pthread_mutex_lock(&d->qlock);
	if (d->quiesce && !d->quiesced) {
		if (d->listening)
			loop_del(d->loop, &d->lw);
		d->listening = false;
		close(d->conf.listen_fd);
		d->quiesced = true;
		pthread_cond_broadcast(&d->qcond);
	}
	pthread_mutex_unlock(&d->qlock);
}

/*
 * Connections that neither moved nor slept for the timeout close (a client that went away),
 * and those whose head has not come whole in its time.
 */
static void
sweep(struct hd *d, int64_t now)
{
	int64_t limit = (int64_t)d->conf.timeout_s * 1000000000LL;
	int64_t head_limit = (int64_t)d->conf.head_timeout_s * 1000000000LL;
	struct hd_conn *c = d->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (is_susp(c) || c->state == HS_HANDLE)
			continue;
		if (now - c->active_at > (c->state == HS_LINGER ? LINGER_NS : limit) ||
		    (c->state == HS_HEAD && c->in_len && now - c->head_at > head_limit))
			conn_close(c);
	}
}

int
hd_turn(struct hd *d)
{
	int64_t now;

	if (__atomic_load_n(&d->quiesce, __ATOMIC_ACQUIRE))
		quiesce_now(d);
	for (int i = 0; i < RESUMED_MAX; i++) {
		struct hd_conn *c;
		bool dead = false;

		pthread_mutex_lock(&d->rlock);
		c = d->rhead;
		if (c) {
			d->rhead = c->rnext;
			if (d->rhead == NULL)
				d->rtail = NULL;
			c->rqueued = false;
			dead = c->dead;
		}
		pthread_mutex_unlock(&d->rlock);
		if (c == NULL)
			break;
		if (dead)
			free(c);
		else
			conn_run(c);
	}
	pthread_mutex_lock(&d->rlock);
	if (d->rhead)
		loop_wake(d->loop);
	pthread_mutex_unlock(&d->rlock);
	now = time_mono_ns();
	if (now >= d->next_sweep) {
		sweep(d, now);
		d->next_sweep = now + SWEEP_NS;
	}
	return d->nconns ? (int)((d->next_sweep - now) / 1000000) + 1 : -1;
}

void
hd_quiesce(struct hd *d)
{
	struct timespec ts;

	pthread_mutex_lock(&d->qlock);
	__atomic_store_n(&d->quiesce, true, __ATOMIC_RELEASE);
	if (!d->listening && !d->quiesced) {
		close(d->conf.listen_fd);
		d->quiesced = true;
	}
	loop_wake(d->loop);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	while (!d->quiesced)
		if (pthread_cond_timedwait(&d->qcond, &d->qlock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&d->qlock);
}

void
hd_free(struct hd *d)
{
	if (d == NULL)
		return;
	/* The loop is gone: nothing is deleted from its set. */
	d->listening = false;
	for (struct hd_conn *c = d->conns; c; c = c->next)
		c->watched = false;
	while (d->conns)
		conn_close(d->conns);
	while (d->rhead) {
		struct hd_conn *c = d->rhead;

		d->rhead = c->rnext;
		if (c->dead)
			free(c);
	}
	if (!d->quiesced)
		close(d->conf.listen_fd);
	while (d->nspare)
		free(d->spare[--d->nspare]);
	pthread_mutex_destroy(&d->rlock);
	pthread_mutex_destroy(&d->qlock);
	pthread_cond_destroy(&d->qcond);
	free(d);
}

/* ---- what handlers read ------------------------------------------------------------------- */

const char *
hd_header(struct hd_conn *c, const char *name)
{
	size_t len = strlen(name);

	/* A dozen lookups a request among a dozen headers: the length rules most out. */
	for (unsigned int i = 0; i < c->nhdr; i++)
		if (c->hdr[i].len == len && strcasecmp(c->hdr[i].name, name) == 0)
			return c->hdr[i].value;
	return NULL;
}

uint64_t
hd_body_length(const struct hd_conn *c)
{
	return c->body_len;
}

void
hd_header_each(struct hd_conn *c, void (*fn)(void *arg, const char *name, const char *value),
	       void *arg)
{
	for (unsigned int i = 0; i < c->nhdr; i++)
		fn(arg, c->hdr[i].name, c->hdr[i].value);
}

int
hd_fd(struct hd_conn *c)
{
	return c->fd;
}
