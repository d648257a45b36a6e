/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Baselines the bench driver sets beside cubevs-fp, written for this kit:
 *  - dut_tc: TC ingress DNAT + bpf_redirect, optionally with a CubeVS-shaped session map
 *    (BPF_MAP_TYPE_HASH, 1M preallocated entries, 20-byte key, 64-byte value: lookup, a ktime
 *    write and counters on a hit, insert on a miss), the shape of the eBPF switch we replace;
 *  - dut_xdp: the same in XDP with bpf_redirect, the eBPF ceiling.
 * Only TCP/UDP to (match_daddr, match_dport) is translated; everything else passes.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fpb_csum.bpf.h"
#include "fpbench.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dut_cfg);
} dut_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DUT_SESSIONS_MAX);
	__type(key, struct dut_sess_key);
	__type(value, struct dut_sess);
} dut_sess SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DUT_C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} dut_stats SEC(".maps");

static __always_inline void
count(__u32 id)
{
	__u64 *c = bpf_map_lookup_elem(&dut_stats, &id);

	if (c)
		*c += 1;
}

/*
 * Parse, match, track and rewrite a frame in place. Returns 1 when it was translated and must
 * be redirected to c->out_ifindex, 0 when it is not ours.
 */
static __always_inline int
dut_translate(void *data, void *data_end, __u32 ifindex, __u32 len)
{
	struct ethhdr *eth = data;
	struct dut_sess *sess;
	struct dut_cfg *c;
	__u8 *ip, *l4;
	__u16 *ports, *l4ck, nd;
	__u32 k = 0, od, na;

	c = bpf_map_lookup_elem(&dut_cfg, &k);
	if (!c)
		return 0;
	ip = data + ETH_HLEN;
	if ((void *)(ip + 20) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || ip[0] != 0x45)
		return 0;
	l4 = ip + 20;
	if ((void *)(l4 + 20) > data_end)
		return 0;
	if (ip[9] == IPPROTO_TCP)
		l4ck = (__u16 *)(l4 + 16);
	else if (ip[9] == IPPROTO_UDP)
		l4ck = (__u16 *)(l4 + 6);
	else
		return 0;
	ports = (__u16 *)l4;
	if (*(__u32 *)(ip + 16) != c->match_daddr || ports[1] != c->match_dport)
		return 0;

	na = c->new_daddr;
	nd = c->new_dport;
	if (c->flags & DUT_F_SESSIONS) {
		struct dut_sess_key key = {
			.saddr = *(__u32 *)(ip + 12),
			.daddr = *(__u32 *)(ip + 16),
			.sport = ports[0],
			.dport = ports[1],
			.proto = ip[9],
			.ifindex = ifindex,
		};

		sess = bpf_map_lookup_elem(&dut_sess, &key);
		if (sess) {
			sess->last_ns = bpf_ktime_get_ns();
			sess->pkts++;
			sess->bytes += len;
			na = sess->nat_daddr;
			nd = sess->nat_dport;
		} else {
			struct dut_sess v = {
				.nat_daddr = na,
				.nat_dport = nd,
				.pkts = 1,
				.bytes = len,
			};

			v.created_ns = v.last_ns = bpf_ktime_get_ns();
			__builtin_memcpy(v.mac, eth->h_source, 6);
			if (bpf_map_update_elem(&dut_sess, &key, &v, BPF_NOEXIST))
				count(DUT_C_FULL);
			else
				count(DUT_C_NEW);
		}
	}

	od = *(__u32 *)(ip + 16);
	*(__u16 *)(ip + 10) = csum_fix4(*(__u16 *)(ip + 10), od, na);
	if (*l4ck || ip[9] == IPPROTO_TCP) {
		__u16 v = csum_fix4(*l4ck, od, na);

		v = csum_fix2(v, ports[1], nd);
		if (ip[9] == IPPROTO_UDP && v == 0)
			v = 0xffff;
		*l4ck = v;
	}
	*(__u32 *)(ip + 16) = na;
	ports[1] = nd;
	__builtin_memcpy(eth->h_dest, c->dst_mac, 6);
	__builtin_memcpy(eth->h_source, c->src_mac, 6);
	count(DUT_C_FWD);
	return 1;
}

static __always_inline __u32
dut_out(void)
{
	struct dut_cfg *c;
	__u32 k = 0;

	c = bpf_map_lookup_elem(&dut_cfg, &k);
	return c ? c->out_ifindex : 0;
}

SEC("tc")
int
dut_tc(struct __sk_buff *skb)
{
	void *data, *data_end;

	/* Direct access needs the headers linear. */
	if (bpf_skb_pull_data(skb, 54))
		return TC_ACT_OK;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (!dut_translate(data, data_end, skb->ifindex, skb->len)) {
		count(DUT_C_PASS);
		return TC_ACT_OK;
	}
	return bpf_redirect(dut_out(), 0);
}

SEC("xdp")
int
dut_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (!dut_translate(data, data_end, ctx->ingress_ifindex, (__u32)(data_end - data))) {
		count(DUT_C_PASS);
		return XDP_PASS;
	}
	return bpf_redirect(dut_out(), 0);
}


static __always_inline void
swap_macs(struct ethhdr *eth)
{
	__u8 mac[6];

	__builtin_memcpy(mac, eth->h_dest, 6);
	__builtin_memcpy(eth->h_dest, eth->h_source, 6);
	__builtin_memcpy(eth->h_source, mac, 6);
}

/* dut_reflect() for IPv6: TCP/UDP straight after the 40-byte header. */
static __always_inline int
dut_reflect6(struct __sk_buff *skb)
{
	void *data, *data_end;
	__u8 a[16], *ip;
	__u16 *ports, p;

	if (bpf_skb_pull_data(skb, ETH_HLEN + 40 + 4))
		return TC_ACT_OK;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	ip = data + ETH_HLEN;
	if ((void *)(ip + 40 + 4) > data_end || (ip[0] >> 4) != 6 ||
	    (ip[6] != IPPROTO_TCP && ip[6] != IPPROTO_UDP))
		return TC_ACT_OK;
	swap_macs(data);
	__builtin_memcpy(a, ip + 8, 16);
	__builtin_memcpy(ip + 8, ip + 24, 16);
	__builtin_memcpy(ip + 24, a, 16);
	ports = (__u16 *)(ip + 40);
	p = ports[0];
	ports[0] = ports[1];
	ports[1] = p;
	count(DUT_C_FWD);
	return bpf_redirect(skb->ifindex, 0);
}

/*
 * A remote peer for the SNAT return path (S3), at TC ingress: every IPv4 or IPv6 TCP/UDP
 * frame goes back out of the interface it came in on with MACs, addresses and ports swapped.
 * A swap leaves every checksum valid. (TC rather than XDP: an XDP_TX towards a veth peer
 * without NAPI is dropped, and the node side of this link runs the kernel paths.)
 */
SEC("tc")
int
dut_reflect(struct __sk_buff *skb)
{
	void *data, *data_end;
	struct ethhdr *eth;
	__u8 *ip;
	__u32 a;
	__u16 *ports, p;

	if (bpf_skb_pull_data(skb, 38))
		return TC_ACT_OK;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	eth = data;
	ip = data + ETH_HLEN;
	if ((void *)ip > data_end)
		return TC_ACT_OK;
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return dut_reflect6(skb);
	if ((void *)(ip + 20 + 4) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip[0] != 0x45 || (ip[9] != IPPROTO_TCP && ip[9] != IPPROTO_UDP))
		return TC_ACT_OK;
	swap_macs(eth);
	a = *(__u32 *)(ip + 12);
	*(__u32 *)(ip + 12) = *(__u32 *)(ip + 16);
	*(__u32 *)(ip + 16) = a;
	ports = (__u16 *)(ip + 20);
	p = ports[0];
	ports[0] = ports[1];
	ports[1] = p;
	count(DUT_C_FWD);
	return bpf_redirect(skb->ifindex, 0);
}

char _license[] SEC("license") = "Dual BSD/GPL";
