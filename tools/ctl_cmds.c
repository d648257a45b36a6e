/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commands of cubevs-fpctl: each makes its API calls and prints the answer, as a table or
 * (--json) as the API's JSON. Their options and usage texts are in the table in cubevs-fpctl.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#define CTL_MAX_PAGES	100000	/* sessions --all: a bound even if the cursors never end */

static const char *
ctl_yes(json_t *v)
{
	return json_is_true(v) ? "yes" : "no";
}

static json_int_t
int_of(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static const char *
str_of(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Print the answer J with PRINT, or as the API's JSON, and let it go. */
static int
answer_print(const struct ctl *c, json_t *j, void (*print)(json_t *))
{
	if (c->json)
		ctl_print_json(j);
	else
		print(j);
	json_decref(j);
	return EXIT_OK;
}

/* GET PATH (NULL: it could not be built) and print the answer. */
static int
get_and_print(struct ctl *c, const char *path, void (*print)(json_t *))
{
	json_t *j;
	int rc;

	if (!path)
		return EXIT_CONNECT;
	j = ctl_call(c, "GET", path, NULL, &rc);
	return j ? answer_print(c, j, print) : rc;
}

/* ---- status, stats ---- */

static void
status_print(const struct ctl *c, json_t *ready, json_t *stats)
{
	json_t *chk = json_object_get(ready, "checks");

	printf("cubevs-fp %s at %s: %s\n", str_of(stats, "version"), c->where,
	       json_is_true(json_object_get(ready, "ready")) ? "ready" : "NOT READY");
	printf("  world port up: %s, steering program: %s, worker polling: %s, "
	       "state restored: %s\n", ctl_yes(json_object_get(chk, "worldPortUp")),
	       ctl_yes(json_object_get(chk, "steeringProgramAttached")),
	       ctl_yes(json_object_get(chk, "workerPolling")),
	       ctl_yes(json_object_get(chk, "stateRestored")));
	printf("  world sockets healthy: %s\n",
	       ctl_yes(json_object_get(chk, "worldSocketsHealthy")));
	printf("  sandboxes: %lld (%lld not attached)\n", (long long)int_of(ready, "sandboxes"),
	       (long long)int_of(ready, "unattachedSandboxes"));
	printf("  sessions: %lld of %lld\n", (long long)int_of(stats, "sessions"),
	       (long long)int_of(stats, "sessionCapacity"));
	printf("  uptime: %.0f s\n", json_number_value(json_object_get(stats, "uptimeSeconds")));
}

int
ctl_run_status(struct ctl *c, const struct ctl_args *a)
{
	struct ctl_resp r;
	json_t *ready, *stats;
	int rc;

	/* /readyz answers 503 when not ready: that is an answer, not an error. */
	if (ctl_http(c, "GET", "/readyz", NULL, &r))
		return EXIT_CONNECT;
	ready = json_loads(r.body, 0, NULL);
	free(r.body);
	if (!ready || (r.status != 200 && r.status != 503)) {
		ctl_err("unexpected answer to /readyz (HTTP %ld)", r.status);
		json_decref(ready);
		return EXIT_API;
	}
	stats = ctl_call(c, "GET", "/stats", NULL, &rc);
	if (!stats) {
		json_decref(ready);
		return rc;
	}
	if (c->json) {
		json_t *all = json_pack("{s:O,s:O}", "readyz", ready, "stats", stats);

		ctl_print_json(all);
		json_decref(all);
	} else {
		status_print(c, ready, stats);
	}
	rc = json_is_true(json_object_get(ready, "ready")) ? EXIT_OK : EXIT_API;
	json_decref(ready);
	json_decref(stats);
	return rc;
}

static void
stats_group(const char *title, json_t *g, bool all)
{
	const char *k;
	json_t *v;
	bool head = false;

	json_object_foreach(g, k, v) {
		if (json_is_object(v))
			continue;
		if (!all && json_is_integer(v) && !json_integer_value(v))
			continue;
		if (!head) {
			printf("%s:\n", title);
			head = true;
		}
		if (json_is_real(v))
			printf("  %-28s %.3f\n", k, json_real_value(v));
		else
			printf("  %-28s %lld\n", k, (long long)json_integer_value(v));
	}
}

static void
stats_groups(json_t *s, bool all)
{
	json_t *v, *top = json_object();
	const char *k;

	json_object_foreach(s, k, v)
		if (!json_is_object(v))
			json_object_set(top, k, v);
	stats_group("general", top, true);
	json_decref(top);
	json_object_foreach(s, k, v) {
		const char *id;
		json_t *sb;

		if (!json_is_object(v))
			continue;
		if (strcmp(k, "sandboxPorts")) {
			stats_group(k, v, all);
			continue;
		}
		json_object_foreach(v, id, sb) {
			char title[128];

			snprintf(title, sizeof(title), "sandbox %s", id);
			stats_group(title, sb, all);
		}
	}
}

static void
stats_print(json_t *s)
{
	stats_groups(s, false);
}

static void
stats_print_all(json_t *s)
{
	stats_groups(s, true);
}

int
ctl_run_stats(struct ctl *c, const struct ctl_args *a)
{
	return get_and_print(c, "/stats", ctl_flag(a, "all") ? stats_print_all : stats_print);
}

/* ---- sandbox, ports ---- */

static void
print_ports(json_t *sb)
{
	json_t *ports = json_object_get(sb, "exposedPorts"), *p;
	size_t i;

	json_array_foreach(ports, i, p)
		printf("%s%lld->%lld", i ? "," : "", (long long)int_of(p, "containerPort"),
		       (long long)int_of(p, "hostPort"));
	if (!json_array_size(ports))
		printf("-");
}

/* The sandbox's port: its interface, or "vhost:" and the socket of a vhost-user port. */
static const char *
port_of(json_t *sb, char *buf, size_t len)
{
	json_t *vh = json_object_get(sb, "vhostUser");

	if (!json_is_object(vh))
		return str_of(sb, "iface");
	snprintf(buf, len, "vhost:%s", str_of(vh, "socket"));
	return buf;
}

static void
sandbox_table(json_t *j)
{
	char port[160];
	json_t *sb;
	size_t i;

	printf("%-24s %-15s %-15s %-8s %s\n", "ID", "PORT", "SANDBOX-IP", "ATTACHED",
	       "PORTS (container->host)");
	json_array_foreach(json_object_get(j, "sandboxes"), i, sb) {
		printf("%-24s %-15s %-15s %-8s ", str_of(sb, "sandboxID"),
		       port_of(sb, port, sizeof(port)),
		       str_of(sb, "sandboxIP"), ctl_yes(json_object_get(sb, "attached")));
		print_ports(sb);
		putchar('\n');
	}
}

static const char *const ctl_limit_keys[] = {
#define CTL_LIMIT_KEY(o, k) k,
	CTL_LIMITS(CTL_LIMIT_KEY)
#undef CTL_LIMIT_KEY
};

static const char *const ctl_limit_opts[] = {
#define CTL_LIMIT_NAME(o, k) o,
	CTL_LIMITS(CTL_LIMIT_NAME)
#undef CTL_LIMIT_NAME
};

#define CTL_NLIMITS	(sizeof(ctl_limit_keys) / sizeof(ctl_limit_keys[0]))

/* The limits in force, each marked "(set)" when the registration overrides the default. */
static void
limits_print(json_t *sb)
{
	json_t *lim = json_object_get(sb, "limits"), *set = json_object_get(sb, "limitsSet");
	size_t k;

	if (!json_is_object(lim))
		return;
	printf("limits (0: none):\n");
	for (k = 0; k < CTL_NLIMITS; k++) {
		json_t *v = json_object_get(lim, ctl_limit_keys[k]);

		if (json_is_integer(v))
			printf("  %-24s %lld%s\n", ctl_limit_opts[k], (long long)json_integer_value(v),
			       json_object_get(set, ctl_limit_keys[k]) ? " (set)" : "");
	}
}

/* The "limits" object of a registration from the options given, or NULL when none was. */
static json_t *
limits_body(const struct ctl_args *a)
{
	json_t *lim = NULL;
	size_t k;

	for (k = 0; k < CTL_NLIMITS; k++) {
		if (!ctl_flag(a, ctl_limit_opts[k]))
			continue;
		if (!lim)
			lim = json_object();
		json_object_set_new(lim, ctl_limit_keys[k],
				    json_integer(ctl_num(a, ctl_limit_opts[k], 0)));
	}
	return lim;
}

static void
sandbox_print(json_t *sb)
{
	json_t *ports = json_object_get(sb, "exposedPorts"), *p;
	json_t *vh = json_object_get(sb, "vhostUser");
	size_t i;

	printf("sandbox:    %s\n", str_of(sb, "sandboxID"));
	if (json_is_object(vh) && json_is_true(json_object_get(vh, "connected")))
		printf("vhost-user: %s (%s, VMM connected, features %s)\n", str_of(vh, "socket"),
		       str_of(vh, "mode"), str_of(vh, "features"));
	else if (json_is_object(vh))
		printf("vhost-user: %s (%s, no VMM connected)\n", str_of(vh, "socket"),
		       str_of(vh, "mode"));
	else
		printf("interface:  %s\n", str_of(sb, "iface"));
	printf("sandbox IP: %s\n", str_of(sb, "sandboxIP"));
	printf("guest MAC:  %s\n", str_of(sb, "guestMAC"));
	if (json_is_string(json_object_get(sb, "guestIP")))
		printf("guest IP:   %s\n", str_of(sb, "guestIP"));
	if (json_is_string(json_object_get(sb, "gatewayIP")))
		printf("gateway:    %s %s\n", str_of(sb, "gatewayIP"),
		       json_is_string(json_object_get(sb, "gatewayMAC")) ?
		       str_of(sb, "gatewayMAC") : "");
	printf("attached:   %s", ctl_yes(json_object_get(sb, "attached")));
	if (json_is_string(json_object_get(sb, "attachError")))
		printf(" (%s)", str_of(sb, "attachError"));
	if (json_is_string(json_object_get(sb, "detachedAt")))
		printf(" since %s", str_of(sb, "detachedAt"));
	putchar('\n');
	printf("exposed ports:%s\n", json_array_size(ports) ? "" : " none");
	json_array_foreach(ports, i, p)
		printf("  %5lld -> %s\n", (long long)int_of(p, "containerPort"),
		       str_of(p, "endpoint"));
	limits_print(sb);
}

int
ctl_run_sandbox_list(struct ctl *c, const struct ctl_args *a)
{
	return get_and_print(c, "/sandboxes", sandbox_table);
}

int
ctl_run_sandbox_show(struct ctl *c, const struct ctl_args *a)
{
	char *path = ctl_path(c, "/sandboxes/%s", a->pos[0]);
	int rc = get_and_print(c, path, sandbox_print);

	free(path);
	return rc;
}

/* --guest-ip, --gateway-ip, --gateway-mac as given: the API judges them. */
static void
guest_body(json_t *body, const struct ctl_args *a)
{
	static const char *const opt[] = { "guest-ip", "gateway-ip", "gateway-mac" };
	static const char *const key[] = { "guestIP", "gatewayIP", "gatewayMAC" };
	size_t i;

	for (i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (ctl_str(a, opt[i]))
			json_object_set_new(body, key[i], json_string(ctl_str(a, opt[i])));
}

int
ctl_run_sandbox_add(struct ctl *c, const struct ctl_args *a)
{
	json_t *ports = ctl_list(a, "port"), *body, *j, *lim;
	const char *ip = ctl_str(a, "ip"), *mac = ctl_str(a, "guest-mac");
	const char *vsock = ctl_str(a, "vhost-user"), *vmode = ctl_str(a, "vhost-mode");
	char *path, *text;
	int rc;

	if (!ctl_str(a, "iface") == !vsock) {
		ctl_err("sandbox add wants exactly one of --iface and --vhost-user");
		return EXIT_USAGE;
	}
	/* Range checks beyond the port's own are the API's: its message is the one to see. */
	body = json_pack("{s:o}", "exposedPorts", ports ? json_incref(ports) : json_array());
	if (ctl_str(a, "iface"))
		json_object_set_new(body, "iface", json_string(ctl_str(a, "iface")));
	if (vsock) {
		json_t *vh = json_object();

		json_object_set_new(vh, "socket", json_string(vsock));
		if (vmode)
			json_object_set_new(vh, "mode", json_string(vmode));
		json_object_set_new(body, "vhostUser", vh);
	}
	if (ip)
		json_object_set_new(body, "sandboxIP", json_string(ip));
	if (mac)
		json_object_set_new(body, "guestMAC", json_string(mac));
	guest_body(body, a);
	if ((lim = limits_body(a)))
		json_object_set_new(body, "limits", lim);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	path = ctl_path(c, "/sandboxes/%s", a->pos[0]);
	if (!text || !path) {
		free(text);
		free(path);
		return EXIT_CONNECT;
	}
	j = ctl_call(c, "PUT", path, text, &rc);
	free(text);
	free(path);
	return j ? answer_print(c, j, sandbox_print) : rc;
}

int
ctl_run_sandbox_del(struct ctl *c, const struct ctl_args *a)
{
	char *path = ctl_path(c, "/sandboxes/%s", a->pos[0]);
	json_t *j;
	int rc;

	if (!path)
		return EXIT_CONNECT;
	j = ctl_call(c, "DELETE", path, NULL, &rc);
	free(path);
	if (!j)
		return rc;
	json_decref(j);
	if (!c->json)
		printf("sandbox %s removed\n", a->pos[0]);
	return EXIT_OK;
}

static void
endpoint_print(json_t *j)
{
	printf("%s %lld -> %s (%s)\n", str_of(j, "sandboxID"),
	       (long long)int_of(j, "containerPort"), str_of(j, "endpoint"), str_of(j, "mode"));
}

static void
ports_print(json_t *ports)
{
	json_t *p;
	size_t i;

	json_array_foreach(ports, i, p)
		printf("%lld -> %s\n", (long long)int_of(p, "containerPort"), str_of(p, "endpoint"));
}

int
ctl_run_ports(struct ctl *c, const struct ctl_args *a)
{
	json_t *j, *ports;
	char *path;
	int rc;

	/* CONTAINER_PORT and the family are the API's to judge: a bad one gets its 400. */
	if (a->npos == 2) {
		path = ctl_str(a, "family") ?
		       ctl_path(c, "/sandboxes/%s/exposed-ports/%s?family=%s", a->pos[0],
				a->pos[1], ctl_str(a, "family")) :
		       ctl_path(c, "/sandboxes/%s/exposed-ports/%s", a->pos[0], a->pos[1]);
		rc = get_and_print(c, path, endpoint_print);
		free(path);
		return rc;
	}
	if (ctl_str(a, "family")) {
		ctl_err("--family wants a CONTAINER_PORT");
		return EXIT_USAGE;
	}
	/* Without a port: the registration's list of them, and only that. */
	path = ctl_path(c, "/sandboxes/%s", a->pos[0]);
	if (!path)
		return EXIT_CONNECT;
	j = ctl_call(c, "GET", path, NULL, &rc);
	free(path);
	if (!j)
		return rc;
	ports = json_incref(json_object_get(j, "exposedPorts"));
	json_decref(j);
	return answer_print(c, ports, ports_print);
}

/* ---- policy ---- */

static void
policy_print(json_t *p)
{
	json_t *v;
	size_t i;

	/* A PUT may answer without a body. */
	if (!json_is_object(p))
		return;
	printf("internet access: %s\n", ctl_yes(json_object_get(p, "allowInternetAccess")));
	printf("allow out:");
	json_array_foreach(json_object_get(p, "allowOut"), i, v)
		printf(" %s", json_string_value(v));
	printf("%s\ndeny out:", json_array_size(json_object_get(p, "allowOut")) ? "" : " -");
	json_array_foreach(json_object_get(p, "denyOut"), i, v)
		printf(" %s", json_string_value(v));
	printf("%s\n", json_array_size(json_object_get(p, "denyOut")) ? "" : " -");
}

int
ctl_run_policy_get(struct ctl *c, const struct ctl_args *a)
{
	char *path = ctl_path(c, "/sandboxes/%s/policy", a->pos[0]);
	int rc = get_and_print(c, path, policy_print);

	free(path);
	return rc;
}

/* A list given (or cleared, an empty one) replaces the current one; else it stays. */
static json_t *
policy_list(const struct ctl_args *a, const char *opt, const char *clear, json_t *cur)
{
	json_t *l = ctl_list(a, opt);

	if (l)
		return json_incref(l);
	return ctl_flag(a, clear) ? json_array() : json_incref(cur);
}

int
ctl_run_policy_set(struct ctl *c, const struct ctl_args *a)
{
	const char *internet = ctl_str(a, "internet");
	json_t *cur, *body;
	char *path, *text;
	int rc;

	if (internet && strcmp(internet, "yes") && strcmp(internet, "no")) {
		ctl_err("--internet wants yes or no");
		return EXIT_USAGE;
	}
	path = ctl_path(c, "/sandboxes/%s/policy", a->pos[0]);
	if (!path)
		return EXIT_CONNECT;
	/* Read, change what is given, write back. */
	cur = ctl_call(c, "GET", path, NULL, &rc);
	if (!cur) {
		free(path);
		return rc;
	}
	body = json_object();
	json_object_set_new(body, "allowInternetAccess", internet ?
			    json_boolean(!strcmp(internet, "yes")) :
			    json_incref(json_object_get(cur, "allowInternetAccess")));
	json_object_set_new(body, "allowOut", policy_list(a, "allow", "clear-allow",
							  json_object_get(cur, "allowOut")));
	json_object_set_new(body, "denyOut", policy_list(a, "deny", "clear-deny",
							 json_object_get(cur, "denyOut")));
	json_decref(cur);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	cur = text ? ctl_call(c, "PUT", path, text, &rc) : NULL;
	if (!text)
		rc = EXIT_CONNECT;
	free(text);
	free(path);
	return cur ? answer_print(c, cur, policy_print) : rc;
}

/* ---- sessions ---- */

/* "/sessions" with "?sandbox=..&proto=..&limit=..&cursor=.." as given, values encoded. */
static char *
sessions_path(struct ctl *c, const struct ctl_args *a, const char *cursor)
{
	const char *key[] = { "sandbox", "proto", "limit", "cursor" };
	const char *val[] = { ctl_str(a, "sandbox"), ctl_str(a, "proto"), NULL, cursor };
	char limit[16], *path = strdup("/sessions");
	size_t i;

	if (ctl_num(a, "limit", 0)) {
		snprintf(limit, sizeof(limit), "%u", ctl_num(a, "limit", 0));
		val[2] = limit;
	}
	for (i = 0; i < 4 && path; i++) {
		char *part, *np = NULL;

		if (!val[i])
			continue;
		part = ctl_path(c, strchr(path, '?') ? "&%s=%s" : "?%s=%s", key[i], val[i]);
		if (!part || asprintf(&np, "%s%s", path, part) < 0)
			np = NULL;
		free(part);
		free(path);
		path = np;
	}
	return path;
}

static void
sessions_table(json_t *all, json_t *last, const char *next)
{
	json_t *e;
	size_t i;

	printf("%-5s %-12s %-22s %-22s %-22s %-16s %6s %8s\n", "PROTO", "STATE", "CLIENT", "TO",
	       "SANDBOX-SIDE", "SANDBOX", "IDLE", "EXPIRES");
	json_array_foreach(all, i, e) {
		json_t *o = json_object_get(e, "original");
		json_t *r = json_object_get(e, "reply");

		printf("%-5s %-12s %-22s %-22s %-22s %-16s %5llds %7llds\n", str_of(e, "proto"),
		       str_of(e, "state"), str_of(o, "src"), str_of(o, "dst"), str_of(r, "src"),
		       json_is_string(json_object_get(e, "sandboxID")) ?
		       str_of(e, "sandboxID") : "-",
		       (long long)int_of(e, "idleSeconds"), (long long)int_of(e, "expiresInSeconds"));
	}
	printf("%zu sessions shown of %lld", json_array_size(all), (long long)int_of(last, "total"));
	if (next)
		printf("; more with --cursor %s", next);
	putchar('\n');
}

static char *
next_cursor(json_t *page)
{
	const char *s = str_of(page, "nextCursor");

	return s && *s ? strdup(s) : NULL;
}

int
ctl_run_sessions(struct ctl *c, const struct ctl_args *a)
{
	const char *cursor = ctl_str(a, "cursor");
	char *next = cursor && *cursor ? strdup(cursor) : NULL, *path;
	json_t *all = json_array(), *j = NULL;
	int rc = EXIT_CONNECT, pages = 0;

	/* With --all, page after page until the API gives no next cursor. */
	do {
		path = sessions_path(c, a, next);
		json_decref(j);
		j = path ? ctl_call(c, "GET", path, NULL, &rc) : NULL;
		free(path);
		free(next);
		next = NULL;
		if (!j)
			break;
		json_array_extend(all, json_object_get(j, "sessions"));
		next = next_cursor(j);
	} while (ctl_flag(a, "all") && next && ++pages < CTL_MAX_PAGES);
	if (j && c->json) {
		json_object_set(j, "sessions", all);
		json_object_set_new(j, "count", json_integer((json_int_t)json_array_size(all)));
		ctl_print_json(j);
	} else if (j) {
		sessions_table(all, j, next);
	}
	free(next);
	json_decref(all);
	if (!j)
		return rc;
	json_decref(j);
	return EXIT_OK;
}
