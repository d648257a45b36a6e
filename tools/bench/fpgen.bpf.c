/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generator program, run through BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: every run
 * writes one frame and returns XDP_TX, so the kernel sends it out of the interface given in
 * ctx_in. Live-frame pages are recycled holding whatever the path under test wrote into them,
 * so the whole template is written again each time, then the flow fields and checksums.
 * IPv4 or IPv6 (fpg_cfg.ip6): the flows differ in the source address's last 32 bits and the
 * source port either way.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fpb_csum.bpf.h"
#include "fpbench.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fpg_cfg);
} fpg_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fpg_state);
} fpg_state SEC(".maps");

/*
 * The flow's source port, the L4 checksum (and the stamp) of a frame whose TCP/UDP header is
 * at 'l4' (34 after IPv4, 54 after IPv6): the same for both families, the address words
 * being part of the pseudo-header either way.
 */
static __always_inline int
fpg_l4(void *data, void *data_end, struct fpg_cfg *c, __u64 seq, const __u32 l4,
       __u32 old_saddr, __u32 saddr, __u16 old_sport, __u16 sport)
{
	__u16 *l4ck;

	/* An IPv6 UDP frame is 62 bytes: no TCP header's room behind its UDP one. */
	if (c->l4_off != l4 || data + l4 + 8 > data_end)
		return XDP_ABORTED;
	if (c->proto == IPPROTO_TCP) {
		if (data + l4 + 20 > data_end)
			return XDP_ABORTED;
		l4ck = data + l4 + 16;
	} else {
		l4ck = data + l4 + 6;
	}
	if (*l4ck && c->partial) {
		/* A partial checksum covers the pseudo-header only: the address, uncomplemented. */
		*l4ck = (__u16)~csum_fix4((__u16)~*l4ck, old_saddr, saddr);
	} else if (*l4ck) {
		__u16 v = csum_fix4(*l4ck, old_saddr, saddr);

		v = csum_fix2(v, old_sport, sport);
		__u32 po = c->payload_off;
		struct fpb_stamp *sp = data + (po & (FPB_FRAME_MAX - 1));

		if (po && po < FPB_FRAME_MAX && (void *)(sp + 1) <= data_end) {
			__u64 ts = bpf_ktime_get_ns();

			/* The template's stamp is all zero: add the new words to the checksum. */
			sp->magic = FPB_MAGIC;
			sp->seq = (__u32)seq;
			sp->ts_ns = ts;
			v = csum_fix4(v, 0, FPB_MAGIC);
			v = csum_fix4(v, 0, (__u32)seq);
			v = csum_fix4(v, 0, (__u32)ts);
			v = csum_fix4(v, 0, (__u32)(ts >> 32));
		}
		if (c->proto == IPPROTO_UDP && v == 0)
			v = 0xffff;
		*l4ck = v;
	}
	*(__u16 *)(data + l4) = sport;
	return XDP_TX;
}

SEC("xdp")
int
fpg_prog(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fpg_state *stp;
	struct fpg_cfg *c;
	__u32 k = 0, f, i, saddr, old_saddr;
	__u16 sport, old_sport, *ipck;
	__u64 seq;

	c = bpf_map_lookup_elem(&fpg_cfg, &k);
	stp = bpf_map_lookup_elem(&fpg_state, &k);
	if (!c || !stp || c->flows == 0 || c->ports_per_ip == 0)
		return XDP_ABORTED;

	/* The whole template, one 32-bit word at a time. */
#pragma unroll
	for (i = 0; i < FPB_FRAME_MAX / 4; i++) {
		if (i * 4 + 4 > c->len || data + i * 4 + 4 > data_end)
			break;
		((__u32 *)data)[i] = ((__u32 *)c->frame)[i];
	}

	seq = stp->seq++;
	f = (__u32)(seq % c->flows);
	saddr = bpf_htonl(c->saddr0 + f / c->ports_per_ip);
	sport = bpf_htons((__u16)(c->sport0 + f % c->ports_per_ip));
	old_saddr = bpf_htonl(c->saddr0);
	old_sport = bpf_htons(c->sport0);

	if (c->ip6) {
		/* Ethernet 14 + IPv6 40: the source's last 32 bits at 34, no header checksum. */
		if (data + 54 > data_end)
			return XDP_ABORTED;
		*(__u32 *)(data + 34) = saddr;
		return fpg_l4(data, data_end, c, seq, 54, old_saddr, saddr, old_sport, sport);
	}
	/* Ethernet 14 + IPv4 20: saddr at 26, check at 24; offsets checked by the loader. */
	if (data + 34 > data_end)
		return XDP_ABORTED;
	ipck = data + 24;
	*ipck = csum_fix4(*ipck, old_saddr, saddr);
	*(__u32 *)(data + 26) = saddr;
	return fpg_l4(data, data_end, c, seq, 34, old_saddr, saddr, old_sport, sport);
}

char _license[] SEC("license") = "Dual BSD/GPL";
