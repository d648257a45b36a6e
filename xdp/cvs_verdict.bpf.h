/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BPF side only, shared by both XDP programs: the per-CPU verdict counters (the cvs_stats
 * map, indexed by the ids of cvs_xdp.h, which user space sums over the CPUs) and the
 * redirect to an AF_XDP socket that counts what became of the frame.
 */
#ifndef CVS_VERDICT_BPF_H
#define CVS_VERDICT_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "cvs_xdp.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CVS_XDP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} cvs_stats SEC(".maps");

/* Count verdict 'id' on this CPU and return 'action'. */
static __always_inline int
cvs_verdict(__u32 id, int action)
{
	__u64 *c = bpf_map_lookup_elem(&cvs_stats, &id);

	if (c)
		*c += 1;
	return action;
}

/*
 * Redirect to the socket at 'key' of the XSKMAP 'xsks', or return 'fallback' when none is
 * bound there; counted as 'ok' or as 'none'.
 */
static __always_inline int
cvs_redirect(void *xsks, __u32 key, int fallback, __u32 ok, __u32 none)
{
	int act = bpf_redirect_map(xsks, key, fallback);

	return cvs_verdict(act == XDP_REDIRECT ? ok : none, act);
}

#endif /* CVS_VERDICT_BPF_H */
