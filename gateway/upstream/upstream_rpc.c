/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: messages to and from one stdio server, and its handshake. Requests in flight are
 * matched to their answers by id, so concurrent calls share one child; a relayed request's
 * traffic (progress, log messages, the server's own requests, its answer) goes to its link;
 * what belongs to no request goes to the event hook; the server's own ping and roots/list
 * are answered here. Start-up is install, spawn (upstream.c), the initialize handshake and
 * the lists (upstream_start.c); a child that died is started again by the next call routed
 * to it.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/jsonfast.h"
#include "base/log.h"
#include "base/str.h"
#include "config/config.h"
#include "isolate/proc.h"
#include "upstream/upstream.h"
#include "upstream/upstream_int.h"

void
up_proto_init(struct up_proto *p)
{
	p->tools = json_array();
	for (int i = 0; i < UP_LIST_COUNT; i++)
		p->lists[i] = json_array();
	p->caps = json_object();
}

void
up_proto_fini(struct up_proto *p)
{
	json_decref(p->tools);
	for (int i = 0; i < UP_LIST_COUNT; i++)
		json_decref(p->lists[i]);
	json_decref(p->caps);
}

json_t *
upstream_caps(struct upstream *u)
{
	return u->proto.caps;
}

void
upstream_set_events(struct upstream *u, up_event_fn fn, void *ctx)
{
	u->proto.on_event = fn;
	u->proto.event_ctx = ctx;
}


static int ensure_running(struct upstream *u, char **err);

static void
respond(struct upstream *u, json_t *id, json_t *result, json_t *error)
{
	json_t *resp = json_pack("{s:s,s:O}", "jsonrpc", "2.0", "id", id);

	if (resp == NULL)
		return;
	if (error)
		json_object_set(resp, "error", error);
	else
		json_object_set_new(resp, "result", result ? json_incref(result) : json_object());
	upstream_send(u, resp);
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
	for (p = u->proto.pending; p; p = p->next) {
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
		if (bit == UP_CAP_ROOTS)
			u->proto.roots_asked = true;
		p = pending_sole(u, bit, &total, &able);
		if (p)
			reply = p->link->relay(p->link, req);
		pthread_mutex_unlock(&u->lock);
	}
	if (p) {
		/* The relay refused it (no stream to carry it): its answer goes back. */
		if (reply)
			upstream_send(u, reply);
		json_decref(reply);
		return;
	}
	if (bit == UP_CAP_ROOTS && total == 0) {
		/* Between calls: a client that said its roots changed may answer, else none. */
		json_t *r;

		if (u->proto.on_event && u->proto.on_event(u->proto.event_ctx, u, req))
			return;
		r = json_pack("{s:[]}", "roots");

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
		for (p = u->proto.pending; p; p = p->next)
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
	if (u->proto.on_event)
		u->proto.on_event(u->proto.event_ctx, u, msg);
}

/* A relayed request is answered: it leaves the table here and its link gets the answer. */
static void
response_match(struct upstream *u, int64_t id, json_t *msg)
{
	struct pending *p, **pp, *relayed = NULL;

	pthread_mutex_lock(&u->lock);
	for (pp = &u->proto.pending; *pp; pp = &(*pp)->next) {
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

/*
 * An answer in the simple shape (answer.c) for a relayed request whose link takes text: it
 * leaves the table as in response_match and goes on as the server wrote it. False: it is
 * not one (an answer to a request of the gateway's own, an id not in flight, a link that
 * wants jansson), and the caller parses the line as before.
 */
static bool
response_text(struct upstream *u, const struct up_answer *a, const char *line, size_t len)
{
	struct pending *p, **pp, *relayed = NULL;
	json_error_t jerr;
	json_t *msg;

	pthread_mutex_lock(&u->lock);
	for (pp = &u->proto.pending; *pp; pp = &(*pp)->next) {
		p = *pp;
		if (p->id != a->id || p->done)
			continue;
		if (p->link && p->link->done_text) {
			*pp = p->next;
			relayed = p;
		}
		break;
	}
	pthread_mutex_unlock(&u->lock);
	if (relayed == NULL)
		return false;
	if (!relayed->link->done_text(relayed->link, a)) {
		/* The link declined (it reshapes answers): parsed for it, as ever. */
		msg = json_load_fast(line, len, &jerr);
		relayed->link->done(relayed->link, msg, msg ? NULL : "malformed response from server");
		json_decref(msg);
	}
	free(relayed);
	return true;
}

void
upstream_input(struct upstream *u, const char *line, size_t len)
{
	struct up_answer a;
	json_error_t jerr;
	json_t *msg, *id;
	const char *method;

	if (up_answer_scan(line, len, &a) && response_text(u, &a, line, len))
		return;
	msg = json_load_fast(line, len, &jerr);
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

void
upstream_roots_changed(struct upstream *u)
{
	json_t *n;
	bool asked;

	pthread_mutex_lock(&u->lock);
	asked = u->proto.roots_asked && u->child.state == UP_RUNNING;
	pthread_mutex_unlock(&u->lock);
	if (!asked)
		return;
	n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
		      "notifications/roots/list_changed");
	if (n)
		upstream_send(u, n);
	json_decref(n);
}

/* notifications/cancelled: the server may stop working on a request nobody waits for. */
static void
cancel_send(struct upstream *u, int64_t id, const char *reason)
{
	json_t *n = json_pack("{s:s,s:s,s:{s:I,s:s}}", "jsonrpc", "2.0", "method",
			      "notifications/cancelled", "params", "requestId", (json_int_t)id,
			      "reason", reason);

	if (n)
		upstream_send(u, n);
	json_decref(n);
}

static void
pending_unlink(struct upstream *u, struct pending *p)
{
	struct pending **pp;

	for (pp = &u->proto.pending; *pp; pp = &(*pp)->next) {
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

	for (q = u->proto.pending; q; q = q->next)
		if (q == p)
			return true;
	return false;
}

/* With u->lock held: a new request id in the table, or NULL (err set) when the child is gone. */
static struct pending *
pending_add(struct upstream *u, const struct up_link *link, char **err)
{
	struct pending *p;

	if (u->child.state != UP_RUNNING) {
		/* A child that died before we asked says why, as it does to calls in flight. */
		err_set(err, -EPIPE, "%s", u->child.gone[0] ? u->child.gone : "server is not running");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	p->id = ++u->proto.next_id;
	p->link = link;
	p->next = u->proto.pending;
	u->proto.pending = p;
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
 * A request as one line (up_request_line: the bytes upstream_send() of request_msg() would
 * write, without building that object); a method it declines goes the json way.
 */
static int
request_send(struct upstream *u, int64_t id, const char *method, json_t *params)
{
	struct strbuf sb = {0};
	json_t *req;
	int rc = up_request_line(&sb, id, method, params);

	if (rc == 0)
		rc = upstream_send_line(u, sb.buf, sb.len);
	sb_free(&sb);
	if (rc == -EINVAL) {
		req = request_msg(id, method, params);
		rc = req ? upstream_send(u, req) : -ENOMEM;
		json_decref(req);
	}
	if (rc == 0)
		upstream_expect_answer(u);
	return rc;
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
	while (u->child.state == UP_RUNNING && pthread_cond_timedwait(&u->cond, &u->lock, &ts) == 0)
		;
}

/* A request of the gateway's own (handshake, lists): waits for the answer. */
int
upstream_request(struct upstream *u, const char *method, json_t *params, json_t **msg,
		 char **err)
{
	struct pending *p;
	int rc;

	pthread_mutex_lock(&u->lock);
	p = pending_add(u, NULL, err);
	pthread_mutex_unlock(&u->lock);
	if (p == NULL)
		return -EPIPE;
	rc = request_send(u, p->id, method, params);
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
		err_set(err, rc, "%s", u->child.gone[0] ? u->child.gone : strerror(-rc));
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
	json_t *fp = NULL;
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
	rc = (fp || !params) ? request_send(u, p->id, method, fp) : -ENOMEM;
	json_decref(fp);
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
	return err_set(err, rc, "%s", u->child.gone[0] ? u->child.gone : strerror(-rc));
}

bool
upstream_cancel(struct upstream *u, int64_t id, const char *reason)
{
	struct pending *p;

	pthread_mutex_lock(&u->lock);
	for (p = u->proto.pending; p; p = p->next)
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

/*
 * The child's output ended (the reader set UP_EXITING, so nothing new is sent): calls of
 * the gateway's own fail with why, relayed requests leave the table and their links hear it.
 */
static void
pending_fail(struct upstream *u)
{
	struct pending *p, **pp, *relayed = NULL;
	char gone[sizeof(u->child.gone)];

	pthread_mutex_lock(&u->lock);
	for (pp = &u->proto.pending; (p = *pp) != NULL; ) {
		if (p->link) {
			*pp = p->next;
			p->next = relayed;
			relayed = p;
			continue;
		}
		if (!p->done) {
			p->err = str_printf("%s", u->child.gone);
			p->done = true;
		}
		pp = &p->next;
	}
	snprintf(gone, sizeof(gone), "%s", u->child.gone);
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	while ((p = relayed) != NULL) {
		relayed = p->next;
		p->link->done(p->link, NULL, gone);
		free(p);
	}
}

static const struct up_reader_ops reader_ops = {
	.line = upstream_input,
	.eof = pending_fail,
};

/* ---- the handshake, and a restart ------------------------------------------------------- */

static const char *const proto_versions[] = {
	"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", NULL,
};

static int
notify(struct upstream *u, const char *method)
{
	json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", method);
	int rc = n ? upstream_send(u, n) : -ENOMEM;

	json_decref(n);
	return rc;
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
	if (!u->child.was_ready && json_is_object(json_object_get(res, "capabilities"))) {
		pthread_mutex_lock(&u->lock);
		json_decref(u->proto.caps);
		u->proto.caps = json_deep_copy(json_object_get(res, "capabilities"));
		pthread_mutex_unlock(&u->lock);
	}
	json_decref(msg);
	rc = notify(u, "notifications/initialized");
	if (rc)
		return err_set(err, rc, "write to server: %s", strerror(-rc));
	return 0;
}

/* Spawn + handshake; on failure the child is gone again. Called with start_lock held. */
int
upstream_connect(struct upstream *u, char **err)
{
	char *msg = NULL, *cmd;
	int rc;

	pthread_mutex_lock(&u->lock);
	rc = u->child.closing ? -ECANCELED : 0;
	pthread_mutex_unlock(&u->lock);
	if (rc == 0 && proc_cancelled())
		rc = -ECANCELED;
	if (rc)
		return err_set(err, rc, "gateway is shutting down");
	rc = upstream_child_start(u, &reader_ops, &msg);
	if (rc == 0) {
		rc = handshake(u, &msg);
		if (rc)
			upstream_child_stop(u, false);
		else
			upstream_child_lend(u);
	}
	if (rc) {
		cmd = strv_join(u->spec->argv, " ");
		err_set(err, rc, "start \"%s\": %s", cmd, msg ? msg : "failed");
		free(cmd);
	}
	free(msg);
	return rc;
}

/*
 * A child that exited is replaced here; the tool list from start-up stays as it was. A child
 * that runs and has done its handshake needs no lock: start_lock is held across a start or
 * a listing, which wait for the loop's thread to read the answers, so that thread never
 * waits for it (-EWOULDBLOCK: submit from another thread).
 */
static int
ensure_running(struct upstream *u, char **err)
{
	bool alive, restarted = false;
	int rc = 0;

	if (upstream_running(u))
		return 0;
	if (upstream_child_on_loop(u))
		return err_set(err, -EWOULDBLOCK, "server is starting");
	pthread_mutex_lock(&u->child.start_lock);
	pthread_mutex_lock(&u->lock);
	alive = u->child.state == UP_RUNNING;
	pthread_mutex_unlock(&u->lock);
	if (!alive) {
		upstream_child_join(u);
		rc = upstream_connect(u, err);
		if (rc == 0) {
			log_info("mcp server restarted", "server=%s", u->spec->name);
			restarted = true;
		}
	}
	pthread_mutex_unlock(&u->child.start_lock);
	/*
	 * A new process may list other tools: the event hook has them listed again, as if
	 * the server had said so itself.
	 */
	if (restarted && u->proto.on_event) {
		json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
				      "notifications/tools/list_changed");

		if (n)
			u->proto.on_event(u->proto.event_ctx, u, n);
		json_decref(n);
	}
	return rc;
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
