/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker lcore: rx bursts from the world queue (our AF_XDP socket, or an ethdev) and from
 * its sandbox sockets, the pipeline, tx bursts. The control thread talks to it through a one-slot mailbox and reads its counters.
 */
#ifndef CVS_WORKER_H
#define CVS_WORKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "dp.h"
#include "frag.h"
#include "owner.h"
#include "vhport.h"
#include "xskport.h"

struct rte_mempool;
struct rte_ring;

/*
 * Frames of new flows whose next hop is being resolved wait here, as in the kernel's neighbour
 * queue, and are run through the pipeline again until it is known or they are too old.
 */
#define PARK_MAX	64
#define PARK_MS		3000

struct park_entry {
	uint64_t since;		/* TSC */
	uint32_t slot;
	uint32_t len;
	uint8_t data[XSKP_JUMBO_MAX];	/* a jumbo frame too: 64 of them are 590 KiB a worker */
};

enum worker_cmd {
	WCMD_NONE = 0,
	WCMD_FLUSH_ZONE,	/* arg: zone whose sessions go */
	WCMD_SYNC,		/* nothing: returns once the worker passed a loop */
	WCMD_DUMP,		/* ptr: struct ct_dump_req filled from the session table */
};

/*
 * What the workers share: the sandbox ports, indexed by slot, published by control. A slot is
 * an interface behind the funnels (xsk_on) or a vhost-user port, never both; the vhost-user
 * ports have their own bound so a node without them pays nothing for them.
 */
struct worker_ports {
	_Atomic uint8_t *xsk_on;	/* per slot: its interface is attached to the funnels */
	struct vhport *_Atomic *vh;
	_Atomic uint32_t vh_hi;	/* one past the highest vhost-user slot ever published */
	_Atomic uint64_t *vh_running;	/* bit per slot: its vhost-user device runs */
};

/* Kinds of frames handed from one worker to another (in mbuf hash.usr, with the slot). */
enum worker_handoff {
	WH_FROM_WORLD = 1,	/* process as received on the world port */
	WH_FROM_HOST,		/* process as received on cube-dev */
	WH_FROM_SANDBOX,	/* process as received from the sandbox in the low bits */
	WH_TO_SANDBOX,		/* transmit to the sandbox in the low bits */
};

#define WORKER_INBOX	4096

/* Which worker took a fragmented datagram's first fragment (worker_owner()). */
#define WORKER_FOWN_SIZE	256

struct worker_fown {
	uint32_t saddr;		/* IPv6: the source folded (worker_owner6()) */
	uint32_t id;		/* IPv4's 16 bits, IPv6's 32 */
	uint8_t proto;
	uint8_t worker;
};

/*
 * A first fragment handed to another worker in this loop: the fragments of its datagram held
 * here follow it once the loop's bursts are through (worker_frags()), those of its own burst
 * included. More in one loop than this are sent on at once.
 */
#define WORKER_HANDOVERS	32

/*
 * Seconds between the unsolicited router advertisements a slot's guest gets (RFC 4861's
 * MaxRtrAdvInterval default), a third of the router lifetime they give (dp6.c).
 */
#define WORKER_RA_PERIOD	600

struct worker_handover {
	struct frag_key k;
	uint32_t to;
	uint32_t kind;		/* enum worker_handoff */
	uint32_t slot;
};

struct worker {
	struct dp_ctx ctx;
	struct worker_fown fown[WORKER_FOWN_SIZE];
	struct worker_handover hand[WORKER_HANDOVERS];
	uint32_t nhand;
	struct cvs_stats st;
	struct ct_table *ct;
	struct ct6_table *ct6_given;	/* its IPv6 table in the region, or NULL: made at start */
	uint32_t ra_cursor;	/* the next slot worker_ra() looks at */
	uint32_t ra_last;	/* the worker clock at its last call */
	struct rte_mempool *mp;
	uint16_t world_port;	/* the world ethdev, or UINT16_MAX: our own sockets below */
	uint16_t world_queue;	/* rx queue, or UINT16_MAX: more workers than queues */
	uint16_t world_txq;
	void *world_txlock;	/* rte_spinlock_t of a shared tx queue, or NULL */
	struct xskport *wq_rx;	/* our socket of world queue world_queue, or NULL */
	struct xskport *wq_tx;	/* our socket of world queue world_txq, or NULL */
	bool wq_shared;		/* that socket (rx and tx) is on the funnel's UMEM: by descriptor */
	uint32_t test_bad_tx;	/* tests: every n-th world frame an invalid descriptor, 0 never */
	uint16_t host_port;	/* cube-dev (net_tap), or UINT16_MAX */
	uint16_t host_queue;
	unsigned int lcore;
	uint32_t id;		/* this worker: owns slots with slot % nworkers == id */
	uint32_t nworkers;
	struct worker *all;	/* every worker, for handoffs */
	struct rte_ring *inbox;	/* frames other workers hand to this one (MP/SC) */
	struct worker_ports *wp;
	/*
	 * The funnel's socket: frames of every interface sandbox this worker owns come in here,
	 * and every frame towards one of them goes out here (control/ports/funnel.h).
	 */
	struct xskport *fun;
	_Atomic uint64_t *fun_press;	/* this worker's entry of cvs_fun_press, or NULL */
	bool pressed;
	struct dp_nh_reqs nhreq;
	uint32_t idle_sleep_us;	/* 0: poll without pause */
	struct frag_cfg frag_cfg;	/* its fragment table's, made by the lcore (contexts 0: none) */
	uint32_t clock_base;	/* seconds the session clock had when the worker started */

	/* Mailbox: control writes cmd/arg then bumps cmd_seq; the worker echoes it in done_seq. */
	_Atomic uint64_t cmd_seq;
	_Atomic uint64_t done_seq;
	uint32_t cmd;
	uint32_t arg;
	void *cmd_ptr;
	uint32_t cmd_result;
	atomic_flag call_busy;		/* one control-side caller at a time */

	/* Per-slot counters (max_sandboxes entries), zeroed by control before a slot is used. */
	struct cvs_port_stats *slot_st;

	struct vhport *vh_flush;	/* vhost-user ports with frames batched in this loop */
	uint64_t *vh_idle;		/* bit per slot: its guest has been idle (worker-private) */

	struct park_entry *park;	/* PARK_MAX entries */
	uint32_t nparked;

	_Atomic uint64_t loops;
	_Atomic bool quit;
	_Atomic uint32_t sessions;	/* snapshot of ct->used for the control thread */
	/*
	 * The IPv6 table's the same way: its fill each loop, its classes once a second; the
	 * control thread never reads the table itself, which the worker frees when it stops.
	 */
	_Atomic uint32_t sessions6;
	uint32_t capacity6;
	uint32_t cls6[CT_C_MAX];
};

int worker_main(void *arg);

/* What a worker is given at start (control/main.c); worker_init() derives the rest. */
struct worker_conf {
	uint32_t id;
	uint32_t nworkers;
	struct worker *all;		/* every worker, for handoffs */
	struct ct_table *ct;		/* its session table (made, or adopted from the region) */
	struct ct6_table *ct6;		/* its IPv6 table in the region, or NULL */
	uint32_t clock_base;
	struct cvs_port_stats *slot_st;	/* shared by slot, written by each slot's owner */
	struct worker_ports *wp;
	struct rte_mempool *mp;
	uint16_t world_port;		/* UINT16_MAX with world_xsk */
	uint16_t world_queues;		/* receive queues of the world port */
	void *world_txlock;		/* its shared transmit queue's lock, or NULL */
	struct xskport *const *world_xsk;	/* our sockets by world queue, or NULL */
	uint32_t test_bad_tx;
	uint16_t host_port;		/* cube-dev, or UINT16_MAX */
	uint32_t idle_sleep_us;
	struct frag_cfg frag;
	const struct dp_cfg *cfg;
	struct dp_shared *sh;
};

/* Control side, before launch: fill w from c, with its park and its inbox. 0 or -ENOMEM. */
int worker_init(struct worker *w, const struct worker_conf *c);
/*
 * Control side, before launch: w receives and transmits on world socket xp, which shares the
 * UMEM of w's funnel socket (only with a world queue per worker: no shared transmit queue).
 */
void worker_share_world(struct worker *w, struct xskport *xp);

/* What the control thread sums over the workers (worker_sum_add()). */
struct worker_sum {
	struct cvs_stats st;
	uint32_t cls[CT_C_MAX];		/* sessions by class */
	uint32_t sessions;
	uint32_t cls6[CT_C_MAX];	/* the IPv6 table's (0 without --node-ip6) */
	uint32_t sessions6;
	uint32_t capacity6;
	uint32_t capacity;
	uint64_t loops;
};

/* Control side: add worker w's counters to 'sum' (torn reads of a running worker harmless). */
void worker_sum_add(const struct worker *w, struct worker_sum *sum);

/*
 * Control side, what observability reads of one worker (relaxed: exact at rest): a drop
 * count, the loops it has run (acquire: the watchdog), its sessions, the frames it holds
 * until their next hop is known, its funnel socket (NULL without), the mbuf pool the workers
 * share, and the per-slot port counters all workers write into (NULL in tests).
 */
uint64_t worker_drops(const struct worker *w, int reason);
uint64_t worker_loops(const struct worker *w);
uint32_t worker_sessions(const struct worker *w);
uint32_t worker_parked(const struct worker *w);
const struct xskport *worker_funnel(const struct worker *w);
struct rte_mempool *worker_mbufs(const struct worker *w);
const struct cvs_port_stats *worker_slot_stats(const struct worker *w, uint32_t slot);

/* Control side: run a command on the worker and wait for it (up to timeout_ms). */
int worker_call(struct worker *w, uint32_t cmd, uint32_t arg, uint32_t timeout_ms,
		uint32_t *result);
/* Copy a bounded page of sessions (see ct_dump()) on the worker; 'req' must outlive a timeout. */
int worker_dump(struct worker *w, struct ct_dump_req *req, uint32_t timeout_ms);
void worker_publish(struct worker_ports *wp, uint32_t slot, bool on);
void worker_publish_vhost(struct worker_ports *wp, uint32_t slot, struct vhport *vp);

#endif /* CVS_WORKER_H */
