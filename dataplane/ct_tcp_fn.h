/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rare cases of window tracking on one kind of session (ct_tcp.c), included once per
 * kind as tcpwin_fn.h is: TW_SESSION, TW_TABLE, TW_(name). No include guard, on purpose.
 */
static inline void
TW_(set_scale)(TW_SESSION *s, int d, uint8_t shift)
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
TW_(syn_start)(TW_SESSION *s, int d, const struct pkt *p, const struct tcpwin_seg *g)
{
	int shift = tcpwin_syn_wscale(p), r = d ^ 1;

	s->end[d] = g->end;
	s->lag[d] = 0;
	s->maxwin[d] = tcpwin_mw_encode(g->win ? g->win : 1);
	s->flags &= (uint8_t)~tcpwin_ws_flag(d);
	if (shift >= 0)
		s->flags |= tcpwin_ws_flag(d);
	TW_(set_scale)(s, d, shift >= 0 ? (uint8_t)shift : 0);
	if (!s->maxwin[r])
		return;
	if (g->flags & TCPF_ACK)
		TW_(acked)(s, d, g->ack);
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
TW_(pickup)(TW_SESSION *s, int d, const struct tcpwin_seg *g)
{
	int r = d ^ 1;

	TW_(set_scale)(s, d, TCPWIN_MAX_SCALE);
	s->maxwin[d] = tcpwin_mw_encode(g->win ? (uint64_t)g->win << TCPWIN_MAX_SCALE : 1);
	if (!s->maxwin[r]) {
		TW_(set_scale)(s, r, TCPWIN_MAX_SCALE);
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
		TW_(advance)(s, d, g->end);
	}
	if (tw_after(g->ack, s->end[r]))
		TW_(advance)(s, r, g->ack);
	TW_(acked)(s, d, g->ack);
	s->flags &= (uint8_t)~CT_F_PICKUP;
}

/*
 * A RST. Exactly at the receiver's next expected sequence (its highest ack, when known) or at
 * the sender's own next sequence: it closes. Elsewhere inside the window: forwarded, state
 * kept (the endpoint sends a challenge ACK, RFC 5961 3.2). Before the receiver's ack, or
 * outside the window: dropped.
 */
static enum tcpwin_verdict
TW_(rst)(TW_SESSION *s, int d, struct tcpwin_seg *g)
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
	peer_ack = TW_(peer_ack)(s, d);
	if (!TW_(in)(s, d, g, mw_s, mw_r) || (known && tw_before(g->seq, peer_ack)))
		return TW_BAD_RST;
	if (g->seq == s->end[d] || (known && g->seq == peer_ack))
		return TW_OK;
	return TW_KEEP;
}

void
TW_(open)(TW_TABLE *ct, TW_SESSION *s, const struct pkt *p)
{
	struct tcpwin_seg g;

	(void)ct;
	tcpwin_seg_read(p, &g);
	TW_(syn_start)(s, CT_DIR_ORIG, p, &g);
}

enum tcpwin_verdict
TW_(slow)(TW_TABLE *ct, TW_SESSION *s, int d, const struct pkt *p)
{
	struct tcpwin_seg seg, *g = &seg;
	int r = d ^ 1;
	uint32_t mw_s, mw_r;

	tcpwin_seg_read(p, g);

	if (g->flags & TCPF_RST)
		return TW_(rst)(s, d, g);
	/*
	 * A direction first seen in a session picked up mid-stream, or in one adopted without
	 * window state: learn it from a segment that acks (one without says nothing of the peer).
	 */
	if (!s->maxwin[d] &&
	    ((s->flags & CT_F_PICKUP) || (!s->maxwin[r] && !(g->flags & TCPF_SYN)))) {
		if (g->flags & TCPF_ACK)
			TW_(pickup)(s, d, g);
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
			TW_(syn_start)(s, d, p, g);
			return TW_OK;
		}
		/* A SYN (or SYN+ACK) sent again with a later sequence: the endpoint restarted. */
		retry = (s->state == CT_TCP_SYN_SENT && d == CT_DIR_ORIG &&
			 !(g->flags & TCPF_ACK)) ||
			(s->state == CT_TCP_SYN_RECV && d == CT_DIR_REPLY && (g->flags & TCPF_ACK));
		if (retry && tw_after(g->end, s->end[d])) {
			TW_(syn_start)(s, d, p, g);
			return TW_OK;
		}
	} else if (!s->maxwin[d]) {
		/*
		 * The peer of a SYN answering without one: the table ignores or rejects it; in a
		 * synchronized state (never reached that way) treat it as picked up.
		 */
		if (tcpwin_synchronized(s->state) && (g->flags & TCPF_ACK))
			TW_(pickup)(s, d, g);
		return TW_OK;
	}
	mw_s = tcpwin_mw_decode(s->maxwin[d]);
	mw_r = tcpwin_mw_decode(s->maxwin[r]);
	if (!(g->flags & TCPF_ACK))
		g->ack = s->end[r];
	if (!TW_(in)(s, d, g, mw_s, mw_r))
		/* Picked up and liberal: it passes, but what it says is not learnt. */
		return (s->flags & CT_F_PICKUP) ? TW_OK : TW_BAD;
	TW_(update)(s, d, g, mw_s, mw_r);
	return TW_OK;
}
