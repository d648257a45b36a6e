/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <microhttpd.h>

#include "api.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

struct api {
	struct MHD_Daemon *d;
	struct MHD_Daemon *du;		/* on the unix socket */
	const struct api_routes *routes;
	char sock[108];			/* its path, removed at the stop */
	ino_t sock_ino;			/* the file we made there */
};

struct api_req {
	char *body;
	size_t len;
	bool too_big;
};

json_t *
api_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	json_t *j;
	char *c;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	j = json_pack("{s:s}", "error", buf);
	if (j)
		return j;
	/*
	 * jansson refuses invalid UTF-8, and a message cut at the buffer's end may stop in the
	 * middle of a character: keep the ASCII and mark the rest.
	 */
	for (c = buf; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	return json_pack("{s:s}", "error", buf);
}

void
api_routes_init(struct api_routes *t)
{
	memset(t, 0, sizeof(*t));
}

/* Split a path into its non-empty segments; -1 when it is too long or has too many. */
static int
api_split(const char *path, char *buf, size_t buflen, char **seg, int max)
{
	int n = 0;
	char *p, *save = NULL;

	if (strlen(path) >= buflen)
		return -1;
	strcpy(buf, path);
	for (p = strtok_r(buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
		if (n == max)
			return -1;
		seg[n++] = p;
	}
	return n;
}

int
api_register(struct api_routes *t, const char *method, const char *pattern,
	     unsigned int flags, api_handler_fn fn, void *ctx)
{
	char buf[256], *seg[API_SEGS_MAX];
	int n, i, args = 0;

	if (pattern[0] != '/' || !fn || !*method)
		return -EINVAL;
	n = api_split(pattern, buf, sizeof(buf), seg, API_SEGS_MAX);
	if (n < 1)
		return -EINVAL;
	for (i = 0; i < n; i++)
		args += seg[i][0] == '{';
	if (args > API_ARGS_MAX || (args && (flags & API_EXACT)))
		return -EINVAL;
	if (t->n == API_ROUTES_MAX)
		return -ENOSPC;
	for (i = 0; i < (int)t->n; i++)
		if (!strcmp(t->r[i].method, method) && !strcmp(t->r[i].pattern, pattern))
			return -EEXIST;
	t->r[t->n++] = (struct api_route){ .method = method, .pattern = pattern, .flags = flags,
					   .fn = fn, .ctx = ctx };
	return 0;
}

/* Does the pattern match the path's segments? Fills arg with the {name} segments. */
static bool
api_match(const char *pattern, char *const *seg, int n, const char **arg)
{
	const char *p = pattern;
	int i = 0, a = 0;

	memset(arg, 0, API_ARGS_MAX * sizeof(*arg));
	while (*p) {
		const char *end;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchr(p, '/');
		len = end ? (size_t)(end - p) : strlen(p);
		if (i == n)
			return false;
		if (*p == '{')
			arg[a++] = seg[i];
		else if (strlen(seg[i]) != len || memcmp(seg[i], p, len))
			return false;
		i++;
		p += len;
	}
	return i == n;
}

void
api_dispatch(const struct api_routes *t, const char *method, const char *path,
	     const char *body, size_t len, const struct api_query *q, struct api_reply *rep)
{
	static const struct api_query none = { .n = 0 };
	struct api_request rq = { .method = method, .path = path, .body = body, .len = len,
				  .query = q ? q : &none };
	char buf[1024], *seg[API_SEGS_MAX], allow[sizeof(rep->allow)] = "";
	int n = api_split(path, buf, sizeof(buf), seg, API_SEGS_MAX);
	size_t used = 0;
	uint32_t i;

	memset(rep, 0, sizeof(*rep));
	rep->status = 200;
	for (i = 0; n > 0 && i < t->n; i++) {
		const struct api_route *r = &t->r[i];

		if ((r->flags & API_EXACT) ? strcmp(r->pattern, path) :
		    !api_match(r->pattern, seg, n, rq.arg))
			continue;
		if (!strcmp(r->method, method)) {
			r->fn(r->ctx, &rq, rep);
			return;
		}
		/* The path exists: a 405 lists every method it is served with. */
		used += (size_t)snprintf(allow + used, sizeof(allow) - used, "%s%s",
					 used ? ", " : "", r->method);
		if (used >= sizeof(allow))
			used = sizeof(allow) - 1;
	}
	if (used) {
		memcpy(rep->allow, allow, sizeof(allow));
		rep->status = 405;
		rep->json = api_error("method not allowed; allowed: %s", rep->allow);
		return;
	}
	rep->status = 404;
	rep->json = api_error("no route for %s", path);
}

void
api_reply_free(struct api_reply *rep)
{
	json_decref(rep->json);
	free(rep->text);
	rep->json = NULL;
	rep->text = NULL;
}

const char *
api_query_get(const struct api_query *q, const char *key)
{
	int i;

	for (i = 0; i < q->n; i++)
		if (!strcmp(q->key[i], key))
			return q->val[i] ? q->val[i] : "";
	return NULL;
}

static MHD_RESULT
api_query_add(void *cls, enum MHD_ValueKind kind, const char *key, const char *val)
{
	struct api_query *q = cls;

	if (q->n == API_QUERY_MAX) {
		q->overflow = true;
		return MHD_NO;
	}
	q->key[q->n] = key;
	q->val[q->n] = val;
	q->n++;
	return MHD_YES;
}

static MHD_RESULT
api_send_text(struct MHD_Connection *c, struct api_reply *rep)
{
	struct MHD_Response *resp;
	MHD_RESULT ret;

	resp = MHD_create_response_from_buffer(rep->text_len, rep->text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(rep->text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", rep->ctype ? rep->ctype : "text/plain");
	if (rep->allow[0])
		MHD_add_response_header(resp, "Allow", rep->allow);
	ret = MHD_queue_response(c, (unsigned int)rep->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static MHD_RESULT
api_send(struct MHD_Connection *c, int status, json_t *j, const char *allow)
{
	struct MHD_Response *resp;
	char *text = NULL;
	size_t len = 0;
	MHD_RESULT ret;

	if (j) {
		text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(9));
		json_decref(j);
		if (text) {
			len = strlen(text);
			text = realloc(text, len + 2);
			text[len++] = '\n';
		}
	}
	resp = MHD_create_response_from_buffer(len, text ? text : (void *)"",
					       text ? MHD_RESPMEM_MUST_FREE :
					       MHD_RESPMEM_PERSISTENT);
	if (text)
		MHD_add_response_header(resp, "Content-Type", "application/json");
	if (allow)
		MHD_add_response_header(resp, "Allow", allow);
	ret = MHD_queue_response(c, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static int
api_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Percent-decoding of the request path. An encoded NUL would cut an id short in C strings
 * ("s1%00x" named s1), and an encoded slash would split an id into route segments; both stay
 * encoded, which no valid id or route contains.
 */
static size_t
api_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *r = s, *w = s;

	while (*r) {
		int hi, lo;

		if (r[0] == '%' && (hi = api_hex(r[1])) >= 0 && (lo = api_hex(r[2])) >= 0 &&
		    (hi << 4 | lo) != 0 && (hi << 4 | lo) != '/') {
			*w++ = (char)(hi << 4 | lo);
			r += 3;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
	return (size_t)(w - s);
}

static MHD_RESULT
api_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	    const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct api *a = cls;
	struct api_req *rq = *con_cls;
	struct api_query q = { .n = 0 };
	struct api_reply rep;

	if (!rq) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);

		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		/*
		 * Refuse an absurd announced body now rather than wait for it. A moderately big
		 * one is read and dropped: a client still sending when we answer and close would
		 * see a reset instead of the 413.
		 */
		if (cl && strtoull(cl, NULL, 10) > 4ull * CVS_API_MAX_BODY)
			return api_send(c, 413, api_error("request body larger than %u bytes",
							  CVS_API_MAX_BODY), NULL);
		return MHD_YES;
	}
	if (*upload_size) {
		if (!rq->too_big && rq->len + *upload_size <= CVS_API_MAX_BODY) {
			char *nb = realloc(rq->body, rq->len + *upload_size + 1);

			if (!nb)
				return MHD_NO;
			rq->body = nb;
			memcpy(rq->body + rq->len, upload, *upload_size);
			rq->len += *upload_size;
			rq->body[rq->len] = '\0';
		} else {
			rq->too_big = true;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->too_big)
		return api_send(c, 413, api_error("request body larger than %u bytes",
						  CVS_API_MAX_BODY), NULL);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, api_query_add, &q);
	api_dispatch(a->routes, method, url, rq->body, rq->len, &q, &rep);
	if (rep.text) {
		json_decref(rep.json);
		return api_send_text(c, &rep);
	}
	return api_send(c, rep.status, rep.json, rep.allow[0] ? rep.allow : NULL);
}

static void
api_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
	struct api_req *rq = *con_cls;

	if (rq) {
		free(rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

/* A socket file at path that nobody accepts on any more (a process that is gone). */
static bool
api_sock_stale(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool stale = fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) &&
		     errno == ECONNREFUSED;

	if (fd >= 0)
		close(fd);
	return stale;
}

/* The listening unix socket at a->sock, made with 'mode'; -1 with err. */
static int
api_sock_listen(struct api *a, uint32_t mode, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, ret;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", a->sock);
	if (!lstat(a->sock, &st)) {
		if (!S_ISSOCK(st.st_mode) || !api_sock_stale(&sa)) {
			snprintf(err, errlen, "cannot listen on %s for the API: %s", a->sock,
				 S_ISSOCK(st.st_mode) ? "another process serves it" :
				 "a file that is not a socket is there");
			errno = S_ISSOCK(st.st_mode) ? EADDRINUSE : EEXIST;
			return -1;
		}
		unlink(a->sock);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Made inaccessible, then opened to 'mode': no moment wider than asked. */
	old = umask(0777);
	ret = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (ret || chmod(a->sock, (mode_t)mode) || lstat(a->sock, &st) || listen(fd, 128)) {
		int e = errno;

		snprintf(err, errlen, "cannot listen on %s for the API: %s", a->sock, strerror(e));
		if (fd >= 0)
			close(fd);
		if (!ret)
			unlink(a->sock);
		errno = e;
		return -1;
	}
	a->sock_ino = st.st_ino;
	return fd;
}

#define API_DAEMON_OPTIONS(a) \
	MHD_OPTION_CONNECTION_LIMIT, CVS_API_MAX_CONNECTIONS, \
	MHD_OPTION_CONNECTION_TIMEOUT, 30u, \
	MHD_OPTION_NOTIFY_COMPLETED, api_done, (a), \
	MHD_OPTION_UNESCAPE_CALLBACK, api_unescape, NULL

/* One daemon: on addr:port, or on the listening socket fd when it is not -1. */
static struct MHD_Daemon *
api_daemon(struct api *a, const struct sockaddr_in *sin, int fd)
{
	/*
	 * A thread per connection: a change's handler blocks until its journal record is on
	 * disk (a group fsync) and behind the registry lock. In a pool, a connection waits for
	 * every request of the connections its thread serves: 20 keep-alive clients over 16
	 * threads left about 8 of them sharing a thread, and the clients' p99 was three times
	 * the handlers' own (29.5 against 9.8 ms, timed in both).
	 */
	const unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
				   MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL | MHD_USE_ERROR_LOG;

	if (fd >= 0)
		return MHD_start_daemon(flags, 0, NULL, NULL, api_handler, a,
					MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
					API_DAEMON_OPTIONS(a), MHD_OPTION_END);
	return MHD_start_daemon(flags, ntohs(sin->sin_port), NULL, NULL, api_handler, a,
				MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sin,
				API_DAEMON_OPTIONS(a), MHD_OPTION_END);
}

struct api *
api_start(const struct api_listen *l, const struct api_routes *t, char *err, size_t errlen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(l->port),
				   .sin_addr.s_addr = l->addr };
	struct api *a = calloc(1, sizeof(*a));
	int fd;

	if (!a)
		return NULL;
	a->routes = t;
	a->d = api_daemon(a, &sin, -1);
	if (!a->d) {
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &l->addr, ip, sizeof(ip));
		snprintf(err, errlen, "cannot listen on %s:%u for the API: %s", ip, l->port,
			 strerror(errno ? errno : EADDRINUSE));
		free(a);
		return NULL;
	}
	if (!l->sock || !l->sock[0])
		return a;
	snprintf(a->sock, sizeof(a->sock), "%s", l->sock);
	fd = api_sock_listen(a, l->sock_mode, err, errlen);
	if (fd < 0 && errno == ENOENT && l->sock_optional) {
		a->sock[0] = '\0';
		return a;	/* err says why: the caller warns */
	}
	a->du = fd < 0 ? NULL : api_daemon(a, NULL, fd);
	if (!a->du) {
		if (fd >= 0) {
			snprintf(err, errlen, "cannot serve the API on %s: %s", a->sock,
				 strerror(errno));
			close(fd);
			unlink(a->sock);
		}
		MHD_stop_daemon(a->d);
		free(a);
		return NULL;
	}
	return a;
}

void
api_stop(struct api *a)
{
	struct stat st;

	if (!a)
		return;
	MHD_stop_daemon(a->d);
	if (a->du) {
		MHD_stop_daemon(a->du);
		/* Only the file we made: a successor may have its own there already. */
		if (!lstat(a->sock, &st) && st.st_ino == a->sock_ino)
			unlink(a->sock);
	}
	free(a);
}
