/* SPDX-License-Identifier: BSD-3-Clause */
/* HTTP to cubevs-fp's API over its unix socket, with libcurl. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "cni.h"

#define CNI_MAX_ANSWER	(4u << 20)

struct cni_buf {
	char *p;
	size_t len;
};

static size_t
cni_on_data(char *data, size_t size, size_t n, void *ud)
{
	struct cni_buf *b = ud;
	size_t add = size * n;
	char *p;

	if (add > CNI_MAX_ANSWER - b->len || !(p = realloc(b->p, b->len + add + 1)))
		return 0;
	memcpy(p + b->len, data, add);
	b->p = p;
	b->len += add;
	b->p[b->len] = '\0';
	return add;
}

int
cni_fail(struct cni_err *e, int code, const char *details, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	snprintf(e->details, sizeof(e->details), "%s", details ? details : "");
	return -1;
}

/* libcurl's answer to one request, into r; -1 with e when nothing usable came. */
static int
cni_perform(const struct cni_conf *c, CURL *h, struct cni_buf *b, struct cni_reply *r,
	    struct cni_err *e)
{
	CURLcode res = curl_easy_perform(h);
	json_error_t jerr;

	if (res != CURLE_OK)
		return cni_fail(e, CNI_E_AGAIN, curl_easy_strerror(res), "cubevs-fp does not "
				"answer on %s (is it running? see apiSocket)", c->sock);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	if (b->len) {
		r->body = json_loadb(b->p, b->len, 0, &jerr);
		if (!r->body)
			return cni_fail(e, CNI_E_DECODE, jerr.text, "cubevs-fp answered %ld with "
					"something other than JSON", r->status);
	}
	return 0;
}

int
cni_api(const struct cni_conf *c, const char *method, const char *path, json_t *body,
	struct cni_reply *r, struct cni_err *e)
{
	struct curl_slist *hdr = NULL;
	struct cni_buf b = { NULL, 0 };
	char url[512], *text = NULL;
	CURL *h;
	int ret;

	memset(r, 0, sizeof(*r));
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(h = curl_easy_init()))
		return cni_fail(e, CNI_E_IO, NULL, "cannot start libcurl");
	snprintf(url, sizeof(url), "http://localhost%s", path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->sock);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, c->timeout_s);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cni_on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, text ? text : "");
	}
	ret = cni_perform(c, h, &b, r, e);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	curl_global_cleanup();
	free(text);
	free(b.p);
	return ret;
}

const char *
cni_api_error(const struct cni_reply *r)
{
	const json_t *v = json_object_get(r->body, "error");

	return json_is_string(v) ? json_string_value(v) : "";
}
