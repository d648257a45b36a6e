/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A vhost-user sandbox port: the VMM shares the guest's memory and virtio rings over a unix
 * socket and the worker moves frames with DPDK's vhost library (a copy into or out of guest
 * buffers, no system call except the guest's interrupt when it asked for one). Created and
 * destroyed by the control thread (control/ports/vhostctl.c), which also runs the library's device
 * callbacks; between publish and unpublish only the worker that owns the slot calls the
 * per-packet functions below.
 *
 * 'ready' is set once the device runs and cleared before the device goes, followed by a
 * mailbox round trip with the workers, so no worker is inside the library for a vid that is
 * gone. The same moments set and clear the port's bit in the workers' bitmap of running
 * vhost-user slots (worker_ports.vh_running): the worker visits only the ports whose bit is
 * set, so a port without a device costs it one bit per loop.
 */
#ifndef CVS_VHPORT_H
#define CVS_VHPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define VHP_BURST	32u
#define VHP_GUEST_RXQ	0u	/* virtio queue 0: the guest receives, we enqueue */
#define VHP_GUEST_TXQ	1u	/* virtio queue 1: the guest transmits, we dequeue */
#define VHP_PATH_MAX	108u
/*
 * A running port whose guest sent nothing for VHP_IDLE_POLLS polls is marked in the worker's
 * idle bitmap and looked at every VHP_IDLE_EVERY loops only, and then with the library's count
 * of the guest's transmit ring (rte_vhost_rx_queue_count: a lock and two loads) instead of an
 * empty dequeue (tools/bench/vhidle.py, docs/performance.md). A few µs of added latency for
 * the first frame after a pause does not matter; frames towards the guest are not delayed.
 */
#define VHP_IDLE_POLLS	256u
#define VHP_IDLE_EVERY	16u	/* a power of two */

struct rte_mbuf;
struct rte_mempool;

struct vhport {
	_Atomic bool ready;		/* the worker may call the library for vid */
	int vid;			/* the device, valid while ready */
	uint32_t slot;
	struct rte_mempool *mp;		/* our own pool for both directions */
	uint16_t ntx;			/* frames batched for the guest, sent once per loop */
	bool queued;			/* on the worker's list of ports to flush */
	uint16_t idle_polls;		/* empty dequeues in a row (saturates) */
	bool split;			/* split rings: the avail count is meaningful */
	struct vhport *flush_next;
	struct rte_mbuf *tx[VHP_BURST];

	/* Control side only (control/ports/vhostctl.c). */
	char path[VHP_PATH_MAX];
	bool client;			/* we connect to the VMM's socket */
	bool registered;		/* the library knows the path */
	bool dev;			/* a device exists for this port (vid is its id) */
	uint64_t features;		/* negotiated by the running device */
	uint16_t mtu;			/* the MTU its VMM gave the guest (VIRTIO_NET_F_MTU), or 0 */
	struct vhport *next;		/* every port, for the callbacks' lookups */
	_Atomic uint64_t *running;	/* the word of the workers' bitmap with our bit */
	uint64_t running_bit;
};

#endif /* CVS_VHPORT_H */
