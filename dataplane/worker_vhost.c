/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker's vhost-user ports (docs/datapath.md, "vhost-user sandbox ports"): frames from a
 * guest's transmit ring through the sandbox pipeline, frames batched for a guest's receive
 * ring, and the bitmap walk that keeps idle guests almost free.
 */
#include <rte_vhost.h>

#include "worker_int.h"

/*
 * Copy the frames batched for a guest into its receive buffers (one library call, at most
 * one interrupt for the burst). What finds no guest buffer is dropped: a guest that does not
 * read must not hold our mbufs.
 */
static void
vhost_flush(struct worker *w, struct vhport *vp)
{
	uint16_t sent = 0, i;
	uint64_t bytes = 0;

	if (likely(vhport_ready(vp)))
		sent = rte_vhost_enqueue_burst(vp->vid, VHP_GUEST_RXQ, vp->tx, vp->ntx);
	else
		w->st.drop[CVS_DROP_VHOST_DOWN] += vp->ntx;
	for (i = 0; i < vp->ntx; i++) {
		if (i < sent)
			bytes += rte_pktmbuf_data_len(vp->tx[i]);
		rte_pktmbuf_free(vp->tx[i]);
	}
	if (vhport_ready(vp))
		w->st.drop[CVS_DROP_TX_FULL] += vp->ntx - sent;
	w->st.c[CVS_WC_SBX_TX_PKTS] += sent;
	w->st.c[CVS_WC_SBX_TX_BYTES] += bytes;
	/* The library copied each frame it took into a guest buffer. */
	w->st.c[CVS_WC_FRAMES_COPIED] += sent;
	if (w->slot_st) {
		w->slot_st[vp->slot].c[CVS_PC_TX_PKTS] += sent;
		w->slot_st[vp->slot].c[CVS_PC_TX_BYTES] += bytes;
	}
	vp->ntx = 0;
}

void
vhost_send(struct worker *w, struct vhport *vp, const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *m;

	if (unlikely(!vhport_ready(vp))) {
		w->st.drop[CVS_DROP_VHOST_DOWN]++;
		return;
	}
	m = worker_mbuf_of(w, vp->mp, data, len);
	if (unlikely(!m))
		return;
	if (!vp->queued) {
		vp->queued = true;
		vp->flush_next = w->vh_flush;
		w->vh_flush = vp;
	}
	vp->tx[vp->ntx++] = m;
	if (vp->ntx == VHP_BURST)
		vhost_flush(w, vp);
}

/* Once per loop, before the mailbox: a retired port is never left on the list. */
void
vhost_flush_all(struct worker *w)
{
	while (w->vh_flush) {
		struct vhport *vp = w->vh_flush;

		w->vh_flush = vp->flush_next;
		vp->queued = false;
		if (vp->ntx)
			vhost_flush(w, vp);
	}
}

/* k frames of a guest through the pipeline, out, and their mbufs freed. */
static void
vhost_rx_batch(struct worker *w, struct vhport *vp, struct worker_out *o,
	       struct rte_mbuf **keep, uint8_t **data, uint32_t *len, uint32_t k)
{
	struct dp_result res[VHP_BURST];
	uint64_t t = rte_rdtsc();
	uint32_t i;

	if (!k)
		return;
	dp_sandbox_rx_burst(&w->ctx, vp->slot, data, len, k, res);
	worker_pipe_account(w, t, k);
	for (i = 0; i < k; i++) {
		if (unlikely(res[i].action == DP_DROP && res[i].drop == CVS_DROP_NO_NEIGHBOUR))
			worker_park(w, vp->slot, data[i], len[i]);
		else
			worker_emit(w, o, &res[i], data[i], NULL, (int)vp->slot);
		rte_pktmbuf_free(keep[i]);
	}
}

/*
 * A frame longer than one mbuf (a guest whose VMM gave it a jumbo MTU; no segmentation
 * offload is negotiated, so at most that MTU): the library chained it; it goes through the
 * pipeline on its own from the jumbo buffer, or to its owner as the chain it is.
 */
static void
vhost_rx_chain(struct worker *w, struct vhport *vp, struct worker_out *o, struct rte_mbuf *m)
{
	struct dp_result r;
	uint32_t l;
	uint8_t *p = worker_mbuf_data(w, m, &l);

	if (p && w->nworkers > 1) {
		uint32_t to = worker_owner(w, DP_FROM_SANDBOX, vp->slot, p, l);

		if (to != w->id) {
			worker_handoff(w, to, WH_FROM_SANDBOX, vp->slot, m);
			return;
		}
	}
	if (p) {
		dp_sandbox_rx(&w->ctx, vp->slot, p, l, &r);
		if (unlikely(r.action == DP_DROP && r.drop == CVS_DROP_NO_NEIGHBOUR))
			worker_park(w, vp->slot, p, l);
		else
			worker_emit(w, o, &r, p, NULL, (int)vp->slot);
	}
	rte_pktmbuf_free(m);
}

/* Frames the guest of a vhost-user port sent: the same pipeline as an AF_XDP sandbox's. */
static uint32_t
worker_vhost_rx(struct worker *w, struct vhport *vp, struct worker_out *o)
{
	struct rte_mbuf *m[VHP_BURST], *keep[VHP_BURST];
	uint8_t *data[VHP_BURST];
	uint32_t len[VHP_BURST];
	uint16_t n, i, k = 0;
	uint64_t bytes = 0;

	n = rte_vhost_dequeue_burst(vp->vid, VHP_GUEST_TXQ, vp->mp, m, VHP_BURST);
	/* Copied out of guest buffers by the library. */
	w->st.c[CVS_WC_FRAMES_COPIED] += n;
	for (i = 0; i < n; i++) {
		uint8_t *p = rte_pktmbuf_mtod(m[i], uint8_t *);
		uint32_t l = rte_pktmbuf_pkt_len(m[i]);

		w->st.c[CVS_WC_SBX_RX_PKTS]++;
		w->st.c[CVS_WC_SBX_RX_BYTES] += l;
		bytes += l;
		if (unlikely(m[i]->nb_segs > 1)) {
			/* After the frames before it: a flow keeps its order. */
			vhost_rx_batch(w, vp, o, keep, data, len, k);
			k = 0;
			vhost_rx_chain(w, vp, o, m[i]);
			continue;
		}
		if (w->nworkers > 1) {
			uint32_t to = worker_owner(w, DP_FROM_SANDBOX, vp->slot, p, l);

			if (to != w->id) {
				worker_handoff(w, to, WH_FROM_SANDBOX, vp->slot, m[i]);
				continue;
			}
		}
		keep[k] = m[i];
		data[k] = p;
		len[k++] = l;
	}
	vhost_rx_batch(w, vp, o, keep, data, len, k);
	if (w->slot_st) {
		w->slot_st[vp->slot].c[CVS_PC_RX_PKTS] += n;
		w->slot_st[vp->slot].c[CVS_PC_RX_BYTES] += bytes;
	}
	return n;
}

/* Mark or clear an idle guest in the worker's own bitmap. */
static inline void
worker_vh_idle_mark(struct worker *w, uint32_t slot, bool idle)
{
	uint64_t bit = 1ULL << (slot % 64);

	if (!w->vh_idle)
		return;
	if (idle)
		w->vh_idle[slot / 64] |= bit;
	else
		w->vh_idle[slot / 64] &= ~bit;
}

/*
 * The running vhost-user ports of this worker, found through the bitmap: a port without a
 * device costs a bit, 64 of them one load. Idle guests are masked out of all but every
 * VHP_IDLE_EVERY-th loop, and then cost a count of their ring, not a dequeue.
 */
uint32_t
worker_vhost_poll(struct worker *w, struct worker_out *o, uint32_t vh_hi, uint64_t loop)
{
	uint32_t i, words = (vh_hi + 63) / 64, moved = 0;
	bool look_idle = !(loop & (VHP_IDLE_EVERY - 1));

	for (i = 0; i < words; i++) {
		uint64_t m = atomic_load_explicit(&w->wp->vh_running[i], memory_order_acquire);

		if (!look_idle && w->vh_idle)
			m &= ~w->vh_idle[i];
		while (m) {
			uint32_t s = i * 64 + (uint32_t)__builtin_ctzll(m), n;
			struct vhport *vp;

			m &= m - 1;
			if (dp_slot_owner(s, w->nworkers) != w->id)
				continue;
			vp = worker_vhport(w, s);
			if (!vp || !vhport_ready(vp))
				continue;
			/* Counting locks the queue; only this VMM, mid-message, holds it. */
			if (vp->idle_polls >= VHP_IDLE_POLLS && vp->split &&
			    !rte_vhost_rx_queue_count(vp->vid, VHP_GUEST_TXQ))
				continue;
			n = worker_vhost_rx(w, vp, o);
			if (n)
				vp->idle_polls = 0;
			else if (vp->idle_polls < VHP_IDLE_POLLS)
				vp->idle_polls++;
			worker_vh_idle_mark(w, s, vp->idle_polls >= VHP_IDLE_POLLS);
			moved += n;
		}
	}
	return moved;
}
