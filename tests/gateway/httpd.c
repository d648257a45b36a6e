/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gateway's HTTP/1.1 server (gateway/wire/httpd.c) on its event loop, served on a
 * loopback port and spoken to over real sockets, byte for byte: keep-alive, pipelining, a
 * request sent one byte per write, bodies of known length and chunked, 100-continue, answers
 * after a resume from another thread, streamed answers, a stream that breaks, HEAD, HTTP/1.0,
 * refusals of what it cannot read (each a status and a closed connection), the connection
 * limit, the idle timeout, quiescing; and every request the handler saw completed once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/loop.h"
#include "base/str.h"
#include "check.h"
#include "wire/httpd.h"

#define STREAM_EVENTS	5

static struct loop *lp;
static struct hd *srv;
static uint16_t port;
static int started, completed;	/* requests, the loop thread's */

struct req {
	struct strbuf body;
	int events;		/* /stream: handed out so far */
	int ready;		/* atomic: the resumer has one more for the reader */
	bool asked;		/* /later: asleep once already */
	struct hd_conn *c;
};

/* ---- the server side ---------------------------------------------------------------------- */

struct resumer {
	struct hd_conn *c;
	int *flag;
};

static void *
resume_later(void *arg)
{
	struct resumer *r = arg;

	usleep(20 * 1000);
	if (r->flag)
		__atomic_store_n(r->flag, 1, __ATOMIC_RELEASE);
	hd_resume(r->c);
	loop_wake(lp);
	free(r);
	return NULL;
}

/* Another thread resumes c in 20 ms, as a server's answer would. */
static void
resume_from_elsewhere(struct hd_conn *c, int *flag)
{
	struct resumer *r = malloc(sizeof(*r));
	pthread_t t;

	r->c = c;
	r->flag = flag;
	hd_suspend(c);
	pthread_create(&t, NULL, resume_later, r);
	pthread_detach(t);
}

static ssize_t
stream_reader(void *cls, char *buf, size_t max)
{
	struct req *rq = cls;

	if (hd_header(rq->c, "X-Break") && rq->events == 2)
		return HD_READ_ERROR;
	if (__atomic_exchange_n(&rq->ready, 0, __ATOMIC_ACQ_REL)) {
		int n = snprintf(buf, max, "event %d\n", rq->events++);

		return n;
	}
	if (rq->events == STREAM_EVENTS)
		return HD_READ_END;
	resume_from_elsewhere(rq->c, &rq->ready);
	return 0;
}

static void
stream_done(void *cls)
{
	(void)cls;
}

static enum hd_result
text(struct hd_conn *c, unsigned int status, const char *s)
{
	struct hd_resp *r = hd_resp_buffer(strlen(s), strdup(s), true);

	hd_resp_header(r, "Content-Type", "text/plain");
	return hd_queue(c, status, r);
}

static enum hd_result
access_cb(void *cls, struct hd_conn *c, const char *url, const char *method,
	  const char *upload, size_t *upload_size, void **con_cls)
{
	struct req *rq = *con_cls;

	(void)cls;
	(void)method;
	if (rq == NULL) {
		rq = calloc(1, sizeof(*rq));
		rq->c = c;
		*con_cls = rq;
		started++;
		if (strcmp(url, "/refuse") == 0)
			return text(c, 403, "refused early\n");
		return HD_YES;
	}
	if (*upload_size) {
		sb_append(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return HD_YES;
	}
	if (strcmp(url, "/echo") == 0) {
		struct hd_resp *r = hd_resp_buffer(rq->body.len, rq->body.buf ? rq->body.buf : "",
						   false);

		return hd_queue(c, 200, r);
	}
	if (strcmp(url, "/hdr") == 0) {
		const char *v = hd_header(c, "x-test");

		return text(c, 200, v ? v : "(none)");
	}
	if (strcmp(url, "/later") == 0) {
		if (!rq->asked) {
			rq->asked = true;
			resume_from_elsewhere(c, NULL);
			return HD_YES;
		}
		return text(c, 200, "later\n");
	}
	if (strcmp(url, "/stream") == 0) {
		struct hd_resp *r = hd_resp_reader(64, stream_reader, rq, stream_done);

		rq->ready = 1;
		hd_resp_header(r, "Content-Type", "text/event-stream");
		return hd_queue(c, 200, r);
	}
	if (strcmp(url, "/close") == 0)
		return HD_NO;
	return text(c, 404, "not found\n");
}

static void
completed_cb(void *cls, struct hd_conn *c, void **con_cls)
{
	struct req *rq = *con_cls;

	(void)cls;
	(void)c;
	if (rq == NULL)
		return;
	completed++;
	sb_free(&rq->body);
	free(rq);
	*con_cls = NULL;
}

static int
turn(void *ctx)
{
	(void)ctx;
	return srv ? hd_turn(srv) : -1;
}

static void
server_start(unsigned int limit, unsigned int timeout_s, unsigned int head_timeout_s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct hd_conf conf = { .access = access_cb, .completed = completed_cb,
				.conn_limit = limit, .timeout_s = timeout_s,
				.head_timeout_s = head_timeout_s };

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		perror("listen");
		exit(1);
	}
	port = ntohs(a.sin_port);
	conf.listen_fd = fd;
	lp = loop_new(turn, NULL);
	srv = hd_new(&conf);
	if (lp == NULL || srv == NULL || hd_attach(srv, lp) || loop_start(lp)) {
		fprintf(stderr, "server start failed\n");
		exit(1);
	}
}

static void
server_stop(void)
{
	loop_free(lp);
	hd_free(srv);
	srv = NULL;
	lp = NULL;
}

/* ---- the client side ---------------------------------------------------------------------- */

static int
dial(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
put(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
}

static void
puts_(int fd, const char *s)
{
	put(fd, s, strlen(s));
}

/* What the client has read and not used yet, per test (one connection at a time). */
static char rbuf[1 << 20];
static size_t rlen;

static bool
fill(int fd)
{
	ssize_t n;

	if (rlen == sizeof(rbuf))
		return false;
	n = recv(fd, rbuf + rlen, sizeof(rbuf) - rlen, 0);
	if (n <= 0)
		return false;
	rlen += (size_t)n;
	return true;
}

static void
consume(size_t n)
{
	memmove(rbuf, rbuf + n, rlen - n);
	rlen -= n;
}

/* A line without its CRLF into line (NUL-terminated); false at the end of input. */
static bool
get_line(int fd, char *line, size_t max)
{
	char *nl;

	while ((nl = memchr(rbuf, '\n', rlen)) == NULL)
		if (!fill(fd))
			return false;
	size_t n = (size_t)(nl - rbuf);

	snprintf(line, max, "%.*s", (int)(n && rbuf[n - 1] == '\r' ? n - 1 : n), rbuf);
	consume(n + 1);
	return true;
}

static bool
get_bytes(int fd, struct strbuf *body, size_t n)
{
	while (rlen < n)
		if (!fill(fd))
			return false;
	sb_append(body, rbuf, n);
	consume(n);
	return true;
}

struct answer {
	int status;		/* -1: the connection ended first */
	bool closes;		/* Connection: close */
	bool complete;		/* the whole body came */
	char headers[2048];
	struct strbuf body;
};

/* One answer; a HEAD's has no body whatever its length says. */
static void
read_answer(int fd, struct answer *a, bool head)
{
	char line[4096];
	long len = -1;
	bool chunked = false;

	memset(a, 0, sizeof(*a));
	a->status = -1;
	if (!get_line(fd, line, sizeof(line)) || sscanf(line, "HTTP/1.1 %d", &a->status) != 1)
		return;
	while (get_line(fd, line, sizeof(line)) && *line) {
		size_t hl = strlen(a->headers);

		snprintf(a->headers + hl, sizeof(a->headers) - hl, "%s\n", line);
		if (!strncasecmp(line, "Content-Length: ", 16))
			len = atol(line + 16);
		if (!strcasecmp(line, "Transfer-Encoding: chunked"))
			chunked = true;
		if (!strcasecmp(line, "Connection: close"))
			a->closes = true;
	}
	if (head || a->status == 100 || a->status == 204) {
		a->complete = true;
	} else if (chunked) {
		for (;;) {
			long n;

			if (!get_line(fd, line, sizeof(line)))
				return;
			n = strtol(line, NULL, 16);
			if (n == 0)
				break;
			if (!get_bytes(fd, &a->body, (size_t)n) || !get_line(fd, line, sizeof(line)))
				return;
		}
		a->complete = get_line(fd, line, sizeof(line)) && *line == '\0';
	} else if (len >= 0) {
		a->complete = get_bytes(fd, &a->body, (size_t)len);
	} else {
		while (fill(fd))
			;
		sb_append(&a->body, rbuf, rlen);
		consume(rlen);
		a->complete = true;
	}
}

static bool
closed_by_server(int fd)
{
	char ch;

	return rlen == 0 && recv(fd, &ch, 1, 0) == 0;
}

static const char *
body_of(struct answer *a)
{
	return a->body.buf ? a->body.buf : "";
}

/* ---- the cases ---------------------------------------------------------------------------- */

#define GET(path, extra) "GET " path " HTTP/1.1\r\nHost: t\r\n" extra "\r\n"

static void
case_keepalive_and_pipelining(void)
{
	int fd = dial();
	struct answer a;

	for (int i = 0; i < 3; i++) {
		puts_(fd, GET("/hdr", "X-Test: one\r\n"));
		read_answer(fd, &a, false);
		CHECK(a.status == 200 && !strcmp(body_of(&a), "one") && !a.closes,
		      "keep-alive request %d: %d '%s'", i, a.status, body_of(&a));
		sb_free(&a.body);
	}
	/* Three requests in one write, a stray CRLF between two: three answers in order. */
	puts_(fd, GET("/hdr", "X-Test: a\r\n") "\r\n" GET("/hdr", "x-test:b  \r\n")
	      GET("/later", ""));
	for (int i = 0; i < 3; i++) {
		static const char *want[] = {"a", "b", "later\n"};

		read_answer(fd, &a, false);
		CHECK(a.status == 200 && !strcmp(body_of(&a), want[i]), "pipelined %d: %d '%s'",
		      i, a.status, body_of(&a));
		sb_free(&a.body);
	}
	close(fd);
	rlen = 0;
}

static void
case_byte_by_byte(void)
{
	static const char req[] = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello";
	int fd = dial();
	struct answer a;

	for (size_t i = 0; i < sizeof(req) - 1; i++) {
		put(fd, req + i, 1);
		if (i % 16 == 0)
			usleep(1000);
	}
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && !strcmp(body_of(&a), "hello"), "byte by byte: %d '%s'",
	      a.status, body_of(&a));
	sb_free(&a.body);
	close(fd);
	rlen = 0;
}

static void
random_body(struct strbuf *sb, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char ch = (char)('a' + rnd(26));

		sb_append(sb, &ch, 1);
	}
}

static void
case_bodies(void)
{
	struct strbuf body = {0}, req = {0};
	struct answer a;
	int fd = dial();
	size_t off;

	random_body(&body, 300 * 1000);
	sb_appendf(&req, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %zu\r\n\r\n", body.len);
	put(fd, req.buf, req.len);
	put(fd, body.buf, body.len);
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && a.body.len == body.len && !memcmp(a.body.buf, body.buf, body.len),
	      "300 kB body: %d, %zu bytes back", a.status, a.body.len);
	sb_free(&a.body);
	/* Chunked, in chunks of random sizes with an extension, and a trailer. */
	req.len = 0;
	sb_appends(&req, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
	for (off = 0; off < body.len;) {
		size_t n = 1 + rnd(20000);

		if (n > body.len - off)
			n = body.len - off;
		sb_appendf(&req, "%zX%s\r\n", n, rnd(4) ? "" : ";ext=1");
		sb_append(&req, body.buf + off, n);
		sb_appends(&req, "\r\n");
		off += n;
	}
	sb_appends(&req, "0\r\nX-Trailer: t\r\n\r\n");
	/* Sent in random pieces, so every state of the decoder meets a boundary. */
	for (off = 0; off < req.len;) {
		size_t n = 1 + rnd(3000);

		if (n > req.len - off)
			n = req.len - off;
		put(fd, req.buf + off, n);
		off += n;
	}
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && a.body.len == body.len && !memcmp(a.body.buf, body.buf, body.len),
	      "chunked body: %d, %zu bytes back", a.status, a.body.len);
	sb_free(&a.body);
	/* 100-continue: the interim answer first, then the body is sent. */
	puts_(fd, "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
	      "Content-Length: 3\r\n\r\n");
	read_answer(fd, &a, false);
	CHECK(a.status == 100, "100-continue: %d", a.status);
	puts_(fd, "abc");
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && !strcmp(body_of(&a), "abc"), "after 100: %d", a.status);
	sb_free(&a.body);
	/* An early answer to a request with a body: sent, and the connection closes. */
	puts_(fd, "POST /refuse HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\nxx");
	read_answer(fd, &a, false);
	CHECK(a.status == 403 && a.closes && closed_by_server(fd), "early answer: %d", a.status);
	sb_free(&a.body);
	close(fd);
	rlen = 0;
	/*
	 * The same with 600 kB of body sent behind the head, all of it before the answer is
	 * read: what comes after the answer is read and dropped, not reset, so the answer is
	 * not lost.
	 */
	fd = dial();
	req.len = 0;
	sb_appendf(&req, "POST /refuse HTTP/1.1\r\nHost: t\r\nContent-Length: 600000\r\n\r\n");
	sb_append(&req, body.buf, 600000 - 300000);
	sb_append(&req, body.buf, 300000);
	put(fd, req.buf, req.len);
	usleep(100 * 1000);
	read_answer(fd, &a, false);
	CHECK(a.status == 403 && a.closes && closed_by_server(fd), "early answer, big body: %d",
	      a.status);
	sb_free(&a.body);
	close(fd);
	rlen = 0;
	sb_free(&body);
	sb_free(&req);
}

static void
case_streams(void)
{
	int fd = dial();
	struct answer a;

	puts_(fd, GET("/stream", ""));
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && a.complete && strstr(a.headers, "chunked") &&
	      !strcmp(body_of(&a), "event 0\nevent 1\nevent 2\nevent 3\nevent 4\n"),
	      "stream: %d complete=%d '%s'", a.status, a.complete, body_of(&a));
	sb_free(&a.body);
	/* The connection goes on after a stream. */
	puts_(fd, GET("/hdr", "X-Test: after\r\n"));
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && !strcmp(body_of(&a), "after"), "after a stream: %d", a.status);
	sb_free(&a.body);
	/* A stream that breaks: no last chunk, the connection ends. */
	puts_(fd, GET("/stream", "X-Break: 1\r\n"));
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && !a.complete && !strcmp(body_of(&a), "event 0\nevent 1\n"),
	      "broken stream: %d complete=%d '%s'", a.status, a.complete, body_of(&a));
	sb_free(&a.body);
	close(fd);
	rlen = 0;
	/* HTTP/1.0: no chunks, the end of the stream is the end of the connection. */
	fd = dial();
	puts_(fd, "GET /stream HTTP/1.0\r\n\r\n");
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && a.closes && !strstr(a.headers, "chunked") &&
	      !strcmp(body_of(&a), "event 0\nevent 1\nevent 2\nevent 3\nevent 4\n"),
	      "HTTP/1.0 stream: %d '%s'", a.status, body_of(&a));
	sb_free(&a.body);
	close(fd);
	rlen = 0;
	/* HEAD: the headers alone, and the connection goes on. */
	fd = dial();
	puts_(fd, "HEAD /hdr HTTP/1.1\r\nHost: t\r\nX-Test: hh\r\n\r\n" GET("/hdr", "X-Test: x\r\n"));
	read_answer(fd, &a, true);
	CHECK(a.status == 200 && strstr(a.headers, "Content-Length: 2\n") && a.body.len == 0,
	      "HEAD: %d", a.status);
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && !strcmp(body_of(&a), "x"), "after HEAD: %d '%s'", a.status,
	      body_of(&a));
	sb_free(&a.body);
	close(fd);
	rlen = 0;
}

/* What it cannot read: the status named, and the connection closed after it. */
static void
case_refusals(void)
{
	static const struct {
		const char *req;
		int status;
	} cases[] = {
		{"GARBAGE\r\n\r\n", 400},
		{"GET /hdr HTTP/1.1\r\nHost: t\r\nNo colon here\r\n\r\n", 400},
		{"GET /hdr HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n folded\r\n\r\n", 400},
		{"GET /hdr HTTP/1.1\r\nHost: t\r\nBad Name: 1\r\n\r\n", 400},
		{"GET /hdr HTTP/1.1\r\n\r\n", 400},
		{"GET /hdr HTTP/2.0\r\nHost: t\r\n\r\n", 505},
		{"GET  /hdr HTTP/1.1\r\nHost: t\r\n\r\n", 400},
		{"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\n", 400},
		{"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
		 400},
		{"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n", 400},
		{"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"GET /hdr HTTP/1.1\r\nHost: t\r\nX-Bad: a\001b\r\n\r\n", 400},
	};
	struct answer a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = dial();

		puts_(fd, cases[i].req);
		read_answer(fd, &a, false);
		CHECK(a.status == cases[i].status && a.closes && closed_by_server(fd),
		      "refusal %zu: %d, want %d", i, a.status, cases[i].status);
		sb_free(&a.body);
		close(fd);
		rlen = 0;
	}
	/* Headers of 6 KiB are read, of 9 KiB refused. */
	for (int kib = 6; kib <= 9; kib += 3) {
		struct strbuf req = {0};
		int fd = dial();

		sb_appends(&req, "GET /hdr HTTP/1.1\r\nHost: t\r\nX-Pad: ");
		for (int i = 0; i < kib * 1024; i++)
			sb_append(&req, "p", 1);
		sb_appends(&req, "\r\nX-Test: big\r\n\r\n");
		put(fd, req.buf, req.len);
		read_answer(fd, &a, false);
		CHECK(a.status == (kib == 6 ? 200 : 431), "%d KiB of headers: %d", kib, a.status);
		sb_free(&a.body);
		sb_free(&req);
		close(fd);
		rlen = 0;
	}
	/* Bad chunked framing after the handler saw the request: the connection ends. */
	{
		int fd = dial();

		puts_(fd, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
		      "zz\r\n");
		CHECK(closed_by_server(fd), "bad chunk size: connection not closed");
		close(fd);
		fd = dial();
		puts_(fd, GET("/close", ""));
		CHECK(closed_by_server(fd), "HD_NO: connection not closed");
		close(fd);
		rlen = 0;
	}
}

/* A client gone mid-body, the connection limit, the idle timeout, quiescing. */
static void
case_limits(void)
{
	int fds[12], fd, n_open = 0;
	struct answer a;

	fd = dial();
	puts_(fd, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
	usleep(50 * 1000);
	close(fd);
	usleep(100 * 1000);
	for (int i = 0; i < 12; i++)
		fds[i] = dial();
	for (int i = 0; i < 12; i++) {
		puts_(fds[i], GET("/hdr", "X-Test: lim\r\n"));
		read_answer(fds[i], &a, false);
		n_open += a.status == 200;
		sb_free(&a.body);
		rlen = 0;
	}
	CHECK(n_open == 8, "connection limit 8: %d of 12 served", n_open);
	for (int i = 0; i < 12; i++)
		close(fds[i]);
	usleep(100 * 1000);
	/* Idle for longer than the timeout (1 s): the server closes it. */
	fd = dial();
	puts_(fd, GET("/hdr", ""));
	read_answer(fd, &a, false);
	sb_free(&a.body);
	CHECK(a.status == 200 && closed_by_server(fd), "idle connection not closed");
	close(fd);
	rlen = 0;
	/*
	 * A head trickled a byte every 300 ms: each byte keeps the connection from the idle
	 * timeout (1 s), but the head is not whole in its 2 s, and the server closes it.
	 */
	fd = dial();
	puts_(fd, "GET /hdr HTTP/1.1\r\n");
	{
		int sent = 0;
		bool gone = false;

		for (; sent < 25 && !gone; sent++) {
			char ch;
			ssize_t r;

			put(fd, "X", 1);
			usleep(300 * 1000);
			r = recv(fd, &ch, 1, MSG_DONTWAIT);
			gone = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
		}
		CHECK(gone && sent <= 15, "a trickled head held its connection (%d bytes sent)",
		      sent);
	}
	close(fd);
	hd_quiesce(srv);
	fd = dial();
	CHECK(fd < 0, "a connection was accepted after hd_quiesce");
	if (fd >= 0)
		close(fd);
}

/*
 * A request and the client's FIN in one go (an HTTP/1.0-style client that half-closes): the
 * answer comes, then the server closes at once, not when the idle timeout (60 s here) ends.
 */
static void
case_half_close(void)
{
	int fd = dial();
	struct answer a;

	puts_(fd, GET("/hdr", "X-Test: half\r\n") GET("/hdr", "X-Test: closed\r\n"));
	shutdown(fd, SHUT_WR);
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && !strcmp(body_of(&a), "half"), "half-closed, first: %d", a.status);
	sb_free(&a.body);
	read_answer(fd, &a, false);
	CHECK(a.status == 200 && !strcmp(body_of(&a), "closed"), "half-closed, second: %d",
	      a.status);
	sb_free(&a.body);
	CHECK(closed_by_server(fd), "a half-closed connection stayed open after its answers");
	close(fd);
	rlen = 0;
}

int
main(void)
{
	server_start(8, 1, 2);
	case_keepalive_and_pipelining();
	case_byte_by_byte();
	case_bodies();
	case_streams();
	case_refusals();
	case_limits();
	usleep(100 * 1000);
	server_stop();
	server_start(8, 60, 60);
	case_half_close();
	server_stop();
	CHECK(started >= 25 && started == completed, "requests seen %d, completed %d", started,
	      completed);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
