/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A TAP's TSO frames (docs/datapath.md, "Offloads"): a VMM with a vnet header hands the kernel
 * one frame of up to 64 KiB with a GSO type and size, which no XDP program can cut and which
 * loses its GSO metadata in XDP. So on a TAP, and only there (a veth's peer loses its
 * segmentation offloads to our XDP program), cvs_sbx_gso runs in TC ingress through a TCX
 * link: cvs_sbx_prog passes it the frames longer than the TAP's MTU, and it sends them out of
 * the worker's funnel, where the kernel's software GSO makes segments of them.
 *
 * The link is pinned beside the XDP link (gso_if<ifindex>) and held by slot, so it stays over
 * a restart as the XDP one does. The map entry that lets cvs_sbx_prog pass a frame is written
 * only after the link is there and removed before it ends: a guest frame never reaches the
 * host's stack without our TC program to take it.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>

#include "xdpgso.h"

/* Kernel 6.6; the headers of Debian 12 are older. */
#ifndef BPF_TCX_INGRESS
#define BPF_TCX_INGRESS		46
#endif
#define XDPGSO_LINK_TYPE_TCX	11

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

int
xdpgso_init(struct xdp_sbx *x, uint32_t n)
{
	uint32_t i;

	x->gso = calloc(n ? n : 1, sizeof(*x->gso));
	if (!x->gso)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		x->gso[i].fd = -1;
	return 0;
}

static bool
xdpgso_path(const char *dir, int ifindex, char *buf, size_t len)
{
	return dir[0] && (size_t)snprintf(buf, len, "%s/gso_if%d", dir, ifindex) < len;
}

/* Whether fd is a TCX link on ifindex (ours: only we pin in our directory). */
static bool
xdpgso_link_on(int fd, int ifindex)
{
	struct bpf_link_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return false;
	/* tcx.ifindex sits where xdp.ifindex does in struct bpf_link_info (6.6). */
	return info.type == XDPGSO_LINK_TYPE_TCX && info.xdp.ifindex == (uint32_t)ifindex;
}

/* The pinned link of ifindex when it is one on that interface; a stale pin goes. */
static int
xdpgso_pinned(const char *dir, int ifindex)
{
	char path[PATH_MAX];
	int fd;

	if (!xdpgso_path(dir, ifindex, path, sizeof(path)))
		return -1;
	fd = bpf_obj_get(path);
	if (fd >= 0 && xdpgso_link_on(fd, ifindex))
		return fd;
	if (fd >= 0)
		close(fd);
	unlink(path);
	return -1;
}

static void
xdpgso_end(const char *dir, int ifindex, int fd)
{
	char path[PATH_MAX];

	bpf_link_detach(fd);
	if (xdpgso_path(dir, ifindex, path, sizeof(path)))
		unlink(path);
	close(fd);
}

/* A restart's link runs the program of the build before: this one's takes over in one step. */
static int
xdpgso_link(struct xdp_sbx *x, int ifindex)
{
	char path[PATH_MAX];
	int fd = xdpgso_pinned(x->pin_dir, ifindex);

	if (fd >= 0)
		return bpf_link_update(fd, x->gso_prog_fd, NULL) ? (close(fd), -errno) : fd;
	fd = bpf_link_create(x->gso_prog_fd, ifindex, BPF_TCX_INGRESS, NULL);
	if (fd < 0)
		return -errno;
	if (xdpgso_path(x->pin_dir, ifindex, path, sizeof(path)) && bpf_obj_pin(fd, path)) {
		close(fd);
		return -errno;
	}
	return fd;
}

int
xdpctl_gso_attach(struct xdp_sbx *x, int ifindex, const char *ifname, uint32_t slot,
		  uint32_t mtu)
{
	uint32_t ifi = (uint32_t)ifindex;
	int fd;

	if (x->gso_prog_fd <= 0 || x->gso_map_fd <= 0 || slot >= x->nlinks)
		return 0;
	if (x->gso[slot].fd < 0 || x->gso[slot].ifindex != ifindex) {
		if (!xdpgso_is_tap(ifname))
			return 0;
		fd = xdpgso_link(x, ifindex);
		/* Before 6.6 (no TCX) those frames stay dropped and counted (sbx_too_big). */
		if (fd < 0)
			return fd;
		x->gso[slot].fd = fd;
		x->gso[slot].ifindex = ifindex;
	}
	return bpf_map_update_elem(x->gso_map_fd, &ifi, &mtu, BPF_ANY) ? -errno : 0;
}

void
xdpctl_gso_detach(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	uint32_t ifi = (uint32_t)ifindex;
	int fd;

	if (x->gso_map_fd <= 0)
		return;
	bpf_map_delete_elem(x->gso_map_fd, &ifi);
	fd = -1;
	if (slot < x->nlinks && x->gso[slot].ifindex == ifindex) {
		fd = x->gso[slot].fd;
		x->gso[slot].fd = -1;
	}
	if (fd < 0)
		fd = xdpgso_pinned(x->pin_dir, ifindex);
	if (fd >= 0)
		xdpgso_end(x->pin_dir, ifindex, fd);
}

/*
 * The pins of links whose interface has no sandbox entry: a crash between the two, or an
 * interface that went. With ifi_fd -1 (a rollback) every link ends, its map entry first.
 */
uint32_t
xdpgso_sweep(const char *dir, int ifi_fd, int gso_map_fd)
{
	DIR *dh = dir[0] ? opendir(dir) : NULL;
	struct cvs_sbx_if v;
	struct dirent *e;
	uint32_t n = 0;
	int ifindex, fd;
	char tail;

	while (dh && (e = readdir(dh))) {
		uint32_t ifi;

		if (sscanf(e->d_name, "gso_if%d%c", &ifindex, &tail) != 1 || ifindex <= 0)
			continue;
		ifi = (uint32_t)ifindex;
		if (ifi_fd >= 0 && !bpf_map_lookup_elem(ifi_fd, &ifi, &v))
			continue;
		if (gso_map_fd >= 0)
			bpf_map_delete_elem(gso_map_fd, &ifi);
		fd = xdpgso_pinned(dir, ifindex);
		if (fd >= 0) {
			xdpgso_end(dir, ifindex, fd);
			n++;
		}
	}
	if (dh)
		closedir(dh);
	return n;
}

/*
 * Pinned, a link stays for the next process. Held only by us (no pin directory) it ends with
 * the fd, and its entry goes first: the program stays attached (rtnetlink) over maps that
 * outlive us, and must not pass a frame that nothing takes.
 */
void
xdpgso_unload(struct xdp_sbx *x)
{
	char path[PATH_MAX];
	uint32_t i, ifi;

	for (i = 0; x->gso && i < x->nlinks; i++) {
		if (x->gso[i].fd < 0)
			continue;
		ifi = (uint32_t)x->gso[i].ifindex;
		if (!xdpgso_path(x->pin_dir, x->gso[i].ifindex, path, sizeof(path)) ||
		    access(path, F_OK))
			bpf_map_delete_elem(x->gso_map_fd, &ifi);
		close(x->gso[i].fd);
	}
	free(x->gso);
	x->gso = NULL;
}

/* A rollback: the release rolled back to has no cvs_sbx_gso; every entry and link goes. */
uint32_t
xdpgso_release(const char *dir)
{
	char path[PATH_MAX];
	uint32_t n;
	int map = -1;

	if ((size_t)snprintf(path, sizeof(path), "%s/sbx_" CVS_MAP_SBX_GSO, dir) < sizeof(path))
		map = bpf_obj_get(path);
	n = xdpgso_sweep(dir, -1, map);
	if (map >= 0)
		close(map);
	return n;
}
