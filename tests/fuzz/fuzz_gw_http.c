/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the gateway's HTTP side end to end. The real server (its HTTP server, the
 * token check, the JSON-RPC envelope, sessions, dispatch) listens on a loopback port of this
 * process; every input is one POST /mcp over a fresh connection:
 *
 *   input = flags:1 body:rest
 *   flags bit 0: send the token   bit 1: a valid session id   bit 2: a bogus session id
 *         bit 3: Accept without text/event-stream   bit 4: Content-Type text/plain
 *         bit 5: Mcp-Protocol-Version 2025-06-18   bit 6: a bogus protocol version
 *         bit 7: 2026-07-28 (stateless) with Mcp-Method: tools/list
 *
 * Checks: an answer always comes, it is HTTP with a status the gateway uses, never a 5xx but
 * the "too many sessions" 200-with-error; without the token it is 401.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "fail.h"
#include "http/http.h"
#include "session/http_conf.h"
#include "session/routes.h"

#define FUZZ_TOKEN	"fuzz-token"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct tool_table tools;
static struct http_server *srv;
static uint16_t port;
static char session[64];

static void
fuzz_fail(const char *what, const char *detail)
{
	fuzz_fail_at("fuzz_gw_http", what, detail);
}

/* All of it, through the timeout alarm's interruptions; errors are the server's business. */
static void
send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

/* One request on a new connection; returns the status, the answer in out. */
static int
exchange(const char *head, const uint8_t *body, size_t blen, char *out, size_t outlen)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 10 };
	/* Reset on close: thousands of connections a second would use up the ephemeral ports. */
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	size_t got = 0;
	int fd, st = -1, e;

	/*
	 * libFuzzer's timeout alarm can interrupt connect() too (seen in CI: "connect:
	 * Interrupted system call"); the half-made connection is dropped and a new one made.
	 */
	for (int tries = 0;; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -3;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		e = errno;
		snprintf(out, outlen, "connect: %s", strerror(e));
		close(fd);
		if (e != EINTR || tries == 10)
			return -3;
	}
	/* The server may answer (401, 413) and close before the body is sent: no SIGPIPE. */
	send_all(fd, head, strlen(head));
	send_all(fd, body, blen);
	while (got + 1 < outlen) {
		ssize_t n = read(fd, out + got, outlen - 1 - got);

		/* libFuzzer's timeout alarm interrupts reads now and then. */
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !got)
			snprintf(out, outlen, "read: %s", strerror(errno));
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got)
		out[got] = '\0';
	close(fd);
	if (sscanf(out, "HTTP/1.%*d %d", &st) != 1)
		return -2;
	return st;
}

static int
post(uint8_t flags, const uint8_t *body, size_t blen, char *out, size_t outlen)
{
	char head[1024];

	out[0] = '\0';
	snprintf(head, sizeof(head),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
		 "Content-Length: %zu\r\n"
		 "Content-Type: %s\r\nAccept: %s\r\n%s%s%s%s%s%s\r\n", blen,
		 flags & 16 ? "text/plain" : "application/json",
		 flags & 8 ? "application/json" : "application/json, text/event-stream",
		 flags & 1 ? "Authorization: Bearer " FUZZ_TOKEN "\r\n" : "",
		 flags & 2 && session[0] ? "Mcp-Session-Id: " : "",
		 flags & 2 && session[0] ? session : "", flags & 2 && session[0] ? "\r\n" : "",
		 flags & 4 ? "Mcp-Session-Id: AAAAAAAAAAAAAAAAAAAAAAAAAA\r\n" : "",
		 flags & 64 ? "Mcp-Protocol-Version: 1999-01-01\r\n" :
		 flags & 128 ? "Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n" :
		 flags & 32 ? "Mcp-Protocol-Version: 2025-06-18\r\n" : "");
	return exchange(head, body, blen, out, outlen);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		"\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		"\"clientInfo\":{\"name\":\"f\",\"version\":\"0\"}}}";
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct http_conf conf = {
		.token = FUZZ_TOKEN, .version = "fuzz", .tools = &tools, .servers = NULL,
		.page_size = 10, .session_idle_ns = 2LL * 1000000000LL, .max_body = 64 * 1024,
		.max_sessions = 64,
	};
	socklen_t al = sizeof(a);
	static char out[65536];
	char *err = NULL, *sid;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&a, &al))
		fuzz_fail("listen", strerror(errno));
	port = ntohs(a.sin_port);
	srv = http_start(&conf, fd, &err);
	if (!srv)
		fuzz_fail("http_start", err);
	if (post(1 | 32, (const uint8_t *)init, strlen(init), out, sizeof(out)) != 200)
		fuzz_fail("initialize", out);
	sid = strcasestr(out, "Mcp-Session-Id: ");
	if (!sid || sscanf(sid + 16, "%63[A-Za-z0-9]", session) != 1)
		fuzz_fail("no session id", out);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[1 << 17];
	uint8_t flags;
	int st;

	if (size < 1)
		return 0;
	flags = data[0];
	st = post(flags, data + 1, size - 1, out, sizeof(out));
	if (st == -3)
		fuzz_fail("the harness could not connect", out);
	if (st < 0)
		fuzz_fail("no HTTP answer", out);
	if (!(flags & 1) && st != 401)
		fuzz_fail("answered without the token", out);
	switch (st) {
	case 200: case 202: case 400: case 401: case 404: case 406: case 413: case 415:
		break;
	default:
		fuzz_fail("unexpected status", out);
	}
	return 0;
}
