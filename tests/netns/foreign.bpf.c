/* SPDX-License-Identifier: BSD-3-Clause */
/* A program that is not ours, to check that cubevs-fp never replaces someone else's. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int
foreign_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
