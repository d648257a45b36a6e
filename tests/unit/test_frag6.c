/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 datagrams in the fragment table (frag.h), issue 34: the table test_frag.c checks with
 * IPv4 keeps IPv6 ones apart from them, with the ranges and lengths of the Fragment header.
 */
#include <stdbool.h>

#include "t.h"
#include "pktgen.h"
#include "dp.h"
#include "frag.h"

/*
 * An IPv6 fragment: a Fragment header right after the fixed one, 'plen' data bytes at 'off',
 * source ending in 'src', id 'id'. Its key in *k.
 */
static uint32_t
mkfrag6(uint8_t *f, uint8_t src, uint32_t id, uint32_t off, uint32_t plen, bool mf,
	uint16_t zone, struct frag_key *k)
{
	struct ipv6_hdr *ip6 = (struct ipv6_hdr *)(f + 14);
	uint8_t *fh = f + 54;
	uint32_t i, nid = htonl(id);

	memset(f, 0, 62);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip6->vtc_flow = htonl(6u << 28);
	ip6->plen = htons((uint16_t)(8 + plen));
	ip6->nxt = IP6_NH_FRAGMENT;
	ip6->hlim = 64;
	ip6->saddr[0] = 0x20;
	ip6->saddr[15] = src;
	ip6->daddr[0] = 0x20;
	ip6->daddr[15] = 1;
	fh[0] = IPPROTO_UDP_;
	fh[2] = (uint8_t)(off >> 8);
	fh[3] = (uint8_t)(off | (mf ? 1 : 0));
	memcpy(fh + 4, &nid, 4);
	for (i = 0; i < plen; i++)
		f[62 + i] = (uint8_t)(off + i);
	memset(k, 0, sizeof(*k));
	memcpy(k->a6, ip6->saddr, 16);
	memcpy(k->a6 + 16, ip6->daddr, 16);
	k->id = nid;
	k->zone = zone;
	k->proto = IPPROTO_UDP_;
	k->v6 = 1;
	return 62 + plen;
}

/*
 * IPv6 datagrams in the same table: told apart by their whole source address, never mixed
 * with an IPv4 one whose other fields match; ranges from the Fragment header (offset in its
 * top 13 bits, M the lowest), the rules on lengths as IPv4's.
 */
static void
test_ipv6(void)
{
	static uint8_t f0[1600], f1[1600], g1[1600], h[1600];
	struct frag_table *t = frag_create(NULL, 16);
	struct frag_xlat x, got;
	struct frag_key k0, k1, kb, k4;
	enum frag_verdict v;
	enum frag_reason why;
	uint32_t l0, l1, lg, lh;

	memset(&x, 0, sizeof(x));
	x.v6 = 1;
	memset(x.a6, 0x66, 32);
	x.action = DP_TO_SANDBOX;
	x.slot = 6;
	x.mtu = 1500;
	l0 = mkfrag6(f0, 2, 77, 0, 1000, true, 1, &k0);
	l1 = mkfrag6(f1, 2, 77, 1000, 500, false, 1, &k1);
	/* Another source with the same id: the low bytes of the address differ only. */
	lg = mkfrag6(g1, 3, 77, 1000, 500, false, 1, &kb);
	CHECK_EQ(frag_first(t, &k0, f0, l0, &x, 10, &v, &why), 0);
	CHECK_EQ(v, FRAG_FORWARD);
	CHECK_EQ(frag_other(t, &kb, g1, lg, 10, &got, &why), FRAG_HELD);
	/* An IPv4 key with the same (zero) IPv4 fields and id: another datagram. */
	k4 = k1;
	k4.v6 = 0;
	CHECK_EQ(frag_other(t, &k4, f1, l1, 10, &got, &why), FRAG_HELD);
	CHECK_EQ(frag_other(t, &k1, f1, l1, 10, &got, &why), FRAG_FORWARD);
	CHECK(got.v6 && !memcmp(got.a6, x.a6, 32) && got.slot == x.slot);
	CHECK_EQ(frag_in_use(t), 2);
	/* A middle fragment of 1,001 bytes, one past 65,535. */
	lh = mkfrag6(h, 4, 78, 1000, 1001, true, 1, &kb);
	CHECK_EQ(frag_other(t, &kb, h, lh, 10, &got, &why), FRAG_DROP);
	CHECK_EQ(why, FRAG_R_BAD_LENGTH);
	lh = mkfrag6(h, 4, 78, 65528, 16, false, 1, &kb);
	CHECK_EQ(frag_other(t, &kb, h, lh, 10, &got, &why), FRAG_DROP);
	CHECK_EQ(why, FRAG_R_TOO_LONG);
	/* The payload length reaching past the frame. */
	lh = mkfrag6(h, 4, 78, 1000, 16, false, 1, &kb);
	CHECK_EQ(frag_other(t, &kb, h, lh - 1, 10, &got, &why), FRAG_DROP);
	CHECK_EQ(why, FRAG_R_BAD_LENGTH);
	frag_destroy(t);
}

int
main(void)
{
	test_ipv6();
	return t_done("unit-frag6");
}
