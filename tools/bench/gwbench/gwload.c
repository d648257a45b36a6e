/* SPDX-License-Identifier: BSD-3-Clause */
/* gwload: the load generator of gwbench (tools/bench/gwbench/run.sh, docs/performance.md).
 *
 *   gwload load URL [--sessions S] [--calls N] [--warmup W] [--token T] [--timeout SECS]
 *       S sessions, each on its own keep-alive connection and thread: initialize,
 *       notifications/initialized, W uncounted calls, then (all threads released together)
 *       N tools/call of `echo` back to back. Prints one line of key=value: the calls, p50
 *       and p99 latency in microseconds (CLOCK_MONOTONIC, request written to answer read)
 *       and calls/s over the measured part. A request leaves in one write, as Node's fetch
 *       sends it; with --split its headers and body leave in two (as some clients do).
 *       --idle K opens K more sessions after the measured ones, idle while they run.
 *       --cpu-pid PID adds a line with PID's CPU time (user + system) per measured call,
 *       over the measured part alone.
 *   gwload open URL [--sessions K] [--sse] [--hold SECS] [--token T]
 *       Opens K sessions and holds them (with --sse also a GET stream each), prints
 *       "open=K" when they are all open, waits for SIGTERM/SIGINT or SECS, then DELETEs
 *       them: the script reads the gateway's RSS while they are held.
 *   gwload stdio [--sessions S] [--calls N] [--warmup W] [--timeout SECS] -- CMD ARGS...
 *       The server alone: CMD is started with pipes and spoken to in newline-delimited
 *       JSON-RPC; S requests are kept in flight (S=1: one at a time), S*N calls in all. The
 *       same figures as load, so the difference is what a gateway adds.
 *
 * Every phase is bounded by its count and by --timeout (default 120 s): a socket that waits
 * longer fails the run. C, so the client's own cost stays small beside the gateways'. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gwhttp.h"
#include "gwload.h"

struct opts opt = { .sessions = 1, .calls = 1000, .warmup = 50, .timeout = 120,
	.hold = 60 };

static void usage(void)
{
	fprintf(stderr, "usage: gwload load|open URL [--sessions N] [--calls N] [--warmup N]\n"
		"         [--token T] [--timeout SECS] [--sse] [--hold SECS] [--split]\n"
		"         [--idle K] [--cpu-pid PID]\n"
		"       gwload stdio [--sessions N] [--calls N] [--warmup N] -- CMD ARGS...\n");
	exit(2);
}

static long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0)
		usage();
	return v;
}

/* Returns the index of the first argument after the options (the command of stdio). */
static int parse(int argc, char **argv, int first)
{
	int i;

	for (i = first; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return i + 1;
		if (!strcmp(a, "--sse")) {
			opt.sse = 1;
			continue;
		}
		if (!strcmp(a, "--split")) {
			gw_split_writes = 1;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(a, "--sessions"))
			opt.sessions = (int)num(argv[++i]);
		else if (!strcmp(a, "--calls"))
			opt.calls = (int)num(argv[++i]);
		else if (!strcmp(a, "--warmup"))
			opt.warmup = (int)num(argv[++i]);
		else if (!strcmp(a, "--timeout"))
			opt.timeout = (int)num(argv[++i]);
		else if (!strcmp(a, "--cpu-pid"))
			opt.cpu_pid = (int)num(argv[++i]);
		else if (!strcmp(a, "--idle"))
			opt.idle = (int)num(argv[++i]);
		else if (!strcmp(a, "--hold"))
			opt.hold = (int)num(argv[++i]);
		else if (!strcmp(a, "--token"))
			opt.token = argv[++i];
		else
			usage();
	}
	if (opt.sessions < 1 || opt.sessions > 4096 || opt.calls < 1 || opt.calls > 1000000)
		usage();
	return i;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void report(const char *mode, double *lat, long n, long errors, double secs)
{
	qsort(lat, (size_t)n, sizeof(*lat), cmp_dbl);
#define Q(p) (n ? lat[(long)((double)(n - 1) * (p) + 0.5)] : 0.0)
	printf("mode=%s sessions=%d calls=%ld errors=%ld p50_us=%.1f p99_us=%.1f max_us=%.1f "
		"secs=%.3f rate=%.1f\n", mode, opt.sessions, n, errors, Q(0.5), Q(0.99), Q(1.0),
		secs, secs > 0 ? (double)n / secs : 0.0);
#undef Q
	fflush(stdout);
}

/* Many sessions hold a socket (two with --sse): the soft limit of 1024 is too few. */
static void raise_nofile(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

int main(int argc, char **argv)
{
	struct gw_url u;
	int rest;

	if (argc < 2)
		usage();
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if (!strcmp(argv[1], "stdio")) {
		rest = parse(argc, argv, 2);
		if (rest >= argc)
			usage();
		return run_stdio(argv + rest);
	}
	if (argc < 3 || gw_parse_url(argv[2], &u) < 0) {
		fprintf(stderr, "gwload: URL must be http://127.x.x.x:PORT/path\n");
		return 2;
	}
	parse(argc, argv, 3);
	if (!strcmp(argv[1], "load"))
		return run_load(&u);
	if (!strcmp(argv[1], "open"))
		return run_open(&u);
	usage();
	return 2;
}
