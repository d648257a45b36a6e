/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * World-interface steering program. Only what the fast path owns goes to the AF_XDP socket of
 * the receiving queue: TCP to a registered host port of the node IP or of its IPv6 address,
 * and replies to flows whose node-side port is in the SNAT range (IPv4, and IPv6 to the
 * node's IPv6 address). Everything else, including anything we cannot parse, goes to the
 * kernel, so the node keeps its own ARP, SSH, ping and ephemeral connections.
 * When no socket is bound the frame is held back (dropped, counted) for the restart grace
 * after the last heartbeat, then passed: a dead cubevs-fp never black-holes the host for
 * longer than the grace, and never the node's own traffic.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "cvs_verdict.bpf.h"
#include "cvs_xdp.h"

#define ICMP_ECHOREPLY_ 0
#define ICMPV6_ECHO_REPLY_ 129

/* Only the echo part of the ICMP header; linux/icmp.h drags in libc headers. */
struct icmp_echo {
	__u8 type;
	__u8 code;
	__u16 check;
	__u16 id;
	__u16 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, CVS_XSKS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CVS_STEER_MAX);
	__type(key, struct cvs_steer_key);
	__type(value, __u8);
} cvs_steer SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cvs_xdp_cfg);
} cvs_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cvs_xdp_cfg6);
} cvs_cfg6 SEC(".maps");

/*
 * Where each datagram's first fragment went: to us (its later fragments carry no ports and
 * follow it here, to the same socket) or to the kernel (the node's own traffic: its later
 * fragments go there too). A later fragment of a datagram not in it came ahead of its first.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CVS_FRAG_MAX);
	__type(key, struct cvs_frag_key);
	__type(value, __u8);
} cvs_frag SEC(".maps");

static __always_inline int
in_snat(const struct cvs_xdp_cfg *cfg, __u16 port_be)
{
	__u16 p = bpf_ntohs(port_be);

	return p >= cfg->snat_lo && p <= cfg->snat_hi;
}

/*
 * To the socket of the receiving queue. Without one, cubevs-fp is restarting (or gone): held
 * back within the grace after its last heartbeat, so the kernel does not reset the flows the
 * next process adopts; after the grace everything goes to the kernel again.
 */
static __always_inline int
steer(struct xdp_md *ctx, const struct cvs_xdp_cfg *cfg, __u32 id)
{
	int act = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);

	if (act == XDP_REDIRECT)
		return cvs_verdict(id, act);
	if (bpf_ktime_get_boot_ns() - cfg->heartbeat_ns < cfg->grace_ns)
		return cvs_verdict(CVS_XDP_GAP_DROP, XDP_DROP);
	return cvs_verdict(CVS_XDP_PASS_NO_SOCKET, act);
}

/*
 * An ICMP error whose quoted packet left from a flow of ours (source node IP and a SNAT port
 * or a registered host port) belongs to the fast path; any other goes to the kernel.
 */
static __always_inline int
steer_icmp_error(struct xdp_md *ctx, const struct cvs_xdp_cfg *cfg, void *q, void *end)
{
	struct iphdr *in = q;
	struct cvs_steer_key key = {};
	__u16 *ports;

	if ((void *)(in + 1) > end || in->ihl != 5 || in->saddr != cfg->node_ip)
		return cvs_verdict(CVS_XDP_PASS_OTHER, XDP_PASS);
	ports = (void *)(in + 1);
	if ((void *)(ports + 4) > end)
		return cvs_verdict(CVS_XDP_PASS_OTHER, XDP_PASS);
	switch (in->protocol) {
	case IPPROTO_TCP:
		key.port = ports[0];
		key.proto = IPPROTO_TCP;
		if (bpf_map_lookup_elem(&cvs_steer, &key))
			return steer(ctx, cfg, CVS_XDP_REDIRECT_ICMP_ERROR);
		/* fall through */
	case IPPROTO_UDP:
		if (in_snat(cfg, ports[0]))
			return steer(ctx, cfg, CVS_XDP_REDIRECT_ICMP_ERROR);
		break;
	case IPPROTO_ICMP:
		/* A quoted echo request: its id is at bytes 4-5. */
		if (in_snat(cfg, ports[2]))
			return steer(ctx, cfg, CVS_XDP_REDIRECT_ICMP_ERROR);
		break;
	}
	return cvs_verdict(CVS_XDP_PASS_OTHER, XDP_PASS);
}

/*
 * Whether a packet opens or answers a flow of ours, by its first 8 bytes of L4 header (the
 * caller checked they are there): TCP to a registered host port, TCP or UDP into the SNAT
 * range, an echo reply to a SNAT id. The verdict to count, or 0. A first fragment is judged
 * the same way.
 */
static __always_inline __u32
steer_verdict(const struct iphdr *ip, const __u16 *ports, const struct cvs_xdp_cfg *cfg)
{
	struct cvs_steer_key key = {};

	switch (ip->protocol) {
	case IPPROTO_TCP:
		key.port = ports[1];
		key.proto = IPPROTO_TCP;
		if (bpf_map_lookup_elem(&cvs_steer, &key))
			return CVS_XDP_REDIRECT_HOSTPORT;
		return in_snat(cfg, ports[1]) ? CVS_XDP_REDIRECT_SNAT : 0;
	case IPPROTO_UDP:
		return in_snat(cfg, ports[1]) ? CVS_XDP_REDIRECT_SNAT : 0;
	case IPPROTO_ICMP:
		return ((const struct icmp_echo *)ports)->type == ICMP_ECHOREPLY_ &&
		       in_snat(cfg, ((const struct icmp_echo *)ports)->id) ?
		       CVS_XDP_REDIRECT_SNAT : 0;
	}
	return 0;
}

/*
 * A fragment has no L4 header after the first: a later one goes where its datagram's first
 * went, which steering to us remembers.
 */
static __always_inline int
steer_fragment(struct xdp_md *ctx, const struct cvs_xdp_cfg *cfg, const struct iphdr *ip,
	       const __u16 *ports, void *end)
{
	struct cvs_frag_key fk = { .saddr = ip->saddr, .id = ip->id, .proto = ip->protocol };
	__u8 ours = CVS_FRAG_OURS, kernels = CVS_FRAG_KERNELS, *seen;

	if (ip->frag_off & bpf_htons(0x1fff)) {
		seen = bpf_map_lookup_elem(&cvs_frag, &fk);
		/*
		 * Ahead of its first fragment, nobody knows whose it is: the worker holds it, and
		 * gives it to the kernel (through cube-dev) if its first never comes to us.
		 */
		if (!seen)
			return steer(ctx, cfg, CVS_XDP_REDIRECT_FRAGMENT_EARLY);
		if (*seen == CVS_FRAG_OURS)
			return steer(ctx, cfg, CVS_XDP_REDIRECT_FRAGMENT);
	} else if ((void *)(ports + 4) <= end && steer_verdict(ip, ports, cfg)) {
		bpf_map_update_elem(&cvs_frag, &fk, &ours, BPF_ANY);
		return steer(ctx, cfg, CVS_XDP_REDIRECT_FRAGMENT);
	} else {
		/* The kernel's datagram: its later fragments follow it there. */
		bpf_map_update_elem(&cvs_frag, &fk, &kernels, BPF_ANY);
	}
	return cvs_verdict(CVS_XDP_PASS_FRAGMENT, XDP_PASS);
}

/*
 * IPv6 to the node's IPv6 address: TCP to a registered host port (exposed ports answer on
 * both families) and replies of NAT66 flows (docs/architecture.md, "Address families"), told by the upper-layer header right behind the fixed one. With extension
 * headers (fragments among them) a packet goes to the kernel: the node's own traffic needs
 * that, and our flows' peers send none. Neighbour discovery, ping6 and the node's own
 * connections are the kernel's.
 */
static __always_inline int
steer6(struct xdp_md *ctx, struct ipv6hdr *ip6, void *end)
{
	const struct cvs_xdp_cfg6 *c6;
	const struct icmp_echo *echo;
	struct cvs_steer_key key = {};
	struct cvs_xdp_cfg *cfg;
	__u16 *l4 = (void *)(ip6 + 1);
	__u32 zero = 0;

	if ((void *)(ip6 + 1) > end || ip6->version != 6)
		return cvs_verdict(CVS_XDP_PASS_OTHER6, XDP_PASS);
	c6 = bpf_map_lookup_elem(&cvs_cfg6, &zero);
	cfg = bpf_map_lookup_elem(&cvs_cfg, &zero);
	if (!c6 || !cfg || !(c6->flags & CVS_CFG6_F_ENABLED) ||
	    !(cfg->flags & CVS_CFG_F_ENABLED) ||
	    ip6->daddr.in6_u.u6_addr32[0] != c6->node_ip6[0] ||
	    ip6->daddr.in6_u.u6_addr32[1] != c6->node_ip6[1] ||
	    ip6->daddr.in6_u.u6_addr32[2] != c6->node_ip6[2] ||
	    ip6->daddr.in6_u.u6_addr32[3] != c6->node_ip6[3])
		return cvs_verdict(CVS_XDP_PASS_NOT_NODE6, XDP_PASS);
	/* The 8 bytes of UDP and of an echo; a whole TCP header. */
	if ((void *)(l4 + 4) > end)
		return cvs_verdict(CVS_XDP_PASS_OTHER6, XDP_PASS);
	switch (ip6->nexthdr) {
	case IPPROTO_TCP:
		if ((void *)l4 + sizeof(struct tcphdr) > end)
			break;
		/* One host port answers on both families: the IPv4 map is the IPv6 one. */
		key.port = l4[1];
		key.proto = IPPROTO_TCP;
		if (bpf_map_lookup_elem(&cvs_steer, &key))
			return steer(ctx, cfg, CVS_XDP_REDIRECT_HOSTPORT6);
		/* fall through */
	case IPPROTO_UDP:
		if (in_snat(cfg, l4[1]))
			return steer(ctx, cfg, CVS_XDP_REDIRECT_SNAT6);
		break;
	case IPPROTO_ICMPV6:
		echo = (const struct icmp_echo *)l4;
		if (echo->type == ICMPV6_ECHO_REPLY_ && in_snat(cfg, echo->id))
			return steer(ctx, cfg, CVS_XDP_REDIRECT_SNAT6);
		break;
	}
	return cvs_verdict(CVS_XDP_PASS_OTHER6, XDP_PASS);
}

/* xdp.frags: a world interface at a jumbo MTU hands a long frame over in several buffers. */
SEC("xdp.frags")
int
cvs_steer_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct cvs_xdp_cfg *cfg;
	struct iphdr *ip;
	__u16 *ports;
	__u32 zero = 0, v;

	if ((void *)(eth + 1) > end)
		return cvs_verdict(CVS_XDP_PASS_OTHER, XDP_PASS);
	/* IPv4 is asked first: its path stays as short as it was. */
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return eth->h_proto == bpf_htons(ETH_P_IPV6) ?
		       steer6(ctx, (void *)(eth + 1), end) :
		       cvs_verdict(CVS_XDP_PASS_OTHER, XDP_PASS);
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->ihl < 5)
		return cvs_verdict(CVS_XDP_PASS_OTHER, XDP_PASS);
	cfg = bpf_map_lookup_elem(&cvs_cfg, &zero);
	if (!cfg || !(cfg->flags & CVS_CFG_F_ENABLED) || ip->daddr != cfg->node_ip)
		return cvs_verdict(CVS_XDP_PASS_NOT_NODE, XDP_PASS);
	ports = (void *)ip + ip->ihl * 4;
	if (ip->frag_off & bpf_htons(0x3fff))
		return steer_fragment(ctx, cfg, ip, ports, end);
	/* A whole TCP header, the 8 bytes of UDP and of an ICMP echo. */
	if ((void *)(ports + 4) > end ||
	    (ip->protocol == IPPROTO_TCP && (void *)ports + sizeof(struct tcphdr) > end))
		return cvs_verdict(CVS_XDP_PASS_OTHER, XDP_PASS);
	v = steer_verdict(ip, ports, cfg);
	if (v)
		return steer(ctx, cfg, v);
	if (ip->protocol == IPPROTO_ICMP) {
		__u8 type = ((const struct icmp_echo *)ports)->type;

		if (type == 3 || type == 11 || type == 12)
			return steer_icmp_error(ctx, cfg, (void *)(ports + 4), end);
	}
	return cvs_verdict(CVS_XDP_PASS_OTHER, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
