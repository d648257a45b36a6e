/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user ports through DPDK's vhost library (not net_vhost ethdevs, which stop at
 * RTE_MAX_ETHPORTS). The library's event thread runs the device callbacks below; the control
 * thread creates and destroys ports. Both take vh.lock, never while calling into the library
 * (rte_vhost_driver_unregister() runs destroy_device itself).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_vhost.h>

#include "log.h"
#include "vhostctl.h"

/*
 * One pool for every vhost-user port: guest frames are dequeued into it and frames for guests
 * are copied into it, so an idle port holds no mbufs at all.
 */
#define VH_POOL_MBUFS	8191u
#define VH_POOL_CACHE	256u

/*
 * What we let the guest negotiate. The pipeline rewrites complete frames and updates their
 * checksums incrementally, so a guest must send complete checksums (no CSUM) and frames of at
 * most one MTU (no TSO/UFO/ECN); frames we send are complete and checksummed, so the guest
 * needs no GUEST_* offload either. One queue pair: the worker polls queue 0 and 1 only.
 * Mergeable receive buffers stay: the library fills several guest buffers for one frame.
 */
#define VH_FEATURES_OFF \
	((1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) | \
	 (1ULL << VIRTIO_NET_F_HOST_TSO4) | (1ULL << VIRTIO_NET_F_HOST_TSO6) | \
	 (1ULL << VIRTIO_NET_F_HOST_ECN) | (1ULL << VIRTIO_NET_F_HOST_UFO) | \
	 (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6) | \
	 (1ULL << VIRTIO_NET_F_GUEST_ECN) | (1ULL << VIRTIO_NET_F_GUEST_UFO) | \
	 (1ULL << VIRTIO_NET_F_MQ))

#define VH_F_RING_PACKED	34	/* virtio 1.1 VIRTIO_F_RING_PACKED */

static struct {
	pthread_mutex_t lock;
	struct vhport *ports;
	struct rte_mempool *mp;
	struct vhostctl_hooks hooks;
	struct vhostctl_stats st;
	bool ran[RTE_MAX_VHOST_DEVICE];	/* per vid: a device ran on this connection */
} vh = { .lock = PTHREAD_MUTEX_INITIALIZER };

void
vhostctl_set_hooks(const struct vhostctl_hooks *h)
{
	vh.hooks = *h;
}

/* The port of a vid, by its socket path; vh.lock held. */
static struct vhport *
vh_find(int vid)
{
	char path[VHP_PATH_MAX];
	struct vhport *vp;

	if (rte_vhost_get_ifname(vid, path, sizeof(path)))
		return NULL;
	for (vp = vh.ports; vp; vp = vp->next)
		if (!strcmp(vp->path, path))
			return vp;
	return NULL;
}

static int
vh_new_connection(int vid)
{
	pthread_mutex_lock(&vh.lock);
	vh.st.connections++;
	if (vid >= 0 && vid < RTE_MAX_VHOST_DEVICE)
		vh.ran[vid] = false;
	pthread_mutex_unlock(&vh.lock);
	return 0;
}

static void
vh_destroy_connection(int vid)
{
	char path[VHP_PATH_MAX] = "?";

	rte_vhost_get_ifname(vid, path, sizeof(path));
	pthread_mutex_lock(&vh.lock);
	vh.st.disconnects++;
	if (vid >= 0 && vid < RTE_MAX_VHOST_DEVICE && !vh.ran[vid]) {
		vh.st.refused++;
		CVS_LOG(WARNING, ctl, "vhost-user %s: connection closed before the device ran "
			"(refused or incomplete negotiation)", path);
	}
	pthread_mutex_unlock(&vh.lock);
}

static int
vh_new_device(int vid)
{
	uint64_t features = 0;
	struct vhport *vp;
	uint16_t mtu = 0;
	int ret = -1;

	rte_vhost_get_negotiated_features(vid, &features);
	/* -ENOTSUP without VIRTIO_NET_F_MTU, -EAGAIN when the VMM sent no MTU. */
	if (rte_vhost_get_mtu(vid, &mtu))
		mtu = 0;
	pthread_mutex_lock(&vh.lock);
	vp = vh_find(vid);
	if (vp && vp->dev) {
		/* A second connection on a server socket: the first VMM keeps the port. */
		CVS_LOG(WARNING, ctl, "vhost-user %s: a device already runs, refusing vid %d",
			vp->path, vid);
	} else if (vp && (features & VH_FEATURES_OFF)) {
		CVS_LOG(ERR, ctl, "vhost-user %s: offloads negotiated despite being disabled "
			"(features %#llx)", vp->path, (unsigned long long)features);
	} else if (vp) {
		/* We poll: the guest need not kick us (a VM exit per kick saved). */
		rte_vhost_enable_guest_notification(vid, VHP_GUEST_RXQ, 0);
		rte_vhost_enable_guest_notification(vid, VHP_GUEST_TXQ, 0);
		vp->vid = vid;
		vp->dev = true;
		vp->features = features;
		/* Packed rings have no avail index to count: always dequeue for those. */
		vp->split = !(features & (1ULL << VH_F_RING_PACKED));
		vp->idle_polls = 0;
		vp->mtu = mtu;
		/* Before the workers see it run: its first frame is measured at its MTU. */
		if (vh.hooks.mtu)
			vh.hooks.mtu(vh.hooks.ctx, vp->slot, mtu);
		if (vid >= 0 && vid < RTE_MAX_VHOST_DEVICE)
			vh.ran[vid] = true;
		vh.st.started++;
		vh.st.running++;
		atomic_store_explicit(&vp->ready, true, memory_order_release);
		atomic_fetch_or_explicit(vp->running, vp->running_bit, memory_order_release);
		CVS_LOG(INFO, ctl, "vhost-user %s: device %d running (slot %u, features %#llx, "
			"MTU %u%s)", vp->path, vid, vp->slot, (unsigned long long)features,
			mtu ? mtu : 1500, mtu ? " from the VMM" : "");
		ret = 0;
	}
	pthread_mutex_unlock(&vh.lock);
	return ret;
}

static void
vh_destroy_device(int vid)
{
	struct vhport *vp;

	pthread_mutex_lock(&vh.lock);
	vp = vh_find(vid);
	if (vp && vp->dev && vp->vid == vid) {
		atomic_fetch_and(vp->running, ~vp->running_bit);
		atomic_store_explicit(&vp->ready, false, memory_order_release);
		/* After this no worker is inside the library for vid: its memory may go. */
		if (vh.hooks.sync)
			vh.hooks.sync(vh.hooks.ctx);
		vp->dev = false;
		vh.st.stopped++;
		vh.st.running--;
		CVS_LOG(INFO, ctl, "vhost-user %s: device %d stopped", vp->path, vid);
	}
	pthread_mutex_unlock(&vh.lock);
}

static const struct rte_vhost_device_ops vh_ops = {
	.new_device = vh_new_device,
	.destroy_device = vh_destroy_device,
	.new_connection = vh_new_connection,
	.destroy_connection = vh_destroy_connection,
};

/* A server socket left by an instance that died: ours to replace, anything else is not. */
static int
vh_prepare_path(const char *path, bool client, char *err, size_t errlen)
{
	char dir[VHP_PATH_MAX], *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0750) && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
			return -errno;
		}
	}
	if (client || lstat(path, &st))
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket", path);
		return -EEXIST;
	}
	unlink(path);
	return 0;
}

static int
vh_pool(char *err, size_t errlen)
{
	if (vh.mp)
		return 0;
	vh.mp = rte_pktmbuf_pool_create("cvs_vhost", VH_POOL_MBUFS, VH_POOL_CACHE, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (!vh.mp) {
		snprintf(err, errlen, "cannot create the vhost-user mbuf pool: %s (raise -m)",
			 rte_strerror(rte_errno));
		return -ENOMEM;
	}
	vh.st.mbufs = VH_POOL_MBUFS;
	return 0;
}

static int
vh_register(struct vhport *vp, char *err, size_t errlen)
{
	if (rte_vhost_driver_register(vp->path, vp->client ? RTE_VHOST_USER_CLIENT : 0)) {
		snprintf(err, errlen, "vhost-user %s: the vhost library refused the socket",
			 vp->path);
		return -EINVAL;
	}
	vp->registered = true;
	if (rte_vhost_driver_disable_features(vp->path, VH_FEATURES_OFF) ||
	    rte_vhost_driver_callback_register(vp->path, &vh_ops)) {
		snprintf(err, errlen, "vhost-user %s: cannot set features or callbacks", vp->path);
		return -EINVAL;
	}
	/* Linked before start: a VMM may connect at once. */
	pthread_mutex_lock(&vh.lock);
	vp->next = vh.ports;
	vh.ports = vp;
	vh.st.ports++;
	pthread_mutex_unlock(&vh.lock);
	if (rte_vhost_driver_start(vp->path)) {
		snprintf(err, errlen, "vhost-user %s: cannot %s the socket", vp->path,
			 vp->client ? "start connecting to" : "listen on");
		return -EIO;
	}
	return 0;
}

struct vhport *
vhostctl_create(const char *path, bool client, uint32_t slot, _Atomic uint64_t *running,
		uint64_t bit, char *err, size_t errlen)
{
	struct vhport *vp;
	int ret;

	ret = vh_pool(err, errlen);
	if (!ret)
		ret = vh_prepare_path(path, client, err, errlen);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	vp = calloc(1, sizeof(*vp));
	if (!vp) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	snprintf(vp->path, sizeof(vp->path), "%s", path);
	vp->client = client;
	vp->slot = slot;
	vp->running = running;
	vp->running_bit = bit;
	vp->mp = vh.mp;
	vp->vid = -1;
	ret = vh_register(vp, err, errlen);
	if (ret) {
		vhostctl_destroy(vp);
		errno = -ret;
		return NULL;
	}
	return vp;
}

void
vhostctl_destroy(struct vhport *vp)
{
	struct vhport **pp;
	uint16_t i;

	if (!vp)
		return;
	pthread_mutex_lock(&vh.lock);
	for (pp = &vh.ports; *pp; pp = &(*pp)->next)
		if (*pp == vp) {
			*pp = vp->next;
			vh.st.ports--;
			break;
		}
	if (vp->dev) {
		/* Unlinked: the library's destroy_device will not find it, so count it here. */
		atomic_fetch_and(vp->running, ~vp->running_bit);
		atomic_store(&vp->ready, false);
		vp->dev = false;
		vh.st.stopped++;
		vh.st.running--;
	}
	pthread_mutex_unlock(&vh.lock);
	/* Closes the connection and runs destroy_device; in server mode it removes the socket. */
	if (vp->registered && rte_vhost_driver_unregister(vp->path))
		CVS_LOG(ERR, ctl, "vhost-user %s: the vhost library kept the socket", vp->path);
	/* Frames batched for the guest when the slot was retired. */
	for (i = 0; i < vp->ntx; i++)
		rte_pktmbuf_free(vp->tx[i]);
	free(vp);
}

bool
vhostctl_port_state(struct vhport *vp, uint64_t *features, uint16_t *mtu)
{
	bool dev;

	pthread_mutex_lock(&vh.lock);
	dev = vp->dev;
	*features = dev ? vp->features : 0;
	*mtu = dev ? vp->mtu : 0;
	pthread_mutex_unlock(&vh.lock);
	return dev;
}

void
vhostctl_stats(struct vhostctl_stats *out)
{
	pthread_mutex_lock(&vh.lock);
	*out = vh.st;
	pthread_mutex_unlock(&vh.lock);
	out->mbufs_in_use = vh.mp ? rte_mempool_in_use_count(vh.mp) : 0;
}
