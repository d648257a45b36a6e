/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-sandbox limits in the pipeline (on the shared bed, dpbed.h): the token bucket, the
 * session limit, SNAT ports towards one endpoint (egress and hairpin), the inbound limit
 * (world, hairpin and host flows) refuse the sandbox over its limit, counted by reason and
 * under its slot, while another sandbox opens the same flows. Closed sessions do not count,
 * and their SNAT ports go to new SYNs when no port is free (the takeover).
 */
#include "t.h"
#include "ct_counts.h"
#include "dpbed.h"

#define HOG	3
#define VICTIM	4
#define OTHER	5

static struct dpbed b;

/* An empty table; the hog exposes 8080 on BED_HP_A, the victim on BED_HP_B. */
static void
fresh(void)
{
	CHECK_EQ(bed_table(&b), 0);
	for (uint32_t i = HOG; i <= OTHER; i++) {
		atomic_store(&b.alive[i], 1);
		atomic_store(&b.slot_ip[i], htonl(ntohl(b.cfg.sbx_net) + i + 1));
		atomic_store(&b.ip2slot[i + 1], (uint16_t)(i + 1));
	}
	atomic_store(&b.sh->hostport[BED_HP_A], dp_hostport_entry(HOG, 8080));
	atomic_store(&b.sh->hostport[BED_HP_B], dp_hostport_entry(VICTIM, 8080));
	b.x.snat_lo = 40000;
	b.x.snat_hi = 40255;
	b.x.now = 100;
}

static void
set_limits(uint32_t slot, uint32_t sessions, uint32_t inbound, uint32_t rate, uint32_t burst,
	   uint32_t snat)
{
	static uint32_t gen;
	struct dp_limit *l = &b.lim[slot];

	atomic_store(&l->sessions, sessions);
	atomic_store(&l->inbound, inbound);
	atomic_store(&l->rate, rate);
	atomic_store(&l->burst, burst);
	atomic_store(&l->snat, snat);
	atomic_store(&l->gen, ++gen);
}

/*
 * One TCP segment through the port of 'slot' (-1: the world, -2: cube-dev) with chosen
 * sequence and ack numbers; returns the action (r->drop says why when dropped).
 */
static int
seg(int slot, uint32_t s, uint32_t d, uint16_t sp, uint16_t dp, uint8_t flags, uint32_t seq,
    uint32_t ack, struct dp_result *r)
{
	uint8_t f[256];
	struct tcp_hdr *th = (struct tcp_hdr *)(f + 34);
	uint32_t n = build_frame(f, IPPROTO_TCP_, s, d, htons(sp), htons(dp), flags, 0);

	th->seq = htonl(seq);
	th->ack = htonl(ack);
	th->check = 0;
	th->check = l4_csum(f + 14);
	memset(r, 0, sizeof(*r));
	if (slot == -1)
		dp_world_rx(&b.x, f, n, r);
	else if (slot == -2)
		dp_host_rx(&b.x, f, n, r);
	else
		dp_sandbox_rx(&b.x, (uint32_t)slot, f, n, r);
	return r->action;
}

/* A new flow from a guest; returns the action. */
static int
open_from(uint32_t slot, uint8_t proto, const char *dst, uint16_t gport, uint16_t dport,
	  struct dp_result *r)
{
	uint8_t f[256];
	uint32_t n = build_frame(f, proto, b.cfg.guest_ip, ip4(dst), htons(gport), htons(dport),
				 proto == IPPROTO_TCP_ ? TCPF_SYN : 0, 0);

	memset(r, 0, sizeof(*r));
	dp_sandbox_rx(&b.x, slot, f, n, r);
	return r->action;
}

/* n new flows of 'slot' that must pass, then one that is refused for 'why'. */
static void
upto(uint32_t slot, uint8_t proto, const char *dst, uint16_t dport, int n, uint16_t *port,
     enum cvs_drop why)
{
	struct dp_result r;
	int ok = 0;

	for (int i = 0; i < n; i++)
		ok += open_from(slot, proto, dst, (*port)++, dport, &r) == DP_TO_WORLD;
	CHECK_EQ(ok, n);
	CHECK_EQ(open_from(slot, proto, dst, (*port)++, dport, &r), DP_DROP);
	CHECK_EQ(r.drop, why);
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
	upto(HOG, IPPROTO_UDP_, "198.19.1.1", 53, 20, &p, CVS_DROP_LIMIT_RATE);
	/* The victim has its own bucket, no limits at all here. */
	for (i = 0; i < 50; i++)
		CHECK_EQ(open_from(VICTIM, IPPROTO_UDP_, "198.19.1.1", p++, 53, &r), DP_TO_WORLD);
	/* One second: five tokens. A long pause refills to the burst, not beyond. */
	b.x.now++;
	upto(HOG, IPPROTO_TCP_, "198.19.1.2", 80, 5, &p, CVS_DROP_LIMIT_RATE);
	b.x.now += 1000;
	upto(HOG, IPPROTO_ICMP_, "198.19.1.3", 0, 20, &p, CVS_DROP_LIMIT_RATE);
	CHECK_EQ(b.st.drop[CVS_DROP_LIMIT_RATE], 3);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_RATE], 3);
	CHECK_EQ(b.pst[VICTIM].c[CVS_PC_LIM_RATE], 0);
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
	upto(HOG, IPPROTO_UDP_, "198.19.2.1", 53, 10, &p, CVS_DROP_LIMIT_SESSIONS);
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.2.2", p++, 53, &r), DP_DROP);
	CHECK_EQ(open_from(VICTIM, IPPROTO_TCP_, "198.19.2.2", p++, 80, &r), DP_TO_WORLD);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_SESSIONS], 2);
	CHECK_EQ(b.st.drop[CVS_DROP_LIMIT_SESSIONS], 2);
	/* Unreplied UDP expires after 30 s: the sandbox may open again. */
	b.x.now += 31;
	ct_expire(b.x.ct, b.x.now, 1000);
	CHECK_EQ(ct_zone_opened(b.x.ct, HOG + 1), 0);
	CHECK_EQ(open_from(HOG, IPPROTO_TCP_, "198.19.2.2", p++, 80, &r), DP_TO_WORLD);
	/* Removing the sandbox's sessions (flush) frees them too. */
	for (i = 0; i < 9; i++)
		open_from(HOG, IPPROTO_UDP_, "198.19.2.1", p++, 53, &r);
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.2.1", p++, 53, &r), DP_DROP);
	ct_flush_zone(b.x.ct, HOG + 1);
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.2.1", p++, 53, &r), DP_TO_WORLD);
}

/*
 * One world client connection to the hog's exposed port, opened and closed in order (the
 * client closes first: the session ends in TIME_WAIT). False when a segment did not pass.
 */
static bool
short_conn(uint32_t client, uint16_t cport)
{
	uint32_t node = b.cfg.node_ip, g = b.cfg.guest_ip, c = 1000, s = 7000;
	struct dp_result r;

	return seg(-1, client, node, cport, BED_HP_A, TCPF_SYN, c, 0, &r) == DP_TO_SANDBOX &&
	       seg(HOG, g, client, 8080, cport, TCPF_SYN | TCPF_ACK, s, c + 1, &r) ==
	       DP_TO_WORLD &&
	       seg(-1, client, node, cport, BED_HP_A, TCPF_ACK, c + 1, s + 1, &r) ==
	       DP_TO_SANDBOX &&
	       seg(-1, client, node, cport, BED_HP_A, TCPF_FIN | TCPF_ACK, c + 1, s + 1, &r) ==
	       DP_TO_SANDBOX &&
	       seg(HOG, g, client, 8080, cport, TCPF_FIN | TCPF_ACK, s + 1, c + 2, &r) ==
	       DP_TO_WORLD &&
	       seg(-1, client, node, cport, BED_HP_A, TCPF_ACK, c + 2, s + 2, &r) ==
	       DP_TO_SANDBOX;
}

/*
 * Closed sessions do not count: a sandbox serving many short connections with an inbound
 * share of 16 never meets it, and one opening and resetting many flows never meets its
 * session limit; 16 half-open sessions still fill the inbound share.
 */
static void
test_closed(void)
{
	uint32_t client = ip4("198.18.0.50"), remote = ip4("198.19.6.1"), i, ok = 0;
	struct dp_result r;
	uint16_t p = 6000;

	fresh();
	set_limits(HOG, 4, 16, 0, 0, 0);
	for (i = 0; i < 500; i++)
		ok += short_conn(client, (uint16_t)(10000 + i));
	CHECK_EQ(ok, 500);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_TIME_WAIT], 500);
	CHECK_EQ(ct_zone_inbound(b.x.ct, HOG + 1), 0);
	CHECK_EQ(b.st.drop[CVS_DROP_LIMIT_INBOUND], 0);
	/* The hog's own flows, aborted by its guest: CLOSE, out of its count of 4. */
	for (i = 0, ok = 0; i < 50; i++, p++)
		ok += seg(HOG, b.cfg.guest_ip, remote, p, 80, TCPF_SYN, 1000, 0, &r) ==
		      DP_TO_WORLD &&
		      seg(HOG, b.cfg.guest_ip, remote, p, 80, TCPF_RST, 1001, 0, &r) == DP_TO_WORLD;
	CHECK_EQ(ok, 50);
	CHECK_EQ(ct_zone_opened(b.x.ct, HOG + 1), 0);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_CLOSE], 50);
	/* Half-open sessions are live: the 17th is refused under the hog. */
	for (i = 0, ok = 0; i < 20; i++)
		ok += seg(-1, client + 1 + i, b.cfg.node_ip, 5000, BED_HP_A, TCPF_SYN, 1, 0, &r) ==
		      DP_TO_SANDBOX;
	CHECK_EQ(ok, 16);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_INBOUND], 4);
}

/*
 * A closed session revived (the guest's SYN on a TIME_WAIT session of its exposed port)
 * comes back into the count, under the limit like a new one: refused when the share is full.
 */
static void
test_revive(void)
{
	uint32_t client = ip4("198.18.0.60"), g = b.cfg.guest_ip;
	struct dp_result r;

	fresh();
	set_limits(HOG, 0, 1, 0, 0, 0);
	CHECK(short_conn(client, 11000));
	CHECK(short_conn(client, 11001));
	CHECK_EQ(ct_zone_inbound(b.x.ct, HOG + 1), 0);
	CHECK_EQ(seg(HOG, g, client, 8080, 11000, TCPF_SYN, 90000, 0, &r), DP_TO_WORLD);
	CHECK_EQ(ct_zone_inbound(b.x.ct, HOG + 1), 1);
	CHECK_EQ(seg(HOG, g, client, 8080, 11001, TCPF_SYN, 90000, 0, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_INBOUND);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_INBOUND], 1);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_TIME_WAIT], 1);
	CHECK_EQ(ct_zone_inbound(b.x.ct, HOG + 1), 1);
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
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_SNAT], 300 - 32);
	CHECK_EQ(b.st.drop[CVS_DROP_LIMIT_SNAT], 300 - 32);
	CHECK_EQ(b.st.drop[CVS_DROP_SNAT_EXHAUSTED], 0);
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

/* Hairpin SNAT ports towards the victim's exposed port count in the hog's share too. */
static void
test_hairpin_snat(void)
{
	struct dp_result r;
	uint32_t node = b.cfg.node_ip, g = b.cfg.guest_ip;
	uint16_t p = 4000;
	int i, ok = 0;

	fresh();
	set_limits(HOG, 0, 0, 0, 0, 32);
	for (i = 0; i < 300; i++)
		ok += seg(HOG, g, node, p++, BED_HP_B, TCPF_SYN, 1, 0, &r) == DP_TO_SANDBOX;
	CHECK_EQ(ok, 32);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_SNAT], 300 - 32);
	CHECK_EQ(b.st.drop[CVS_DROP_SNAT_EXHAUSTED], 0);
	/* Another sandbox still reaches the victim's port; its egress share is not touched. */
	CHECK_EQ(seg(OTHER, g, node, p++, BED_HP_B, TCPF_SYN, 1, 0, &r), DP_TO_SANDBOX);
	CHECK_EQ(open_from(HOG, IPPROTO_TCP_, "198.19.4.1", p++, 80, &r), DP_TO_WORLD);
	/* Without the limit the hog took every port towards it. */
	fresh();
	for (i = 0; i < 300; i++)
		seg(HOG, g, node, p++, BED_HP_B, TCPF_SYN, 1, 0, &r);
	CHECK_EQ(seg(OTHER, g, node, p++, BED_HP_B, TCPF_SYN, 1, 0, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_SNAT_EXHAUSTED);
}

/* The session of the egress flow of 'slot' from gport to remote:80, NULL when none. */
static struct ct_session *
sess_of(uint32_t slot, uint32_t remote, uint16_t gport)
{
	struct ct_tuple t;
	int d;

	ct_tuple_set(&t, b.cfg.guest_ip, remote, htons(gport), htons(80), (uint16_t)(slot + 1),
		     IPPROTO_TCP_);
	return ct_lookup(b.x.ct, &t, &d);
}

/* The TCP state of that session, CT_TCP_MAX when none. */
static uint8_t
state_of(uint32_t slot, uint32_t remote, uint16_t gport)
{
	struct ct_session *s = sess_of(slot, remote, gport);

	return s ? s->state : CT_TCP_MAX;
}

/* Its SNAT port (host order), 0 when none. */
static uint16_t
snat_of(uint32_t slot, uint32_t remote, uint16_t gport)
{
	struct ct_session *s = sess_of(slot, remote, gport);

	return s ? ntohs(s->t[1].dport) : 0;
}

/*
 * A connection of the guest of 'slot' from gport to remote:80, opened (a handshake) and, when
 * 'close', closed by the guest first: its session ends in TIME_WAIT. The SYN's result in *r.
 */
static bool
egress_conn(uint32_t slot, uint32_t remote, uint16_t gport, bool close, struct dp_result *r)
{
	uint32_t g = b.cfg.guest_ip, node = b.cfg.node_ip, c = 1000, s = 7000;
	struct dp_result q;
	uint16_t sp;

	if (seg((int)slot, g, remote, gport, 80, TCPF_SYN, c, 0, r) != DP_TO_WORLD)
		return false;
	sp = snat_of(slot, remote, gport);
	if (seg(-1, remote, node, 80, sp, TCPF_SYN | TCPF_ACK, s, c + 1, &q) != DP_TO_SANDBOX ||
	    seg((int)slot, g, remote, gport, 80, TCPF_ACK, c + 1, s + 1, &q) != DP_TO_WORLD)
		return false;
	return !close ||
	       (seg((int)slot, g, remote, gport, 80, TCPF_FIN | TCPF_ACK, c + 1, s + 1, &q) ==
		DP_TO_WORLD &&
		seg(-1, remote, node, 80, sp, TCPF_FIN | TCPF_ACK, s + 1, c + 2, &q) ==
		DP_TO_SANDBOX &&
		seg((int)slot, g, remote, gport, 80, TCPF_ACK, c + 2, s + 2, &q) == DP_TO_WORLD);
}

/* n closed connections of 'slot' to remote:80 from gport on, one a second of the clock. */
static void
closed_conns(uint32_t slot, uint32_t remote, uint16_t gport, uint32_t n)
{
	struct dp_result r;
	uint32_t i, ok = 0;

	for (i = 0; i < n; i++, b.x.now++)
		ok += egress_conn(slot, remote, (uint16_t)(gport + i), true, &r);
	CHECK_EQ(ok, n);
}

/* A SNAT range of 64 ports: the port search (SNAT_PROBES) looks at every one of them. */
static void
fresh64(void)
{
	fresh();
	b.x.snat_hi = 40063;
}

/*
 * Short connections to one endpoint: once their closed sessions hold every port, each new
 * SYN takes over the port of the one idle longest. The taken session is gone (index, class
 * list, counts as a recount gives them); the per-endpoint share still counts live sessions.
 */
static void
test_takeover(void)
{
	uint32_t remote = ip4("198.19.7.1"), i, ok = 0;
	struct dp_result r;
	uint16_t first;

	fresh64();
	set_limits(HOG, 0, 0, 0, 0, 8);
	closed_conns(HOG, remote, 10000, 64);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_TIME_WAIT], 64);
	CHECK_EQ(ct_ep_count(b.x.ct, HOG + 1, 0, remote, htons(80), IPPROTO_TCP_), 0);
	CHECK_EQ(b.st.c[CVS_WC_SNAT_TAKEOVERS], 0);
	first = snat_of(HOG, remote, 10000);
	CHECK(first >= 40000 && first <= 40063);
	CHECK(egress_conn(HOG, remote, 20000, false, &r));
	CHECK_EQ(snat_of(HOG, remote, 20000), first);
	CHECK_EQ(snat_of(HOG, remote, 10000), 0);
	CHECK_EQ(b.st.c[CVS_WC_SNAT_TAKEOVERS], 1);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_SNAT_TAKEOVERS], 1);
	CHECK_EQ(b.st.drop[CVS_DROP_SNAT_EXHAUSTED], 0);
	CHECK_EQ(b.x.ct->used, 64);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_TIME_WAIT], 63);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_ESTABLISHED], 1);
	CHECK_EQ(ct_ep_count(b.x.ct, HOG + 1, 0, remote, htons(80), IPPROTO_TCP_), 1);
	CHECK_EQ(ct_zone_opened(b.x.ct, HOG + 1), 1);
	CHECK_EQ(ct_counts_diff(b.x.ct), 0);
	CHECK_EQ(bed_ct_check(&b), 0);
	/* Live ones up to the share of 8, each on a closed one's port; the 9th is refused. */
	for (i = 1; i < 8; i++)
		ok += egress_conn(HOG, remote, (uint16_t)(20000 + i), false, &r);
	CHECK_EQ(ok, 7);
	CHECK(!egress_conn(HOG, remote, 20008, false, &r));
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_SNAT);
	CHECK_EQ(b.st.c[CVS_WC_SNAT_TAKEOVERS], 8);
	/* Their expiry (120 s) leaves nothing behind in the counts. */
	b.x.now += 10800 + 120 + 60;
	ct_expire(b.x.ct, b.x.now, 1000);
	CHECK_EQ(b.x.ct->used, 0);
	CHECK_EQ(ct_ep_count(b.x.ct, HOG + 1, 0, remote, htons(80), IPPROTO_TCP_), 0);
	CHECK_EQ(ct_counts_diff(b.x.ct), 0);
}

/*
 * A live session's port is never taken: every port held by live flows, a SYN is refused
 * (snat_exhausted); one of them closed (the guest resets it), the next SYN gets that port.
 */
static void
test_takeover_live(void)
{
	uint32_t remote = ip4("198.19.7.2"), i, ok = 0;
	struct dp_result r;
	uint16_t port;

	fresh64();
	closed_conns(HOG, remote, 10000, 32);
	/* Free ports first: 32 live flows take the other 32 ports, no closed one. */
	for (i = 0; i < 32; i++)
		ok += egress_conn(HOG, remote, (uint16_t)(20000 + i), false, &r);
	CHECK_EQ(ok, 32);
	CHECK_EQ(b.st.c[CVS_WC_SNAT_TAKEOVERS], 0);
	/* Then the closed ones' ports, until every port is held by a live flow. */
	for (i = 0, ok = 0; i < 32; i++)
		ok += egress_conn(HOG, remote, (uint16_t)(30000 + i), false, &r);
	CHECK_EQ(ok, 32);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_TIME_WAIT], 0);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_ESTABLISHED], 64);
	CHECK_EQ(b.st.c[CVS_WC_SNAT_TAKEOVERS], 32);
	CHECK(!egress_conn(VICTIM, remote, 11000, false, &r));
	CHECK_EQ(r.drop, CVS_DROP_SNAT_EXHAUSTED);
	CHECK(!egress_conn(HOG, remote, 11001, false, &r));
	CHECK_EQ(r.drop, CVS_DROP_SNAT_EXHAUSTED);
	CHECK_EQ(b.st.c[CVS_WC_SNAT_TAKEOVERS], 32);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_ESTABLISHED], 64);
	/* UDP towards the same address and port is another tuple space: not concerned. */
	CHECK_EQ(open_from(VICTIM, IPPROTO_UDP_, "198.19.7.2", 11002, 80, &r), DP_TO_WORLD);
	/* The guest resets one: CLOSE, and its port is the one the next SYN gets. */
	port = snat_of(HOG, remote, 30000);
	CHECK_EQ(seg(HOG, b.cfg.guest_ip, remote, 30000, 80, TCPF_RST, 1001, 0, &r), DP_TO_WORLD);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_CLOSE], 1);
	CHECK(egress_conn(VICTIM, remote, 11003, false, &r));
	CHECK_EQ(snat_of(VICTIM, remote, 11003), port);
	CHECK_EQ(b.pst[VICTIM].c[CVS_PC_SNAT_TAKEOVERS], 1);
	CHECK_EQ(ct_counts_diff(b.x.ct), 0);
	CHECK_EQ(bed_ct_check(&b), 0);
}

/* How many of the n sessions of 'slot' from gport on towards remote:80 are closed. */
static uint32_t
closed_of(uint32_t slot, uint32_t remote, uint16_t gport, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct ct_session *s = sess_of(slot, remote, (uint16_t)(gport + i));

		k += s && !ct_class_live(s->cls);
	}
	return k;
}

/*
 * Whose closed sessions a SYN takes: its own sandbox's first, then another's (they are not
 * counted, so left to their sandbox they could hold every port towards an endpoint). The
 * one whose closed session is taken keeps its counts; the taker is counted under its name.
 */
static void
test_takeover_cross(void)
{
	uint32_t remote = ip4("198.19.7.3"), i, ok = 0;
	struct dp_result r;

	fresh64();
	b.x.snat_cursor = 7;
	closed_conns(HOG, remote, 10000, 32);
	closed_conns(VICTIM, remote, 20000, 32);
	/* The victim's SYNs take its own 32 first, although the hog's are idle longer. */
	for (i = 0; i < 32; i++)
		ok += egress_conn(VICTIM, remote, (uint16_t)(21000 + i), false, &r);
	CHECK_EQ(ok, 32);
	CHECK_EQ(closed_of(VICTIM, remote, 20000, 32), 0);
	CHECK_EQ(closed_of(HOG, remote, 10000, 32), 32);
	CHECK_EQ(b.pst[VICTIM].c[CVS_PC_SNAT_TAKEOVERS], 32);
	/* Then the hog's: their flows are over, the port is no one's to keep. */
	CHECK(egress_conn(VICTIM, remote, 21032, false, &r));
	CHECK_EQ(closed_of(HOG, remote, 10000, 32), 31);
	CHECK_EQ(closed_of(HOG, remote, 10000, 1), 0);
	CHECK_EQ(b.pst[VICTIM].c[CVS_PC_SNAT_TAKEOVERS], 33);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_SNAT_TAKEOVERS], 0);
	CHECK_EQ(b.st.c[CVS_WC_SNAT_TAKEOVERS], 33);
	CHECK_EQ(ct_zone_opened(b.x.ct, HOG + 1), 0);
	CHECK_EQ(ct_zone_opened(b.x.ct, VICTIM + 1), 33);
	CHECK_EQ(ct_ep_count(b.x.ct, VICTIM + 1, 0, remote, htons(80), IPPROTO_TCP_), 33);
	CHECK_EQ(ct_counts_diff(b.x.ct), 0);
	CHECK_EQ(bed_ct_check(&b), 0);
}

/*
 * A remote that still holds the old connection of a taken-over port in TIME_WAIT (it closed
 * first) may refuse the SYN with that connection's ACK. The guest's RST to it, at the remote's
 * sequence but off the new flow's, is forwarded with the state kept: it ends the remote's
 * TIME_WAIT, and the guest's next SYN opens. A world peer's RST off the sequence is dropped.
 */
static void
test_takeover_tw(void)
{
	uint32_t remote = ip4("198.19.7.5"), g = b.cfg.guest_ip, node = b.cfg.node_ip;
	struct dp_result r;
	uint16_t port;

	fresh64();
	closed_conns(HOG, remote, 10000, 64);
	CHECK_EQ(seg(HOG, g, remote, 20000, 80, TCPF_SYN, 50000, 0, &r), DP_TO_WORLD);
	CHECK_EQ(b.st.c[CVS_WC_SNAT_TAKEOVERS], 1);
	port = snat_of(HOG, remote, 20000);
	/* The old connection's ACK (it ended at 7002 / 1002): passes to the guest, which resets. */
	CHECK_EQ(seg(-1, remote, node, 80, port, TCPF_ACK, 7002, 1002, &r), DP_TO_SANDBOX);
	CHECK_EQ(seg(HOG, g, remote, 20000, 80, TCPF_RST, 1002, 0, &r), DP_TO_WORLD);
	CHECK_EQ(b.st.c[CVS_WC_TCP_RST_INEXACT], 1);
	CHECK_EQ(state_of(HOG, remote, 20000), CT_TCP_SYN_SENT);
	/* The SYN again, answered now. */
	CHECK_EQ(seg(HOG, g, remote, 20000, 80, TCPF_SYN, 50000, 0, &r), DP_TO_WORLD);
	CHECK_EQ(seg(-1, remote, node, 80, port, TCPF_SYN | TCPF_ACK, 9000, 50001, &r),
		 DP_TO_SANDBOX);
	CHECK_EQ(seg(HOG, g, remote, 20000, 80, TCPF_ACK, 50001, 9001, &r), DP_TO_WORLD);
	CHECK_EQ(state_of(HOG, remote, 20000), CT_TCP_ESTABLISHED);
	/* From the world side, a RST off the sequence does not pass before the SYN is acked. */
	CHECK_EQ(seg(HOG, g, remote, 20001, 80, TCPF_SYN, 50000, 0, &r), DP_TO_WORLD);
	port = snat_of(HOG, remote, 20001);
	CHECK_EQ(seg(-1, remote, node, 80, port, TCPF_RST, 12345, 0, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_TCP_RST_WINDOW);
	CHECK_EQ(state_of(HOG, remote, 20001), CT_TCP_SYN_SENT);
}

/* Hairpin flows to another sandbox's exposed port take over their closed ones the same way. */
static void
test_takeover_hairpin(void)
{
	uint32_t node = b.cfg.node_ip, g = b.cfg.guest_ip, i, ok = 0;
	struct dp_result r;

	fresh64();
	/* 64 hairpin SYNs, each reset by the hog's guest at once: CLOSE, every port held. */
	for (i = 0; i < 64; i++)
		ok += seg(HOG, g, node, (uint16_t)(5000 + i), BED_HP_B, TCPF_SYN, 1000, 0, &r) ==
		      DP_TO_SANDBOX &&
		      seg(HOG, g, node, (uint16_t)(5000 + i), BED_HP_B, TCPF_RST, 1001, 0, &r) ==
		      DP_TO_SANDBOX;
	CHECK_EQ(ok, 64);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_CLOSE], 64);
	CHECK_EQ(ct_zone_inbound(b.x.ct, VICTIM + 1), 0);
	CHECK_EQ(seg(OTHER, g, node, 6000, BED_HP_B, TCPF_SYN, 1000, 0, &r), DP_TO_SANDBOX);
	CHECK_EQ(r.slot, VICTIM);
	CHECK_EQ(b.pst[OTHER].c[CVS_PC_SNAT_TAKEOVERS], 1);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_CLOSE], 63);
	CHECK_EQ(ct_zone_inbound(b.x.ct, VICTIM + 1), 1);
	CHECK_EQ(ct_counts_diff(b.x.ct), 0);
	CHECK_EQ(bed_ct_check(&b), 0);
}

/*
 * A closed egress session revived by the remote (its SYN on TIME_WAIT) comes back into the
 * endpoint count: refused at the share, as a new flow would be.
 */
static void
test_revive_snat(void)
{
	uint32_t remote = ip4("198.19.7.4");
	struct dp_result r;
	uint16_t port;

	fresh();
	set_limits(HOG, 0, 0, 0, 0, 1);
	closed_conns(HOG, remote, 10000, 1);
	port = snat_of(HOG, remote, 10000);
	CHECK(egress_conn(HOG, remote, 10001, false, &r));
	CHECK_EQ(ct_ep_count(b.x.ct, HOG + 1, 0, remote, htons(80), IPPROTO_TCP_), 1);
	CHECK_EQ(seg(-1, remote, b.cfg.node_ip, 80, port, TCPF_SYN, 90000, 0, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_SNAT);
	CHECK_EQ(b.x.ct->class_count[CT_C_TCP_TIME_WAIT], 1);
	/* Under the share (the live one reset), the same SYN revives it. */
	CHECK_EQ(seg(HOG, b.cfg.guest_ip, remote, 10001, 80, TCPF_RST, 1001, 0, &r), DP_TO_WORLD);
	CHECK_EQ(seg(-1, remote, b.cfg.node_ip, 80, port, TCPF_SYN, 90000, 0, &r),
		 DP_TO_SANDBOX);
	CHECK_EQ(ct_ep_count(b.x.ct, HOG + 1, 0, remote, htons(80), IPPROTO_TCP_), 1);
	CHECK_EQ(ct_counts_diff(b.x.ct), 0);
}

/* Inbound: many world clients at the hog's host port fill its inbound share only. */
static void
test_inbound(void)
{
	uint32_t base = ntohl(ip4("198.18.0.100")), i, ok = 0;
	struct dp_result r;

	fresh();
	set_limits(HOG, 0, 16, 0, 0, 0);
	for (i = 0; i < 64; i++)
		ok += seg(-1, htonl(base + i), b.cfg.node_ip, (uint16_t)(5000 + i), BED_HP_A,
			  TCPF_SYN, 1, 0, &r) == DP_TO_SANDBOX;
	CHECK_EQ(ok, 16);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_INBOUND], 48);
	CHECK_EQ(b.st.drop[CVS_DROP_LIMIT_INBOUND], 48);
	/* The hog itself may still open flows: inbound and outbound are counted apart. */
	CHECK_EQ(open_from(HOG, IPPROTO_TCP_, "198.19.4.1", 999, 80, &r), DP_TO_WORLD);
	CHECK_EQ(seg(-1, ip4("198.18.0.99"), b.cfg.node_ip, 4000, BED_HP_B, TCPF_SYN, 1, 0, &r),
		 DP_TO_SANDBOX);
	CHECK_EQ(r.slot, VICTIM);
}

/* Flows from the host (cube-dev) to a sandbox: its inbound limit and its token bucket. */
static void
test_host(void)
{
	uint32_t host = b.cfg.host_ip, ip = atomic_load(&b.slot_ip[HOG]), i, ok = 0;
	uint32_t vip = atomic_load(&b.slot_ip[VICTIM]);
	struct dp_result r;
	uint16_t p = 7000;

	fresh();
	set_limits(HOG, 0, 8, 0, 0, 0);
	for (i = 0; i < 20; i++)
		ok += seg(-2, host, ip, p++, 8080, TCPF_SYN, 1, 0, &r) == DP_TO_SANDBOX;
	CHECK_EQ(ok, 8);
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_INBOUND);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_INBOUND], 12);
	CHECK_EQ(b.st.drop[CVS_DROP_LIMIT_INBOUND], 12);
	/* The rate: a burst of 5, then 2 a second, taken from the hog's own bucket. */
	set_limits(HOG, 0, 0, 2, 5, 0);
	for (i = 0, ok = 0; i < 10; i++)
		ok += seg(-2, host, ip, p++, 8080, TCPF_SYN, 1, 0, &r) == DP_TO_SANDBOX;
	CHECK_EQ(ok, 5);
	CHECK_EQ(b.pst[HOG].c[CVS_PC_LIM_RATE], 5);
	CHECK_EQ(b.st.drop[CVS_DROP_LIMIT_RATE], 5);
	b.x.now++;
	for (i = 0, ok = 0; i < 10; i++)
		ok += seg(-2, host, ip, p++, 8080, TCPF_SYN, 1, 0, &r) == DP_TO_SANDBOX;
	CHECK_EQ(ok, 2);
	/* The hog's guest shares that bucket; the victim is not touched by any of it. */
	CHECK_EQ(open_from(HOG, IPPROTO_UDP_, "198.19.5.1", p++, 53, &r), DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_LIMIT_RATE);
	for (i = 0, ok = 0; i < 50; i++)
		ok += seg(-2, host, vip, p++, 8080, TCPF_SYN, 1, 0, &r) == DP_TO_SANDBOX;
	CHECK_EQ(ok, 50);
	CHECK_EQ(b.pst[VICTIM].c[CVS_PC_LIM_RATE] + b.pst[VICTIM].c[CVS_PC_LIM_INBOUND], 0);
}

int
main(void)
{
	if (bed_init(&b, 4096))
		return 1;
	test_bucket();
	test_sessions();
	test_closed();
	test_revive();
	test_snat();
	test_hairpin_snat();
	test_takeover();
	test_takeover_live();
	test_takeover_cross();
	test_takeover_tw();
	test_takeover_hairpin();
	test_revive_snat();
	test_inbound();
	test_host();
	bed_fini(&b);
	return t_done("test_limits");
}
