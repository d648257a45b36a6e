/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "config.h"
#include "reg_api.h"

#define REG_API_ERR	512	/* as long as api_error() keeps */

int
reg_api_status(int status)
{
	switch (status) {
	case REG_OK:
		return 200;
	case REG_CREATED:
		return 201;
	case REG_E_INVALID:
		return 400;
	case REG_E_NOT_FOUND:
		return 404;
	case REG_E_CONFLICT:
		return 409;
	case REG_E_EXHAUSTED:
		return 503;
	default:
		return 500;
	}
}

static int __attribute__((format(printf, 3, 4)))
reg_req_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int
reg_req_ports(const json_t *v, struct reg_req *q, char *err, size_t errlen)
{
	size_t i, j;

	if (!json_is_array(v) || json_array_size(v) > CVS_MAX_EXPOSED)
		return reg_req_fail(err, errlen, "\"exposedPorts\" must be an array of at most %d "
				    "ports", CVS_MAX_EXPOSED);
	for (i = 0; i < json_array_size(v); i++) {
		json_t *p = json_array_get(v, i);
		json_int_t n = json_is_integer(p) ? json_integer_value(p) : 0, h = 0;

		/* Or {"containerPort": N, "hostPort": M}: that host port, not one handed out. */
		if (json_is_object(p) && json_unpack(p, "{s:I,s:I!}", "containerPort", &n,
						     "hostPort", &h))
			n = 0;
		if (n < 1 || n > 65535 || (json_is_object(p) && (h < 1 || h > 65535)))
			return reg_req_fail(err, errlen, "\"exposedPorts\"[%zu] must be a port "
					    "1..65535, or {\"containerPort\": 1..65535, "
					    "\"hostPort\": 1..65535}", i);
		for (j = 0; j < q->nports; j++)
			if (q->cports[j] == n || (h && q->hports[j] == h))
				return reg_req_fail(err, errlen, "port %d listed twice in "
						    "\"exposedPorts\"", (int)(q->cports[j] == n ? n : h));
		q->hports[q->nports] = (uint16_t)h;
		q->cports[q->nports++] = (uint16_t)n;
	}
	return 0;
}

/*
 * {"socket": absolute path, "mode": "server"|"client"}. The path must fit a unix socket
 * address; "server" (the default) means cubevs-fp listens and the VMM connects.
 */
static int
reg_req_vhost(const json_t *v, struct reg_req *q, char *err, size_t errlen)
{
	const char *key, *path = NULL, *mode = "server";
	json_t *f;

	if (!json_is_object(v))
		return reg_req_fail(err, errlen, "\"vhostUser\" must be an object with \"socket\" "
				    "and \"mode\"");
	json_object_foreach((json_t *)v, key, f) {
		if (!strcmp(key, "socket") && json_is_string(f))
			path = json_string_value(f);
		else if (!strcmp(key, "mode") && json_is_string(f))
			mode = json_string_value(f);
		else
			return reg_req_fail(err, errlen, "\"vhostUser\": unknown or mistyped field "
					    "\"%s\"", key);
	}
	if (!path || path[0] != '/' || strlen(path) >= CVS_VHOST_PATH_MAX ||
	    strlen(path) != json_string_length(json_object_get(v, "socket")))
		return reg_req_fail(err, errlen, "\"vhostUser\".\"socket\" must be an absolute "
				    "path of at most %d bytes", CVS_VHOST_PATH_MAX - 1);
	if (strcmp(mode, "server") && strcmp(mode, "client"))
		return reg_req_fail(err, errlen, "\"vhostUser\".\"mode\" must be \"server\" or "
				    "\"client\"");
	snprintf(q->vhost, sizeof(q->vhost), "%s", path);
	q->vhost_client = !strcmp(mode, "client");
	return 0;
}

/* A string field's text: NULL when absent, "" (refused by the parser) when not a string. */
static const char *
reg_req_str(const json_t *root, const char *key)
{
	const json_t *v = json_object_get(root, key);

	return !v ? NULL : json_is_string(v) ? json_string_value(v) : "";
}

/* guestIP, gatewayIP, gatewayMAC, judged together (as the state file's are). */
static int
reg_req_guest(const json_t *root, struct reg_req *q, char *err, size_t errlen)
{
	char why[160];

	if (reg_guest_parse(reg_req_str(root, "guestIP"), reg_req_str(root, "gatewayIP"),
			    json_object_get(root, "gatewayMAC"), &q->guest, why, sizeof(why)))
		return reg_req_fail(err, errlen, "%s", why);
	return 0;
}

/* One field of the body. */
static int
reg_req_field(const struct registry *r, const char *key, const json_t *v, struct reg_req *q,
	      char *err, size_t errlen)
{
	char why[256];

	if (!strcmp(key, "iface")) {
		if (!json_is_string(v) || !json_string_length(v) ||
		    json_string_length(v) >= IF_NAMESIZE)
			return reg_req_fail(err, errlen, "\"iface\" must be an interface name");
		snprintf(q->iface, sizeof(q->iface), "%s", json_string_value(v));
	} else if (!strcmp(key, "vhostUser")) {
		return reg_req_vhost(v, q, err, errlen);
	} else if (!strcmp(key, "exposedPorts")) {
		return reg_req_ports(v, q, err, errlen);
	} else if (!strcmp(key, "sandboxIP")) {
		if (!json_is_string(v) || cvs_parse_ipv4(json_string_value(v), &q->ip))
			return reg_req_fail(err, errlen, "\"sandboxIP\" must be an IPv4 address");
		if (!reg_ip_usable(r, q->ip))
			return reg_req_fail(err, errlen, "\"sandboxIP\" %s is outside the usable "
					    "sandbox addresses", json_string_value(v));
	} else if (!strcmp(key, "policy")) {
		if (policy_parse(v, &q->policy, why, sizeof(why)))
			return reg_req_fail(err, errlen, "%s", why);
	} else if (!strcmp(key, "limits")) {
		if (reg_limits_parse(v, &q->limits, why, sizeof(why)))
			return reg_req_fail(err, errlen, "%s", why);
	} else if (!strcmp(key, "guestIP") || !strcmp(key, "gatewayIP") ||
		   !strcmp(key, "gatewayMAC")) {
		return 0;	/* reg_req_guest() */
	} else if (!strcmp(key, "guestMAC")) {
		if (reg_mac_parse(v, q->guest_mac))
			return reg_req_fail(err, errlen, "\"guestMAC\" must be a unicast MAC like "
					    "20:90:6f:fc:fc:fc");
		q->guest_mac_set = true;
	} else {
		return reg_req_fail(err, errlen, "unknown field \"%s\"", key);
	}
	return 0;
}

int
reg_req_parse(const struct registry *r, const char *body, size_t len, struct reg_req *q,
	      char *err, size_t errlen)
{
	json_error_t jerr;
	const char *key;
	json_t *root, *v;
	int ret = 0;

	memset(q, 0, sizeof(*q));
	root = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return reg_req_fail(err, errlen, "invalid JSON at line %d column %d: %s",
				    jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root))
		ret = reg_req_fail(err, errlen, "body must be a JSON object");
	json_object_foreach(root, key, v) {
		if (ret)
			break;
		ret = reg_req_field(r, key, v, q, err, errlen);
	}
	if (!ret)
		ret = reg_req_guest(root, q, err, errlen);
	if (!ret && !q->iface[0] == !q->vhost[0])
		ret = reg_req_fail(err, errlen, "exactly one of \"iface\" and \"vhostUser\" is "
				   "required");
	json_decref(root);
	return ret;
}

/* ---- handlers ---- */

static void
reg_api_answer(struct api_reply *rep, int status, json_t *out, const char *err)
{
	rep->status = reg_api_status(status);
	rep->json = status < 0 ? api_error("%s", err) : out;
}

/* A change is answered only once it is in the state file. */
static void
reg_api_commit(struct registry *r, struct api_reply *rep)
{
	char err[REG_API_ERR];

	if (rep->status / 100 != 2 || !reg_persist(r, err, sizeof(err)))
		return;
	json_decref(rep->json);
	rep->json = api_error("the change is in effect but could not be saved: %s", err);
	rep->status = 500;
}

static void
reg_api_list(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	rep->json = reg_list(ctx);
}

static void
reg_api_get(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	char err[REG_API_ERR];
	json_t *out = NULL;
	int status = reg_get(ctx, rq->arg[0], &out, err, sizeof(err));

	reg_api_answer(rep, status, out, err);
}

static void
reg_api_put(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	struct registry *r = ctx;
	char err[REG_API_ERR];
	struct reg_req q;
	json_t *out = NULL;
	int status;

	status = reg_id_check(rq->arg[0], err, sizeof(err));
	if (!status && reg_req_parse(r, rq->body, rq->len, &q, err, sizeof(err)))
		status = REG_E_INVALID;
	if (!status)
		status = reg_put(r, rq->arg[0], &q, &out, err, sizeof(err));
	reg_api_answer(rep, status, out, err);
	reg_api_commit(r, rep);
}

static void
reg_api_delete(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	char err[REG_API_ERR];
	int status = reg_delete(ctx, rq->arg[0], err, sizeof(err));

	reg_api_answer(rep, status, NULL, err);
	if (!status)
		rep->status = 204;
	reg_api_commit(ctx, rep);
}

static void
reg_api_exposed(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	char err[REG_API_ERR];
	const char *fam;
	json_t *out = NULL;
	uint32_t p;
	int status;

	if (cvs_parse_u32(rq->arg[1], 1, 65535, &p)) {
		rep->status = 400;
		rep->json = api_error("port must be an integer 1..65535, got \"%s\"", rq->arg[1]);
		return;
	}
	/* ?family=ipv6: the same host port on the node's IPv6 address; the default is IPv4. */
	fam = api_query_get(rq->query, "family");
	if (fam && strcmp(fam, "ipv4") && strcmp(fam, "ipv6")) {
		rep->status = 400;
		rep->json = api_error("family must be \"ipv4\" or \"ipv6\", got \"%s\"", fam);
		return;
	}
	status = reg_exposed_family(ctx, rq->arg[0], (uint16_t)p, fam && !strcmp(fam, "ipv6"),
				    &out, err, sizeof(err));
	reg_api_answer(rep, status, out, err);
}

static void
reg_api_policy_get(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	char err[REG_API_ERR];
	json_t *out = NULL;
	int status = reg_policy_get(ctx, rq->arg[0], &out, err, sizeof(err));

	reg_api_answer(rep, status, out, err);
}

static void
reg_api_policy_put(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	struct reg_policy *p = malloc(sizeof(*p));
	char err[REG_API_ERR], why[256];
	json_t *root, *out = NULL;
	json_error_t jerr;
	int status;

	if (!p) {
		reg_api_answer(rep, REG_E_FAILED, NULL, "out of memory");
		return;
	}
	root = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, sizeof(err), "invalid JSON at line %d column %d: %s", jerr.line,
			 jerr.column, jerr.text);
		status = REG_E_INVALID;
	} else if (policy_parse(root, p, why, sizeof(why))) {
		snprintf(err, sizeof(err), "%s", why);
		status = REG_E_INVALID;
	} else {
		status = reg_policy_set(ctx, rq->arg[0], p, &out, err, sizeof(err));
	}
	json_decref(root);
	free(p);
	reg_api_answer(rep, status, out, err);
	reg_api_commit(ctx, rep);
}

int
reg_api_register(struct api_routes *t, struct registry *r)
{
	static const struct {
		const char *method, *pattern;
		api_handler_fn fn;
	} routes[] = {
		{ "GET", "/sandboxes", reg_api_list },
		{ "GET", "/sandboxes/{id}", reg_api_get },
		{ "PUT", "/sandboxes/{id}", reg_api_put },
		{ "DELETE", "/sandboxes/{id}", reg_api_delete },
		{ "GET", "/sandboxes/{id}/policy", reg_api_policy_get },
		{ "PUT", "/sandboxes/{id}/policy", reg_api_policy_put },
		{ "GET", "/sandboxes/{id}/exposed-ports/{port}", reg_api_exposed },
	};
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < sizeof(routes) / sizeof(routes[0]); i++)
		ret = api_register(t, routes[i].method, routes[i].pattern, 0, routes[i].fn, r);
	return ret;
}
