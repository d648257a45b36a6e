/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP connection tracking, as OVS keeps it in conntrack-tcp.c: the state machine (the
 * transition table of Linux nf_conntrack, which ct_tcp_next() in ct.h indexes) and the rare
 * cases of window tracking (tcpwin.h has the model and the steady state): SYNs, which start or
 * restart a direction and carry the window scale option; RSTs, judged in the spirit of RFC
 * 5961; and directions first seen mid-stream.
 */
#include "ct.h"
#include "tcpwin.h"

/*
 * The TCP transition table of Linux nf_conntrack, indexed [dir][flag class][state]. Flag
 * classes in priority order: RST, SYN+ACK, SYN, FIN, ACK, none.
 */
enum { TF_SYN, TF_SYNACK, TF_FIN, TF_ACK, TF_RST, TF_NONE, TF_MAX };

_Static_assert(TF_MAX == CT_TCP_FLAG_CLASSES, "flag classes");

#define sNO CT_TCP_NONE
#define sSS CT_TCP_SYN_SENT
#define sSR CT_TCP_SYN_RECV
#define sES CT_TCP_ESTABLISHED
#define sFW CT_TCP_FIN_WAIT
#define sCW CT_TCP_CLOSE_WAIT
#define sLA CT_TCP_LAST_ACK
#define sTW CT_TCP_TIME_WAIT
#define sCL CT_TCP_CLOSE
#define sS2 CT_TCP_SYN_SENT2
#define sIV CT_TCP_INVALID
#define sIG CT_TCP_IGNORE

const uint8_t ct_tcp_table[2][TF_MAX][CT_TCP_MAX] = {
	[CT_DIR_ORIG] = {
		/*	      sNO  sSS  sSR  sES  sFW  sCW  sLA  sTW  sCL  sS2 */
		[TF_SYN]    = { sSS, sSS, sIG, sIG, sIG, sIG, sIG, sSS, sSS, sS2 },
		[TF_SYNACK] = { sIV, sIV, sSR, sIV, sIV, sIV, sIV, sIV, sIV, sSR },
		[TF_FIN]    = { sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
		[TF_ACK]    = { sES, sIV, sES, sES, sCW, sCW, sTW, sTW, sCL, sIV },
		[TF_RST]    = { sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
		[TF_NONE]   = { sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
	[CT_DIR_REPLY] = {
		/*	      sNO  sSS  sSR  sES  sFW  sCW  sLA  sTW  sCL  sS2 */
		[TF_SYN]    = { sIV, sS2, sIV, sIV, sIV, sIV, sIV, sSS, sIV, sS2 },
		[TF_SYNACK] = { sIV, sSR, sIG, sIG, sIG, sIG, sIG, sIG, sIG, sSR },
		[TF_FIN]    = { sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
		[TF_ACK]    = { sIV, sIG, sSR, sES, sCW, sCW, sTW, sTW, sCL, sIG },
		[TF_RST]    = { sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
		[TF_NONE]   = { sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
};

/* Index: FIN, SYN, RST in bits 0-2, ACK in bit 3 (see ct_tcp_next()). */
#define TF_OF(i) ((i) & 4 ? TF_RST : (i) & 2 ? ((i) & 8 ? TF_SYNACK : TF_SYN) : \
		  (i) & 1 ? TF_FIN : (i) & 8 ? TF_ACK : TF_NONE)

const uint8_t ct_tcp_flag_class[16] = {
	TF_OF(0), TF_OF(1), TF_OF(2), TF_OF(3), TF_OF(4), TF_OF(5), TF_OF(6), TF_OF(7),
	TF_OF(8), TF_OF(9), TF_OF(10), TF_OF(11), TF_OF(12), TF_OF(13), TF_OF(14), TF_OF(15),
};

/* Handshake states (and NONE, SYN_SENT2) share the SYN class. */
const uint8_t ct_tcp_state_class[CT_TCP_MAX] = {
	[CT_TCP_NONE] = CT_C_TCP_SYN,
	[CT_TCP_SYN_SENT] = CT_C_TCP_SYN,
	[CT_TCP_SYN_RECV] = CT_C_TCP_SYN,
	[CT_TCP_ESTABLISHED] = CT_C_TCP_ESTABLISHED,
	[CT_TCP_FIN_WAIT] = CT_C_TCP_FIN_WAIT,
	[CT_TCP_CLOSE_WAIT] = CT_C_TCP_CLOSE_WAIT,
	[CT_TCP_LAST_ACK] = CT_C_TCP_LAST_ACK,
	[CT_TCP_TIME_WAIT] = CT_C_TCP_TIME_WAIT,
	[CT_TCP_CLOSE] = CT_C_TCP_CLOSE,
	[CT_TCP_SYN_SENT2] = CT_C_TCP_SYN,
};

uint8_t
tcpwin_mw_grow(uint64_t x)
{
	return tcpwin_mw_encode(x);
}

/* The shift of a SYN's window scale option (at most 14, RFC 7323), or -1 when it has none. */
static int
tcpwin_syn_wscale(const struct pkt *p)
{
	const struct tcp_hdr *th = pkt_l4(p);
	const uint8_t *o = (const uint8_t *)th + sizeof(*th);
	uint32_t n = (th->doff >> 4) * 4u - (uint32_t)sizeof(*th), i = 0;

	/* The parser checked that the options lie inside the segment; each step moves on. */
	while (i < n) {
		if (o[i] == 0)
			break;
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= n || o[i + 1] < 2 || o[i + 1] > n - i)
			break;
		if (o[i] == 3 && o[i + 1] == 3)
			return o[i + 2] > TCPWIN_MAX_SCALE ? TCPWIN_MAX_SCALE : o[i + 2];
		i += o[i + 1];
	}
	return -1;
}

static inline uint8_t
tcpwin_ws_flag(int d)
{
	return d ? CT_F_WS_REPLY : CT_F_WS_ORIG;
}

static inline void
tcpwin_set_scale(struct ct_session *s, int d, uint8_t shift)
{
	s->wscale = (uint8_t)((s->wscale & ~(15 << (4 * d))) | shift << (4 * d));
}

/*
 * (Re)start direction d from its SYN: its sequence begins here and its SYN window is not
 * scaled (RFC 7323). The peer has acked none of it yet (lag 0: its maxack stands at d's end),
 * so bound I lets d send up to there plus the peer's window (nothing beyond the SYN while the
 * peer is unseen).
 */
static void
tcpwin_syn_start(struct ct_session *s, int d, const struct pkt *p, const struct tcpwin_seg *g)
{
	int shift = tcpwin_syn_wscale(p), r = d ^ 1;

	s->end[d] = g->end;
	s->lag[d] = 0;
	s->maxwin[d] = tcpwin_mw_encode(g->win ? g->win : 1);
	s->flags &= (uint8_t)~tcpwin_ws_flag(d);
	if (shift >= 0)
		s->flags |= tcpwin_ws_flag(d);
	tcpwin_set_scale(s, d, shift >= 0 ? (uint8_t)shift : 0);
	if (!s->maxwin[r])
		return;
	if (g->flags & TCPF_ACK)
		tcpwin_acked(s, d, g->ack);
	/* The second SYN of the handshake: scaling is on only if both sides offered it. */
	if ((s->flags & (CT_F_WS_ORIG | CT_F_WS_REPLY)) != (CT_F_WS_ORIG | CT_F_WS_REPLY))
		s->wscale = 0;
	s->flags &= (uint8_t)~CT_F_PICKUP;
}

/*
 * Direction d seen first without a SYN: its history is lost. Take its sequence from this
 * segment (one with an ACK); the scale is unknown, so assume the largest (a wider window,
 * never a narrower one). The first direction picked up makes the session liberal until the
 * other one is seen.
 */
static void
tcpwin_pickup(struct ct_session *s, int d, const struct tcpwin_seg *g)
{
	int r = d ^ 1;

	tcpwin_set_scale(s, d, TCPWIN_MAX_SCALE);
	s->maxwin[d] = tcpwin_mw_encode(g->win ? (uint64_t)g->win << TCPWIN_MAX_SCALE : 1);
	if (!s->maxwin[r]) {
		tcpwin_set_scale(s, r, TCPWIN_MAX_SCALE);
		s->flags |= CT_F_PICKUP;
		s->end[d] = g->end;
		s->lag[d] = 0;
		/* What d acknowledged is as far as r has sent, as far as we know. */
		s->end[r] = g->ack;
		s->lag[r] = 0;
		return;
	}
	/*
	 * The second direction. In a pick-up the peer's ack told how far d had sent, and d's ack
	 * tells how far the peer had: neither end may start below them (while liberal, segments
	 * outside the guessed bounds passed without moving them).
	 */
	if (!(s->flags & CT_F_PICKUP)) {
		s->end[d] = g->end;
		s->lag[d] = 0;
	} else if (tw_after(g->end, s->end[d])) {
		tcpwin_advance(s, d, g->end);
	}
	if (tw_after(g->ack, s->end[r]))
		tcpwin_advance(s, r, g->ack);
	tcpwin_acked(s, d, g->ack);
	s->flags &= (uint8_t)~CT_F_PICKUP;
}

/*
 * A RST. Exactly at the receiver's next expected sequence (its highest ack, when known) or at
 * the sender's own next sequence: it closes. Elsewhere inside the window: forwarded, state
 * kept (the endpoint sends a challenge ACK, RFC 5961 3.2). Before the receiver's ack, or
 * outside the window: dropped.
 */
static enum tcpwin_verdict
tcpwin_rst(struct ct_session *s, int d, struct tcpwin_seg *g)
{
	bool known = s->lag[d] != TCPWIN_LAG_SAT;
	uint32_t mw_s, mw_r, peer_ack;
	int r = d ^ 1;

	if (!s->maxwin[d]) {
		/* Refusing our SYN: acceptable only if it acks the SYN (RFC 793, SYN-SENT). */
		if (s->state == CT_TCP_SYN_SENT && d == CT_DIR_REPLY)
			return (g->flags & TCPF_ACK) && g->ack == s->end[r] ? TW_OK : TW_BAD_RST;
		/* Picked up mid-stream: nothing to judge it by. */
		return TW_OK;
	}
	if (!s->maxwin[r]) {
		if ((s->flags & CT_F_PICKUP) || g->seq == s->end[d])
			return TW_OK;
		/*
		 * A sandbox's own RST on the flow it is opening, off its sequence: its stack
		 * answering a stray ACK, the remote's for an older connection on this tuple that
		 * it still holds in TIME_WAIT (a SNAT port taken over, dp_snat.h). Forwarded, state
		 * kept: at the remote's expected sequence it ends that TIME_WAIT, and the guest's
		 * next SYN opens. A world peer's such RST is still dropped.
		 */
		return d == CT_DIR_ORIG && (s->flags & CT_F_POLICY) &&
		       s->state == CT_TCP_SYN_SENT ? TW_KEEP : TW_BAD_RST;
	}
	/* Without ACK, or with the ack 0 some stacks send with RST+ACK: as if it acked all. */
	if (!(g->flags & TCPF_ACK) || !g->ack)
		g->ack = s->end[r];
	mw_s = tcpwin_mw_decode(s->maxwin[d]);
	mw_r = tcpwin_mw_decode(s->maxwin[r]);
	peer_ack = tcpwin_peer_ack(s, d);
	if (!tcpwin_in(s, d, g, mw_s, mw_r) || (known && tw_before(g->seq, peer_ack)))
		return TW_BAD_RST;
	if (g->seq == s->end[d] || (known && g->seq == peer_ack))
		return TW_OK;
	return TW_KEEP;
}

void
tcpwin_open(struct ct_table *ct, struct ct_session *s, const struct pkt *p)
{
	struct tcpwin_seg g;

	(void)ct;
	tcpwin_seg_read(p, &g);
	tcpwin_syn_start(s, CT_DIR_ORIG, p, &g);
}

/* A state in which both sides have synchronized their sequence numbers. */
static inline bool
tcpwin_synchronized(uint8_t state)
{
	return state >= CT_TCP_ESTABLISHED && state <= CT_TCP_CLOSE;
}

enum tcpwin_verdict
tcpwin_slow(struct ct_table *ct, struct ct_session *s, int d, const struct pkt *p)
{
	struct tcpwin_seg seg, *g = &seg;
	int r = d ^ 1;
	uint32_t mw_s, mw_r;

	tcpwin_seg_read(p, g);

	if (g->flags & TCPF_RST)
		return tcpwin_rst(s, d, g);
	/*
	 * A direction first seen in a session picked up mid-stream, or in one adopted without
	 * window state: learn it from a segment that acks (one without says nothing of the peer).
	 */
	if (!s->maxwin[d] &&
	    ((s->flags & CT_F_PICKUP) || (!s->maxwin[r] && !(g->flags & TCPF_SYN)))) {
		if (g->flags & TCPF_ACK)
			tcpwin_pickup(s, d, g);
		return TW_OK;
	}
	if (g->flags & TCPF_SYN) {
		bool retry;

		/*
		 * A SYN on a synchronized connection (a client that reused its port): the
		 * endpoint answers with a challenge ACK and the transition table ignores it. It
		 * passes unchecked and teaches nothing, as in Linux, so that exchange can end the
		 * old flow.
		 */
		if (tcpwin_synchronized(s->state))
			return TW_OK;
		/* A SYN+ACK must ack our SYN before it may start its direction. */
		if (!s->maxwin[d]) {
			if ((g->flags & TCPF_ACK) && s->maxwin[r] &&
			    (tw_after(g->ack, s->end[r]) ||
			     tw_before(g->ack, s->end[r] - TCPWIN_MIN_ACKWIN)))
				return TW_BAD;
			tcpwin_syn_start(s, d, p, g);
			return TW_OK;
		}
		/* A SYN (or SYN+ACK) sent again with a later sequence: the endpoint restarted. */
		retry = (s->state == CT_TCP_SYN_SENT && d == CT_DIR_ORIG &&
			 !(g->flags & TCPF_ACK)) ||
			(s->state == CT_TCP_SYN_RECV && d == CT_DIR_REPLY && (g->flags & TCPF_ACK));
		if (retry && tw_after(g->end, s->end[d])) {
			tcpwin_syn_start(s, d, p, g);
			return TW_OK;
		}
	} else if (!s->maxwin[d]) {
		/*
		 * The peer of a SYN answering without one: the table ignores or rejects it; in a
		 * synchronized state (never reached that way) treat it as picked up.
		 */
		if (tcpwin_synchronized(s->state) && (g->flags & TCPF_ACK))
			tcpwin_pickup(s, d, g);
		return TW_OK;
	}
	mw_s = tcpwin_mw_decode(s->maxwin[d]);
	mw_r = tcpwin_mw_decode(s->maxwin[r]);
	if (!(g->flags & TCPF_ACK))
		g->ack = s->end[r];
	if (!tcpwin_in(s, d, g, mw_s, mw_r))
		/* Picked up and liberal: it passes, but what it says is not learnt. */
		return (s->flags & CT_F_PICKUP) ? TW_OK : TW_BAD;
	tcpwin_update(s, d, g, mw_s, mw_r);
	return TW_OK;
}
