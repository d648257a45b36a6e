/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the worker's two files share (worker.c: the loop, the world queue, cube-dev, the funnel
 * and the handoffs; worker_vhost.c: the vhost-user ports). Worker lcore only.
 */
#ifndef CVS_WORKER_INT_H
#define CVS_WORKER_INT_H

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "worker.h"

#define WORLD_BURST 32
#define WH_SHIFT 24

/* A tx batch for one ethdev queue (the world port or cube-dev), or a world queue's socket. */
struct world_txq {
	struct rte_mbuf *m[WORLD_BURST];
	uint16_t n;
	uint16_t port;
	uint16_t queue;
	enum cvs_wcounter pkts;
	enum cvs_wcounter bytes;
	rte_spinlock_t *lock;	/* when workers outnumber the port's queues */
	struct xskport *xp;	/* our socket of that world queue: no ethdev, no mbufs */
	uint32_t bad_every;	/* tests only (--test-unpacked-pool) */
	uint32_t bad_n;
};

struct worker_out {
	struct world_txq world;
	struct world_txq host;
};

/* Account a burst of k frames that spent the cycles since t0 in the pipeline. */
static inline void
worker_pipe_account(struct worker *w, uint64_t t0, uint32_t k)
{
	w->st.c[CVS_WC_PIPE_CYCLES] += rte_rdtsc() - t0;
	w->st.c[CVS_WC_PIPE_PKTS] += k;
}

static inline struct vhport *
worker_vhport(struct worker *w, uint32_t slot)
{
	return atomic_load_explicit(&w->wp->vh[slot], memory_order_acquire);
}

static inline bool
vhport_ready(struct vhport *vp)
{
	return atomic_load_explicit(&vp->ready, memory_order_acquire);
}

/*
 * dp_owner() for a frame this worker received, when there are several. A later fragment has
 * no ports to tell its flow by: it goes to the worker its datagram's first fragment went to,
 * remembered here (this worker receives all of a datagram's fragments: a NIC spreads
 * fragments over its queues by addresses alone). One whose first has not come stays here,
 * held, and follows its first when that goes to another worker (worker_handoff()).
 */
/*
 * The same for an IPv6 fragment (its Fragment header right after the fixed one, as dp6.c
 * carries them): the entry holds the source folded to 32 bits and the 32-bit id. A fold that
 * matches another datagram's sends a later fragment to the wrong worker, which holds it
 * until it expires: a datagram lost, nothing leaked.
 */
static inline uint32_t
worker_owner6(struct worker *w, uint32_t to, const uint8_t *p)
{
	const uint8_t *fh = p + ETH_HLEN_ + 40;
	uint32_t a[4], id, fold;
	struct worker_fown *e;

	memcpy(a, p + ETH_HLEN_ + 8, 16);
	memcpy(&id, fh + 4, 4);
	fold = a[0] ^ a[1] ^ a[2] ^ a[3];
	e = &w->fown[(fold ^ id ^ fh[0] ^ (fold >> 16)) % WORKER_FOWN_SIZE];
	if ((fh[2] << 8 | fh[3]) & 0xfff8)
		return e->saddr == fold && e->id == id && e->proto == fh[0] &&
		       e->worker < w->nworkers ? e->worker : w->id;
	e->saddr = fold;
	e->id = id;
	e->proto = fh[0];
	e->worker = (uint8_t)to;
	return to;
}

static inline uint32_t
worker_owner(struct worker *w, enum dp_origin origin, uint32_t slot, const uint8_t *p,
	     uint32_t l)
{
	uint32_t to = dp_owner(w->ctx.cfg, w->ctx.sh, origin, slot, p, l, w->nworkers);
	const struct ip4_hdr *ip = (const struct ip4_hdr *)(p + ETH_HLEN_);
	struct worker_fown *e;

	if (l >= ETH_HLEN_ + 48 && ((const struct eth_hdr *)p)->type == htons(ETHTYPE_IPV6) &&
	    p[ETH_HLEN_ + 6] == IP6_NH_FRAGMENT)
		return worker_owner6(w, to, p);
	if (l < ETH_HLEN_ + sizeof(*ip) || ((const struct eth_hdr *)p)->type !=
	    htons(ETHTYPE_IPV4) || !(ip->frag_off & htons(0x3fff)))
		return to;
	e = &w->fown[(ip->saddr ^ ip->id ^ ip->proto ^ (ip->saddr >> 16)) %
		     WORKER_FOWN_SIZE];
	if (ip->frag_off & htons(0x1fff))
		return e->saddr == ip->saddr && e->id == ip->id && e->proto == ip->proto &&
		       e->worker < w->nworkers ? e->worker : w->id;
	e->saddr = ip->saddr;
	e->id = ip->id;
	e->proto = ip->proto;
	e->worker = (uint8_t)to;
	return to;
}

/* The slot is an interface sandbox, reached through the funnels. */
static inline bool
worker_xsk_on(struct worker *w, uint32_t slot)
{
	return atomic_load_explicit(&w->wp->xsk_on[slot], memory_order_acquire);
}

/* worker_tx.c: the frame out where r says ('back': the port it came from), in fragments when
 * it must; what a world queue or cube-dev has queued goes out; a copy to a sandbox's port. */
void worker_emit(struct worker *w, struct worker_out *o, const struct dp_result *r,
		 const uint8_t *data, struct world_txq *back, int back_slot);
void world_flush(struct worker *w, struct world_txq *q);
void sandbox_send(struct worker *w, uint32_t slot, const uint8_t *data, uint32_t len);
/* Once a second with --node-ip6: the unsolicited router advertisements due (worker_tx.c). */
void worker_ra(struct worker *w);
/* After fragmented datagrams: the fragments their first fragment released go out, and those
 * held for a first fragment handed to another worker follow it (worker_handovers()). */
void worker_frags(struct worker *w, struct worker_out *o);
void worker_handovers(struct worker *w);
/* Give a frame to worker 'to' with its kind and slot. */
void worker_handoff(struct worker *w, uint32_t to, enum worker_handoff kind, uint32_t slot,
		    struct rte_mbuf *m);

/* worker_jumbo.c. The worker's buffer for a frame longer than one UMEM frame or mbuf. */
uint8_t *worker_jumbo_buf(void);
/* A fresh mbuf of pool mp holding a copy of the frame, chained when long, or NULL (counted). */
struct rte_mbuf *worker_mbuf_of(struct worker *w, struct rte_mempool *mp, const uint8_t *data,
				uint32_t len);
/* An mbuf's frame in one piece: its data, or a chain's copied into the jumbo buffer; NULL. */
uint8_t *worker_mbuf_data(struct worker *w, struct rte_mbuf *m, uint32_t *len);

static inline struct rte_mbuf *
worker_mbuf(struct worker *w, const uint8_t *data, uint32_t len)
{
	return worker_mbuf_of(w, w->mp, data, len);
}

/* Hold a guest frame until its next hop is known. */
void worker_park(struct worker *w, uint32_t slot, const uint8_t *data, uint32_t len);

/* worker_vhost.c: a frame batched for a guest, the batches sent, the running guests polled. */
void vhost_send(struct worker *w, struct vhport *vp, const uint8_t *data, uint32_t len);
void vhost_flush_all(struct worker *w);
uint32_t worker_vhost_poll(struct worker *w, struct worker_out *o, uint32_t vh_hi,
			   uint64_t loop);

#endif /* CVS_WORKER_INT_H */
