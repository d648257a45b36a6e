/* SPDX-License-Identifier: BSD-3-Clause */
/* Parser: well-formed frames, every truncation, odd headers. */
#include "t.h"
#include "pktgen.h"

static void
test_valid(void)
{
	uint8_t f[256];
	struct pkt p;
	uint32_t n;

	n = build_frame(f, IPPROTO_TCP_, ip4("198.18.0.2"), ip4("198.18.0.1"), htons(40000),
			htons(20000), TCPF_SYN, 10);
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
	CHECK_EQ(p.proto, IPPROTO_TCP_);
	CHECK_EQ(p.sport, htons(40000));
	CHECK_EQ(p.dport, htons(20000));
	CHECK_EQ(p.tcp_flags, TCPF_SYN);
	CHECK_EQ(p.l4_off, 34);
	CHECK_EQ(p.len, n);
	/* Ethernet padding after the datagram is trimmed. */
	CHECK_EQ(pkt_parse(&p, f, n + 20), PKT_IPV4);
	CHECK_EQ(p.len, n);

	n = build_frame(f, IPPROTO_UDP_, 1, 2, htons(5), htons(6), 0, 0);
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
	CHECK_EQ(p.dport, htons(6));
	n = build_frame(f, IPPROTO_ICMP_, 1, 2, htons(77), 0, 0, 4);
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
	CHECK_EQ(p.sport, htons(77));
	CHECK_EQ(p.dport, htons(77));
}

static void
test_truncated(void)
{
	static const uint8_t protos[] = { IPPROTO_TCP_, IPPROTO_UDP_, IPPROTO_ICMP_ };
	uint8_t f[256], copy[256];
	struct pkt p;
	uint32_t n, len, i;

	for (i = 0; i < 3; i++) {
		n = build_frame(f, protos[i], 1, 2, 3, 4, TCPF_ACK, 0);
		for (len = 0; len < n; len++) {
			/* A fresh buffer of exactly 'len' bytes: ASan would catch an overread. */
			uint8_t *b = malloc(len ? len : 1);

			memcpy(b, f, len);
			CHECK_EQ(pkt_parse(&p, b, len), PKT_BAD);
			if (len < 14)
				CHECK_EQ(p.drop, CVS_DROP_RUNT);
			else if (len < 34)
				CHECK_EQ(p.drop, CVS_DROP_IP_HEADER);
			else
				CHECK_EQ(p.drop, CVS_DROP_IP_LENGTH);
			free(b);
		}
	}
	/* IP total length covering only part of the L4 header. */
	n = build_frame(f, IPPROTO_TCP_, 1, 2, 3, 4, TCPF_ACK, 0);
	memcpy(copy, f, n);
	((struct ip4_hdr *)(copy + 14))->tot_len = htons(30);
	CHECK_EQ(pkt_parse(&p, copy, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_L4_HEADER);
}

static void
test_odd(void)
{
	uint8_t f[256];
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);
	struct tcp_hdr *th = (struct tcp_hdr *)(f + 34);
	struct pkt p;
	uint32_t n;

	n = build_frame(f, IPPROTO_TCP_, 1, 2, 3, 4, TCPF_ACK, 0);
	ip->ver_ihl = 0x44;	/* IHL < 5 */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_IP_HEADER);
	ip->ver_ihl = 0x4f;	/* IHL 60 bytes > frame */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_IP_HEADER);
	ip->ver_ihl = 0x65;	/* version 6 */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	ip->ver_ihl = 0x45;
	ip->tot_len = htons(19);	/* smaller than the header */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_IP_LENGTH);
	ip->tot_len = htons(40);
	/* A first fragment is parsed as a whole packet; a later one has no L4 header. */
	ip->frag_off = htons(0x2000);	/* MF */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
	CHECK_EQ(p.frag, PKT_FRAG_FIRST);
	ip->frag_off = htons(5);	/* offset */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_FRAG);
	CHECK_EQ(p.frag, PKT_FRAG_LATER);
	ip->frag_off = htons(1);	/* TCP at offset 8: over the first fragment's header */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_FRAGMENT);
	ip->frag_off = htons(0x4000);	/* DF is fine */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
	th->doff = 4 << 4;	/* data offset < 5 */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_L4_HEADER);
	th->doff = 15 << 4;	/* beyond the segment */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	th->doff = 5 << 4;
	ip->proto = 47;		/* GRE */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_PROTO);
	((struct eth_hdr *)f)->type = htons(0x86dd);	/* an IPv4 header is no IPv6 one */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_IP_HEADER);
	((struct eth_hdr *)f)->type = htons(0x88cc);	/* LLDP */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_ETHERTYPE);
	((struct eth_hdr *)f)->type = htons(ETHTYPE_ARP);
	CHECK_EQ(pkt_parse(&p, f, 14 + 27), PKT_BAD);
	CHECK_EQ(p.drop, CVS_DROP_ARP);
	CHECK_EQ(pkt_parse(&p, f, 14 + 28), PKT_ARP);
}

/* An IPv6 header at f + 14 with 'plen' bytes after it, then the ext headers hdrs[]. */
static uint32_t
ip6_frame(uint8_t *f, uint8_t nxt, uint16_t plen)
{
	memset(f, 0, 14 + 40 + plen);
	f[6] = 2;
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[18] = (uint8_t)(plen >> 8);
	f[19] = (uint8_t)plen;
	f[20] = nxt;
	f[21] = 64;
	f[22] = 0xfd;	/* a ULA source */
	f[38] = 0x20;
	return 14 + 40 + plen;
}

/* One extension header of 8 bytes at 'off' leading to 'next'. */
static void
ext8(uint8_t *f, uint32_t off, uint8_t next)
{
	f[off] = next;
	f[off + 1] = 0;
}

/*
 * IPv6: a well-formed packet is told from a malformed one and walked past its extension
 * headers (hop-by-hop only first, at most 8, each within the payload); nothing is translated.
 */
static void
test_ipv6(void)
{
	uint8_t f[512];
	struct pkt p;
	uint32_t n, i;

	n = ip6_frame(f, IPPROTO_UDP_, 8);
	CHECK_EQ(pkt_parse(&p, f, n + 10), PKT_IPV6);
	CHECK_EQ(p.proto, IPPROTO_UDP_);
	CHECK_EQ(p.l4_off, 54);
	CHECK_EQ(p.len, n);		/* padding trimmed */
	/* Hop-by-hop, destination options, a fragment header, then ICMPv6 (58). */
	n = ip6_frame(f, IP6_NH_HOPOPTS, 24 + 8);
	ext8(f, 54, IP6_NH_DSTOPTS);
	ext8(f, 62, IP6_NH_FRAGMENT);
	ext8(f, 70, 58);
	f[72] = 0x05;	/* offset 160: a later fragment */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
	CHECK_EQ(p.proto, 58);
	CHECK_EQ(p.l4_off, 78);
	CHECK_EQ(p.frag, PKT_FRAG_LATER);
	/* No next header: well-formed, nothing after it. */
	n = ip6_frame(f, IP6_NH_NONE, 0);
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
	/* Malformed, each with its reason. */
	CHECK(pkt_parse(&p, f, 14 + 39) == PKT_BAD && p.drop == CVS_DROP_IP_HEADER);
	f[14] = 0x40;
	CHECK(pkt_parse(&p, f, n) == PKT_BAD && p.drop == CVS_DROP_IP_HEADER);
	n = ip6_frame(f, IPPROTO_TCP_, 100);
	CHECK(pkt_parse(&p, f, n - 1) == PKT_BAD && p.drop == CVS_DROP_IP_LENGTH);
	n = ip6_frame(f, IP6_NH_HOPOPTS, 4);
	CHECK(pkt_parse(&p, f, n) == PKT_BAD && p.drop == CVS_DROP_IP6_EXT);
	n = ip6_frame(f, IP6_NH_DSTOPTS, 16);
	ext8(f, 54, IP6_NH_HOPOPTS);
	CHECK(pkt_parse(&p, f, n) == PKT_BAD && p.drop == CVS_DROP_IP6_EXT);
	n = ip6_frame(f, IP6_NH_ROUTING, 8);
	f[55] = 1;	/* 16 bytes, only 8 there */
	CHECK(pkt_parse(&p, f, n) == PKT_BAD && p.drop == CVS_DROP_IP6_EXT);
	n = ip6_frame(f, IP6_NH_DSTOPTS, 9 * 8);
	for (i = 0; i < 9; i++)
		ext8(f, 54 + 8 * i, IP6_NH_DSTOPTS);
	CHECK(pkt_parse(&p, f, n) == PKT_BAD && p.drop == CVS_DROP_IP6_EXT);
	ext8(f, 54 + 8 * 7, IP6_NH_NONE);	/* 8 of them is the most */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
	/* The upper layer as for IPv4: ports, flags, an echo's id; ICMPv4 is no IPv6 protocol. */
	n = ip6_frame(f, IPPROTO_TCP_, 20);
	f[54] = 0x9c; f[55] = 0x40; f[56] = 0x00; f[57] = 0x50; f[66] = 5 << 4; f[67] = TCPF_SYN;
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
	CHECK(p.sport == htons(40000) && p.dport == htons(80) && p.tcp_flags == TCPF_SYN);
	CHECK(pkt_parse(&p, f, n - 1) == PKT_BAD && p.drop == CVS_DROP_IP_LENGTH);
	f[19] = 19;
	CHECK(pkt_parse(&p, f, n - 1) == PKT_BAD && p.drop == CVS_DROP_L4_HEADER);
	n = ip6_frame(f, IPPROTO_UDP_, 8);
	f[54] = 0x13; f[55] = 0x88; f[57] = 53;
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
	CHECK(p.sport == htons(5000) && p.dport == htons(53));
	n = ip6_frame(f, IPPROTO_ICMPV6_, 8);
	f[54] = ICMP6_ECHO_REQ; f[58] = 0x12; f[59] = 0x34;
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
	CHECK(p.sport == htons(0x1234) && p.dport == htons(0x1234));
	f[54] = 135;	/* a neighbour solicitation: no id */
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
	CHECK(p.sport == 0 && p.dport == 0);
	n = ip6_frame(f, IPPROTO_ICMP_, 8);
	CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);	/* not ours to parse: the pipeline's */
	n = ip6_frame(f, IPPROTO_UDP_, 8);
	f[22] = 0xff;
	CHECK(pkt_parse(&p, f, n) == PKT_BAD && p.drop == CVS_DROP_BAD_SOURCE);
}

static void
test_random(void)
{
	uint8_t f[128];
	struct pkt p;
	int i, j;

	srand(42);
	for (i = 0; i < 200000; i++) {
		uint32_t len = (uint32_t)(rand() % (int)sizeof(f));

		for (j = 0; j < (int)len; j++)
			f[j] = (uint8_t)rand();
		if (i % 3 == 1) {
			f[12] = 0x08;
			f[13] = 0;
			if (len > 14)
				f[14] = (uint8_t)(0x40 | (f[14] & 15));
		} else if (i % 3 == 2) {
			f[12] = 0x86;
			f[13] = 0xdd;
			if (len > 14)
				f[14] = (uint8_t)(0x60 | (f[14] & 15));
			if (len > 20)
				f[20] = (uint8_t)(i % 5 == 0 ? IP6_NH_HOPOPTS : f[20] % 64);
		}
		pkt_parse(&p, f, len);
		CHECK((p.kind != PKT_IPV4 && p.kind != PKT_IPV6) || (p.len <= len && p.l4_off <= p.len));
	}
}

int
main(void)
{
	test_valid();
	test_truncated();
	test_odd();
	test_ipv6();
	test_random();
	return t_done("test_pkt");
}
