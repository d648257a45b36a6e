/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP window tracking through the pipeline: one exposed-port flow (client 198.18.0.2:40000 →
 * node:20005 → guest:8080 of sandbox A of the shared bed, dpbed.h) driven segment by segment
 * with chosen sequence numbers, acks, windows and options. What passes, what is dropped and
 * under which counter, and what the session's state and timeout do.
 */
#include "t.h"
#include "dpbed.h"
#include "tcpwin.h"

#define SLOT	BED_SLOT_A	/* exposes GPORT on HPORT */
#define CPORT	40000
#define HPORT	BED_HP_A
#define GPORT	8080

enum side { C2S, S2C };	/* client → guest (world port), guest → client (sandbox port) */

static struct dpbed bed;
static uint32_t client;

/* Options of the next segment: window field, window scale option (-1: none). */
static uint16_t o_win = 65535;
static int o_ws = -1;
static struct dp_result last;

/* A new table and clock, default options. */
static void
fresh(void)
{
	CHECK_EQ(bed_table(&bed), 0);
	bed.x.now = 100;
	o_win = 65535;
	o_ws = -1;
}

/* Send one segment through the pipeline; returns the action (the result is in 'last'). */
static int
tx(enum side side, uint32_t seq, uint32_t ack, uint8_t flags, uint32_t len)
{
	uint8_t f[2048];
	struct tcp_hdr *th = (struct tcp_hdr *)(f + 34);
	uint32_t olen = o_ws >= 0 ? 8 : 0, n;
	uint8_t *o = f + 54;

	if (side == C2S)
		n = build_frame(f, IPPROTO_TCP_, client, bed.cfg.node_ip, htons(CPORT), htons(HPORT),
				flags, olen + len);
	else
		n = build_frame(f, IPPROTO_TCP_, bed.cfg.guest_ip, client, htons(GPORT), htons(CPORT),
				flags, olen + len);
	th->seq = htonl(seq);
	th->ack = htonl(ack);
	th->win = htons(o_win);
	if (olen) {
		/* MSS 1460, NOP, window scale. */
		const uint8_t opt[8] = { 2, 4, 0x05, 0xb4, 1, 3, 3, (uint8_t)o_ws };

		memcpy(o, opt, sizeof(opt));
		th->doff = (uint8_t)((5 + olen / 4) << 4);
	}
	th->check = 0;
	th->check = l4_csum(f + 14);
	memset(&last, 0, sizeof(last));
	if (side == C2S)
		dp_world_rx(&bed.x, f, n, &last);
	else
		dp_sandbox_rx(&bed.x, SLOT, f, n, &last);
	return last.action;
}

static struct ct_session *
sess(void)
{
	struct ct_tuple t = { client, bed.cfg.node_ip, htons(CPORT), htons(HPORT), 0,
			      IPPROTO_TCP_, 0 };
	int d;

	return ct_lookup(bed.x.ct, &t, &d);
}

static int
state(void)
{
	struct ct_session *s = sess();

	return s ? s->state : -1;
}

/* Dropped, under exactly this reason, every other counter unmoved. */
static int
dropped_as(enum cvs_drop why, const struct cvs_stats *before)
{
	uint32_t i;

	if (last.action != DP_DROP || last.drop != why)
		return 0;
	for (i = 0; i < CVS_DROP_MAX; i++)
		if (bed.st.drop[i] != before->drop[i] + (i == why))
			return 0;
	return 1;
}

/* Client ISN c, guest ISN s, both offering 'ws' (or none with -1), windows 'win' raw. */
static void
handshake(uint32_t c, uint32_t s, int ws_c, int ws_s, uint16_t win)
{
	o_ws = ws_c;
	CHECK_EQ(tx(C2S, c, 0, TCPF_SYN, 0), DP_TO_SANDBOX);
	o_ws = ws_s;
	CHECK_EQ(tx(S2C, s, c + 1, TCPF_SYN | TCPF_ACK, 0), DP_TO_WORLD);
	o_ws = -1;
	o_win = win;
	CHECK_EQ(tx(C2S, c + 1, s + 1, TCPF_ACK, 0), DP_TO_SANDBOX);
	CHECK_EQ(tx(S2C, s + 1, c + 1, TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(state(), CT_TCP_ESTABLISHED);
}

static void
test_float(void)
{
	uint64_t v = 1;
	uint32_t k, bad = 0;

	for (k = 0; k < 200000; k++) {
		uint32_t x0 = k < 70000 ? k : (uint32_t)(v >> 34), y;

		v = v * 6364136223846793005ull + 1442695040888963407ull;
		if (x0 > TCPWIN_MAX_WIN)
			x0 &= TCPWIN_MAX_WIN - 1;
		y = tcpwin_mw_decode(tcpwin_mw_encode(x0));
		/* Never below, at most 1/8 above (and never 0: 0 means unseen). */
		if (y < x0 || y - x0 > x0 / 8 + 9 || !y)
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(tcpwin_mw_decode(tcpwin_mw_encode(1ull << 40)), TCPWIN_MAX_WIN);
	CHECK_EQ(tcpwin_mw_decode(0), 0);
	/* The encoding keeps order, so a larger window never stores as a smaller one. */
	for (k = 1, bad = 0; k < 70000; k++)
		if (tcpwin_mw_encode(k) < tcpwin_mw_encode(k - 1))
			bad++;
	CHECK_EQ(bad, 0);
}

/* RFC 7323: windows scale by the SYN's shift, and only when both sides offered it. */
static void
test_scaling(void)
{
	const uint32_t c = 1000, s = 5000;
	struct cvs_stats b;

	fresh();
	handshake(c, s, 7, 8, 1000);	/* client window 1000 << 7, guest 1000 << 8 */
	CHECK_EQ(tcpwin_scale(sess(), CT_DIR_ORIG), 7);
	CHECK_EQ(tcpwin_scale(sess(), CT_DIR_REPLY), 8);
	/* Beyond the guest's 256000-byte window (stored up to 1/8 wider), then inside it. */
	b = bed.st;
	CHECK_EQ(tx(C2S, c + 1 + 300000, s + 1, TCPF_ACK, 100), DP_DROP);
	CHECK(dropped_as(CVS_DROP_TCP_WINDOW, &b));
	CHECK_EQ(tx(C2S, c + 1 + 250000, s + 1, TCPF_ACK, 100), DP_TO_SANDBOX);
	/* The guest's data beyond the client's 128000 bytes, then inside. */
	b = bed.st;
	CHECK_EQ(tx(S2C, s + 1 + 150000, c + 1, TCPF_ACK, 100), DP_DROP);
	CHECK(dropped_as(CVS_DROP_TCP_WINDOW, &b));
	CHECK_EQ(tx(S2C, s + 1 + 120000, c + 1, TCPF_ACK, 100), DP_TO_WORLD);

	/* The guest does not offer scaling: neither side scales; 1000 stays 1000. */
	fresh();
	handshake(c, s, 7, -1, 1000);
	CHECK_EQ(sess()->wscale, 0);
	CHECK_EQ(tx(S2C, s + 1 + 60000, c + 1, TCPF_ACK, 100), DP_TO_WORLD);
	b = bed.st;
	CHECK_EQ(tx(S2C, s + 1 + 120000, c + 1, TCPF_ACK, 100), DP_DROP);
	CHECK(dropped_as(CVS_DROP_TCP_WINDOW, &b));
	/* A shift above 14 counts as 14 (RFC 7323 2.3). */
	fresh();
	handshake(c, s, 15, 20, 1);
	CHECK_EQ(tcpwin_scale(sess(), CT_DIR_ORIG), TCPWIN_MAX_SCALE);
	CHECK_EQ(tcpwin_scale(sess(), CT_DIR_REPLY), TCPWIN_MAX_SCALE);
}

/*
 * Retransmissions without SACK: a segment sent again while newer ones are in flight, one the
 * receiver has acked already, a retransmitted SYN and SYN+ACK. Data older than a whole
 * window is dropped.
 */
static void
test_retransmits(void)
{
	const uint32_t c = 77, s = 900000;
	struct cvs_stats b;
	uint32_t k;

	fresh();
	o_ws = -1;
	CHECK_EQ(tx(C2S, c, 0, TCPF_SYN, 0), DP_TO_SANDBOX);
	CHECK_EQ(tx(C2S, c, 0, TCPF_SYN, 0), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_SYN_SENT);
	CHECK_EQ(tx(S2C, s, c + 1, TCPF_SYN | TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(tx(S2C, s, c + 1, TCPF_SYN | TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(tx(C2S, c + 1, s + 1, TCPF_ACK, 0), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_ESTABLISHED);
	for (k = 0; k < 10; k++)
		CHECK_EQ(tx(C2S, c + 1 + 1000 * k, s + 1, TCPF_ACK, 1000), DP_TO_SANDBOX);
	/* Only the first one acked; it is sent again, then once more after the ack. */
	CHECK_EQ(tx(S2C, s + 1, c + 1001, TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(tx(C2S, c + 1001, s + 1, TCPF_ACK, 1000), DP_TO_SANDBOX);
	CHECK_EQ(tx(S2C, s + 1, c + 10001, TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(tx(C2S, c + 1, s + 1, TCPF_ACK, 1000), DP_TO_SANDBOX);
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_WINDOW], 0);
	/* Move on 100 kB (acked as it goes); the first segment is now older than a window. */
	for (k = 10; k < 110; k++) {
		CHECK_EQ(tx(C2S, c + 1 + 1000 * k, s + 1, TCPF_ACK, 1000), DP_TO_SANDBOX);
		CHECK_EQ(tx(S2C, s + 1, c + 1 + 1000 * (k + 1), TCPF_ACK, 0), DP_TO_WORLD);
	}
	b = bed.st;
	CHECK_EQ(tx(C2S, c + 1, s + 1, TCPF_ACK, 1000), DP_DROP);
	CHECK(dropped_as(CVS_DROP_TCP_WINDOW, &b));
	/* Half a window back still passes. */
	CHECK_EQ(tx(C2S, c + 1 + 1000 * 80, s + 1, TCPF_ACK, 1000), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_ESTABLISHED);
}

/* Sequence numbers that wrap past 2^32 in both directions. */
static void
test_wrap(void)
{
	const uint32_t c = 0xffffff00u, s = 0xfffffff0u;
	struct cvs_stats b;
	uint32_t k, seq = c + 1;

	fresh();
	handshake(c, s, -1, -1, 65535);
	for (k = 0; k < 10; k++, seq += 100) {
		CHECK_EQ(tx(C2S, seq, s + 1, TCPF_ACK, 100), DP_TO_SANDBOX);
		CHECK_EQ(tx(S2C, s + 1 + 50 * k, seq + 100, TCPF_ACK, 50), DP_TO_WORLD);
	}
	CHECK(seq < 0x1000);	/* the client's sequence wrapped */
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_WINDOW], 0);
	b = bed.st;
	CHECK_EQ(tx(C2S, seq + 0x60000000u, s + 501, TCPF_ACK, 10), DP_DROP);
	CHECK_EQ(tx(C2S, seq + 70000, s + 501, TCPF_ACK, 10), DP_DROP);
	CHECK_EQ(tx(C2S, seq - 70000, s + 501, TCPF_ACK, 10), DP_DROP);
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_WINDOW], b.drop[CVS_DROP_TCP_WINDOW] + 3);
	CHECK_EQ(tx(C2S, seq, s + 501, TCPF_ACK, 10), DP_TO_SANDBOX);
}

/* Both sides send a SYN (RFC 793 simultaneous open), then SYN+ACKs, then ACKs. */
static void
test_simultaneous_open(void)
{
	const uint32_t c = 3000, s = 8000000;

	fresh();
	o_ws = 7;
	CHECK_EQ(tx(C2S, c, 0, TCPF_SYN, 0), DP_TO_SANDBOX);
	CHECK_EQ(tx(S2C, s, 0, TCPF_SYN, 0), DP_TO_WORLD);
	CHECK_EQ(state(), CT_TCP_SYN_SENT2);
	o_ws = 7;
	CHECK_EQ(tx(C2S, c, s + 1, TCPF_SYN | TCPF_ACK, 0), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_SYN_RECV);
	CHECK_EQ(tx(S2C, s, c + 1, TCPF_SYN | TCPF_ACK, 0), DP_TO_WORLD);
	o_ws = -1;
	o_win = 1000;
	CHECK_EQ(tx(C2S, c + 1, s + 1, TCPF_ACK, 0), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_ESTABLISHED);
	CHECK_EQ(tx(S2C, s + 1, c + 1, TCPF_ACK, 0), DP_TO_WORLD);
	/* Scaled both ways (1000 << 7 = 128000). */
	CHECK_EQ(tx(C2S, c + 1 + 150000, s + 1, TCPF_ACK, 100), DP_DROP);
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_WINDOW], 1);
	CHECK_EQ(tx(S2C, s + 1 + 120000, c + 1, TCPF_ACK, 100), DP_TO_WORLD);
	CHECK_EQ(tx(C2S, c + 1 + 120000, s + 1, TCPF_ACK, 100), DP_TO_SANDBOX);
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_WINDOW], 1);
}

/* RSTs: outside, before the ack, inside but inexact, exact; RST+ACK; refusing a SYN. */
static void
test_rst(void)
{
	const uint32_t c = 10, s = 20000;
	uint32_t cn = c + 1 + 300, sn = s + 1 + 200;	/* next sequence of each side */
	struct cvs_stats b;

	fresh();
	handshake(c, s, -1, -1, 65535);
	CHECK_EQ(tx(C2S, c + 1, s + 1, TCPF_ACK, 300), DP_TO_SANDBOX);
	CHECK_EQ(tx(S2C, s + 1, cn, TCPF_ACK, 200), DP_TO_WORLD);
	CHECK_EQ(tx(C2S, cn, sn, TCPF_ACK, 0), DP_TO_SANDBOX);
	b = bed.st;
	CHECK_EQ(tx(C2S, cn + 0x80000000u, 0, TCPF_RST, 0), DP_DROP);
	CHECK(dropped_as(CVS_DROP_TCP_RST_WINDOW, &b));
	CHECK_EQ(tx(C2S, cn + 0x12345678u, sn, TCPF_RST | TCPF_ACK, 0), DP_DROP);
	/* Below what the guest has acknowledged: stale. */
	CHECK_EQ(tx(C2S, cn - 100, 0, TCPF_RST, 0), DP_DROP);
	/* At the exact sequence but acking data the guest never sent. */
	CHECK_EQ(tx(C2S, cn, sn + 0x40000000u, TCPF_RST | TCPF_ACK, 0), DP_DROP);
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_RST_WINDOW], b.drop[CVS_DROP_TCP_RST_WINDOW] + 4);
	CHECK_EQ(state(), CT_TCP_ESTABLISHED);
	/* Inside the window, not exact: forwarded for the guest's challenge ACK, state kept. */
	CHECK_EQ(tx(C2S, cn + 1000, 0, TCPF_RST, 0), DP_TO_SANDBOX);
	CHECK_EQ(tx(S2C, sn + 5000, cn, TCPF_RST | TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(bed.st.c[CVS_WC_TCP_RST_INEXACT], 2);
	CHECK_EQ(state(), CT_TCP_ESTABLISHED);
	CHECK_EQ(tx(C2S, cn, sn, TCPF_ACK, 10), DP_TO_SANDBOX);
	cn += 10;
	/* Exact, as RST+ACK: closes. */
	CHECK_EQ(tx(C2S, cn, sn, TCPF_RST | TCPF_ACK, 0), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_CLOSE);

	/* The guest's exact RST (at the client's ack), some stacks' RST+ACK with ack 0. */
	fresh();
	handshake(c, s, -1, -1, 65535);
	CHECK_EQ(tx(S2C, s + 1, c + 1, TCPF_RST | TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(state(), CT_TCP_CLOSE);
	/* A RST right after the sender's own unacked data (at its end, not the peer's ack). */
	fresh();
	handshake(c, s, -1, -1, 65535);
	CHECK_EQ(tx(C2S, c + 1, s + 1, TCPF_ACK | TCPF_PSH, 100), DP_TO_SANDBOX);
	CHECK_EQ(tx(C2S, c + 101, 0, TCPF_RST, 0), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_CLOSE);

	/* Refusing the SYN: the RST+ACK must ack it. */
	fresh();
	CHECK_EQ(tx(C2S, c, 0, TCPF_SYN, 0), DP_TO_SANDBOX);
	b = bed.st;
	CHECK_EQ(tx(S2C, 0, c + 5, TCPF_RST | TCPF_ACK, 0), DP_DROP);
	CHECK_EQ(tx(S2C, 0, 0, TCPF_RST, 0), DP_DROP);
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_RST_WINDOW], b.drop[CVS_DROP_TCP_RST_WINDOW] + 2);
	CHECK_EQ(state(), CT_TCP_SYN_SENT);
	CHECK_EQ(tx(S2C, 0, c + 1, TCPF_RST | TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(state(), CT_TCP_CLOSE);
	/* The client aborting its own SYN. */
	fresh();
	CHECK_EQ(tx(C2S, c, 0, TCPF_SYN, 0), DP_TO_SANDBOX);
	CHECK_EQ(tx(C2S, c + 99999, 0, TCPF_RST, 0), DP_DROP);
	CHECK_EQ(tx(C2S, c + 1, 0, TCPF_RST, 0), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_CLOSE);
}

/*
 * Blind data, FIN and ACK injection far outside the window: dropped, and neither the state
 * nor the timeout moves. A SYN on the established flow (a reused port) passes for the
 * endpoint's challenge ACK and changes nothing.
 */
static void
test_injection(void)
{
	const uint32_t c = 123456789, s = 987654321;
	uint32_t cn = c + 1 + 500, sn = s + 1;
	struct ct_session *ss;
	struct cvs_stats b;
	uint32_t seen;

	fresh();
	handshake(c, s, 7, 7, 500);
	CHECK_EQ(tx(C2S, c + 1, sn, TCPF_ACK, 500), DP_TO_SANDBOX);
	CHECK_EQ(tx(S2C, sn, cn, TCPF_ACK, 0), DP_TO_WORLD);
	ss = sess();
	seen = ss->last_seen;
	bed.x.now += 50;
	b = bed.st;
	CHECK_EQ(tx(C2S, cn + 0x80000000u, sn, TCPF_ACK | TCPF_PSH, 100), DP_DROP);
	CHECK_EQ(tx(C2S, cn - 0x40000000u, sn, TCPF_ACK | TCPF_PSH, 100), DP_DROP);
	CHECK_EQ(tx(S2C, sn + 0x30000000u, cn, TCPF_ACK | TCPF_PSH, 100), DP_DROP);
	/* The right sequence, an ack of data never sent or far behind. */
	CHECK_EQ(tx(C2S, cn, sn + 0x10000000u, TCPF_ACK, 100), DP_DROP);
	CHECK_EQ(tx(C2S, cn, sn - 0x10000000u, TCPF_ACK, 100), DP_DROP);
	/* A blind FIN cannot start the close. */
	CHECK_EQ(tx(C2S, cn + 0x55555555u, sn, TCPF_ACK | TCPF_FIN, 0), DP_DROP);
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_WINDOW], b.drop[CVS_DROP_TCP_WINDOW] + 6);
	CHECK_EQ(ss->state, CT_TCP_ESTABLISHED);
	CHECK_EQ(ss->last_seen, seen);
	CHECK_EQ(bed.st.c[CVS_WC_TCP_INVALID], b.c[CVS_WC_TCP_INVALID]);
	CHECK_EQ(tx(C2S, c + 7, sn, TCPF_SYN, 0), DP_TO_SANDBOX);
	CHECK_EQ(ss->state, CT_TCP_ESTABLISHED);
	/* The flow itself goes on, and its timeout is refreshed by it. */
	CHECK_EQ(tx(C2S, cn, sn, TCPF_ACK | TCPF_PSH, 100), DP_TO_SANDBOX);
	CHECK_EQ(tx(S2C, sn, cn + 100, TCPF_ACK, 0), DP_TO_WORLD);
	CHECK_EQ(ss->last_seen, bed.x.now);
	CHECK_EQ(ss->state, CT_TCP_ESTABLISHED);
}

/*
 * A session adopted without window state (as after a restart): picked up from whichever
 * segment comes first, liberal until both directions are seen, then checked.
 */
static void
test_pickup(void)
{
	struct ct_tuple t = { client, bed.cfg.node_ip, htons(CPORT), htons(HPORT), 0, IPPROTO_TCP_, 0 };
	struct ct_tuple rt = { bed.cfg.guest_ip, client, htons(GPORT), htons(CPORT), SLOT + 1,
			       IPPROTO_TCP_, 0 };
	const uint32_t cn = 0x40000000u, sn = 0xc0000000u;
	struct ct_session *s;
	enum ct_refuse why;
	struct cvs_stats b;

	fresh();
	s = ct_insert(bed.x.ct, &t, &rt, CT_TCP_ESTABLISHED, bed.x.now, &why);
	CHECK(s != NULL);
	if (!s)
		return;
	o_win = 100;
	/* A SYN on the adopted flow (a reused port) passes and teaches nothing. */
	CHECK_EQ(tx(C2S, 12345, 0, TCPF_SYN, 0), DP_TO_SANDBOX);
	CHECK_EQ(s->maxwin[CT_DIR_ORIG], 0);
	CHECK(!(s->flags & CT_F_PICKUP));
	CHECK_EQ(tx(C2S, cn, sn, TCPF_ACK, 100), DP_TO_SANDBOX);
	CHECK(s->flags & CT_F_PICKUP);
	/* Liberal while the guest is unseen: even this passes (and teaches nothing). */
	CHECK_EQ(tx(C2S, cn + 0x60000000u, sn, TCPF_ACK, 100), DP_TO_SANDBOX);
	CHECK_EQ(tx(C2S, cn + 100, sn, TCPF_ACK, 100), DP_TO_SANDBOX);
	CHECK_EQ(tx(S2C, sn, cn + 200, TCPF_ACK, 100), DP_TO_WORLD);
	CHECK(!(s->flags & CT_F_PICKUP));
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_WINDOW], 0);
	/* Both seen: checked, with the widest scale assumed (100 << 14 = 1.6 MB). */
	CHECK_EQ(tx(C2S, cn + 200 + 1000000, sn + 100, TCPF_ACK, 100), DP_TO_SANDBOX);
	b = bed.st;
	CHECK_EQ(tx(C2S, cn + 0x60000000u, sn + 100, TCPF_ACK, 100), DP_DROP);
	CHECK(dropped_as(CVS_DROP_TCP_WINDOW, &b));
	b = bed.st;
	CHECK_EQ(tx(S2C, sn + 0x60000000u, cn, TCPF_RST, 0), DP_DROP);
	CHECK(dropped_as(CVS_DROP_TCP_RST_WINDOW, &b));
	CHECK_EQ(tx(S2C, sn + 5000, cn, TCPF_RST, 0), DP_TO_WORLD);
	CHECK_EQ(s->state, CT_TCP_ESTABLISHED);
	CHECK_EQ(tx(S2C, sn + 100, cn, TCPF_RST, 0), DP_TO_WORLD);
	CHECK_EQ(s->state, CT_TCP_CLOSE);
}

/* --tcp-liberal: no window tracking at all, as before it existed. */
static void
test_liberal(void)
{
	const uint32_t c = 1, s = 2;

	fresh();
	bed.cfg.tcp_liberal = true;
	handshake(c, s, -1, -1, 65535);
	CHECK_EQ(tx(C2S, c + 0x70000000u, s + 1, TCPF_ACK, 100), DP_TO_SANDBOX);
	CHECK_EQ(tx(C2S, c + 0x12345678u, 0, TCPF_RST, 0), DP_TO_SANDBOX);
	CHECK_EQ(state(), CT_TCP_CLOSE);
	CHECK_EQ(bed.st.drop[CVS_DROP_TCP_WINDOW] + bed.st.drop[CVS_DROP_TCP_RST_WINDOW], 0);
	bed.cfg.tcp_liberal = false;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* A value near 'base': mostly within a window of it, sometimes anywhere. */
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

/*
 * The steady-state path dp_track() takes for an ACK without SYN, FIN or RST
 * (tcpwin_track_ack()) against the general one (tcpwin_track()): the same verdict and the same
 * session afterwards, for random window states and segments, in-window or not, wrapping or not.
 */
static void
test_ack_fast_path(void)
{
	static const uint8_t extra[] = { 0, TCPF_PSH, 0x20, TCPF_PSH | 0x20 };
	uint8_t f[2048];
	struct tcp_hdr *th = (struct tcp_hdr *)(f + 34);
	uint32_t i, bad = 0, diff = 0;
	int fl;

	/* What lets dp_track() skip the transition table for such a segment. */
	for (fl = 0; fl < 256; fl++)
		if ((fl & (TCPF_SYN | TCPF_FIN | TCPF_RST | TCPF_ACK)) == TCPF_ACK) {
			CHECK_EQ(ct_tcp_next(CT_TCP_ESTABLISHED, CT_DIR_ORIG, (uint8_t)fl),
				 CT_TCP_ESTABLISHED);
			CHECK_EQ(ct_tcp_next(CT_TCP_ESTABLISHED, CT_DIR_REPLY, (uint8_t)fl),
				 CT_TCP_ESTABLISHED);
		}
	memset(f, 0, sizeof(f));
	for (i = 0; i < 200000; i++) {
		struct ct_session a, b;
		struct pkt p = { .data = f, .l4_off = 34, .proto = IPPROTO_TCP_ };
		enum tcpwin_verdict va, vb;
		int d = (int)(rnd() & 1);

		memset(&a, 0, sizeof(a));
		a.state = CT_TCP_ESTABLISHED;
		a.end[0] = rnd();
		a.end[1] = rnd();
		a.lag[0] = (uint16_t)(rnd() % 8 ? rnd() % 3000 : TCPWIN_LAG_SAT);
		a.lag[1] = (uint16_t)(rnd() % 8 ? rnd() % 3000 : TCPWIN_LAG_SAT);
		a.maxwin[0] = (uint8_t)(rnd() % 16 ? 1 + rnd() % 0xf0 : 0);
		a.maxwin[1] = (uint8_t)(rnd() % 16 ? 1 + rnd() % 0xf0 : 0);
		a.wscale = (uint8_t)((rnd() % 15) | (rnd() % 15) << 4);
		a.flags = (uint8_t)(CT_F_USED | (rnd() % 8 ? 0 : CT_F_PICKUP));
		b = a;
		p.tcp_flags = (uint8_t)(TCPF_ACK | extra[rnd() % 4]);
		p.len = 54 + rnd() % 1461;
		th->seq = htonl(near(a.end[d]));
		th->ack = htonl(near(a.end[d ^ 1]));
		th->win = htons((uint16_t)(rnd() % 3 ? rnd() : 65535));
		th->doff = 5 << 4;
		va = tcpwin_track(bed.x.ct, &a, d, &p);
		vb = tcpwin_track_ack(bed.x.ct, &b, d, &p);
		bad += va != TW_OK;
		if (va != vb || memcmp(&a, &b, sizeof(a)))
			diff++;
	}
	CHECK_EQ(diff, 0);
	/* Both outcomes were exercised. */
	CHECK(bad > 1000 && bad < 199000);
}

int
main(void)
{
	if (bed_init(&bed, 1024))
		return 1;
	client = bed.client;
	test_float();
	test_scaling();
	test_retransmits();
	test_wrap();
	test_simultaneous_open();
	test_rst();
	test_injection();
	test_pickup();
	test_liberal();
	test_ack_fast_path();
	bed_fini(&bed);
	return t_done("test_tcpwin");
}
