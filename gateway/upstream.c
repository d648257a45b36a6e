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
	const struct up_link *link;	/* a relayed request: answers go there, not to msg */
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
	json_t *lists[UP_LIST_COUNT];	/* prompts, resources, templates from start-up */
	json_t *caps;			/* the server's capabilities from initialize */
	up_event_fn on_event;		/* messages that belong to no request */
	void *event_ctx;
};

static int ensure_running(struct upstream *u, char **err);

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
	rc = u->in_fd < 0 ? -EPIPE : fd_write_all(u->in_fd, s, len + 1);
	pthread_mutex_unlock(&u->wlock);
	free(s);
	return rc;
}

static void
respond(struct upstream *u, json_t *id, json_t *result, json_t *error)
{
	json_t *resp = json_pack("{s:s,s:O}", "jsonrpc", "2.0", "id", id);

	if (resp == NULL)
		return;
	if (error)
		json_object_set(resp, "error", error);
	else
		json_object_set(resp, "result", result ? result : json_object());
	msg_send(u, resp);
	json_decref(resp);
}

void
upstream_respond(struct upstream *u, json_t *id, json_t *result, json_t *error)
{
	respond(u, id, result, error);
}

static void
respond_error(struct upstream *u, json_t *id, int code, const char *msg)
{
	json_t *e = json_pack("{s:i,s:s}", "code", code, "message", msg);

	respond(u, id, NULL, e);
	json_decref(e);
}

/* The client capability a server request needs from whoever answers it. */
static unsigned
request_cap(const char *method, const char **name)
{
	static const struct {
		const char *method;
		const char *cap;
		unsigned bit;
	} caps[] = {
		{"sampling/createMessage", "sampling", UP_CAP_SAMPLING},
		{"elicitation/create", "elicitation", UP_CAP_ELICITATION},
		{"roots/list", "roots", UP_CAP_ROOTS},
	};

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (strcmp(method, caps[i].method) == 0) {
			*name = caps[i].cap;
			return caps[i].bit;
		}
	}
	*name = NULL;
	return 0;
}

/*
 * With u->lock held. stdio carries no link between a server's message and the request that
 * caused it, so a message without one belongs to the only relayed request in flight whose
 * client has the capability it needs; *total counts relayed requests, *able those able.
 */
static struct pending *
pending_sole(struct upstream *u, unsigned cap, int *total, int *able)
{
	struct pending *p, *found = NULL;

	*total = 0;
	*able = 0;
	for (p = u->pending; p; p = p->next) {
		if (p->link == NULL)
			continue;
		(*total)++;
		if ((p->link->caps & cap) != cap)
			continue;
		(*able)++;
		found = p;
	}
	return *able == 1 ? found : NULL;
}

static void
server_request(struct upstream *u, json_t *req, const char *method)
{
	json_t *id = json_object_get(req, "id"), *reply = NULL;
	const char *cap;
	unsigned bit = request_cap(method, &cap);
	struct pending *p = NULL;
	int total = 0, able = 0;
	char *m = NULL;

	if (strcmp(method, "ping") == 0) {
		respond(u, id, NULL, NULL);
		return;
	}
	if (bit) {
		pthread_mutex_lock(&u->lock);
		p = pending_sole(u, bit, &total, &able);
		if (p)
			reply = p->link->relay(p->link, req);
		pthread_mutex_unlock(&u->lock);
	}
	if (p) {
		/* The relay refused it (no stream to carry it): its answer goes back. */
		if (reply)
			msg_send(u, reply);
		json_decref(reply);
		return;
	}
	if (bit == UP_CAP_ROOTS && total == 0) {
		/* Asked at start-up or between calls: no client to ask, so no roots. */
		json_t *r = json_pack("{s:[]}", "roots");

		respond(u, id, r, NULL);
		json_decref(r);
		return;
	}
	if (bit == 0)
		m = str_printf("mcp-gateway does not relay %s", method);
	else if (total == 0)
		m = str_printf("mcp-gateway: no client request is in flight to relay %s to",
			       method);
	else if (able == 0)
		m = str_printf("mcp-gateway: the calling client does not support %s (it did not "
			       "declare the %s capability)", method, cap);
	else
		m = str_printf("mcp-gateway: cannot relay %s: %d client requests are in flight "
			       "on this server and stdio does not say which one it belongs to",
			       method, able);
	respond_error(u, id, able > 1 ? -32603 : -32601, m ? m : "not relayed");
	free(m);
}

static void
server_notification(struct upstream *u, json_t *msg, const char *method)
{
	json_t *params = json_object_get(msg, "params");
	struct pending *p = NULL;
	int total, able;

	if (strcmp(method, "notifications/progress") == 0) {
		json_t *tok = json_object_get(params, "progressToken");

		/* Tokens we hand out are our request ids; anything else is not ours to route. */
		if (!json_is_integer(tok))
			return;
		pthread_mutex_lock(&u->lock);
		for (p = u->pending; p; p = p->next)
			if (p->link && p->id == json_integer_value(tok))
				break;
		if (p)
			p->link->relay(p->link, msg);
		pthread_mutex_unlock(&u->lock);
		return;
	}
	if (strcmp(method, "notifications/cancelled") == 0)
		return;
	if (strcmp(method, "notifications/message") == 0) {
		pthread_mutex_lock(&u->lock);
		p = pending_sole(u, 0, &total, &able);
		if (p)
			p->link->relay(p->link, msg);
		pthread_mutex_unlock(&u->lock);
		if (p)
			return;
	}
	if (u->on_event)
		u->on_event(u->event_ctx, u, msg);
}

/* A relayed request is answered: it leaves the table here and its link gets the answer. */
static void
response_match(struct upstream *u, int64_t id, json_t *msg)
{
	struct pending *p, **pp, *relayed = NULL;

	pthread_mutex_lock(&u->lock);
	for (pp = &u->pending; *pp; pp = &(*pp)->next) {
		p = *pp;
		if (p->id != id || p->done)
			continue;
		if (p->link) {
			*pp = p->next;
			relayed = p;
		} else {
			p->msg = json_incref(msg);
			p->done = true;
			pthread_cond_broadcast(&u->cond);
		}
		break;
	}
	pthread_mutex_unlock(&u->lock);
	if (relayed) {
		relayed->link->done(relayed->link, msg, NULL);
		free(relayed);
	}
}

void
upstream_input(struct upstream *u, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, len, 0, &jerr), *id;
	const char *method;

	if (msg == NULL || !json_is_object(msg)) {
		log_warn("skipping unparsable line from server", "server=%s error=\"%s\"",
			 u->spec->name, msg ? "not an object" : jerr.text);
		json_decref(msg);
		return;
	}
	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	if (method) {
		if (id && !json_is_null(id))
			server_request(u, msg, method);
		else
			server_notification(u, msg, method);
	} else if (json_is_integer(id)) {
		response_match(u, json_integer_value(id), msg);
	}
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
	u->alive = false;
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
	u->reader_done = true;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

/* notifications/cancelled: the server may stop working on a request nobody waits for. */
static void
cancel_send(struct upstream *u, int64_t id, const char *reason)
{
	json_t *n = json_pack("{s:s,s:s,s:{s:I,s:s}}", "jsonrpc", "2.0", "method",
			      "notifications/cancelled", "params", "requestId", (json_int_t)id,
			      "reason", reason);

	if (n)
		msg_send(u, n);
	json_decref(n);
}

static void
pending_unlink(struct upstream *u, struct pending *p)
{
	struct pending **pp;

	for (pp = &u->pending; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			return;
		}
	}
}

static bool
pending_listed(struct upstream *u, struct pending *p)
{
	struct pending *q;

	for (q = u->pending; q; q = q->next)
		if (q == p)
			return true;
	return false;
}

/* With u->lock held: a new request id in the table, or NULL (err set) when the child is gone. */
static struct pending *
pending_add(struct upstream *u, const struct up_link *link, char **err)
{
	struct pending *p;

	if (!u->alive) {
		/* A child that died before we asked says why, as it does to calls in flight. */
		err_set(err, -EPIPE, "%s", u->gone[0] ? u->gone : "server is not running");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	p->id = ++u->next_id;
	p->link = link;
	p->next = u->pending;
	u->pending = p;
	return p;
}

static json_t *
request_msg(int64_t id, const char *method, json_t *params)
{
	json_t *req = json_pack("{s:s,s:I,s:s}", "jsonrpc", "2.0", "id", (json_int_t)id,
				"method", method);

	if (req && params)
		json_object_set(req, "params", params);
	return req;
}

/*
 * With u->lock held. A write fails when the child already exited; the reader is about to
 * report that with the exit status, which says more than "broken pipe": wait a moment.
 */
static void
gone_wait(struct upstream *u)
{
	struct timespec ts;

	time_deadline(&ts, 1000000000LL);
	while (u->alive && pthread_cond_timedwait(&u->cond, &u->lock, &ts) == 0)
		;
}

/* A request of the gateway's own (handshake, lists): waits for the answer. */
static int
request(struct upstream *u, const char *method, json_t *params, json_t **msg, char **err)
{
	struct pending *p;
	json_t *req;
	int rc;

	pthread_mutex_lock(&u->lock);
	p = pending_add(u, NULL, err);
	pthread_mutex_unlock(&u->lock);
	if (p == NULL)
		return -EPIPE;
	req = request_msg(p->id, method, params);
	rc = req ? msg_send(u, req) : -ENOMEM;
	json_decref(req);
	pthread_mutex_lock(&u->lock);
	if (rc == 0) {
		while (!p->done)
			pthread_cond_wait(&u->cond, &u->lock);
	} else {
		gone_wait(u);
	}
	pending_unlink(u, p);
	pthread_mutex_unlock(&u->lock);
	if (p->err)
		rc = err_set(err, -EPIPE, "%s", p->err);
	else if (rc)
		err_set(err, rc, "%s", u->gone[0] ? u->gone : strerror(-rc));
	else
		*msg = p->msg;
	if (rc)
		json_decref(p->msg);
	free(p->err);
	free(p);
	return rc;
}

/*
 * The server sees our request id as the progress token: ids are unique per server, tokens
 * of different clients may not be, and a notification then names its request.
 */
static json_t *
params_token_swap(json_t *params, int64_t id)
{
	json_t *meta = json_object_get(params, "_meta"), *out, *m;

	if (!json_is_object(meta) || json_object_get(meta, "progressToken") == NULL)
		return json_incref(params);
	out = json_copy(params);
	m = json_copy(meta);
	if (out == NULL || m == NULL) {
		json_decref(out);
		json_decref(m);
		return NULL;
	}
	json_object_set_new(m, "progressToken", json_integer((json_int_t)id));
	json_object_set_new(out, "_meta", m);
	return out;
}

int
upstream_submit(struct upstream *u, const char *method, json_t *params,
		const struct up_link *link, int64_t *idp, char **err)
{
	struct pending *p;
	json_t *req, *fp = NULL;
	bool mine;
	int rc;

	rc = ensure_running(u, err);
	if (rc)
		return rc;
	pthread_mutex_lock(&u->lock);
	p = pending_add(u, link, err);
	pthread_mutex_unlock(&u->lock);
	if (p == NULL)
		return -EPIPE;
	/* From the write on, the reader may answer and free p at any moment. */
	*idp = p->id;
	if (params)
		fp = params_token_swap(params, p->id);
	req = (fp || !params) ? request_msg(p->id, method, fp) : NULL;
	json_decref(fp);
	rc = req ? msg_send(u, req) : -ENOMEM;
	json_decref(req);
	if (rc == 0)
		return 0;
	pthread_mutex_lock(&u->lock);
	gone_wait(u);
	mine = pending_listed(u, p);
	if (mine)
		pending_unlink(u, p);
	pthread_mutex_unlock(&u->lock);
	/* The reader failed it already and told the link: that is the answer. */
	if (!mine)
		return 0;
	free(p);
	return err_set(err, rc, "%s", u->gone[0] ? u->gone : strerror(-rc));
}

bool
upstream_cancel(struct upstream *u, int64_t id, const char *reason)
{
	struct pending *p;

	pthread_mutex_lock(&u->lock);
	for (p = u->pending; p; p = p->next)
		if (p->link && p->id == id)
			break;
	if (p)
		pending_unlink(u, p);
	pthread_mutex_unlock(&u->lock);
	if (p == NULL)
		return false;
	cancel_send(u, id, reason);
	free(p);
	return true;
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

	/* What clients can have: the gateway relays each to the client whose call caused it. */
	params = json_pack("{s:s,s:{s:{s:b},s:{},s:{}},s:{s:s,s:s}}", "protocolVersion",
			   "2025-06-18", "capabilities", "roots", "listChanged", 1, "sampling",
			   "elicitation", "clientInfo", "name", GW_CLIENT_NAME, "version",
			   u->version);
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
	if (json_is_object(json_object_get(res, "capabilities"))) {
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
		rc = request(u, method, params, &msg, err);
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

static int
tools_fetch(struct upstream *u, char **err)
{
	char *m = NULL;
	int rc = list_fetch(u, "tools/list", "tools", u->tools, &m);

	if (rc)
		err_set(err, rc, "list tools: %s", m ? m : "failed");
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

		if (json_object_get(u->caps, l[i].cap) == NULL)
			continue;
		if (list_fetch(u, l[i].method, l[i].key, u->lists[i], &err))
			log_warn("cannot list, serving none", "server=%s method=%s error=\"%s\"",
				 u->spec->name, l[i].method, err ? err : "");
		free(err);
	}
}

json_t *
upstream_list(struct upstream *u, enum up_list which)
{
	return u->lists[which];
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
