/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sandbox side of the node, three programs over one set of maps (docs/datapath.md, "One
 * socket per worker"):
 *
 *   sandbox interface (veth/TAP)  --XDP cvs_sbx_prog-->  devmap: the funnel of the slot's worker
 *   funnel, worker end            --XDP cvs_fun_in--->   that worker's one AF_XDP socket
 *   funnel, near end              --TC  cvs_fun_out-->   redirect to the slot's interface
 *   TAP, a TSO frame (XDP_PASS)   --TC  cvs_sbx_gso-->   the funnel's near end, segmented there
 *
 * So a registered sandbox costs map entries, never a socket or a frame pool of its own, and a
 * worker polls one socket however many sandboxes it serves. Without a worker socket (a restart)
 * a guest frame is dropped and counted as a gap drop: guest traffic never reaches the host
 * stack untranslated. The maps are pinned and stay over a restart of cubevs-fp.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "cvs_verdict.bpf.h"
#include "cvs_xdp.h"

#ifndef CVS_SBX_MAX
#define CVS_SBX_MAX 8192	/* resized by the loader before load */
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CVS_SBX_MAX);
	__type(key, __u32);	/* ifindex */
	__type(value, struct cvs_sbx_if);
} cvs_sbx_if SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CVS_SBX_MAX);
	__type(key, __u32);	/* slot */
	__type(value, struct cvs_sbx_out);
} cvs_sbx_out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CVS_SBX_MAX);
	__type(key, __u32);	/* slot */
	__type(value, struct cvs_sbx_pol);
} cvs_sbx_pol SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, CVS_FUN_MAX);
	__type(key, __u32);	/* worker */
	__type(value, __u32);	/* ifindex of its funnel's near end */
} cvs_fun_dev SEC(".maps");

/* The same ifindex for cvs_sbx_gso: the kernel lets only XDP programs read a devmap. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CVS_FUN_MAX);
	__type(key, __u32);	/* worker */
	__type(value, __u32);	/* ifindex of its funnel's near end; 0: none */
} cvs_fun_ifx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, CVS_FUN_MAX);
	__type(key, __u32);	/* worker */
	__type(value, __u32);
} cvs_fun_xsks SEC(".maps");

/*
 * TAPs whose TSO frames cvs_sbx_gso takes (a TC filter of ours on the TAP): ifindex -> its
 * MTU. Written after the filter is attached and removed before it goes, so a frame is passed
 * to the kernel only while our TC program is there to take it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CVS_SBX_MAX);
	__type(key, __u32);	/* ifindex */
	__type(value, __u32);	/* its MTU */
} cvs_gso_mtu SEC(".maps");

/* Written by each worker through an mmap: nonzero while its funnel ring fills up. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CVS_FUN_MAX);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} cvs_fun_press SEC(".maps");

/* Over its share of a funnel under pressure: the frame is this sandbox's excess. */
static __always_inline int
cvs_sbx_over(__u32 slot, __u32 worker)
{
	__u64 *press = bpf_map_lookup_elem(&cvs_fun_press, &worker);
	struct cvs_sbx_pol *p;
	__u64 now;

	if (!press || !*press)
		return 0;
	p = bpf_map_lookup_elem(&cvs_sbx_pol, &slot);
	if (!p)
		return 0;
	now = bpf_ktime_get_ns();
	/* Racy across CPUs by design: the share is approximate, the count is exact. */
	if (now - p->window >= CVS_POL_WINDOW_NS) {
		p->window = now;
		p->used = 0;
	}
	if (p->used >= CVS_POL_FRAMES) {
		__sync_fetch_and_add(&p->dropped, 1);
		return 1;
	}
	p->used++;
	return 0;
}

/* Both ways into a funnel stamp a guest frame alike: cvs_fun_in and the worker read it. */
static __always_inline void
cvs_fun_stamp(struct cvs_fun_hdr *h, __u32 worker, __u8 flags, __u32 slot)
{
	h->magic = bpf_htons(CVS_FUN_MAGIC);
	h->worker = (__u8)worker;
	h->flags = flags;
	h->slot = slot;
}

static __always_inline int
cvs_mac_differs(const __u8 *a, const __u8 *b)
{
	return (a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) | (a[4] ^ b[4]) |
	       (a[5] ^ b[5]);
}

/*
 * xdp.frags, as cvs_fun_in and the steering program: a jumbo frame reaches the program in
 * several buffers (only the first is data..data_end); without it the kernel refuses an
 * interface's MTU above what one page holds.
 */
SEC("xdp.frags")
int
cvs_sbx_prog(struct xdp_md *ctx)
{
	__u32 ifindex = ctx->ingress_ifindex, slot, worker, len;
	struct cvs_sbx_if *sb = bpf_map_lookup_elem(&cvs_sbx_if, &ifindex);
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct cvs_fun_hdr *h;
	__u8 flags = 0;

	if (!sb)
		return cvs_verdict(CVS_XDP_SBX_NO_SOCKET, XDP_DROP);
	len = bpf_xdp_get_buff_len(ctx);
	/*
	 * A TAP hands over a VMM's TSO frame (vnet header) whole, longer than its MTU. XDP
	 * cannot cut it in segments and loses its GSO metadata: it goes on to cvs_sbx_gso in
	 * the kernel, which keeps both. Only the long frames look the TAP up.
	 */
	if (len > ETH_FRAME_LEN) {
		__u32 *mtu = bpf_map_lookup_elem(&cvs_gso_mtu, &ifindex);

		/* The low 16 bits: above them xdp/xdpgso.c notes whose qdisc it is. */
		if (mtu && len > (*mtu & 0xffff) + ETH_HLEN)
			return cvs_verdict(CVS_XDP_SBX_GSO, XDP_PASS);
	}
	/* Without our TC program the funnel would drop it without a word: counted here. */
	if (len > CVS_SBX_FRAME_MAX)
		return cvs_verdict(CVS_XDP_SBX_TOO_BIG, XDP_DROP);
	/* A runt goes on as it is: the worker's parser drops it and counts why. */
	if (data + ETH_HLEN <= end && cvs_mac_differs((__u8 *)data + 6, sb->mac))
		flags |= CVS_FUN_F_MAC_MISMATCH;
	slot = sb->slot;
	worker = sb->worker;
	if (cvs_sbx_over(slot, worker))
		return cvs_verdict(CVS_XDP_SBX_POLICED, XDP_DROP);
	if (bpf_xdp_adjust_head(ctx, -(int)sizeof(*h)))
		return cvs_verdict(CVS_XDP_SBX_NO_SOCKET, XDP_DROP);
	h = (void *)(long)ctx->data;
	if ((void *)(h + 1) > (void *)(long)ctx->data_end)
		return cvs_verdict(CVS_XDP_SBX_NO_SOCKET, XDP_DROP);
	cvs_fun_stamp(h, worker, flags, slot);
	return cvs_redirect(&cvs_fun_dev, worker, XDP_DROP, CVS_XDP_SBX_REDIRECT,
			    CVS_XDP_GAP_DROP);
}

SEC("xdp.frags")
int
cvs_fun_in(struct xdp_md *ctx)
{
	struct cvs_fun_hdr *h = (void *)(long)ctx->data;
	int act;

	/* Only what cvs_sbx_prog stamped: the kernel's own frames on the funnel go nowhere. */
	if ((void *)(h + 1) > (void *)(long)ctx->data_end || h->magic != bpf_htons(CVS_FUN_MAGIC))
		return cvs_verdict(CVS_XDP_FUN_FOREIGN, XDP_DROP);
	act = bpf_redirect_map(&cvs_fun_xsks, h->worker, XDP_DROP);
	if (act != XDP_REDIRECT)
		cvs_verdict(CVS_XDP_GAP_DROP, 0);
	return act;
}

SEC("tc")
int
cvs_fun_out(struct __sk_buff *skb)
{
	__u8 *d = (void *)(long)skb->data;
	struct cvs_sbx_out *out;
	__u32 slot;

	if ((void *)(d + ETH_HLEN) > (void *)(long)skb->data_end) {
		if (bpf_skb_pull_data(skb, ETH_HLEN))
			return cvs_verdict(CVS_XDP_FUN_FOREIGN, TC_ACT_SHOT);
		d = (void *)(long)skb->data;
		if ((void *)(d + ETH_HLEN) > (void *)(long)skb->data_end)
			return cvs_verdict(CVS_XDP_FUN_FOREIGN, TC_ACT_SHOT);
	}
	if (d[0] != CVS_FUN_STAMP0 || d[1] != CVS_FUN_STAMP1)
		return cvs_verdict(CVS_XDP_FUN_FOREIGN, TC_ACT_SHOT);
	slot = ((__u32)d[2] << 24) | ((__u32)d[3] << 16) | ((__u32)d[4] << 8) | d[5];
	out = bpf_map_lookup_elem(&cvs_sbx_out, &slot);
	if (!out || !out->ifindex)
		return cvs_verdict(CVS_XDP_FUN_NO_SANDBOX, TC_ACT_SHOT);
	__builtin_memcpy(d, out->mac, 6);
	cvs_verdict(CVS_XDP_FUN_TO_SANDBOX, 0);
	return bpf_redirect(out->ifindex, 0);
}

/*
 * A TAP's TSO frame that cvs_sbx_prog passed: stamped like any guest frame and sent out of the
 * near end of the worker's funnel. That veth has no segmentation offload (its peer runs XDP),
 * so the kernel segments the frame there, by its GSO type and size (TCP, UDP), and each
 * segment reaches cvs_fun_in with the stamp copied in front of its headers.
 */
SEC("tc")
int
cvs_sbx_gso(struct __sk_buff *skb)
{
	__u32 ifindex = skb->ingress_ifindex, slot, worker, *fun;
	struct cvs_sbx_if *sb = bpf_map_lookup_elem(&cvs_sbx_if, &ifindex);
	struct cvs_fun_hdr *h;
	__u8 *d, flags = 0;

	/* Nothing of a sandbox's reaches the host's stack untranslated. */
	if (!sb)
		return cvs_verdict(CVS_XDP_SBX_NO_SOCKET, TC_ACT_SHOT);
	/* Not a GSO frame, only too long: no segment of it fits. */
	if (!skb->gso_size || skb->len > 65535)
		return cvs_verdict(CVS_XDP_SBX_TOO_BIG, TC_ACT_SHOT);
	if (bpf_skb_pull_data(skb, ETH_HLEN))
		return cvs_verdict(CVS_XDP_SBX_NO_SOCKET, TC_ACT_SHOT);
	d = (void *)(long)skb->data;
	if ((void *)(d + ETH_HLEN) > (void *)(long)skb->data_end)
		return cvs_verdict(CVS_XDP_SBX_NO_SOCKET, TC_ACT_SHOT);
	if (cvs_mac_differs(d + 6, sb->mac))
		flags |= CVS_FUN_F_MAC_MISMATCH;
	slot = sb->slot;
	worker = sb->worker;
	if (cvs_sbx_over(slot, worker))
		return cvs_verdict(CVS_XDP_SBX_POLICED, TC_ACT_SHOT);
	fun = bpf_map_lookup_elem(&cvs_fun_ifx, &worker);
	if (!fun || !*fun || bpf_skb_change_head(skb, sizeof(*h), 0))
		return cvs_verdict(CVS_XDP_GAP_DROP, TC_ACT_SHOT);
	h = (void *)(long)skb->data;
	if ((void *)(h + 1) > (void *)(long)skb->data_end)
		return cvs_verdict(CVS_XDP_GAP_DROP, TC_ACT_SHOT);
	cvs_fun_stamp(h, worker, flags, slot);
	return bpf_redirect(*fun, 0);
}

char _license[] SEC("license") = "Dual BSD/GPL";
