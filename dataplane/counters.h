/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every counter of the worker, declared once. The lists expand into the enums, the names shown
 * by the API and the help texts, so the names never drift between surfaces.
 */
#ifndef CVS_COUNTERS_H
#define CVS_COUNTERS_H

#include <stdint.h>

/* Drop reasons: _(ENUM, "name", "help"). */
#define CVS_DROP_REASONS(_) \
	_(RUNT,			"runt",			"frame shorter than an Ethernet header") \
	_(ETHERTYPE,		"ethertype",		"ethertype other than IPv4 or ARP") \
	_(IP_HEADER,		"ip_header",		"IPv4 header truncated, bad version or IHL") \
	_(IP_LENGTH,		"ip_length",		"IPv4 total length beyond the frame or below the header") \
	_(FRAGMENT,		"fragment",		"IPv4 fragment (not translated)") \
	_(L4_HEADER,		"l4_header",		"TCP/UDP/ICMP header truncated or bad data offset") \
	_(PROTO,		"proto",		"IP protocol the fast path does not translate") \
	_(NOT_NODE_IP,		"not_node_ip",		"world frame not addressed to the node IP") \
	_(NO_HOSTPORT,		"no_hostport",		"TCP to a port that no sandbox exposes") \
	_(NO_SESSION,		"no_session",		"segment that matches no session and opens none") \
	_(TABLE_FULL,		"table_full",		"session table full: new flow refused") \
	_(TUPLE_CLASH,		"tuple_clash",		"new flow whose reply tuple is already in use") \
	_(SANDBOX_GONE,		"sandbox_gone",		"session points at a sandbox being removed") \
	_(ARP,			"arp",			"ARP frame that is not an IPv4 request") \
	_(GUEST_NO_SESSION,	"guest_no_session",	"sandbox frame that matches no session") \
	_(TOO_BIG,		"too_big",		"frame larger than an output buffer") \
	_(TX_FULL,		"tx_full",		"output ring or queue full") \
	_(NO_BUFFER,		"no_buffer",		"no free mbuf or UMEM frame for output")

enum cvs_drop {
#define CVS_DROP_ENUM(n, s, h) CVS_DROP_##n,
	CVS_DROP_REASONS(CVS_DROP_ENUM)
#undef CVS_DROP_ENUM
	CVS_DROP_MAX
};

/* Worker counters: _(ENUM, "name", "help"). */
#define CVS_WORKER_COUNTERS(_) \
	_(WORLD_RX_PKTS,	"world_rx_packets",	"frames received on the world port") \
	_(WORLD_RX_BYTES,	"world_rx_bytes",	"bytes received on the world port") \
	_(WORLD_TX_PKTS,	"world_tx_packets",	"frames sent on the world port") \
	_(WORLD_TX_BYTES,	"world_tx_bytes",	"bytes sent on the world port") \
	_(SBX_RX_PKTS,		"sandbox_rx_packets",	"frames received from sandboxes") \
	_(SBX_RX_BYTES,		"sandbox_rx_bytes",	"bytes received from sandboxes") \
	_(SBX_TX_PKTS,		"sandbox_tx_packets",	"frames sent to sandboxes") \
	_(SBX_TX_BYTES,		"sandbox_tx_bytes",	"bytes sent to sandboxes") \
	_(ARP_REPLIES,		"arp_replies",		"ARP requests of guests answered") \
	_(SESS_CREATED,		"sessions_created",	"sessions created") \
	_(SESS_EXPIRED,		"sessions_expired",	"sessions removed by timeout") \
	_(SESS_EVICTED,		"sessions_evicted",	"not-established sessions evicted by a new flow") \
	_(SESS_FLUSHED,		"sessions_flushed",	"sessions removed with their sandbox") \
	_(TCP_INVALID,		"tcp_invalid",		"TCP segments with an invalid or ignored transition") \
	_(POLLS_BUSY,		"polls_busy",		"worker loop iterations that moved packets") \
	_(POLLS_IDLE,		"polls_idle",		"worker loop iterations without packets")

enum cvs_wcounter {
#define CVS_WC_ENUM(n, s, h) CVS_WC_##n,
	CVS_WORKER_COUNTERS(CVS_WC_ENUM)
#undef CVS_WC_ENUM
	CVS_WC_MAX
};

/* Written only by the owning worker, read by the control thread (torn reads are harmless). */
struct cvs_stats {
	uint64_t drop[CVS_DROP_MAX];
	uint64_t c[CVS_WC_MAX];
};

extern const char *const cvs_drop_names[CVS_DROP_MAX];
extern const char *const cvs_wcounter_names[CVS_WC_MAX];

#endif /* CVS_COUNTERS_H */
