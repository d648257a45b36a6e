/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cubevs-fpctl: the operator's client of the cubevs-fp control API. Plain HTTP/1.1 over a TCP
 * socket and jansson; no DPDK, so it runs anywhere the API is reachable.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <jansson.h>

#include "cvs_version.h"

#define CTL_DEFAULT_API		"127.0.0.1:9180"
#define CTL_MAX_RESPONSE	(64u << 20)
#define CTL_MAX_PORTS		64
#define CTL_MAX_CIDRS		256

/* Exit codes: documented in cubevs-fpctl(8). */
enum {
	EXIT_OK = 0,
	EXIT_API = 1,		/* the API answered with an error (or "not ready") */
	EXIT_USAGE = 2,
	EXIT_CONNECT = 3,	/* no answer at all */
};

struct ctl {
	char host[256];
	char port[16];
	bool json;
	int timeout;		/* seconds */
};

struct http_resp {
	int status;
	char *body;
	size_t len;
};

static void __attribute__((format(printf, 1, 2)))
ctl_err(const char *fmt, ...)
{
	va_list ap;

	fputs("cubevs-fpctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- HTTP ---- */

static int
ctl_connect(const struct ctl *c)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	struct timeval tv = { .tv_sec = c->timeout };
	int fd = -1, ret, saved = ECONNREFUSED;

	ret = getaddrinfo(c->host, c->port, &hints, &res);
	if (ret) {
		ctl_err("cannot resolve %s: %s", c->host, gai_strerror(ret));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		/* On Linux SO_SNDTIMEO also bounds connect(). */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		ctl_err("cannot connect to %s:%s: %s (is cubevs-fp running? see --api)", c->host,
			c->port, strerror(saved));
	return fd;
}

static int
ctl_send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Decode a chunked body in place; returns the decoded length or -1. */
static long
ctl_unchunk(char *b, size_t len)
{
	size_t in = 0, out = 0;

	while (in < len) {
		char *end;
		unsigned long n = strtoul(b + in, &end, 16);

		if (end == b + in)
			return -1;
		end = strstr(end, "\r\n");
		if (!end)
			return -1;
		in = (size_t)(end - b) + 2;
		if (n == 0)
			return (long)out;
		if (in + n > len)
			return -1;
		memmove(b + out, b + in, n);
		out += n;
		in += n + 2;
	}
	return -1;
}

static int
ctl_http(const struct ctl *c, const char *method, const char *path, const char *body,
	 struct http_resp *r)
{
	char head[1024], *buf = NULL, *hdr_end, *p;
	size_t len = 0, cap = 0, blen = body ? strlen(body) : 0;
	int fd, n;

	memset(r, 0, sizeof(*r));
	fd = ctl_connect(c);
	if (fd < 0)
		return -1;
	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: cubevs-fpctl/%s\r\n"
		     "Accept: application/json\r\nConnection: close\r\n%s"
		     "Content-Length: %zu\r\n\r\n", method, path, c->host, c->port, CVS_VERSION,
		     body ? "Content-Type: application/json\r\n" : "", blen);
	if (n < 0 || (size_t)n >= sizeof(head) || ctl_send_all(fd, head, (size_t)n) ||
	    (blen && ctl_send_all(fd, body, blen))) {
		ctl_err("cannot send the request to %s:%s: %s", c->host, c->port, strerror(errno));
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t got;

		if (cap - len < 4096) {
			char *nb;

			cap = cap ? cap * 2 : 16384;
			if (cap > CTL_MAX_RESPONSE + 4096 || !(nb = realloc(buf, cap + 1))) {
				ctl_err("answer too large");
				goto fail;
			}
			buf = nb;
		}
		got = recv(fd, buf + len, cap - len, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ctl_err("no answer from %s:%s: %s", c->host, c->port,
				errno == EAGAIN ? "timed out" : strerror(errno));
			goto fail;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	fd = -1;
	if (!buf)
		goto bad;
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1)
		goto bad;
	hdr_end = strstr(buf, "\r\n\r\n");
	if (!hdr_end)
		goto bad;
	*hdr_end = '\0';
	p = hdr_end + 4;
	r->len = len - (size_t)(p - buf);
	for (char *h = strstr(buf, "\r\n"); h; h = strstr(h + 2, "\r\n")) {
		if (!strncasecmp(h + 2, "Transfer-Encoding:", 18) && strstr(h + 20, "chunked")) {
			long dl = ctl_unchunk(p, r->len);

			if (dl < 0)
				goto bad;
			r->len = (size_t)dl;
		}
	}
	r->body = malloc(r->len + 1);
	if (!r->body)
		goto fail;
	memcpy(r->body, p, r->len);
	r->body[r->len] = '\0';
	free(buf);
	return 0;
bad:
	ctl_err("malformed HTTP answer from %s:%s", c->host, c->port);
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return -1;
}

/*
 * One API call: returns the parsed JSON of a 2xx answer (or a JSON null for 204), NULL after
 * printing the API's error. *rc gets the exit code.
 */
static json_t *
ctl_call(const struct ctl *c, const char *method, const char *path, const char *body, int *rc)
{
	struct http_resp r;
	json_error_t jerr;
	json_t *j = NULL;

	if (ctl_http(c, method, path, body, &r)) {
		*rc = EXIT_CONNECT;
		return NULL;
	}
	if (r.len)
		j = json_loadb(r.body, r.len, 0, &jerr);
	if (r.status < 200 || r.status > 299) {
		const char *msg = json_string_value(json_object_get(j, "error"));

		ctl_err("%s (HTTP %d)", msg ? msg : r.len ? r.body : "no message", r.status);
		json_decref(j);
		free(r.body);
		*rc = EXIT_API;
		return NULL;
	}
	if (!j && r.len) {
		ctl_err("the answer is not JSON: %s", jerr.text);
		free(r.body);
		*rc = EXIT_API;
		return NULL;
	}
	free(r.body);
	*rc = EXIT_OK;
	return j ? j : json_null();
}

static void
ctl_print_json(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY |
			     JSON_REAL_PRECISION(9));

	if (s) {
		puts(s);
		free(s);
	}
}

/* Percent-encode one path segment or query value. */
static void
ctl_escape(const char *in, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *in && o + 4 < len; in++) {
		unsigned char ch = (unsigned char)*in;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
}

/* ---- helpers for the per-command option parsing ---- */

static const struct option ctl_help_only[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/*
 * Parse only --help and --json for a command taking min..max positional arguments. Returns
 * true when the command should go on (*first = its first positional argument); false after
 * printing help or a usage error, with the exit code in *rc.
 */
static bool
ctl_simple_args(struct ctl *c, int argc, char **argv, int min, int max, const char *usage,
		int *first, int *rc)
{
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "hj", ctl_help_only, NULL)) != -1) {
		if (opt == 'h') {
			printf("%s", usage);
			*rc = EXIT_OK;
			return false;
		}
		if (opt == 'j') {
			c->json = true;
			continue;
		}
		fprintf(stderr, "%s", usage);
		*rc = EXIT_USAGE;
		return false;
	}
	if (argc - optind < min || argc - optind > max) {
		fprintf(stderr, "%s", usage);
		*rc = EXIT_USAGE;
		return false;
	}
	*first = optind;
	return true;
}

#define CTL_ARGS(c, argc, argv, min, max, usage, first) do { \
	int _rc; \
	if (!ctl_simple_args(c, argc, argv, min, max, usage, first, &_rc)) \
		return _rc; \
} while (0)

static const char *
ctl_yes(json_t *v)
{
	return json_is_true(v) ? "yes" : "no";
}

/* ---- commands ---- */

static const char usage_status[] =
	"Usage: cubevs-fpctl status [--json]\n"
	"Readiness of cubevs-fp (GET /readyz) and a summary of its counters. Exits 1 when it\n"
	"is not ready.\n";

static int
cmd_status(struct ctl *c, int argc, char **argv)
{
	struct http_resp r;
	json_t *ready, *stats, *chk;
	int first, rc;

	CTL_ARGS(c, argc, argv, 0, 0, usage_status, &first);
	if (ctl_http(c, "GET", "/readyz", NULL, &r))
		return EXIT_CONNECT;
	ready = json_loads(r.body, 0, NULL);
	free(r.body);
	if (!ready || (r.status != 200 && r.status != 503)) {
		ctl_err("unexpected answer to /readyz (HTTP %d)", r.status);
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
		chk = json_object_get(ready, "checks");
		printf("cubevs-fp %s at %s:%s: %s\n",
		       json_string_value(json_object_get(stats, "version")), c->host, c->port,
		       json_is_true(json_object_get(ready, "ready")) ? "ready" : "NOT READY");
		printf("  world port up: %s, steering program: %s, worker polling: %s, "
		       "state restored: %s\n", ctl_yes(json_object_get(chk, "worldPortUp")),
		       ctl_yes(json_object_get(chk, "steeringProgramAttached")),
		       ctl_yes(json_object_get(chk, "workerPolling")),
		       ctl_yes(json_object_get(chk, "stateRestored")));
		printf("  sandboxes: %lld (%lld not attached)\n",
		       (long long)json_integer_value(json_object_get(ready, "sandboxes")),
		       (long long)json_integer_value(json_object_get(ready,
								     "unattachedSandboxes")));
		printf("  sessions: %lld of %lld\n",
		       (long long)json_integer_value(json_object_get(stats, "sessions")),
		       (long long)json_integer_value(json_object_get(stats, "sessionCapacity")));
		printf("  uptime: %.0f s\n",
		       json_number_value(json_object_get(stats, "uptimeSeconds")));
	}
	rc = json_is_true(json_object_get(ready, "ready")) ? EXIT_OK : EXIT_API;
	json_decref(ready);
	json_decref(stats);
	return rc;
}

static const char usage_stats[] =
	"Usage: cubevs-fpctl stats [--all] [--json]\n"
	"Counters of cubevs-fp (GET /stats), grouped. Without --all, counters that are zero\n"
	"are left out.\n";

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

static int
cmd_stats(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool all = false;
	json_t *s, *v, *top;
	const char *k;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "+ajh", opts, NULL)) != -1) {
		if (opt == 'a')
			all = true;
		else if (opt == 'j')
			c->json = true;
		else if (opt == 'h') {
			printf("%s", usage_stats);
			return EXIT_OK;
		} else {
			fprintf(stderr, "%s", usage_stats);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s", usage_stats);
		return EXIT_USAGE;
	}
	s = ctl_call(c, "GET", "/stats", NULL, &rc);
	if (!s)
		return rc;
	if (c->json) {
		ctl_print_json(s);
		json_decref(s);
		return EXIT_OK;
	}
	top = json_object();
	json_object_foreach(s, k, v)
		if (!json_is_object(v))
			json_object_set(top, k, v);
	stats_group("general", top, true);
	json_decref(top);
	json_object_foreach(s, k, v) {
		if (!json_is_object(v))
			continue;
		if (!strcmp(k, "sandboxPorts")) {
			const char *id;
			json_t *sb;

			json_object_foreach(v, id, sb) {
				char title[128];

				snprintf(title, sizeof(title), "sandbox %s", id);
				stats_group(title, sb, all);
			}
			continue;
		}
		stats_group(k, v, all);
	}
	json_decref(s);
	return EXIT_OK;
}

static void
print_ports(json_t *sb)
{
	json_t *ports = json_object_get(sb, "exposedPorts"), *p;
	size_t i;

	json_array_foreach(ports, i, p)
		printf("%s%lld->%lld", i ? "," : "",
		       (long long)json_integer_value(json_object_get(p, "containerPort")),
		       (long long)json_integer_value(json_object_get(p, "hostPort")));
	if (!json_array_size(ports))
		printf("-");
}

static const char usage_sandbox[] =
	"Usage: cubevs-fpctl sandbox list [--json]\n"
	"       cubevs-fpctl sandbox show ID [--json]\n"
	"       cubevs-fpctl sandbox add ID --iface IFACE [--port PORT]... [--ip SANDBOX_IP]\n"
	"       cubevs-fpctl sandbox del ID\n"
	"Register (add: PUT /sandboxes/ID, also changes the exposed ports of a registered\n"
	"sandbox), remove, list and show sandboxes.\n";

static int
sandbox_list(struct ctl *c)
{
	json_t *j, *arr, *sb;
	size_t i;
	int rc;

	j = ctl_call(c, "GET", "/sandboxes", NULL, &rc);
	if (!j)
		return rc;
	if (c->json) {
		ctl_print_json(j);
		json_decref(j);
		return EXIT_OK;
	}
	arr = json_object_get(j, "sandboxes");
	printf("%-24s %-15s %-15s %-8s %s\n", "ID", "IFACE", "SANDBOX-IP", "ATTACHED",
	       "PORTS (container->host)");
	json_array_foreach(arr, i, sb) {
		printf("%-24s %-15s %-15s %-8s ",
		       json_string_value(json_object_get(sb, "sandboxID")),
		       json_string_value(json_object_get(sb, "iface")),
		       json_string_value(json_object_get(sb, "sandboxIP")),
		       ctl_yes(json_object_get(sb, "attached")));
		print_ports(sb);
		putchar('\n');
	}
	json_decref(j);
	return EXIT_OK;
}

static void
sandbox_print(json_t *sb)
{
	json_t *ports = json_object_get(sb, "exposedPorts"), *p;
	size_t i;

	printf("sandbox:    %s\n", json_string_value(json_object_get(sb, "sandboxID")));
	printf("interface:  %s\n", json_string_value(json_object_get(sb, "iface")));
	printf("sandbox IP: %s\n", json_string_value(json_object_get(sb, "sandboxIP")));
	printf("attached:   %s", ctl_yes(json_object_get(sb, "attached")));
	if (json_is_string(json_object_get(sb, "attachError")))
		printf(" (%s)", json_string_value(json_object_get(sb, "attachError")));
	putchar('\n');
	printf("exposed ports:%s\n", json_array_size(ports) ? "" : " none");
	json_array_foreach(ports, i, p)
		printf("  %5lld -> %s\n",
		       (long long)json_integer_value(json_object_get(p, "containerPort")),
		       json_string_value(json_object_get(p, "endpoint")));
}

static int
sandbox_add(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "port", required_argument, NULL, 'p' },
		{ "ip", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *iface = NULL, *ip = NULL;
	json_t *body, *ports = json_array(), *j;
	char path[256], id[200], *text;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "hji:p:a:", opts, NULL)) != -1) {
		char *end;
		long v;

		switch (opt) {
		case 'i':
			iface = optarg;
			break;
		case 'a':
			ip = optarg;
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*end || !*optarg) {
				ctl_err("--port wants a number, got '%s'", optarg);
				json_decref(ports);
				return EXIT_USAGE;
			}
			/* Range checks are the API's: its message is the one operators see. */
			json_array_append_new(ports, json_integer(v));
			break;
		case 'j':
			c->json = true;
			break;
		case 'h':
			json_decref(ports);
			printf("%s", usage_sandbox);
			return EXIT_OK;
		default:
			json_decref(ports);
			fprintf(stderr, "%s", usage_sandbox);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1 || !iface) {
		json_decref(ports);
		fprintf(stderr, "%s", usage_sandbox);
		return EXIT_USAGE;
	}
	body = json_pack("{s:s,s:o}", "iface", iface, "exposedPorts", ports);
	if (ip)
		json_object_set_new(body, "sandboxIP", json_string(ip));
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	ctl_escape(argv[optind], id, sizeof(id));
	snprintf(path, sizeof(path), "/sandboxes/%s", id);
	j = ctl_call(c, "PUT", path, text, &rc);
	free(text);
	if (!j)
		return rc;
	if (c->json)
		ctl_print_json(j);
	else
		sandbox_print(j);
	json_decref(j);
	return EXIT_OK;
}

static int
cmd_sandbox(struct ctl *c, int argc, char **argv)
{
	char path[256], id[200];
	json_t *j;
	int first, rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout, "%s", usage_sandbox);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	argc--;
	argv++;
	if (!strcmp(argv[0], "list")) {
		CTL_ARGS(c, argc, argv, 0, 0, usage_sandbox, &first);
		return sandbox_list(c);
	}
	if (!strcmp(argv[0], "add"))
		return sandbox_add(c, argc, argv);
	if (strcmp(argv[0], "show") && strcmp(argv[0], "del")) {
		ctl_err("unknown sandbox command '%s'", argv[0]);
		fprintf(stderr, "%s", usage_sandbox);
		return EXIT_USAGE;
	}
	CTL_ARGS(c, argc, argv, 1, 1, usage_sandbox, &first);
	ctl_escape(argv[first], id, sizeof(id));
	snprintf(path, sizeof(path), "/sandboxes/%s", id);
	if (!strcmp(argv[0], "del")) {
		j = ctl_call(c, "DELETE", path, NULL, &rc);
		if (!j)
			return rc;
		json_decref(j);
		if (!c->json)
			printf("sandbox %s removed\n", argv[first]);
		return EXIT_OK;
	}
	j = ctl_call(c, "GET", path, NULL, &rc);
	if (!j)
		return rc;
	if (c->json)
		ctl_print_json(j);
	else
		sandbox_print(j);
	json_decref(j);
	return EXIT_OK;
}

static const char usage_ports[] =
	"Usage: cubevs-fpctl ports ID [CONTAINER_PORT] [--json]\n"
	"With a container port: the exposed-ports answer (GET /sandboxes/ID/exposed-ports/PORT).\n"
	"Without: every exposed port of the sandbox and its endpoint.\n";

static int
cmd_ports(struct ctl *c, int argc, char **argv)
{
	char path[320], id[200], port[64];
	json_t *j, *p;
	size_t i;
	int first, rc;

	CTL_ARGS(c, argc, argv, 1, 2, usage_ports, &first);
	ctl_escape(argv[first], id, sizeof(id));
	if (argc - first == 2) {
		ctl_escape(argv[first + 1], port, sizeof(port));
		snprintf(path, sizeof(path), "/sandboxes/%s/exposed-ports/%s", id, port);
		j = ctl_call(c, "GET", path, NULL, &rc);
		if (!j)
			return rc;
		if (c->json)
			ctl_print_json(j);
		else
			printf("%s %lld -> %s (%s)\n",
			       json_string_value(json_object_get(j, "sandboxID")),
			       (long long)json_integer_value(json_object_get(j, "containerPort")),
			       json_string_value(json_object_get(j, "endpoint")),
			       json_string_value(json_object_get(j, "mode")));
		json_decref(j);
		return EXIT_OK;
	}
	snprintf(path, sizeof(path), "/sandboxes/%s", id);
	j = ctl_call(c, "GET", path, NULL, &rc);
	if (!j)
		return rc;
	if (c->json) {
		ctl_print_json(json_object_get(j, "exposedPorts"));
	} else {
		json_array_foreach(json_object_get(j, "exposedPorts"), i, p)
			printf("%lld -> %s\n",
			       (long long)json_integer_value(json_object_get(p, "containerPort")),
			       json_string_value(json_object_get(p, "endpoint")));
	}
	json_decref(j);
	return EXIT_OK;
}

static const char usage_policy[] =
	"Usage: cubevs-fpctl policy get ID [--json]\n"
	"       cubevs-fpctl policy set ID [--internet yes|no] [--allow CIDR]... [--deny CIDR]...\n"
	"                                   [--clear-allow] [--clear-deny]\n"
	"Egress policy of a sandbox (GET/PUT /sandboxes/ID/policy). 'set' reads the current\n"
	"policy and changes only what is given: --allow and --deny replace their list.\n";

static void
policy_print(json_t *p)
{
	json_t *v;
	size_t i;

	printf("internet access: %s\n", ctl_yes(json_object_get(p, "allowInternetAccess")));
	printf("allow out:");
	json_array_foreach(json_object_get(p, "allowOut"), i, v)
		printf(" %s", json_string_value(v));
	printf("%s\ndeny out:", json_array_size(json_object_get(p, "allowOut")) ? "" : " -");
	json_array_foreach(json_object_get(p, "denyOut"), i, v)
		printf(" %s", json_string_value(v));
	printf("%s\n", json_array_size(json_object_get(p, "denyOut")) ? "" : " -");
}

static int
cmd_policy(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "internet", required_argument, NULL, 'i' },
		{ "allow", required_argument, NULL, 'a' },
		{ "deny", required_argument, NULL, 'd' },
		{ "clear-allow", no_argument, NULL, 'A' },
		{ "clear-deny", no_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	json_t *allow = NULL, *deny = NULL, *cur, *body;
	int internet = -1, opt, rc;
	char path[256], id[200], *text;
	bool set;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout, "%s", usage_policy);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (strcmp(argv[1], "get") && strcmp(argv[1], "set")) {
		ctl_err("unknown policy command '%s'", argv[1]);
		return EXIT_USAGE;
	}
	set = !strcmp(argv[1], "set");
	argc--;
	argv++;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		if (opt == 'h') {
			printf("%s", usage_policy);
			rc = EXIT_OK;
			goto out;
		}
		if (opt == 'j') {
			c->json = true;
			continue;
		}
		if (!set || opt == '?') {
			fprintf(stderr, "%s", usage_policy);
			rc = EXIT_USAGE;
			goto out;
		}
		if (opt == 'i') {
			if (strcmp(optarg, "yes") && strcmp(optarg, "no")) {
				ctl_err("--internet wants yes or no");
				rc = EXIT_USAGE;
				goto out;
			}
			internet = !strcmp(optarg, "yes");
		} else if (opt == 'a' || opt == 'A') {
			if (!allow)
				allow = json_array();
			if (opt == 'a')
				json_array_append_new(allow, json_string(optarg));
		} else if (opt == 'd' || opt == 'D') {
			if (!deny)
				deny = json_array();
			if (opt == 'd')
				json_array_append_new(deny, json_string(optarg));
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "%s", usage_policy);
		rc = EXIT_USAGE;
		goto out;
	}
	ctl_escape(argv[optind], id, sizeof(id));
	snprintf(path, sizeof(path), "/sandboxes/%s/policy", id);
	cur = ctl_call(c, "GET", path, NULL, &rc);
	if (!cur)
		goto out;
	if (!set) {
		if (c->json)
			ctl_print_json(cur);
		else
			policy_print(cur);
		json_decref(cur);
		goto out;
	}
	body = json_object();
	json_object_set_new(body, "allowInternetAccess", internet < 0 ?
			    json_incref(json_object_get(cur, "allowInternetAccess")) :
			    json_boolean(internet));
	json_object_set(body, "allowOut", allow ? allow : json_object_get(cur, "allowOut"));
	json_object_set(body, "denyOut", deny ? deny : json_object_get(cur, "denyOut"));
	json_decref(cur);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	cur = ctl_call(c, "PUT", path, text, &rc);
	free(text);
	if (cur) {
		if (c->json)
			ctl_print_json(cur);
		else if (json_is_object(cur))
			policy_print(cur);
		json_decref(cur);
	}
out:
	json_decref(allow);
	json_decref(deny);
	return rc;
}

static const char usage_sessions[] =
	"Usage: cubevs-fpctl sessions [--sandbox ID] [--proto tcp|udp|icmp] [--limit N]\n"
	"                             [--cursor C] [--all] [--json]\n"
	"A page of the session table (GET /sessions); --all follows the pages to the end.\n";

static int
cmd_sessions(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sandbox", required_argument, NULL, 's' },
		{ "proto", required_argument, NULL, 'p' },
		{ "limit", required_argument, NULL, 'l' },
		{ "cursor", required_argument, NULL, 'c' },
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sandbox = NULL, *proto = NULL, *limit = NULL, *cursor = NULL;
	char path[512], esc[200], next[32] = "";
	json_t *all = json_array(), *j = NULL, *e;
	bool follow = false;
	int opt, rc = EXIT_OK, pages = 0;
	size_t i;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			sandbox = optarg;
			break;
		case 'p':
			proto = optarg;
			break;
		case 'l':
			limit = optarg;
			break;
		case 'c':
			cursor = optarg;
			break;
		case 'a':
			follow = true;
			break;
		case 'j':
			c->json = true;
			break;
		case 'h':
			printf("%s", usage_sessions);
			json_decref(all);
			return EXIT_OK;
		default:
			fprintf(stderr, "%s", usage_sessions);
			json_decref(all);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s", usage_sessions);
		json_decref(all);
		return EXIT_USAGE;
	}
	if (cursor)
		snprintf(next, sizeof(next), "%s", cursor);
	do {
		size_t off;

		off = (size_t)snprintf(path, sizeof(path), "/sessions?");
		if (sandbox) {
			ctl_escape(sandbox, esc, sizeof(esc));
			off += (size_t)snprintf(path + off, sizeof(path) - off, "sandbox=%s&", esc);
		}
		if (proto) {
			ctl_escape(proto, esc, sizeof(esc));
			off += (size_t)snprintf(path + off, sizeof(path) - off, "proto=%s&", esc);
		}
		if (limit) {
			ctl_escape(limit, esc, sizeof(esc));
			off += (size_t)snprintf(path + off, sizeof(path) - off, "limit=%s&", esc);
		}
		if (next[0]) {
			ctl_escape(next, esc, sizeof(esc));
			off += (size_t)snprintf(path + off, sizeof(path) - off, "cursor=%s&", esc);
		}
		path[off - 1] = '\0';
		json_decref(j);
		j = ctl_call(c, "GET", path, NULL, &rc);
		if (!j)
			break;
		json_array_extend(all, json_object_get(j, "sessions"));
		next[0] = '\0';
		if (json_is_string(json_object_get(j, "nextCursor")))
			snprintf(next, sizeof(next), "%s",
				 json_string_value(json_object_get(j, "nextCursor")));
	} while (follow && next[0] && ++pages < 100000);
	if (!j) {
		json_decref(all);
		return rc;
	}
	if (c->json) {
		json_object_set(j, "sessions", all);
		json_object_set_new(j, "count", json_integer((json_int_t)json_array_size(all)));
		ctl_print_json(j);
	} else {
		printf("%-5s %-12s %-22s %-22s %-22s %-16s %6s %8s\n", "PROTO", "STATE",
		       "CLIENT", "TO", "SANDBOX-SIDE", "SANDBOX", "IDLE", "EXPIRES");
		json_array_foreach(all, i, e) {
			json_t *o = json_object_get(e, "original");
			json_t *r = json_object_get(e, "reply");

			printf("%-5s %-12s %-22s %-22s %-22s %-16s %5llds %7llds\n",
			       json_string_value(json_object_get(e, "proto")),
			       json_string_value(json_object_get(e, "state")),
			       json_string_value(json_object_get(o, "src")),
			       json_string_value(json_object_get(o, "dst")),
			       json_string_value(json_object_get(r, "src")),
			       json_is_string(json_object_get(e, "sandboxID")) ?
			       json_string_value(json_object_get(e, "sandboxID")) : "-",
			       (long long)json_integer_value(json_object_get(e, "idleSeconds")),
			       (long long)json_integer_value(json_object_get(e,
								       "expiresInSeconds")));
		}
		printf("%zu sessions shown of %lld", json_array_size(all),
		       (long long)json_integer_value(json_object_get(j, "total")));
		if (next[0])
			printf("; more with --cursor %s", next);
		putchar('\n');
	}
	json_decref(j);
	json_decref(all);
	return EXIT_OK;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: cubevs-fpctl [--api ADDR:PORT] [--json] [--timeout S] COMMAND [ARGS]\n"
		"\n"
		"Operator tool for cubevs-fp, through its control API.\n"
		"\n"
		"Commands (each has --help):\n"
		"  status                          readiness and a summary\n"
		"  stats [--all]                   counters\n"
		"  sandbox list|show|add|del       registrations\n"
		"  ports ID [CONTAINER_PORT]       exposed ports and their endpoints\n"
		"  policy get|set ID               egress policy of a sandbox\n"
		"  sessions [--sandbox ID] [--limit N]   the session table\n"
		"\n"
		"Options:\n"
		"  --api ADDR:PORT   API address [$CUBEVS_FP_API or " CTL_DEFAULT_API "]\n"
		"  --json            print the API's JSON answer\n"
		"  --timeout S       give up after S seconds [10]\n"
		"  --version         print the version\n"
		"\n"
		"Exit status: 0 success, 1 the API answered with an error (printed) or is not\n"
		"ready, 2 usage error, 3 the API could not be reached.\n");
}

static int
ctl_set_api(struct ctl *c, const char *s)
{
	const char *colon = strrchr(s, ':');
	size_t hl;

	if (!colon || colon == s || !colon[1] || strlen(colon + 1) >= sizeof(c->port))
		return -EINVAL;
	hl = (size_t)(colon - s);
	/* "[::1]:9180" */
	if (s[0] == '[' && hl >= 2 && s[hl - 1] == ']') {
		s++;
		hl -= 2;
	}
	if (hl >= sizeof(c->host))
		return -EINVAL;
	memcpy(c->host, s, hl);
	c->host[hl] = '\0';
	strcpy(c->port, colon + 1);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "api", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .timeout = 10 };
	const char *api = getenv("CUBEVS_FP_API");
	const char *cmd;
	int opt;

	if (!api || !*api)
		api = CTL_DEFAULT_API;
	while ((opt = getopt_long(argc, argv, "+hj", opts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			api = optarg;
			break;
		case 'j':
			c.json = true;
			break;
		case 't':
			c.timeout = atoi(optarg);
			if (c.timeout < 1 || c.timeout > 3600) {
				ctl_err("--timeout wants 1..3600 seconds");
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("cubevs-fpctl %s\n", CVS_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (ctl_set_api(&c, api)) {
		ctl_err("--api wants ADDR:PORT, got '%s'", api);
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	if (!strcmp(cmd, "status"))
		return cmd_status(&c, argc, argv);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(&c, argc, argv);
	if (!strcmp(cmd, "sandbox"))
		return cmd_sandbox(&c, argc, argv);
	if (!strcmp(cmd, "ports"))
		return cmd_ports(&c, argc, argv);
	if (!strcmp(cmd, "policy"))
		return cmd_policy(&c, argc, argv);
	if (!strcmp(cmd, "sessions"))
		return cmd_sessions(&c, argc, argv);
	if (!strcmp(cmd, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	ctl_err("unknown command '%s' (see --help)", cmd);
	return EXIT_USAGE;
}
