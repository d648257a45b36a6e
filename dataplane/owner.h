/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which worker processes a frame, with several workers. Each worker owns the sessions of its
 * sandboxes (slot % n) and of its share of the SNAT range, so every session table has a single
 * writer; a frame that arrives at another worker is handed to its owner. Per packet: each
 * worker asks dp_owner() of every frame it receives when there is more than one worker.
 */
#ifndef CVS_OWNER_H
#define CVS_OWNER_H

#include <stdint.h>

#include "dp.h"

/* Where a frame came from, for dp_owner(). */
enum dp_origin {
	DP_FROM_WORLD = 0,
	DP_FROM_HOST,
	DP_FROM_SANDBOX,
};

/* The worker that owns sandbox slot 'slot': its sessions and the rings of its socket. */
static inline uint32_t
dp_slot_owner(uint32_t slot, uint32_t nworkers)
{
	return slot % nworkers;
}

/*
 * The worker whose SNAT share holds 'port' (host order), the k with share k = [lo + span*k/n,
 * lo + span*(k+1)/n - 1], rounding as dp_snat_share(); *in false (and 0) outside [lo, hi].
 */
static inline uint32_t
dp_snat_owner(uint16_t lo, uint16_t hi, uint32_t port, uint32_t nworkers, bool *in)
{
	uint32_t span = (uint32_t)hi - lo + 1;

	*in = port >= lo && port <= hi;
	return *in ? (uint32_t)(((uint64_t)(port - lo + 1) * nworkers - 1) / span) : 0;
}

/*
 * The owning worker of a frame that arrived from 'origin' (with its slot for sandbox frames).
 * Stateless: ports and addresses only, so it runs before the frame's session is looked up.
 */
uint32_t dp_owner(const struct dp_cfg *c, struct dp_shared *sh, enum dp_origin origin,
		  uint32_t slot, const uint8_t *frame, uint32_t len, uint32_t nworkers);

/* Worker k's share [*lo, *hi] of the SNAT range (set up once, before the workers start). */
void dp_snat_share(const struct dp_cfg *c, uint32_t k, uint32_t nworkers, uint16_t *lo,
		   uint16_t *hi);

#endif /* CVS_OWNER_H */
