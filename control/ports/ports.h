/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CVS_PORTS_H
#define CVS_PORTS_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "config.h"
#include "dp.h"
#include "worldxsk.h"

/* The EAL names of the ports cubevs-fp creates itself. */
#define WORLD_VDEV	"net_af_xdp_cvs"
#define HOST_VDEV	"net_tap_cvs"

struct ports {
	uint16_t world;		/* the world port */
	uint16_t host;		/* cube-dev, or UINT16_MAX */
	int world_ifindex;	/* its kernel interface, or 0 */
	struct rte_mempool *mp;	/* every port receives into it; for net_af_xdp it is the UMEM */
	struct worldxsk wxsk;	/* the world port's AF_XDP sockets, for their statistics */
};

/*
 * Find the world port (ours on --world-iface, else the first EAL port) and cube-dev among the
 * probed ports, create the mbuf pool, start the world port with cfg->world_queues queues and
 * take its MAC into dpc. On failure 'err' says why.
 */
int ports_world_setup(struct ports *pt, const struct cvs_config *cfg, uint32_t nw,
		      struct dp_cfg *dpc, char *err, size_t errlen);

/* Start cube-dev with a queue per worker and give its kernel side the sandbox gateway. */
int ports_host_setup(struct ports *pt, const struct cvs_config *cfg, uint32_t nw,
		     struct dp_cfg *dpc, char *err, size_t errlen);

#endif
