/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every counter of the worker, declared once. The lists expand into the enums, the names shown
 * by the API and the help texts, so the names never drift between surfaces.
 */
#ifndef CVS_COUNTERS_H
#define CVS_COUNTERS_H

#include <stdint.h>

#include "frag.h"

/* Drop reasons: _(ENUM, "name", "help"). */
#define CVS_DROP_REASONS(_) \
	_(RUNT,			"runt",			"frame shorter than an Ethernet header") \
	_(ETHERTYPE,		"ethertype",		"ethertype other than IPv4, IPv6 or ARP") \
	_(IPV6,			"ipv6", \
	  "IPv6 packet: not translated yet (a dual-stack guest's neighbour and router solicitations and MLD reports count here)") \
	_(IP6_EXT,		"ip6_ext", \
	  "IPv6 extension header chain truncated, longer than 8 headers, or hop-by-hop not first") \
	_(IP_HEADER,		"ip_header",		"IP header truncated, bad version or IHL") \
	_(IP_LENGTH,		"ip_length",		"IP total or payload length beyond the frame or below the header") \
	_(FRAGMENT,		"fragment", \
	  "IPv4 fragment not carried: no fragment table, a first one whose data is not a multiple of 8 bytes, TCP at offset 8") \
	_(L4_HEADER,		"l4_header",		"TCP/UDP/ICMP header truncated or bad data offset") \
	_(PROTO,		"proto",		"IP protocol the fast path does not translate") \
	_(NOT_NODE_IP,		"not_node_ip",		"world frame not addressed to the node IP") \
	_(BAD_SOURCE,		"bad_source",		"source MAC or IPv4 no peer can have") \
	_(NO_HOSTPORT,		"no_hostport",		"TCP to a port that no sandbox exposes") \
	_(NO_SESSION,		"no_session",		"segment that matches no session and opens none") \
	_(TABLE_FULL,		"table_full",		"session table full: new flow refused") \
	_(TUPLE_CLASH,		"tuple_clash",		"new flow whose reply tuple is already in use") \
	_(SANDBOX_GONE,		"sandbox_gone",		"session points at a sandbox being removed") \
	_(ARP,			"arp",			"ARP frame that is not an IPv4 request") \
	_(POLICY_DENIED,	"policy_denied",	"egress denied by the sandbox's policy") \
	_(POLICY_CUT,		"policy_cut",		"packet of a flow that a policy change now denies") \
	_(NO_NEIGHBOUR,		"no_neighbour",		"next hop MAC not known yet (resolution requested)") \
	_(SNAT_EXHAUSTED,	"snat_exhausted",	"no free SNAT port for the remote endpoint") \
	_(GATEWAY_DENIED,	"gateway_denied",	"guest packet to the gateway address that may not open") \
	_(NOT_SANDBOX_IP,	"not_sandbox_ip",	"host frame to an address that is no sandbox") \
	_(ICMP_NO_FLOW,		"icmp_no_flow",		"ICMP error quoting a packet of no tracked flow") \
	_(GUEST_SPOOF,		"guest_spoof",		"guest frame whose source is not the guest address") \
	_(EGRESS_PROTO,		"egress_proto",		"guest packet that cannot open a flow (non-SYN TCP, ICMP other than echo)") \
	_(TOO_BIG,		"too_big",		"frame larger than an output buffer") \
	_(TX_FULL,		"tx_full",		"output ring or queue full") \
	_(NO_BUFFER,		"no_buffer",		"no free mbuf or UMEM frame for output") \
	_(HANDOFF_FULL,		"handoff_full",		"another worker's inbox was full") \
	_(TCP_WINDOW,		"tcp_window", \
	  "TCP segment outside the tracked window (blind injection, lost state): session unchanged") \
	_(TCP_RST_WINDOW,	"tcp_rst_window", \
	  "TCP RST outside the window or before the receiver's ack: session unchanged") \
	_(VHOST_DOWN,		"vhost_down",		"frame for a vhost-user sandbox whose VMM is not connected") \
	_(LIMIT_SESSIONS,	"limit_sessions", \
	  "new flow of a sandbox that holds its maximum of sessions it opened") \
	_(LIMIT_RATE,		"limit_rate", \
	  "new flow of a sandbox beyond its new-sessions-per-second token bucket") \
	_(LIMIT_SNAT,		"limit_snat_ports", \
	  "new flow of a sandbox that holds its maximum of SNAT ports towards that endpoint") \
	_(LIMIT_INBOUND,	"limit_inbound", \
	  "new flow towards a sandbox that holds its maximum of inbound sessions") \
	FRAG_REASONS(_)

/* The fragment table's reasons are the last of the list, in its order (frag.h). */
#define CVS_DROP_FRAG_BASE	CVS_DROP_NO_CONTEXT

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
	_(ARP_REPLIES,		"arp_replies",		"ARP requests answered (guests and cube-dev)") \
	_(HOST_RX_PKTS,		"host_rx_packets",	"frames received from cube-dev") \
	_(HOST_RX_BYTES,	"host_rx_bytes",	"bytes received from cube-dev") \
	_(HOST_TX_PKTS,		"host_tx_packets",	"frames sent to cube-dev") \
	_(HOST_TX_BYTES,	"host_tx_bytes",	"bytes sent to cube-dev") \
	_(EGRESS_FLOWS,		"egress_flows",		"sandbox flows to the world opened (SNAT)") \
	_(EGRESS6_FLOWS,	"egress6_flows",	"sandbox IPv6 flows to the world opened (NAT66)") \
	_(IPV6_PKTS,		"ipv6_packets", \
	  "IPv6 frames the pipelines took, from either side (with --node-ip6)") \
	_(NDP_ANSWERED,		"ndp_answered", \
	  "guests' neighbour solicitations for their gateway and router solicitations answered") \
	_(HAIRPIN_FLOWS,	"hairpin_flows",	"sandbox flows to a host port of this node (SNAT+DNAT)") \
	_(HOSTPORT6_FLOWS,	"hostport6_flows", \
	  "world IPv6 flows opened to a host port of the node's IPv6 address (DNAT66)") \
	_(HAIRPIN6_FLOWS,	"hairpin6_flows", \
	  "sandbox IPv6 flows to a host port of the node's IPv6 address (NAT66 both ways)") \
	_(GUEST6_LEARNT,	"guest6_learnt", \
	  "a guest's IPv6 address learnt (or changed) from its own frames") \
	_(HOST_FLOWS,		"host_flows",		"flows between cube-dev and a sandbox") \
	_(ICMP_ERRORS,		"icmp_errors",		"ICMP errors translated for a tracked flow") \
	_(RST_SENT,		"rst_sent",		"TCP resets sent into a guest for a denied SYN") \
	_(NH_REQUESTS,		"nh_requests",		"next-hop resolutions asked of the control thread") \
	_(NH_PARKED,		"nh_parked",		"frames held while their next hop was resolved") \
	_(PORT_REUSE,		"port_reuse",		"SYN reusing a closed tuple: fresh session") \
	_(SNAT_TAKEOVERS,	"snat_takeovers", \
	  "new TCP flow given the SNAT port of a closed session towards its endpoint (none free)") \
	_(SESS_CREATED,		"sessions_created",	"sessions created") \
	_(SESS_EXPIRED,		"sessions_expired",	"sessions removed by timeout") \
	_(SESS_EVICTED,		"sessions_evicted",	"not-established sessions evicted by a new flow") \
	_(SESS_FLUSHED,		"sessions_flushed",	"sessions removed with their sandbox") \
	_(TCP_INVALID,		"tcp_invalid",		"TCP segments with an invalid or ignored transition") \
	_(TCP_RST_INEXACT,	"tcp_rst_inexact", \
	  "TCP RST inside the window but not at the expected sequence: forwarded, state kept") \
	_(HANDOFFS,		"handoffs",		"frames handed to the worker that owns their flow") \
	_(POLLS_BUSY,		"polls_busy",		"worker loop iterations that moved packets") \
	_(POLLS_IDLE,		"polls_idle",		"worker loop iterations without packets") \
	_(BUSY_CYCLES, "busy_cycles", "TSC cycles spent in iterations that moved packets") \
	_(PIPE_CYCLES, "pipeline_cycles", \
	  "TSC cycles inside the burst pipeline (parse, conntrack, NAT, Ethernet), I/O excluded") \
	_(PIPE_PKTS, "pipeline_packets", "frames that went through the burst pipeline") \
	_(SBX_TX_RING_FULL, "sandbox_tx_ring_full", \
	  "sandbox TX ring or UMEM frames exhausted at the first try") \
	_(SBX_FILL_SHORT, "sandbox_fill_short", "sandbox fill ring lacked room for received frames") \
	_(FUNNEL_PRESSED, "funnel_pressed", \
	  "times the funnel ring passed half full: sandboxes held to their share from then on") \
	_(FUNNEL_RELIEVED, "funnel_relieved", "times the funnel ring drained again: shares lifted") \
	_(MSS_CLAMPED, "mss_clamped", \
	  "TCP SYNs whose MSS was lowered to what the path between their two ports carries") \
	_(FRAG_NEEDED, "frag_needed_sent", \
	  "ICMP fragmentation-needed sent back for a DF datagram larger than its exit's MTU") \
	_(FRAGMENTED, "fragmented", \
	  "datagrams without DF larger than their exit's MTU, sent on in fragments") \
	_(FRAG_DATAGRAMS, "frag_datagrams", \
	  "fragmented datagrams tracked (their first fragment's translation kept)") \
	_(FRAG_HELD, "frag_held", "fragments held until their datagram's first fragment came") \
	_(FRAG_RELEASED, "frag_released", "held fragments sent on once their first fragment came") \
	_(FRAG_FORWARDED, "frag_forwarded", "fragments after the first translated as they came") \
	_(FRAG_TO_KERNEL, "frag_to_kernel", \
	  "world fragments held ahead of a first fragment that went to the kernel, given to it through cube-dev") \
	_(FRAG_HANDED_OVER, "frag_handed_over", \
	  "fragments held ahead of a first fragment that went to another worker, sent after it there") \
	_(CSUM_COMPLETED, "csum_completed", \
	  "TCP/UDP segments whose partial checksum (a sender's checksum offload) was completed") \
	_(FRAMES_COPIED, "frames_copied", \
	  "frames the worker copied from one buffer into another (an mbuf, a UMEM frame, a guest buffer, a parked slot)")

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

/* Per sandbox port: _(ENUM, "name", "help"). Indexed by slot, reset when a slot is reused. */
#define CVS_PORT_COUNTERS(_) \
	_(RX_PKTS,	"rx_packets",	"frames received from the sandbox") \
	_(RX_BYTES,	"rx_bytes",	"bytes received from the sandbox") \
	_(TX_PKTS,	"tx_packets",	"frames sent to the sandbox") \
	_(TX_BYTES,	"tx_bytes",	"bytes sent to the sandbox") \
	_(MAC_MISMATCH,	"guest_mac_mismatch", \
	  "frames from the sandbox whose source MAC is not its guest MAC (frames to it are lost)") \
	_(LIM_SESSIONS,	"limit_sessions", "new flows refused: the sandbox's session limit") \
	_(LIM_RATE,	"limit_rate", "new flows refused: the sandbox's new-sessions-per-second") \
	_(LIM_SNAT,	"limit_snat_ports", \
	  "new flows refused: the sandbox's SNAT ports towards one endpoint") \
	_(LIM_INBOUND,	"limit_inbound", "new flows towards the sandbox refused: its inbound limit") \
	_(SNAT_TAKEOVERS, "snat_takeovers", \
	  "new TCP flows of the sandbox given the SNAT port of a closed session (none free)") \
	_(MTU_EXCEEDED,	"mtu_exceeded", \
	  "frames from or to the sandbox larger than their exit's MTU (answered with fragmentation-needed, or fragmented)") \
	_(POLICED,	"funnel_policed", \
	  "frames of the sandbox dropped beyond its share while its funnel was under pressure")

enum cvs_pcounter {
#define CVS_PC_ENUM(n, s, h) CVS_PC_##n,
	CVS_PORT_COUNTERS(CVS_PC_ENUM)
#undef CVS_PC_ENUM
	CVS_PC_MAX
};

struct cvs_port_stats {
	uint64_t c[CVS_PC_MAX];
};

extern const char *const cvs_drop_names[CVS_DROP_MAX];
extern const char *const cvs_wcounter_names[CVS_WC_MAX];
extern const char *const cvs_wcounter_help[CVS_WC_MAX];
extern const char *const cvs_drop_help[CVS_DROP_MAX];
extern const char *const cvs_pcounter_names[CVS_PC_MAX];
extern const char *const cvs_pcounter_help[CVS_PC_MAX];

#endif /* CVS_COUNTERS_H */
