/* SPDX-License-Identifier: BSD-3-Clause */
/* gwload stdio: the server alone. The same Node server the gateways run, started here with
 * pipes and spoken to in newline-delimited JSON-RPC, the way every gateway speaks to it; what a
 * gateway's figures add to these is its own HTTP and relaying. Several sessions are several
 * requests in flight on the one pipe (a stdio server has one client). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gwload.h"

struct child {
	pid_t pid;
	int in, out;		/* its stdin (we write), its stdout (we read) */
	char buf[1 << 16];
	size_t len;
};

static int spawn(struct child *ch, char **cmd)
{
	int pin[2], pout[2];

	if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0)
		return -1;
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (!ch->pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(pin[0], 0);
		dup2(pout[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	ch->in = pin[1];
	ch->out = pout[0];
	ch->len = 0;
	return 0;
}

static int put(struct child *ch, const char *line)
{
	size_t n = strlen(line);

	while (n) {
		ssize_t w = write(ch->in, line, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		line += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The next message from the server, waiting at most timeout_ms; NULL on EOF or timeout. */
static json_t *get(struct child *ch, int timeout_ms)
{
	for (;;) {
		char *nl = memchr(ch->buf, '\n', ch->len);
		struct pollfd p = { .fd = ch->out, .events = POLLIN };
		ssize_t n;

		if (nl) {
			json_t *m = json_loadb(ch->buf, (size_t)(nl - ch->buf), 0, NULL);

			ch->len -= (size_t)(nl + 1 - ch->buf);
			memmove(ch->buf, nl + 1, ch->len);
			if (m)
				return m;
			continue;	/* not JSON: a server may log there; skip it */
		}
		if (ch->len == sizeof(ch->buf) || poll(&p, 1, timeout_ms) <= 0)
			return NULL;
		n = read(ch->out, ch->buf + ch->len, sizeof(ch->buf) - ch->len);
		if (n <= 0)
			return NULL;
		ch->len += (size_t)n;
	}
}

static int send_call(struct child *ch, long id, struct timespec *t)
{
	char line[256];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
		"\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"s-%ld\"}}}\n", id, id);
	clock_gettime(CLOCK_MONOTONIC, t);
	return put(ch, line);
}

/* fake-server.mjs answers echo with "<its name>:<text>". */
static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* The answer to an id we sent, with its echo checked; a message of another kind is skipped. */
static long answer_id(json_t *m)
{
	json_t *content = json_object_get(json_object_get(m, "result"), "content");
	const char *text = json_string_value(json_object_get(json_array_get(content, 0), "text"));
	long id = (long)json_integer_value(json_object_get(m, "id"));
	char want[64];

	if (!json_is_integer(json_object_get(m, "id")) || json_object_get(m, "method"))
		return 0;
	snprintf(want, sizeof(want), "s-%ld", id);
	return text && ends_with(text, want) ? id : -1;
}

static int handshake(struct child *ch, int tmo)
{
	json_t *m;

	if (put(ch, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
		"\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		"\"clientInfo\":{\"name\":\"gwload\",\"version\":\"0\"}}}\n") < 0)
		return -1;
	m = get(ch, tmo);
	if (!m || !json_object_get(m, "result")) {
		json_decref(m);
		return -1;
	}
	json_decref(m);
	return put(ch, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
}

/* total calls with `window` in flight, ids first..first+total-1; lat[] in us when not NULL. */
static long pump(struct child *ch, long first, long total, int window, double *lat,
	int tmo)
{
	struct timespec *sent = calloc((size_t)total, sizeof(*sent)), now;
	long next = 0, done = 0;

	if (!sent)
		return -1;
	while (done < total) {
		json_t *m;
		long id;

		while (next < total && next - done < window)
			if (send_call(ch, first + next, &sent[next]) < 0)
				goto out;
			else
				next++;
		m = get(ch, tmo);
		if (!m)
			goto out;
		clock_gettime(CLOCK_MONOTONIC, &now);
		id = answer_id(m);
		json_decref(m);
		if (!id)
			continue;
		if (id < first || id >= first + total)
			goto out;
		if (lat)
			lat[done] = gw_us(&sent[id - first], &now);
		done++;
	}
out:
	free(sent);
	return done;
}

int run_stdio(char **cmd)
{
	struct child *ch = calloc(1, sizeof(*ch));
	long total = (long)opt.sessions * opt.calls, done = 0;
	double *lat = malloc(sizeof(double) * (size_t)total);
	int tmo = opt.timeout * 1000, st;
	struct timespec t0, t1;

	if (!ch || !lat || spawn(ch, cmd) < 0) {
		fprintf(stderr, "gwload stdio: cannot start %s\n", cmd[0]);
		return 1;
	}
	if (handshake(ch, tmo) < 0) {
		fprintf(stderr, "gwload stdio: no answer to initialize from %s\n", cmd[0]);
	} else if (pump(ch, 1000000, opt.warmup, opt.sessions, NULL, tmo) == opt.warmup) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		done = pump(ch, 1, total, opt.sessions, lat, tmo);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		report("stdio", lat, done, total - done, gw_us(&t0, &t1) / 1e6);
	} else {
		fprintf(stderr, "gwload stdio: the warm-up calls failed\n");
	}
	/* EOF on its stdin ends a stdio server; SIGKILL if it lingers. */
	close(ch->in);
	for (st = 0; st < 50 && waitpid(ch->pid, NULL, WNOHANG) == 0; st++)
		usleep(20000);
	if (st == 50) {
		kill(ch->pid, SIGKILL);
		waitpid(ch->pid, NULL, 0);
	}
	return done == total ? 0 : 1;
}
