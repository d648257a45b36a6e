/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The malformed-packet catalogue: golden rows {frame, port, expected verdict, expected drop
 * counter} run against the pipeline on the shared test bed (tests/unit/dpbed.h), which holds
 * live flows of every kind. For every row:
 *   - the verdict and, for drops, the reason are the expected ones;
 *   - a drop moves exactly its own counter by one and leaves the session table as it was;
 *   - every preloaded flow is still there in the same state (unless the row is on that flow);
 *   - checksums keep their validity: a bad one stays bad, a good one stays good;
 *   - the session table is consistent.
 * Then all rows run back to back on one table and the established flow must still carry data.
 *
 *   catalogue            run the rows (meson test 'malformed-catalogue')
 *   catalogue --list     print the rows
 *   catalogue --dump DIR write each row as a fuzz_dp seed (tests/fuzz/corpus/dp)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpbed.h"
#include "frag_seq.h"

enum base {
	B_SYN_W,	/* client → node:20005 SYN (a new exposed-port flow) */
	B_EST_W,	/* client → node:20005 ACK + 4 bytes on the established flow */
	B_SYN_OPT_W,	/* B_SYN_W with 4 bytes of IP options */
	B_UDP_A,	/* guest A → client:53 UDP (new egress) */
	B_UDP_B,	/* guest B → remote:53 UDP (denied by B's policy) */
	B_SYN_A,	/* guest A → remote:80 SYN (new egress) */
	B_SYN_B,	/* guest B → remote:80 SYN (denied: RST back) */
	B_ECHO_A,	/* guest A → client echo request */
	B_SYN_H,	/* cube-dev → sandbox A's address:8080 SYN */
	B_ARP_A,	/* guest A: who has the gateway */
	B_ARP_H,	/* cube-dev: who has sandbox A's address */
	B_ICMPERR_W,	/* router → node: frag needed, quoting the egress TCP flow of A */
	B_BIG_W,	/* B_EST_W with 4000 bytes of payload */
	B_EST_A,	/* guest A → client:40000 ACK + 4 bytes: the reply side of B_EST_W */
	B_EGR_W,	/* remote:80 → node:SNAT port SYN+ACK answering A's egress SYN */
};

struct patch {
	uint16_t off;
	uint8_t width;	/* 1, 2 or 4; 0 ends the list */
	uint8_t xor;	/* flip bits instead of setting */
	uint32_t val;	/* host order; written big endian */
};

#define F_FIX_IP	0x01	/* recompute the IP header checksum after patching */
#define F_FIX_L4	0x02	/* recompute the L4 (or ICMP) checksum after patching */
#define F_FLOW		0x04	/* the row is on a preloaded flow: it may change its state */

struct row {
	const char *name;
	int port;		/* 0 world, 1 sandbox A, 2 sandbox B, 3 cube-dev */
	enum base base;
	struct patch p[4];
	uint32_t trunc;		/* frame length to keep (0: all) */
	uint32_t pad;		/* zero bytes appended after the datagram */
	uint8_t flags;
	uint8_t action;
	int drop;		/* enum cvs_drop for DP_DROP rows */
	uint32_t out_len;	/* expected output length (0: not checked) */
};

#define P1(o, v)	{ (o), 1, 0, (v) }
#define P2(o, v)	{ (o), 2, 0, (v) }
#define P4(o, v)	{ (o), 4, 0, (v) }
#define X1(o, v)	{ (o), 1, 1, (v) }
#define X2(o, v)	{ (o), 2, 1, (v) }
#define DROP(r)		DP_DROP, CVS_DROP_##r
#define PASS(a)		a, -1

/* Offsets in a frame without IP options. */
#define O_ETH_SRC	6
#define O_ETYPE		12
#define O_VIHL		14
#define O_TOTLEN	16
#define O_FRAG		20
#define O_TTL		22
#define O_PROTO		23
#define O_IPSUM		24
#define O_SADDR		26
#define O_DADDR		30
#define O_L4		34
#define O_TCP_SEQ	38
#define O_TCP_ACK	42
#define O_TCP_DOFF	46
#define O_TCP_FLAGS	47
#define O_TCP_WIN	48
#define O_TCP_SUM	50
#define O_UDP_SUM	40
#define O_ICMP_TYPE	34
#define O_ICMP_SUM	36
#define O_Q		42	/* quoted IP header of an ICMP error */
#define O_ARP		14

static const struct row rows[] = {
	/* Ethernet */
	{ "eth-runt-world", 0, B_SYN_W, {{0}}, 10, 0, 0, DROP(RUNT), 0 },
	{ "eth-runt-sandbox", 1, B_UDP_A, {{0}}, 13, 0, 0, DROP(RUNT), 0 },
	{ "eth-empty-host", 3, B_SYN_H, {{0}}, 1, 0, 0, DROP(RUNT), 0 },
	{ "vlan-tag-world", 0, B_SYN_W, { P2(O_ETYPE, 0x8100) }, 0, 0, 0, DROP(ETHERTYPE), 0 },
	{ "vlan-tag-sandbox", 1, B_SYN_A, { P2(O_ETYPE, 0x8100) }, 0, 0, 0, DROP(ETHERTYPE), 0 },
	{ "qinq-tag-host", 3, B_SYN_H, { P2(O_ETYPE, 0x88a8) }, 0, 0, 0, DROP(ETHERTYPE), 0 },
	/* IPv6: a well-formed packet is counted as such (nothing translates it yet, issue 34). */
	{ "ipv6-world", 0, B_SYN_W, { P2(O_ETYPE, 0x86dd), P1(O_VIHL, 0x60), P2(18, 0),
	  P1(20, 59) }, 54, 0, 0, DROP(IPV6), 0 },
	{ "ipv6-sandbox", 1, B_UDP_A, { P2(O_ETYPE, 0x86dd), P1(O_VIHL, 0x60), P2(18, 0),
	  P1(20, 59) }, 54, 0, 0, DROP(IPV6), 0 },
	{ "ipv6-host", 3, B_SYN_H, { P2(O_ETYPE, 0x86dd), P1(O_VIHL, 0x60), P2(18, 0),
	  P1(20, 59) }, 54, 0, 0, DROP(IPV6), 0 },
	{ "ipv6-ipv4-body", 1, B_UDP_A, { P2(O_ETYPE, 0x86dd) }, 0, 0, 0, DROP(IP_HEADER), 0 },
	{ "ipv6-truncated", 0, B_SYN_W, { P2(O_ETYPE, 0x86dd), P1(O_VIHL, 0x60) }, 50, 0, 0,
	  DROP(IP_HEADER), 0 },
	{ "ipv6-plen-beyond", 1, B_UDP_A, { P2(O_ETYPE, 0x86dd), P1(O_VIHL, 0x60), P2(18, 1400),
	  P1(20, 17) }, 0, 0, 0, DROP(IP_LENGTH), 0 },
	{ "ipv6-hbh-truncated", 1, B_UDP_A, { P2(O_ETYPE, 0x86dd), P1(O_VIHL, 0x60), P2(18, 0),
	  P1(20, 0) }, 54, 0, 0, DROP(IP6_EXT), 0 },
	/* Destination options leading to hop-by-hop: 8 zero bytes appended make the second. */
	{ "ipv6-hbh-not-first", 1, B_UDP_A, { P2(O_ETYPE, 0x86dd), P1(O_VIHL, 0x60), P2(18, 16),
	  P1(20, 60) }, 0, 16, 0, DROP(IP6_EXT), 0 },
	{ "lldp-sandbox", 2, B_UDP_B, { P2(O_ETYPE, 0x88cc) }, 0, 0, 0, DROP(ETHERTYPE), 0 },
	{ "bcast-src-mac-world", 0, B_SYN_W,
	  { P4(O_ETH_SRC, 0xffffffff), P2(O_ETH_SRC + 4, 0xffff) }, 0, 0, 0, DROP(BAD_SOURCE), 0 },
	{ "mcast-src-mac-sandbox", 1, B_UDP_A, { P1(O_ETH_SRC, 0x01) }, 0, 0, 0,
	  DROP(BAD_SOURCE), 0 },
	/* IPv4 header */
	{ "ip-truncated-world", 0, B_SYN_W, {{0}}, 24, 0, 0, DROP(IP_HEADER), 0 },
	{ "ip-truncated-sandbox", 1, B_UDP_A, {{0}}, 33, 0, 0, DROP(IP_HEADER), 0 },
	{ "ip-version-6-in-ipv4", 0, B_SYN_W, { P1(O_VIHL, 0x65) }, 0, 0, F_FIX_IP,
	  DROP(IP_HEADER), 0 },
	{ "ip-ihl-4", 0, B_SYN_W, { P1(O_VIHL, 0x44) }, 0, 0, 0, DROP(IP_HEADER), 0 },
	{ "ip-ihl-0-sandbox", 1, B_UDP_A, { P1(O_VIHL, 0x40) }, 0, 0, 0, DROP(IP_HEADER), 0 },
	{ "ip-ihl-beyond-frame", 0, B_SYN_W, { P1(O_VIHL, 0x4f) }, 0, 0, 0, DROP(IP_HEADER), 0 },
	{ "ip-options-forwarded", 0, B_SYN_OPT_W, {{0}}, 0, 0, 0, PASS(DP_TO_SANDBOX), 58 },
	{ "ip-totlen-beyond-frame", 0, B_SYN_W, { P2(O_TOTLEN, 1500) }, 0, 0, F_FIX_IP,
	  DROP(IP_LENGTH), 0 },
	{ "ip-totlen-below-header", 0, B_SYN_W, { P2(O_TOTLEN, 10) }, 0, 0, F_FIX_IP,
	  DROP(IP_LENGTH), 0 },
	{ "ip-totlen-below-ihl-host", 3, B_SYN_H, { P2(O_TOTLEN, 19) }, 0, 0, F_FIX_IP,
	  DROP(IP_LENGTH), 0 },
	{ "eth-padding-trimmed", 0, B_SYN_W, {{0}}, 0, 10, 0, PASS(DP_TO_SANDBOX), 54 },
	{ "frag-first", 0, B_SYN_W, { P2(O_FRAG, 0x2000) }, 0, 0, F_FIX_IP, DROP(FRAGMENT), 0 },
	{ "frag-middle", 0, B_EST_W, { P2(O_FRAG, 0x200c) }, 0, 0, F_FIX_IP, DROP(FRAGMENT), 0 },
	{ "frag-last", 0, B_EST_W, { P2(O_FRAG, 0x000c) }, 0, 0, F_FIX_IP, DROP(FRAGMENT), 0 },
	{ "frag-tiny-offset-1", 1, B_SYN_A, { P2(O_FRAG, 0x2001) }, 0, 0, F_FIX_IP,
	  DROP(FRAGMENT), 0 },
	{ "frag-overlap-sandbox", 2, B_UDP_B, { P2(O_FRAG, 0x2000 | 0x1) }, 0, 0, F_FIX_IP,
	  DROP(FRAGMENT), 0 },
	{ "frag-reserved-bit-host", 3, B_SYN_H, { P2(O_FRAG, 0x8000) }, 0, 0, F_FIX_IP,
	  PASS(DP_TO_SANDBOX), 0 },
	{ "frag-df-only-forwarded", 0, B_SYN_W, { P2(O_FRAG, 0x4000) }, 0, 0, F_FIX_IP,
	  PASS(DP_TO_SANDBOX), 0 },
	{ "ttl-0-forwarded", 0, B_SYN_W, { P1(O_TTL, 0) }, 0, 0, F_FIX_IP, PASS(DP_TO_SANDBOX),
	  0 },
	{ "ttl-1-egress", 1, B_UDP_A, { P1(O_TTL, 1) }, 0, 0, F_FIX_IP, PASS(DP_TO_WORLD), 0 },
	{ "bad-ip-csum-stays-bad", 0, B_SYN_W, { X2(O_IPSUM, 0x0101) }, 0, 0, 0,
	  PASS(DP_TO_SANDBOX), 0 },
	{ "bad-tcp-csum-stays-bad", 0, B_EST_W, { X2(O_TCP_SUM, 0x1234) }, 0, 0, F_FLOW,
	  PASS(DP_TO_SANDBOX), 0 },
	{ "bad-udp-csum-stays-bad", 1, B_UDP_A, { X2(O_UDP_SUM, 0x0f0f) }, 0, 0, 0,
	  PASS(DP_TO_WORLD), 0 },
	{ "udp-csum-zero-stays-zero", 1, B_UDP_A, { P2(O_UDP_SUM, 0) }, 0, 0, 0,
	  PASS(DP_TO_WORLD), 0 },
	{ "bad-icmp-csum-stays-bad", 1, B_ECHO_A, { X2(O_ICMP_SUM, 0x00ff) }, 0, 0, 0,
	  PASS(DP_TO_WORLD), 0 },
	{ "bad-csum-host-path", 3, B_SYN_H, { X2(O_TCP_SUM, 0x8000) }, 0, 0, 0,
	  PASS(DP_TO_SANDBOX), 0 },
	/* Addresses */
	{ "src-ip-is-node-ip", 0, B_SYN_W, { P4(O_SADDR, 0xc6120001) }, 0, 0, F_FIX_IP | F_FIX_L4,
	  DROP(BAD_SOURCE), 0 },
	{ "src-ip-is-guest-ip-world", 0, B_SYN_W, { P4(O_SADDR, 0xa9fe4406) }, 0, 0,
	  F_FIX_IP | F_FIX_L4, DROP(BAD_SOURCE), 0 },
	{ "src-ip-broadcast", 0, B_SYN_W, { P4(O_SADDR, 0xffffffff) }, 0, 0, F_FIX_IP | F_FIX_L4,
	  DROP(BAD_SOURCE), 0 },
	{ "src-ip-multicast", 0, B_SYN_W, { P4(O_SADDR, 0xe0000001) }, 0, 0, F_FIX_IP | F_FIX_L4,
	  DROP(BAD_SOURCE), 0 },
	{ "src-ip-loopback", 0, B_SYN_W, { P4(O_SADDR, 0x7f000001) }, 0, 0, F_FIX_IP | F_FIX_L4,
	  DROP(BAD_SOURCE), 0 },
	{ "src-ip-zero", 0, B_SYN_W, { P4(O_SADDR, 0) }, 0, 0, F_FIX_IP | F_FIX_L4,
	  DROP(BAD_SOURCE), 0 },
	{ "sandbox-src-not-guest-ip", 1, B_UDP_A, { P4(O_SADDR, 0xc6120002) }, 0, 0,
	  F_FIX_IP | F_FIX_L4, DROP(GUEST_SPOOF), 0 },
	{ "sandbox-src-node-ip", 1, B_SYN_A, { P4(O_SADDR, 0xc6120001) }, 0, 0,
	  F_FIX_IP | F_FIX_L4, DROP(GUEST_SPOOF), 0 },
	{ "sandbox-src-loopback", 2, B_UDP_B, { P4(O_SADDR, 0x7f000001) }, 0, 0,
	  F_FIX_IP | F_FIX_L4, DROP(BAD_SOURCE), 0 },
	{ "dst-ip-broadcast-world", 0, B_SYN_W, { P4(O_DADDR, 0xffffffff) }, 0, 0,
	  F_FIX_IP | F_FIX_L4, DROP(NOT_NODE_IP), 0 },
	{ "dst-not-sandbox-host", 3, B_SYN_H, { P4(O_DADDR, 0xc0a80032) }, 0, 0,
	  F_FIX_IP | F_FIX_L4, DROP(NOT_SANDBOX_IP), 0 },
	/* Protocols */
	{ "proto-gre-world", 0, B_SYN_W, { P1(O_PROTO, 47) }, 0, 0, F_FIX_IP, DROP(PROTO), 0 },
	{ "proto-sctp-sandbox", 1, B_SYN_A, { P1(O_PROTO, 132) }, 0, 0, F_FIX_IP, DROP(PROTO),
	  0 },
	{ "proto-ipip-host", 3, B_SYN_H, { P1(O_PROTO, 4) }, 0, 0, F_FIX_IP, DROP(PROTO), 0 },
	/* TCP */
	{ "tcp-truncated", 0, B_SYN_W, { P2(O_TOTLEN, 30) }, 44, 0, F_FIX_IP, DROP(L4_HEADER),
	  0 },
	{ "tcp-doff-4", 0, B_SYN_W, { P1(O_TCP_DOFF, 0x40) }, 0, 0, 0, DROP(L4_HEADER), 0 },
	{ "tcp-doff-beyond-segment", 1, B_SYN_A, { P1(O_TCP_DOFF, 0xf0) }, 0, 0, 0,
	  DROP(L4_HEADER), 0 },
	{ "tcp-syn-fin", 0, B_SYN_W, { P1(O_TCP_FLAGS, 0x03) }, 0, 0, F_FIX_L4,
	  DROP(NO_SESSION), 0 },
	{ "tcp-syn-rst", 0, B_SYN_W, { P1(O_TCP_FLAGS, 0x06) }, 0, 0, F_FIX_L4,
	  DROP(NO_SESSION), 0 },
	{ "tcp-no-flags-new", 0, B_SYN_W, { P1(O_TCP_FLAGS, 0x00) }, 0, 0, F_FIX_L4,
	  DROP(NO_SESSION), 0 },
	{ "tcp-all-flags-new", 0, B_SYN_W, { P1(O_TCP_FLAGS, 0xff) }, 0, 0, F_FIX_L4,
	  DROP(NO_SESSION), 0 },
	{ "tcp-syn-fin-egress", 1, B_SYN_A, { P1(O_TCP_FLAGS, 0x03) }, 0, 0, F_FIX_L4,
	  DROP(EGRESS_PROTO), 0 },
	{ "tcp-no-flags-established", 0, B_EST_W, { P1(O_TCP_FLAGS, 0x00) }, 0, 0,
	  F_FIX_L4, PASS(DP_TO_SANDBOX), 0 },
	{ "tcp-all-flags-established", 0, B_EST_W, { P1(O_TCP_FLAGS, 0xff) }, 0, 0,
	  F_FIX_L4 | F_FLOW, DROP(TCP_RST_WINDOW), 0 },
	{ "tcp-window-zero", 0, B_SYN_W, { P2(O_TCP_WIN, 0) }, 0, 0, F_FIX_L4,
	  PASS(DP_TO_SANDBOX), 0 },
	{ "tcp-window-max", 1, B_SYN_A, { P2(O_TCP_WIN, 0xffff) }, 0, 0, F_FIX_L4,
	  PASS(DP_TO_WORLD), 0 },
	{ "tcp-syn-unexposed-port", 0, B_SYN_W, { P2(O_L4 + 2, 20999) }, 0, 0, F_FIX_L4,
	  DROP(NO_HOSTPORT), 0 },
	{ "tcp-policy-denied-rst", 2, B_SYN_B, {{0}}, 0, 0, 0, PASS(DP_BACK), 54 },
	{ "tcp-to-gateway-ip", 1, B_SYN_A, { P4(O_DADDR, 0xa9fe4405) }, 0, 0, F_FIX_IP | F_FIX_L4,
	  DROP(GATEWAY_DENIED), 0 },
	{ "tcp-4000-byte-frame", 0, B_BIG_W, {{0}}, 0, 0, 0, PASS(DP_TO_SANDBOX), 4054 },
	/* TCP window tracking: blind segments at sequence numbers far from the flow's */
	{ "tcp-data-far-outside-window", 0, B_EST_W, { P4(O_TCP_SEQ, 1000 + 0x80000000u) }, 0, 0,
	  F_FIX_L4, DROP(TCP_WINDOW), 0 },
	{ "tcp-data-behind-window", 0, B_EST_W, { P4(O_TCP_SEQ, 1000 - 0x20000000u) }, 0, 0,
	  F_FIX_L4, DROP(TCP_WINDOW), 0 },
	{ "tcp-ack-of-unsent-data", 0, B_EST_W, { P4(O_TCP_ACK, 0x40000000u) }, 0, 0, F_FIX_L4,
	  DROP(TCP_WINDOW), 0 },
	{ "tcp-fin-far-outside-window", 0, B_EST_W,
	  { P4(O_TCP_SEQ, 0x9000000u), P1(O_TCP_FLAGS, TCPF_FIN | TCPF_ACK) }, 0, 0, F_FIX_L4,
	  DROP(TCP_WINDOW), 0 },
	{ "tcp-reply-far-outside-window", 1, B_EST_A, { P4(O_TCP_SEQ, 0x7fff0000u) }, 0, 0,
	  F_FIX_L4, DROP(TCP_WINDOW), 0 },
	{ "tcp-reply-in-window", 1, B_EST_A, {{0}}, 0, 0, 0, PASS(DP_TO_WORLD), 58 },
	{ "tcp-rst-far-outside-window", 0, B_EST_W,
	  { P4(O_TCP_SEQ, 1001 + 0x80000000u), P1(O_TCP_FLAGS, TCPF_RST) }, 0, 0, F_FIX_L4,
	  DROP(TCP_RST_WINDOW), 0 },
	{ "tcp-rst-ack-outside-window", 1, B_EST_A,
	  { P4(O_TCP_SEQ, 0x40001000u), P1(O_TCP_FLAGS, TCPF_RST | TCPF_ACK) }, 0, 0, F_FIX_L4,
	  DROP(TCP_RST_WINDOW), 0 },
	{ "tcp-rst-before-receivers-ack", 0, B_EST_W, { P1(O_TCP_FLAGS, TCPF_RST) }, 0, 0,
	  F_FIX_L4, DROP(TCP_RST_WINDOW), 0 },
	{ "tcp-rst-in-window-state-kept", 0, B_EST_W,
	  { P4(O_TCP_SEQ, 1001 + 3000), P1(O_TCP_FLAGS, TCPF_RST) }, 0, 0, F_FIX_L4,
	  PASS(DP_TO_SANDBOX), 0 },
	{ "tcp-synack-acking-unsent", 0, B_EGR_W, { P4(O_TCP_ACK, 0x12345678u) }, 0, 0, F_FIX_L4,
	  DROP(TCP_WINDOW), 0 },
	{ "tcp-refusal-rst-without-ack", 0, B_EGR_W, { P1(O_TCP_FLAGS, TCPF_RST) }, 0, 0,
	  F_FIX_L4, DROP(TCP_RST_WINDOW), 0 },
	{ "tcp-refusal-rst-acking-wrong", 0, B_EGR_W,
	  { P4(O_TCP_ACK, 1005), P1(O_TCP_FLAGS, TCPF_RST | TCPF_ACK) }, 0, 0, F_FIX_L4,
	  DROP(TCP_RST_WINDOW), 0 },
	{ "tcp-synack-answering-egress", 0, B_EGR_W, {{0}}, 0, 0, F_FLOW, PASS(DP_TO_SANDBOX), 54 },
	/* UDP */
	{ "udp-truncated", 1, B_UDP_A, { P2(O_TOTLEN, 24) }, 38, 0, F_FIX_IP, DROP(L4_HEADER),
	  0 },
	{ "udp-world-no-session", 0, B_SYN_W, { P1(O_PROTO, 17) }, 0, 0, F_FIX_IP | F_FIX_L4,
	  DROP(NO_SESSION), 0 },
	{ "udp-policy-denied", 2, B_UDP_B, {{0}}, 0, 0, 0, DROP(POLICY_DENIED), 0 },
	/* ICMP */
	{ "icmp-truncated", 1, B_ECHO_A, { P2(O_TOTLEN, 24) }, 38, 0, F_FIX_IP,
	  DROP(L4_HEADER), 0 },
	{ "icmp-echo-reply-unsolicited", 1, B_ECHO_A, { P1(O_ICMP_TYPE, 0) }, 0, 0, F_FIX_L4,
	  DROP(EGRESS_PROTO), 0 },
	{ "icmp-timestamp-egress", 1, B_ECHO_A, { P1(O_ICMP_TYPE, 13) }, 0, 0, F_FIX_L4,
	  DROP(EGRESS_PROTO), 0 },
	{ "icmp-error-tracked", 0, B_ICMPERR_W, {{0}}, 0, 0, 0, PASS(DP_TO_SANDBOX), 70 },
	{ "icmp-error-bad-csum-stays-bad", 0, B_ICMPERR_W, { X2(O_ICMP_SUM, 0x0110) }, 0, 0, 0,
	  PASS(DP_TO_SANDBOX), 70 },
	{ "icmp-error-quote-truncated", 0, B_ICMPERR_W, { P2(O_TOTLEN, 38) }, 52, 0, F_FIX_IP,
	  DROP(L4_HEADER), 0 },
	{ "icmp-error-quote-ihl-15", 0, B_ICMPERR_W, { P1(O_Q, 0x4f) }, 0, 0, F_FIX_L4,
	  DROP(L4_HEADER), 0 },
	{ "icmp-error-quote-not-ipv4", 0, B_ICMPERR_W, { P1(O_Q, 0x65) }, 0, 0, F_FIX_L4,
	  DROP(L4_HEADER), 0 },
	{ "icmp-error-foreign-flow", 0, B_ICMPERR_W, { P2(O_Q + 22, 81) }, 0, 0, F_FIX_L4,
	  DROP(ICMP_NO_FLOW), 0 },
	{ "icmp-error-quote-gre", 0, B_ICMPERR_W, { P1(O_Q + 9, 47) }, 0, 0, F_FIX_L4,
	  DROP(ICMP_NO_FLOW), 0 },
	/* ARP */
	{ "arp-request-answered", 1, B_ARP_A, {{0}}, 0, 0, 0, PASS(DP_BACK), 42 },
	{ "arp-short", 1, B_ARP_A, {{0}}, 34, 0, 0, DROP(ARP), 0 },
	{ "arp-hlen-8", 1, B_ARP_A, { P1(O_ARP + 4, 8) }, 0, 0, 0, DROP(ARP), 0 },
	{ "arp-plen-16", 1, B_ARP_A, { P1(O_ARP + 5, 16) }, 0, 0, 0, DROP(ARP), 0 },
	{ "arp-reply-unsolicited", 2, B_ARP_A, { P2(O_ARP + 6, 2) }, 0, 0, 0, DROP(ARP), 0 },
	{ "arp-on-world", 0, B_ARP_A, {{0}}, 0, 0, 0, DROP(ARP), 0 },
	{ "arp-host-outside-cidr", 3, B_ARP_H, { P4(O_ARP + 24, 0xc6120009) }, 0, 0, 0,
	  DROP(ARP), 0 },
	{ "arp-host-for-sandbox", 3, B_ARP_H, {{0}}, 0, 0, 0, PASS(DP_BACK), 42 },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void
csum_fix_ip(uint8_t *f)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);

	ip->check = 0;
	ip->check = (uint16_t)~csum_fold(csum_partial(ip, (ip->ver_ihl & 15) * 4u, 0));
}

static void
csum_fix_l4(uint8_t *f)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);
	uint32_t ihl = (ip->ver_ihl & 15) * 4u, len = ntohs(ip->tot_len) - ihl;
	uint8_t *l4 = f + 14 + ihl;

	if (ip->proto == IPPROTO_ICMP_) {
		struct icmp_hdr *ih = (struct icmp_hdr *)l4;

		ih->check = 0;
		ih->check = (uint16_t)~csum_fold(csum_partial(l4, len, 0));
	} else if (ip->proto == IPPROTO_TCP_) {
		((struct tcp_hdr *)l4)->check = 0;
		((struct tcp_hdr *)l4)->check = l4_csum(f + 14);
	} else if (ip->proto == IPPROTO_UDP_) {
		struct udp_hdr *uh = (struct udp_hdr *)l4;

		uh->len = htons((uint16_t)len);
		uh->check = 0;
		uh->check = l4_csum(f + 14);
		if (!uh->check)
			uh->check = 0xffff;
	}
}

static uint32_t
build_arp(uint8_t *f, uint32_t spa, uint32_t tpa)
{
	static const uint8_t gm[6] = { 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc };
	struct eth_hdr *eth = (struct eth_hdr *)f;
	struct arp_hdr *a = (struct arp_hdr *)(f + 14);

	memset(f, 0, 60);
	memset(eth->dst, 0xff, 6);
	memcpy(eth->src, gm, 6);
	eth->type = htons(ETHTYPE_ARP);
	a->htype = htons(1);
	a->ptype = htons(ETHTYPE_IPV4);
	a->hlen = 6;
	a->plen = 4;
	a->op = htons(1);
	memcpy(a->sha, gm, 6);
	a->spa = spa;
	a->tpa = tpa;
	return 60;
}

/* The frame of a base kind; returns its length. */
static uint32_t
base_build(const struct dpbed *b, enum base k, uint8_t *f)
{
	const struct dp_cfg *c = &b->cfg;
	uint32_t n;

	switch (k) {
	case B_SYN_W:
		return build_frame(f, IPPROTO_TCP_, b->client, c->node_ip, htons(40001),
				   htons(BED_HP_A), TCPF_SYN, 0);
	case B_EST_W:
		return build_frame(f, IPPROTO_TCP_, b->client, c->node_ip, htons(b->exp_sport),
				   htons(BED_HP_A), TCPF_ACK, 4);
	case B_BIG_W:
		return build_frame(f, IPPROTO_TCP_, b->client, c->node_ip, htons(b->exp_sport),
				   htons(BED_HP_A), TCPF_ACK, 4000);
	case B_SYN_OPT_W: {
		struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);

		n = build_frame(f, IPPROTO_TCP_, b->client, c->node_ip, htons(40001),
				htons(BED_HP_A), TCPF_SYN, 0);
		/* Make room for NOP NOP NOP EOL after the fixed header. */
		memmove(f + 38, f + 34, n - 34);
		f[34] = 1;
		f[35] = 1;
		f[36] = 1;
		f[37] = 0;
		ip->ver_ihl = 0x46;
		ip->tot_len = htons((uint16_t)(n - 14 + 4));
		csum_fix_ip(f);
		csum_fix_l4(f);
		return n + 4;
	}
	case B_EST_A:
		return build_frame(f, IPPROTO_TCP_, c->guest_ip, b->client, htons(8080),
				   htons(b->exp_sport), TCPF_ACK, 4);
	case B_EGR_W: {
		/* The egress SYN of A went out with seq 1000: this acks it. */
		struct tcp_hdr *th = (struct tcp_hdr *)(f + O_L4);

		n = build_frame(f, IPPROTO_TCP_, b->remote, c->node_ip, htons(80),
				b->egress_snat, TCPF_SYN | TCPF_ACK, 0);
		memcpy(f + O_ETH_SRC, bed_router_mac, 6);
		th->seq = htonl(70000);
		th->ack = htonl(1001);
		csum_fix_l4(f);
		return n;
	}
	case B_UDP_A:
		return build_frame(f, IPPROTO_UDP_, c->guest_ip, b->client, htons(6000), htons(53),
				   0, 12);
	case B_UDP_B:
		return build_frame(f, IPPROTO_UDP_, c->guest_ip, b->remote, htons(6000), htons(53),
				   0, 12);
	case B_SYN_A:
		return build_frame(f, IPPROTO_TCP_, c->guest_ip, b->remote, htons(51000),
				   htons(80), TCPF_SYN, 0);
	case B_SYN_B:
		return build_frame(f, IPPROTO_TCP_, c->guest_ip, b->remote, htons(51000),
				   htons(80), TCPF_SYN, 0);
	case B_ECHO_A:
		return build_frame(f, IPPROTO_ICMP_, c->guest_ip, b->client, htons(99), 0, 0, 16);
	case B_SYN_H:
		return build_frame(f, IPPROTO_TCP_, c->host_ip, b->sbx_ip_a, htons(46000),
				   htons(8080), TCPF_SYN, 0);
	case B_ARP_A:
		return build_arp(f, c->guest_ip, c->gw_ip);
	case B_ARP_H:
		return build_arp(f, c->host_ip, b->sbx_ip_a);
	case B_ICMPERR_W: {
		/* Frag needed from a router on the path, quoting what the node sent. */
		struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14), *q;
		struct icmp_hdr *ih = (struct icmp_hdr *)(f + 34);
		struct tcp_hdr *qt;

		n = build_frame(f, IPPROTO_ICMP_, ip4("198.18.0.254"), c->node_ip, 0, 0, 0, 28);
		q = (struct ip4_hdr *)(f + O_Q);
		memset(q, 0, 28);
		q->ver_ihl = 0x45;
		q->tot_len = htons(1500);
		q->ttl = 63;
		q->proto = IPPROTO_TCP_;
		q->saddr = c->node_ip;
		q->daddr = b->remote;
		q->check = (uint16_t)~csum_fold(csum_partial(q, 20, 0));
		qt = (struct tcp_hdr *)(f + O_Q + 20);
		qt->sport = b->egress_snat;
		qt->dport = htons(80);
		qt->seq = htonl(1000);
		ih->type = 3;
		ih->code = 4;
		ih->id = 0;
		ih->seq = htons(1400);
		ip->tot_len = htons(20 + 8 + 28);
		csum_fix_ip(f);
		csum_fix_l4(f);
		return 14 + 20 + 8 + 28;
	}
	}
	return 0;
}

static uint32_t
row_build(const struct dpbed *b, const struct row *w, uint8_t *f)
{
	uint32_t n = base_build(b, w->base, f);
	int i;

	for (i = 0; i < 4 && w->p[i].width; i++) {
		const struct patch *p = &w->p[i];
		uint32_t v = p->val, k;

		for (k = 0; k < p->width; k++) {
			uint8_t byte = (uint8_t)(v >> (8 * (p->width - 1 - k)));

			f[p->off + k] = p->xor ? f[p->off + k] ^ byte : byte;
		}
	}
	if (w->flags & F_FIX_IP)
		csum_fix_ip(f);
	if (w->flags & F_FIX_L4)
		csum_fix_l4(f);
	if (w->pad) {
		memset(f + n, 0, w->pad);
		n += w->pad;
	}
	if (w->trunc && w->trunc < n)
		n = w->trunc;
	return n;
}

struct snap {
	struct ct_tuple t[2];
	uint8_t state;
};

static uint32_t
snap_take(const struct dpbed *b, struct snap *s, uint32_t max)
{
	const struct ct_table *ct = b->x.ct;
	uint32_t i, n = 0;

	for (i = 0; i < ct->hiwater && n < max; i++)
		if (ct->s[i].flags & CT_F_USED) {
			s[n].t[0] = ct->s[i].t[0];
			s[n].t[1] = ct->s[i].t[1];
			s[n].state = ct->s[i].state;
			n++;
		}
	return n;
}

static int fails;

#define ROW_FAIL(w, ...) do { \
	fails++; \
	fprintf(stderr, "not ok - %s: ", (w)->name); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
} while (0)

/* One row on a fresh bed; returns 0 when every expectation holds. */
static int
row_run(struct dpbed *b, const struct row *w)
{
	static uint8_t f[8192];
	struct snap before[64];
	struct cvs_stats st0;
	struct dp_result r;
	uint32_t n, i, nsnap, used0;
	int csum0, rc, f0 = fails;

	if ((rc = bed_reset(b))) {
		ROW_FAIL(w, "bed preload failed (%d)", rc);
		return -1;
	}
	n = row_build(b, w, f);
	nsnap = snap_take(b, before, 64);
	used0 = b->x.ct->used;
	st0 = b->st;
	csum0 = bed_csum_state(f, n);
	bed_rx(b, w->port, f, n, &r);

	if (r.action != w->action)
		ROW_FAIL(w, "action %d, expected %d (drop reason %s)", r.action, w->action,
			 r.action == DP_DROP ? cvs_drop_names[r.drop] : "-");
	if (w->action == DP_DROP && r.action == DP_DROP && r.drop != w->drop)
		ROW_FAIL(w, "dropped as %s, expected %s", cvs_drop_names[r.drop],
			 cvs_drop_names[w->drop]);
	if (r.action == DP_DROP) {
		for (i = 0; i < CVS_DROP_MAX; i++)
			if (b->st.drop[i] != st0.drop[i] + (i == r.drop ? 1 : 0))
				ROW_FAIL(w, "counter %s moved by %llu", cvs_drop_names[i],
					 (unsigned long long)(b->st.drop[i] - st0.drop[i]));
		if (b->x.ct->used != used0)
			ROW_FAIL(w, "a dropped frame changed the session count");
	}
	if (w->out_len && r.action != DP_DROP && r.len != w->out_len)
		ROW_FAIL(w, "output of %u bytes, expected %u", r.len, w->out_len);
	rc = bed_verdict_check(b, &r, f, n, csum0);
	if (rc)
		ROW_FAIL(w, "verdict check %d (105: checksum validity changed)", rc);
	for (i = 0; i < nsnap; i++) {
		int d;
		struct ct_session *s = ct_lookup(b->x.ct, &before[i].t[0], &d);

		if (!s || memcmp(&s->t[1], &before[i].t[1], sizeof(s->t[1]))) {
			if (!(w->flags & F_FLOW))
				ROW_FAIL(w, "preloaded flow %u is gone", i);
		} else if (s->state != before[i].state && !(w->flags & F_FLOW)) {
			ROW_FAIL(w, "preloaded flow %u changed state %u -> %u", i,
				 before[i].state, s->state);
		}
	}
	if (fails == f0)
		printf("ok - %s\n", w->name);
	return fails == f0 ? 0 : -1;
}

/* All rows back to back on one table: the established flow must still carry data. */
static void
rows_in_sequence(struct dpbed *b)
{
	static uint8_t f[8192];
	struct dp_result r;
	uint32_t i, n;
	int rc;

	if ((rc = bed_reset(b))) {
		fprintf(stderr, "not ok - sequence: preload %d\n", rc);
		fails++;
		return;
	}
	for (i = 0; i < NROWS; i++) {
		/* Rows that end the established flow on purpose are left out here. */
		if (rows[i].flags & F_FLOW)
			continue;
		n = row_build(b, &rows[i], f);
		bed_rx(b, rows[i].port, f, n, &r);
		rc = bed_ct_check(b);
		if (rc) {
			fprintf(stderr, "not ok - sequence: table broken after %s (%d)\n",
				rows[i].name, rc);
			fails++;
			return;
		}
	}
	n = build_frame(f, IPPROTO_TCP_, b->client, b->cfg.node_ip, htons(b->exp_sport),
			htons(BED_HP_A), TCPF_ACK | TCPF_PSH, 100);
	bed_rx(b, 0, f, n, &r);
	if (r.action != DP_TO_SANDBOX || r.slot != BED_SLOT_A || !frame_csums_ok(f)) {
		fprintf(stderr, "not ok - sequence: the established flow stopped working\n");
		fails++;
		return;
	}
	printf("ok - all rows in sequence, established flow intact\n");
}

/*
 * A SYN flood beyond capacity: half-open flows are evicted oldest first, every eviction is
 * counted, and the preloaded flows (established or replied) all survive.
 */
static void
flood_beyond_capacity(struct dpbed *b)
{
	struct snap before[64];
	uint32_t i, nsnap, created = 0;
	int rc, d;

	if ((rc = bed_reset(b))) {
		fprintf(stderr, "not ok - flood: preload %d\n", rc);
		fails++;
		return;
	}
	nsnap = snap_take(b, before, 64);
	for (i = 0; i < 2 * b->capacity; i++) {
		uint32_t src = htonl(0xc6120800u + i);

		if (bed_send(b, 0, IPPROTO_TCP_, src, b->cfg.node_ip, 1024, BED_HP_A, TCPF_SYN, 0,
			     NULL) == DP_TO_SANDBOX)
			created++;
	}
	rc = bed_ct_check(b);
	for (i = 0; i < nsnap; i++) {
		struct ct_session *s = ct_lookup(b->x.ct, &before[i].t[0], &d);

		/* Half-open preloaded flows may go; established and replied ones must not. */
		if (!s && (before[i].state == CT_TCP_ESTABLISHED ||
			   (before[i].t[0].proto == IPPROTO_UDP_ && before[i].state == CT_REPLIED)))
			rc = 10;
	}
	if (rc || b->x.ct->used != b->capacity ||
	    b->st.c[CVS_WC_SESS_EVICTED] + b->st.drop[CVS_DROP_TABLE_FULL] <
	    2 * b->capacity - (b->capacity - b->base_sessions)) {
		fprintf(stderr, "not ok - flood: check %d, used %u, evicted %llu, refused %llu\n",
			rc, b->x.ct->used, (unsigned long long)b->st.c[CVS_WC_SESS_EVICTED],
			(unsigned long long)b->st.drop[CVS_DROP_TABLE_FULL]);
		fails++;
		return;
	}
	printf("ok - SYN flood at twice the capacity: %u opened, %llu evicted (counted), "
	       "established flows kept\n", created,
	       (unsigned long long)b->st.c[CVS_WC_SESS_EVICTED]);
}

static int
rows_dump(struct dpbed *b, const char *dir)
{
	static uint8_t f[8192];
	char path[4096];
	uint32_t i, n;

	if (bed_reset(b))
		return 1;
	for (i = 0; i < NROWS; i++) {
		uint8_t hdr[3];
		FILE *out;

		n = row_build(b, &rows[i], f);
		snprintf(path, sizeof(path), "%s/%s", dir, rows[i].name);
		out = fopen(path, "wb");
		if (!out) {
			perror(path);
			return 1;
		}
		hdr[0] = (uint8_t)rows[i].port;
		hdr[1] = (uint8_t)(n >> 8);
		hdr[2] = (uint8_t)n;
		fwrite(hdr, 1, 3, out);
		fwrite(f, 1, n, out);
		fclose(out);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const char *const ports[] = { "world", "sandbox-a", "sandbox-b", "cube-dev" };
	static const char *const actions[] = { "drop", "to-world", "to-sandbox", "to-host",
					       "back" };
	static struct dpbed bed;
	uint32_t i;

	if (bed_init(&bed, 64))
		return 1;
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < NROWS; i++)
			printf("%-34s %-10s %-11s %s\n", rows[i].name, ports[rows[i].port],
			       actions[rows[i].action],
			       rows[i].action == DP_DROP ? cvs_drop_names[rows[i].drop] : "");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--dump"))
		return rows_dump(&bed, argv[2]) || ipv6_dump(&bed, argv[2]);
	for (i = 0; i < NROWS; i++)
		row_run(&bed, &rows[i]);
	rows_in_sequence(&bed);
	flood_beyond_capacity(&bed);
	fails += frag_sequences(&bed);
	fails += ipv6_sequences(&bed);
	printf("malformed catalogue: %zu rows, %d failed\n", NROWS, fails);
	bed_fini(&bed);
	return fails ? 1 : 0;
}
