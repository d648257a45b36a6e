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
#include "ct6.h"
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

/* maxwin grows (rarely): out of line, so the steady state keeps its registers. */
uint8_t tcpwin_mw_grow(uint64_t x);

/*
 * The functions on a session, once per family (tcpwin_fn.h): tcpwin_track() and the rest on
 * struct ct_session, tcpwin6_track() and the rest on struct ct6_session.
 */
#define TW_FN_HEADER	"tcpwin_fn.h"
#include "tw_each.h"

#endif /* CVS_TCPWIN_H */
