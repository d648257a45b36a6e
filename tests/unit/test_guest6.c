/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exposed ports on the node's IPv6 address and the guest's IPv6 address (guest6.h,
 * dp6_in.c): the identifier arithmetic; a slot learns its guest's address from its own
 * frames only (a source in the prefix, a duplicate address check's target), never from
 * another slot's; a world SYN to [node6]:hostPort opens a DNAT66 session to the learnt
 * address (the EUI-64 of the guest MAC before), both directions are translated with
 * checksums that verify; a hairpin between two sandboxes; the refusals (no host port, no
 * session, a sandbox gone, the inbound limit over both families, a bad source).
 */
#include "t.h"
#include "dpbed.h"
#include "ct6.h"
#include "guest6.h"
#include "ndp.h"

static const uint8_t node6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 1 };
static const uint8_t client6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 2, [15] = 2 };
static const uint8_t pfx6[8] = { 0x20, 0x01, 0, 2, 0, 0, 0, 6 };
static const uint8_t unspec[16];

static _Atomic uint64_t iid6[BED_SLOTS];

/* A guest address of the prefix with the identifier ending in 'tail'. */
static void
in_pfx(uint8_t a[16], uint16_t tail)
{
	memset(a, 0, 16);
	memcpy(a, pfx6, 8);
	a[8] = 0x12;
	a[14] = (uint8_t)(tail >> 8);
	a[15] = (uint8_t)tail;
}

/* The upper-layer checksum over the IPv6 pseudo-header, plain arithmetic: 0 when right. */
static uint16_t
ref_csum6(const uint8_t *f, uint32_t n, uint8_t proto)
{
	uint32_t sum = 0, len = n - 54, i;

	for (i = 22; i < 54; i += 2)
		sum += (uint32_t)f[i] << 8 | f[i + 1];
	sum += (len >> 16) + (len & 0xffff) + proto;
	for (i = 54; i < n; i += 2)
		sum += (uint32_t)f[i] << 8 | (i + 1 < n ? f[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* An IPv6 TCP frame with a 4-byte payload, checksummed. */
static uint32_t
tcp6(uint8_t *f, const uint8_t src[16], const uint8_t dst[16], uint16_t sp, uint16_t dp,
     uint8_t flags)
{
	uint32_t n = 54 + 24;
	uint16_t c;

	memset(f, 0, 256);
	memcpy(f, bed_client_mac, 6);
	memcpy(f + 6, bed_client_mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[19] = 24;
	f[20] = IPPROTO_TCP_;
	f[21] = 64;
	memcpy(f + 22, src, 16);
	memcpy(f + 38, dst, 16);
	f[54] = (uint8_t)(sp >> 8);
	f[55] = (uint8_t)sp;
	f[56] = (uint8_t)(dp >> 8);
	f[57] = (uint8_t)dp;
	f[61] = 1;		/* seq */
	f[66] = 5 << 4;
	f[67] = flags;
	f[68] = 0xff;		/* window */
	memcpy(f + 74, "data", 4);
	c = htons(ref_csum6(f, n, IPPROTO_TCP_));
	memcpy(f + 70, &c, 2);
	return n;
}

static uint16_t
port_at(const uint8_t *f, int off)
{
	return (uint16_t)(f[off] << 8 | f[off + 1]);
}

static int
send6(struct dpbed *b, int port, uint8_t *f, uint32_t n)
{
	struct dp_result r;

	bed_rx(b, port, f, n, &r);
	return r.action;
}

static void
test_pure(void)
{
	static const uint8_t mac[6] = { 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc };
	static const uint8_t eui[8] = { 0x22, 0x90, 0x6f, 0xff, 0xfe, 0xfc, 0xfc, 0xfc };
	uint8_t a[16], rsv[8] = { 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80 };
	uint64_t v;

	v = guest6_iid_of_mac(mac);
	CHECK(!memcmp(&v, eui, 8));
	guest6_addr(a, pfx6, v);
	CHECK(!memcmp(a, pfx6, 8) && !memcmp(a + 8, eui, 8));
	CHECK(guest6_iid_of(a) == v);
	CHECK(guest6_iid_usable(v));
	CHECK(!guest6_iid_usable(0));
	memcpy(&v, rsv, 8);
	CHECK(!guest6_iid_usable(v));
	rsv[7] = 0x7f;
	memcpy(&v, rsv, 8);
	CHECK(guest6_iid_usable(v));
}

static void
bed6(struct dpbed *b)
{
	CHECK_EQ(bed_table(b), 0);
	b->cfg.have_ip6 = true;
	memcpy(b->cfg.node_ip6, node6, 16);
	memcpy(b->cfg.guest_pfx6, pfx6, 8);
	ct6_destroy(b->x.ct6);
	b->x.ct6 = ct6_create(256, BED_SLOTS, NULL);
	CHECK(b->x.ct6 != NULL);
	b->sh->slot_iid6 = iid6;
	for (int i = 0; i < BED_SLOTS; i++)
		atomic_store(&iid6[i], 0);
	atomic_store(&b->sh->nh6_mac, dp_mac_pack(bed_router_mac));
}

static void
test_learn(struct dpbed *b)
{
	uint8_t f[256], a[16], m[24] = { ICMP6_NS }, snm[16] = { 0xff, 0x02, [11] = 1, 0xff };
	struct pkt p;
	uint16_t c;
	uint32_t n;

	bed6(b);
	/* A link-local source teaches nothing. */
	memset(a, 0, 16);
	a[0] = 0xfe;
	a[1] = 0x80;
	a[15] = 7;
	n = tcp6(f, a, client6, 1000, 80, TCPF_SYN);
	send6(b, BED_SLOT_A, f, n);
	CHECK_EQ(atomic_load(&iid6[BED_SLOT_A]), 0);
	/* Its source in the prefix: learnt for its own slot only. */
	in_pfx(a, 0x1234);
	n = tcp6(f, a, client6, 1000, 80, TCPF_SYN);
	send6(b, BED_SLOT_A, f, n);
	CHECK(atomic_load(&iid6[BED_SLOT_A]) == guest6_iid_of(a));
	CHECK_EQ(atomic_load(&iid6[BED_SLOT_B]), 0);
	CHECK_EQ(b->st.c[CVS_WC_GUEST6_LEARNT], 1);
	/* The same again is no change. */
	send6(b, BED_SLOT_A, f, n);
	CHECK_EQ(b->st.c[CVS_WC_GUEST6_LEARNT], 1);
	/* A duplicate address check from B: its target. */
	in_pfx(a, 0xbeef);
	memcpy(m + 8, a, 16);
	memcpy(snm + 13, a + 13, 3);
	memset(f, 0, sizeof(f));
	memcpy(f, bed_client_mac, 6);
	memcpy(f + 6, bed_client_mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[19] = 24;
	f[20] = IPPROTO_ICMPV6_;
	f[21] = 255;
	memcpy(f + 22, unspec, 16);
	memcpy(f + 38, snm, 16);
	memcpy(f + 54, m, 24);
	pkt_parse(&p, f, 78);
	c = ndp_icmp6_csum(&p);
	memcpy(f + 56, &c, 2);
	send6(b, BED_SLOT_B, f, 78);
	CHECK(atomic_load(&iid6[BED_SLOT_B]) == guest6_iid_of(a));
	CHECK(atomic_load(&iid6[BED_SLOT_A]) != guest6_iid_of(a));
	/* With a bad checksum it is not taken. */
	atomic_store(&iid6[BED_SLOT_B], 0);
	f[57] ^= 1;
	send6(b, BED_SLOT_B, f, 78);
	CHECK_EQ(atomic_load(&iid6[BED_SLOT_B]), 0);
}

/* World → [node6]:hostPort of A; A answers; the client's ACK. */
static void
test_hostport(struct dpbed *b)
{
	uint8_t f[256], ga[16], eui[16], dst[16];
	uint64_t mac_iid;
	uint32_t n;

	bed6(b);
	/* Nothing learnt: the EUI-64 of the guest MAC. */
	mac_iid = guest6_iid_of_mac(b->cfg.guest_mac);
	guest6_addr(eui, pfx6, mac_iid);
	n = tcp6(f, client6, node6, 40000, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_TO_SANDBOX);
	CHECK(!memcmp(f + 38, eui, 16));
	CHECK(!memcmp(f + 22, client6, 16));
	CHECK_EQ(port_at(f, 56), 8080);
	CHECK_EQ(port_at(f, 54), 40000);
	CHECK_EQ(ref_csum6(f, n, IPPROTO_TCP_), 0);
	CHECK_EQ(b->st.c[CVS_WC_HOSTPORT6_FLOWS], 1);
	/* Learnt now: a new flow goes to the learnt address. */
	in_pfx(ga, 0x77);
	n = tcp6(f, ga, client6, 1, 2, TCPF_ACK);
	send6(b, BED_SLOT_A, f, n);
	n = tcp6(f, client6, node6, 40001, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_TO_SANDBOX);
	CHECK(!memcmp(f + 38, ga, 16));
	/* The guest's SYN+ACK leaves from [node6]:hostPort. */
	n = tcp6(f, ga, client6, 8080, 40001, TCPF_SYN | TCPF_ACK);
	CHECK_EQ(send6(b, BED_SLOT_A, f, n), DP_TO_WORLD);
	CHECK(!memcmp(f + 22, node6, 16));
	CHECK(!memcmp(f + 38, client6, 16));
	CHECK_EQ(port_at(f, 54), BED_HP_A);
	CHECK_EQ(ref_csum6(f, n, IPPROTO_TCP_), 0);
	CHECK(!memcmp(f, bed_client_mac, 6));
	n = tcp6(f, client6, node6, 40001, BED_HP_A, TCPF_ACK);
	CHECK_EQ(send6(b, 0, f, n), DP_TO_SANDBOX);
	CHECK_EQ(ref_csum6(f, n, IPPROTO_TCP_), 0);
	/* A SYN on the tuple of a closed flow takes its place (a client reusing its port). */
	{
		struct ct6_tuple t;
		struct ct6_session *s;
		int dir;

		ct6_tuple_set(&t, client6, node6, htons(40001), htons(BED_HP_A), 0, IPPROTO_TCP_);
		s = ct6_lookup(b->x.ct6, &t, &dir);
		CHECK(s != NULL && dir == CT_DIR_ORIG);
		if (s)
			s->state = CT_TCP_TIME_WAIT;
		n = tcp6(f, client6, node6, 40001, BED_HP_A, TCPF_SYN);
		CHECK_EQ(send6(b, 0, f, n), DP_TO_SANDBOX);
		CHECK_EQ(b->st.c[CVS_WC_PORT_REUSE], 1);
		s = ct6_lookup(b->x.ct6, &t, &dir);
		CHECK(s != NULL && s->state == CT_TCP_SYN_SENT);
	}
	/* Refusals: no host port, no session, a bad source, a sandbox gone. */
	n = tcp6(f, client6, node6, 40002, 20999, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_DROP);
	CHECK_EQ(b->st.drop[CVS_DROP_NO_HOSTPORT], 1);
	n = tcp6(f, client6, node6, 40003, BED_HP_A, TCPF_ACK);
	CHECK_EQ(send6(b, 0, f, n), DP_DROP);
	CHECK_EQ(b->st.drop[CVS_DROP_NO_SESSION], 1);
	in_pfx(dst, 5);
	n = tcp6(f, dst, node6, 40004, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_DROP);
	CHECK_EQ(b->st.drop[CVS_DROP_BAD_SOURCE], 1);
	n = tcp6(f, node6, node6, 40004, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_DROP);
	memset(dst, 0, 16);
	dst[0] = 0xfe;
	dst[1] = 0x80;
	dst[15] = 9;
	n = tcp6(f, dst, node6, 40004, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_DROP);
	memset(dst, 0, 16);
	dst[15] = 1;
	n = tcp6(f, dst, node6, 40004, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_DROP);
	CHECK_EQ(b->st.drop[CVS_DROP_BAD_SOURCE], 4);
	atomic_store(&b->alive[BED_SLOT_A], 0);
	n = tcp6(f, client6, node6, 40005, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_DROP);
	CHECK_EQ(b->st.drop[CVS_DROP_SANDBOX_GONE], 1);
	atomic_store(&b->alive[BED_SLOT_A], 1);
	/* The inbound limit counts both families: two IPv6 sessions towards A already. */
	CHECK_EQ(ct6_zone_inbound(b->x.ct6, BED_SLOT_A + 1), 2);
	atomic_store(&b->lim[BED_SLOT_A].inbound, 2);
	n = tcp6(f, client6, node6, 40006, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, 0, f, n), DP_DROP);
	CHECK_EQ(b->st.drop[CVS_DROP_LIMIT_INBOUND], 1);
	atomic_store(&b->lim[BED_SLOT_A].inbound, 0);
}

/*
 * The host path over IPv6: B's TCP to a port of the node's IPv6 address that no sandbox
 * exposes goes to the host through cube-dev from B's address of --sandbox-prefix6, and the
 * host's answer comes back; the host reaches A at A's address of the prefix, seen by A's guest
 * with the host's own source.
 */
static void
test_node_path(struct dpbed *b, const uint8_t ga[16], const uint8_t gb[16])
{
	static const uint8_t spfx[12] = { 0x20, 0x01, 0, 2, 0, 0, 0, 7 };
	uint8_t f[256], sb6[16], sa6[16], host6[16];
	uint64_t h0 = b->st.c[CVS_WC_HOST_FLOWS];
	uint32_t n;

	memcpy(b->cfg.sbx_pfx6, spfx, 12);
	memcpy(sb6, spfx, 12);
	memcpy(sb6 + 12, &b->sbx_ip_b, 4);
	memcpy(sa6, spfx, 12);
	memcpy(sa6 + 12, &b->sbx_ip_a, 4);
	memcpy(host6, spfx, 12);
	memcpy(host6 + 12, &b->cfg.host_ip, 4);
	n = tcp6(f, gb, node6, 33334, 4444, TCPF_SYN);
	CHECK_EQ(send6(b, BED_SLOT_B, f, n), DP_TO_HOST);
	CHECK(!memcmp(f + 22, sb6, 16) && !memcmp(f + 38, node6, 16));
	CHECK_EQ(port_at(f, 54), 33334);
	CHECK_EQ(port_at(f, 56), 4444);
	CHECK_EQ(ref_csum6(f, n, IPPROTO_TCP_), 0);
	n = tcp6(f, node6, sb6, 4444, 33334, TCPF_SYN | TCPF_ACK);
	CHECK_EQ(send6(b, 3, f, n), DP_TO_SANDBOX);
	CHECK(!memcmp(f + 22, node6, 16) && !memcmp(f + 38, gb, 16));
	CHECK_EQ(ref_csum6(f, n, IPPROTO_TCP_), 0);
	n = tcp6(f, host6, sa6, 45000, 8080, TCPF_SYN);
	CHECK_EQ(send6(b, 3, f, n), DP_TO_SANDBOX);
	CHECK(!memcmp(f + 22, host6, 16) && !memcmp(f + 38, ga, 16));
	CHECK_EQ(port_at(f, 56), 8080);
	CHECK_EQ(ref_csum6(f, n, IPPROTO_TCP_), 0);
	n = tcp6(f, ga, host6, 8080, 45000, TCPF_SYN | TCPF_ACK);
	CHECK_EQ(send6(b, BED_SLOT_A, f, n), DP_TO_HOST);
	CHECK(!memcmp(f + 22, sa6, 16) && !memcmp(f + 38, host6, 16));
	CHECK_EQ(b->st.c[CVS_WC_HOST_FLOWS], h0 + 2);
	/* An address of the prefix no sandbox holds, and the host's own. */
	sa6[15] = 0x77;
	n = tcp6(f, host6, sa6, 45001, 8080, TCPF_SYN);
	CHECK_EQ(send6(b, 3, f, n), DP_DROP);
	CHECK_EQ(b->st.drop[CVS_DROP_NOT_SANDBOX_IP], 1);
	/* A guest does not open flows to the prefix: the host does. */
	b->st.drop[CVS_DROP_IPV6] = 0;
	n = tcp6(f, gb, host6, 33336, 22, TCPF_SYN);
	CHECK_EQ(send6(b, BED_SLOT_B, f, n), DP_DROP);
	CHECK_EQ(b->st.drop[CVS_DROP_IPV6], 1);
}

/* B → [node6]:hostPort of A: A sees [node6]:SNAT port and answers through us. */
static void
test_hairpin(struct dpbed *b)
{
	uint8_t f[256], ga[16], gb[16];
	uint16_t snat;
	uint32_t n;

	bed6(b);
	in_pfx(ga, 0xa);
	in_pfx(gb, 0xb);
	atomic_store(&iid6[BED_SLOT_A], guest6_iid_of(ga));
	n = tcp6(f, gb, node6, 33333, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, BED_SLOT_B, f, n), DP_TO_SANDBOX);
	CHECK(!memcmp(f + 22, node6, 16));
	CHECK(!memcmp(f + 38, ga, 16));
	CHECK_EQ(port_at(f, 56), 8080);
	snat = port_at(f, 54);
	CHECK(snat >= b->cfg.snat_lo && snat <= b->cfg.snat_hi);
	CHECK_EQ(ref_csum6(f, n, IPPROTO_TCP_), 0);
	CHECK_EQ(b->st.c[CVS_WC_HAIRPIN6_FLOWS], 1);
	n = tcp6(f, ga, node6, 8080, snat, TCPF_SYN | TCPF_ACK);
	CHECK_EQ(send6(b, BED_SLOT_A, f, n), DP_TO_SANDBOX);
	CHECK(!memcmp(f + 22, node6, 16));
	CHECK(!memcmp(f + 38, gb, 16));
	CHECK_EQ(port_at(f, 54), BED_HP_A);
	CHECK_EQ(port_at(f, 56), 33333);
	CHECK_EQ(ref_csum6(f, n, IPPROTO_TCP_), 0);
	test_node_path(b, ga, gb);
	/* A policy without internet access denies it, as IPv6 egress: a RST back. */
	b->pol_b.internet = false;
	n = tcp6(f, gb, node6, 33335, BED_HP_A, TCPF_SYN);
	CHECK_EQ(send6(b, BED_SLOT_B, f, n), DP_BACK);
	CHECK_EQ(b->st.c[CVS_WC_RST_SENT], 1);
	CHECK(f[67] & TCPF_RST);
	b->pol_b.internet = true;
}

int
main(void)
{
	static struct dpbed b;

	CHECK_EQ(bed_init(&b, 256), 0);
	test_pure();
	test_learn(&b);
	test_hostport(&b);
	test_hairpin(&b);
	ct6_destroy(b.x.ct6);
	bed_fini(&b);
	return t_done("guest6");
}
