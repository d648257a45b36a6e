/* SPDX-License-Identifier: BSD-3-Clause */
/* The pipeline on byte buffers: exposed-port DNAT, replies, drops, ARP proxy. */
#include "t.h"
#include "pktgen.h"
#include "dp.h"
#include "owner.h"

static struct dp_cfg cfg;
static struct dp_shared sh;
static _Atomic uint8_t alive[8];
static _Atomic(const struct dp_policy *) pols[8];
static _Atomic uint16_t polver[8];
static _Atomic uint32_t slot_ip[8];
static _Atomic uint64_t slot_mac[8];
static struct dp_guest guests[8];
static _Atomic uint16_t ip2slot[64];
static struct cvs_stats st;

static const uint8_t client_mac[6] = { 2, 0, 0, 0, 0, 0x11 };

static void
setup(struct dp_ctx *x)
{
	static const uint8_t gm[6] = { 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc };
	static const uint8_t gw[6] = { 0x20, 0x90, 0x6f, 0xcf, 0xcf, 0xcf };
	static const uint8_t wm[6] = { 2, 0, 0, 0, 0, 0x99 };

	cfg.node_ip = ip4("198.18.0.1");
	cfg.guest_ip = ip4("169.254.68.6");
	cfg.gw_ip = ip4("169.254.68.5");
	memcpy(cfg.guest_mac, gm, 6);
	memcpy(cfg.gw_mac, gw, 6);
	memcpy(cfg.world_mac, wm, 6);
	/* No request ring (nhreq) and no other field left to chance. */
	memset(x, 0, sizeof(*x));
	sh.slot_alive = alive;
	sh.policy = pols;
	sh.policy_ver = polver;
	sh.slot_ip = slot_ip;
	sh.slot_mac = slot_mac;
	sh.guest = guests;
	for (int i = 0; i < 8; i++) {
		atomic_store(&slot_mac[i], dp_mac_pack(gm));
		dp_guest_set(&guests[i], cfg.guest_ip, cfg.gw_ip, cfg.gw_mac);
	}
	sh.ip2slot = ip2slot;
	sh.ip2slot_size = 64;
	sh.max_sandboxes = 8;
	atomic_store(&alive[3], 1);
	atomic_store(&sh.hostport[20005], dp_hostport_entry(3, 8080));
	x->cfg = &cfg;
	x->sh = &sh;
	x->ct = ct_create(1024, 8, NULL);
	x->st = &st;
	x->now = 10;
}

/*
 * Egress SNAT with three ports towards one remote endpoint: the stage-1 candidate often
 * collides, so the fallback search runs too. Three flows get three distinct ports in range
 * (random probes used to miss the last free one), each reply finds its guest port again, the
 * fourth flow has none. 'cursor' sets where the port search starts.
 */
static void
test_snat_three_ports(struct dp_ctx *x, uint32_t cursor)
{
	static const uint8_t gwmac[6] = { 2, 0, 0, 0, 0, 0xfe };
	uint32_t remote = ip4("198.19.7.7"), k, n;
	struct ip4_hdr *ip;
	struct tcp_hdr *th;
	struct dp_result r;
	uint16_t ports[3] = { 0 };
	uint8_t f[256];

	ip = (struct ip4_hdr *)(f + 14);
	th = (struct tcp_hdr *)(f + 34);
	cfg.world_net = ip4("198.18.0.0");
	cfg.world_mask = ip4("255.255.255.0");
	dp_nh_store(&sh.nh, 0, gwmac);
	ct_destroy(x->ct);
	x->ct = ct_create(1024, 8, NULL);
	x->snat_lo = 40000;
	x->snat_hi = 40002;
	x->snat_cursor = cursor;
	for (k = 0; k < 4; k++) {
		uint64_t before = st.drop[CVS_DROP_SNAT_EXHAUSTED];

		n = build_frame(f, IPPROTO_TCP_, cfg.guest_ip, remote, htons((uint16_t)(1000 + k)),
				htons(80), TCPF_SYN, 0);
		dp_sandbox_rx(x, 3, f, n, &r);
		if (k == 3) {
			CHECK_EQ(r.action, DP_DROP);
			CHECK_EQ(r.drop, CVS_DROP_SNAT_EXHAUSTED);
			CHECK_EQ(st.drop[CVS_DROP_SNAT_EXHAUSTED], before + 1);
			break;
		}
		CHECK_EQ(r.action, DP_TO_WORLD);
		CHECK(ip->saddr == cfg.node_ip);
		CHECK(memcmp(f, gwmac, 6) == 0);
		CHECK(frame_csums_ok(f));
		ports[k] = ntohs(th->sport);
		CHECK(ports[k] >= 40000 && ports[k] <= 40002);
	}
	CHECK(ports[0] != ports[1] && ports[1] != ports[2] && ports[0] != ports[2]);
	for (k = 0; k < 3; k++) {
		n = build_frame(f, IPPROTO_TCP_, remote, cfg.node_ip, htons(80), htons(ports[k]),
				TCPF_SYN | TCPF_ACK, 0);
		dp_world_rx(x, f, n, &r);
		CHECK_EQ(r.action, DP_TO_SANDBOX);
		CHECK_EQ(r.slot, 3);
		CHECK(ip->daddr == cfg.guest_ip);
		CHECK_EQ(ntohs(th->dport), 1000 + k);
		CHECK(frame_csums_ok(f));
	}
}

/* The guest MAC is the slot's own: a sandbox registered with another gets that one. */
static void
test_guest_mac(struct dp_ctx *x)
{
	static const uint8_t own[6] = { 0x02, 0, 0, 0, 0, 0x33 };
	struct dp_result r;
	uint8_t g[256];
	uint32_t gn;

	atomic_store(&slot_mac[3], dp_mac_pack(own));
	gn = build_frame(g, IPPROTO_TCP_, ip4("198.18.0.7"), cfg.node_ip, htons(40001),
			 htons(20005), TCPF_SYN, 0);
	dp_world_rx(x, g, gn, &r);
	CHECK_EQ(r.action, DP_TO_SANDBOX);
	CHECK(!memcmp(((struct eth_hdr *)g)->dst, own, 6));
	/* What the guest sends back carries it as source: right for slot 3 only. */
	memcpy(((struct eth_hdr *)g)->src, own, 6);
	CHECK(dp_guest_mac_ok(&sh, 3, g, gn));
	CHECK(!dp_guest_mac_ok(&sh, 2, g, gn));
	CHECK(dp_guest_mac_ok(&sh, 2, g, 11));	/* a runt is the parser's to count */
	atomic_store(&slot_mac[3], dp_mac_pack(cfg.guest_mac));
}

/*
 * A guest addressed on its own (a CNI pod): slot 3 gets 10.22.0.5 behind 10.22.0.1 with its
 * own gateway MAC. The exposed port translates to that address, frames to it come from that
 * MAC, its replies pass while the node-wide guest address is spoofed there, its ARP for the
 * gateway gets that MAC; slot 2 keeps the node-wide addressing.
 */
static void
test_guest_addr(struct dp_ctx *x)
{
	static const uint8_t gwm[6] = { 0x02, 0, 0, 0, 0x0a, 0x01 };
	uint32_t own = ip4("10.22.0.5"), gw = ip4("10.22.0.1"), client = ip4("198.18.0.8");
	struct ip4_hdr *ip;
	struct dp_result r;
	uint8_t g[256];
	uint32_t gn;

	dp_guest_set(&guests[3], own, gw, gwm);
	gn = build_frame(g, IPPROTO_TCP_, client, cfg.node_ip, htons(40002), htons(20005),
			 TCPF_SYN, 0);
	ip = (struct ip4_hdr *)(g + 14);
	dp_world_rx(x, g, gn, &r);
	CHECK_EQ(r.action, DP_TO_SANDBOX);
	CHECK_EQ(ip->daddr, own);
	CHECK(!memcmp(((struct eth_hdr *)g)->src, gwm, 6));
	CHECK(frame_csums_ok(g));
	gn = build_frame(g, IPPROTO_TCP_, own, client, htons(8080), htons(40002),
			 TCPF_SYN | TCPF_ACK, 5);
	dp_sandbox_rx(x, 3, g, gn, &r);
	CHECK_EQ(r.action, DP_TO_WORLD);
	CHECK_EQ(ip->saddr, cfg.node_ip);
	gn = build_frame(g, IPPROTO_TCP_, cfg.guest_ip, client, htons(8080), htons(40002),
			 TCPF_ACK, 0);
	dp_sandbox_rx(x, 3, g, gn, &r);
	CHECK_EQ(r.drop, CVS_DROP_GUEST_SPOOF);
	dp_sandbox_rx(x, 2, g, gn, &r);
	CHECK(r.drop != CVS_DROP_GUEST_SPOOF);
	dp_guest_set(&guests[3], cfg.guest_ip, cfg.gw_ip, cfg.gw_mac);
}

int
main(void)
{
	struct dp_ctx x;
	uint32_t k;
	struct dp_result r;
	uint8_t f[256];
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);
	struct tcp_hdr *th = (struct tcp_hdr *)(f + 34);
	struct eth_hdr *eth = (struct eth_hdr *)f;
	uint32_t n, client = ip4("198.18.0.2");
	struct ct_session *s;
	int d;

	setup(&x);

	/* Client SYN to the host port: DNAT into slot 3, guest IP : container port. */
	n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(40000), htons(20005),
			TCPF_SYN, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK_EQ(r.action, DP_TO_SANDBOX);
	CHECK_EQ(r.slot, 3);
	CHECK_EQ(r.len, n);
	CHECK_EQ(ip->daddr, cfg.guest_ip);
	CHECK_EQ(ip->saddr, client);
	CHECK_EQ(th->dport, htons(8080));
	CHECK_EQ(th->sport, htons(40000));
	CHECK(!memcmp(eth->dst, cfg.guest_mac, 6));
	CHECK(!memcmp(eth->src, cfg.gw_mac, 6));
	CHECK(frame_csums_ok(f));
	CHECK_EQ(x.ct->used, 1);

	/* Guest SYN+ACK: back to node IP : host port, to the client's MAC. */
	n = build_frame(f, IPPROTO_TCP_, cfg.guest_ip, client, htons(8080), htons(40000),
			TCPF_SYN | TCPF_ACK, 5);
	dp_sandbox_rx(&x, 3, f, n, &r);
	CHECK_EQ(r.action, DP_TO_WORLD);
	CHECK_EQ(ip->saddr, cfg.node_ip);
	CHECK_EQ(ip->daddr, client);
	CHECK_EQ(th->sport, htons(20005));
	CHECK_EQ(th->dport, htons(40000));
	CHECK(!memcmp(eth->dst, client_mac, 6));
	CHECK(!memcmp(eth->src, cfg.world_mac, 6));
	CHECK(frame_csums_ok(f));
	s = ct_lookup(x.ct, &(struct ct_tuple){ client, cfg.node_ip, htons(40000), htons(20005),
						 0, IPPROTO_TCP_, 0 }, &d);
	CHECK(s && s->state == CT_TCP_SYN_RECV);

	/* The same reply from another sandbox matches nothing (zones). */
	n = build_frame(f, IPPROTO_TCP_, cfg.guest_ip, client, htons(8080), htons(40000),
			TCPF_ACK, 0);
	dp_sandbox_rx(&x, 2, f, n, &r);
	CHECK_EQ(r.action, DP_DROP);
	CHECK_EQ(r.drop, CVS_DROP_EGRESS_PROTO);

	/* A guest frame from another source address is spoofed. */
	n = build_frame(f, IPPROTO_TCP_, ip4("10.9.9.9"), client, htons(8080), htons(40000),
			TCPF_ACK, 0);
	dp_sandbox_rx(&x, 3, f, n, &r);
	CHECK_EQ(r.drop, CVS_DROP_GUEST_SPOOF);

	/* Client ACK: established. An invalid segment (no flags) keeps the state. */
	n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(40000), htons(20005),
			TCPF_ACK, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK_EQ(r.action, DP_TO_SANDBOX);
	CHECK(s && s->state == CT_TCP_ESTABLISHED);
	n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(40000), htons(20005), 0, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK(s && s->state == CT_TCP_ESTABLISHED);
	CHECK(st.c[CVS_WC_TCP_INVALID] >= 1);

	/* Non-SYN to the host port without a session: dropped, nothing created. */
	n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(40001), htons(20005),
			TCPF_ACK, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK_EQ(r.drop, CVS_DROP_NO_SESSION);
	CHECK_EQ(x.ct->used, 1);
	/* SYN to an unregistered port, UDP with no session, another destination. */
	n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(40001), htons(20006),
			TCPF_SYN, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK_EQ(r.drop, CVS_DROP_NO_HOSTPORT);
	n = build_frame(f, IPPROTO_UDP_, client, cfg.node_ip, htons(40001), htons(20005), 0, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK_EQ(r.drop, CVS_DROP_NO_SESSION);
	n = build_frame(f, IPPROTO_TCP_, client, ip4("198.18.0.9"), htons(1), htons(20005),
			TCPF_SYN, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK_EQ(r.drop, CVS_DROP_NOT_NODE_IP);
	/* An unparsable frame is counted by reason. */
	dp_world_rx(&x, f, 10, &r);
	CHECK_EQ(r.drop, CVS_DROP_RUNT);
	CHECK(st.drop[CVS_DROP_RUNT] == 1);

	/* A sandbox being removed: traffic of its sessions is dropped, not sent. */
	atomic_store(&alive[3], 0);
	n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(40000), htons(20005),
			TCPF_ACK, 0);
	dp_world_rx(&x, f, n, &r);
	CHECK_EQ(r.drop, CVS_DROP_SANDBOX_GONE);
	atomic_store(&alive[3], 1);

	/* ARP proxy: any target on a sandbox port gets the gateway MAC. */
	{
		struct arp_hdr *a = (struct arp_hdr *)(f + 14);

		memset(f, 0, 64);
		memset(eth->dst, 0xff, 6);
		memcpy(eth->src, cfg.guest_mac, 6);
		eth->type = htons(ETHTYPE_ARP);
		a->htype = htons(1);
		a->ptype = htons(ETHTYPE_IPV4);
		a->hlen = 6;
		a->plen = 4;
		a->op = htons(1);
		memcpy(a->sha, cfg.guest_mac, 6);
		a->spa = cfg.guest_ip;
		a->tpa = cfg.gw_ip;
		dp_sandbox_rx(&x, 3, f, 60, &r);
		CHECK_EQ(r.action, DP_BACK);
		CHECK_EQ(r.len, 42);
		CHECK_EQ(a->op, htons(2));
		CHECK(!memcmp(a->sha, cfg.gw_mac, 6));
		CHECK_EQ(a->spa, cfg.gw_ip);
		CHECK(!memcmp(a->tha, cfg.guest_mac, 6));
		CHECK_EQ(a->tpa, cfg.guest_ip);
		CHECK(!memcmp(eth->dst, cfg.guest_mac, 6));
		a->op = htons(2);	/* a reply from the guest is not ours to answer */
		dp_sandbox_rx(&x, 3, f, 60, &r);
		CHECK_EQ(r.drop, CVS_DROP_ARP);
	}

	/* Table full of established flows: a new SYN is refused and counted. */
	{
		struct ct_table *small = ct_create(1, 8, NULL);
		struct ct_table *keep = x.ct;

		x.ct = small;
		n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(1), htons(20005),
				TCPF_SYN, 0);
		dp_world_rx(&x, f, n, &r);
		CHECK_EQ(r.action, DP_TO_SANDBOX);
		ct_touch(small, &small->s[0], CT_TCP_ESTABLISHED, x.now);
		n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(2), htons(20005),
				TCPF_SYN, 0);
		dp_world_rx(&x, f, n, &r);
		CHECK_EQ(r.drop, CVS_DROP_TABLE_FULL);
		x.ct = keep;
		ct_destroy(small);
	}
	/* Ownership with 3 workers: SNAT shares, host-port slots, hairpin replies. */
	{
		uint16_t lo, hi;
		uint32_t k, port;

		cfg.snat_lo = 30000;
		cfg.snat_hi = 65535;
		for (k = 0; k < 3; k++) {
			dp_snat_share(&cfg, k, 3, &lo, &hi);
			for (port = lo; port <= hi; port++) {
				n = build_frame(f, IPPROTO_UDP_, client, cfg.node_ip, htons(53),
						htons((uint16_t)port), 0, 0);
				CHECK_EQ(dp_owner(&cfg, &sh, DP_FROM_WORLD, 0, f, n, 3), k);
				/* The hairpin target's reply to node IP : that port, too. */
				n = build_frame(f, IPPROTO_TCP_, cfg.guest_ip, cfg.node_ip, htons(8080),
						htons((uint16_t)port), TCPF_ACK, 0);
				CHECK_EQ(dp_owner(&cfg, &sh, DP_FROM_SANDBOX, 4, f, n, 3), k);
			}
		}
		dp_snat_share(&cfg, 2, 3, &lo, &hi);
		CHECK_EQ(hi, 65535);
		dp_snat_share(&cfg, 0, 3, &lo, &hi);
		CHECK_EQ(lo, 30000);
		/* Host port 20005 belongs to slot 3: worker 3 % 3 = 0; with 2 workers, 1. */
		n = build_frame(f, IPPROTO_TCP_, client, cfg.node_ip, htons(1), htons(20005),
				TCPF_SYN, 0);
		CHECK_EQ(dp_owner(&cfg, &sh, DP_FROM_WORLD, 0, f, n, 3), 0);
		CHECK_EQ(dp_owner(&cfg, &sh, DP_FROM_WORLD, 0, f, n, 2), 1);
		/* A guest's own egress stays with its sandbox's worker. */
		n = build_frame(f, IPPROTO_TCP_, cfg.guest_ip, client, htons(1), htons(80),
				TCPF_SYN, 0);
		CHECK_EQ(dp_owner(&cfg, &sh, DP_FROM_SANDBOX, 5, f, n, 3), 2);
		CHECK_EQ(dp_owner(&cfg, &sh, DP_FROM_SANDBOX, 5, f, n, 1), 0);
	}
	for (k = 0; k < 200; k++)
		test_snat_three_ports(&x, k * 7919u);
	test_guest_mac(&x);
	test_guest_addr(&x);
	ct_destroy(x.ct);
	return t_done("test_dp");
}
