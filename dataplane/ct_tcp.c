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

/*
 * The shift of a SYN's window scale option (at most 14, RFC 7323), or -1 when it has none.
 * Inlined into each family's tcpwin_syn_start() as it was when it had one caller.
 */
static inline __attribute__((always_inline)) int
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

/* A state in which both sides have synchronized their sequence numbers. */
static inline bool
tcpwin_synchronized(uint8_t state)
{
	return state >= CT_TCP_ESTABLISHED && state <= CT_TCP_CLOSE;
}

/* The functions on a session, once per family (ct_tcp_fn.h), as in tcpwin.h. */
#define TW_FN_HEADER	"ct_tcp_fn.h"
#include "tw_each.h"
