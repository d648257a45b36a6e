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

#include "upstream_int.h"
#include "isolate.h"

#define UP_GRACE_MS	5000
#define UP_MAX_PAGES	1000

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
	for (int i = 0; i < UP_LIST_COUNT; i++)
		u->lists[i] = json_array();
	u->caps = json_object();
	return u;
}

json_t *
upstream_tools(struct upstream *u)
{
	return u->tools;
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
	pthread_mutex_lock(&u->wlock);
	rc = u->in_fd < 0 ? -EPIPE : cvs_write_all(u->in_fd, s, len + 1);
	pthread_mutex_unlock(&u->wlock);
	free(s);
	return rc;
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
	if (u->state != UP_NONE && !u->reaped)
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
	struct pending *p, **pp, *relayed = NULL;
	char gone[sizeof(u->gone)];
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
	u->state = UP_EXITING;
	snprintf(u->gone, sizeof(u->gone), "%s%s%s", why, reaped ? ": " : "", sbuf);
	for (pp = &u->pending; (p = *pp) != NULL; ) {
		if (p->link) {
			/* Relayed requests leave the table; their links hear why below. */
			*pp = p->next;
			p->next = relayed;
			relayed = p;
			continue;
		}
		if (!p->done) {
			p->err = str_printf("%s", u->gone);
			p->done = true;
		}
		pp = &p->next;
	}
	snprintf(gone, sizeof(gone), "%s", u->gone);
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	while ((p = relayed) != NULL) {
		relayed = p->next;
		p->link->done(p->link, NULL, gone);
		free(p);
	}
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
	u->state = UP_EXITED;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

static int
notify(struct upstream *u, const char *method)
{
	json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", method);
	int rc = n ? upstream_send(u, n) : -ENOMEM;

	json_decref(n);
	return rc;
}

static void
reader_join(struct upstream *u)
{
	bool join;

	/* Callers hold start_lock, so no spawn races with this. */
	pthread_mutex_lock(&u->lock);
	join = u->state != UP_NONE;
	pthread_mutex_unlock(&u->lock);
	if (join)
		pthread_join(u->reader, NULL);
	pthread_mutex_lock(&u->lock);
	u->state = UP_NONE;
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
	done = u->state == UP_NONE || u->state == UP_EXITED;
	pthread_mutex_unlock(&u->lock);
	if (done)
		goto join;
	stdin_close(u);
	if (!graceful)
		child_signal(u, SIGKILL);
	deadline = time_mono_ns() + (int64_t)UP_GRACE_MS * 1000000;
	for (int phase = 0; ; ) {
		pthread_mutex_lock(&u->lock);
		done = u->state == UP_EXITED;
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

	/*
	 * What clients can have: the gateway relays each to the client whose call caused it. A
	 * client's roots/list_changed reaches the servers that have asked for roots.
	 */
	params = json_pack("{s:s,s:{s:{s:b},s:{},s:{}},s:{s:s,s:s}}", "protocolVersion",
			   "2025-06-18", "capabilities", "roots", "listChanged", 1, "sampling",
			   "elicitation",
			   "clientInfo", "name", GW_CLIENT_NAME, "version", u->version);
	rc = upstream_request(u, "initialize", params, &msg, err);
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
	/* Kept from the first start: readers hold the object without a lock. */
	if (!u->was_ready && json_is_object(json_object_get(res, "capabilities"))) {
		pthread_mutex_lock(&u->lock);
		json_decref(u->caps);
		u->caps = json_deep_copy(json_object_get(res, "capabilities"));
		pthread_mutex_unlock(&u->lock);
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
	char **env = iso_env(u->spec), **secrets;
	struct iso_child ic;
	pid_t pid;
	int rc;

	if (env == NULL)
		return err_set(err, -ENOMEM, "out of memory");
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
	pthread_mutex_lock(&u->lock);
	u->pid = pid;
	u->out_fd = out[0];
	u->state = UP_RUNNING;
	u->gone[0] = '\0';
	u->reaped = false;
	secrets = iso_secrets(u->spec);
	u->errp = pump_start_masked(errp[0], u->spec->name, 2, secrets);
	strv_free_secure(secrets);
	if (u->errp == NULL)
		close(errp[0]);
	pthread_mutex_unlock(&u->lock);
	pthread_mutex_lock(&u->wlock);
	u->in_fd = in[1];
	pthread_mutex_unlock(&u->wlock);
	if (pthread_create(&u->reader, NULL, reader_main, u)) {
		pthread_mutex_lock(&u->lock);
		u->state = UP_EXITED;
		pthread_mutex_unlock(&u->lock);
		stdin_close(u);
		close(u->out_fd);
		u->out_fd = -1;
		kill(pid, SIGKILL);
		proc_wait(pid, &rc);
		pump_wait(u->errp, 1000);
		u->errp = NULL;
		pthread_mutex_lock(&u->lock);
		u->state = UP_NONE;
		pthread_mutex_unlock(&u->lock);
		return err_set(err, -EAGAIN, "cannot start reader thread");
	}
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

/* Follows the pagination of one list method into arr (cleared first). */
static int
list_fetch(struct upstream *u, const char *method, const char *key, json_t *arr, char **err)
{
	json_t *cursor = NULL;
	int page, rc = 0;

	json_array_clear(arr);
	for (page = 0; page < UP_MAX_PAGES; page++) {
		json_t *params = json_object(), *msg = NULL, *res, *items, *next;

		if (cursor)
			json_object_set_new(params, "cursor", cursor);
		cursor = NULL;
		rc = upstream_request(u, method, params, &msg, err);
		json_decref(params);
		if (rc)
			break;
		res = json_object_get(msg, "result");
		items = json_object_get(res, key);
		if (!json_is_array(items)) {
			json_t *e = json_object_get(msg, "error");
			const char *m = json_string_value(json_object_get(e, "message"));

			rc = err_set(err, -EPROTO, "%s", m ? m : "malformed result");
			json_decref(msg);
			break;
		}
		json_array_extend(arr, items);
		next = json_object_get(res, "nextCursor");
		if (json_is_string(next) && *json_string_value(next))
			cursor = json_incref(next);
		json_decref(msg);
		if (cursor == NULL)
			break;
	}
	json_decref(cursor);
	return rc;
}

/* Readers take snapshots under u->lock: a list is replaced whole, never edited in place. */
static void
list_swap(struct upstream *u, json_t **slot, json_t *arr)
{
	json_t *old;

	pthread_mutex_lock(&u->lock);
	old = *slot;
	*slot = arr;
	pthread_mutex_unlock(&u->lock);
	json_decref(old);
}

static int
tools_fetch(struct upstream *u, char **err)
{
	json_t *arr = json_array();
	char *m = NULL;
	int rc = arr ? list_fetch(u, "tools/list", "tools", arr, &m) : -ENOMEM;

	if (rc)
		err_set(err, rc, "list tools: %s", m ? m : "failed");
	else
		list_swap(u, &u->tools, json_incref(arr));
	json_decref(arr);
	free(m);
	return rc;
}

/*
 * Prompts, resources and templates of a server that offers them. A server that offers them
 * and then fails to list them still serves its tools: the failure is logged, the list empty.
 */
static void
lists_fetch(struct upstream *u)
{
	static const struct {
		const char *cap;
		const char *method;
		const char *key;
	} l[UP_LIST_COUNT] = {
		[UP_LIST_PROMPTS] = {"prompts", "prompts/list", "prompts"},
		[UP_LIST_RESOURCES] = {"resources", "resources/list", "resources"},
		[UP_LIST_TEMPLATES] = {"resources", "resources/templates/list",
				       "resourceTemplates"},
	};

	for (int i = 0; i < UP_LIST_COUNT; i++) {
		char *err = NULL;

		json_t *arr;

		if (json_object_get(u->caps, l[i].cap) == NULL)
			continue;
		arr = json_array();
		if (arr && list_fetch(u, l[i].method, l[i].key, arr, &err))
			log_warn("cannot list, serving none", "server=%s method=%s error=\"%s\"",
				 u->spec->name, l[i].method, err ? err : "");
		list_swap(u, &u->lists[i], arr);
		free(err);
	}
}

json_t *
upstream_list(struct upstream *u, enum up_list which)
{
	return u->lists[which];
}

json_t *
upstream_snapshot(struct upstream *u, int which)
{
	json_t *copy;

	pthread_mutex_lock(&u->lock);
	copy = json_deep_copy(which < 0 ? u->tools : u->lists[which]);
	pthread_mutex_unlock(&u->lock);
	return copy;
}

int
upstream_refresh(struct upstream *u, char **err)
{
	int rc = -ESRCH;

	pthread_mutex_lock(&u->start_lock);
	pthread_mutex_lock(&u->lock);
	if (u->state == UP_RUNNING)
		rc = 0;
	pthread_mutex_unlock(&u->lock);
	if (rc == 0)
		rc = tools_fetch(u, err);
	else
		err_set(err, rc, "server is not running");
	if (rc == 0)
		lists_fetch(u);
	pthread_mutex_unlock(&u->start_lock);
	return rc;
}

json_t *
upstream_caps(struct upstream *u)
{
	return u->caps;
}

void
upstream_set_events(struct upstream *u, up_event_fn fn, void *ctx)
{
	u->on_event = fn;
	u->event_ctx = ctx;
}

int
upstream_start(struct upstream *u, char **err)
{
	char *msg = NULL;
	int rc;

	pthread_mutex_lock(&u->start_lock);
	if (u->spec->repo) {
		rc = install_repo_clone(u, err);
		if (rc)
			goto out;
	}
	if (u->spec->install) {
		log_info("running install command", "server=%s", u->spec->name);
		rc = install_run_logged(u, u->spec->install, iso_cwd(u->spec), &msg);
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
	lists_fetch(u);
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
int
upstream_ensure_running(struct upstream *u, char **err)
{
	bool alive, restarted = false;
	int rc = 0;

	pthread_mutex_lock(&u->start_lock);
	pthread_mutex_lock(&u->lock);
	alive = u->state == UP_RUNNING;
	pthread_mutex_unlock(&u->lock);
	if (!alive) {
		reader_join(u);
		rc = connect_child(u, err);
		if (rc == 0) {
			log_info("mcp server restarted", "server=%s", u->spec->name);
			restarted = true;
		}
	}
	pthread_mutex_unlock(&u->start_lock);
	/*
	 * A new process may list other tools: the event hook has them listed again, as if
	 * the server had said so itself.
	 */
	if (restarted && u->on_event) {
		json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
				      "notifications/tools/list_changed");

		if (n)
			u->on_event(u->event_ctx, u, n);
		json_decref(n);
	}
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
	for (int i = 0; i < UP_LIST_COUNT; i++)
		json_decref(u->lists[i]);
	json_decref(u->caps);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->start_lock);
	pthread_mutex_destroy(&u->wlock);
	free(u);
}

bool
upstream_proto_supported(const char *v)
{
	return proto_known(v);
}

/* Echo a version we know, else answer our latest. */
const char *
upstream_proto_negotiate(const char *requested)
{
	size_t i;

	for (i = 0; requested && proto_versions[i]; i++)
		if (strcmp(requested, proto_versions[i]) == 0)
			return proto_versions[i];
	return "2025-11-25";
}
