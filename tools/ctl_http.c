/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client side of the control API: libcurl does HTTP/1.1 (chunked answers, keep-alive
 * across pages); this maps what went wrong to the tool's messages and exit codes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "ctl.h"
#include "cvs_version.h"

#define CTL_MAX_RESPONSE	(64u << 20)

/* The answer's body: a memory stream, so libcurl's pieces are appended without our own buffer. */
struct ctl_buf {
	FILE *f;
	char *p;		/* NUL-terminated once the stream is closed */
	size_t size;		/* set by the stream */
	size_t len;		/* what went in so far */
	bool too_large;
};

static size_t
on_data(char *data, size_t size, size_t n, void *ud)
{
	struct ctl_buf *b = ud;
	size_t add = size * n;

	if (add > CTL_MAX_RESPONSE - b->len) {
		b->too_large = true;
		return 0;
	}
	if (fwrite(data, 1, add, b->f) != add)
		return 0;
	b->len += add;
	return add;
}

static CURL *
ctl_handle(struct ctl *c)
{
	if (c->curl)
		return c->curl;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(c->curl = curl_easy_init()))
		ctl_err("cannot start libcurl");
	return c->curl;
}

void
ctl_close(struct ctl *c)
{
	if (!c->curl)
		return;
	curl_easy_cleanup(c->curl);
	curl_global_cleanup();
	c->curl = NULL;
}

/* "http://HOST:PORT" + PATH; an IPv6 host in brackets, its zone's '%' encoded. */
static char *
ctl_url(const struct ctl *c, const char *path)
{
	char host[3 * sizeof(c->host)], *url;
	size_t o = 0;
	const char *h;

	if (c->sock[0])
		return asprintf(&url, "http://localhost%s", path) < 0 ? NULL : url;
	for (h = c->host; *h; h++) {
		if (*h == '%') {
			memcpy(host + o, "%25", 3);
			o += 3;
		} else {
			host[o++] = *h;
		}
	}
	host[o] = '\0';
	if (asprintf(&url, strchr(host, ':') ? "http://[%s]:%s%s" : "http://%s:%s%s", host,
		     c->port, path) < 0)
		return NULL;
	return url;
}

/* What failed, said as the operator needs it: was anything listening, did it answer. */
static void
http_error(const struct ctl *c, CURL *h, CURLcode res, const char *why,
	   const struct ctl_buf *b)
{
	curl_off_t connected = 0;
	long oserr = 0;

	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr);
	curl_easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &connected);
	if (!*why)
		why = curl_easy_strerror(res);
	if (oserr)
		why = strerror((int)oserr);
	if (res == CURLE_OPERATION_TIMEDOUT)
		why = "timed out";
	/* A receive error with no socket error behind it is curl rejecting the answer. */
	if (res == CURLE_RECV_ERROR && !oserr)
		res = CURLE_WEIRD_SERVER_REPLY;
	switch (res) {
	case CURLE_COULDNT_RESOLVE_HOST:
		ctl_err("cannot resolve %s (see --api)", c->host);
		break;
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
		if (res == CURLE_COULDNT_CONNECT || !connected)
			ctl_err("cannot connect to %s: %s (is cubevs-fp running? see --api)",
				c->where, why);
		else
			ctl_err("no answer from %s: %s", c->where, why);
		break;
	case CURLE_WRITE_ERROR:
	case CURLE_FILESIZE_EXCEEDED:
		ctl_err(b->too_large || res == CURLE_FILESIZE_EXCEEDED ? "answer too large" :
			"out of memory");
		break;
	case CURLE_SEND_ERROR:
		ctl_err("cannot send the request to %s: %s", c->where, why);
		break;
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		ctl_err("no answer from %s: %s", c->where, why);
		break;
	default:
		ctl_err("malformed HTTP answer from %s: %s", c->where, why);
	}
}

/* The request headers; with a body, its type, and no wait for a "100 Continue". */
static struct curl_slist *
http_headers(bool body)
{
	static const char *const want[] = {
		"Accept: application/json", "Content-Type: application/json", "Expect:",
	};
	struct curl_slist *hdr = NULL, *l;
	size_t i;

	for (i = 0; i < (body ? 3 : 1); i++) {
		l = curl_slist_append(hdr, want[i]);
		if (!l) {
			curl_slist_free_all(hdr);
			return NULL;
		}
		hdr = l;
	}
	return hdr;
}

static void
http_setup(const struct ctl *c, CURL *h, const char *method, const char *url,
	   const char *body, struct curl_slist *hdr, struct ctl_buf *b, char *why)
{
	/* Our API, not the web: no proxy from the environment, no other scheme. */
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->sock[0] ? c->sock : NULL);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	/* A sandbox id of ".." stays a path segment instead of being folded away. */
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)c->timeout);
	curl_easy_setopt(h, CURLOPT_USERAGENT, CTL_PROG "/" CVS_VERSION);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, why);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CTL_MAX_RESPONSE);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	if (strcmp(method, "GET"))
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
}

int
ctl_http(struct ctl *c, const char *method, const char *path, const char *body,
	 struct ctl_resp *r)
{
	char why[CURL_ERROR_SIZE] = "";
	struct ctl_buf b = { 0 };
	struct curl_slist *hdr;
	CURL *h = ctl_handle(c);
	CURLcode res;
	char *url;

	memset(r, 0, sizeof(*r));
	if (!h)
		return -1;
	url = ctl_url(c, path);
	hdr = http_headers(body != NULL);
	b.f = open_memstream(&b.p, &b.size);
	if (!url || !hdr || !b.f) {
		ctl_err("out of memory");
		res = CURLE_OUT_OF_MEMORY;
		goto out;
	}
	curl_easy_reset(h);
	http_setup(c, h, method, url, body, hdr, &b, why);
	res = curl_easy_perform(h);
	/* WHY lives on this stack frame: the handle must not keep it. */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	if (res != CURLE_OK)
		http_error(c, h, res, why, &b);
out:
	curl_slist_free_all(hdr);
	free(url);
	if (b.f && fclose(b.f) && res == CURLE_OK) {
		ctl_err("out of memory");
		res = CURLE_OUT_OF_MEMORY;
	}
	if (res != CURLE_OK) {
		free(b.p);
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	r->body = b.p;
	r->len = b.size;
	return 0;
}

json_t *
ctl_call(struct ctl *c, const char *method, const char *path, const char *body, int *rc)
{
	struct ctl_resp r;
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

		ctl_err("%s (HTTP %ld)", msg ? msg : r.len ? r.body : "no message", r.status);
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

char *
ctl_path(struct ctl *c, const char *fmt, ...)
{
	CURL *h = ctl_handle(c);
	char *out = NULL;
	size_t len = 0;
	bool ok = true;
	const char *p;
	va_list ap;
	FILE *f;

	if (!h)
		return NULL;
	f = open_memstream(&out, &len);
	if (!f) {
		ctl_err("out of memory");
		return NULL;
	}
	va_start(ap, fmt);
	for (p = fmt; *p && ok; p++) {
		char *esc;

		if (p[0] != '%' || p[1] != 's') {
			fputc(*p, f);
			continue;
		}
		p++;
		esc = curl_easy_escape(h, va_arg(ap, const char *), 0);
		ok = esc && fputs(esc, f) >= 0;
		curl_free(esc);
	}
	va_end(ap);
	if (fclose(f) || !ok) {
		ctl_err("out of memory");
		free(out);
		return NULL;
	}
	return out;
}

void
ctl_print_json(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY |
			     JSON_REAL_PRECISION(9));

	if (s) {
		puts(s);
		free(s);
	}
}
