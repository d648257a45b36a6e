/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BPF side of a worker's funnel (control/ports/funnel.h makes the veth pair and the
 * socket): its two programs attached, its near end in the devmap the sandbox program sends
 * into (and in cvs_fun_ifx, for a TAP's TSO frames), its worker's socket in the funnel's XSKMAP, the pressure word the worker writes.
 * Control thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpctl.h"

bool
xdpctl_fun_loaded(const struct xdp_sbx *x)
{
	return x->obj != NULL;
}

/* The worker end's XDP program first: only then does the near end take devmap frames. */
int
xdpctl_fun_attach(struct xdp_sbx *x, uint32_t worker, int ifindex, int peer_ifindex,
		  char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = peer_ifindex,
		    .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = 1, .priority = 1, .prog_fd = x->fun_out_fd,
		    .flags = BPF_TC_F_REPLACE);
	uint32_t key = worker, dev = (uint32_t)peer_ifindex;
	int ret;

	ret = bpf_xdp_attach(ifindex, x->fun_in_fd, XDP_FLAGS_DRV_MODE, NULL);
	if (ret) {
		snprintf(err, errlen, "cannot attach the funnel program to cvsfun%u: %s", worker,
			 strerror(-ret));
		return ret;
	}
	ret = bpf_tc_hook_create(&hook);
	if (ret && ret != -EEXIST) {
		snprintf(err, errlen, "cannot add a clsact qdisc to cvsfun%up: %s", worker,
			 strerror(-ret));
		return ret;
	}
	ret = bpf_tc_attach(&hook, &tc);
	if (ret) {
		snprintf(err, errlen, "cannot attach the funnel's TC program to cvsfun%up: %s",
			 worker, strerror(-ret));
		return ret;
	}
	if (bpf_map_update_elem(x->dev_fd, &key, &dev, BPF_ANY) ||
	    bpf_map_update_elem(x->ifx_fd, &key, &dev, BPF_ANY)) {
		ret = -errno;
		snprintf(err, errlen, "cannot add cvsfun%up to the funnel devmap: %s", worker,
			 strerror(-ret));
	}
	return ret;
}

int
xdpctl_fun_bind(struct xdp_sbx *x, uint32_t worker, int xsk_fd)
{
	return bpf_map_update_elem(x->xsks_fd, &worker, &xsk_fd, BPF_ANY) ? -errno : 0;
}

void
xdpctl_fun_unbind(struct xdp_sbx *x, uint32_t worker)
{
	bpf_map_delete_elem(x->xsks_fd, &worker);
}

void
xdpctl_fun_forget(struct xdp_sbx *x, uint32_t worker)
{
	uint32_t none = 0;

	if (!x)
		return;
	bpf_map_delete_elem(x->dev_fd, &worker);
	bpf_map_update_elem(x->ifx_fd, &worker, &none, BPF_ANY);
}

_Atomic uint64_t *
xdpctl_fun_press(struct xdp_sbx *x, uint32_t worker)
{
	if (!x->press)
		return NULL;
	atomic_store(&x->press[worker], 0);
	return &x->press[worker];
}
