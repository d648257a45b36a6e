/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Creation and teardown of vhost-user sandbox ports, and the vhost library's device callbacks
 * (control thread and the library's event thread, never per packet). What the worker does
 * with a running port is in dataplane/worker.c; the port itself is dataplane/vhport.h.
 *
 * A port is a socket path registered with the library: in server mode we listen and the VMM
 * connects (and reconnects after we restart); in client mode we connect to the VMM's socket
 * and the library retries until it exists again. A device (a vid) comes and goes with the
 * VMM, a guest reset and a restart of either side; the port stays.
 */
#ifndef CVS_VHOSTCTL_H
#define CVS_VHOSTCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vhport.h"

/* Lifecycle counters of every vhost-user port: _(field, "name", "help"). */
#define CVS_VHOST_COUNTERS(_) \
	_(connections, "vhost_connections", "vhost-user connections accepted or made") \
	_(disconnects, "vhost_disconnects", "vhost-user connections closed") \
	_(refused, "vhost_refused", \
	  "vhost-user connections closed before a device ran (bad or incomplete negotiation)") \
	_(started, "vhost_devices_started", "vhost-user devices that started running") \
	_(stopped, "vhost_devices_stopped", "vhost-user devices stopped (guest reset, VMM gone)")

struct vhostctl_stats {
#define CVS_VHOST_FIELD(f, n, h) uint64_t f;
	CVS_VHOST_COUNTERS(CVS_VHOST_FIELD)
#undef CVS_VHOST_FIELD
	uint32_t ports;		/* registered with the library */
	uint32_t running;	/* with a running device */
	uint32_t mbufs_in_use;	/* of our vhost pool */
	uint32_t mbufs;		/* size of the pool, 0 before the first port */
};

/* What this module needs from the rest. */
struct vhostctl_hooks {
	/*
	 * Returns once every worker has passed a loop, so none is still inside the library for
	 * a device that is going.
	 */
	void (*sync)(void *ctx);
	/*
	 * A device starts on the port of 'slot': the MTU its VMM gave the guest through
	 * VIRTIO_NET_F_MTU (QEMU's host_mtu), 0 when it gave none (the guest's is then 1500).
	 */
	void (*mtu)(void *ctx, uint32_t slot, uint16_t mtu);
	void *ctx;
};
void vhostctl_set_hooks(const struct vhostctl_hooks *h);

/*
 * A port on path for slot; NULL with err filled. Returns at once: the VMM comes when it comes.
 * While its device runs, bit is set in *running (the workers' bitmap of running slots).
 */
struct vhport *vhostctl_create(const char *path, bool client, uint32_t slot,
			       _Atomic uint64_t *running, uint64_t bit, char *err, size_t errlen);
/* The caller has unpublished vp and synchronised with the workers. */
void vhostctl_destroy(struct vhport *vp);

/*
 * Whether a VMM's device runs on vp, the features it negotiated and the MTU it gave the guest
 * (0 when none runs, or it gave none).
 */
bool vhostctl_port_state(struct vhport *vp, uint64_t *features, uint16_t *mtu);

void vhostctl_stats(struct vhostctl_stats *out);

#endif /* CVS_VHOSTCTL_H */
