/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: one stdio MCP server's process. It is spawned isolated (isolate.h) with a reader
 * thread that owns its stdout and hands every line to the messages side (upstream_rpc.c,
 * through struct up_reader_ops), and on EOF tells that side, then reaps the child. The
 * messages side drives this file, never the other way round: it starts the child, writes
 * to it (upstream_send) and stops it.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/frame.h"
#include "base/log.h"
#include "base/loop.h"
#include "base/str.h"
#include "config/config.h"
#include "cvs_common.h"
#include "isolate/isolate.h"
#include "isolate/proc.h"
#include "upstream/upstream.h"
#include "upstream/upstream_int.h"

#define UP_GRACE_MS	5000

const char *
upstream_name(const struct upstream *u)
{
	return u->spec->name;
}

bool
upstream_running(struct upstream *u)
{
	bool running;

	pthread_mutex_lock(&u->lock);
	running = u->child.state == UP_RUNNING && u->child.connected;
	pthread_mutex_unlock(&u->lock);
	return running;
}

bool
upstream_tool_allowed(const struct upstream *u, const char *name)
{
	return server_tool_allowed(u->spec, name);
}

static void held_flush(struct loop_task *t);
static void child_signal(struct upstream *u, int sig);
static void reading_set(struct upstream *u, enum up_reading r, const char *why);

void
up_child_init(struct up_child *c)
{
	c->in_fd = -1;
	c->out_fd = -1;
	c->hand_fd = -1;
	c->flush.run = held_flush;
	pthread_mutex_init(&c->start_lock, NULL);
	pthread_mutex_init(&c->wlock, NULL);
}

static void output_drain_here(struct upstream *u);

/*
 * Under wlock: what the turn held, then line (if any), in order. A failed write drops what
 * was held (held_failed() sees that their calls are answered).
 */
static int
held_write_locked(struct upstream *u, const char *line, size_t len)
{
	struct up_child *c = &u->child;
	int rc = 0;

	if (c->in_fd < 0)
		rc = -EPIPE;
	else if (c->held.len)
		rc = cvs_write_all(c->in_fd, c->held.buf, c->held.len);
	c->held.len = 0;
	if (rc == 0 && len)
		rc = cvs_write_all(c->in_fd, line, len);
	return rc;
}

#define WHY_DEAF	"server closed its input"

/*
 * The held lines of a turn could not be written, and their calls, already taken, wait for
 * answers that cannot come: the reader fails the calls in flight once the reading ends. A
 * child that died ends it now (drained here). One that lives on with its input closed can
 * take no request ever again: it is stopped and, when the loop reads it, the loop ends the
 * reading with the reason; the next call starts it afresh.
 */
static void
held_failed(struct upstream *u, int rc)
{
	enum up_reading r;

	output_drain_here(u);
	pthread_mutex_lock(&u->lock);
	r = u->child.reading;
	pthread_mutex_unlock(&u->lock);
	if (r != UP_READ_LOOP && r != UP_READ_THREAD)
		return;
	log_warn("mcp server does not read its input; stopping it", "server=%s error=\"%s\"",
		 u->spec->name, strerror(-rc));
	/* Closing our end of its input, the usual first step of a stop, would tell it nothing. */
	child_signal(u, SIGTERM);
	if (r == UP_READ_LOOP) {
		loop_del(u->child.loop, &u->child.watch);
		reading_set(u, UP_READ_ENDED, WHY_DEAF);
	}
}

/* The end of the loop's turn: the lines it held leave in one write. */
static void
held_flush(struct loop_task *t)
{
	struct upstream *u = (struct upstream *)((char *)t - offsetof(struct upstream, child.flush));
	int rc;

	pthread_mutex_lock(&u->child.wlock);
	rc = held_write_locked(u, NULL, 0);
	pthread_mutex_unlock(&u->child.wlock);
	if (rc)
		held_failed(u, rc);
}

/*
 * On the loop's thread a line is held until the end of the turn (loop_defer()); a write from
 * any other thread first writes what is held, so that lines leave in the order they were sent.
 */
int
upstream_send_line(struct upstream *u, const char *line, size_t len)
{
	struct up_child *c = &u->child;
	struct loop *l = __atomic_load_n(&c->loop, __ATOMIC_RELAXED);
	int rc;

	pthread_mutex_lock(&c->wlock);
	if (c->in_fd < 0)
		rc = -EPIPE;
	else if (loop_here(l) && sb_append(&c->held, line, len) == 0) {
		loop_defer(l, &c->flush);	/* on the loop's thread: always taken */
		rc = 0;
	} else {
		rc = held_write_locked(u, line, len);
	}
	pthread_mutex_unlock(&c->wlock);
	if (rc)
		output_drain_here(u);
	return rc;
}

/*
 * The answer comes back on the loop's watch of the pipe: the loop polls for it a while
 * before it sleeps (loop_expect() does nothing off the loop's thread, or with no loop).
 */
void
upstream_expect_answer(struct upstream *u)
{
	loop_expect(__atomic_load_n(&u->child.loop, __ATOMIC_RELAXED));
}

/* Compact JSON never contains a raw newline, which is what makes line framing safe. */
int
upstream_send(struct upstream *u, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t len;
	int rc;

	if (s == NULL)
		return -ENOMEM;
	len = strlen(s);
	s[len] = '\n';
	rc = upstream_send_line(u, s, len + 1);
	free(s);
	return rc;
}

/* Returns true once reaped; signals are only sent to a pid we have not reaped yet. */
static bool
child_reap_poll(struct upstream *u, int *status)
{
	bool done;

	pthread_mutex_lock(&u->lock);
	if (!u->child.reaped && waitpid(u->child.pid, status, WNOHANG) == u->child.pid)
		u->child.reaped = true;
	done = u->child.reaped;
	pthread_mutex_unlock(&u->lock);
	return done;
}

static void
child_signal(struct upstream *u, int sig)
{
	pthread_mutex_lock(&u->lock);
	if (u->child.state != UP_NONE && !u->child.reaped)
		kill(u->child.pid, sig);
	pthread_mutex_unlock(&u->lock);
}

static bool
child_reap_wait(struct upstream *u, int *status, int timeout_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)timeout_ms * 1000000;
	struct timespec ts = {0, 20 * 1000000};

	for (;;) {
		if (child_reap_poll(u, status))
			return true;
		if (timeout_ms >= 0 && time_mono_ns() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
}

static void
stdin_close(struct upstream *u)
{
	pthread_mutex_lock(&u->child.wlock);
	if (u->child.in_fd >= 0)
		close(u->child.in_fd);
	u->child.in_fd = -1;
	u->child.held.len = 0;	/* the gone child's; the reader fails their requests */
	pthread_mutex_unlock(&u->child.wlock);
}

static void
line_handle(void *ctx, const char *line, size_t len)
{
	struct upstream *u = ctx;

	u->child.reader_ops->line(u, line, len);
}

#define WHY_CLOSED	"server closed the connection"

/* A chunk of output into lines, by whichever side reads; NULL, or why reading stops. */
static const char *
output_feed(struct upstream *u, const char *buf, size_t n)
{
	int rc = framer_feed(&u->child.fr, buf, n, line_handle, u);

	if (rc > 0) {
		/*
		 * Whatever the line answered is lost, so its caller would wait forever: treat
		 * the server as broken, fail the calls, let the next one restart it.
		 */
		log_warn("server sent a line longer than the limit; stopping it",
			 "server=%s limit=%u", u->spec->name, GW_MAX_LINE);
		child_signal(u, SIGKILL);
		return "server sent a line longer than " GW_MAX_LINE_TEXT;
	}
	return rc < 0 ? WHY_CLOSED : NULL;
}

/* The loop's side: what the pipe holds now, a bounded amount per turn; NULL while open. */
static const char *
output_pump(struct upstream *u)
{
	char buf[65536];
	const char *why = NULL;

	u->child.pumping = true;
	for (int i = 0; i < 4 && why == NULL; i++) {
		ssize_t n = read(u->child.out_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		why = n <= 0 ? WHY_CLOSED : output_feed(u, buf, (size_t)n);
		if ((size_t)n < sizeof(buf))
			break;
	}
	u->child.pumping = false;
	return why;
}

static void
reading_set(struct upstream *u, enum up_reading r, const char *why)
{
	pthread_mutex_lock(&u->lock);
	u->child.reading = r;
	u->child.ended = why;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

/* On the loop's thread: the output of a lent pipe, its end, or the loop giving it back. */
static void
output_ready(struct loop_watch *w, uint32_t events)
{
	struct upstream *u = (struct upstream *)((char *)w -
						offsetof(struct upstream, child.watch));
	const char *why;

	if (events == 0) {
		reading_set(u, UP_READ_BACK, NULL);
		return;
	}
	why = output_pump(u);
	if (why == NULL)
		return;
	loop_del(u->child.loop, w);
	reading_set(u, UP_READ_ENDED, why);
}

/*
 * The reader thread lends the pipe to the loop and waits until the loop is done with it;
 * NULL when it got it back (the loop stopped, or would not take it).
 */
static const char *
reader_lend(struct upstream *u)
{
	struct up_child *c = &u->child;
	int fl = fcntl(c->out_fd, F_GETFL);
	const char *why;

	pthread_mutex_lock(&u->lock);
	c->lend = false;
	c->reading = UP_READ_LOOP;
	pthread_mutex_unlock(&u->lock);
	fcntl(c->out_fd, F_SETFL, fl | O_NONBLOCK);
	c->watch.fd = c->out_fd;
	c->watch.ready = output_ready;
	if (loop_add(c->loop, &c->watch))
		reading_set(u, UP_READ_BACK, NULL);
	pthread_mutex_lock(&u->lock);
	while (c->reading == UP_READ_LOOP)
		pthread_cond_wait(&u->cond, &u->lock);
	why = c->reading == UP_READ_ENDED ? c->ended : NULL;
	c->reading = UP_READ_THREAD;
	pthread_mutex_unlock(&u->lock);
	fcntl(c->out_fd, F_SETFL, fl);
	return why;
}

static bool
reader_lends(struct upstream *u)
{
	bool lend;

	pthread_mutex_lock(&u->lock);
	lend = u->child.lend && u->child.loop;
	pthread_mutex_unlock(&u->lock);
	return lend;
}

/* Reads the child's output line by line until EOF, or lends it to the loop; why it stopped. */
static const char *
reader_loop(struct upstream *u)
{
	struct pollfd pf[2] = {
		{ .fd = u->child.out_fd, .events = POLLIN },
		{ .fd = u->child.hand_fd, .events = POLLIN },
	};
	char buf[65536];
	const char *why = NULL;

	while (why == NULL) {
		ssize_t n;

		if (reader_lends(u)) {
			why = reader_lend(u);
			continue;
		}
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			return WHY_CLOSED;
		if (pf[1].revents) {
			uint64_t v;

			n = read(u->child.hand_fd, &v, sizeof(v));
		}
		if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(u->child.out_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		why = n <= 0 ? WHY_CLOSED : output_feed(u, buf, (size_t)n);
	}
	return why;
}

void
upstream_child_lend(struct upstream *u)
{
	uint64_t one = 1;
	ssize_t n;

	pthread_mutex_lock(&u->lock);
	u->child.lend = u->child.state == UP_RUNNING;
	u->child.connected = u->child.lend;
	pthread_mutex_unlock(&u->lock);
	n = write(u->child.hand_fd, &one, sizeof(one));
	(void)n;
}

bool
upstream_child_on_loop(struct upstream *u)
{
	struct loop *l;

	pthread_mutex_lock(&u->lock);
	l = u->child.loop;
	pthread_mutex_unlock(&u->lock);
	return loop_here(l);
}

void
upstream_use_loop(struct upstream *u, struct loop *l)
{
	bool ready;

	pthread_mutex_lock(&u->child.start_lock);
	pthread_mutex_lock(&u->lock);
	u->child.loop = l;
	ready = u->child.state == UP_RUNNING && u->child.was_ready;
	pthread_mutex_unlock(&u->lock);
	if (ready)
		upstream_child_lend(u);
	pthread_mutex_unlock(&u->child.start_lock);
}

/*
 * A write failed on the loop's thread: the child is likely gone, and its end is only seen
 * by reading, which is this thread's to do; the caller then learns why (gone_wait).
 */
static void
output_drain_here(struct upstream *u)
{
	bool lent;

	pthread_mutex_lock(&u->lock);
	lent = u->child.reading == UP_READ_LOOP;
	pthread_mutex_unlock(&u->lock);
	if (lent && !u->child.pumping && loop_here(u->child.loop))
		output_ready(&u->child.watch, EPOLLIN);
}

/* MCP stdio shutdown of a child whose output ended: stdin closed, then SIGTERM, SIGKILL. */
static void
child_shutdown(struct upstream *u, int *status)
{
	stdin_close(u);
	if (child_reap_wait(u, status, UP_GRACE_MS))
		return;
	child_signal(u, SIGTERM);
	if (!child_reap_wait(u, status, UP_GRACE_MS)) {
		child_signal(u, SIGKILL);
		child_reap_wait(u, status, -1);
	}
}

/*
 * A server that never got ready and said it was denied a path: which path, and what lets it
 * read it (isolate/view.c). Its stderr is given a moment to arrive first.
 */
static void
reader_denied(struct upstream *u, bool reaped, char *hint, size_t len)
{
	char path[256];
	bool ready;

	pthread_mutex_lock(&u->lock);
	ready = u->child.was_ready;
	pthread_mutex_unlock(&u->lock);
	if (!reaped || ready || u->spec->root)
		return;
	pump_settle(u->child.errp, 200);
	if (pump_denied(u->child.errp, path, sizeof(path)))
		iso_denied_hint(u->spec, path, hint, len);
}

static void *
reader_main(void *arg)
{
	struct upstream *u = arg;
	const char *why = reader_loop(u);
	char sbuf[64] = "", hint[400] = "";
	int status = 0;
	bool reaped;

	framer_fini(&u->child.fr);
	/* Give a crashing child a moment so callers see its exit status. */
	reaped = child_reap_wait(u, &status, 200);
	if (reaped)
		status_format(status, sbuf, sizeof(sbuf));
	reader_denied(u, reaped, hint, sizeof(hint));
	pthread_mutex_lock(&u->lock);
	u->child.state = UP_EXITING;
	snprintf(u->child.gone, sizeof(u->child.gone), "%s%s%s%s", why, reaped ? ": " : "", sbuf,
		 hint);
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	/* No request is taken any more: the ones in flight hear why. */
	u->child.reader_ops->eof(u);
	if (reaped)
		stdin_close(u);
	else
		child_shutdown(u, &status);
	if (!reaped)
		status_format(status, sbuf, sizeof(sbuf));
	close(u->child.out_fd);
	u->child.out_fd = -1;
	pump_wait(u->child.errp, 1000);
	u->child.errp = NULL;
	pthread_mutex_lock(&u->lock);
	if (!reaped)
		snprintf(u->child.gone, sizeof(u->child.gone), "%s: %s%s", why, sbuf, hint);
	if (!u->child.closing && u->child.was_ready)
		log_warn("mcp server exited; it will be restarted on the next call",
			 "server=%s status=\"%s\"", u->spec->name, sbuf);
	else
		log_info("mcp server exited", "server=%s status=\"%s\"", u->spec->name, sbuf);
	u->child.state = UP_EXITED;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

/* Once no reader is left: lends (under start_lock) write to it. */
static void
hand_close(struct upstream *u)
{
	if (u->child.hand_fd >= 0)
		close(u->child.hand_fd);
	u->child.hand_fd = -1;
}

void
upstream_child_join(struct upstream *u)
{
	bool join;

	/* Callers hold start_lock, so no spawn races with this. */
	pthread_mutex_lock(&u->lock);
	join = u->child.state != UP_NONE;
	pthread_mutex_unlock(&u->lock);
	if (join)
		pthread_join(u->child.reader, NULL);
	hand_close(u);
	pthread_mutex_lock(&u->lock);
	u->child.state = UP_NONE;
	pthread_mutex_unlock(&u->lock);
}

/* Stops the current child; graceful follows the stdio shutdown sequence, else SIGKILL. */
void
upstream_child_stop(struct upstream *u, bool graceful)
{
	int64_t deadline;
	struct timespec ts = {0, 20 * 1000000};
	bool done;

	pthread_mutex_lock(&u->lock);
	done = u->child.state == UP_NONE || u->child.state == UP_EXITED;
	pthread_mutex_unlock(&u->lock);
	if (done)
		goto join;
	stdin_close(u);
	if (!graceful)
		child_signal(u, SIGKILL);
	deadline = time_mono_ns() + (int64_t)UP_GRACE_MS * 1000000;
	for (int phase = 0; ; ) {
		pthread_mutex_lock(&u->lock);
		done = u->child.state == UP_EXITED;
		pthread_mutex_unlock(&u->lock);
		if (done)
			break;
		if (time_mono_ns() >= deadline && phase < 2) {
			child_signal(u, phase == 0 ? SIGTERM : SIGKILL);
			phase++;
			deadline = time_mono_ns() + (int64_t)UP_GRACE_MS * 1000000;
		}
		nanosleep(&ts, NULL);
	}
join:
	upstream_child_join(u);
}

/* The reader thread of a child just spawned; on failure the child is killed and reaped. */
static int
reader_start(struct upstream *u, pid_t pid, char **err)
{
	int status;

	if (pthread_create(&u->child.reader, NULL, reader_main, u) == 0)
		return 0;
	pthread_mutex_lock(&u->lock);
	u->child.state = UP_EXITED;
	pthread_mutex_unlock(&u->lock);
	stdin_close(u);
	close(u->child.out_fd);
	u->child.out_fd = -1;
	kill(pid, SIGKILL);
	proc_wait(pid, &status);
	pump_wait(u->child.errp, 1000);
	u->child.errp = NULL;
	framer_fini(&u->child.fr);
	hand_close(u);
	pthread_mutex_lock(&u->lock);
	u->child.state = UP_NONE;
	pthread_mutex_unlock(&u->lock);
	return err_set(err, -EAGAIN, "cannot start reader thread");
}

int
upstream_child_start(struct upstream *u, const struct up_reader_ops *ops, char **err)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
	struct proc_opts o = {0};
	char **env = iso_env(u->spec), **secrets;
	struct iso_child ic;
	pid_t pid;
	int rc;

	if (env == NULL)
		return err_set(err, -ENOMEM, "out of memory");
	u->child.reader_ops = ops;
	rc = iso_child_open(u->spec, &ic, err);
	if (rc) {
		strv_free_secure(env);
		return rc;
	}
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		rc = err_set(err, -errno, "pipe: %s", strerror(errno));
		goto fail;
	}
	o.argv = u->spec->argv;
	o.envp = env;
	o.cwd = iso_cwd(u->spec);
	o.stdin_fd = in[0];
	o.stdout_fd = out[1];
	o.stderr_fd = errp[1];
	o.iso = &ic;
	rc = proc_spawn(&o, &pid, err);
	if (rc)
		goto fail;
	iso_child_close(&ic);
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	strv_free_secure(env);
	framer_init(&u->child.fr, GW_MAX_LINE);
	u->child.hand_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_lock(&u->lock);
	u->child.pid = pid;
	u->child.out_fd = out[0];
	u->child.state = UP_RUNNING;
	u->child.lend = false;
	u->child.connected = false;
	u->child.reading = UP_READ_THREAD;
	u->child.gone[0] = '\0';
	u->child.reaped = false;
	secrets = iso_secrets(u->spec);
	u->child.errp = pump_start_masked(errp[0], u->spec->name, 2, secrets);
	strv_free_secure(secrets);
	if (u->child.errp == NULL)
		close(errp[0]);
	pthread_mutex_unlock(&u->lock);
	pthread_mutex_lock(&u->child.wlock);
	u->child.in_fd = in[1];
	pthread_mutex_unlock(&u->child.wlock);
	rc = reader_start(u, pid, err);
	if (rc)
		return rc;
	if (proc_cancelled())
		child_signal(u, SIGKILL);
	return 0;
fail:
	iso_child_close(&ic);
	strv_free_secure(env);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return rc;
}

/* Start-up was cancelled: nothing is worth waiting for. */
void
upstream_kill(struct upstream *u)
{
	pthread_mutex_lock(&u->lock);
	u->child.closing = true;
	pthread_mutex_unlock(&u->lock);
	child_signal(u, SIGKILL);
}

void
upstream_close(struct upstream *u)
{
	pthread_mutex_lock(&u->lock);
	u->child.closing = true;
	pthread_mutex_unlock(&u->lock);
	/*
	 * A (re)start in flight holds start_lock and may wait on a handshake forever; kill its
	 * child so it fails, and since closing is set it will not spawn another.
	 */
	if (pthread_mutex_trylock(&u->child.start_lock) != 0) {
		child_signal(u, SIGKILL);
		pthread_mutex_lock(&u->child.start_lock);
	}
	upstream_child_stop(u, true);
	pthread_mutex_unlock(&u->child.start_lock);
}

void
up_child_fini(struct up_child *c)
{
	pthread_mutex_destroy(&c->start_lock);
	pthread_mutex_destroy(&c->wlock);
	sb_free(&c->held);
}
