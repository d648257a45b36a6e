/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A TAP's TSO frames (docs/datapath.md, "Offloads"): a VMM with a vnet header hands the kernel
 * one frame of up to 64 KiB with a GSO type and size, which no XDP program can cut and which
 * loses its GSO metadata in XDP. So on a TAP, and only there (a veth's peer loses its
 * segmentation offloads to our XDP program), cvs_sbx_gso runs at TC ingress: cvs_sbx_prog
 * passes it the frames longer than the TAP's MTU, and it sends them out of the worker's
 * funnel, where the kernel's software GSO makes segments of them.
 *
 * A filter of a clsact qdisc, not a TCX link: attaching a TCX link waits for an RCU grace
 * period under RTNL (13-14 ms a TAP here, detaching 10-12 ms), which made a TAP's PUT 20
 * times slower and queued every concurrent one behind it; a filter costs 0.1 ms. It lives on
 * the device, so it stays over a restart by itself, and the next process replaces it with
 * its own program in one step. Ours is the filter at CVS_GSO_HANDLE / CVS_GSO_PRIO; another
 * program there is left alone (its TAP's TSO frames stay dropped and counted).
 *
 * The map entry that lets cvs_sbx_prog pass a frame (cvs_gso_mtu: ifindex -> the TAP's MTU,
 * and whether we made the clsact qdisc) is written only after the filter is there and
 * removed before it goes: a guest frame never reaches the host's stack without our program
 * to take it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpgso.h"

#define CVS_GSO_HANDLE	0xcf5b
#define CVS_GSO_PRIO	0xcf5b
/* In a cvs_gso_mtu value beside the MTU: the clsact qdisc is ours to remove. */
#define CVS_GSO_OWN_QDISC	0x80000000u

/* Whether ifname is a TAP: its driver is tun (a TUN device has no Ethernet, no sandbox). */
static bool
xdpgso_is_tap(const char *ifname)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool tap;

	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&di;
	tap = !ioctl(fd, SIOCETHTOOL, &ifr) && !strcmp(di.driver, "tun");
	close(fd);
	return tap;
}

/*
 * The program of the filter at our handle and priority: 1 ours, -1 someone else's, 0 none
 * that libbpf can read (nothing, or a classic BPF filter).
 */
static int
xdpgso_filter(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = CVS_GSO_HANDLE, .priority = CVS_GSO_PRIO);
	char name[BPF_OBJ_NAME_LEN];

	if (bpf_tc_query(&hook, &tc) || !tc.prog_id)
		return 0;
	return !xdpctl_prog_name(tc.prog_id, name, sizeof(name)) &&
	       !strcmp(name, CVS_PROG_SBX_GSO) ? 1 : -1;
}

/*
 * Our filter on ifindex (the clsact qdisc made when it has none). An exclusive attach first:
 * on a new TAP it is all there is to do (two netlink requests). A filter in its place is
 * ours of another process (a restart), replaced in one step, or anything else, which stays
 * (-EBUSY).
 */
static int
xdpgso_filter_add(const struct xdp_sbx *x, int ifindex, bool *own_qdisc)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = CVS_GSO_HANDLE, .priority = CVS_GSO_PRIO,
		    .prog_fd = x->gso_prog_fd);
	int ret = bpf_tc_hook_create(&hook);
	bool made = !ret;

	if (ret && ret != -EEXIST)
		return ret;
	ret = bpf_tc_attach(&hook, &tc);
	if (ret == -EEXIST) {
		if (xdpgso_filter(ifindex) <= 0)
			return -EBUSY;
		tc.flags = BPF_TC_F_REPLACE;
		tc.prog_id = 0;
		ret = bpf_tc_attach(&hook, &tc);
	}
	if (ret && made) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	*own_qdisc |= made && !ret;
	return ret;
}

/* Our filter off ifindex, and the clsact qdisc when we made it. */
static void
xdpgso_filter_del(int ifindex, bool own_qdisc)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tc, .handle = CVS_GSO_HANDLE, .priority = CVS_GSO_PRIO);

	if (xdpgso_filter(ifindex) > 0)
		bpf_tc_detach(&hook, &tc);
	if (own_qdisc) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
}

int
xdpctl_gso_attach(struct xdp_sbx *x, int ifindex, const char *ifname, uint32_t mtu)
{
	uint32_t ifi = (uint32_t)ifindex, v;
	bool own = false;
	int ret;

	if (x->gso_prog_fd <= 0 || x->gso_map_fd <= 0)
		return 0;
	/* Again for a TAP that has it (an MTU change, a restart): the MTU, the owner kept. */
	if (!bpf_map_lookup_elem(x->gso_map_fd, &ifi, &v)) {
		own = v & CVS_GSO_OWN_QDISC;
	} else if (!xdpgso_is_tap(ifname)) {
		return 0;
	}
	ret = xdpgso_filter_add(x, ifindex, &own);
	if (ret)
		return ret;
	v = (mtu & 0xffff) | (own ? CVS_GSO_OWN_QDISC : 0);
	return bpf_map_update_elem(x->gso_map_fd, &ifi, &v, BPF_ANY) ? -errno : 0;
}

/* The entry first: from then on cvs_sbx_prog passes the TAP no frame; then the filter. */
static void
xdpgso_detach_fd(int map_fd, int ifindex)
{
	uint32_t ifi = (uint32_t)ifindex, v;

	if (bpf_map_lookup_elem(map_fd, &ifi, &v))
		return;
	bpf_map_delete_elem(map_fd, &ifi);
	xdpgso_filter_del(ifindex, v & CVS_GSO_OWN_QDISC);
}

void
xdpctl_gso_detach(struct xdp_sbx *x, int ifindex)
{
	if (x->gso_map_fd > 0)
		xdpgso_detach_fd(x->gso_map_fd, ifindex);
}

struct xdpgso_walk {
	int map_fd, ifi_fd;	/* ifi_fd -1: every entry goes */
	uint32_t n;
};

static bool
xdpgso_visit(void *arg, const void *key)
{
	struct xdpgso_walk *w = arg;
	struct cvs_sbx_if v;

	return w->ifi_fd < 0 || bpf_map_lookup_elem(w->ifi_fd, key, &v);
}

static void
xdpgso_drop(void *arg, const void *key)
{
	struct xdpgso_walk *w = arg;

	xdpgso_detach_fd(w->map_fd, (int)*(const uint32_t *)key);
	w->n++;
}

uint32_t
xdpgso_sweep(int map_fd, int ifi_fd)
{
	struct xdpgso_walk g = { .map_fd = map_fd, .ifi_fd = ifi_fd };
	struct xdpctl_walk w = { .visit = xdpgso_visit, .drop = xdpgso_drop, .arg = &g };

	if (map_fd <= 0)
		return 0;
	xdpctl_map_walk(map_fd, sizeof(uint32_t), &w);
	return g.n;
}

uint32_t
xdpgso_release(const char *dir)
{
	char path[512];
	uint32_t n = 0;
	int map = -1;

	if ((size_t)snprintf(path, sizeof(path), "%s/sbx_" CVS_MAP_SBX_GSO, dir) < sizeof(path))
		map = bpf_obj_get(path);
	if (map >= 0) {
		n = xdpgso_sweep(map, -1);
		close(map);
	}
	return n;
}
