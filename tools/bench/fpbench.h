/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The contract between the benchmark kit's BPF programs and their loaders: map names, config
 * and counter layouts, the payload stamp. Included by the BPF side (clang -target bpf) and the
 * user side, so it uses only fixed-width kernel types.
 */
#ifndef FPBENCH_H
#define FPBENCH_H

#include <linux/types.h>

/* Every address the kit sends from or to must be inside 198.18.0.0/15 (RFC 2544). */
#define FPB_NET		0xc6120000u	/* host order */
#define FPB_NET_MASK	0xfffe0000u
/* ... and for IPv6 inside 2001:2::/48 (RFC 5180): these first six bytes. */
#define FPB_NET6	{ 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 }

#define FPB_FRAME_MAX	128	/* bytes of template the generator rewrites per frame */

/* Payload stamp, at the start of the UDP/TCP payload, written by the senders. */
#define FPB_MAGIC	0x31425046u	/* "FPB1" little-endian */
struct fpb_stamp {
	__u32 magic;
	__u32 seq;
	__u64 ts_ns;	/* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns() */
};

/* ---- generator (fpgen.bpf.c): one entry in "fpg_cfg" ---- */
struct fpg_cfg {
	__u8 frame[FPB_FRAME_MAX];	/* template: flow 0, checksums valid */
	__u32 len;			/* frame length (multiple of 4 is not required) */
	__u32 flows;			/* flow f = seq % flows */
	__u32 ports_per_ip;		/* f → (ip f / ppi, port f % ppi) */
	__u32 saddr0;			/* host order, flow 0's source address (IPv6: its
					 * last 32 bits, where the flows differ) */
	__u16 sport0;			/* host order, flow 0's source port */
	__u16 l4_off;			/* offset of the TCP/UDP header */
	__u16 l4_check_off;		/* offset of the L4 checksum */
	__u16 payload_off;		/* offset of the stamp, 0: no stamp */
	__u8 proto;
	__u8 partial;			/* the L4 checksum is the pseudo-header sum only */
	__u8 ip6;			/* IPv6 template: no IP checksum, L4 at 54 */
	__u8 pad;
};

/* Per-CPU state of the generator: the sequence number of the next frame. */
struct fpg_state {
	__u64 seq;
};

/* ---- sink (fpsink.bpf.c): per-CPU "fps_cnt" entry 0 and histogram "fps_hist" ---- */
struct fps_cnt {
	__u64 pkts;
	__u64 bytes;
	__u64 stamped;		/* frames carrying a stamp */
	__u64 reordered;	/* stamped frames with a lower seq than the one before */
	__u64 max_seq;
	__u64 last_seq;
	__u64 lat_sum_ns;
	__u64 lat_max_ns;
};

/*
 * Latency histogram: below 16 ns one bucket per ns; above, 8 linear sub-buckets per power of
 * two (12.5 % resolution). fps_bucket_lo() gives the lower bound of a bucket.
 */
#define FPS_HIST_MAX	320

static inline __u32
fps_bucket(__u64 d)
{
	__u32 e = 0;
	__u64 v = d;

	if (d < 16)
		return (__u32)d;
	if (v >> 32) { e += 32; v >>= 32; }
	if (v >> 16) { e += 16; v >>= 16; }
	if (v >> 8) { e += 8; v >>= 8; }
	if (v >> 4) { e += 4; v >>= 4; }
	if (v >> 2) { e += 2; v >>= 2; }
	if (v >> 1) { e += 1; }
	e = 16 + (e - 4) * 8 + (__u32)((d >> (e - 3)) & 7);
	return e < FPS_HIST_MAX ? e : FPS_HIST_MAX - 1;
}

static inline __u64
fps_bucket_lo(__u32 i)
{
	__u32 e, m;

	if (i < 16)
		return i;
	e = 4 + (i - 16) / 8;
	m = (i - 16) % 8;
	return (__u64)(8 + m) << (e - 3);
}

/* ---- baselines (fpdut.bpf.c): one entry in "dut_cfg" ---- */
struct dut_cfg {
	__u32 match_daddr;	/* network order: the exposed address ... */
	__u16 match_dport;	/* ... and port (network order) */
	__u16 new_dport;	/* DNAT target port (network order) */
	__u32 new_daddr;	/* DNAT target address (network order) */
	__u32 out_ifindex;	/* redirect to this interface */
	__u8 dst_mac[6];	/* next hop: the sandbox */
	__u8 src_mac[6];	/* our side of the sandbox link */
	__u32 flags;
};

#define DUT_F_SESSIONS	0x1u	/* keep a CubeVS-shaped session map (lookup, insert on miss) */

#define DUT_SESSIONS_MAX	1048576

/* CubeVS-shaped session: 20-byte key, 64-byte value, 1M entries preallocated. */
struct dut_sess_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
	__u32 ifindex;
};

struct dut_sess {
	__u32 nat_daddr;
	__u16 nat_dport;
	__u8 mac[6];
	__u64 created_ns;
	__u64 last_ns;
	__u64 pkts;
	__u64 bytes;
	__u32 state;
	__u32 flags;
	__u64 pad[2];
};

/* Per-CPU verdict counters of the baselines. */
enum dut_counter {
	DUT_C_FWD = 0,
	DUT_C_PASS,
	DUT_C_NEW,
	DUT_C_FULL,
	DUT_C_MAX
};

#endif /* FPBENCH_H */
