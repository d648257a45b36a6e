/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The window tracker's functions on one kind of session (tcpwin.h), made once per kind by
 * tw_each.h: TW_SESSION is the session type (struct ct_session, struct ct6_session: the
 * window fields have the same names and meanings in both), TW_TABLE its table, TW_(name) the
 * function's name (tcpwin_name for IPv4, tcpwin6_name for IPv6). No include guard, on
 * purpose.
 */
static inline uint8_t
TW_(scale)(const TW_SESSION *s, int d)
{
	return (uint8_t)((s->wscale >> (4 * d)) & 15);
}

/* The highest ack the peer of direction d has sent, when known (lag not saturated). */
static inline uint32_t
TW_(peer_ack)(const TW_SESSION *s, int d)
{
	return s->end[d] - s->lag[d];
}

/* Bounds I-IV for a segment of direction d; mw_s, mw_r: decoded maxwin of d and of its peer. */
static inline bool
TW_(in)(const TW_SESSION *s, int d, const struct tcpwin_seg *g, uint32_t mw_s,
	  uint32_t mw_r)
{
	uint32_t ackwin = mw_s > TCPWIN_MIN_ACKWIN ? mw_s : TCPWIN_MIN_ACKWIN;
	int r = d ^ 1;

	return !tw_after(g->seq, TW_(peer_ack)(s, d) + mw_r) &&
	       (!mw_r || !tw_before(g->end, s->end[d] - mw_r)) &&
	       !tw_after(g->ack, s->end[r]) && !tw_before(g->ack, s->end[r] - ackwin);
}

/* d sent up to 'end' (later than its end): the peer lags behind by as much more. */
static inline void
TW_(advance)(TW_SESSION *s, int d, uint32_t end)
{
	uint32_t lag = s->lag[d] + (end - s->end[d]);

	s->lag[d] = (uint16_t)(lag < TCPWIN_LAG_SAT ? lag : TCPWIN_LAG_SAT);
	s->end[d] = end;
}

/* d acked up to 'ack' (<= the peer's end, bound III): the peer's lag shrinks to what is left. */
static inline void
TW_(acked)(TW_SESSION *s, int d, uint32_t ack)
{
	uint32_t left = s->end[d ^ 1] - ack;

	if (left < s->lag[d ^ 1])
		s->lag[d ^ 1] = (uint16_t)left;
}

/* Learn from a segment that passed (only maxima move, so reordering never narrows a bound). */
static inline void
TW_(update)(TW_SESSION *s, int d, const struct tcpwin_seg *g, uint32_t mw_s,
	      uint32_t mw_r)
{
	uint32_t win = (g->flags & TCPF_SYN) ? g->win : g->win << TW_(scale)(s, d);
	uint32_t bound = TW_(peer_ack)(s, d) + mw_r;

	if (win > mw_s)
		s->maxwin[d] = tcpwin_mw_encode(win);
	/*
	 * Data beyond bound I that passed (a window probe, or a pick-up still learning): widen
	 * the receiver's window to cover it, so the retransmission of it passes too.
	 */
	if (mw_r && tw_after(g->end, bound))
		s->maxwin[d ^ 1] = tcpwin_mw_encode((uint64_t)mw_r + (g->end - bound));
	if (tw_after(g->end, s->end[d]))
		TW_(advance)(s, d, g->end);
	if (g->flags & TCPF_ACK)
		TW_(acked)(s, d, g->ack);
}

/* The SYN that created session s starts the tracking of its direction (ct_tcp.c). */
void TW_(open)(TW_TABLE *ct, TW_SESSION *s, const struct pkt *p);

/* SYN, RST, a direction not seen yet: everything but the steady state (ct_tcp.c). */
enum tcpwin_verdict TW_(slow)(TW_TABLE *ct, TW_SESSION *s, int d,
				const struct pkt *p);

/*
 * Both directions seen, no SYN or RST: the steady state of every flow, TW_(in)() and
 * TW_(update)() without the cases that cannot arise here (no SYN, both maxwin set). f holds
 * the segment's FIN and ACK bits; a caller that knows them passes a constant and the tests of
 * them fold away.
 */
static inline __attribute__((always_inline)) enum tcpwin_verdict
TW_(steady)(TW_SESSION *s, int d, const struct pkt *p, uint8_t f)
{
	const struct tcp_hdr *th = pkt_l4(p);
	uint32_t seq, end, ack, win, mw_s, mw_r, bound, ackwin, rend, left;
	int r = d ^ 1;

	seq = ntohl(th->seq);
	mw_r = (uint32_t)((s->maxwin[r] & 7) | 8) << (s->maxwin[r] >> 3);
	bound = s->end[d] - s->lag[d] + mw_r;
	/* Bounds I-IV, each a difference that must be >= 0 modulo 2^32. I: */
	if ((int32_t)(bound - seq) < 0)
		return TW_BAD;
	end = seq + p->len - p->l4_off - (uint32_t)(th->doff >> 4) * 4u + (f & TCPF_FIN);
	/* II: */
	if ((int32_t)(end - s->end[d] + mw_r) < 0)
		return TW_BAD;
	rend = s->end[r];
	ack = __builtin_expect(f & TCPF_ACK, TCPF_ACK) ? ntohl(th->ack) : rend;
	mw_s = (uint32_t)((s->maxwin[d] & 7) | 8) << (s->maxwin[d] >> 3);
	ackwin = mw_s > TCPWIN_MIN_ACKWIN ? mw_s : TCPWIN_MIN_ACKWIN;
	/* III and IV: */
	if ((int32_t)((rend - ack) | (ack - rend + ackwin)) < 0)
		return TW_BAD;
	win = (uint32_t)ntohs(th->win) << TW_(scale)(s, d);
	if (__builtin_expect(win > mw_s, 0))
		s->maxwin[d] = tcpwin_mw_grow(win);
	if (__builtin_expect(tw_after(end, bound), 0))
		s->maxwin[r] = tcpwin_mw_grow((uint64_t)mw_r + (end - bound));
	if (tw_after(end, s->end[d]))
		TW_(advance)(s, d, end);
	/* What d acks of its peer's data: the peer's lag shrinks to what is left unacked. */
	left = rend - ack;
	if ((f & TCPF_ACK) && left < s->lag[r])
		s->lag[r] = (uint16_t)left;
	return TW_OK;
}

/* Check a TCP segment that matched s->t[d] against the window and learn from it. */
static inline __attribute__((always_inline)) enum tcpwin_verdict
TW_(track)(TW_TABLE *ct, TW_SESSION *s, int d, const struct pkt *p)
{
	uint8_t f = p->tcp_flags;

	if (__builtin_expect(!s->maxwin[0] || !s->maxwin[1] || (f & (TCPF_SYN | TCPF_RST)), 0))
		return TW_(slow)(ct, s, d, p);
	return TW_(steady)(s, d, p, f);
}

/*
 * TW_(track)() for a segment known to carry ACK and none of SYN, FIN, RST (the caller
 * tested p->tcp_flags): the verdict is TW_OK or TW_BAD.
 */
static inline __attribute__((always_inline)) enum tcpwin_verdict
TW_(track_ack)(TW_TABLE *ct, TW_SESSION *s, int d, const struct pkt *p)
{
	if (__builtin_expect(!s->maxwin[0] || !s->maxwin[1], 0))
		return TW_(slow)(ct, s, d, p);
	return TW_(steady)(s, d, p, TCPF_ACK);
}
