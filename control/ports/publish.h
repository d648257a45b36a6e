/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread's writes to the state the workers read: which slots are alive, the
 * sandbox address ↔ slot maps, which slots are behind the funnels, the host-port table, the
 * policies and the test clock. This module owns struct dp_shared, the port table and the per-slot
 * counters (allocates, writes, frees them); the workers only read them (and count into their
 * own slots), and nothing else writes them.
 *
 * Memory ordering the workers rely on:
 * - A slot is published in this order: address maps and liveness, counters zeroed, policy,
 *   then its port flag, with a release store (worker_publish()). A worker that acquires the
 *   flag sees everything before it, so no frame from a new sandbox meets a half-published
 *   slot.
 * - ip2slot and the host-port table are release stores read with acquire loads: a slot or
 *   host-port entry seen by the worker is complete.
 * - A policy is swapped in, then its version bumped with a release store; the worker loads
 *   the version (acquire) before the pointer, so a flow that sees the new version sees the
 *   new policy. The old one is freed only after a mailbox round trip with every worker
 *   (WCMD_SYNC): each has finished the loop that might still have read it.
 * - A slot is retired in the reverse order and then flushed (WCMD_FLUSH_ZONE): once every
 *   worker answered, none sends to the slot or holds its sessions, and its map entries and
 *   XDP program may go.
 */
#ifndef CVS_PUBLISH_H
#define CVS_PUBLISH_H

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "dp.h"
#include "policy.h"
#include "registry.h"
#include "worker.h"

struct api_routes;
struct xdp_sbx;
struct xdp_steer;
struct vhport;
struct xskport;

struct publish {
	struct dp_shared *sh;		/* read by every worker */
	struct worker_ports wp;		/* sandbox ports by slot */
	struct cvs_port_stats *slot_st;	/* per slot, written by the worker that owns it */
	uint32_t max_sandboxes;
	uint32_t sandbox_net;		/* network order */
	int ifq_fd;			/* for SIOCGIFINDEX, when ifq_open */
	bool ifq_open;

	/* Set by the owner before the registry uses reg_ops. */
	struct worker *w;		/* nw workers */
	uint32_t nw;
	bool launched;			/* workers answer their mailbox */
	struct xdp_sbx *sbx;		/* the sandbox XDP program */
	struct xdp_steer *steer;	/* NULL without our steering program */
	int world_ifindex;
	const struct dp_cfg *dpc;	/* the node-wide guest addressing, a sandbox's default */
	bool keep_sbx_xdp;		/* at exit: sandbox programs stay for the next process */
	uint32_t sbx_mtu_max;		/* what every funnel carries (funnel_sbx_mtu_max()) */
};

/* Allocate the shared state for max_sandboxes slots of a /prefix sandbox CIDR. 0 or -ENOMEM. */
int publish_init(struct publish *p, uint32_t max_sandboxes, uint32_t sandbox_net,
		 uint8_t prefix);
void publish_fini(struct publish *p);

/*
 * Named writes (see the ordering above). publish_slot() makes slot serve a sandbox at
 * ip (network order) with policy pol; publish_retire_slot() undoes it and returns the
 * sessions the workers removed; publish_policy() swaps a slot's policy. 'id' names the
 * sandbox in the log.
 */
int publish_slot(struct publish *p, uint32_t slot, uint32_t ip, const struct reg_policy *pol,
		 bool funnel, const char *id);
/* The same for a vhost-user port (dataplane/vhport.h). */
int publish_slot_vhost(struct publish *p, uint32_t slot, uint32_t ip,
		       const struct reg_policy *pol, struct vhport *vp, const char *id);
uint32_t publish_retire_slot(struct publish *p, uint32_t slot, uint32_t ip, const char *id);
int publish_policy(struct publish *p, uint32_t slot, const struct reg_policy *pol,
		   const char *id);
/* Host port hport (host order) → (slot, container port cport), or nothing when !add. */
void publish_hostport(struct publish *p, uint16_t hport, uint32_t slot, uint16_t cport,
		      bool add);
/* Move the worker clock forward (--test-clock); returns the new offset in seconds. */
int64_t publish_clock_advance(struct publish *p, int64_t seconds);

/* Run a mailbox command on every worker; sums the results. -ETIMEDOUT if one did not answer. */
int publish_call(struct publish *p, uint32_t cmd, uint32_t arg, uint32_t timeout_ms,
		 uint32_t *sum);

/* What a registration does to the data path: socket, XDP program, the writes above. */
extern const struct reg_ops publish_reg_ops;	/* ctx: struct publish */

/* POST /debug/clock {"advance": seconds} (only with --test-clock). 0 or -errno. */
int publish_api_register(struct api_routes *t, struct publish *p);

#endif /* CVS_PUBLISH_H */
