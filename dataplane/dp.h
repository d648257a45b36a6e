/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-packet pipeline of a worker: parse → classify → conntrack → NAT → L2. It works on one
 * frame in a byte buffer and says where the frame goes; the worker does the I/O. No allocation,
 * no syscalls, no locks.
 */
#ifndef CVS_DP_H
#define CVS_DP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "counters.h"
#include "ct.h"
#include "nhcache.h"
#include "pkt.h"

#define CVS_MAX_SANDBOXES_DEFAULT 4096

/* Zone of the host port (cube-dev); 0 is the world, 1..N the sandboxes. */
#define CVS_ZONE_HOST	0xffffu

/* Addressing shared by all workers; set before the workers start, read-only afterwards. */
struct frag_table;
struct ct6_table;

struct dp_cfg {
	uint32_t node_ip;	/* network order */
	uint32_t guest_ip;
	uint32_t gw_ip;
	uint32_t host_ip;	/* cube-dev address: first address of the sandbox CIDR */
	uint32_t sbx_net;	/* sandbox CIDR */
	uint32_t sbx_mask;
	uint32_t world_net;	/* on-link subnet of the world interface */
	uint32_t world_mask;
	uint16_t snat_lo;	/* host order */
	uint16_t snat_hi;
	uint8_t guest_mac[6];
	uint8_t gw_mac[6];
	uint8_t world_mac[6];
	uint8_t host_mac[6];	/* our side of cube-dev */
	uint8_t host_peer_mac[6];	/* the kernel's side of cube-dev */
	bool have_host;
	bool tcp_liberal;	/* no TCP window tracking (--tcp-liberal) */
	uint16_t world_mtu;	/* IP MTU of the world port (0: not checked) */
	uint16_t host_mtu;	/* IP MTU of cube-dev (0: not checked) */
	/*
	 * IPv6 (issue 34), on when the node has an IPv6 address on the world link (--node-ip6):
	 * guests form addresses in guest_pfx6 (a /64, from our router advertisement) and their
	 * egress leaves from node_ip6 (NAT66, the same SNAT range as IPv4).
	 */
	bool have_ip6;
	uint8_t node_ip6[16];
	uint8_t guest_pfx6[8];
	uint8_t sbx_pfx6[12];	/* host path: a sandbox is sbx_pfx6 + its IPv4 address */
};

/* Egress policy of one sandbox; immutable once published. */
#define DP_POLICY_MAX_CIDRS 256

struct dp_cidr {
	uint32_t net;	/* network order, host bits clear */
	uint32_t mask;
};

/*
 * The IPv6 CIDRs a list may hold beside its IPv4 ones: every sandbox's registry entry keeps
 * room for them (17 bytes each), so fewer than the IPv4 lists' 256.
 */
#define DP_POLICY_MAX_CIDRS6 64

/* Two 64-bit words each, as the address lies in memory: a match is two ANDs and compares. */
struct dp_cidr6 {
	uint64_t net[2];	/* host bits clear */
	uint64_t mask[2];
};

/*
 * The IPv6 lists live right behind the struct, in the same allocation (policy_compile()), and
 * only as long as they are: 'cidr6' holds nallow6 allowed then ndeny6 denied prefixes.
 */
struct dp_policy {
	bool internet;		/* allowInternetAccess */
	uint16_t nallow;
	uint16_t ndeny;
	struct dp_cidr allow[DP_POLICY_MAX_CIDRS];
	struct dp_cidr deny[DP_POLICY_MAX_CIDRS];
	uint16_t nallow6;
	uint16_t ndeny6;
	const struct dp_cidr6 *cidr6;
};

/*
 * Limits of one sandbox, 0 = none: sessions it opened, sessions opened towards it, new
 * sessions it opens per second (a token bucket of 'burst' tokens refilled at 'rate' a
 * second), SNAT ports it holds towards one remote endpoint. 'gen' changes whenever the slot
 * gets limits, so its worker starts the bucket full again for a new sandbox.
 */
struct dp_limit {
	_Atomic uint32_t sessions;
	_Atomic uint32_t inbound;
	_Atomic uint32_t rate;
	_Atomic uint32_t burst;
	_Atomic uint32_t snat;
	_Atomic uint32_t gen;
};

/* A slot's token bucket, owned by the worker of the slot (never shared). */
struct dp_bucket {
	uint32_t tokens;
	uint32_t last;		/* worker clock of the last refill */
	uint32_t gen;		/* dp_limit.gen it was filled for */
};

/*
 * How one sandbox's guest is addressed: its IP, the gateway it routes through and the MAC that
 * gateway answers with. The node-wide --guest-ip/--gateway-ip/--gateway-mac unless the
 * registration gave its own (a CNI pod with an address of its own). Each word is one store, so
 * a frame never sees half an address; the control thread fills them before the slot goes live.
 */
struct dp_guest {
	_Atomic uint64_t addr;		/* guest IP (low 32 bits) | gateway IP << 32, network order */
	_Atomic uint64_t gw_mac;	/* dp_mac_pack() */
};

/*
 * State written by the control thread, read by workers. Host-port entry = (slot + 1) << 16 |
 * container port, 0 when the host port is not registered. Slot-alive flags tell a worker that a
 * sandbox is being removed before its sessions are flushed.
 */
struct dp_shared {
	_Atomic uint32_t hostport[65536];
	_Atomic uint8_t *slot_alive;	/* max_sandboxes entries */
	_Atomic(const struct dp_policy *) *policy;	/* per slot; NULL allows everything */
	_Atomic uint16_t *policy_ver;	/* per slot, bumped on every policy change */
	_Atomic uint16_t *ip2slot;	/* sandbox IP - sbx_net → slot + 1 */
	_Atomic uint32_t *slot_ip;	/* slot → sandbox IP (network order) */
	_Atomic uint64_t *slot_mac;	/* slot → guest MAC, packed by dp_mac_pack() */
	struct dp_guest *guest;		/* slot → the guest's addressing (dp_guest_set()) */
	_Atomic uint16_t *slot_mtu;	/* slot → IP MTU towards the sandbox (0: not checked) */
	struct dp_limit *slot_lim;	/* per slot; NULL: no limits */
	uint32_t ip2slot_size;
	uint32_t max_sandboxes;
	_Atomic int64_t clock_offset;	/* seconds added to the worker clock (tests) */
	struct dp_nh nh;		/* the next-hop cache (nhcache.h) */
	/*
	 * The MAC of the node's IPv6 default router on the world link, dp_mac_pack(), 0 while
	 * unknown: every IPv6 world frame goes there (no on-link IPv6 world destinations yet).
	 */
	_Atomic uint64_t nh6_mac;
	/*
	 * slot → the interface identifier its guest's IPv6 address was seen with (guest6.h),
	 * learnt by the slot's worker from the guest's own frames; 0 while none was (NULL: none
	 * kept), when the guest's address is taken to be the EUI-64 of its MAC.
	 */
	_Atomic uint64_t *slot_iid6;
};

/*
 * A MAC in a 64-bit word, its six bytes in memory order: one atomic store publishes it (a
 * changed guest MAC is never seen half old, half new) and a frame takes it with one copy.
 */
static inline uint64_t
dp_mac_pack(const uint8_t mac[6])
{
	uint64_t v = 0;

	memcpy(&v, mac, 6);
	return v;
}

static inline void
dp_mac_put(uint8_t *dst, uint64_t v)
{
	memcpy(dst, &v, 6);
}

static inline void
dp_guest_set(struct dp_guest *g, uint32_t ip, uint32_t gw_ip, const uint8_t gw_mac[6])
{
	atomic_store_explicit(&g->addr, (uint64_t)gw_ip << 32 | ip, memory_order_relaxed);
	atomic_store_explicit(&g->gw_mac, dp_mac_pack(gw_mac), memory_order_relaxed);
}

static inline uint32_t
dp_guest_ip(const struct dp_shared *sh, uint32_t slot)
{
	return (uint32_t)atomic_load_explicit(&sh->guest[slot].addr, memory_order_relaxed);
}

static inline uint32_t
dp_gw_ip(const struct dp_shared *sh, uint32_t slot)
{
	return (uint32_t)(atomic_load_explicit(&sh->guest[slot].addr, memory_order_relaxed) >> 32);
}

static inline void
dp_gw_mac(const struct dp_shared *sh, uint32_t slot, uint8_t out[6])
{
	dp_mac_put(out, atomic_load_explicit(&sh->guest[slot].gw_mac, memory_order_relaxed));
}

/* The guest MAC a sandbox frame should carry as its source; false when it carries another. */
static inline bool
dp_guest_mac_ok(const struct dp_shared *sh, uint32_t slot, const uint8_t *frame, uint32_t len)
{
	uint64_t src = 0;

	if (len < 12)
		return true;	/* a runt: the parser drops it and counts why */
	memcpy(&src, frame + 6, 6);
	return src == atomic_load_explicit(&sh->slot_mac[slot], memory_order_relaxed);
}

enum dp_action {
	DP_DROP = 0,
	DP_TO_WORLD,
	DP_TO_SANDBOX,
	DP_TO_HOST,
	DP_BACK,	/* answer on the port it came from (ARP proxy, RST) */
	DP_HELD,	/* a fragment kept until its datagram's first fragment comes (frag.h) */
};

struct dp_result {
	uint8_t action;
	uint8_t drop;	/* enum cvs_drop when DP_DROP */
	uint16_t mtu;	/* DP_TO_*: nonzero when the datagram leaves in fragments of this MTU */
	uint32_t slot;	/* DP_TO_SANDBOX */
	uint32_t len;	/* bytes to send from the start of the buffer */
};

/*
 * Whether a result leaves in fragments of r->mtu. Only DP_TO_* results carry an MTU (dp_l2()
 * sets it); for the others the field is whatever the result array held before.
 */
static inline bool
dp_result_split(const struct dp_result *r)
{
	return (r->action == DP_TO_WORLD || r->action == DP_TO_SANDBOX ||
		r->action == DP_TO_HOST) && r->mtu;
}

struct dp_ctx {
	const struct dp_cfg *cfg;
	struct dp_shared *sh;
	struct ct_table *ct;
	struct cvs_stats *st;
	struct dp_nh_reqs *nhreq;
	struct cvs_port_stats *slot_st;	/* per slot (refusals by sandbox), may be NULL */
	struct dp_bucket *bucket;	/* per slot, max_sandboxes entries; NULL: no rate limit */
	uint32_t now;		/* seconds, from the worker's clock */
	uint32_t snat_cursor;	/* where the next SNAT port search starts */
	uint16_t snat_lo;	/* this worker's share of the SNAT range, host order */
	uint16_t snat_hi;
	struct frag_table *frag;	/* fragments' datagrams (frag.h); NULL: fragments dropped */
	struct ct6_table *ct6;	/* IPv6 sessions (ct6.h); NULL: IPv6 dropped */
	bool frag_busy;		/* a fragment went through since the counters were copied */
	bool frag_ready;	/* held fragments were released: dp_frag_release() takes them */
};

#define DP_BURST_MAX 32

/*
 * The burst forms process up to DP_BURST_MAX frames in three stages (parse and hash, then
 * prefetch, then the work) so memory latency overlaps across the burst. Results in r[i].
 */
void dp_world_rx_burst(struct dp_ctx *x, uint8_t *const *frames, const uint32_t *lens,
		       uint32_t n, struct dp_result *r);
void dp_sandbox_rx_burst(struct dp_ctx *x, uint32_t slot, uint8_t *const *frames,
			 const uint32_t *lens, uint32_t n, struct dp_result *r);
void dp_world_rx(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_result *r);
void dp_sandbox_rx(struct dp_ctx *x, uint32_t slot, uint8_t *frame, uint32_t len,
		   struct dp_result *r);
void dp_host_rx(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_result *r);

/*
 * An unsolicited router advertisement for a slot's guest, built in 'f' (NDP_REPLY_ROOM
 * bytes), as the one its router solicitation gets. Returns its length.
 */
uint32_t dp6_ra(struct dp_ctx *x, uint32_t slot, uint8_t *f);
/*
 * The next fragment that its datagram's first fragment released, translated (r says where it
 * goes; the frame is the fragment table's until the next call): its length, 0 when none is
 * left. Call while x->frag_ready.
 */
uint32_t dp_frag_release(struct dp_ctx *x, uint8_t **frame, struct dp_result *r);
/* The fragment table's counters into the worker's (after x->frag_busy, and after expiry). */
void dp_frag_counters(struct dp_ctx *x);

/* Policy verdict for a destination: allow list, then deny list, then allowInternetAccess. */
bool dp_policy_allows(const struct dp_policy *pol, uint32_t daddr);
bool dp_policy_allows6(const struct dp_policy *pol, const uint8_t daddr[16]);

static inline uint32_t
dp_hostport_entry(uint32_t slot, uint16_t cport)
{
	return ((slot + 1) << 16) | cport;
}

#endif /* CVS_DP_H */
