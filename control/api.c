/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <microhttpd.h>

#include "api.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

struct api {
	struct MHD_Daemon *d;
	struct registry *reg;
	api_extra_fn extra;
	void *extra_ctx;
	api_obs_fn obs;
	void *obs_ctx;
	pthread_mutex_t persist_lock;
};

struct api_req {
	char *body;
	size_t len;
	bool too_big;
};

/* Split "/sandboxes/ID/exposed-ports/PORT" into at most 5 segments; returns the count. */
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

static int
api_method_not_allowed(const char *allow, const char **allow_out, json_t **out)
{
	*allow_out = allow;
	*out = reg_error("method not allowed; allowed: %s", allow);
	return 405;
}

int
api_route(struct registry *reg, api_extra_fn extra, void *extra_ctx, const char *method,
	  const char *path, const char *body, size_t len, json_t **out, const char **allow)
{
	char buf[1024], *seg[5];
	bool get = !strcmp(method, "GET"), put = !strcmp(method, "PUT");
	bool del = !strcmp(method, "DELETE");
	int n = api_split(path, buf, sizeof(buf), seg, 5);

	*out = NULL;
	*allow = NULL;
	if (n >= 1 && !strcmp(seg[0], "sandboxes")) {
		if (n == 1) {
			if (!get)
				return api_method_not_allowed("GET", allow, out);
			return reg_list(reg, out);
		}
		if (n == 2) {
			if (put)
				return reg_put(reg, seg[1], body ? body : "", len, out);
			if (get)
				return reg_get(reg, seg[1], out);
			if (del)
				return reg_delete(reg, seg[1], out);
			return api_method_not_allowed("GET, PUT, DELETE", allow, out);
		}
		if (n == 3 && !strcmp(seg[2], "policy")) {
			if (get)
				return reg_policy_get(reg, seg[1], out);
			if (put)
				return reg_policy_put(reg, seg[1], body, len, out);
			return api_method_not_allowed("GET, PUT", allow, out);
		}
		if (n == 4 && !strcmp(seg[2], "exposed-ports")) {
			if (!get)
				return api_method_not_allowed("GET", allow, out);
			return reg_exposed(reg, seg[1], seg[3], out);
		}
	}
	if (extra && n >= 1) {
		int status = 200;
		json_t *j = extra(extra_ctx, method, path, body, len, &status, allow);

		if (j) {
			*out = j;
			return status;
		}
	}
	*out = reg_error("no route for %s", path);
	return 404;
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
	if (rep->allow)
		MHD_add_response_header(resp, "Allow", rep->allow);
	ret = MHD_queue_response(c, (unsigned int)rep->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*
 * Make a successful change durable before answering. One writer at a time, and each write
 * takes a fresh snapshot, so a later write never carries an older registry than an earlier one.
 */
static int
api_persist(struct api *a, int status, const char *method, json_t **out)
{
	char err[512];
	int ret;

	if (status < 200 || status > 299 || !strcmp(method, "GET") || !strcmp(method, "HEAD") ||
	    !a->reg->ops || !a->reg->ops->persist)
		return status;
	pthread_mutex_lock(&a->persist_lock);
	ret = a->reg->ops->persist(a->reg->ctx, err, sizeof(err));
	pthread_mutex_unlock(&a->persist_lock);
	if (!ret)
		return status;
	json_decref(*out);
	*out = reg_error("the change is in effect but could not be saved: %s", err);
	return 500;
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
	const char *allow;
	json_t *out;
	int status;

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
			return api_send(c, 413, reg_error("request body larger than %u bytes",
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
		return api_send(c, 413, reg_error("request body larger than %u bytes",
						  CVS_API_MAX_BODY), NULL);
	if (a->obs) {
		struct api_reply rep = { .status = 200 };
		struct api_query q = { .n = 0 };

		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, api_query_add, &q);
		if (a->obs(a->obs_ctx, method, url, &q, &rep)) {
			if (rep.text)
				return api_send_text(c, &rep);
			return api_send(c, rep.status, rep.json, rep.allow);
		}
	}
	status = api_route(a->reg, a->extra, a->extra_ctx, method, url, rq->body, rq->len, &out,
			   &allow);
	status = api_persist(a, status, method, &out);
	return api_send(c, status, out, allow);
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

struct api *
api_start(uint32_t addr, uint16_t port, struct registry *reg, api_extra_fn extra,
	  void *extra_ctx, api_obs_fn obs, void *obs_ctx, char *err, size_t errlen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = addr };
	struct api *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->reg = reg;
	a->extra = extra;
	a->extra_ctx = extra_ctx;
	a->obs = obs;
	a->obs_ctx = obs_ctx;
	pthread_mutex_init(&a->persist_lock, NULL);
	a->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY |
				MHD_USE_ERROR_LOG, port, NULL, NULL, api_handler, a,
				MHD_OPTION_SOCK_ADDR, &sin,
				MHD_OPTION_THREAD_POOL_SIZE, 4u,
				MHD_OPTION_CONNECTION_LIMIT, 2048u,
				MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				MHD_OPTION_NOTIFY_COMPLETED, api_done, a,
				MHD_OPTION_UNESCAPE_CALLBACK, api_unescape, NULL,
				MHD_OPTION_END);
	if (!a->d) {
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &addr, ip, sizeof(ip));
		snprintf(err, errlen, "cannot listen on %s:%u for the API: %s", ip, port,
			 strerror(errno ? errno : EADDRINUSE));
		free(a);
		return NULL;
	}
	return a;
}

void
api_stop(struct api *a)
{
	if (!a)
		return;
	MHD_stop_daemon(a->d);
	pthread_mutex_destroy(&a->persist_lock);
	free(a);
}
