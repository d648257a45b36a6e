/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-packet pipeline of a worker: parse → classify → conntrack → NAT → L2. It works on one
 * frame in a byte buffer and says where the frame goes; the worker does the I/O. No allocation,
 * no syscalls, no locks.
 */
#ifndef CVS_DP_H
#define CVS_DP_H

#include <stdatomic.h>
#include <stdint.h>

#include "counters.h"
#include "ct.h"
#include "pkt.h"

#define CVS_MAX_SANDBOXES_DEFAULT 4096

/* Addressing shared by all workers; set before the workers start, read-only afterwards. */
struct dp_cfg {
	uint32_t node_ip;	/* network order */
	uint32_t guest_ip;
	uint32_t gw_ip;
	uint8_t guest_mac[6];
	uint8_t gw_mac[6];
	uint8_t world_mac[6];
};

/*
 * Host-port table written by the control thread, read by workers: entry = (slot + 1) << 16 |
 * container port, 0 when the host port is not registered. Slot-alive flags tell a worker that a
 * sandbox is being removed before its sessions are flushed.
 */
struct dp_shared {
	_Atomic uint32_t hostport[65536];
	_Atomic uint8_t *slot_alive;	/* max_sandboxes entries */
	uint32_t max_sandboxes;
};

enum dp_action {
	DP_DROP = 0,
	DP_TO_WORLD,
	DP_TO_SANDBOX,
	DP_BACK,	/* answer on the port it came from (ARP proxy) */
};

struct dp_result {
	uint8_t action;
	uint8_t drop;	/* enum cvs_drop when DP_DROP */
	uint32_t slot;	/* DP_TO_SANDBOX */
	uint32_t len;	/* bytes to send from the start of the buffer */
};

struct dp_ctx {
	const struct dp_cfg *cfg;
	struct dp_shared *sh;
	struct ct_table *ct;
	struct cvs_stats *st;
	uint32_t now;	/* seconds, from the worker's clock */
};

void dp_world_rx(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_result *r);
void dp_sandbox_rx(struct dp_ctx *x, uint32_t slot, uint8_t *frame, uint32_t len,
		   struct dp_result *r);

/* Rewrite addresses and ports of a parsed IPv4 packet, updating checksums incrementally. */
void nat_rewrite(struct pkt *p, uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport);

static inline uint32_t
dp_hostport_entry(uint32_t slot, uint16_t cport)
{
	return ((slot + 1) << 16) | cport;
}

#endif /* CVS_DP_H */
