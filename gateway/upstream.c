/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: one stdio MCP server. A reader thread owns the child's stdout: it matches
 * responses to waiting callers by request id (so concurrent calls share one child), answers
 * the server's own requests (ping, roots/list) and, on EOF, fails pending calls and reaps the
 * child. A dead child is started again by the next call routed to it.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gw.h"

#define UP_GRACE_MS	5000
#define UP_MAX_PAGES	1000

extern char **environ;

struct pending {
	int64_t id;
	json_t *msg;
	char *err;
	bool done;
	struct pending *next;
};

struct upstream {
	const struct server_spec *spec;
	const char *version;
	pthread_mutex_t lock;		/* everything below except in_fd */
	pthread_cond_t cond;
	pthread_mutex_t start_lock;	/* one (re)start at a time */
	pthread_mutex_t wlock;		/* whole lines on stdin; guards in_fd */
	bool has_child;
	bool alive;			/* reader has not seen EOF */
	char gone[128];			/* why the reader stopped, with the exit status */
	bool reaped;
	bool reader_done;
	bool joinable;
	bool closing;
	bool was_ready;		/* a start completed: later exits are crashes to restart */
	pid_t pid;
	int in_fd;
	int out_fd;
	pthread_t reader;
	struct pump *errp;
	int64_t next_id;
	struct pending *pending;
	json_t *tools;
	int64_t call_timeout_ns;	/* 0: a forwarded call waits as long as the server lives */
};

static const char *const proto_versions[] = {
	"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", NULL,
};

const char *
upstream_name(const struct upstream *u)
{
	return u->spec->name;
}

struct upstream *
upstream_new(const struct server_spec *spec, const char *version)
{
	struct upstream *u = calloc(1, sizeof(*u));

	if (u == NULL)
		return NULL;
	u->spec = spec;
	u->version = version;
	u->in_fd = -1;
	u->out_fd = -1;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	pthread_mutex_init(&u->start_lock, NULL);
	pthread_mutex_init(&u->wlock, NULL);
	u->tools = json_array();
	return u;
}

json_t *
upstream_tools(struct upstream *u)
{
	return u->tools;
}

/* Compact JSON never contains a raw newline, which is what makes line framing safe. */
static int
msg_send(struct upstream *u, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t len;
	int rc;

	if (s == NULL)
		return -ENOMEM;
	len = strlen(s);
	s[len] = '\n';
	pthread_mutex_lock(&u->wlock);
	rc = u->in_fd < 0 ? -EPIPE : cvs_write_all(u->in_fd, s, len + 1);
	pthread_mutex_unlock(&u->wlock);
	free(s);
	return rc;
}

static void
server_request_answer(struct upstream *u, json_t *req)
{
	const char *method = json_string_value(json_object_get(req, "method"));
	json_t *id = json_object_get(req, "id");
	json_t *resp;

	if (strcmp(method, "ping") == 0)
		resp = json_pack("{s:s,s:O,s:{}}", "jsonrpc", "2.0", "id", id, "result");
	else if (strcmp(method, "roots/list") == 0)
		resp = json_pack("{s:s,s:O,s:{s:[]}}", "jsonrpc", "2.0", "id", id, "result",
				 "roots");
	else
		resp = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error",
				 "code", -32601, "message", "method not found");
	if (resp)
		msg_send(u, resp);
	json_decref(resp);
}

void
upstream_input(struct upstream *u, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, len, 0, &jerr), *id;
	struct pending *p;

	if (msg == NULL || !json_is_object(msg)) {
		log_warn("skipping unparsable line from server", "server=%s error=\"%s\"",
			 u->spec->name, msg ? "not an object" : jerr.text);
		json_decref(msg);
		return;
	}
	id = json_object_get(msg, "id");
	if (json_is_string(json_object_get(msg, "method"))) {
		if (id && !json_is_null(id))
			server_request_answer(u, msg);
		json_decref(msg);
		return;
	}
	if (!json_is_integer(id)) {
		json_decref(msg);
		return;
	}
	pthread_mutex_lock(&u->lock);
	for (p = u->pending; p; p = p->next) {
		if (p->id == json_integer_value(id) && !p->done) {
			p->msg = msg;
			msg = NULL;
			p->done = true;
			pthread_cond_broadcast(&u->cond);
			break;
		}
	}
	pthread_mutex_unlock(&u->lock);
	json_decref(msg);
}

/* Returns true once reaped; signals are only sent to a pid we have not reaped yet. */
static bool
child_reap_poll(struct upstream *u, int *status)
{
	bool done;

	pthread_mutex_lock(&u->lock);
	if (!u->reaped && waitpid(u->pid, status, WNOHANG) == u->pid)
		u->reaped = true;
	done = u->reaped;
	pthread_mutex_unlock(&u->lock);
	return done;
}

static void
child_signal(struct upstream *u, int sig)
{
	pthread_mutex_lock(&u->lock);
	if (u->has_child && !u->reaped)
		kill(u->pid, sig);
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
	pthread_mutex_lock(&u->wlock);
	if (u->in_fd >= 0)
		close(u->in_fd);
	u->in_fd = -1;
	pthread_mutex_unlock(&u->wlock);
}

static void
line_handle(void *ctx, const char *line, size_t len)
{
	upstream_input(ctx, line, len);
}

static void *
reader_main(void *arg)
{
	struct upstream *u = arg;
	struct line_framer fr;
	char buf[65536], sbuf[64] = "";
	const char *why = "server closed the connection";
	struct pending *p;
	int status = 0;
	bool reaped;

	framer_init(&fr, GW_MAX_LINE);
	for (;;) {
		ssize_t n = read(u->out_fd, buf, sizeof(buf));
		int rc;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		rc = framer_feed(&fr, buf, (size_t)n, line_handle, u);
		if (rc > 0) {
			/*
			 * Whatever the line answered is lost, so its caller would wait forever:
			 * treat the server as broken, fail the calls, let the next one restart it.
			 */
			log_warn("server sent a line longer than the limit; stopping it",
				 "server=%s limit=%u", u->spec->name, GW_MAX_LINE);
			why = "server sent a line longer than " GW_MAX_LINE_TEXT;
			child_signal(u, SIGKILL);
			break;
		}
		if (rc < 0)
			break;
	}
	framer_fini(&fr);
	/* Give a crashing child a moment so callers see its exit status. */
	reaped = child_reap_wait(u, &status, 200);
	if (reaped)
		status_format(status, sbuf, sizeof(sbuf));
	pthread_mutex_lock(&u->lock);
	u->alive = false;
	snprintf(u->gone, sizeof(u->gone), "%s%s%s", why, reaped ? ": " : "", sbuf);
	for (p = u->pending; p; p = p->next) {
		if (p->done)
			continue;
		p->err = str_printf("%s", u->gone);
		p->done = true;
	}
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	stdin_close(u);
	/* MCP stdio shutdown: stdin closed, then SIGTERM, then SIGKILL. */
	if (!reaped && !child_reap_wait(u, &status, UP_GRACE_MS)) {
		child_signal(u, SIGTERM);
		if (!child_reap_wait(u, &status, UP_GRACE_MS)) {
			child_signal(u, SIGKILL);
			child_reap_wait(u, &status, -1);
		}
	}
	if (!reaped)
		status_format(status, sbuf, sizeof(sbuf));
	close(u->out_fd);
	u->out_fd = -1;
	pump_wait(u->errp, 1000);
	u->errp = NULL;
	pthread_mutex_lock(&u->lock);
	if (!reaped)
		snprintf(u->gone, sizeof(u->gone), "%s: %s", why, sbuf);
	if (!u->closing && u->was_ready)
		log_warn("mcp server exited; it will be restarted on the next call",
			 "server=%s status=\"%s\"", u->spec->name, sbuf);
	else
		log_info("mcp server exited", "server=%s status=\"%s\"", u->spec->name, sbuf);
	u->reader_done = true;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

/* notifications/cancelled for a request we stopped waiting for. */
static void
cancel_send(struct upstream *u, int64_t id)
{
	json_t *n = json_pack("{s:s,s:s,s:{s:I,s:s}}", "jsonrpc", "2.0", "method",
			      "notifications/cancelled", "params", "requestId", (json_int_t)id,
			      "reason", "the gateway's call timeout expired");

	if (n)
		msg_send(u, n);
	json_decref(n);
}

/* With u->lock held: until p is answered or 'ns' have passed (ns <= 0: no limit). */
static void
pending_wait(struct upstream *u, struct pending *p, int64_t ns)
{
	struct timespec ts;

	if (ns <= 0) {
		while (!p->done)
			pthread_cond_wait(&u->cond, &u->lock);
		return;
	}
	time_deadline(&ts, ns);
	while (!p->done && pthread_cond_timedwait(&u->cond, &u->lock, &ts) == 0)
		;
}

static int
request_timed(struct upstream *u, const char *method, json_t *params, int64_t timeout_ns,
	      json_t **msg, char **err)
{
	struct pending *p = calloc(1, sizeof(*p)), **pp;
	bool timed_out = false;
	json_t *req;
	int rc;

	if (p == NULL)
		return err_set(err, -ENOMEM, "out of memory");
	pthread_mutex_lock(&u->lock);
	if (!u->alive) {
		/* A child that died before we asked says why, as it does to calls in flight. */
		rc = err_set(err, -EPIPE, "%s", u->gone[0] ? u->gone : "server is not running");
		pthread_mutex_unlock(&u->lock);
		free(p);
		return rc;
	}
	p->id = ++u->next_id;
	p->next = u->pending;
	u->pending = p;
	pthread_mutex_unlock(&u->lock);

	req = json_pack("{s:s,s:I,s:s}", "jsonrpc", "2.0", "id", (json_int_t)p->id, "method",
			method);
	if (params)
		json_object_set(req, "params", params);
	rc = req ? msg_send(u, req) : -ENOMEM;
	json_decref(req);

	pthread_mutex_lock(&u->lock);
	if (rc == 0) {
		pending_wait(u, p, timeout_ns);
		timed_out = !p->done;
	} else {
		/*
		 * A write fails when the child already exited; the reader is about to report
		 * that with the exit status, which says more than "broken pipe".
		 */
		pending_wait(u, p, 1000000000LL);
		if (p->done && p->err)
			rc = 0;
	}
	for (pp = &u->pending; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	pthread_mutex_unlock(&u->lock);
	if (timed_out) {
		char dur[32];

		/* The server may still be working on it: tell it to stop; a late answer is dropped. */
		cancel_send(u, p->id);
		dur_format(timeout_ns, dur, sizeof(dur));
		log_warn("mcp server did not answer in time", "server=%s method=%s timeout=%s",
			 u->spec->name, method, dur);
		rc = err_set(err, -ETIMEDOUT, "server %s did not answer %s within %s",
			     u->spec->name, method, dur);
	} else if (rc)
		err_set(err, rc, "write to server: %s", strerror(-rc));
	else if (p->err) {
		rc = err_set(err, -EPIPE, "%s", p->err);
	} else {
		*msg = p->msg;
		p->msg = NULL;
	}
	json_decref(p->msg);
	free(p->err);
	free(p);
	return rc;
}

static int
request(struct upstream *u, const char *method, json_t *params, json_t **msg, char **err)
{
	return request_timed(u, method, params, 0, msg, err);
}

void
upstream_set_call_timeout(struct upstream *u, int64_t ns)
{
	u->call_timeout_ns = ns > 0 ? ns : 0;
}

static int
notify(struct upstream *u, const char *method)
{
	json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", method);
	int rc = n ? msg_send(u, n) : -ENOMEM;

	json_decref(n);
	return rc;
}

static void
reader_join(struct upstream *u)
{
	bool join;

	pthread_mutex_lock(&u->lock);
	join = u->joinable;
	u->joinable = false;
	pthread_mutex_unlock(&u->lock);
	if (join)
		pthread_join(u->reader, NULL);
	pthread_mutex_lock(&u->lock);
	u->has_child = false;
	pthread_mutex_unlock(&u->lock);
}

/* Stops the current child; graceful follows the stdio shutdown sequence, else SIGKILL. */
static void
child_stop(struct upstream *u, bool graceful)
{
	int64_t deadline;
	struct timespec ts = {0, 20 * 1000000};
	bool done;

	pthread_mutex_lock(&u->lock);
	done = !u->has_child || u->reader_done;
	pthread_mutex_unlock(&u->lock);
	if (done)
		goto join;
	stdin_close(u);
	if (!graceful)
		child_signal(u, SIGKILL);
	deadline = time_mono_ns() + (int64_t)UP_GRACE_MS * 1000000;
	for (int phase = 0; ; ) {
		pthread_mutex_lock(&u->lock);
		done = u->reader_done;
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
	reader_join(u);
}

static bool
proto_known(const char *v)
{
	size_t i;

	for (i = 0; v && proto_versions[i]; i++)
		if (strcmp(v, proto_versions[i]) == 0)
			return true;
	return false;
}

static int
handshake(struct upstream *u, char **err)
{
	json_t *params, *msg = NULL, *res;
	const char *v;
	int rc;

	params = json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s}}", "protocolVersion", "2025-06-18",
			   "capabilities", "roots", "listChanged", 1, "clientInfo", "name",
			   GW_CLIENT_NAME, "version", u->version);
	rc = request(u, "initialize", params, &msg, err);
	json_decref(params);
	if (rc)
		return rc;
	res = json_object_get(msg, "result");
	if (!json_is_object(res)) {
		json_t *e = json_object_get(msg, "error");

		rc = err_set(err, -EPROTO, "initialize failed: %s",
			     json_string_value(json_object_get(e, "message")) ?
			     json_string_value(json_object_get(e, "message")) : "no result");
		json_decref(msg);
		return rc;
	}
	v = json_string_value(json_object_get(res, "protocolVersion"));
	if (!proto_known(v)) {
		rc = err_set(err, -EPROTO, "unsupported protocol version \"%s\"", v ? v : "");
		json_decref(msg);
		return rc;
	}
	json_decref(msg);
	rc = notify(u, "notifications/initialized");
	if (rc)
		return err_set(err, rc, "write to server: %s", strerror(-rc));
	return 0;
}

static int
spawn(struct upstream *u, char **err)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
	struct proc_opts o = {0};
	char **env = env_build(u->spec->env);
	pid_t pid;
	int rc;

	if (env == NULL)
		return err_set(err, -ENOMEM, "out of memory");
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		rc = err_set(err, -errno, "pipe: %s", strerror(errno));
		goto fail;
	}
	o.argv = u->spec->argv;
	o.envp = env;
	o.cwd = u->spec->dir;
	o.stdin_fd = in[0];
	o.stdout_fd = out[1];
	o.stderr_fd = errp[1];
	rc = proc_spawn(&o, &pid, err);
	if (rc)
		goto fail;
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	strv_free(env);
	pthread_mutex_lock(&u->lock);
	u->pid = pid;
	u->out_fd = out[0];
	u->has_child = true;
	u->alive = true;
	u->gone[0] = '\0';
	u->reaped = false;
	u->reader_done = false;
	u->errp = pump_start(errp[0], u->spec->name, 2);
	if (u->errp == NULL)
		close(errp[0]);
	pthread_mutex_unlock(&u->lock);
	pthread_mutex_lock(&u->wlock);
	u->in_fd = in[1];
	pthread_mutex_unlock(&u->wlock);
	if (pthread_create(&u->reader, NULL, reader_main, u)) {
		pthread_mutex_lock(&u->lock);
		u->alive = false;
		u->reader_done = true;
		pthread_mutex_unlock(&u->lock);
		stdin_close(u);
		close(u->out_fd);
		u->out_fd = -1;
		kill(pid, SIGKILL);
		proc_wait(pid, &rc);
		pump_wait(u->errp, 1000);
		u->errp = NULL;
		u->has_child = false;
		return err_set(err, -EAGAIN, "cannot start reader thread");
	}
	pthread_mutex_lock(&u->lock);
	u->joinable = true;
	pthread_mutex_unlock(&u->lock);
	if (proc_cancelled())
		child_signal(u, SIGKILL);
	return 0;
fail:
	strv_free(env);
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

/* Spawn + handshake; on failure the child is gone again. Called with start_lock held. */
static int
connect_child(struct upstream *u, char **err)
{
	char *msg = NULL, *cmd;
	int rc;

	pthread_mutex_lock(&u->lock);
	rc = u->closing ? -ECANCELED : 0;
	pthread_mutex_unlock(&u->lock);
	if (rc == 0 && proc_cancelled())
		rc = -ECANCELED;
	if (rc)
		return err_set(err, rc, "gateway is shutting down");
	rc = spawn(u, &msg);
	if (rc == 0) {
		rc = handshake(u, &msg);
		if (rc)
			child_stop(u, false);
	}
	if (rc) {
		cmd = strv_join(u->spec->argv, " ");
		err_set(err, rc, "start \"%s\": %s", cmd, msg ? msg : "failed");
		free(cmd);
	}
	free(msg);
	return rc;
}

static int
tools_fetch(struct upstream *u, char **err)
{
	json_t *cursor = NULL;
	int page, rc = 0;

	json_array_clear(u->tools);
	for (page = 0; page < UP_MAX_PAGES; page++) {
		json_t *params = json_object(), *msg = NULL, *res, *tools, *next;

		if (cursor)
			json_object_set_new(params, "cursor", cursor);
		cursor = NULL;
		rc = request(u, "tools/list", params, &msg, err);
		json_decref(params);
		if (rc)
			break;
		res = json_object_get(msg, "result");
		tools = json_object_get(res, "tools");
		if (!json_is_array(tools)) {
			json_t *e = json_object_get(msg, "error");
			const char *m = json_string_value(json_object_get(e, "message"));

			rc = err_set(err, -EPROTO, "%s", m ? m : "malformed tools/list result");
			json_decref(msg);
			break;
		}
		json_array_extend(u->tools, tools);
		next = json_object_get(res, "nextCursor");
		if (json_is_string(next) && *json_string_value(next))
			cursor = json_incref(next);
		json_decref(msg);
		if (cursor == NULL)
			break;
	}
	json_decref(cursor);
	if (rc) {
		char *m = *err;

		*err = NULL;
		err_set(err, rc, "list tools: %s", m ? m : "failed");
		free(m);
	}
	return rc;
}

/* Runs a command with its output in the log, in its own group so a shutdown can kill it all. */
static int
run_logged(struct upstream *u, char *const *argv, const char *cwd, char **err)
{
	struct proc_opts o = {0};
	char **env = env_build(u->spec->env), sbuf[64];
	int pfd[2], status, rc;
	struct pump *p;
	pid_t pid;

	if (env == NULL)
		return err_set(err, -ENOMEM, "out of memory");
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		strv_free(env);
		return err_set(err, -errno, "pipe: %s", strerror(errno));
	}
	o.argv = argv;
	o.envp = env;
	o.cwd = cwd;
	o.stdin_fd = -1;
	o.stdout_fd = pfd[1];
	o.stderr_fd = pfd[1];
	o.new_pgrp = true;
	rc = proc_spawn(&o, &pid, err);
	strv_free(env);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		return rc;
	}
	setpgid(pid, pid);
	pgrp_register(pid);
	p = pump_start(pfd[0], u->spec->name, 2);
	if (p == NULL)
		close(pfd[0]);
	proc_wait(pid, &status);
	/* Like the reference, wait for the output to end: background jobs keep it open. */
	pump_wait(p, -1);
	pgrp_unregister(pid);
	if (proc_cancelled())
		return err_set(err, -ECANCELED, "cancelled");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		status_format(status, sbuf, sizeof(sbuf));
		return err_set(err, -EIO, "%s", sbuf);
	}
	return 0;
}

static int
repo_clone(struct upstream *u, char **err)
{
	const struct server_spec *s = u->spec;
	char *gitdir = str_printf("%s/.git", s->dir);
	char *partial = str_printf("%s.partial", s->dir);
	char *git = exec_lookup("git", environ), *msg = NULL;
	char *argv[] = {"git", "clone", "--depth", "1", s->repo, partial, NULL};
	struct stat st;
	int rc = 0;

	if (gitdir == NULL || partial == NULL) {
		rc = err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (stat(gitdir, &st) == 0)
		goto out;
	if (git == NULL) {
		rc = err_set(err, -ENOENT, "git is required to clone GitHub MCP servers; install "
			     "it in the template");
		goto out;
	}
	rc = path_parent_make(s->dir, 0755);
	if (rc) {
		err_set(err, rc, "create %s: %s", s->dir, strerror(-rc));
		goto out;
	}
	path_remove_all(partial);
	log_info("cloning repository", "server=%s repo=%s", s->name, s->repo);
	rc = run_logged(u, argv, "/", &msg);
	if (rc) {
		path_remove_all(partial);
		err_set(err, rc, "clone %s: %s", s->repo, msg ? msg : "failed");
		goto out;
	}
	path_remove_all(s->dir);
	if (rename(partial, s->dir) < 0) {
		rc = -errno;
		err_set(err, rc, "clone %s: rename: %s", s->repo, strerror(errno));
		path_remove_all(partial);
	}
out:
	free(msg);
	free(git);
	free(gitdir);
	free(partial);
	return rc;
}

int
upstream_start(struct upstream *u, char **err)
{
	char *msg = NULL;
	int rc;

	pthread_mutex_lock(&u->start_lock);
	if (u->spec->repo) {
		rc = repo_clone(u, err);
		if (rc)
			goto out;
	}
	if (u->spec->install) {
		log_info("running install command", "server=%s", u->spec->name);
		rc = run_logged(u, u->spec->install, u->spec->dir, &msg);
		if (rc) {
			err_set(err, rc, "installCmd: %s", msg ? msg : "failed");
			goto out;
		}
	}
	rc = connect_child(u, err);
	if (rc)
		goto out;
	rc = tools_fetch(u, err);
	if (rc) {
		child_stop(u, false);
		goto out;
	}
	pthread_mutex_lock(&u->lock);
	u->was_ready = true;
	pthread_mutex_unlock(&u->lock);
	log_info("mcp server ready", "server=%s tools=%zu", u->spec->name,
		 json_array_size(u->tools));
out:
	pthread_mutex_unlock(&u->start_lock);
	free(msg);
	return rc;
}

/* A child that exited is replaced here; the tool list from start-up stays as it was. */
static int
ensure_running(struct upstream *u, char **err)
{
	bool alive;
	int rc = 0;

	pthread_mutex_lock(&u->start_lock);
	pthread_mutex_lock(&u->lock);
	alive = u->alive;
	pthread_mutex_unlock(&u->lock);
	if (!alive) {
		reader_join(u);
		rc = connect_child(u, err);
		if (rc == 0)
			log_info("mcp server restarted", "server=%s", u->spec->name);
	}
	pthread_mutex_unlock(&u->start_lock);
	return rc;
}

int
upstream_call(struct upstream *u, const char *method, json_t *params, json_t **result,
	      json_t **rpc_error, char **err)
{
	json_t *msg = NULL, *res, *e;
	int rc;

	*result = NULL;
	*rpc_error = NULL;
	rc = ensure_running(u, err);
	if (rc)
		return rc;
	rc = request_timed(u, method, params, u->call_timeout_ns, &msg, err);
	if (rc)
		return rc;
	res = json_object_get(msg, "result");
	e = json_object_get(msg, "error");
	if (json_is_object(e))
		*rpc_error = json_incref(e);
	else if (res)
		*result = json_incref(res);
	else
		rc = err_set(err, -EPROTO, "malformed response from server");
	json_decref(msg);
	return rc;
}

/* Start-up was cancelled: nothing is worth waiting for. */
void
upstream_kill(struct upstream *u)
{
	pthread_mutex_lock(&u->lock);
	u->closing = true;
	pthread_mutex_unlock(&u->lock);
	child_signal(u, SIGKILL);
}

void
upstream_close(struct upstream *u)
{
	pthread_mutex_lock(&u->lock);
	u->closing = true;
	pthread_mutex_unlock(&u->lock);
	/*
	 * A (re)start in flight holds start_lock and may wait on a handshake forever; kill its
	 * child so it fails, and since closing is set it will not spawn another.
	 */
	if (pthread_mutex_trylock(&u->start_lock) != 0) {
		child_signal(u, SIGKILL);
		pthread_mutex_lock(&u->start_lock);
	}
	child_stop(u, true);
	pthread_mutex_unlock(&u->start_lock);
}

void
upstream_free(struct upstream *u)
{
	if (u == NULL)
		return;
	json_decref(u->tools);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->start_lock);
	pthread_mutex_destroy(&u->wlock);
	free(u);
}

bool
proto_supported(const char *v)
{
	return proto_known(v);
}

/* Echo a version we know, else answer our latest. */
const char *
proto_negotiate(const char *requested)
{
	size_t i;

	for (i = 0; requested && proto_versions[i]; i++)
		if (strcmp(requested, proto_versions[i]) == 0)
			return proto_versions[i];
	return "2025-11-25";
}
