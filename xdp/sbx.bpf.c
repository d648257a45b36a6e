/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sandbox-interface program: every frame a guest sends goes to the AF_XDP socket of its
 * sandbox. One program serves all sandbox interfaces; cvs_sbx_slot maps the receiving ifindex
 * to the sandbox slot, which is the index of its socket in xsks_map. Without a socket the frame
 * is dropped: guest traffic must never leak into the host stack untranslated. The program and
 * its maps (pinned) stay over a restart of cubevs-fp: a known sandbox's frames while no socket
 * is bound are the restart gap, counted as such.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "cvs_verdict.bpf.h"
#include "cvs_xdp.h"

#ifndef CVS_SBX_MAX
#define CVS_SBX_MAX 4096	/* resized by the loader before load */
#endif

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, CVS_SBX_MAX);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CVS_SBX_MAX);
	__type(key, __u32);	/* ifindex */
	__type(value, __u32);	/* slot */
} cvs_sbx_slot SEC(".maps");

SEC("xdp")
int
cvs_sbx_prog(struct xdp_md *ctx)
{
	__u32 ifindex = ctx->ingress_ifindex;
	__u32 *slot = bpf_map_lookup_elem(&cvs_sbx_slot, &ifindex);

	if (!slot)
		return cvs_verdict(CVS_XDP_SBX_NO_SOCKET, XDP_DROP);
	return cvs_redirect(&xsks_map, *slot, XDP_DROP, CVS_XDP_SBX_REDIRECT, CVS_XDP_GAP_DROP);
}

char _license[] SEC("license") = "Dual BSD/GPL";
