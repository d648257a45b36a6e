/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The world queues in --world-iface mode: one AF_XDP socket of ours per queue (xskport.h), bound
 * without loading a program and put into the steering program's xsks_map under its queue id
 * (xdp/xdpsteer.c loaded that program). Worker k receives on queue k (when k < queues) and
 * transmits on queue k mod queues. Since the sockets are ours, their kernel statistics are
 * read from their descriptors, and a restart needs no help from a PMD: the sockets close with
 * the process (the kernel takes them out of the map), the program stays, and the next process
 * binds new ones. Control thread; the statistics may be read from any thread.
 */
#ifndef CVS_WORLDQ_H
#define CVS_WORLDQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/if_xdp.h>

#include "cvs_xdp.h"

struct xskport;

struct worldq {
	uint32_t n;				/* queues, 0 when the world port is an ethdev */
	struct xskport *xp[CVS_XSKS_MAX];	/* by queue id; NULL: to share (worldq_share) */
	int xsks_fd;				/* the steering program's, not ours to close */
	char ifname[16];
	int ifindex;
};

/*
 * A socket on each of queues 0..nq-1 of ifname, each with 'frames' UMEM frames, each into
 * xsks_fd. With 'share' (a worker per queue), a queue whose device cannot bind in zero-copy
 * mode gets no socket yet: worldq_share() puts it on its worker's funnel UMEM, where a copy
 * by the kernel happens anyway and frames can cross to the funnel by descriptor. (A zero-copy
 * queue keeps its own UMEM: sharing would make the kernel copy what the worker no longer
 * does.) 0, or -errno with the reason in err (the sockets made so far are closed).
 */
int worldq_open(struct worldq *q, const char *ifname, int ifindex, uint32_t nq, uint32_t frames,
		int xsks_fd, bool share, char *err, size_t errlen);
/* Queue i's socket on owner's UMEM, 'fill' frames of it in its fill ring. 0 or -errno. */
int worldq_share(struct worldq *q, uint32_t i, struct xskport *owner, uint32_t fill, char *err,
		 size_t errlen);
/* Whether queue i waits for worldq_share(). */
bool worldq_pending(const struct worldq *q, uint32_t i);
void worldq_close(struct worldq *q);

/* Socket i's statistics (its queue is i): 0, -ENOENT past the last one, or -errno. */
int worldq_read(const struct worldq *q, uint32_t i, struct xdp_statistics *xs);

/* The interface's MAC address (0, or -errno) and whether its link is up and running. */
int worldq_mac(const char *ifname, uint8_t mac[6]);
/* The interface's MTU, 0 when it cannot be read. */
uint16_t worldq_mtu(const char *ifname);
bool worldq_link_up(const char *ifname);

#endif /* CVS_WORLDQ_H */
