/* SPDX-License-Identifier: BSD-3-Clause */
/* Incremental checksum updates checked against full recomputation on random packets. */
#include "t.h"
#include "pktgen.h"
#include "nat.h"

/* The folded pseudo-header sum a sender with checksum offload leaves in the field. */
static uint16_t
pseudo_of(const uint8_t *f, uint32_t n)
{
	uint32_t s = csum_partial(f + 26, 8, 0) + htons(f[23]) + htons((uint16_t)(n - 34));

	return csum_fold(s);
}

/*
 * Partial checksums (issue 33): completed to what the full computation gives, at every length
 * and odd byte count; a valid segment is never changed, whatever its checksum value; a wrong
 * checksum that is not the pseudo-header sum stays wrong.
 */
static void
check_partial(void)
{
	uint8_t f[2048], g[2048];
	struct pkt p;
	int i, done = 0, wrong = 0, changed = 0;

	for (i = 0; i < 20000; i++) {
		uint8_t proto = i & 1 ? IPPROTO_UDP_ : IPPROTO_TCP_;
		uint32_t src = htonl(0x0a000000u | (uint32_t)rand() % 0xffffff);
		uint32_t n = build_frame(f, proto, src, (uint32_t)rand(), (uint16_t)rand(),
					 (uint16_t)rand(), TCPF_ACK, (uint32_t)(rand() % 1460));
		uint16_t *check = (uint16_t *)(f + 34 + (proto == IPPROTO_TCP_ ? 16 : 6));

		memcpy(g, f, n);
		CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
		/* The valid frame: completion, if its checksum happens to match, changes nothing. */
		pkt_csum_complete(&p);
		changed += memcmp(f, g, n) != 0;
		*check = pseudo_of(f, n);
		CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
		done += pkt_csum_complete(&p);
		changed += memcmp(f, g, n) != 0;
		/* A wrong value other than the pseudo-header sum stays. */
		*check = (uint16_t)(pseudo_of(f, n) + 1 + (uint16_t)(rand() % 0xfffe));
		CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
		pkt_csum_complete(&p);
		wrong += !frame_csums_ok(f);
	}
	CHECK_EQ(done, 20000);
	CHECK_EQ(changed, 0);
	CHECK(wrong >= 19990);
	/* A UDP segment without a checksum keeps none. */
	{
		uint32_t n = build_frame(f, IPPROTO_UDP_, htonl(0x0a000001), 2, 3, 4, 0, 10);

		((struct udp_hdr *)(f + 34))->check = 0;
		pkt_parse(&p, f, n);
		CHECK_EQ(pkt_csum_complete(&p), 0);
		CHECK_EQ(((struct udp_hdr *)(f + 34))->check, 0);
	}
}

int
main(void)
{
	static const uint8_t protos[] = { IPPROTO_TCP_, IPPROTO_UDP_, IPPROTO_ICMP_ };
	uint8_t f[2048];
	struct pkt p;
	int i, bad = 0, kept_bad = 0;

	srand(7);
	for (i = 0; i < 100000; i++) {
		uint8_t proto = protos[i % 3];
		/* A unicast source: the parser drops group, loopback and zero senders. */
		uint32_t src = htonl(((uint32_t)rand() % 126 + 1) << 24 |
				     ((uint32_t)rand() & 0xffffff));
		uint32_t n = build_frame(f, proto, src, (uint32_t)rand(),
					 (uint16_t)rand(), (uint16_t)rand(), TCPF_ACK,
					 (uint32_t)(rand() % 1400));

		CHECK(frame_csums_ok(f));
		if (pkt_parse(&p, f, n) != PKT_IPV4) {
			bad++;
			continue;
		}
		nat_rewrite(&p, (uint32_t)rand(), (uint32_t)rand(), (uint16_t)rand(),
			    (uint16_t)rand());
		if (!frame_csums_ok(f))
			bad++;
	}
	CHECK_EQ(bad, 0);

	/* A UDP packet without checksum keeps none. */
	{
		uint32_t n = build_frame(f, IPPROTO_UDP_, 1, 2, 3, 4, 0, 10);
		struct udp_hdr *uh = (struct udp_hdr *)(f + 34);

		uh->check = 0;
		pkt_parse(&p, f, n);
		nat_rewrite(&p, 5, 6, 7, 8);
		CHECK_EQ(uh->check, 0);
	}
	/* A wrong checksum stays wrong: never "fixed". */
	for (i = 0; i < 1000; i++) {
		uint32_t n = build_frame(f, IPPROTO_TCP_, htonl(0x0a000000u | (uint32_t)i), 2, 3, 4,
					 TCPF_ACK, 20);

		((struct tcp_hdr *)(f + 34))->check ^= 0x0101;
		pkt_parse(&p, f, n);
		nat_rewrite(&p, (uint32_t)rand(), 9, (uint16_t)rand(), 11);
		kept_bad += !frame_csums_ok(f);
	}
	CHECK_EQ(kept_bad, 1000);
	check_partial();
	return t_done("test_csum");
}
