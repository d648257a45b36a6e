/* SPDX-License-Identifier: BSD-3-Clause */
/* Checksum helpers shared by the bench's BPF programs. */
#ifndef FPB_CSUM_BPF_H
#define FPB_CSUM_BPF_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>

static __always_inline __u16
fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

/* RFC 1624: HC' = ~(~HC + ~m + m'), on values as stored in the frame. */
static __always_inline __u16
csum_fix4(__u16 check, __u32 from, __u32 to)
{
	__u32 s = (__u16)~check;

	s += (__u16)~(from & 0xffff);
	s += (__u16)~(from >> 16);
	s += to & 0xffff;
	s += to >> 16;
	return (__u16)~fold(s);
}

static __always_inline __u16
csum_fix2(__u16 check, __u16 from, __u16 to)
{
	__u32 s = (__u16)~check;

	s += (__u16)~from;
	s += to;
	return (__u16)~fold(s);
}

#endif /* FPB_CSUM_BPF_H */
