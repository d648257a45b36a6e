/* SPDX-License-Identifier: BSD-3-Clause */
/* ppbench's command line and its report (the table, or one JSON object). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ppb.h"

struct pb_opts opt = {
	.sessions = 1u << 20, .rounds = 2, .nsbx = 64, .seed = 12345, .clock = CLOCK_MONOTONIC,
};

static void
usage(const char *prog)
{
	printf("usage: %s [--sessions N] [--capacity N] [--rounds R] [--sandboxes S] "
	       "[--seed X] [--per-packet] [--cpu-clock] [--ipv6] [--json]\n"
	       "  Pipeline micro-benchmark without I/O (see docs/performance.md).\n"
	       "  --sessions   live TCP sessions built before measuring (default 1048576)\n"
	       "  --capacity   table capacity (default: --sessions)\n"
	       "  --rounds     passes over all flows for the established cases (default 2)\n"
	       "  --sandboxes  sandbox slots the flows are spread over (default 64)\n"
	       "  --seed       seeds the flow order and the session table's hash (default 12345)\n"
	       "  --per-packet call dp_world_rx/dp_sandbox_rx per frame even when the pipeline\n"
	       "               has burst entry points\n"
	       "  --cpu-clock  time the thread's CPU time, not the wall clock (a shared machine)\n"
	       "  --ipv6       the same flows over IPv6 (cases named with _v6 behind)\n"
	       "  --json       print one JSON object instead of the table\n", prog);
}

static unsigned long long
parse_num(const char *s, const char *name, unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max) {
		fprintf(stderr, "ppbench: %s: '%s' is not a number up to %llu\n", name, s, max);
		exit(2);
	}
	return v;
}

static int
pb_check_args(void)
{
	if (!opt.capacity)
		opt.capacity = opt.sessions;
	if (opt.sessions == 0 || opt.sessions > (64u << 16) || opt.nsbx == 0 ||
	    opt.nsbx > 4096 || opt.rounds == 0 || opt.capacity < opt.sessions) {
		fprintf(stderr, "ppbench: need 1 <= sessions <= 4194304 <= capacity, "
			"1 <= sandboxes <= 4096, rounds >= 1\n");
		return -EINVAL;
	}
	return 0;
}

int
pb_parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "sessions", required_argument, NULL, 'n' },
		{ "capacity", required_argument, NULL, 'c' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "sandboxes", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "per-packet", no_argument, NULL, 'p' },
		{ "cpu-clock", no_argument, NULL, 'C' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n': opt.sessions = (uint32_t)parse_num(optarg, "--sessions", UINT32_MAX); break;
		case 'c': opt.capacity = (uint32_t)parse_num(optarg, "--capacity", UINT32_MAX); break;
		case 'r': opt.rounds = (uint32_t)parse_num(optarg, "--rounds", UINT32_MAX); break;
		case 's': opt.nsbx = (uint32_t)parse_num(optarg, "--sandboxes", UINT32_MAX); break;
		case 'S': opt.seed = parse_num(optarg, "--seed", UINT64_MAX); break;
		case 'j': opt.json = 1; break;
		case 'p': opt.per_packet = 1; break;
		case 'C': opt.clock = CLOCK_THREAD_CPUTIME_ID; break;
		case '6': opt.ipv6 = 1; break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -EINVAL;
		}
	}
	return pb_check_args();
}

static void
pb_report_json(const struct pb_case *cs, const struct pb_summary *sm)
{
	int i, first = 1;

	printf("{\"family\":%d,\"sessions\":%u,\"capacity\":%u,\"sandboxes\":%u,\"burst\":%d,"
	       "\"session_struct_bytes\":%zu,\"bucket_bytes_per_session\":%.2f,"
	       "\"table_bytes_per_session\":%.2f,\"rss_bytes_per_session\":%.2f,"
	       "\"cases\":{", opt.ipv6 ? 6 : 4, opt.sessions, opt.capacity, opt.nsbx, BURST,
	       sm->sess_bytes, (double)sm->bucket_bytes / opt.capacity,
	       (double)(sm->sess_bytes * opt.capacity + sm->bucket_bytes) / opt.capacity,
	       (double)sm->rss_growth / opt.sessions);
	for (i = 0; i < C_MAX; i++) {
		if (cs[i].skipped)
			continue;
		printf("%s\"%s\":{\"packets\":%" PRIu64 ",\"ns_per_packet\":%.1f,"
		       "\"unexpected\":%" PRIu64 "}", first ? "" : ",", cs[i].name, cs[i].pkts,
		       (double)cs[i].ns / cs[i].pkts, cs[i].bad);
		first = 0;
	}
	printf("}}\n");
}

void
pb_report(const struct pb_case *cs, const struct pb_summary *sm)
{
	int i;

	if (opt.json) {
		pb_report_json(cs, sm);
		return;
	}
	printf("ppbench: IPv%d, %u live sessions (capacity %u, %u sandboxes), bursts of %d, "
	       "timer cost %" PRIu64 " ns per burst subtracted\n", opt.ipv6 ? 6 : 4,
	       opt.sessions, opt.capacity, opt.nsbx, BURST, sm->timer_cost);
	printf("%-22s %12s %10s  %s\n", "case", "packets", "ns/pkt", "what");
	for (i = 0; i < C_MAX; i++)
		if (!cs[i].skipped)
			printf("%-22s %12" PRIu64 " %10.1f  %s\n", cs[i].name, cs[i].pkts,
			       (double)cs[i].ns / cs[i].pkts, cs[i].what);
	printf("table memory: %zu B session + %.2f B index = %.2f B per session "
	       "(preallocated for capacity); RSS growth while filling: %.2f B per "
	       "session\n", sm->sess_bytes, (double)sm->bucket_bytes / opt.capacity,
	       (double)(sm->sess_bytes * opt.capacity + sm->bucket_bytes) / opt.capacity,
	       (double)sm->rss_growth / opt.sessions);
}
