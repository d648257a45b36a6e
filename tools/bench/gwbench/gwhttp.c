/* SPDX-License-Identifier: BSD-3-Clause */
/* A small HTTP/1.1 client for gwload: blocking sockets with a receive/send timeout, keep-alive,
 * Content-Length or chunked bodies, and the JSON-RPC answer found in a JSON body or in the
 * `data:` lines of an SSE body (the peers answer a POST either way). Written for the benchmark
 * and not for the world: it speaks only to 127.0.0.0/8. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gwhttp.h"

int gw_parse_url(const char *s, struct gw_url *u)
{
	const char *p, *slash;
	struct in_addr a;

	if (strncmp(s, "http://", 7))
		return -1;
	p = s + 7;
	slash = strchr(p, '/');
	const char *colon = strchr(p, ':');
	if (!colon || (slash && colon > slash) || (size_t)(colon - p) >= sizeof(u->host))
		return -1;
	memcpy(u->host, p, (size_t)(colon - p));
	u->host[colon - p] = 0;
	if (!strcmp(u->host, "localhost"))
		strcpy(u->host, "127.0.0.1");
	/* Loopback only: this tool sends load, and load goes to this machine alone. */
	if (inet_pton(AF_INET, u->host, &a) != 1 || (ntohl(a.s_addr) >> 24) != 127)
		return -1;
	u->port = atoi(colon + 1);
	snprintf(u->path, sizeof(u->path), "%s", slash ? slash : "/");
	return u->port > 0 && u->port < 65536 ? 0 : -1;
}

int gw_connect(struct gw_conn *c, const struct gw_url *u, int timeout_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)u->port) };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int one = 1;

	memset(c, 0, sizeof(*c));
	c->want = -1;
	inet_pton(AF_INET, u->host, &sa.sin_addr);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -1;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* Requests are small and answered one at a time: Nagle would add its delay to each. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

void gw_close(struct gw_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->rbuf);
	free(c->body);
	json_decref(c->answer);
	c->rbuf = c->body = NULL;
	c->answer = NULL;
	c->rcap = c->bcap = 0;
}

static int grow(char **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	char *b;

	while (n < need)
		n *= 2;
	if (n == *cap)
		return 0;
	b = realloc(*buf, n);
	if (!b)
		return -1;
	*buf = b;
	*cap = n;
	return 0;
}

/* More bytes into rbuf; -1 on EOF, error or the socket's timeout. */
static int fill(struct gw_conn *c)
{
	ssize_t n;

	if (c->rpos && c->rpos == c->rlen)
		c->rpos = c->rlen = 0;
	if (grow(&c->rbuf, &c->rcap, c->rlen + 16384) < 0)
		return -1;
	do
		n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	c->rlen += (size_t)n;
	return 0;
}

/* One line without its CRLF, NUL-terminated in place; NULL on a transport error. */
static char *read_line(struct gw_conn *c)
{
	for (;;) {
		char *s = c->rbuf + c->rpos;
		char *nl = c->rlen > c->rpos ? memchr(s, '\n', c->rlen - c->rpos) : NULL;

		if (nl) {
			*nl = 0;
			if (nl > s && nl[-1] == '\r')
				nl[-1] = 0;
			c->rpos = (size_t)(nl + 1 - c->rbuf);
			return s;
		}
		/* Keep the partial line at the start, so fill() has room after it (before the
		 * first read there is no buffer: nothing to move). */
		if (c->rlen > c->rpos)
			memmove(c->rbuf, s, c->rlen - c->rpos);
		c->rlen -= c->rpos;
		c->rpos = 0;
		if (fill(c) < 0)
			return NULL;
	}
}

/* The message with id c->want among a JSON-RPC message or batch; NULL if absent. */
static json_t *pick(json_t *msg, json_int_t want)
{
	if (json_is_array(msg)) {
		size_t i;
		json_t *m;

		json_array_foreach(msg, i, m)
			if (json_integer_value(json_object_get(m, "id")) == want)
				return json_incref(m);
		return NULL;
	}
	if (json_is_integer(json_object_get(msg, "id")) &&
	    json_integer_value(json_object_get(msg, "id")) == want &&
	    (json_object_get(msg, "result") || json_object_get(msg, "error")))
		return json_incref(msg);
	return NULL;
}

static void found(struct gw_conn *c, json_t *m)
{
	c->answer = m;
	clock_gettime(CLOCK_MONOTONIC, &c->t_answer);
}

/* SSE: every complete event after c->scan; its data lines joined are one JSON-RPC message. */
static void scan_sse(struct gw_conn *c)
{
	char data[65536];

	while (!c->answer) {
		char *ev = c->body + c->scan, *end = c->body + c->blen, *e, *line;
		size_t dl = 0;

		e = memmem(ev, (size_t)(end - ev), "\n\n", 2);
		if (!e)
			return;
		c->scan = (size_t)(e + 2 - c->body);
		for (line = ev; line < e; ) {
			char *nl = memchr(line, '\n', (size_t)(e - line));
			size_t ll = (size_t)((nl ? nl : e) - line);

			if (ll && line[ll - 1] == '\r')
				ll--;
			if (ll >= 5 && !memcmp(line, "data:", 5)) {
				size_t off = ll > 5 && line[5] == ' ' ? 6 : 5;

				if (dl + ll - off + 1 < sizeof(data)) {
					memcpy(data + dl, line + off, ll - off);
					dl += ll - off;
					data[dl++] = '\n';
				}
			}
			line = nl ? nl + 1 : e;
		}
		if (dl) {
			json_t *m = json_loadb(data, dl, 0, NULL);
			json_t *a = m ? pick(m, c->want) : NULL;

			json_decref(m);
			if (a)
				found(c, a);
		}
	}
}

/* n body bytes from the connection into c->body, looking at SSE events as they come. */
static int read_body(struct gw_conn *c, size_t n)
{
	while (n) {
		size_t have = c->rlen - c->rpos, take;

		if (!have) {
			if (fill(c) < 0)
				return -1;
			continue;
		}
		take = have < n ? have : n;
		if (grow(&c->body, &c->bcap, c->blen + take + 1) < 0)
			return -1;
		memcpy(c->body + c->blen, c->rbuf + c->rpos, take);
		c->blen += take;
		c->body[c->blen] = 0;
		c->rpos += take;
		n -= take;
		if (c->sse && c->want >= 0)
			scan_sse(c);
	}
	return 0;
}

static int read_chunked(struct gw_conn *c)
{
	for (;;) {
		char *l = read_line(c), *end;
		unsigned long n;

		if (!l)
			return -1;
		n = strtoul(l, &end, 16);
		if (end == l)
			return -1;
		if (!n)
			break;
		if (read_body(c, n) < 0 || !(l = read_line(c)) || *l)
			return -1;
	}
	for (;;) {		/* trailers, up to the empty line */
		char *l = read_line(c);

		if (!l)
			return -1;
		if (!*l)
			return 0;
	}
}

static void header(struct gw_conn *c, char *l)
{
	char *v = strchr(l, ':');

	if (!v)
		return;
	*v++ = 0;
	while (*v == ' ' || *v == '\t')
		v++;
	if (!strcasecmp(l, "content-length"))
		c->clen = atol(v);
	else if (!strcasecmp(l, "transfer-encoding") && strcasestr(v, "chunked"))
		c->chunked = 1;
	else if (!strcasecmp(l, "content-type"))
		c->sse = !strncasecmp(v, "text/event-stream", 17);
	else if (!strcasecmp(l, "connection") && strcasestr(v, "close"))
		c->keep = 0;
	else if (!strcasecmp(l, "mcp-session-id"))
		snprintf(c->sid, sizeof(c->sid), "%s", v);
}

/* The status line and headers of an answer. */
static int read_head(struct gw_conn *c)
{
	char *l = read_line(c);

	c->status = -1;
	c->sse = c->chunked = 0;
	c->keep = 1;
	c->clen = -1;
	c->sid[0] = 0;
	c->blen = c->scan = 0;
	if (!l || strncmp(l, "HTTP/1.", 7) || strlen(l) < 12)
		return -1;
	c->status = atoi(l + 9);
	while ((l = read_line(c)) && *l)
		header(c, l);
	return l ? 0 : -1;
}

/*
 * Headers and body in one write, as Node's fetch (undici, under the MCP TypeScript SDK's
 * client) sends a small request (one writev): one segment, one wake-up of the gateway.
 * --split writes them apart, as a client that sends each as it makes it does.
 */
int gw_split_writes;

static int send_all(struct gw_conn *c, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_request(struct gw_conn *c, const struct gw_url *u, const struct gw_req *r,
	const char *body)
{
	char head[4096];
	size_t blen = body ? strlen(body) : 0;
	int n;

	n = snprintf(head, sizeof(head),
		"%s %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: %s\r\n%s%s%s%s%s%s%s%s%s"
		"Content-Length: %zu\r\n\r\n",
		r->method, u->path, u->host, u->port,
		r->accept ? r->accept : "application/json, text/event-stream",
		body ? "Content-Type: application/json\r\n" : "",
		r->token ? "Authorization: Bearer " : "", r->token ? r->token : "",
		r->token ? "\r\n" : "",
		r->sid && *r->sid ? "Mcp-Session-Id: " : "", r->sid && *r->sid ? r->sid : "",
		r->sid && *r->sid ? "\r\n" : "",
		r->proto ? "MCP-Protocol-Version: 2025-06-18\r\n" : "", "", blen);
	if (n < 0 || (size_t)n >= sizeof(head))
		return -1;
	if (body && !gw_split_writes && blen <= sizeof(head) - (size_t)n) {
		memcpy(head + n, body, blen);
		return send_all(c, head, (size_t)n + blen);
	}
	if (send_all(c, head, (size_t)n) < 0)
		return -1;
	return body ? send_all(c, body, blen) : 0;
}

int gw_request(struct gw_conn *c, const struct gw_url *u, const struct gw_req *r,
	const char *body, json_int_t want)
{
	json_decref(c->answer);
	c->answer = NULL;
	c->want = want;
	if (send_request(c, u, r, body) < 0 || read_head(c) < 0)
		return -1;
	if (c->chunked) {
		if (read_chunked(c) < 0)
			return -1;
	} else if (c->clen > 0) {
		if (read_body(c, (size_t)c->clen) < 0)
			return -1;
	} else if (c->clen < 0 && c->status != 202 && c->status != 204 && c->status != 304) {
		return -1;	/* a body up to EOF: not something the peers send */
	}
	if (!c->sse && want >= 0 && !c->answer && c->blen) {
		json_t *m = json_loadb(c->body, c->blen, 0, NULL);
		json_t *a = m ? pick(m, want) : NULL;

		json_decref(m);
		if (a)
			found(c, a);
	}
	return c->status;
}

int gw_open_stream(struct gw_conn *c, const struct gw_url *u, const struct gw_req *r)
{
	c->want = -1;
	if (send_request(c, u, r, NULL) < 0 || read_head(c) < 0)
		return -1;
	return c->status;
}
