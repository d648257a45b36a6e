/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: MCP methods. The gateway answers initialize, ping, logging/setLevel and the
 * aggregated lists itself; every other request is routed to the upstream that owns its tool,
 * prompt or resource, under the name that upstream knows.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/audit.h"
#include "base/str.h"
#include "session/routes.h"
#include "session/session.h"
#include "upstream/upstream.h"
#include "wire/rpc.h"

#define CURSOR_PREFIX	"gwc1:"

static json_t *
rpc_errorf(json_t *id, int code, const char *fmt, const char *arg)
{
	char *q = str_quote(arg ? arg : ""), *m = str_printf(fmt, q ? q : "");
	json_t *out = rpc_error(id, code, m ? m : "error");

	free(q);
	free(m);
	return out;
}

static bool
any_upstream_has(struct http_server *h, const char *cap, const char *sub)
{
	size_t i;

	for (i = 0; i < h->conf.nups; i++) {
		json_t *c = json_object_get(upstream_caps(h->conf.ups[i]), cap);

		if (c && (sub == NULL || json_is_true(json_object_get(c, sub))))
			return true;
	}
	return false;
}

static json_t *
server_caps(struct http_server *h, bool stateless)
{
	json_t *caps;

	/*
	 * listChanged goes out on GET streams, and on subscriptions/listen streams, which
	 * carry the gateway's prompt and resource list changes too (2026-07-28 says so).
	 */
	caps = json_pack("{s:{},s:{s:b}}", "logging", "tools", "listChanged", 1);
	if (h->conf.prompts->n || any_upstream_has(h, "prompts", NULL))
		json_object_set_new(caps, "prompts", stateless ? json_pack("{s:b}", "listChanged", 1) :
				    json_object());
	if (h->conf.resources->n || h->conf.templates->n || any_upstream_has(h, "resources",
									       NULL)) {
		json_t *r = json_pack("{s:b}", "subscribe", any_upstream_has(h, "resources",
									 "subscribe"));

		if (stateless)
			json_object_set_new(r, "listChanged", json_true());
		json_object_set_new(caps, "resources", r);
	}
	if (any_upstream_has(h, "completions", NULL))
		json_object_set_new(caps, "completions", json_object());
	return caps;
}

static json_t *
mcp_initialize(struct http_server *h, struct session *s, json_t *id, json_t *params)
{
	const char *req = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = upstream_proto_negotiate(req);

	snprintf(s->version, sizeof(s->version), "%s", v);
	s->initialized = true;
	s->caps = rpc_client_caps(json_object_get(params, "capabilities"));
	return rpc_result(id, json_pack("{s:s,s:o,s:{s:s,s:s}}", "protocolVersion", v,
					"capabilities", server_caps(h, false), "serverInfo",
					"name", GW_CLIENT_NAME, "version", h->conf.version));
}

/*
 * 2026-07-28: what initialize told, for a client that sends no initialize. serverInfo is in
 * _meta, where the revision puts it on every response, and in the body for clients that
 * read it there.
 */
static json_t *
mcp_discover(struct http_server *h, json_t *id)
{
	json_t *caps = server_caps(h, true);

	if (tasks_offered(h))
		json_object_set_new(caps, "extensions", json_pack("{s:{}}", EXT_TASKS));
	return rpc_result(id, json_pack("{s:o,s:o,s:{s:s,s:s},s:i,s:s,s:{s:{s:s,s:s}}}",
		"supportedVersions", stateless_versions(), "capabilities", caps, "serverInfo",
		"name", GW_CLIENT_NAME, "version", h->conf.version, "ttlMs", 0, "cacheScope",
		"private", "_meta", META_SERVER_INFO, "name", GW_CLIENT_NAME, "version",
		h->conf.version));
}

/* One page of an aggregated list, with an opaque cursor to the next. */
static json_t *
list_page(struct http_server *h, const struct tool_table *t, const char *key, json_t *id,
	  json_t *params)
{
	json_t *cursor = json_object_get(params, "cursor"), *items, *res;
	size_t off = 0, end, i;

	if (cursor && !json_is_null(cursor)) {
		const char *c = json_string_value(cursor);
		char *e;

		if (c == NULL || strncmp(c, CURSOR_PREFIX, strlen(CURSOR_PREFIX)))
			return rpc_error(id, RPC_INVALID_PARAMS, "invalid cursor");
		c += strlen(CURSOR_PREFIX);
		errno = 0;
		off = strtoul(c, &e, 10);
		if (!isdigit((unsigned char)*c) || *e || errno || off == 0 || off >= t->n)
			return rpc_error(id, RPC_INVALID_PARAMS, "invalid cursor");
	}
	end = off + h->conf.page_size;
	if (end > t->n)
		end = t->n;
	items = json_array();
	for (i = off; i < end; i++)
		json_array_append(items, t->v[i].tool);
	res = json_pack("{s:o}", key, items);
	if (end < t->n) {
		char buf[64];

		snprintf(buf, sizeof(buf), CURSOR_PREFIX "%zu", end);
		json_object_set_new(res, "nextCursor", json_string(buf));
	}
	return rpc_result(id, res);
}

/* params with one field replaced: the name or URI the owning upstream knows. */
static json_t *
params_with(json_t *params, const char *key, const char *value)
{
	json_t *p = json_is_object(params) ? json_copy(params) : json_object();

	json_object_set_new(p, key, json_string(value));
	return p;
}

/* The upstream that owns a resource URI: a listed resource, then a matching template. */
static struct upstream *
resource_owner(struct http_server *h, const char *uri)
{
	const struct tool_route *r = routes_find(h->conf.resources, uri);
	size_t i;

	if (r)
		return r->ctx;
	for (i = 0; i < h->conf.templates->n; i++)
		if (routes_template_match(h->conf.templates->v[i].orig, uri))
			return h->conf.templates->v[i].ctx;
	/* Only one server has resources at all: it may know URIs it does not list. */
	for (i = 0; i < h->conf.nups; i++) {
		if (json_object_get(upstream_caps(h->conf.ups[i]), "resources") == NULL)
			continue;
		if (r)
			return NULL;
		r = (const struct tool_route *)h->conf.ups[i];
	}
	return (struct upstream *)r;
}

static void
route_named(struct http_server *h, const struct tool_table *t, const char *what,
	    json_t *id, json_t *params, struct forward *f)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct tool_route *r = name ? routes_find(t, name) : NULL;
	char fmt[64];

	if (r == NULL && name && t == h->conf.tools) {
		for (size_t i = 0; i < h->conf.nups; i++) {
			if (upstream_tool_allowed(h->conf.ups[i], name))
				continue;
			char *m = str_printf("tool %s is not allowed by the toolRules of server %s",
					     name, upstream_name(h->conf.ups[i]));
			struct audit_call c = {
				.server = upstream_name(h->conf.ups[i]), .tool = name,
				.args = json_object_get(params, "arguments"), .status = "denied",
				.code = RPC_INVALID_PARAMS,
			};

			audit_write(h->conf.audit, &c);
			f->reply = rpc_error(id, RPC_INVALID_PARAMS, m ? m : "tool not allowed");
			free(m);
			return;
		}
	}
	if (r == NULL) {
		snprintf(fmt, sizeof(fmt), name ? "unknown %s %%s" : "missing %s name", what);
		f->reply = rpc_errorf(id, RPC_INVALID_PARAMS, fmt, name);
		return;
	}
	f->u = r->ctx;
	/* A name the server knows as it is (the usual case) needs no copy of params renamed. */
	f->params = strcmp(name, r->orig) == 0 ? json_incref(params) :
		    params_with(params, "name", r->orig);
}

static void
route_resource(struct http_server *h, struct session *s, const char *method, json_t *id,
	       json_t *params, struct forward *f)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));

	if (uri == NULL) {
		f->reply = rpc_error(id, RPC_INVALID_PARAMS, "missing uri");
		return;
	}
	f->u = resource_owner(h, uri);
	if (f->u == NULL) {
		json_t *e = rpc_errorf(id, s->stateless ? RPC_INVALID_PARAMS : -32002,
				       "Resource %s not found", uri);

		json_object_set_new(json_object_get(e, "error"), "data",
				    json_pack("{s:s}", "uri", uri));
		f->reply = e;
		return;
	}
	f->params = json_incref(params);
	if (strcmp(method, "resources/subscribe") == 0)
		session_subscribe(h, s, uri, true);
	else if (strcmp(method, "resources/unsubscribe") == 0)
		session_subscribe(h, s, uri, false);
}

static void
route_complete(struct http_server *h, json_t *id, json_t *params, struct forward *f)
{
	json_t *ref = json_object_get(params, "ref"), *nref;
	const char *type = json_string_value(json_object_get(ref, "type"));
	const struct tool_route *r = NULL;

	if (type && strcmp(type, "ref/prompt") == 0) {
		const char *name = json_string_value(json_object_get(ref, "name"));

		r = name ? routes_find(h->conf.prompts, name) : NULL;
		if (r == NULL) {
			f->reply = rpc_errorf(id, RPC_INVALID_PARAMS, "unknown prompt %s", name);
			return;
		}
		f->u = r->ctx;
		nref = params_with(ref, "name", r->orig);
	} else if (type && strcmp(type, "ref/resource") == 0) {
		const char *uri = json_string_value(json_object_get(ref, "uri"));

		r = uri ? routes_find(h->conf.templates, uri) : NULL;
		f->u = r ? r->ctx : uri ? resource_owner(h, uri) : NULL;
		if (f->u == NULL) {
			f->reply = rpc_errorf(id, RPC_INVALID_PARAMS, "unknown resource %s", uri);
			return;
		}
		nref = json_incref(ref);
	} else {
		f->reply = rpc_error(id, RPC_INVALID_PARAMS, "ref must be ref/prompt or "
				     "ref/resource");
		return;
	}
	f->params = json_copy(params);
	json_object_set_new(f->params, "ref", nref);
}

static json_t *
set_level(struct http_server *h, struct session *s, json_t *id, json_t *params)
{
	const char *level = json_string_value(json_object_get(params, "level"));

	if (level == NULL || !rpc_log_level_valid(level))
		return rpc_errorf(id, RPC_INVALID_PARAMS, "invalid log level %s", level);
	session_set_log_level(h, s, rpc_log_level(level));
	return rpc_result(id, json_object());
}

/* Methods 2026-07-28 removed: subscriptions/listen replaced resources/subscribe. */
static bool
removed_2026_07_28(const char *method)
{
	static const char *const gone[] = {
		"initialize", "ping", "logging/setLevel", "resources/subscribe",
		"resources/unsubscribe", NULL,
	};
	size_t i;

	for (i = 0; gone[i]; i++)
		if (strcmp(method, gone[i]) == 0)
			return true;
	return false;
}

static void
route_locked(struct http_server *h, struct session *s, json_t *req, struct forward *f)
{
	const char *method = json_string_value(json_object_get(req, "method"));
	json_t *id = json_object_get(req, "id");
	json_t *params = json_object_get(req, "params");

	memset(f, 0, sizeof(*f));
	if (s->stateless) {
		/* The stateless revision has no handshake, no ping and no setLevel. */
		if (strcmp(method, "server/discover") == 0) {
			f->reply = mcp_discover(h, id);
			return;
		}
		if (removed_2026_07_28(method)) {
			f->reply = rpc_error(id, RPC_METHOD_NOT_FOUND, "method not found");
			return;
		}
		if (tasks_method(method)) {
			f->method = strdup(method);
			f->what = method;
			tasks_route(h, s, id, params, f);
			return;
		}
	}
	if (strcmp(method, "initialize") == 0) {
		f->reply = mcp_initialize(h, s, id, params);
		return;
	}
	if (strcmp(method, "ping") == 0) {
		f->reply = rpc_result(id, json_object());
		return;
	}
	if (strcmp(method, "logging/setLevel") == 0) {
		f->reply = set_level(h, s, id, params);
		return;
	}
	if (!s->initialized) {
		f->reply = rpc_errorf(id, RPC_INVALID_REQUEST, "method %s is invalid during "
				      "session initialization", method);
		return;
	}
	f->method = strdup(method);
	f->what = method;
	if (strcmp(method, "tools/list") == 0)
		f->reply = list_page(h, h->conf.tools, "tools", id, params);
	else if (strcmp(method, "prompts/list") == 0)
		f->reply = list_page(h, h->conf.prompts, "prompts", id, params);
	else if (strcmp(method, "resources/list") == 0)
		f->reply = list_page(h, h->conf.resources, "resources", id, params);
	else if (strcmp(method, "resources/templates/list") == 0)
		f->reply = list_page(h, h->conf.templates, "resourceTemplates", id, params);
	else if (strcmp(method, "tools/call") == 0)
		route_named(h, h->conf.tools, "tool", id, params, f);
	else if (strcmp(method, "prompts/get") == 0)
		route_named(h, h->conf.prompts, "prompt", id, params, f);
	else if (strcmp(method, "resources/read") == 0 ||
		 strcmp(method, "resources/subscribe") == 0 ||
		 strcmp(method, "resources/unsubscribe") == 0)
		route_resource(h, s, method, id, params, f);
	else if (strcmp(method, "completion/complete") == 0)
		route_complete(h, id, params, f);
	else
		f->reply = rpc_error(id, RPC_METHOD_NOT_FOUND, "method not found");
}

struct route_args {
	struct http_server *h;
	struct session *s;
	json_t *req;
	struct forward *f;
};

static void
route_read(void *arg)
{
	struct route_args *a = arg;

	route_locked(a->h, a->s, a->req, a->f);
}

/* Everything routing reads of the tables is copied out before the read lock goes. */
void
mcp_route(struct http_server *h, struct session *s, json_t *req, struct forward *f)
{
	struct route_args a = { h, s, req, f };

	lists_read(h, route_read, &a);
}

void
mcp_forward_fini(struct forward *f)
{
	free(f->method);
	json_decref(f->params);
	json_decref(f->reply);
	memset(f, 0, sizeof(*f));
}
