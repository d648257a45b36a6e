/* SPDX-License-Identifier: BSD-3-Clause */
/* gwload's HTTP modes: load (sessions calling back to back) and open (sessions held open). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gwload.h"

#define INIT_BODY "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{" \
	"\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}," \
	"\"clientInfo\":{\"name\":\"gwload\",\"version\":\"0\"}}}"
#define INITED_BODY "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"

/* A socket waits at most this long (ms) for one answer; the whole run is bounded by alarm(). */
static int sock_timeout_ms(void)
{
	return (opt.timeout < 30 ? opt.timeout : 30) * 1000;
}

static void req_init(struct gw_req *r, const char *method, const char *sid)
{
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->token = opt.token;
	r->sid = sid;
	r->proto = sid ? "yes" : NULL;
}

int mcp_initialize(struct gw_conn *c, const struct gw_url *u, char *sid, size_t sidlen)
{
	struct gw_req r;
	int st;

	req_init(&r, "POST", NULL);
	st = gw_request(c, u, &r, INIT_BODY, 0);
	if (st != 200 || !c->answer || !json_object_get(c->answer, "result")) {
		fprintf(stderr, "gwload: initialize: HTTP %d %.200s\n", st, c->body ? c->body : "");
		return -1;
	}
	snprintf(sid, sidlen, "%s", c->sid);
	req_init(&r, "POST", sid);
	st = gw_request(c, u, &r, INITED_BODY, -1);
	if (st != 202 && st != 200 && st != 204) {
		fprintf(stderr, "gwload: notifications/initialized: HTTP %d\n", st);
		return -1;
	}
	return 0;
}

/* The echo tool's text, checked: a gateway that answered something else did not relay. */
static int echoed(json_t *answer, const char *text)
{
	json_t *content = json_object_get(json_object_get(answer, "result"), "content");
	const char *got = json_string_value(json_object_get(json_array_get(content, 0), "text"));

	size_t n = got ? strlen(got) : 0, t = strlen(text);

	/* fake-server.mjs answers "<its name>:<text>". */
	return got && n >= t && !strcmp(got + n - t, text);
}

int mcp_call(struct gw_conn *c, const struct gw_url *u, const char *sid, json_int_t id,
	const char *text, double *us)
{
	char body[256];
	struct gw_req r;
	struct timespec t0;
	int st;

	snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\","
		"\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"%s\"}}}", (long long)id, text);
	req_init(&r, "POST", sid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = gw_request(c, u, &r, body, id);
	if (st != 200 || !c->answer || !echoed(c->answer, text)) {
		fprintf(stderr, "gwload: tools/call %lld: HTTP %d %.200s\n", (long long)id, st,
			c->body ? c->body : "");
		return -1;
	}
	*us = gw_us(&t0, &c->t_answer);
	return 0;
}

struct worker {
	pthread_t th;
	int idx;
	const struct gw_url *u;
	pthread_barrier_t *go;
	double *lat;
	long n, errors;
	int ready;
};

/* Warm-up before the barrier, so the measured part starts with every session open. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct gw_conn c;
	char sid[160], text[64];
	double us;
	int i, ok;

	ok = gw_connect(&c, w->u, sock_timeout_ms()) == 0 &&
		mcp_initialize(&c, w->u, sid, sizeof(sid)) == 0;
	for (i = 0; ok && i < opt.warmup; i++) {
		snprintf(text, sizeof(text), "w%d-%d", w->idx, i);
		ok = mcp_call(&c, w->u, sid, 1000000 + i, text, &us) == 0;
	}
	w->ready = ok;
	pthread_barrier_wait(w->go);
	for (i = 0; ok && i < opt.calls; i++) {
		snprintf(text, sizeof(text), "s%d-%d", w->idx, i);
		if (mcp_call(&c, w->u, sid, i + 1, text, &us) < 0) {
			w->errors++;
			break;
		}
		w->lat[w->n++] = us;
	}
	gw_close(&c);
	return NULL;
}

/* utime + stime of a process (/proc/PID/stat), in clock ticks; -1 without one. */
static long cpu_ticks(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the command's name in parentheses (which may hold spaces): fields 3 onwards. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

struct held {
	struct gw_conn post, stream;
	char sid[160];
	int ok;
};

static int open_all(const struct gw_url *u, struct held *h, int n);
static void close_all(const struct gw_url *u, struct held *h, int n);

static void on_alarm(int sig)
{
	static const char m[] = "gwload: --timeout reached, giving up\n";

	(void)sig;
	(void)!write(2, m, sizeof(m) - 1);
	_exit(3);
}

int run_load(const struct gw_url *u)
{
	int S = opt.sessions, i, ready = 0;
	struct worker *w = calloc((size_t)S, sizeof(*w));
	double *all = malloc(sizeof(double) * (size_t)S * (size_t)opt.calls);
	pthread_barrier_t go;
	struct timespec t0, t1;
	struct held *idle = NULL;
	long n = 0, errors = 0, c0, c1;

	if (!w || !all)
		return 1;
	signal(SIGALRM, on_alarm);
	alarm((unsigned)opt.timeout);
	pthread_barrier_init(&go, NULL, (unsigned)S + 1);
	for (i = 0; i < S; i++) {
		w[i] = (struct worker){ .idx = i, .u = u, .go = &go,
			.lat = all + (size_t)i * (size_t)opt.calls };
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]))
			return 1;
	}
	/*
	 * --idle: sessions opened after the measured ones and left idle, so each request's
	 * session is one among many and not the newest (a gateway that keeps a list in order
	 * of creation finds the newest first).
	 */
	if (opt.idle) {
		idle = calloc((size_t)opt.idle, sizeof(*idle));
		if (!idle || open_all(u, idle, opt.idle) < opt.idle) {
			fprintf(stderr, "gwload: --idle: not every session opened\n");
			errors++;
		}
	}
	pthread_barrier_wait(&go);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c0 = cpu_ticks(opt.cpu_pid);
	for (i = 0; i < S; i++)
		pthread_join(w[i].th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c1 = cpu_ticks(opt.cpu_pid);
	if (idle)
		close_all(u, idle, opt.idle);
	free(idle);
	/* The measured calls are packed together for one sort. */
	for (i = 0; i < S; i++) {
		memmove(all + n, w[i].lat, sizeof(double) * (size_t)w[i].n);
		n += w[i].n;
		errors += w[i].errors + !w[i].ready;
		ready += w[i].ready;
	}
	report("load", all, n, errors, gw_us(&t0, &t1) / 1e6);
	if (opt.cpu_pid && c0 >= 0 && c1 >= 0 && n)
		printf("cpu_pid=%d cpu_us_per_call=%.1f\n", opt.cpu_pid,
		       (double)(c1 - c0) * 1e6 / (double)sysconf(_SC_CLK_TCK) / (double)n);
	return errors || ready < S ? 1 : 0;
}

struct opener {
	pthread_t th;
	const struct gw_url *u;
	struct held *h;
	int first, step, n;
};

static void *opener_main(void *arg)
{
	struct opener *o = arg;
	struct gw_req r;
	int i;

	for (i = o->first; i < o->n; i += o->step) {
		struct held *h = &o->h[i];

		h->stream.fd = -1;
		if (gw_connect(&h->post, o->u, sock_timeout_ms()) < 0 ||
		    mcp_initialize(&h->post, o->u, h->sid, sizeof(h->sid)) < 0)
			continue;
		if (opt.sse) {
			req_init(&r, "GET", h->sid);
			r.accept = "text/event-stream";
			if (gw_connect(&h->stream, o->u, sock_timeout_ms()) < 0 ||
			    gw_open_stream(&h->stream, o->u, &r) != 200) {
				fprintf(stderr, "gwload: GET stream: HTTP %d\n", h->stream.status);
				continue;
			}
		}
		h->ok = 1;
	}
	return NULL;
}

/* Opens every session from a few threads: a peer that starts a server per session takes a
 * while for each, and one at a time would make the phase minutes long. */
static int open_all(const struct gw_url *u, struct held *h, int n)
{
	struct opener o[8];
	int i, ok = 0;

	for (i = 0; i < 8; i++) {
		o[i] = (struct opener){ .u = u, .h = h, .first = i, .step = 8, .n = n };
		pthread_create(&o[i].th, NULL, opener_main, &o[i]);
	}
	for (i = 0; i < 8; i++)
		pthread_join(o[i].th, NULL);
	for (i = 0; i < n; i++)
		ok += h[i].ok;
	return ok;
}

int run_open(const struct gw_url *u)
{
	int K = opt.sessions, ok;
	struct held *h = calloc((size_t)K, sizeof(*h));
	struct timespec hold = { opt.hold, 0 };
	sigset_t set;

	if (!h)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* the threads inherit it; sigtimedwait gets it */
	signal(SIGALRM, on_alarm);
	alarm((unsigned)(opt.timeout + opt.hold));
	ok = open_all(u, h, K);
	printf("open=%d wanted=%d sse=%d\n", ok, K, opt.sse);
	fflush(stdout);
	sigtimedwait(&set, NULL, &hold);
	/* Ended politely, so a peer that runs a server per session stops them now. */
	alarm((unsigned)opt.timeout);
	close_all(u, h, K);
	return ok == K ? 0 : 1;
}

static void close_all(const struct gw_url *u, struct held *h, int n)
{
	struct gw_req r;

	for (int i = 0; i < n; i++) {
		gw_close(&h[i].stream);
		if (h[i].ok) {
			req_init(&r, "DELETE", h[i].sid);
			gw_request(&h[i].post, u, &r, NULL, -1);
		}
		gw_close(&h[i].post);
	}
}
