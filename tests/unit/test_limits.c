/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-sandbox limits in the pipeline: the token bucket, the session limit, SNAT ports towards
 * one endpoint and the inbound limit refuse the sandbox over its limit (counted by reason and
 * under its slot) while another sandbox opens the same flows.
 */
#include "t.h"
#include "pktgen.h"
#include "dp.h"

#define HOG	3
#define VICTIM	4

static struct dp_cfg cfg;
static struct dp_shared sh;
static _Atomic uint8_t alive[8];
static _Atomic(const struct dp_policy *) pols[8];
static _Atomic uint16_t polver[8];
static _Atomic uint32_t slot_ip[8];
static _Atomic uint64_t slot_mac[8];
static _Atomic uint16_t ip2slot[64];
static struct dp_limit lim[8];
static struct dp_bucket bucket[8];
static struct cvs_port_stats pst[8];
static struct cvs_stats st;
static struct dp_ctx x;

static void
setup(void)
{
	static const uint8_t gm[6] = { 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc };
	static const uint8_t gw[6] = { 0x20, 0x90, 0x6f, 0xcf, 0xcf, 0xcf };
	static const uint8_t nh[6] = { 2, 0, 0, 0, 0, 0xfe };

	cfg.node_ip = ip4("198.18.0.1");
	cfg.guest_ip = ip4("169.254.68.6");
	cfg.gw_ip = ip4("169.254.68.5");
	cfg.world_net = ip4("198.18.0.0");
	cfg.world_mask = ip4("255.255.255.0");
	memcpy(cfg.guest_mac, gm, 6);
	memcpy(cfg.gw_mac, gw, 6);
	sh.slot_alive = alive;
	sh.policy = pols;
	sh.policy_ver = polver;
	sh.slot_ip = slot_ip;
	sh.slot_mac = slot_mac;
	sh.slot_lim = lim;
	sh.ip2slot = ip2slot;
	sh.ip2slot_size = 64;
	sh.max_sandboxes = 8;
	for (int i = 0; i < 8; i++) {
		atomic_store(&slot_mac[i], dp_mac_pack(gm));
		atomic_store(&alive[i], 1);
	}
	atomic_store(&sh.hostport[20005], dp_hostport_entry(HOG, 8080));
	atomic_store(&sh.hostport[20006], dp_hostport_entry(VICTIM, 8080));
	dp_nh_store(&sh.nh, 0, nh);
	x.cfg = &cfg;
	x.sh = &sh;
	x.st = &st;
	x.slot_st = pst;
	x.bucket = bucket;
	x.snat_lo = 40000;
	x.snat_hi = 40255;
}

static void
fresh(void)
{
	ct_destroy(x.ct);
	x.ct = ct_create(4096, 8, NULL);
	memset(&st, 0, sizeof(st));
	memset(pst, 0, sizeof(pst));
	memset(bucket, 0, sizeof(bucket));
	memset(lim, 0, sizeof(lim));
	x.now = 100;
}

static void
set_limits(uint32_t slot, uint32_t sessions, uint32_t inbound, uint32_t rate, uint32_t burst,
	   uint32_t snat)
{
	static uint32_t gen;

	atomic_store(&lim[slot].sessions, sessions);
	atomic_store(&lim[slot].inbound, inbound);
	atomic_store(&lim[slot].rate, rate);
	atomic_store(&lim[slot].burst, burst);
	atomic_store(&lim[slot].snat, snat);
	atomic_store(&lim[slot].gen, ++gen);
}

/* A new flow from a guest; returns the action (r.drop says why when dropped). */
static int
open_from(uint32_t slot, uint8_t proto, const char *dst, uint16_t gport, uint16_t dport,
	  struct dp_result *r)
{
	uint8_t f[256];
	uint32_t n = build_frame(f, proto, cfg.guest_ip, ip4(dst), htons(gport), htons(dport),
				 proto == IPPROTO_TCP_ ? TCPF_SYN : 0, 0);

	memset(r, 0, sizeof(*r));
	dp_sandbox_rx(&x, slot, f, n, r);
	return r->action;
}

/* The bucket: a burst, then 'rate' a second of the worker clock, never more than the burst. */
static void
test_bucket(void)
{
	struct dp_result r;
	uint16_t p = 1000;
	int i;

	fresh();
	set_limits(HOG, 0, 0, 5, 20, 0);
	for (i = 0; i < 20; i++)
		CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.1.1", p++, 53, &r), DP_TO_WORLD);
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.1.1", p++, 53, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_RATE);
	/* The victim has its own bucket, no limits at all here. */
	for (i = 0; i < 50; i++)
		CHECK_EQ(open_from(VICTIM, IPPROTO_UDP_, "198.19.1.1", p++, 53, &r), DP_TO_WORLD);
	/* One second: five tokens. */
	x.now++;
	for (i = 0; i < 5; i++)
		CHECK_EQ(open_from(HOG, IPPROTO_TCP_, "198.19.1.2", p++, 80, &r), DP_TO_WORLD);
	CHECK_EQ(open_from(HOG, IPPROTO_TCP_, "198.19.1.2", p++, 80, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_RATE);
	/* A long pause refills to the burst, not beyond. */
	x.now += 1000;
	for (i = 0; i < 20; i++)
		CHECK_EQ(open_from(HOG, IPPROTO_ICMP_, "198.19.1.3", p++, 0, &r), DP_TO_WORLD);
	CHECK_EQ(open_from(HOG, IPPROTO_ICMP_, "198.19.1.3", p++, 0, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_RATE);
	CHECK_EQ(st.drop[CVS_DROP_LIMIT_RATE], 3);
	CHECK_EQ(pst[HOG].c[CVS_PC_LIM_RATE], 3);
	CHECK_EQ(pst[VICTIM].c[CVS_PC_LIM_RATE], 0);
	/* New limits (a new generation) start the bucket full again. */
	set_limits(HOG, 0, 0, 5, 20, 0);
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.1.1", p++, 53, &r), DP_TO_WORLD);
}

/* The session limit counts what the sandbox holds: an expired flow frees its place. */
static void
test_sessions(void)
{
	struct dp_result r;
	uint16_t p = 2000;
	int i;

	fresh();
	set_limits(HOG, 10, 0, 0, 0, 0);
	for (i = 0; i < 10; i++)
		CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.2.1", p++, 53, &r), DP_TO_WORLD);
	CHECK_EQ(open_from(HOG, IPPROTO_TCP_, "198.19.2.2", p++, 80, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_SESSIONS);
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.2.2", p++, 53, &r), DP_DROP);
	CHECK_EQ(open_from(VICTIM, IPPROTO_TCP_, "198.19.2.2", p++, 80, &r), DP_TO_WORLD);
	CHECK_EQ(pst[HOG].c[CVS_PC_LIM_SESSIONS], 2);
	CHECK_EQ(st.drop[CVS_DROP_LIMIT_SESSIONS], 2);
	/* Unreplied UDP expires after 30 s: the sandbox may open again. */
	x.now += 31;
	ct_expire(x.ct, x.now, 1000);
	CHECK_EQ(ct_zone_opened(x.ct, HOG + 1), 0);
	CHECK_EQ(open_from(HOG, IPPROTO_TCP_, "198.19.2.2", p++, 80, &r), DP_TO_WORLD);
	/* Removing the sandbox's sessions (flush) frees them too. */
	for (i = 0; i < 9; i++)
		open_from(HOG, IPPROTO_UDP_, "198.19.2.1", p++, 53, &r);
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.2.1", p++, 53, &r), DP_DROP);
	ct_flush_zone(x.ct, HOG + 1);
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.2.1", p++, 53, &r), DP_TO_WORLD);
}

/*
 * SNAT ports towards one endpoint: the hog gets its share of the 256-port range and no more,
 * other endpoints stay open to it, and the victim still gets ports towards that endpoint.
 */
static void
test_snat(void)
{
	struct dp_result r;
	uint16_t p = 3000;
	int i, ok = 0;

	fresh();
	set_limits(HOG, 0, 0, 0, 0, 32);
	for (i = 0; i < 300; i++)
		ok += open_from(HOG, IPPROTO_UDP_, "198.19.3.53", p++, 53, &r) == DP_TO_WORLD;
	CHECK_EQ(ok, 32);
	CHECK_EQ(pst[HOG].c[CVS_PC_LIM_SNAT], 300 - 32);
	CHECK_EQ(st.drop[CVS_DROP_LIMIT_SNAT], 300 - 32);
	CHECK_EQ(st.drop[CVS_DROP_SNAT_EXHAUSTED], 0);
	/* Another port of the same address is another endpoint. */
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.3.53", p++, 5353, &r), DP_TO_WORLD);
	for (i = 0; i < 100; i++)
		CHECK_EQ(open_from(VICTIM, IPPROTO_UDP_, "198.19.3.53", p++, 53, &r),
			 DP_TO_WORLD);
	/* Without the limit the hog took the whole range from the victim. */
	fresh();
	for (i = 0; i < 300; i++)
		open_from(HOG, IPPROTO_UDP_, "198.19.3.53", p++, 53, &r);
	CHECK_EQ(open_from(VICTIM, IPPROTO_UDP_, "198.19.3.53", p++, 53, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_SNAT_EXHAUSTED);
}

/* Inbound: many world clients at the hog's host port fill its inbound share only. */
static void
test_inbound(void)
{
	struct dp_result r;
	uint8_t f[256];
	uint32_t n, i, ok = 0;

	fresh();
	set_limits(HOG, 0, 16, 0, 0, 0);
	for (i = 0; i < 64; i++) {
		n = build_frame(f, IPPROTO_TCP_, htonl(ntohl(ip4("198.18.0.100")) + i), cfg.node_ip,
				htons((uint16_t)(5000 + i)), htons(20005), TCPF_SYN, 0);
		memset(&r, 0, sizeof(r));
		dp_world_rx(&x, f, n, &r);
		ok += r.action == DP_TO_SANDBOX;
	}
	CHECK_EQ(ok, 16);
	CHECK_EQ(pst[HOG].c[CVS_PC_LIM_INBOUND], 48);
	CHECK_EQ(st.drop[CVS_DROP_LIMIT_INBOUND], 48);
	/* The hog itself may still open flows: inbound and outbound are counted apart. */
	CHECK_EQ(open_from(HOG, IPPROTO_TCP_, "198.19.4.1", 999, 80, &r), DP_TO_WORLD);
	n = build_frame(f, IPPROTO_TCP_, ip4("198.18.0.99"), cfg.node_ip, htons(4000),
			htons(20006), TCPF_SYN, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK_EQ(r.action, DP_TO_SANDBOX);
	CHECK_EQ(r.slot, VICTIM);
}

int
main(void)
{
	setup();
	test_bucket();
	test_sessions();
	test_snat();
	test_inbound();
	ct_destroy(x.ct);
	return t_done("test_limits");
}
