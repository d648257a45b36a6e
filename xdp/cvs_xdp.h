/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The contract between the XDP programs and cubevs-fp: map names, keys, values and the ids of
 * the per-CPU verdict counters. Included by both the BPF side (clang -target bpf) and the user
 * side, so it uses only fixed-width kernel types.
 */
#ifndef CVS_XDP_H
#define CVS_XDP_H

#include <linux/types.h>

/* Map names, as the user side finds them through the attached program's map ids. */
#define CVS_MAP_XSKS		"xsks_map"	/* name required by DPDK's net_af_xdp xdp_prog= */
#define CVS_MAP_STEER		"cvs_steer"
#define CVS_MAP_CFG		"cvs_cfg"
#define CVS_MAP_CFG6		"cvs_cfg6"
#define CVS_MAP_FRAG		"cvs_frag"
#define CVS_MAP_STATS		"cvs_stats"
#define CVS_MAP_SBX_IF		"cvs_sbx_if"
#define CVS_MAP_SBX_OUT		"cvs_sbx_out"
#define CVS_MAP_FUN_DEV		"cvs_fun_dev"
#define CVS_MAP_FUN_IFX		"cvs_fun_ifx"
#define CVS_MAP_FUN_XSKS	"cvs_fun_xsks"
#define CVS_MAP_FUN_PRESS	"cvs_fun_press"
#define CVS_MAP_SBX_POL		"cvs_sbx_pol"
#define CVS_MAP_SBX_GSO		"cvs_gso_mtu"

/* Program names: how a stale program of ours is recognised on an interface. */
#define CVS_PROG_STEER		"cvs_steer_prog"
#define CVS_PROG_SBX		"cvs_sbx_prog"
#define CVS_PROG_FUN_IN		"cvs_fun_in"
#define CVS_PROG_FUN_OUT	"cvs_fun_out"
#define CVS_PROG_SBX_GSO	"cvs_sbx_gso"

#define CVS_XSKS_MAX		64	/* queues of the world interface */
#define CVS_STEER_MAX		65536	/* one entry per (proto, host port) */
#define CVS_FRAG_MAX		16384	/* datagrams whose later fragments follow their first */
/* cvs_frag's values: where a datagram's first fragment went. */
#define CVS_FRAG_OURS		1
#define CVS_FRAG_KERNELS	2

#define CVS_FUN_MAX		64	/* workers, each with one funnel */

/*
 * The funnel (docs/datapath.md, "One socket per worker"): the sandbox program prepends this
 * header to every guest frame and redirects it into the funnel veth of the slot's worker, whose
 * program hands it to that worker's one AF_XDP socket. The guest's frame stays whole behind it.
 */
#define CVS_FUN_MAGIC		0xcf5b
#define CVS_FUN_F_MAC_MISMATCH	0x1	/* source MAC is not the registered guest MAC */

struct cvs_fun_hdr {
	__u16 magic;		/* CVS_FUN_MAGIC, network order */
	__u8 worker;
	__u8 flags;
	__u32 slot;
};

/*
 * Towards a sandbox the worker stamps the destination MAC instead (the guest's MAC is known
 * per slot): 0xfe, 0xcf, then the slot in network order. The program on the funnel's near end
 * puts the guest MAC back and redirects the frame to the slot's interface.
 */
#define CVS_FUN_STAMP0		0xfe
#define CVS_FUN_STAMP1		0xcf

/* Value of cvs_sbx_if, keyed by the ifindex of a sandbox interface. */
struct cvs_sbx_if {
	__u32 slot;
	__u32 worker;
	__u8 mac[6];		/* the registered guest MAC */
	__u16 gen;		/* the process that wrote it: a restart prunes the others' */
};

/* Value of cvs_sbx_out, indexed by slot: where frames for that sandbox go. */
struct cvs_sbx_out {
	__u32 ifindex;		/* 0: no sandbox in the slot */
	__u8 mac[6];
	__u16 pad;
};

/*
 * Value of cvs_sbx_pol, indexed by slot. While its worker's funnel ring is under pressure
 * (cvs_fun_press, written by the worker), a sandbox may put at most CVS_POL_FRAMES frames per
 * CVS_POL_WINDOW_NS into it, so one flooding sandbox cannot fill the ring the others need;
 * without pressure nothing is limited. 'dropped' is that sandbox's excess.
 */
#define CVS_POL_WINDOW_NS	1000000ull
#define CVS_POL_FRAMES		64u

struct cvs_sbx_pol {
	__u64 window;		/* start of the current window, ns */
	__u32 used;
	__u32 pad;
	__u64 dropped;
};

/* Key of cvs_frag: a fragmented datagram from the world (the node is its destination). */
struct cvs_frag_key {
	__u32 saddr;
	__u16 id;
	__u8 proto;
	__u8 pad;
};

/* Key of cvs_steer: a destination port (network order) and an IP protocol. */
struct cvs_steer_key {
	__u16 port;
	__u8 proto;
	__u8 pad;
};

/*
 * Value of cvs_cfg[0]. Ports in host order; node_ip in network order. heartbeat_ns is written
 * by the running cubevs-fp (CLOCK_BOOTTIME, what bpf_ktime_get_boot_ns() reads): while no
 * socket is bound and the last heartbeat is younger than grace_ns, frames of the fast path are
 * dropped and counted instead of going to the kernel, which would reset their connections.
 */
struct cvs_xdp_cfg {
	__u32 node_ip;
	__u16 snat_lo;
	__u16 snat_hi;
	__u32 flags;
	__u32 pad;
	__u64 heartbeat_ns;
	__u64 grace_ns;
};

#define CVS_CFG_F_ENABLED	0x1u	/* node_ip is valid; until then everything passes */

/*
 * Value of cvs_cfg6[0], the IPv6 side (--node-ip6): a map of its own, so that cvs_cfg keeps
 * the layout a hand-over from an older build reuses. The SNAT range, the heartbeat and the
 * grace are cvs_cfg's: one range serves both families. Without CVS_CFG6_F_ENABLED every IPv6
 * frame goes to the kernel.
 */
struct cvs_xdp_cfg6 {
	__u32 node_ip6[4];	/* network order */
	__u32 flags;
	__u32 pad;
};

#define CVS_CFG6_F_ENABLED	0x1u

/*
 * Verdict counters of both programs, one per-CPU array each (cvs_verdict.bpf.h defines it).
 * New ones go at the end: a hand-over copies the counters by id from the build before.
 */
#define CVS_XDP_COUNTERS(_) \
	_(PASS_OTHER,		"pass_other",		"not for the fast path, to the kernel") \
	_(PASS_NOT_NODE,	"pass_not_node",	"IPv4 not addressed to the node IP") \
	_(PASS_FRAGMENT,	"pass_fragment", \
	  "IPv4 fragment of a datagram whose first fragment was not ours") \
	_(PASS_NO_SOCKET,	"pass_no_socket",	"steered, but no AF_XDP socket bound") \
	_(REDIRECT_HOSTPORT,	"redirect_hostport",	"TCP to a registered host port") \
	_(REDIRECT_SNAT,	"redirect_snat",	"TCP/UDP/ICMP reply into the SNAT range") \
	_(REDIRECT_ICMP_ERROR,	"redirect_icmp_error",	"ICMP error about a flow of ours") \
	_(SBX_REDIRECT,		"sbx_redirect",		"sandbox frame into its worker's funnel") \
	_(SBX_NO_SOCKET,	"sbx_no_socket",	"sandbox frame dropped, interface not ours") \
	_(GAP_DROP,		"gap_drop",		"steered within the restart grace, or a sandbox " \
						"frame, while no socket is bound") \
	_(SBX_POLICED,		"sbx_policed",		"sandbox frame over its share of a funnel " \
						"under pressure") \
	_(FUN_FOREIGN,		"fun_foreign",		"frame on a funnel without our header") \
	_(FUN_TO_SANDBOX,	"fun_to_sandbox",	"worker frame sent on to its sandbox") \
	_(FUN_NO_SANDBOX,	"fun_no_sandbox",	"worker frame for a slot without interface") \
	_(REDIRECT_FRAGMENT,	"redirect_fragment", \
	  "IPv4 fragment of a datagram whose first fragment was steered to us") \
	_(SBX_TOO_BIG,		"sbx_too_big", \
	  "sandbox frame longer than the funnel carries (a TAP's TSO frame): dropped") \
	_(REDIRECT_FRAGMENT_EARLY, "redirect_fragment_early", \
	  "IPv4 fragment ahead of its datagram's first: to the worker, which holds it") \
	_(SBX_GSO,		"sbx_gso", \
	  "a TAP's TSO frame, to be segmented by the kernel on its way into the funnel") \
	_(PASS_NOT_NODE6,	"pass_not_node6", \
	  "IPv6 not addressed to the node's IPv6 address (or no --node-ip6)") \
	_(PASS_OTHER6,		"pass_other6", \
	  "IPv6 to the node's IPv6 address, not for the fast path (neighbour discovery, the " \
	  "node's own flows, extension headers), to the kernel") \
	_(REDIRECT_SNAT6,	"redirect_snat6", \
	  "TCP/UDP/ICMPv6 echo reply to the node's IPv6 address into the SNAT range") \
	_(REDIRECT_HOSTPORT6,	"redirect_hostport6", \
	  "TCP to a registered host port of the node's IPv6 address")

/*
 * The longest frame a sandbox interface may hand the funnel: a jumbo frame of the funnel's
 * MTU (9,216) less our stamp, and its Ethernet header (control/ports/funnel.h checks it is
 * FUNNEL_SBX_MTU_MAX and an Ethernet header). Longer is a TAP's TSO frame.
 */
#define CVS_SBX_FRAME_MAX	(9216 - 8 + 14)

enum cvs_xdp_counter {
#define CVS_XDP_ENUM(n, s, h) CVS_XDP_##n,
	CVS_XDP_COUNTERS(CVS_XDP_ENUM)
#undef CVS_XDP_ENUM
	CVS_XDP_MAX
};

#endif /* CVS_XDP_H */
