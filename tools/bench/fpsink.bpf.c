/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sink program: counts and drops every frame (per-CPU counters, no locks). Frames that carry a
 * stamp (fpbench.h) also give one-way latency, bpf_ktime_get_ns() minus the sender's
 * CLOCK_MONOTONIC stamp (same host, same clock), into a log-linear histogram, and a sequence
 * number for loss and reordering.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fpbench.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fps_cnt);
} fps_cnt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FPS_HIST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} fps_hist SEC(".maps");

static __always_inline void
stamp_account(struct fps_cnt *c, struct fpb_stamp *sp)
{
	__u64 now = bpf_ktime_get_ns(), d;
	__u32 b;
	__u64 *h;

	c->stamped++;
	if (sp->seq < c->last_seq)
		c->reordered++;
	c->last_seq = sp->seq;
	if (sp->seq > c->max_seq)
		c->max_seq = sp->seq;
	d = now > sp->ts_ns ? now - sp->ts_ns : 0;
	c->lat_sum_ns += d;
	if (d > c->lat_max_ns)
		c->lat_max_ns = d;
	b = fps_bucket(d);
	h = bpf_map_lookup_elem(&fps_hist, &b);
	if (h)
		*h += 1;
}

SEC("xdp")
int
fps_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fpb_stamp *sp;
	struct fps_cnt *c;
	__u32 k = 0, ihl;
	__u8 *ip, *l4;

	c = bpf_map_lookup_elem(&fps_cnt, &k);
	if (!c)
		return XDP_DROP;
	c->pkts++;
	c->bytes += data_end - data;

	ip = data + ETH_HLEN;
	if ((void *)(ip + 20) > data_end || ((struct ethhdr *)data)->h_proto != bpf_htons(ETH_P_IP))
		return XDP_DROP;
	ihl = (ip[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > 60)
		return XDP_DROP;
	l4 = ip + ihl;
	if (ip[9] == IPPROTO_UDP) {
		sp = (struct fpb_stamp *)(l4 + 8);
	} else if (ip[9] == IPPROTO_TCP) {
		if ((void *)(l4 + 20) > data_end)
			return XDP_DROP;
		sp = (struct fpb_stamp *)(l4 + (((l4[12] >> 4) & 0x0f) * 4));
	} else {
		return XDP_DROP;
	}
	if ((void *)(sp + 1) <= data_end && sp->magic == FPB_MAGIC)
		stamp_account(c, sp);
	return XDP_DROP;
}

char _license[] SEC("license") = "Dual BSD/GPL";
