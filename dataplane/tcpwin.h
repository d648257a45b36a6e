/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP window tracking, per packet: the model of Linux nf_conntrack's tcp_in_window (its
 * published algorithm, not its code). Each direction keeps the highest sequence it sent (end),
 * the highest ack it sent (maxack), the largest window it advertised (maxwin, scaled) and its
 * window scale from the SYN options. A segment from direction d to its peer r is in window when
 *   I   seq  <= r.maxack + r.maxwin       it starts inside what the receiver last allowed
 *   II  end  >= d.end - r.maxwin          it is not older than one receive window
 *   III ack  <= r.end                     it acknowledges nothing the peer has not sent
 *   IV  ack  >= r.end - max(d.maxwin, 66000)   and nothing older than a window
 * (modulo 2^32). Linux keeps max(ack + win) per direction for bound I; ours is the sum of the
 * two maxima, never below it, so it accepts a superset and the state fits the 14 bytes of the
 * session's hot line it has (struct ct_session): no second cache line per packet. r.maxack is
 * kept as d.end - d.lag, the lag saturating at 0xffff ("at least"): bound I only widens then,
 * and the exact-RST test at r.maxack is skipped.
 * SACK blocks are not read: bound IV uses the cumulative ack, which a receiver that SACKs
 * keeps at the hole, still inside the window the sender may have outstanding.
 *
 * A segment outside the window changes nothing (state, window, timeout) and is dropped. A RST
 * is judged as RFC 5961 section 3 asks of an endpoint: exactly at the sequence the receiver
 * expects (the highest ack it sent) or at the sender's own next sequence (a RST right after
 * its data, before the ack), it closes; elsewhere in the window it is forwarded but the state
 * stays, so the endpoint can send its challenge ACK and a genuine peer answers with an exact
 * RST; before the receiver's ack or beyond the window it is dropped. A blind attacker has to
 * guess one of two 32-bit values to close a flow, and a flood of guesses inside the window
 * costs the flow nothing but challenge ACKs.
 *
 * A direction first seen without a SYN (a session adopted without window state, after a
 * restart) is picked up mid-stream: liberal until both directions have been seen, then checked
 * with the largest window scale (14) assumed, since the SYN options are gone: loose, never
 * wrong. --tcp-liberal (dp_cfg.tcp_liberal) turns all of this off.
 */
#ifndef CVS_TCPWIN_H
#define CVS_TCPWIN_H

#include <stdbool.h>
#include <stdint.h>
#include <arpa/inet.h>

#include "ct.h"
#include "pkt.h"

enum tcpwin_verdict {
	TW_OK = 0,	/* in window: the transition table decides the next state */
	TW_KEEP,	/* a RST in the window, not at the expected sequence: forward, keep state */
	TW_BAD,		/* outside the window: drop, change nothing */
	TW_BAD_RST,	/* a RST outside the window: drop, change nothing */
};

#define TCPWIN_MAX_SCALE	14	/* RFC 7323 */
#define TCPWIN_MIN_ACKWIN	66000	/* bound IV never narrower than this (as Linux) */
#define TCPWIN_MAX_WIN		(1u << 30)	/* 65535 << 14: keeps the bounds well signed */

/* The fields of a segment the tracker reads, host order. */
struct tcpwin_seg {
	uint32_t seq;
	uint32_t ack;	/* without the ACK flag, taken as acking all the peer sent */
	uint32_t end;	/* seq + payload + SYN + FIN */
	uint32_t win;	/* raw window field */
	uint8_t flags;
};

static inline bool
tw_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool
tw_after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

#define TCPWIN_LAG_SAT		0xffff	/* lag unknown, at least this */

/*
 * maxwin is kept as an 8-bit float, 3 bits of mantissa under an implicit leading one and 5 of
 * exponent, rounded up: never below the true maximum, at most 1/8 above it; 0 means "not seen".
 */
static inline uint32_t
tcpwin_mw_decode(uint8_t v)
{
	return v ? (uint32_t)((v & 7) | 8) << (v >> 3) : 0;
}

static inline uint8_t
tcpwin_mw_encode(uint64_t x)
{
	uint32_t v = x > TCPWIN_MAX_WIN ? TCPWIN_MAX_WIN : (uint32_t)x, e, m;

	if (v <= 9)
		return 1;
	e = 32 - (uint32_t)__builtin_clz(v) - 4;
	m = (uint32_t)(((uint64_t)v + (1u << e) - 1) >> e);
	if (m > 15) {
		m >>= 1;
		e++;
	}
	return (uint8_t)(e << 3 | (m & 7));
}

static inline uint8_t
tcpwin_scale(const struct ct_session *s, int d)
{
	return (uint8_t)((s->wscale >> (4 * d)) & 15);
}

/* The highest ack the peer of direction d has sent, when known (lag not saturated). */
static inline uint32_t
tcpwin_peer_ack(const struct ct_session *s, int d)
{
	return s->end[d] - s->lag[d];
}

/* Bounds I-IV for a segment of direction d; mw_s, mw_r: decoded maxwin of d and of its peer. */
static inline bool
tcpwin_in(const struct ct_session *s, int d, const struct tcpwin_seg *g, uint32_t mw_s,
	  uint32_t mw_r)
{
	uint32_t ackwin = mw_s > TCPWIN_MIN_ACKWIN ? mw_s : TCPWIN_MIN_ACKWIN;
	int r = d ^ 1;

	return !tw_after(g->seq, tcpwin_peer_ack(s, d) + mw_r) &&
	       (!mw_r || !tw_before(g->end, s->end[d] - mw_r)) &&
	       !tw_after(g->ack, s->end[r]) && !tw_before(g->ack, s->end[r] - ackwin);
}

/* d sent up to 'end' (later than its end): the peer lags behind by as much more. */
static inline void
tcpwin_advance(struct ct_session *s, int d, uint32_t end)
{
	uint32_t lag = s->lag[d] + (end - s->end[d]);

	s->lag[d] = (uint16_t)(lag < TCPWIN_LAG_SAT ? lag : TCPWIN_LAG_SAT);
	s->end[d] = end;
}

/* d acked up to 'ack' (<= the peer's end, bound III): the peer's lag shrinks to what is left. */
static inline void
tcpwin_acked(struct ct_session *s, int d, uint32_t ack)
{
	uint32_t left = s->end[d ^ 1] - ack;

	if (left < s->lag[d ^ 1])
		s->lag[d ^ 1] = (uint16_t)left;
}

/* Learn from a segment that passed (only maxima move, so reordering never narrows a bound). */
static inline void
tcpwin_update(struct ct_session *s, int d, const struct tcpwin_seg *g, uint32_t mw_s,
	      uint32_t mw_r)
{
	uint32_t win = (g->flags & TCPF_SYN) ? g->win : g->win << tcpwin_scale(s, d);
	uint32_t bound = tcpwin_peer_ack(s, d) + mw_r;

	if (win > mw_s)
		s->maxwin[d] = tcpwin_mw_encode(win);
	/*
	 * Data beyond bound I that passed (a window probe, or a pick-up still learning): widen
	 * the receiver's window to cover it, so the retransmission of it passes too.
	 */
	if (mw_r && tw_after(g->end, bound))
		s->maxwin[d ^ 1] = tcpwin_mw_encode((uint64_t)mw_r + (g->end - bound));
	if (tw_after(g->end, s->end[d]))
		tcpwin_advance(s, d, g->end);
	if (g->flags & TCPF_ACK)
		tcpwin_acked(s, d, g->ack);
}

/* Read the fields of a segment; the ack stays raw (the checks fill in a missing one). */
static inline void
tcpwin_seg_read(const struct pkt *p, struct tcpwin_seg *g)
{
	const struct tcp_hdr *th = pkt_l4(p);

	g->flags = p->tcp_flags;
	g->seq = ntohl(th->seq);
	g->ack = ntohl(th->ack);
	g->win = ntohs(th->win);
	/* SYN and FIN take a sequence number each; the parser checked doff against the length. */
	g->end = g->seq + (p->len - p->l4_off - (th->doff >> 4) * 4u) +
		 ((g->flags & TCPF_SYN) ? 1 : 0) + ((g->flags & TCPF_FIN) ? 1 : 0);
}

/* The SYN that created session s starts the tracking of its direction (ct_tcp.c). */
void tcpwin_open(struct ct_table *ct, struct ct_session *s, const struct pkt *p);

/* SYN, RST, a direction not seen yet: everything but the steady state (ct_tcp.c). */
enum tcpwin_verdict tcpwin_slow(struct ct_table *ct, struct ct_session *s, int d,
				const struct pkt *p);

/* maxwin grows (rarely): out of line, so the steady state keeps its registers. */
uint8_t tcpwin_mw_grow(uint64_t x);

/*
 * Both directions seen, no SYN or RST: the steady state of every flow, tcpwin_in() and
 * tcpwin_update() without the cases that cannot arise here (no SYN, both maxwin set). f holds
 * the segment's FIN and ACK bits; a caller that knows them passes a constant and the tests of
 * them fold away.
 */
static inline __attribute__((always_inline)) enum tcpwin_verdict
tcpwin_steady(struct ct_session *s, int d, const struct pkt *p, uint8_t f)
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
	win = (uint32_t)ntohs(th->win) << tcpwin_scale(s, d);
	if (__builtin_expect(win > mw_s, 0))
		s->maxwin[d] = tcpwin_mw_grow(win);
	if (__builtin_expect(tw_after(end, bound), 0))
		s->maxwin[r] = tcpwin_mw_grow((uint64_t)mw_r + (end - bound));
	if (tw_after(end, s->end[d]))
		tcpwin_advance(s, d, end);
	/* What d acks of its peer's data: the peer's lag shrinks to what is left unacked. */
	left = rend - ack;
	if ((f & TCPF_ACK) && left < s->lag[r])
		s->lag[r] = (uint16_t)left;
	return TW_OK;
}

/* Check a TCP segment that matched s->t[d] against the window and learn from it. */
static inline __attribute__((always_inline)) enum tcpwin_verdict
tcpwin_track(struct ct_table *ct, struct ct_session *s, int d, const struct pkt *p)
{
	uint8_t f = p->tcp_flags;

	if (__builtin_expect(!s->maxwin[0] || !s->maxwin[1] || (f & (TCPF_SYN | TCPF_RST)), 0))
		return tcpwin_slow(ct, s, d, p);
	return tcpwin_steady(s, d, p, f);
}

/*
 * tcpwin_track() for a segment known to carry ACK and none of SYN, FIN, RST (the caller
 * tested p->tcp_flags): the verdict is TW_OK or TW_BAD.
 */
static inline __attribute__((always_inline)) enum tcpwin_verdict
tcpwin_track_ack(struct ct_table *ct, struct ct_session *s, int d, const struct pkt *p)
{
	if (__builtin_expect(!s->maxwin[0] || !s->maxwin[1], 0))
		return tcpwin_slow(ct, s, d, p);
	return tcpwin_steady(s, d, p, TCPF_ACK);
}

#endif /* CVS_TCPWIN_H */
