/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Path MTU handling: MSS clamping on every option layout (the value at odd offsets too), the
 * "fragmentation needed" answer parsed back, and fragments reassembled to the datagram.
 */
#include "t.h"
#include "pktgen.h"
#include "icmperr.h"
#include "mtu.h"

/* Enough for 9,000 bytes at MTU 68 under the 36-byte headers of the random frames. */
#define NOUT	288
#define ROOM	9100

/* Router alert (copied), NOPs, record route (not copied); record route, then LSRR (copied). */
static const uint8_t ra_opt[12] = { 0x94, 4, 0, 0, 1, 1, 1, 1, 7, 3, 4, 0 };
static const uint8_t rr_opt[16] = { 7, 7, 4, 0, 0, 0, 0, 0x83, 7, 4, 1, 2, 3, 4, 0, 0 };
static const uint8_t gw_mac[6] = { 2, 0, 0, 0, 0, 0x33 }, peer_mac[6] = { 2, 0, 0, 0, 0, 0x11 };
static uint8_t bufs[NOUT][ROOM];
static uint8_t *outs[NOUT];
static uint32_t lens[NOUT];

/* A UDP datagram with 'paylen' bytes of data, DF clear. */
static uint32_t
udp(uint8_t *f, uint32_t paylen)
{
	return build_frame(f, IPPROTO_UDP_, htonl(0x0a000002), 9, 1, 2, 0, paylen);
}

static void
ip_csum_set(uint8_t *f)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);

	ip->check = 0;
	ip->check = (uint16_t)~csum_fold(csum_partial(ip, (ip->ver_ihl & 15) * 4u, 0));
}

/* A TCP segment with options 'opt' ('olen' bytes, a multiple of 4) and 'paylen' bytes of data. */
static uint32_t
tcp_opts(uint8_t *f, uint8_t flags, const uint8_t *opt, uint32_t olen, uint32_t paylen)
{
	uint32_t n = build_frame(f, IPPROTO_TCP_, htonl(0x0a000000u | (uint32_t)rand() % 0xffff),
				 (uint32_t)rand(), (uint16_t)rand(), htons(443), flags, paylen);
	struct tcp_hdr *th = (struct tcp_hdr *)(f + 34);

	memmove(f + 54 + olen, f + 54, paylen);
	memcpy(f + 54, opt, olen);
	th->doff = (uint8_t)((20 + olen) / 4 << 4);
	((struct ip4_hdr *)(f + 14))->tot_len = htons((uint16_t)(40 + olen + paylen));
	ip_csum_set(f);
	th->check = 0;
	th->check = l4_csum(f + 14);
	return n + olen;
}

/* IPv4 options 'opt' ('olen' bytes, a multiple of 4) put into frame 'f' of 'n' bytes. */
static uint32_t
ip_opts(uint8_t *f, uint32_t n, const uint8_t *opt, uint32_t olen)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);

	memmove(f + 34 + olen, f + 34, n - 34);
	memcpy(f + 34, opt, olen);
	ip->ver_ihl = (uint8_t)(0x40 | (20 + olen) / 4);
	ip->tot_len = htons((uint16_t)(ntohs(ip->tot_len) + olen));
	ip_csum_set(f);
	return n + olen;
}

struct mss_case {
	const char *name;
	uint8_t opt[40];
	uint8_t olen;
	int8_t at[2];	/* where the clamped values are in the options, -1: none */
	uint8_t flags;
};

/* MSS 1460 (05 b4) clamped to 1400 where 'at' says, everything else left as it was. */
#define S	TCPF_SYN
#define SA	(TCPF_SYN | TCPF_ACK)
static const struct mss_case mss_cases[] = {
	{ "mss first", { 2, 4, 5, 0xb4 }, 4, { 2, -1 }, S },
	{ "nop, mss (odd)", { 1, 2, 4, 5, 0xb4, 1, 1, 0 }, 8, { 3, -1 }, SA },
	{ "3 nops, mss (odd)", { 1, 1, 1, 2, 4, 5, 0xb4, 0 }, 8, { 5, -1 }, S },
	{ "after timestamps", { 1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 2, 4, 5, 0xb4 }, 16,
	  { 14, -1 }, SA },
	{ "nop, timestamps, mss (odd)", { 1, 8, 10, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 2, 4, 5,
	  0xb4, 0 }, 16, { 13, -1 }, S },
	{ "linux syn", { 2, 4, 5, 0xb4, 4, 2, 8, 10, 9, 9, 9, 9, 0, 0, 0, 0, 1, 3, 3, 7 }, 20,
	  { 2, -1 }, SA },
	{ "two mss, one odd", { 2, 4, 5, 0xb4, 1, 2, 4, 0x23, 0x28, 0, 0, 0 }, 12, { 2, 7 }, S },
	{ "no mss", { 1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, 12, { -1, -1 }, SA },
	{ "mss after eol", { 0, 2, 4, 5, 0xb4, 0, 0, 0 }, 8, { -1, -1 }, S },
	{ "mss length 3", { 2, 3, 5, 0xb4 }, 4, { -1, -1 }, SA },
	{ "option length 0", { 1, 1, 9, 0, 2, 4, 5, 0xb4 }, 8, { -1, -1 }, S },
	{ "option length 1", { 2, 4, 5, 0xb4, 3, 1, 0, 0 }, 8, { -1, -1 }, SA },
	{ "option past header", { 2, 4, 5, 0xb4, 1, 1, 8, 10 }, 8, { -1, -1 }, S },
	{ "kind in last byte", { 2, 4, 5, 0xb4, 1, 1, 1, 8 }, 8, { -1, -1 }, SA },
	{ "mss 1400", { 2, 4, 0x05, 0x78 }, 4, { -1, -1 }, S },
	{ "mss 536", { 1, 1, 1, 2, 4, 0x02, 0x18, 0 }, 8, { -1, -1 }, SA },
	{ "not a syn", { 2, 4, 0x23, 0x28 }, 4, { -1, -1 }, TCPF_ACK },
	{ "fin", { 1, 1, 1, 2, 4, 0x23, 0x28, 0 }, 8, { -1, -1 }, TCPF_FIN | TCPF_ACK },
};

static void
check_mss_cases(void)
{
	uint8_t f[256], g[256];
	struct pkt p;
	size_t c;
	int i, got;

	for (c = 0; c < sizeof(mss_cases) / sizeof(mss_cases[0]); c++) {
		const struct mss_case *mc = &mss_cases[c];
		int want = mc->at[0] >= 0;
		/* With and without data, of odd lengths too. */
		uint32_t n = tcp_opts(f, mc->flags, mc->opt, mc->olen, (uint32_t)c * 3);

		memcpy(g, f, n);
		CHECK_EQ(pkt_parse(&p, f, n), PKT_IPV4);
		got = mtu_clamp_mss(&p, 1400);
		CHECK_EQ(got, want);
		if (got != want)
			fprintf(stderr, "  in case '%s'\n", mc->name);
		CHECK(frame_csums_ok(f));
		for (i = 0; i < 2 && mc->at[i] >= 0; i++) {
			CHECK_EQ(f[54 + mc->at[i]] << 8 | f[55 + mc->at[i]], 1400);
			memcpy(f + 54 + mc->at[i], g + 54 + mc->at[i], 2);
		}
		/* The checksum and the values aside, nothing changed. */
		memcpy(f + 50, g + 50, 2);
		CHECK(memcmp(f, g, n) == 0);
	}
	/* Not TCP: untouched whatever its bytes say. */
	c = build_frame(f, IPPROTO_UDP_, htonl(0x0a000001), 2, 3, 4, 0, 30);
	memcpy(f + 42, "\2\4\x23\x28", 4);
	memcpy(g, f, c);
	pkt_parse(&p, f, (uint32_t)c);
	CHECK_EQ(mtu_clamp_mss(&p, 1400), 0);
	CHECK(memcmp(f, g, c) == 0);
}

/* Random values at every alignment, and random option bytes: a change keeps the checksum. */
static void
check_mss_random(void)
{
	uint8_t f[256], g[256], opt[40];
	uint32_t i, k, olen, n;
	struct pkt p;
	int bad = 0, changed = 0;

	for (i = 0; i < 50000; i++) {
		uint16_t val = (uint16_t)rand(), max = (uint16_t)(rand() % 9000);

		k = (uint32_t)rand() % 37;
		olen = (k + 4 + 3) & ~3u;
		memset(opt, 0, sizeof(opt));
		memset(opt, 1, k);
		memcpy(opt + k, (const uint8_t[]){ 2, 4, (uint8_t)(val >> 8), (uint8_t)val }, 4);
		n = tcp_opts(f, TCPF_SYN, opt, olen, (uint32_t)rand() % 64);
		pkt_parse(&p, f, n);
		CHECK_EQ(mtu_clamp_mss(&p, max), val > max);
		CHECK_EQ(f[54 + k + 2] << 8 | f[54 + k + 3], val > max ? max : val);
		bad += !frame_csums_ok(f);
	}
	CHECK_EQ(bad, 0);
	for (i = 0; i < 50000; i++) {
		olen = 4 * ((uint32_t)rand() % 11);
		for (k = 0; k < olen; k++)
			opt[k] = (uint8_t)(rand() % 4 ? rand() % 6 : rand());
		n = tcp_opts(f, TCPF_SYN, opt, olen, (uint32_t)rand() % 16);
		memcpy(g, f, n);
		pkt_parse(&p, f, n);
		if (mtu_clamp_mss(&p, 1000)) {
			changed++;
			bad += !frame_csums_ok(f);
		} else {
			bad += memcmp(f, g, n) != 0;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK(changed > 100);
}

static uint8_t o[2048];

/* The answer to 'f' ('n' bytes, 'room' for it) from 192.0.2.1 by gw_mac, in 'o'. */
static uint32_t
answer(const uint8_t *f, uint32_t n, uint32_t room, uint16_t mtu)
{
	return mtu_frag_needed(o, room, f, n, ip4("192.0.2.1"), mtu, gw_mac, peer_mac);
}

/* The answer to frame 'f' parsed back: an RFC 1191 error quoting 'q' bytes of it. */
static void
check_answer(const uint8_t *f, uint32_t r, uint32_t q, uint16_t mtu)
{
	const struct ip4_hdr *in = (const struct ip4_hdr *)(f + 14);
	const struct icmp_hdr *ih = (const struct icmp_hdr *)(o + 34);
	uint32_t ihl = 0, avail = 0;
	struct pkt p;

	CHECK_EQ(r, 42 + q);
	CHECK_EQ(pkt_parse(&p, o, r), PKT_IPV4);
	CHECK(icmperr_is_error(&p));
	CHECK(frame_csums_ok(o));
	CHECK(memcmp(o, peer_mac, 6) == 0 && memcmp(o + 6, gw_mac, 6) == 0);
	CHECK_EQ(p.saddr, ip4("192.0.2.1"));
	CHECK_EQ(p.daddr, in->saddr);
	CHECK(pkt_ip(&p)->ttl == 64 && pkt_ip(&p)->frag_off == 0);
	CHECK(ih->type == 3 && ih->code == 4 && ih->id == 0);
	CHECK_EQ(ntohs(ih->seq), mtu);
	CHECK(memcmp(o + 42, f + 14, q) == 0);
	/* What the translation of ICMP errors reads of a quote. */
	CHECK(icmperr_quote(&p, &ihl, &avail) != NULL);
	CHECK(avail == q && ihl == (in->ver_ihl & 15) * 4u);
}

static void
check_frag_needed(void)
{
	static uint8_t f[2048], g[2048];
	uint32_t n, src = ip4("192.0.2.1"), peer = ip4("10.0.0.2"), dst = ip4("198.51.100.7");
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);

	n = build_frame(f, IPPROTO_UDP_, peer, dst, htons(5000), htons(53), 0, 1472);
	ip->frag_off = htons(0x4000);
	ip_csum_set(f);
	check_answer(f, answer(f, n, sizeof(o), 1400), MTU_QUOTE_MAX, 1400);
	/* In the frame's own buffer, to the MAC address it came from: the same answer. */
	memcpy(g, f, n);
	CHECK_EQ(mtu_frag_needed(g, sizeof(g), g, n, src, 1400, gw_mac, g + 6), 42 + MTU_QUOTE_MAX);
	CHECK(memcmp(g, o, 42 + MTU_QUOTE_MAX) == 0);
	/* Room for the header and 8 bytes: that much is quoted; a byte less, nothing written. */
	check_answer(f, answer(f, n, 70, 576), 28, 576);
	memset(o, 0xa5, sizeof(o));
	CHECK_EQ(answer(f, n, 69, 576), 0);
	CHECK(o[0] == 0xa5 && o[68] == 0xa5);
	/* A short datagram is quoted whole (an odd ICMP length), its Ethernet padding left out. */
	n = build_frame(f, IPPROTO_TCP_, peer, dst, 1, 2, TCPF_ACK, 13);
	memset(f + n, 0xee, 60);
	check_answer(f, answer(f, n + 60, sizeof(o), 68), n - 14, 68);
	/* IP options are quoted with the header. */
	n = ip_opts(f, n, ra_opt, 4);
	check_answer(f, answer(f, n, sizeof(o), 1280), n - 14, 1280);
}

/* One change to a valid frame: 'n' bytes 'val' at byte 'at'; 'ok' if it still gets an answer. */
struct poke {
	uint8_t at, n, val[4], ok;
};

static const struct poke fn_pokes[] = {
	{ 20, 2, { 0x20, 0 }, 1 },		/* MF: the first fragment */
	{ 20, 2, { 0x20, 0xb9 }, 0 },		/* a later one, at 1480 */
	{ 20, 2, { 0, 0xb9 }, 0 },		/* the last */
	{ 0, 1, { 1 }, 0 },			/* to an Ethernet group */
	{ 26, 4, { 0, 0, 0, 0 }, 0 },		/* from no host */
	{ 26, 4, { 127, 0, 0, 1 }, 0 },
	{ 26, 4, { 224, 0, 0, 1 }, 0 },
	{ 26, 4, { 255, 255, 255, 255 }, 0 },
	{ 16, 2, { 0, 28 }, 1 },		/* a header and 8 bytes */
	{ 16, 2, { 0, 27 }, 0 },		/* less */
	{ 16, 2, { 0x05, 0xe9 }, 0 },		/* more than the frame */
	{ 14, 1, { 0x65 }, 0 },			/* not IPv4 */
	{ 14, 1, { 0x44 }, 0 },			/* a header of 16 bytes */
	{ 12, 2, { 8, 6 }, 0 },			/* ARP */
};

static void
check_frag_refused(void)
{
	static const uint8_t types[] = { 0, 3, 4, 5, 11, 12, 19, 200 };
	static uint8_t f[2048];
	uint32_t n;
	size_t i;

	/* Echo requests and replies get one; ICMP errors, and types that may be, do not. */
	n = build_frame(f, IPPROTO_ICMP_, htonl(0x0a000002), 9, 7, 0, 0, 1000);
	check_answer(f, answer(f, n, sizeof(o), 1000), MTU_QUOTE_MAX, 1000);
	for (i = 0; i < sizeof(types); i++) {
		f[34] = types[i];
		CHECK_EQ(answer(f, n, sizeof(o), 1000) > 0, types[i] == 0);
	}
	for (i = 0; i < sizeof(fn_pokes) / sizeof(fn_pokes[0]); i++) {
		n = udp(f, 1472);
		memcpy(f + fn_pokes[i].at, fn_pokes[i].val, fn_pokes[i].n);
		CHECK_EQ(answer(f, n, sizeof(o), 1000) > 0, fn_pokes[i].ok);
	}
	CHECK_EQ(answer(f, 33, sizeof(o), 1000), 0);
}

/*
 * Check the 'cnt' fragments of frame 'f' for MTU 'mtu' and reassemble their data; true when
 * every check held and the data is the datagram's. 'f' may itself be a fragment.
 */
static int
reassembled(const uint8_t *f, uint32_t cnt, uint32_t mtu)
{
	static uint8_t data[65536];
	const struct ip4_hdr *in = (const struct ip4_hdr *)(f + 14);
	uint32_t ihl = (in->ver_ihl & 15) * 4u, pay = ntohs(in->tot_len) - ihl, k, j, at = 0;
	uint16_t fo = ntohs(in->frag_off);
	int ok = cnt > 0;

	for (k = 0; k < cnt && ok; k++) {
		const struct ip4_hdr *ip = (const struct ip4_hdr *)(outs[k] + 14);
		uint32_t tot = ntohs(ip->tot_len), chunk = tot - ihl;
		uint16_t ff = ntohs(ip->frag_off);
		int last = k + 1 == cnt;

		ok = lens[k] == 14 + tot && tot <= mtu && (ip->ver_ihl & 15) * 4u == ihl &&
		     memcmp(outs[k], f, 16) == 0 && memcmp(outs[k] + 18, f + 18, 2) == 0 &&
		     memcmp(outs[k] + 22, f + 22, 2) == 0 && memcmp(outs[k] + 26, f + 26, 8) == 0 &&
		     csum_fold(csum_partial(ip, ihl, 0)) == 0xffff && !(ff & 0x4000) &&
		     (ff & 0x1fff) * 8u == (fo & 0x1fff) * 8u + at &&
		     (last ? (ff & 0x2000) == (fo & 0x2000) : (ff & 0x2000) && chunk % 8 == 0);
		/* The first fragment of a datagram has its options; the others NOPs for some. */
		for (j = 34; ok && j < 14 + ihl; j++)
			ok = outs[k][j] == f[j] || ((ff & 0x1fff) && outs[k][j] == 1);
		if (ok && chunk <= pay - at)
			memcpy(data + at, outs[k] + 14 + ihl, chunk);
		at += chunk;
	}
	return ok && at == pay && memcmp(data, f + 14 + ihl, pay) == 0;
}

/* mtu_fragment() says no and leaves the first buffer as it was. */
static int
refused(const uint8_t *f, uint32_t n, uint32_t mtu, uint32_t nouts, uint32_t room)
{
	memset(bufs[0], 0xa5, 128);
	return mtu_fragment(f, n, mtu, outs, nouts, room, lens) == 0 && bufs[0][0] == 0xa5 &&
	       bufs[0][127] == 0xa5;
}

static void
check_fragment(void)
{
	static const uint32_t sizes[] = { 1500, 9000 }, mtus[] = { 576, 1280, 1400 };
	static uint8_t f[ROOM];
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);
	uint32_t n, cnt, i, bad = 0;

	for (i = 0; i < 6; i++) {
		uint32_t size = sizes[i / 3], mtu = mtus[i % 3], step = (mtu - 20) & ~7u;

		n = udp(f, size - 28);
		cnt = mtu_fragment(f, n, mtu, outs, NOUT, ROOM, lens);
		CHECK_EQ(cnt, (size - 20 + step - 1) / step);
		CHECK(reassembled(f, cnt, mtu));
	}
	/* Random sizes, MTUs, options, and frames that are already fragments. */
	for (i = 0; i < 3000; i++) {
		uint32_t mtu = MTU_MIN + (uint32_t)rand() % 9000, olen = 4 * ((uint32_t)rand() % 5);
		uint16_t fo = (uint16_t)(rand() % 2 ? 0 : (rand() % 2 ? 0x2000 : 0) | rand() % 512);

		n = udp(f, (uint32_t)rand() % (9000 - 28 - 16));
		if (olen)
			n = ip_opts(f, n, olen == 16 ? rr_opt : ra_opt, olen);
		ip->frag_off = htons(fo);
		ip_csum_set(f);
		cnt = mtu_fragment(f, n, mtu, outs, NOUT, ROOM, lens);
		bad += !reassembled(f, cnt, mtu);
	}
	CHECK_EQ(bad, 0);
	/* Options: all of them in the first fragment, the copied ones after. */
	n = ip_opts(f, udp(f, 1472), rr_opt, 16);
	cnt = mtu_fragment(f, n, 576, outs, NOUT, ROOM, lens);
	CHECK_EQ(cnt, 3);
	CHECK(reassembled(f, cnt, 576));
	CHECK(memcmp(outs[1] + 34, "\1\1\1\1\1\1\1", 7) == 0);
	CHECK(memcmp(outs[2] + 41, rr_opt + 7, 9) == 0);
	/* A datagram that fits is copied as it is, DF or not, its Ethernet padding left out. */
	n = udp(f, 10);
	ip->frag_off = htons(0x4000);
	ip_csum_set(f);
	CHECK_EQ(mtu_fragment(f, n + 20, 576, outs, NOUT, ROOM, lens), 1);
	CHECK(lens[0] == n && memcmp(outs[0], f, n) == 0);
}

static const struct poke frag_pokes[] = {
	{ 20, 2, { 0x40, 0 }, 0 },		/* DF */
	{ 20, 2, { 0x1f, 0xff }, 0 },		/* at 65,528: past 65,535 once reassembled */
	{ 20, 2, { 0x1f, 0x40 }, 1 },		/* at 64,000 */
	{ 16, 2, { 0x05, 0xdd }, 0 },		/* more than the frame */
	{ 14, 1, { 0x44 }, 0 },			/* a header of 16 bytes */
	{ 14, 1, { 0x65 }, 0 },			/* not IPv4 */
	{ 12, 2, { 8, 6 }, 0 },			/* ARP */
	{ 34, 4, { 1, 0x83, 9, 0 }, 0 },	/* malformed options (an LSRR past the header) */
};

static void
check_fragment_refused(void)
{
	static uint8_t f[ROOM];
	uint32_t n, cnt;
	uint8_t nops[40];
	size_t i;

	memset(nops, 1, sizeof(nops));
	n = udp(f, 1472);
	CHECK(refused(f, n, 67, NOUT, ROOM));
	CHECK_EQ(mtu_fragment(f, n, 68, outs, NOUT, ROOM, lens), 31);
	CHECK(refused(f, n, 576, 2, ROOM));
	CHECK_EQ(mtu_fragment(f, n, 576, outs, 3, ROOM, lens), 3);
	CHECK(refused(f, n, 576, 3, 14 + 20 + 552 - 1));
	CHECK_EQ(mtu_fragment(f, n, 576, outs, 3, 14 + 20 + 552, lens), 3);
	CHECK(refused(f, n, 576, 0, ROOM));
	for (i = 0; i < sizeof(frag_pokes) / sizeof(frag_pokes[0]); i++) {
		n = ip_opts(f, udp(f, 1472), nops, 4 * (frag_pokes[i].at == 34));
		memcpy(f + frag_pokes[i].at, frag_pokes[i].val, frag_pokes[i].n);
		CHECK(frag_pokes[i].ok ? mtu_fragment(f, n, 576, outs, NOUT, ROOM, lens) == 3 :
					 refused(f, n, 576, NOUT, ROOM));
	}
	/* The largest header at MTU 68: 8 bytes of data in each of 185 fragments. */
	n = ip_opts(f, udp(f, 1472), nops, 40);
	CHECK(refused(f, n, 68, 184, ROOM));
	cnt = mtu_fragment(f, n, 68, outs, 185, ROOM, lens);
	CHECK_EQ(cnt, 185);
	CHECK(reassembled(f, cnt, 68));
}

int
main(void)
{
	uint32_t i;

	srand(11);
	for (i = 0; i < NOUT; i++)
		outs[i] = bufs[i];
	check_mss_cases();
	check_mss_random();
	check_frag_needed();
	check_frag_refused();
	check_fragment();
	check_fragment_refused();
	return t_done("test_mtu");
}
