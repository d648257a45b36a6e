/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The world port's AF_XDP sockets. net_af_xdp owns them and exposes neither their descriptors
 * nor their kernel statistics, yet a TX descriptor the kernel rejects shows nowhere else (the
 * queue then stops sending for good: control/ports/mbufpool.h). AF_XDP has no getsockname() and
 * kernels without CONFIG_XDP_SOCKETS_DIAG no sock_diag for it, so a socket's binding cannot be
 * asked afterwards: the socket that appears among the process's descriptors while the PMD
 * sets up rx queue q is queue q's. Found on the main lcore during the port's setup; read
 * (XDP_STATISTICS) from any thread.
 */
#ifndef CVS_WORLDXSK_H
#define CVS_WORLDXSK_H

#include <pthread.h>
#include <stdint.h>
#include <linux/if_xdp.h>

#include "obs_render.h"

#define WORLDXSK_KNOWN_MAX	64	/* AF_XDP sockets older than the world port's, remembered */

struct worldxsk {
	pthread_mutex_t lock;		/* between a setup and the readers */
	uint32_t n;
	int fd[OBS_WXSK_MAX];		/* in queue order */
	uint64_t ino[OBS_WXSK_MAX];
	uint32_t queue[OBS_WXSK_MAX];
	uint32_t nknown;		/* sockets seen before the queue being set up */
	uint64_t known[WORLDXSK_KNOWN_MAX];
};

void worldxsk_init(struct worldxsk *x);
void worldxsk_fini(struct worldxsk *x);

/* Before the world port's queues are set up: every AF_XDP socket already there is not one. */
void worldxsk_begin(struct worldxsk *x);
/* After rx queue q was set up: the AF_XDP socket that appeared is queue q's. */
void worldxsk_note_queue(struct worldxsk *x, uint32_t q);

/*
 * Socket i's queue id and statistics: 0, -ENOENT past the last one, -ESTALE when its
 * descriptor is no longer that socket, or getsockopt's -errno.
 */
int worldxsk_read(struct worldxsk *x, uint32_t i, uint32_t *queue, struct xdp_statistics *xs);

#endif /* CVS_WORLDXSK_H */
