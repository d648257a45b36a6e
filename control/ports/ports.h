/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CVS_PORTS_H
#define CVS_PORTS_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "config.h"
#include "dp.h"
#include "worldq.h"

/* The EAL name of the port cubevs-fp creates itself. */
#define HOST_VDEV	"net_tap_cvs"

struct ports {
	uint16_t world;		/* the world ethdev, or UINT16_MAX: our own sockets (wq) */
	uint16_t host;		/* cube-dev, or UINT16_MAX */
	int world_ifindex;	/* its kernel interface, or 0 */
	struct rte_mempool *mp;	/* the ethdevs receive into it; for net_af_xdp it is the UMEM */
	struct worldq wq;	/* --world-iface: the world queues' sockets */
};

/*
 * Find cube-dev among the probed ports, create the mbuf pool and take the world port's MAC
 * into dpc. With --world-iface the world queues are our own sockets (ports_world_steer());
 * else the first EAL port is the world port, started with cfg->world_queues queues. On
 * failure 'err' says why.
 */
int ports_world_setup(struct ports *pt, const struct cvs_config *cfg, uint32_t nw,
		      struct dp_cfg *dpc, char *err, size_t errlen);
/*
 * --world-iface: our steering program onto the interface (xdpctl_steer_load(), its maps
 * pinned in pin_dir, "" for none), configured, then a socket of ours bound to each world queue
 * and steered to; with 'share' (a worker per queue) the queues that cannot run zero-copy wait
 * for their worker's funnel UMEM (worldq_share()). Logged; 0 or -errno (then nothing of it
 * stays open).
 */
struct xdp_steer;
int ports_world_steer(struct ports *pt, const struct cvs_config *cfg, struct xdp_steer *s,
		      const char *pin_dir, bool share);

/* Start cube-dev with a queue per worker and give its kernel side the sandbox gateway. */
int ports_host_setup(struct ports *pt, const struct cvs_config *cfg, uint32_t nw,
		     struct dp_cfg *dpc, char *err, size_t errlen);

#endif
