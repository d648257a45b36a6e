/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker's transmit side: a processed frame out where the pipeline said (the world queue,
 * cube-dev, a sandbox behind the funnel or a vhost-user guest, another worker's inbox), in
 * fragments when it is larger than its exit's MTU and may be split. Each leaves as a copy into
 * the buffer of its port; worker.c sends a frame on by descriptor where it can instead.
 * Worker lcore only.
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "frag.h"
#include "mtu.h"
#include "ndp.h"
#include "worker_int.h"

/* Why a frame could not be queued on our socket: too long for it, or no frame or slot free. */
static inline enum cvs_drop
xsk_tx_drop(const struct xskport *xp, uint32_t len)
{
	return len > XSKP_FRAME_SIZE && !xp->sg ? CVS_DROP_TOO_BIG : CVS_DROP_TX_FULL;
}

/*
 * Our world socket: what was queued goes out, what went out comes back. A shared queue's
 * rings are looked at only under its lock: even a peek moves the ring's cached indexes.
 */
static void
world_xsk_flush(struct world_txq *q)
{
	if (q->lock)
		rte_spinlock_lock(q->lock);
	xskport_kick(q->xp);
	xskport_complete(q->xp);
	if (q->lock)
		rte_spinlock_unlock(q->lock);
}

void
world_flush(struct worker *w, struct world_txq *q)
{
	uint16_t sent, i;

	if (q->xp) {
		world_xsk_flush(q);
		return;
	}
	if (!q->n)
		return;
	if (q->lock)
		rte_spinlock_lock(q->lock);
	sent = rte_eth_tx_burst(q->port, q->queue, q->m, q->n);
	if (q->lock)
		rte_spinlock_unlock(q->lock);
	for (i = sent; i < q->n; i++) {
		w->st.drop[CVS_DROP_TX_FULL]++;
		rte_pktmbuf_free(q->m[i]);
	}
	w->st.c[q->pkts] += sent;
	q->n = 0;
}

/* A copy of the frame into a transmit frame of our world socket (under its lock if shared). */
static void
world_xsk_send(struct worker *w, struct world_txq *q, const uint8_t *data, uint32_t len)
{
	struct xskport *xp = q->xp;
	int ret;

	if (q->lock)
		rte_spinlock_lock(q->lock);
	if (unlikely(q->bad_every) && !(++q->bad_n % q->bad_every))
		ret = xskport_tx_invalid(xp, len);
	else if ((ret = xskport_tx(xp, data, len))) {
		xskport_complete(xp);
		ret = xskport_tx(xp, data, len);
	}
	if (q->lock)
		rte_spinlock_unlock(q->lock);
	if (unlikely(ret)) {
		w->st.drop[xsk_tx_drop(xp, len)]++;
		return;
	}
	w->st.c[CVS_WC_FRAMES_COPIED]++;
	w->st.c[q->pkts]++;
	w->st.c[q->bytes] += len;
}

static void
world_send(struct worker *w, struct world_txq *q, const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *m;

	if (q->xp) {
		world_xsk_send(w, q, data, len);
		return;
	}
	m = worker_mbuf(w, data, len);

	if (unlikely(!m))
		return;
	w->st.c[q->bytes] += len;
	q->m[q->n++] = m;
	if (q->n == WORLD_BURST)
		world_flush(w, q);
}

static void
worker_enqueue(struct worker *w, uint32_t to, enum worker_handoff kind, uint32_t slot,
	       struct rte_mbuf *m)
{
	m->hash.usr = ((uint32_t)kind << WH_SHIFT) | slot;
	if (unlikely(rte_ring_mp_enqueue(w->all[to].inbox, m))) {
		w->st.drop[CVS_DROP_HANDOFF_FULL]++;
		rte_pktmbuf_free(m);
		return;
	}
	w->st.c[CVS_WC_HANDOFFS]++;
}

/* Where frag_handover()'s copies go: an mbuf each, into the inbox behind their first. */
struct worker_dest {
	struct worker *w;
	const struct worker_handover *h;
};

static void
worker_send_held(void *arg, const uint8_t *frame, uint32_t len)
{
	struct worker_dest *d = arg;
	struct rte_mbuf *m = worker_mbuf(d->w, frame, len);

	if (m)
		worker_enqueue(d->w, d->h->to, (enum worker_handoff)d->h->kind, d->h->slot, m);
}

/* The fragments held for the datagrams whose first fragment went to another worker. */
void
worker_handovers(struct worker *w)
{
	uint32_t i;

	for (i = 0; i < w->nhand; i++) {
		struct worker_dest d = { w, &w->hand[i] };

		frag_handover(w->ctx.frag, &w->hand[i].k, w->ctx.now, worker_send_held, &d);
	}
	w->nhand = 0;
}

/*
 * Whether m is a first fragment (offset 0, MF), and its datagram's key. Read before m is
 * queued: the other worker may free it at once.
 */
static bool
worker_first_frag(struct worker *w, enum worker_handoff kind, uint32_t slot,
		  const struct rte_mbuf *m, struct frag_key *k)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct ip4_hdr *ip = (const struct ip4_hdr *)(p + ETH_HLEN_);
	const uint8_t *fh = p + ETH_HLEN_ + 40;

	/* IPv6: a first fragment behind a lone Fragment header, keyed as dp_frag.c keys it. */
	if (w->ctx.frag && kind != WH_TO_SANDBOX &&
	    rte_pktmbuf_data_len(m) >= ETH_HLEN_ + 48 &&
	    ((const struct eth_hdr *)p)->type == htons(ETHTYPE_IPV6)) {
		if (p[ETH_HLEN_ + 6] != IP6_NH_FRAGMENT || ((fh[2] << 8 | fh[3]) & 0xfff9) != 1)
			return false;
		memset(k, 0, sizeof(*k));
		memcpy(k->a6, p + ETH_HLEN_ + 8, 32);
		memcpy(&k->id, fh + 4, 4);
		k->v6 = 1;
		k->proto = fh[0];
		k->zone = kind == WH_FROM_WORLD ? 0 : kind == WH_FROM_HOST ? CVS_ZONE_HOST :
			  (uint16_t)(slot + 1);
		return true;
	}
	if (!w->ctx.frag || kind == WH_TO_SANDBOX ||
	    rte_pktmbuf_data_len(m) < ETH_HLEN_ + sizeof(*ip) ||
	    ((const struct eth_hdr *)p)->type != htons(ETHTYPE_IPV4) ||
	    (ip->frag_off & htons(0x3fff)) != htons(0x2000))
		return false;
	memset(k, 0, sizeof(*k));
	k->saddr = ip->saddr;
	k->daddr = ip->daddr;
	k->id = ip->id;
	k->proto = ip->proto;
	k->zone = kind == WH_FROM_WORLD ? 0 : kind == WH_FROM_HOST ? CVS_ZONE_HOST :
		  (uint16_t)(slot + 1);
	return true;
}

/*
 * Give a frame to worker 'to' with its kind and slot. A first fragment is followed by the
 * fragments of its datagram that came here ahead of it (worker_owner() keeps a later fragment
 * of a datagram it does not know where it arrived) once this loop's bursts are through, for
 * some of them may be behind it in its own burst, not held yet: worker_frags() sends them,
 * into the same inbox behind it, so they find their datagram opened there.
 */
void
worker_handoff(struct worker *w, uint32_t to, enum worker_handoff kind, uint32_t slot,
	       struct rte_mbuf *m)
{
	struct worker_handover h = { .to = to, .kind = kind, .slot = slot };
	bool first = worker_first_frag(w, kind, slot, m, &h.k);

	worker_enqueue(w, to, kind, slot, m);
	if (!first)
		return;
	if (w->nhand == WORKER_HANDOVERS)
		worker_handovers(w);
	w->hand[w->nhand++] = h;
	w->ctx.frag_busy = true;
}

void
sandbox_send(struct worker *w, uint32_t slot, const uint8_t *data, uint32_t len)
{
	struct xskport *xp;

	if (unlikely(dp_slot_owner(slot, w->nworkers) != w->id)) {
		/* Another worker owns that socket's rings: it transmits. */
		struct rte_mbuf *m = worker_mbuf(w, data, len);

		if (m)
			worker_handoff(w, dp_slot_owner(slot, w->nworkers), WH_TO_SANDBOX, slot, m);
		return;
	}
	xp = w->fun;
	if (unlikely(!xp || !worker_xsk_on(w, slot))) {
		struct vhport *vp = worker_vhport(w, slot);

		if (vp)
			vhost_send(w, vp, data, len);
		else
			w->st.drop[CVS_DROP_SANDBOX_GONE]++;
		return;
	}
	if (unlikely(xskport_tx_stamped(xp, data, len, slot))) {
		w->st.c[CVS_WC_SBX_TX_RING_FULL]++;
		xskport_complete(xp);
		if (xskport_tx_stamped(xp, data, len, slot)) {
			w->st.drop[xsk_tx_drop(xp, len)]++;
			return;
		}
	}
	w->st.c[CVS_WC_SBX_TX_PKTS]++;
	w->st.c[CVS_WC_SBX_TX_BYTES] += len;
	w->st.c[CVS_WC_FRAMES_COPIED]++;
	if (w->slot_st) {
		w->slot_st[slot].c[CVS_PC_TX_PKTS]++;
		w->slot_st[slot].c[CVS_PC_TX_BYTES] += len;
	}
}

/* One frame out where r says, as it is. */
static void
worker_emit_one(struct worker *w, struct worker_out *o, const struct dp_result *r,
		const uint8_t *data, struct world_txq *back, int back_slot)
{
	switch (r->action) {
	case DP_TO_WORLD:
		world_send(w, &o->world, data, r->len);
		break;
	case DP_TO_HOST:
		if (likely(o->host.port != UINT16_MAX))
			world_send(w, &o->host, data, r->len);
		break;
	case DP_TO_SANDBOX:
		sandbox_send(w, r->slot, data, r->len);
		break;
	case DP_BACK:
		if (back)
			world_send(w, back, data, r->len);
		else
			sandbox_send(w, (uint32_t)back_slot, data, r->len);
		break;
	default:
		break;
	}
}

/*
 * A datagram without DF larger than its exit's MTU leaves in fragments (RFC 791), each sent as
 * its own frame; one that cannot be split (too many pieces for our buffers) is a too_big drop.
 */
#define EMIT_FRAGS_MAX	8

static void
worker_emit_frags(struct worker *w, struct worker_out *o, const struct dp_result *r,
		  const uint8_t *data)
{
	static __thread uint8_t buf[EMIT_FRAGS_MAX][XSKP_JUMBO_MAX];
	uint8_t *outs[EMIT_FRAGS_MAX];
	uint32_t lens[EMIT_FRAGS_MAX], n, i;
	struct dp_result f = *r;

	for (i = 0; i < EMIT_FRAGS_MAX; i++)
		outs[i] = buf[i];
	n = mtu_fragment(data, r->len, r->mtu, outs, EMIT_FRAGS_MAX, XSKP_JUMBO_MAX, lens);
	if (!n) {
		w->st.drop[CVS_DROP_TOO_BIG]++;
		return;
	}
	w->st.c[CVS_WC_FRAGMENTED]++;
	f.mtu = 0;
	for (i = 0; i < n; i++) {
		f.len = lens[i];
		worker_emit_one(w, o, &f, buf[i], NULL, -1);
	}
}

/* Send a processed frame where the pipeline said; 'back' is the port it came from. */
void
worker_emit(struct worker *w, struct worker_out *o, const struct dp_result *r,
	    const uint8_t *data, struct world_txq *back, int back_slot)
{
	if (unlikely(dp_result_split(r))) {
		worker_emit_frags(w, o, r, data);
		return;
	}
	worker_emit_one(w, o, r, data, back, back_slot);
}

/*
 * After frames of fragmented datagrams: the fragments their first fragment released go out
 * (their translation applied), and the fragment table's counters are copied into ours.
 */
void
worker_frags(struct worker *w, struct worker_out *o)
{
	struct dp_result r;
	uint8_t *frame;

	if (w->nhand)
		worker_handovers(w);
	while (w->ctx.frag_ready && dp_frag_release(&w->ctx, &frame, &r))
		worker_emit(w, o, &r, frame, NULL, -1);
	dp_frag_counters(&w->ctx);
}

/* A slot whose guest can take a frame now: its socket bound, or its VMM's device running. */
static bool
worker_slot_up(struct worker *w, uint32_t slot)
{
	struct vhport *vp;

	if (w->fun && worker_xsk_on(w, slot))
		return true;
	vp = worker_vhport(w, slot);
	return vp && vhport_ready(vp);
}

/*
 * A guest asks for a router advertisement only when its link comes up (RFC 4861 6.3.7), and
 * the default route and prefix it took expire; a router advertises again unasked (6.2.4).
 * Every alive slot of this worker whose port is up gets one each WORKER_RA_PERIOD seconds,
 * a slice of the slots each second so they do not all go at once: 8,192 sandboxes make 14
 * frames a second. A guest without IPv6 drops it. A clock that jumps (the test clock) visits
 * as many slices as seconds passed, every slot at most once.
 */
void
worker_ra(struct worker *w)
{
	uint32_t n = w->ctx.sh->max_sandboxes, step = (n + WORKER_RA_PERIOD - 1) / WORKER_RA_PERIOD;
	uint32_t secs = w->ctx.now - w->ra_last, todo, k, slot, len;
	uint8_t f[NDP_REPLY_ROOM];

	w->ra_last = w->ctx.now;
	todo = secs >= WORKER_RA_PERIOD ? n : secs * step;
	for (k = 0; k < todo && n; k++) {
		slot = w->ra_cursor;
		w->ra_cursor = slot + 1 < n ? slot + 1 : 0;
		if (dp_slot_owner(slot, w->nworkers) != w->id ||
		    !atomic_load_explicit(&w->ctx.sh->slot_alive[slot], memory_order_relaxed) ||
		    !worker_slot_up(w, slot))
			continue;
		len = dp6_ra(&w->ctx, slot, f);
		sandbox_send(w, slot, f, len);
		w->st.c[CVS_WC_RA_SENT]++;
	}
}
