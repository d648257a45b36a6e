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
 * host port 20000 + i % nsbx, DNATed to the guest of sandbox slot i % nsbx. With --ipv6 the
 * same flows and cases over IPv6 (ppb6.c), each case named with _v6 behind.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "ct6.h"
#include "frag.h"
#include "pktgen.h"
#include "ppb.h"

static struct dp_cfg cfg;
static struct dp_shared sh;
static struct cvs_stats st;
static _Atomic uint8_t *alive;
static int under_vg;

static uint8_t tpl[T_MAX][FRAME_ROOM];
static uint32_t tlen[T_MAX];
/* Frames leave frame_of() with the partial checksum of a sender's TX offload (pseudo-header). */
static int pb_partial;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	/* --cpu-clock: on a shared machine the wall clock also counts the waits for a CPU. */
	clock_gettime(opt.clock, &ts);
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
	return i % opt.nsbx;
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
	uint32_t c = client_ip(0), n = cfg.node_ip, g = cfg.guest_ip;
	uint16_t cp = client_port(0), hp = htons(HOSTPORT_BASE), gp = htons(CPORT);
	struct tcp_hdr *th = (struct tcp_hdr *)(tpl[T_BRST] + ETH_HLEN_ + 20);

	if (opt.ipv6) {
		ppb6_templates(tpl, tlen, &cfg, c, cp);
		return;
	}
	tlen[T_SYN] = build_frame(tpl[T_SYN], IPPROTO_TCP_, c, n, cp, hp, TCPF_SYN, 6);
	tlen[T_ACK] = build_frame(tpl[T_ACK], IPPROTO_TCP_, c, n, cp, hp, TCPF_ACK, 6);
	tlen[T_SYNACK] = build_frame(tpl[T_SYNACK], IPPROTO_TCP_, g, c, gp, cp,
				     TCPF_SYN | TCPF_ACK, 6);
	tlen[T_RACK] = build_frame(tpl[T_RACK], IPPROTO_TCP_, g, c, gp, cp, TCPF_ACK, 6);
	tlen[T_BRST] = build_frame(tpl[T_BRST], IPPROTO_TCP_, c, n, cp, hp, TCPF_RST, 0);
	th->seq = htonl(1000 + 0x80000000u);
	th->check = 0;
	th->check = l4_csum(tpl[T_BRST] + ETH_HLEN_);
	/*
	 * Fragments of a client's segment on its established flow: the first (an ACK with 12
	 * bytes, MF: a multiple of 8 bytes) and a later one of 64 bytes at offset 64; the client
	 * address tells the datagrams apart.
	 */
	tlen[T_FFIRST] = build_frame(tpl[T_FFIRST], IPPROTO_TCP_, c, n, cp, hp, TCPF_ACK, 12);
	frag_mark(tpl[T_FFIRST], 0x2000);
	tlen[T_FLATER] = build_frame(tpl[T_FLATER], IPPROTO_TCP_, c, n, cp, hp, TCPF_ACK, 44);
	frag_mark(tpl[T_FLATER], 8);
	tlen[T_FULL] = build_frame(tpl[T_FULL], IPPROTO_TCP_, c, n, cp, hp, TCPF_ACK, 1448);
	/* A guest opening a connection to a remote host (egress SNAT); the remote varies. */
	tlen[T_ESYN] = build_frame(tpl[T_ESYN], IPPROTO_TCP_, g, c, gp, cp, TCPF_SYN, 6);
}

/*
 * Write the frame of flow i from a template of flow 0: only the client address and port and
 * the host port change, so the checksums are fixed incrementally.
 */
static uint32_t
frame_of(uint8_t *f, enum pb_tpl t, uint32_t i, enum pb_dir dir, int miss)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + ETH_HLEN_);
	struct tcp_hdr *th = (struct tcp_hdr *)(f + ETH_HLEN_ + 20);
	uint32_t c = client_ip(i), len = tlen[t];
	uint16_t cp = miss ? htons((uint16_t)(60000 + (i & 0xfff))) : client_port(i);
	uint16_t hp = htons((uint16_t)(HOSTPORT_BASE + flow_slot(i)));

	memcpy(f, tpl[t], len);
	if (opt.ipv6) {
		ppb6_frame_of(f, len, c, cp, hp, dir, pb_partial);
		return len;
	}
	if (dir == PB_WORLD) {
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
	if (!opt.per_packet) {
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
	uint32_t *start = calloc(opt.nsbx + 1, sizeof(*start)), i;

	if (!start) {
		perror("calloc");
		exit(1);
	}
	for (i = 0; i < n; i++)
		start[flow_slot(order[i]) + 1]++;
	for (i = 0; i < opt.nsbx; i++)
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
	 enum pb_tpl t, enum pb_dir dir, int miss, uint8_t expect)
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

			lens[k] = frame_of(f[k], t, i, dir, miss);
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

/* One pass over n flows as a case of its own (one callgrind dump). */
static void
run_timed(struct dp_ctx *x, struct pb_case *pc, const uint32_t *order, uint32_t n,
	  enum pb_tpl t, enum pb_dir dir, uint8_t expect)
{
	case_begin();
	run_case(x, pc, order, n, t, dir, 0, expect);
	case_end(pc);
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
	struct ct_table *ct = ct_create(opt.capacity, opt.nsbx, NULL);

	if (!ct) {
		perror("ct_create");
		return NULL;
	}
	ct_set_seed(ct, (opt.seed + 1) * 0x9e3779b97f4a7c15ull);
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

static void *
xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p) {
		perror("calloc");
		exit(1);
	}
	return p;
}

/*
 * Every per-sandbox limit on, high enough never to refuse: new sessions pay for the checks
 * as on a node with its default limits.
 */
static void
setup_limits(void)
{
	uint32_t s;

	sh.slot_lim = xcalloc(opt.nsbx, sizeof(*sh.slot_lim));
	for (s = 0; s < opt.nsbx; s++) {
		atomic_store(&sh.slot_lim[s].sessions, 1u << 30);
		atomic_store(&sh.slot_lim[s].inbound, 1u << 30);
		atomic_store(&sh.slot_lim[s].rate, 1u << 30);
		atomic_store(&sh.slot_lim[s].burst, 1u << 30);
		atomic_store(&sh.slot_lim[s].snat, 1u << 30);
		atomic_store(&sh.slot_lim[s].gen, 1);
	}
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
	alive = xcalloc(opt.nsbx, sizeof(*alive));
	sh.slot_alive = alive;
	sh.slot_mac = xcalloc(opt.nsbx, sizeof(*sh.slot_mac));
	sh.guest = xcalloc(opt.nsbx, sizeof(*sh.guest));
	sh.max_sandboxes = opt.nsbx;
	for (s = 0; s < opt.nsbx; s++) {
		atomic_store(&alive[s], 1);
		atomic_store(&sh.slot_mac[s], dp_mac_pack(gm));
		dp_guest_set(&sh.guest[s], cfg.guest_ip, cfg.gw_ip, cfg.gw_mac);
		atomic_store(&sh.hostport[HOSTPORT_BASE + s], dp_hostport_entry(s, CPORT));
	}
	/* Egress: remotes are off-link and go to a default gateway with a known MAC. */
	cfg.world_net = ip4("198.18.0.0");
	cfg.world_mask = ip4("255.255.255.0");
	dp_nh_store(&sh.nh, 0, wm);
	sh.policy = xcalloc(opt.nsbx, sizeof(*sh.policy));
	sh.policy_ver = xcalloc(opt.nsbx, sizeof(*sh.policy_ver));
	setup_limits();
	if (opt.ipv6)
		ppb6_setup(&cfg, &sh, gm);
	memset(x, 0, sizeof(*x));
	x->cfg = &cfg;
	x->sh = &sh;
	x->st = &st;
	x->bucket = xcalloc(opt.nsbx, sizeof(*x->bucket));
	x->slot_st = xcalloc(opt.nsbx, sizeof(*x->slot_st));
	x->now = 100;
	x->snat_lo = 30000;
	x->snat_hi = 60999;
}

/* The tables of the family under test: sessions live, established. */
static uint32_t
live(const struct dp_ctx *x)
{
	return opt.ipv6 ? x->ct6->used : x->ct->used;
}

static uint32_t
established(const struct dp_ctx *x)
{
	return (opt.ipv6 ? x->ct6->class_count : x->ct->class_count)[CT_C_TCP_ESTABLISHED];
}

/* Both tables exist (an IPv6 flow's limits count IPv4 sessions too); both hashed by --seed. */
static int
tables_new(struct dp_ctx *x)
{
	x->ct = bench_table();
	if (x->ct && opt.ipv6)
		x->ct6 = ppb6_table();
	return x->ct && (!opt.ipv6 || x->ct6) ? 0 : -1;
}

static void
tables_free(struct dp_ctx *x)
{
	ct_destroy(x->ct);
	ct6_destroy(x->ct6);
	x->ct = NULL;
	x->ct6 = NULL;
}

/* The three-way handshake of every flow, in arrival order. */
static int
pb_handshakes(struct dp_ctx *x, struct pb_case *cs, uint32_t *order, uint32_t *tmp,
	      struct pb_summary *sm)
{
	uint32_t n = opt.sessions;
	long rss0 = rss_bytes();

	run_timed(x, &cs[C_NEW], NULL, n, T_SYN, PB_WORLD, DP_TO_SANDBOX);
	sm->rss_growth = rss_bytes() - rss0;
	slot_order(order, tmp, n);
	run_timed(x, &cs[C_SYNACK], order, n, T_SYNACK, PB_SANDBOX, DP_TO_WORLD);
	run_timed(x, &cs[C_ACK3], NULL, n, T_ACK, PB_WORLD, DP_TO_SANDBOX);
	if (live(x) != n) {
		fprintf(stderr, "ppbench: %u sessions live after the handshakes, expected %u\n",
			live(x), n);
		return -1;
	}
	return 0;
}

/*
 * Established traffic in random flow order. The clock advances by one second per pass, so
 * the first packet of each flow in a pass also moves its session to the LRU tail (the steady
 * state of a flow seen about once a second).
 */
static void
pb_established(struct dp_ctx *x, struct pb_case *cs, uint32_t *order, uint32_t *tmp,
	       uint32_t *one, uint64_t *rs)
{
	uint32_t n = opt.sessions, i, r;

	for (i = 0; i < n; i++)
		order[i] = i;
	case_begin();
	for (r = 0; r < opt.rounds; r++) {
		shuffle(order, n, rs);
		x->now++;
		run_case(x, &cs[C_EST_WORLD], order, n, T_ACK, PB_WORLD, 0, DP_TO_SANDBOX);
	}
	case_end(&cs[C_EST_WORLD]);
	shuffle(order, n, rs);
	run_timed(x, &cs[C_EST_SAME], order, n, T_ACK, PB_WORLD, DP_TO_SANDBOX);
	case_begin();
	for (r = 0; r < opt.rounds; r++) {
		shuffle(order, n, rs);
		group_by_slot(order, tmp, n);
		x->now++;
		run_case(x, &cs[C_EST_SBX], order, n, T_RACK, PB_SANDBOX, 0, DP_TO_WORLD);
	}
	case_end(&cs[C_EST_SBX]);
	case_begin();
	shuffle(order, n, rs);
	run_case(x, &cs[C_MISS], order, n, T_ACK, PB_WORLD, 1, DP_DROP);
	case_end(&cs[C_MISS]);
	/* One flow, the last created, 32 times a burst: its session stays in cache. */
	for (i = 0; i < BURST; i++)
		one[i] = n - 1;
	case_begin();
	for (i = 0; i < (n + BURST - 1) / BURST; i++)
		run_case(x, &cs[C_HOT_WORLD], one, BURST, T_ACK, PB_WORLD, 0, DP_TO_SANDBOX);
	case_end(&cs[C_HOT_WORLD]);
}

/* A blind RST flood over every flow: each one dropped, every session still established. */
static int
pb_blind(struct dp_ctx *x, struct pb_case *cs, uint32_t *order, uint64_t *rs)
{
	uint32_t n = opt.sessions;

	shuffle(order, n, rs);
	run_timed(x, &cs[C_BLIND_RST], order, n, T_BRST, PB_WORLD, DP_DROP);
	if (st.drop[CVS_DROP_TCP_RST_WINDOW] != n || established(x) != n) {
		fprintf(stderr, "ppbench: the blind RSTs were not all dropped as tcp_rst_window\n");
		return -1;
	}
	return 0;
}

/* Full-size segments, their checksums complete and then partial (offload on). */
static int
pb_checksums(struct dp_ctx *x, struct pb_case *cs, uint32_t *order, uint64_t *rs)
{
	uint32_t n = opt.sessions;
	uint64_t done0;

	shuffle(order, n, rs);
	run_timed(x, &cs[C_FULL], order, n, T_FULL, PB_WORLD, DP_TO_SANDBOX);
	/* A complete checksum equal to its pseudo-header sum (1 in 65,536) counts too. */
	done0 = st.c[CVS_WC_CSUM_COMPLETED];
	pb_partial = 1;
	shuffle(order, n, rs);
	run_timed(x, &cs[C_PARTIAL], order, n, T_FULL, PB_WORLD, DP_TO_SANDBOX);
	pb_partial = 0;
	if (st.c[CVS_WC_CSUM_COMPLETED] - done0 != n) {
		fprintf(stderr, "ppbench: %" PRIu64 " partial checksums completed, expected %u\n",
			st.c[CVS_WC_CSUM_COMPLETED] - done0, n);
		return -1;
	}
	return 0;
}

/* Fragments on every flow: a table that holds a datagram of each (one zone: the world). */
static int
pb_frags(struct dp_ctx *x, struct pb_case *cs, uint32_t *order, uint64_t *rs)
{
	uint32_t n = opt.sessions;

	if (opt.ipv6) {
		cs[C_FRAG_FIRST].skipped = cs[C_FRAG_LATER].skipped = 1;
		return 0;
	}
	x->frag = frag_create(&(struct frag_cfg){ .contexts = n, .zone_share = n }, 2);
	if (!x->frag)
		return -1;
	shuffle(order, n, rs);
	run_timed(x, &cs[C_FRAG_FIRST], order, n, T_FFIRST, PB_WORLD, DP_TO_SANDBOX);
	shuffle(order, n, rs);
	run_timed(x, &cs[C_FRAG_LATER], order, n, T_FLATER, PB_WORLD, DP_TO_SANDBOX);
	frag_destroy(x->frag);
	x->frag = NULL;
	return 0;
}

/*
 * Egress: every flow's guest SYN opens a SNAT session, into second, empty tables of the
 * same capacity (the DNAT tables stay as they were measured).
 */
static int
pb_egress(struct dp_ctx *x, struct pb_case *cs, uint32_t *order, uint32_t *tmp)
{
	struct dp_ctx e = *x;
	uint32_t n = opt.sessions;
	int ret = 0;

	if (tables_new(&e))
		return -1;
	slot_order(order, tmp, n);
	run_timed(&e, &cs[C_EGRESS_NEW], order, n, T_ESYN, PB_SANDBOX, DP_TO_WORLD);
	if (live(&e) != n) {
		fprintf(stderr, "ppbench: %u egress sessions, expected %u\n", live(&e), n);
		ret = -1;
	}
	tables_free(&e);
	return ret;
}

static void
pb_summarise(const struct dp_ctx *x, struct pb_summary *sm)
{
	sm->timer_cost = timer_cost;
	/* The hot line a packet touches plus the list links kept apart from it. */
	if (opt.ipv6) {
		sm->sess_bytes = sizeof(struct ct6_session) + sizeof(struct ct_link);
		sm->bucket_bytes = (size_t)x->ct6->nlines * sizeof(struct ct_line);
	} else {
		sm->sess_bytes = sizeof(struct ct_session) + sizeof(struct ct_cold);
		sm->bucket_bytes = (size_t)x->ct->nlines * sizeof(struct ct_line);
	}
}

static struct pb_case cases[C_MAX] = {
	[C_NEW] = { "new_session", "SYN creating a session (table 0 -> N)", 0, 0, 0, 0 },
	[C_SYNACK] = { "synack", "guest SYN+ACK (sandbox -> world)", 0, 0, 0, 0 },
	[C_ACK3] = { "handshake_ack", "client ACK making the session established", 0, 0, 0, 0 },
	[C_EST_WORLD] = { "est_world", "established, world -> sandbox (DNAT), random flow",
			  0, 0, 0, 0 },
	[C_EST_SAME] = { "est_world_nolru", "as est_world, flows already seen this second "
			 "(no LRU move)", 0, 0, 0, 0 },
	[C_EST_SBX] = { "est_sandbox", "established, sandbox -> world (reply), random flow",
			0, 0, 0, 0 },
	[C_MISS] = { "lookup_miss", "ACK matching no session (dropped)", 0, 0, 0, 0 },
	[C_HOT_WORLD] = { "est_world_1flow", "established, one flow (cache hot)", 0, 0, 0, 0 },
	[C_BLIND_RST] = { "blind_rst", "RST outside the window of a random flow (dropped, "
			  "tcp_rst_window)", 0, 0, 0, 0 },
	[C_FULL] = { "est_world_1500", "as est_world, 1,500-byte packets", 0, 0, 0, 0 },
	[C_PARTIAL] = { "est_world_1500_partial", "as est_world_1500 with the partial checksum "
			"of a sender's TX offload, completed", 0, 0, 0, 0 },
	[C_FRAG_FIRST] = { "frag_first", "first fragment of a client's segment on its flow: "
			   "translated, its datagram recorded (frag.h)", 0, 0, 0, 0 },
	[C_FRAG_LATER] = { "frag_later", "later fragment of that datagram: translated as its "
			   "first was", 0, 0, 0, 0 },
	[C_EGRESS_NEW] = { "egress_new_session", "guest SYN to a remote host: SNAT port and "
			   "session (table 0 -> N)", 0, 0, 0, 0 },
};

/* IPv6 cases are named as their IPv4 counterparts with _v6 behind. */
static void
name_cases(void)
{
	static char names[C_MAX][32];
	int i;

	for (i = 0; opt.ipv6 && i < C_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "%s_v6", cases[i].name);
		cases[i].name = names[i];
	}
}

int
main(int argc, char **argv)
{
	uint32_t *order, *tmp, *one, i, n;
	struct pb_summary sm = { 0 };
	uint64_t rs, bad = 0;
	struct dp_ctx x;

	if (pb_parse_args(argc, argv))
		return 2;
	under_vg = RUNNING_ON_VALGRIND ? 1 : 0;
	rs = opt.seed;
	n = opt.sessions;
	setup(&x);
	templates_init();
	name_cases();
	timer_calibrate();
	order = xcalloc(n, sizeof(*order));
	tmp = xcalloc(n, sizeof(*tmp));
	one = xcalloc(BURST, sizeof(*one));
	if (tables_new(&x) || pb_handshakes(&x, cases, order, tmp, &sm))
		return 1;
	pb_established(&x, cases, order, tmp, one, &rs);
	if (pb_blind(&x, cases, order, &rs) || pb_checksums(&x, cases, order, &rs) ||
	    pb_frags(&x, cases, order, &rs) || pb_egress(&x, cases, order, tmp))
		return 1;
	pb_summarise(&x, &sm);
	for (i = 0; i < C_MAX; i++)
		bad += cases[i].bad;
	pb_report(cases, &sm);
	if (bad) {
		fprintf(stderr, "ppbench: %" PRIu64 " packets got an unexpected verdict\n", bad);
		return 1;
	}
	tables_free(&x);
	free(order);
	free(tmp);
	free(one);
	free(alive);
	free(sh.policy);
	free(sh.policy_ver);
	return 0;
}
