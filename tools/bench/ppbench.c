/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Micro-benchmark of the worker's packet pipeline without I/O: bursts of 32 prepared frames go
 * through dp_world_rx()/dp_sandbox_rx() (parse → conntrack → NAT → L2) against a table holding
 * --sessions live TCP sessions. Prints ns per packet for each case and the table's bytes per
 * session. No timed assertions: the figures are for people and for the bench JSON.
 *
 * Under valgrind (callgrind) the same cases run with instruction counting switched on only
 * around the pipeline calls, and each case ends with a named dump, so a script can compare
 * instructions per packet with a committed budget (tests/bench/ppbench_budget.txt).
 *
 * Flows: client i is 198.19.(i & 0xffff) port 1024 + (i >> 16), talking to the node IP at
 * host port 20000 + i % nsbx, DNATed to the guest of sandbox slot i % nsbx.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#ifdef HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#define CALLGRIND_ZERO_STATS do { } while (0)
#define CALLGRIND_TOGGLE_COLLECT do { } while (0)
#define CALLGRIND_DUMP_STATS_AT(s) do { (void)(s); } while (0)
#endif

#include "csum.h"
#include "dp.h"
#include "frag.h"
#include "pktgen.h"

#define BURST 32
#define FRAME_ROOM 1536
#define HOSTPORT_BASE 20000
#define CPORT 8080

enum pb_dir { PB_WORLD, PB_SANDBOX };

struct pb_case {
	const char *name;
	const char *what;
	uint64_t pkts;
	uint64_t ns;
	uint64_t bad;	/* packets whose verdict was not the expected one */
};

static struct dp_cfg cfg;
static struct dp_shared sh;
static struct cvs_stats st;
static _Atomic uint8_t *alive;

static uint32_t opt_sessions = 1u << 20;
static uint32_t opt_capacity;
static uint32_t opt_rounds = 2;
static uint32_t opt_nsbx = 64;
static uint64_t opt_seed = 12345;
static int opt_json;
static int under_vg;

static uint8_t tpl_syn[FRAME_ROOM], tpl_ack[FRAME_ROOM], tpl_synack[FRAME_ROOM];
static uint8_t tpl_rack[FRAME_ROOM], tpl_esyn[FRAME_ROOM], tpl_brst[FRAME_ROOM];
static uint8_t tpl_ffirst[FRAME_ROOM], tpl_flater[FRAME_ROOM], tpl_full[FRAME_ROOM];
static uint32_t len_ffirst, len_flater, len_full;
/* Frames leave frame_of() with the partial checksum of a sender's TX offload (pseudo-header). */
static int pb_partial;
static uint32_t len_syn, len_ack, len_synack, len_rack, len_esyn, len_brst;

/*
 * --cpu-clock: the thread's CPU time instead of the wall clock. On a machine shared with other
 * jobs the wall clock also counts the time the thread waited for a CPU; the CPU clock leaves
 * that out (not the caches the other jobs take).
 */
static clockid_t opt_clock = CLOCK_MONOTONIC;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(opt_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
rng_next(uint64_t *s)
{
	/* splitmix64: fixed sequence for a fixed seed, so runs and callgrind counts repeat. */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t
client_ip(uint32_t i)
{
	return htonl(0xc6130000u | (i & 0xffff));
}

static uint16_t
client_port(uint32_t i)
{
	return htons((uint16_t)(1024 + (i >> 16)));
}

static uint32_t
flow_slot(uint32_t i)
{
	return i % opt_nsbx;
}

/* Make a template an IPv4 fragment: 'fo' is its flags and offset field, the IP id fixed. */
static void
frag_mark(uint8_t *f, uint16_t fo)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + ETH_HLEN_);

	csum_replace2(&ip->check, ip->frag_off, htons(fo));
	ip->frag_off = htons(fo);
	csum_replace2(&ip->check, ip->id, htons(0x4711));
	ip->id = htons(0x4711);
}

static void
templates_init(void)
{
	uint32_t c = client_ip(0);

	len_syn = build_frame(tpl_syn, IPPROTO_TCP_, c, cfg.node_ip, client_port(0),
			      htons(HOSTPORT_BASE), TCPF_SYN, 6);
	len_ack = build_frame(tpl_ack, IPPROTO_TCP_, c, cfg.node_ip, client_port(0),
			      htons(HOSTPORT_BASE), TCPF_ACK, 6);
	len_synack = build_frame(tpl_synack, IPPROTO_TCP_, cfg.guest_ip, c, htons(CPORT),
				 client_port(0), TCPF_SYN | TCPF_ACK, 6);
	len_rack = build_frame(tpl_rack, IPPROTO_TCP_, cfg.guest_ip, c, htons(CPORT),
			       client_port(0), TCPF_ACK, 6);
	/* A blind RST: the flow's 4-tuple, a sequence number half the space away. */
	len_brst = build_frame(tpl_brst, IPPROTO_TCP_, c, cfg.node_ip, client_port(0),
			       htons(HOSTPORT_BASE), TCPF_RST, 0);
	((struct tcp_hdr *)(tpl_brst + ETH_HLEN_ + 20))->seq = htonl(1000 + 0x80000000u);
	((struct tcp_hdr *)(tpl_brst + ETH_HLEN_ + 20))->check = 0;
	((struct tcp_hdr *)(tpl_brst + ETH_HLEN_ + 20))->check = l4_csum(tpl_brst + ETH_HLEN_);
	/*
	 * Fragments of a client's segment on its established flow: the first (an ACK with 12
	 * bytes, MF: a multiple of 8 bytes) and a later one of 64 bytes at offset 64; the client
	 * address tells the datagrams apart.
	 */
	len_ffirst = build_frame(tpl_ffirst, IPPROTO_TCP_, c, cfg.node_ip, client_port(0),
				 htons(HOSTPORT_BASE), TCPF_ACK, 12);
	frag_mark(tpl_ffirst, 0x2000);
	len_flater = build_frame(tpl_flater, IPPROTO_TCP_, c, cfg.node_ip, client_port(0),
				 htons(HOSTPORT_BASE), TCPF_ACK, 44);
	frag_mark(tpl_flater, 8);
	/* A full-size segment (1,448 bytes of data) on the established flow. */
	len_full = build_frame(tpl_full, IPPROTO_TCP_, c, cfg.node_ip, client_port(0),
			       htons(HOSTPORT_BASE), TCPF_ACK, 1448);
	/* A guest opening a connection to a remote host (egress SNAT); the remote varies. */
	len_esyn = build_frame(tpl_esyn, IPPROTO_TCP_, cfg.guest_ip, c, htons(CPORT),
			       client_port(0), TCPF_SYN, 6);
}

/*
 * Write the frame of flow i from a template of flow 0: only the client address and port and
 * the host port change, so the checksums are fixed incrementally.
 */
static uint32_t
frame_of(uint8_t *f, const uint8_t *tpl, uint32_t len, uint32_t i, enum pb_dir dir, int miss)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + ETH_HLEN_);
	struct tcp_hdr *th = (struct tcp_hdr *)(f + ETH_HLEN_ + 20);
	uint32_t c = client_ip(i);
	uint16_t cp = miss ? htons((uint16_t)(60000 + (i & 0xfff))) : client_port(i);

	memcpy(f, tpl, len);
	if (dir == PB_WORLD) {
		uint16_t hp = htons((uint16_t)(HOSTPORT_BASE + flow_slot(i)));

		csum_replace4(&ip->check, ip->saddr, c);
		csum_replace4(&th->check, ip->saddr, c);
		ip->saddr = c;
		csum_replace2(&th->check, th->sport, cp);
		th->sport = cp;
		csum_replace2(&th->check, th->dport, hp);
		th->dport = hp;
	} else {
		csum_replace4(&ip->check, ip->daddr, c);
		csum_replace4(&th->check, ip->daddr, c);
		ip->daddr = c;
		csum_replace2(&th->check, th->dport, cp);
		th->dport = cp;
	}
	if (pb_partial)
		th->check = csum_fold(csum_pseudo(ip->saddr, ip->daddr, IPPROTO_TCP_,
						  (uint16_t)(len - ETH_HLEN_ - 20)));
	return len;
}

static int opt_per_packet;

/*
 * The pipeline's burst entry points when it has them (as the worker calls it), one call per
 * run of frames from the same sandbox; the per-packet functions otherwise or with
 * --per-packet.
 */
static void
pipeline(struct dp_ctx *x, enum pb_dir dir, uint8_t **fp, const uint32_t *lens,
	 const uint32_t *slots, uint32_t b, struct dp_result *r)
{
	uint32_t k = 0;

#ifdef DP_BURST_MAX
	if (!opt_per_packet) {
		if (dir == PB_WORLD) {
			dp_world_rx_burst(x, fp, lens, b, r);
			return;
		}
		while (k < b) {
			uint32_t e = k + 1;

			while (e < b && slots[e] == slots[k])
				e++;
			dp_sandbox_rx_burst(x, slots[k], fp + k, lens + k, e - k, r + k);
			k = e;
		}
		return;
	}
#endif
	for (k = 0; k < b; k++) {
		if (dir == PB_WORLD)
			dp_world_rx(x, fp[k], lens[k], &r[k]);
		else
			dp_sandbox_rx(x, slots[k], fp[k], lens[k], &r[k]);
	}
}

/* Reorder flows so that each sandbox's flows are consecutive (a burst comes from one socket). */
static void
group_by_slot(uint32_t *order, uint32_t *tmp, uint32_t n)
{
	uint32_t *start = calloc(opt_nsbx + 1, sizeof(*start)), i;

	if (!start) {
		perror("calloc");
		exit(1);
	}
	for (i = 0; i < n; i++)
		start[flow_slot(order[i]) + 1]++;
	for (i = 0; i < opt_nsbx; i++)
		start[i + 1] += start[i];
	for (i = 0; i < n; i++)
		tmp[start[flow_slot(order[i])]++] = order[i];
	memcpy(order, tmp, (size_t)n * sizeof(*order));
	free(start);
}

/* Flows 0..n-1, each sandbox's consecutive (the order a handshake's replies come in). */
static void
slot_order(uint32_t *order, uint32_t *tmp, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		order[i] = i;
	group_by_slot(order, tmp, n);
}

static uint64_t timer_cost;

/* Cost of one pair of clock reads, subtracted from every burst. */
static void
timer_calibrate(void)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 2000; i++) {
		uint64_t a = now_ns(), b = now_ns();

		if (b - a < best)
			best = b - a;
	}
	timer_cost = best;
}

/*
 * Run 'n' flows taken from 'order' (or 0..n-1 when NULL) through the pipeline in bursts of 32.
 * Only the pipeline calls are timed (and, under callgrind, counted).
 */
static void
run_case(struct dp_ctx *x, struct pb_case *pc, const uint32_t *order, uint32_t n,
	 const uint8_t *tpl, uint32_t tlen, enum pb_dir dir, int miss, uint8_t expect)
{
	static uint8_t f[BURST][FRAME_ROOM];
	uint8_t *fp[BURST];
	uint32_t lens[BURST], slots[BURST];
	struct dp_result r[BURST];
	uint32_t done = 0, k, b;

	while (done < n) {
		uint64_t t0 = 0, t1;

		b = n - done < BURST ? n - done : BURST;
		for (k = 0; k < b; k++) {
			uint32_t i = order ? order[done + k] : done + k;

			lens[k] = frame_of(f[k], tpl, tlen, i, dir, miss);
			fp[k] = f[k];
			slots[k] = flow_slot(i);
		}
		/* Under callgrind the clock is not read: only the pipeline's instructions count. */
		if (under_vg)
			CALLGRIND_TOGGLE_COLLECT;
		else
			t0 = now_ns();
		pipeline(x, dir, fp, lens, slots, b, r);
		if (under_vg) {
			CALLGRIND_TOGGLE_COLLECT;
		} else {
			t1 = now_ns();
			pc->ns += t1 - t0 > timer_cost ? t1 - t0 - timer_cost : 0;
		}
		for (k = 0; k < b; k++)
			if (r[k].action != expect)
				pc->bad++;
		done += b;
	}
	pc->pkts += n;
}

static void
case_begin(void)
{
	if (under_vg)
		CALLGRIND_ZERO_STATS;
}

static void
case_end(struct pb_case *pc)
{
	if (under_vg)
		CALLGRIND_DUMP_STATS_AT(pc->name);
}

/*
 * A table hashed with a seed fixed by --seed, not a random one: which flows share an index
 * line, and so the instruction counts, must not change from run to run. With a random seed
 * the one-flow case cost 17 % more in about 2 runs of 100, when its flow had been pushed
 * into the next line.
 */
static struct ct_table *
bench_table(void)
{
	struct ct_table *ct = ct_create(opt_capacity, opt_nsbx, NULL);

	if (!ct) {
		perror("ct_create");
		return NULL;
	}
	ct_set_seed(ct, (opt_seed + 1) * 0x9e3779b97f4a7c15ull);
	return ct;
}

static void
shuffle(uint32_t *a, uint32_t n, uint64_t *rs)
{
	uint32_t i;

	for (i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rng_next(rs) % (i + 1));
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

static long
rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * sysconf(_SC_PAGESIZE);
}

static void
setup(struct dp_ctx *x)
{
	static const uint8_t gm[6] = { 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc };
	static const uint8_t gw[6] = { 0x20, 0x90, 0x6f, 0xcf, 0xcf, 0xcf };
	static const uint8_t wm[6] = { 2, 0, 0, 0, 0, 0x99 };
	uint32_t s;

	cfg.node_ip = ip4("198.18.0.1");
	cfg.guest_ip = ip4("169.254.68.6");
	cfg.gw_ip = ip4("169.254.68.5");
	memcpy(cfg.guest_mac, gm, 6);
	memcpy(cfg.gw_mac, gw, 6);
	memcpy(cfg.world_mac, wm, 6);
	alive = calloc(opt_nsbx, sizeof(*alive));
	if (!alive) {
		perror("calloc");
		exit(1);
	}
	sh.slot_alive = alive;
	sh.slot_mac = calloc(opt_nsbx, sizeof(*sh.slot_mac));
	sh.guest = calloc(opt_nsbx, sizeof(*sh.guest));
	if (!sh.slot_mac || !sh.guest) {
		perror("calloc");
		exit(1);
	}
	sh.max_sandboxes = opt_nsbx;
	for (s = 0; s < opt_nsbx; s++) {
		atomic_store(&alive[s], 1);
		atomic_store(&sh.slot_mac[s], dp_mac_pack(gm));
		dp_guest_set(&sh.guest[s], cfg.guest_ip, cfg.gw_ip, cfg.gw_mac);
		atomic_store(&sh.hostport[HOSTPORT_BASE + s], dp_hostport_entry(s, CPORT));
	}
	/* Egress: remotes are off-link and go to a default gateway with a known MAC. */
	cfg.world_net = ip4("198.18.0.0");
	cfg.world_mask = ip4("255.255.255.0");
	dp_nh_store(&sh.nh, 0, wm);
	sh.policy = calloc(opt_nsbx, sizeof(*sh.policy));
	sh.policy_ver = calloc(opt_nsbx, sizeof(*sh.policy_ver));
	if (!sh.policy || !sh.policy_ver) {
		perror("calloc");
		exit(1);
	}
	/*
	 * Every per-sandbox limit on, high enough never to refuse: new sessions pay for the
	 * checks as on a node with its default limits.
	 */
	sh.slot_lim = calloc(opt_nsbx, sizeof(*sh.slot_lim));
	if (!sh.slot_lim) {
		perror("calloc");
		exit(1);
	}
	for (s = 0; s < opt_nsbx; s++) {
		atomic_store(&sh.slot_lim[s].sessions, 1u << 30);
		atomic_store(&sh.slot_lim[s].inbound, 1u << 30);
		atomic_store(&sh.slot_lim[s].rate, 1u << 30);
		atomic_store(&sh.slot_lim[s].burst, 1u << 30);
		atomic_store(&sh.slot_lim[s].snat, 1u << 30);
		atomic_store(&sh.slot_lim[s].gen, 1);
	}
	memset(x, 0, sizeof(*x));
	x->cfg = &cfg;
	x->sh = &sh;
	x->st = &st;
	x->bucket = calloc(opt_nsbx, sizeof(*x->bucket));
	x->slot_st = calloc(opt_nsbx, sizeof(*x->slot_st));
	if (!x->bucket || !x->slot_st) {
		perror("calloc");
		exit(1);
	}
	x->now = 100;
	x->snat_lo = 30000;
	x->snat_hi = 60999;
}

static void
usage(const char *prog)
{
	printf("usage: %s [--sessions N] [--capacity N] [--rounds R] [--sandboxes S] "
	       "[--seed X] [--per-packet] [--cpu-clock] [--json]\n"
	       "  Pipeline micro-benchmark without I/O (see docs/performance.md).\n"
	       "  --sessions   live TCP sessions built before measuring (default 1048576)\n"
	       "  --capacity   table capacity (default: --sessions)\n"
	       "  --rounds     passes over all flows for the established cases (default 2)\n"
	       "  --sandboxes  sandbox slots the flows are spread over (default 64)\n"
	       "  --seed       seeds the flow order and the session table's hash (default 12345)\n"
	       "  --per-packet call dp_world_rx/dp_sandbox_rx per frame even when the pipeline\n"
	       "               has burst entry points\n"
	       "  --cpu-clock  time the thread's CPU time, not the wall clock (a shared machine)\n"
	       "  --json       print one JSON object instead of the table\n", prog);
}

static unsigned long long
parse_num(const char *s, const char *opt, unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max) {
		fprintf(stderr, "ppbench: %s: '%s' is not a number up to %llu\n", opt, s, max);
		exit(2);
	}
	return v;
}

static int
parse_args(int argc, char **argv)
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			opt_sessions = (uint32_t)parse_num(optarg, "--sessions", UINT32_MAX);
			break;
		case 'c':
			opt_capacity = (uint32_t)parse_num(optarg, "--capacity", UINT32_MAX);
			break;
		case 'r':
			opt_rounds = (uint32_t)parse_num(optarg, "--rounds", UINT32_MAX);
			break;
		case 's':
			opt_nsbx = (uint32_t)parse_num(optarg, "--sandboxes", UINT32_MAX);
			break;
		case 'S':
			opt_seed = parse_num(optarg, "--seed", UINT64_MAX);
			break;
		case 'j':
			opt_json = 1;
			break;
		case 'p':
			opt_per_packet = 1;
			break;
		case 'C':
			opt_clock = CLOCK_THREAD_CPUTIME_ID;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -EINVAL;
		}
	}
	if (!opt_capacity)
		opt_capacity = opt_sessions;
	if (opt_sessions == 0 || opt_sessions > (64u << 16) || opt_nsbx == 0 ||
	    opt_nsbx > 4096 || opt_rounds == 0 || opt_capacity < opt_sessions) {
		fprintf(stderr, "ppbench: need 1 <= sessions <= 4194304 <= capacity, "
			"1 <= sandboxes <= 4096, rounds >= 1\n");
		return -EINVAL;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	enum {
		C_NEW, C_SYNACK, C_ACK3, C_EST_WORLD, C_EST_SAME, C_EST_SBX, C_MISS, C_HOT_WORLD,
		C_BLIND_RST, C_FULL, C_PARTIAL, C_FRAG_FIRST, C_FRAG_LATER, C_EGRESS_NEW, C_MAX
	};
	struct pb_case cs[C_MAX] = {
		[C_NEW] = { "new_session", "SYN creating a session (table 0 -> N)", 0, 0, 0 },
		[C_SYNACK] = { "synack", "guest SYN+ACK (sandbox -> world)", 0, 0, 0 },
		[C_ACK3] = { "handshake_ack", "client ACK making the session established",
			     0, 0, 0 },
		[C_EST_WORLD] = { "est_world", "established, world -> sandbox (DNAT), random flow",
				  0, 0, 0 },
		[C_EST_SAME] = { "est_world_nolru", "as est_world, flows already seen this second "
				 "(no LRU move)", 0, 0, 0 },
		[C_EST_SBX] = { "est_sandbox", "established, sandbox -> world (reply), random flow",
				0, 0, 0 },
		[C_MISS] = { "lookup_miss", "ACK matching no session (dropped)", 0, 0, 0 },
		[C_HOT_WORLD] = { "est_world_1flow", "established, one flow (cache hot)", 0, 0, 0 },
		[C_BLIND_RST] = { "blind_rst", "RST outside the window of a random flow (dropped, "
				  "tcp_rst_window)", 0, 0, 0 },
		[C_FULL] = { "est_world_1500", "as est_world, 1,500-byte frames", 0, 0, 0 },
		[C_PARTIAL] = { "est_world_1500_partial", "as est_world_1500 with the partial "
				"checksum of a sender's TX offload, completed", 0, 0, 0 },
		[C_FRAG_FIRST] = { "frag_first", "first fragment of a client's segment on its "
				   "flow: translated, its datagram recorded (frag.h)", 0, 0, 0 },
		[C_FRAG_LATER] = { "frag_later", "later fragment of that datagram: translated as "
				   "its first was", 0, 0, 0 },
		[C_EGRESS_NEW] = { "egress_new_session", "guest SYN to a remote host: SNAT port and "
				   "session (table 0 -> N)", 0, 0, 0 },
	};
	uint32_t *order, *tmp, *one, i, n, r;
	uint64_t rs;
	struct dp_ctx x;
	long rss0, rss1;
	size_t sess_bytes, bucket_bytes;
	uint64_t bad = 0, done0;

	if (parse_args(argc, argv))
		return 2;
	under_vg = RUNNING_ON_VALGRIND ? 1 : 0;
	rs = opt_seed;
	n = opt_sessions;
	setup(&x);
	templates_init();
	timer_calibrate();
	order = malloc((size_t)n * sizeof(*order));
	tmp = malloc((size_t)n * sizeof(*tmp));
	one = malloc(BURST * sizeof(*one));
	if (!order || !tmp || !one) {
		perror("malloc");
		return 1;
	}
	rss0 = rss_bytes();
	x.ct = bench_table();
	if (!x.ct)
		return 1;

	/* The three-way handshake of every flow, in arrival order. */
	case_begin();
	run_case(&x, &cs[C_NEW], NULL, n, tpl_syn, len_syn, PB_WORLD, 0, DP_TO_SANDBOX);
	case_end(&cs[C_NEW]);
	rss1 = rss_bytes();
	slot_order(order, tmp, n);
	case_begin();
	run_case(&x, &cs[C_SYNACK], order, n, tpl_synack, len_synack, PB_SANDBOX, 0,
		 DP_TO_WORLD);
	case_end(&cs[C_SYNACK]);
	case_begin();
	run_case(&x, &cs[C_ACK3], NULL, n, tpl_ack, len_ack, PB_WORLD, 0, DP_TO_SANDBOX);
	case_end(&cs[C_ACK3]);
	if (x.ct->used != n) {
		fprintf(stderr, "ppbench: %u sessions live after the handshakes, expected %u\n",
			x.ct->used, n);
		return 1;
	}

	/*
	 * Established traffic in random flow order. The clock advances by one second per pass,
	 * so the first packet of each flow in a pass also moves its session to the LRU tail (the
	 * steady state of a flow seen about once a second).
	 */
	for (i = 0; i < n; i++)
		order[i] = i;
	case_begin();
	for (r = 0; r < opt_rounds; r++) {
		shuffle(order, n, &rs);
		x.now++;
		run_case(&x, &cs[C_EST_WORLD], order, n, tpl_ack, len_ack, PB_WORLD, 0,
			 DP_TO_SANDBOX);
	}
	case_end(&cs[C_EST_WORLD]);
	case_begin();
	shuffle(order, n, &rs);
	run_case(&x, &cs[C_EST_SAME], order, n, tpl_ack, len_ack, PB_WORLD, 0, DP_TO_SANDBOX);
	case_end(&cs[C_EST_SAME]);
	case_begin();
	for (r = 0; r < opt_rounds; r++) {
		shuffle(order, n, &rs);
		group_by_slot(order, tmp, n);
		x.now++;
		run_case(&x, &cs[C_EST_SBX], order, n, tpl_rack, len_rack, PB_SANDBOX, 0,
			 DP_TO_WORLD);
	}
	case_end(&cs[C_EST_SBX]);
	case_begin();
	shuffle(order, n, &rs);
	run_case(&x, &cs[C_MISS], order, n, tpl_ack, len_ack, PB_WORLD, 1, DP_DROP);
	case_end(&cs[C_MISS]);
	/* One flow, the last created, 32 times a burst: its session stays in cache. */
	for (i = 0; i < BURST; i++)
		one[i] = n - 1;
	case_begin();
	for (i = 0; i < (n + BURST - 1) / BURST; i++)
		run_case(&x, &cs[C_HOT_WORLD], one, BURST, tpl_ack, len_ack, PB_WORLD, 0,
			 DP_TO_SANDBOX);
	case_end(&cs[C_HOT_WORLD]);
	/* A blind RST flood over every flow: each one dropped, every session still established. */
	case_begin();
	shuffle(order, n, &rs);
	run_case(&x, &cs[C_BLIND_RST], order, n, tpl_brst, len_brst, PB_WORLD, 0, DP_DROP);
	case_end(&cs[C_BLIND_RST]);
	if (st.drop[CVS_DROP_TCP_RST_WINDOW] != n ||
	    x.ct->class_count[CT_C_TCP_ESTABLISHED] != n) {
		fprintf(stderr, "ppbench: the blind RSTs were not all dropped as tcp_rst_window\n");
		return 1;
	}

	/* Full-size segments, their checksums complete and then partial (offload on). */
	case_begin();
	shuffle(order, n, &rs);
	run_case(&x, &cs[C_FULL], order, n, tpl_full, len_full, PB_WORLD, 0, DP_TO_SANDBOX);
	case_end(&cs[C_FULL]);
	/* A complete checksum equal to its pseudo-header sum (1 in 65,536) counts too. */
	done0 = st.c[CVS_WC_CSUM_COMPLETED];
	pb_partial = 1;
	case_begin();
	shuffle(order, n, &rs);
	run_case(&x, &cs[C_PARTIAL], order, n, tpl_full, len_full, PB_WORLD, 0, DP_TO_SANDBOX);
	case_end(&cs[C_PARTIAL]);
	pb_partial = 0;
	if (st.c[CVS_WC_CSUM_COMPLETED] - done0 != n) {
		fprintf(stderr, "ppbench: %" PRIu64 " partial checksums completed, expected %u\n",
			st.c[CVS_WC_CSUM_COMPLETED] - done0, n);
		return 1;
	}

	/* Fragments on every flow: a table that holds a datagram of each (one zone: the world). */
	x.frag = frag_create(&(struct frag_cfg){ .contexts = n, .zone_share = n }, 2);
	if (!x.frag)
		return 1;
	case_begin();
	shuffle(order, n, &rs);
	run_case(&x, &cs[C_FRAG_FIRST], order, n, tpl_ffirst, len_ffirst, PB_WORLD, 0,
		 DP_TO_SANDBOX);
	case_end(&cs[C_FRAG_FIRST]);
	case_begin();
	shuffle(order, n, &rs);
	run_case(&x, &cs[C_FRAG_LATER], order, n, tpl_flater, len_flater, PB_WORLD, 0,
		 DP_TO_SANDBOX);
	case_end(&cs[C_FRAG_LATER]);
	frag_destroy(x.frag);
	x.frag = NULL;

	/*
	 * Egress: every flow's guest SYN opens a SNAT session, into a second, empty table of the
	 * same capacity (the DNAT table stays as it was measured).
	 */
	{
		struct ct_table *dnat = x.ct;

		x.ct = bench_table();
		if (!x.ct)
			return 1;
		slot_order(order, tmp, n);
		case_begin();
		run_case(&x, &cs[C_EGRESS_NEW], order, n, tpl_esyn, len_esyn, PB_SANDBOX, 0,
			 DP_TO_WORLD);
		case_end(&cs[C_EGRESS_NEW]);
		if (x.ct->used != n) {
			fprintf(stderr, "ppbench: %u egress sessions, expected %u\n", x.ct->used, n);
			return 1;
		}
		ct_destroy(x.ct);
		x.ct = dnat;
	}

	/* The hot line a packet touches plus the list links kept apart from it. */
	sess_bytes = sizeof(struct ct_session) + sizeof(struct ct_cold);
	bucket_bytes = (size_t)x.ct->nlines * sizeof(struct ct_line);
	for (i = 0; i < C_MAX; i++)
		bad += cs[i].bad;

	if (opt_json) {
		printf("{\"sessions\":%u,\"capacity\":%u,\"sandboxes\":%u,\"burst\":%d,"
		       "\"session_struct_bytes\":%zu,\"bucket_bytes_per_session\":%.2f,"
		       "\"table_bytes_per_session\":%.2f,\"rss_bytes_per_session\":%.2f,"
		       "\"cases\":{", n, opt_capacity, opt_nsbx, BURST, sess_bytes,
		       (double)bucket_bytes / opt_capacity,
		       (double)(sess_bytes * opt_capacity + bucket_bytes) / opt_capacity,
		       (double)(rss1 - rss0) / n);
		for (i = 0; i < C_MAX; i++)
			printf("%s\"%s\":{\"packets\":%" PRIu64 ",\"ns_per_packet\":%.1f,"
			       "\"unexpected\":%" PRIu64 "}", i ? "," : "", cs[i].name, cs[i].pkts,
			       (double)cs[i].ns / cs[i].pkts, cs[i].bad);
		printf("}}\n");
	} else {
		printf("ppbench: %u live sessions (capacity %u, %u sandboxes), bursts of %d, "
		       "timer cost %" PRIu64 " ns per burst subtracted\n",
		       n, opt_capacity, opt_nsbx, BURST, timer_cost);
		printf("%-16s %12s %10s  %s\n", "case", "packets", "ns/pkt", "what");
		for (i = 0; i < C_MAX; i++)
			printf("%-16s %12" PRIu64 " %10.1f  %s\n", cs[i].name, cs[i].pkts,
			       (double)cs[i].ns / cs[i].pkts, cs[i].what);
		printf("table memory: %zu B session + %.2f B index = %.2f B per session "
		       "(preallocated for capacity); RSS growth while filling: %.2f B per "
		       "session\n", sess_bytes, (double)bucket_bytes / opt_capacity,
		       (double)(sess_bytes * opt_capacity + bucket_bytes) / opt_capacity,
		       (double)(rss1 - rss0) / n);
	}
	if (bad) {
		fprintf(stderr, "ppbench: %" PRIu64 " packets got an unexpected verdict\n", bad);
		return 1;
	}
	ct_destroy(x.ct);
	free(order);
	free(tmp);
	free(one);
	free(alive);
	free(sh.policy);
	free(sh.policy_ver);
	return 0;
}
