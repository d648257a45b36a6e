/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP window tracking on an IPv6 session (tcpwin6_*(), struct ct6_session): the same model as
 * on an IPv4 one. Random window states and segments of every flag combination go through
 * tcpwin_track() on a struct ct_session and tcpwin6_track() on a struct ct6_session holding
 * the same window fields: the same verdict and the same fields afterwards, every time. Then a
 * flow on a ct6 table: the handshake, data both ways, blind injection dropped without a trace,
 * a RST judged as RFC 5961 asks.
 */
#include "t.h"
#include "ct6.h"
#include "tcpwin.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static uint32_t
near(uint32_t base)
{
	switch (rnd() % 4) {
	case 0:
		return rnd();
	case 1:
		return base + (rnd() % 200000) - 100000;
	default:
		return base + (rnd() % 4000) - 2000;
	}
}

/* The window fields of the two kinds of session, compared by name. */
static int
same_window(const struct ct_session *a, const struct ct6_session *b)
{
	return a->end[0] == b->end[0] && a->end[1] == b->end[1] && a->lag[0] == b->lag[0] &&
	       a->lag[1] == b->lag[1] && a->maxwin[0] == b->maxwin[0] &&
	       a->maxwin[1] == b->maxwin[1] && a->wscale == b->wscale && a->flags == b->flags &&
	       a->state == b->state;
}

/*
 * A TCP header at l4 of frame f (IPv4 at 34, IPv6 at 54), options of 'olen' bytes (a window
 * scale option when 12: MSS, NOP, WS), 'pay' bytes of payload; the pkt that describes it.
 */
static void
seg(uint8_t *f, struct pkt *p, uint32_t l4, uint32_t seq, uint32_t ack, uint8_t flags,
    uint16_t win, int ws, uint32_t pay)
{
	struct tcp_hdr *th = (struct tcp_hdr *)(f + l4);
	uint32_t olen = ws >= 0 ? 8 : 0;

	memset(th, 0, sizeof(*th));
	th->seq = htonl(seq);
	th->ack = htonl(ack);
	th->win = htons(win);
	th->doff = (uint8_t)((5 + olen / 4) << 4);
	if (olen) {
		const uint8_t opt[8] = { 2, 4, 0x05, 0xb4, 1, 3, 3, (uint8_t)ws };

		memcpy(f + l4 + 20, opt, sizeof(opt));
	}
	memset(p, 0, sizeof(*p));
	p->data = f;
	p->l4_off = (uint16_t)l4;
	p->proto = IPPROTO_TCP_;
	p->tcp_flags = flags;
	p->len = l4 + 20 + olen + pay;
}

static void
test_same_as_ipv4(void)
{
	static uint8_t f4[2048], f6[2048];
	uint32_t i, diff = 0, bad = 0, keep = 0;

	for (i = 0; i < 300000; i++) {
		struct ct_session a;
		struct ct6_session b;
		struct pkt p4, p6;
		enum tcpwin_verdict va, vb;
		int d = (int)(rnd() & 1), ws = rnd() % 4 ? -1 : (int)(rnd() % 16);
		uint8_t flags = (uint8_t)(rnd() & (TCPF_SYN | TCPF_FIN | TCPF_RST | TCPF_ACK |
						  TCPF_PSH));
		uint32_t seq, ack, pay = rnd() % 1461;
		uint16_t win = (uint16_t)(rnd() % 3 ? rnd() : 65535);

		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		a.state = (uint8_t)(rnd() % CT_TCP_MAX);
		a.end[0] = rnd();
		a.end[1] = rnd();
		a.lag[0] = (uint16_t)(rnd() % 8 ? rnd() % 3000 : TCPWIN_LAG_SAT);
		a.lag[1] = (uint16_t)(rnd() % 8 ? rnd() % 3000 : TCPWIN_LAG_SAT);
		a.maxwin[0] = (uint8_t)(rnd() % 8 ? 1 + rnd() % 0xf0 : 0);
		a.maxwin[1] = (uint8_t)(rnd() % 8 ? 1 + rnd() % 0xf0 : 0);
		a.wscale = (uint8_t)((rnd() % 15) | (rnd() % 15) << 4);
		a.flags = (uint8_t)(CT_F_USED | (rnd() & (CT_F_POLICY | CT_F_WS_ORIG |
						      CT_F_WS_REPLY | CT_F_PICKUP)));
		b.state = a.state;
		memcpy(b.end, a.end, sizeof(b.end));
		memcpy(b.lag, a.lag, sizeof(b.lag));
		memcpy(b.maxwin, a.maxwin, sizeof(b.maxwin));
		b.wscale = a.wscale;
		b.flags = a.flags;
		seq = near(a.end[d]);
		ack = near(a.end[d ^ 1]);
		seg(f4, &p4, 34, seq, ack, flags, win, ws, pay);
		seg(f6, &p6, 54, seq, ack, flags, win, ws, pay);
		va = tcpwin_track(NULL, &a, d, &p4);
		vb = tcpwin6_track(NULL, &b, d, &p6);
		bad += va == TW_BAD || va == TW_BAD_RST;
		keep += va == TW_KEEP;
		if (va != vb || !same_window(&a, &b))
			diff++;
	}
	CHECK_EQ(diff, 0);
	/* Every verdict was exercised. */
	CHECK(bad > 1000 && bad < 299000);
	CHECK(keep > 10);
}

/* A flow in a ct6 table, its segments judged by tcpwin6_track(). */
static void
test_flow(void)
{
	static uint8_t f[2048];
	struct ct6_table *ct = ct6_create(1024, 4, NULL);
	const uint8_t g[16] = { 0xfd, [15] = 2 }, w[16] = { 0x20, 0x01, 0, 2, [15] = 8 };
	const uint8_t n[16] = { 0x20, 0x01, 0, 2, [15] = 1 };
	const uint32_t c = 0x10000000u, sv = 0xfffff000u;	/* the server's sequence wraps */
	struct ct6_tuple o, r;
	struct ct6_session *s;
	enum ct_refuse why;
	struct pkt p;
	uint32_t cn = c + 1, sn = sv + 1, k;

	CHECK(ct != NULL);
	if (!ct)
		return;
	ct6_tuple_set(&o, g, w, htons(40000), htons(80), 1, IPPROTO_TCP_);
	ct6_tuple_set(&r, w, n, htons(80), htons(30000), 0, IPPROTO_TCP_);
	s = ct6_insert(ct, &o, &r, CT_TCP_SYN_SENT, 10, &why);
	CHECK(s != NULL);
	if (!s)
		return;
	seg(f, &p, 54, c, 0, TCPF_SYN, 64240, 7, 0);
	tcpwin6_open(ct, s, &p);
	CHECK(s->maxwin[CT_DIR_ORIG] != 0);
	CHECK_EQ(tcpwin6_scale(s, CT_DIR_ORIG), 7);
	/* A SYN+ACK that does not ack our SYN cannot start the other direction. */
	seg(f, &p, 54, sv, c + 77777, TCPF_SYN | TCPF_ACK, 65160, 7, 0);
	CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_REPLY, &p), TW_BAD);
	seg(f, &p, 54, sv, cn, TCPF_SYN | TCPF_ACK, 65160, 7, 0);
	CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_REPLY, &p), TW_OK);
	seg(f, &p, 54, cn, sn, TCPF_ACK, 502, -1, 0);
	CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_ORIG, &p), TW_OK);
	s->state = CT_TCP_ESTABLISHED;
	/* Data both ways, across the server's sequence wrap, through the steady path. */
	for (k = 0; k < 50; k++) {
		seg(f, &p, 54, cn, sn, TCPF_ACK | TCPF_PSH, 502, -1, 1000);
		CHECK_EQ(tcpwin6_track_ack(ct, s, CT_DIR_ORIG, &p), TW_OK);
		cn += 1000;
		seg(f, &p, 54, sn, cn, TCPF_ACK | TCPF_PSH, 509, -1, 1400);
		CHECK_EQ(tcpwin6_track_ack(ct, s, CT_DIR_REPLY, &p), TW_OK);
		sn += 1400;
	}
	CHECK(sn < sv);
	/* Blind data, acks and FINs: out of the window, nothing learnt. */
	{
		struct ct6_session before = *s;

		seg(f, &p, 54, cn + 0x40000000u, sn, TCPF_ACK | TCPF_PSH, 502, -1, 100);
		CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_ORIG, &p), TW_BAD);
		seg(f, &p, 54, sn - 0x30000000u, cn, TCPF_ACK | TCPF_PSH, 509, -1, 100);
		CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_REPLY, &p), TW_BAD);
		seg(f, &p, 54, cn, sn + 0x10000000u, TCPF_ACK, 502, -1, 0);
		CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_ORIG, &p), TW_BAD);
		seg(f, &p, 54, cn + 0x55555555u, sn, TCPF_ACK | TCPF_FIN, 502, -1, 0);
		CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_ORIG, &p), TW_BAD);
		/* A RST outside the window, then one inside but off the expected sequence. */
		seg(f, &p, 54, sn + 0x20000000u, 0, TCPF_RST, 0, -1, 0);
		CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_REPLY, &p), TW_BAD_RST);
		CHECK(!memcmp(&before, s, sizeof(before)));
		seg(f, &p, 54, sn + 3000, 0, TCPF_RST, 0, -1, 0);
		CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_REPLY, &p), TW_KEEP);
	}
	/* The exact RST closes. */
	seg(f, &p, 54, sn, 0, TCPF_RST, 0, -1, 0);
	CHECK_EQ(tcpwin6_track(ct, s, CT_DIR_REPLY, &p), TW_OK);
	ct6_destroy(ct);
}

int
main(void)
{
	test_same_as_ipv4();
	test_flow();
	return t_done("test_tcpwin6");
}
