/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbour discovery on a sandbox's link (ndp.h): solicitations as a Linux guest sends them
 * are recognised, every check of RFC 4861 6.1.1 / 7.1.1 refuses what it must, and the replies
 * parse back as well-formed IPv6 with a checksum that verifies and the fields a guest reads.
 */
#include "t.h"
#include "ndp.h"

static const uint8_t guest_mac[6] = { 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc };
static const uint8_t gw_mac[6] = { 0x20, 0x90, 0x6f, 0xcf, 0xcf, 0xcf };
/* The guest's link-local address from its MAC (EUI-64). */
static const uint8_t guest_ll[16] = { 0xfe, 0x80, [8] = 0x22, 0x90, 0x6f, 0xff, 0xfe, 0xfc,
				      0xfc, 0xfc };
/* The solicited-node group of fe80::1. */
static const uint8_t snm_gw[16] = { 0xff, 0x02, [11] = 1, 0xff, 0, 0, 1 };
static const uint8_t all_routers[16] = { 0xff, 0x02, [15] = 2 };

/* An ICMPv6 frame from 'src' to 'dst' with the message m (mlen bytes), checksummed. */
static uint32_t
icmp6_frame(uint8_t *f, const uint8_t src[16], const uint8_t dst[16], const uint8_t *m,
	    uint32_t mlen, uint8_t hlim)
{
	struct pkt p;
	uint16_t c;

	memset(f, 0, NDP_REPLY_ROOM + 64);
	memcpy(f, gw_mac, 6);
	memcpy(f + 6, guest_mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[18] = (uint8_t)(mlen >> 8);
	f[19] = (uint8_t)mlen;
	f[20] = IPPROTO_ICMPV6_;
	f[21] = hlim;
	memcpy(f + 22, src, 16);
	memcpy(f + 38, dst, 16);
	memcpy(f + 54, m, mlen);
	pkt_parse(&p, f, 54 + mlen);
	c = ndp_icmp6_csum(&p);
	memcpy(f + 56, &c, 2);
	return 54 + mlen;
}

/* A neighbour solicitation for 'target' with a source link-layer option. */
static uint32_t
ns_frame(uint8_t *f, const uint8_t src[16], const uint8_t target[16], bool slla)
{
	uint8_t m[32] = { ICMP6_NS };

	memcpy(m + 8, target, 16);
	m[24] = 1;
	m[25] = 1;
	memcpy(m + 26, guest_mac, 6);
	return icmp6_frame(f, src, snm_gw, m, slla ? 32 : 24, 255);
}

/*
 * The ICMPv6 checksum of the frame f (n bytes) as RFC 4443 2.3 defines it, in plain
 * big-endian arithmetic, independent of csum.h: 0 when the stored one is right.
 */
static uint16_t
ref_csum6(const uint8_t *f, uint32_t n)
{
	uint32_t sum = 0, len = n - 54, i;

	for (i = 22; i < 54; i += 2)
		sum += (uint32_t)f[i] << 8 | f[i + 1];
	sum += (len >> 16) + (len & 0xffff) + 58;
	for (i = 54; i < n; i += 2)
		sum += (uint32_t)f[i] << 8 | (i + 1 < n ? f[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int
parse(struct pkt *p, uint8_t *f, uint32_t n)
{
	return pkt_parse(p, f, n);
}

static void
test_ns(void)
{
	static uint8_t f[512];
	static const uint8_t zero[16], other[16] = { 0xfe, 0x80, [15] = 7 };
	uint8_t *m = f + 54;
	struct pkt p;
	uint32_t n;

	n = ns_frame(f, guest_ll, ndp_gw_ll, true);
	CHECK_EQ(ref_csum6(f, n), 0);	/* the test's own frames are right to begin with */
	CHECK_EQ(parse(&p, f, n), PKT_IPV6);
	CHECK(ndp_is_ns_for(&p, ndp_gw_ll));
	CHECK(!ndp_is_ns_for(&p, other));
	CHECK(!ndp_is_rs(&p));
	n = ndp_reply_na(&p, gw_mac);
	CHECK_EQ(n, 14 + 40 + 32);
	CHECK_EQ(parse(&p, f, n), PKT_IPV6);
	CHECK_EQ(ndp_icmp6_csum(&p), 0);	/* it verifies */
	CHECK_EQ(ref_csum6(f, n), 0);
	CHECK(!memcmp(f, guest_mac, 6) && !memcmp(f + 6, gw_mac, 6));
	CHECK(!memcmp(f + 22, ndp_gw_ll, 16) && !memcmp(f + 38, guest_ll, 16));
	CHECK_EQ(f[21], 255);
	CHECK(m[0] == ICMP6_NA && m[1] == 0 && m[4] == 0xe0);
	CHECK(!memcmp(m + 8, ndp_gw_ll, 16));
	CHECK(m[24] == 2 && m[25] == 1 && !memcmp(m + 26, gw_mac, 6));

	/* Each check refuses. */
	n = ns_frame(f, guest_ll, ndp_gw_ll, true);
	f[21] = 64;	/* forwarded: hop limit not 255 (the checksum does not cover it) */
	parse(&p, f, n);
	CHECK(!ndp_is_ns_for(&p, ndp_gw_ll));
	n = ns_frame(f, guest_ll, ndp_gw_ll, true);
	m[30] ^= 1;	/* the checksum fails */
	parse(&p, f, n);
	CHECK(!ndp_is_ns_for(&p, ndp_gw_ll));
	n = ns_frame(f, guest_ll, ndp_gw_ll, false);
	CHECK_EQ(n, 14 + 40 + 24);
	parse(&p, f, n);
	CHECK(ndp_is_ns_for(&p, ndp_gw_ll));	/* no option is fine */
	parse(&p, f, n - 1);
	CHECK(!ndp_is_ns_for(&p, ndp_gw_ll));	/* truncated */
	{
		uint8_t bad[32] = { ICMP6_NS, 1 };	/* code 1 */

		memcpy(bad + 8, ndp_gw_ll, 16);
		n = icmp6_frame(f, guest_ll, snm_gw, bad, 24, 255);
		parse(&p, f, n);
		CHECK(!ndp_is_ns_for(&p, ndp_gw_ll));
		bad[1] = 0;
		bad[24] = 1;	/* an option of length 0 */
		n = icmp6_frame(f, guest_ll, snm_gw, bad, 32, 255);
		parse(&p, f, n);
		CHECK(!ndp_is_ns_for(&p, ndp_gw_ll));
	}
	/* A duplicate address check for fe80::1: answered to all nodes, not solicited. */
	n = ns_frame(f, zero, ndp_gw_ll, false);
	parse(&p, f, n);
	CHECK(ndp_is_ns_for(&p, ndp_gw_ll));
	n = ndp_reply_na(&p, gw_mac);
	parse(&p, f, n);
	CHECK_EQ(ndp_icmp6_csum(&p), 0);
	CHECK(f[0] == 0x33 && f[1] == 0x33 && f[5] == 1 && f[38] == 0xff && f[53] == 1);
	CHECK_EQ(m[4], 0xa0);
	/* ... but never one that carries a link-layer address. */
	n = ns_frame(f, zero, ndp_gw_ll, true);
	parse(&p, f, n);
	CHECK(!ndp_is_ns_for(&p, ndp_gw_ll));
}

/* Find option 'type' in the RA at m (mlen bytes); its start or NULL. */
static const uint8_t *
ra_opt(const uint8_t *m, uint32_t mlen, uint8_t type)
{
	uint32_t off;

	for (off = 16; off + 8 <= mlen && m[off + 1]; off += m[off + 1] * 8u)
		if (m[off] == type)
			return m + off;
	return NULL;
}

static void
test_rs(void)
{
	static uint8_t f[512];
	uint8_t rs[16] = { ICMP6_RS }, *m = f + 54;
	struct ndp_ra ra = { .lifetime = 1800, .mtu = 1500, .have_prefix = true,
			     .prefix = { 0x20, 0x01, 0, 2, 0, 0, 0, 0x06 },
			     .valid = 86400, .preferred = 14400 };
	const uint8_t *o;
	struct pkt p;
	uint32_t n;

	rs[8] = 1;
	rs[9] = 1;
	memcpy(rs + 10, guest_mac, 6);
	n = icmp6_frame(f, guest_ll, all_routers, rs, 16, 255);
	parse(&p, f, n);
	CHECK(ndp_is_rs(&p));
	CHECK(!ndp_is_ns_for(&p, ndp_gw_ll));
	n = ndp_reply_ra(&p, gw_mac, &ra);
	CHECK_EQ(n, NDP_REPLY_ROOM);
	CHECK_EQ(parse(&p, f, n), PKT_IPV6);
	CHECK_EQ(ndp_icmp6_csum(&p), 0);
	CHECK_EQ(ref_csum6(f, n), 0);
	CHECK(!memcmp(f + 22, ndp_gw_ll, 16) && !memcmp(f + 38, guest_ll, 16));
	CHECK(m[0] == ICMP6_RA && m[4] == 64 && m[6] == 0x07 && m[7] == 0x08);
	o = ra_opt(m, n - 54, 1);
	CHECK(o && !memcmp(o + 2, gw_mac, 6));
	o = ra_opt(m, n - 54, 5);
	CHECK(o && o[6] == 0x05 && o[7] == 0xdc);
	o = ra_opt(m, n - 54, 3);
	CHECK(o && o[1] == 4 && o[2] == 64 && o[3] == 0x40 && !memcmp(o + 16, ra.prefix, 8));

	/* Not a default router, no options but its address: 24 bytes of message. */
	memset(&ra, 0, sizeof(ra));
	n = icmp6_frame(f, guest_ll, all_routers, rs, 16, 255);
	parse(&p, f, n);
	n = ndp_reply_ra(&p, gw_mac, &ra);
	CHECK_EQ(n, 54 + 24);
	parse(&p, f, n);
	CHECK_EQ(ndp_icmp6_csum(&p), 0);
	CHECK(m[6] == 0 && m[7] == 0);
	/* From the unspecified address with a link-layer option: refused. */
	{
		static const uint8_t zero[16];

		n = icmp6_frame(f, zero, all_routers, rs, 16, 255);
		parse(&p, f, n);
		CHECK(!ndp_is_rs(&p));
		n = icmp6_frame(f, zero, all_routers, rs, 8, 255);
		parse(&p, f, n);
		CHECK(ndp_is_rs(&p));
	}
}

/* An unsolicited advertisement: to all nodes, from fe80::1, as a solicited one otherwise. */
static void
test_unsolicited(void)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	static uint8_t f[NDP_REPLY_ROOM];
	struct ndp_ra ra = { .lifetime = 1800, .mtu = 1400, .have_prefix = true,
			     .prefix = { 0x20, 0x01, 0, 2, 0, 0, 0, 0x06 },
			     .valid = 86400, .preferred = 14400 };
	const uint8_t *m = f + 54, *o;
	struct pkt p;
	uint32_t n;

	memset(f, 0xa5, sizeof(f));
	n = ndp_build_ra(f, gw_mac, &ra);
	CHECK_EQ(n, NDP_REPLY_ROOM);
	CHECK_EQ(parse(&p, f, n), PKT_IPV6);
	CHECK_EQ(ref_csum6(f, n), 0);
	CHECK(!memcmp(f, all_nodes_mac, 6) && !memcmp(f + 6, gw_mac, 6));
	CHECK(f[14] == 0x60 && f[15] == 0 && f[20] == IPPROTO_ICMPV6_ && f[21] == 255);
	CHECK(!memcmp(f + 22, ndp_gw_ll, 16) && !memcmp(f + 38, all_nodes, 16));
	CHECK(m[0] == ICMP6_RA && m[1] == 0 && m[6] == 0x07 && m[7] == 0x08);
	o = ra_opt(m, n - 54, 5);
	CHECK(o && o[6] == 0x05 && o[7] == 0x78);
	o = ra_opt(m, n - 54, 3);
	CHECK(o && !memcmp(o + 16, ra.prefix, 8));
}

int
main(void)
{
	test_ns();
	test_rs();
	test_unsolicited();
	return t_done("unit-ndp");
}
