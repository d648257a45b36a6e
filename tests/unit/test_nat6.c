/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NAT66 rewriting (nat6_rewrite()): for TCP, UDP and ICMPv6 echoes with random addresses,
 * ports and payloads, the incrementally updated checksum equals a full recomputation done
 * here in plain big-endian arithmetic; a wrong checksum stays wrong by the same amount; an
 * ICMPv6 message other than an echo keeps its bytes 4-7.
 */
#include "t.h"
#include "nat.h"

/* The upper-layer checksum of the IPv6 frame f (n bytes, no extension headers) per RFC 8200 8.1. */
static uint16_t
ref_csum(const uint8_t *f, uint32_t n)
{
	uint32_t sum = 0, len = n - 54, i;

	for (i = 22; i < 54; i += 2)
		sum += (uint32_t)f[i] << 8 | f[i + 1];
	sum += (len >> 16) + (len & 0xffff) + f[20];
	for (i = 54; i < n; i += 2)
		sum += (uint32_t)f[i] << 8 | (i + 1 < n ? f[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t
frame(uint8_t *f, uint8_t proto, uint32_t paylen)
{
	uint32_t hl = proto == IPPROTO_TCP_ ? 20 : 8, n = 54 + hl + paylen, i, c;
	uint32_t ck = proto == IPPROTO_TCP_ ? 16 : proto == IPPROTO_UDP_ ? 6 : 2;

	for (i = 0; i < n; i++)
		f[i] = (uint8_t)rand();
	f[6] &= 0xfe;
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[18] = (uint8_t)((n - 54) >> 8);
	f[19] = (uint8_t)(n - 54);
	f[20] = proto;
	f[22] = 0x20;	/* unicast sources */
	if (proto == IPPROTO_TCP_)
		f[66] = 5 << 4;
	if (proto == IPPROTO_UDP_) {
		f[58] = (uint8_t)((n - 54) >> 8);
		f[59] = (uint8_t)(n - 54);
	}
	if (proto == IPPROTO_ICMPV6_) {
		f[54] = rand() & 1 ? ICMP6_ECHO_REQ : ICMP6_ECHO_REPLY;
		f[55] = 0;
	}
	f[54 + ck] = f[55 + ck] = 0;
	c = ref_csum(f, n);
	f[54 + ck] = (uint8_t)(c >> 8);
	f[55 + ck] = (uint8_t)c;
	return n;
}

static void
test_random(void)
{
	static const uint8_t protos[] = { IPPROTO_TCP_, IPPROTO_UDP_, IPPROTO_ICMPV6_ };
	uint8_t f[1600], s[16], d[16];
	struct pkt p;
	int i, j;

	for (i = 0; i < 30000; i++) {
		uint8_t proto = protos[i % 3];
		uint32_t paylen = (uint32_t)(rand() % 1400), n = frame(f, proto, paylen);
		uint16_t sp = (uint16_t)rand(), dp = (uint16_t)rand();
		/* A payload byte changed after the checksum was made (never a header's). */
		bool bad = i % 7 == 0 && paylen;

		for (j = 0; j < 16; j++) {
			s[j] = (uint8_t)rand();
			d[j] = (uint8_t)rand();
		}
		if (bad)
			f[n - 1] ^= 0x5a;	/* the stored checksum is now wrong */
		CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
		nat6_rewrite(&p, s, d, htons(sp), htons(dp));
		CHECK(!memcmp(f + 22, s, 16) && !memcmp(f + 38, d, 16));
		if (bad)
			f[n - 1] ^= 0x5a;
		CHECK_EQ(ref_csum(f, n), 0);
		if (proto != IPPROTO_ICMPV6_)
			CHECK(p.sport == htons(sp) && p.dport == htons(dp) && f[54] == sp >> 8 &&
			      f[57] == (dp & 0xff));
		else
			CHECK(f[58] == sp >> 8 && f[59] == (sp & 0xff));
	}
}

/* A Packet Too Big keeps its MTU; its checksum follows the addresses. */
static void
test_not_echo(void)
{
	uint8_t f[200], s[16] = { 0x20, 1 }, d[16] = { 0x20, 2 };
	struct pkt p;
	uint32_t n = frame(f, IPPROTO_ICMPV6_, 48), c;

	f[54] = 2;
	f[56] = f[57] = 0;
	f[58] = 0;
	f[59] = 0;
	f[60] = 0x05;
	f[61] = 0x00;
	c = ref_csum(f, n);
	f[56] = (uint8_t)(c >> 8);
	f[57] = (uint8_t)c;
	pkt_parse(&p, f, n);
	nat6_rewrite(&p, s, d, htons(777), htons(777));
	CHECK(f[58] == 0 && f[59] == 0 && f[60] == 5 && f[61] == 0);
	CHECK_EQ(ref_csum(f, n), 0);
}

/* A partial checksum (the pseudo-header's sum, as checksum offload leaves it) is completed. */
static void
test_partial(void)
{
	static const uint8_t protos[] = { IPPROTO_TCP_, IPPROTO_UDP_ };
	uint8_t f[1600];
	struct pkt p;
	int i;

	for (i = 0; i < 2000; i++) {
		uint8_t proto = protos[i % 2];
		uint32_t n = frame(f, proto, (uint32_t)(rand() % 1400)), sum = 0, len = n - 54, k;
		uint32_t ck = 54 + (proto == IPPROTO_TCP_ ? 16 : 6);

		for (k = 22; k < 54; k += 2)
			sum += (uint32_t)f[k] << 8 | f[k + 1];
		sum += (len >> 16) + (len & 0xffff) + proto;
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		f[ck] = (uint8_t)(sum >> 8);
		f[ck + 1] = (uint8_t)sum;
		CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV6);
		CHECK_EQ(pkt_csum_complete6(&p), 1);
		CHECK_EQ(ref_csum(f, n), 0);
		CHECK_EQ(pkt_csum_complete6(&p), 0);	/* complete now: left alone */
	}
}

int
main(void)
{
	srand(6);
	test_random();
	test_not_echo();
	test_partial();
	return t_done("unit-nat6");
}
