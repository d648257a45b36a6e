/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker lcore main loop, in the shape of l3fwd: rx burst → process burst → tx burst, until
 * the quit flag is set. The pipeline works on a received frame where it lies (a world queue's
 * or the funnel's UMEM frame, an mbuf). A frame in the funnel's UMEM that leaves by a socket
 * on that UMEM (the funnel itself, or a world queue sharing it) goes by descriptor; any other
 * is copied once, into the buffer of the port it leaves by: a UMEM frame, an mbuf for
 * cube-dev or an ethdev world port, a guest buffer. Every copy is counted (frames_copied).
 *
 * With several workers, worker k reads world and cube-dev queue k and the sockets of its own
 * sandboxes; a frame whose session another worker owns (dp_owner) is handed to that worker's
 * inbox, and so is a frame for a sandbox socket that another worker transmits on. Each session
 * table thus has a single writer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_spinlock.h>
#include <rte_vhost.h>

#include "ct6_region.h"
#include "mtu.h"
#include "worker_int.h"

/*
 * A received frame that lies in the funnel's UMEM (from the funnel, or from a world queue
 * whose socket shares that UMEM: wq_shared) sent on by descriptor, with no copy, when it goes
 * to a sandbox of ours behind the funnel or, sharing, to the world. 'inlen' is what was
 * received: the answer must fit where it lies. false: the caller copies it as usual.
 */
static inline bool
worker_pass_desc(struct worker *w, const struct dp_result *r, uint8_t *data, uint32_t inlen,
		 int back_slot)
{
	uint32_t slot = r->action == DP_BACK ? (uint32_t)back_slot : r->slot;

	if (r->len > inlen || dp_result_split(r))
		return false;
	if (r->action == DP_TO_WORLD) {
		if (!w->wq_shared || xskport_tx_desc(w->wq_tx, data, r->len))
			return false;
		w->st.c[CVS_WC_WORLD_TX_PKTS]++;
		w->st.c[CVS_WC_WORLD_TX_BYTES] += r->len;
		return true;
	}
	if ((r->action != DP_TO_SANDBOX && (r->action != DP_BACK || back_slot < 0)) ||
	    dp_slot_owner(slot, w->nworkers) != w->id || !w->fun || !worker_xsk_on(w, slot) ||
	    xskport_tx_desc_stamped(w->fun, data, r->len, slot))
		return false;
	w->st.c[CVS_WC_SBX_TX_PKTS]++;
	w->st.c[CVS_WC_SBX_TX_BYTES] += r->len;
	if (w->slot_st) {
		w->slot_st[slot].c[CVS_PC_TX_PKTS]++;
		w->slot_st[slot].c[CVS_PC_TX_BYTES] += r->len;
	}
	return true;
}

/*
 * Received frames back to the fill ring, but those sent on by descriptor (UINT64_MAX): the
 * pool replaces them (fill_owed) while it has frames to spare.
 */
static inline void
worker_refill(struct xskport *xp, uint64_t *done, uint32_t n)
{
	uint32_t i, m = 0;

	for (i = 0; i < n; i++)
		if (done[i] != UINT64_MAX)
			done[m++] = done[i];
	xp->fill_owed += n - m;
	xskport_refill(xp, done, m);
}

/* Hold a guest frame until its next hop is known. */
void
worker_park(struct worker *w, uint32_t slot, const uint8_t *data, uint32_t len)
{
	struct park_entry *e;

	if (!w->park || w->nparked == PARK_MAX || len > sizeof(w->park[0].data))
		return;	/* stays counted as a no_neighbour drop */
	w->st.drop[CVS_DROP_NO_NEIGHBOUR]--;
	w->st.c[CVS_WC_NH_PARKED]++;
	e = &w->park[w->nparked++];
	e->since = rte_get_tsc_cycles();
	e->slot = slot;
	e->len = len;
	memcpy(e->data, data, len);
	w->st.c[CVS_WC_FRAMES_COPIED]++;
}

/* Run parked frames again; send those whose next hop is known now, drop the old ones. */
static void
worker_unpark(struct worker *w, struct worker_out *o, uint64_t now_tsc)
{
	uint64_t limit = rte_get_tsc_hz() / 1000 * PARK_MS;
	uint32_t i = 0;

	while (i < w->nparked) {
		struct park_entry *e = &w->park[i];
		struct dp_result r;

		if (!worker_xsk_on(w, e->slot) && !worker_vhport(w, e->slot)) {
			w->st.drop[CVS_DROP_SANDBOX_GONE]++;
		} else {
			dp_sandbox_rx(&w->ctx, e->slot, e->data, e->len, &r);
			if (r.action == DP_DROP && r.drop == CVS_DROP_NO_NEIGHBOUR &&
			    now_tsc - e->since < limit) {
				w->st.drop[CVS_DROP_NO_NEIGHBOUR]--;
				i++;
				continue;
			}
			worker_emit(w, o, &r, e->data, NULL, (int)e->slot);
		}
		*e = w->park[--w->nparked];
	}
}

/* The pipeline for one guest frame on its owner. */
static inline void
worker_sandbox_frame(struct worker *w, struct worker_out *o, uint32_t slot, uint8_t *data,
		     uint32_t len)
{
	struct dp_result r;
	uint16_t mtu;

	/*
	 * Longer than its interface's MTU: a TAP's TSO frame (a vnet header with a GSO type),
	 * which XDP sees whole. Not segmented here (docs/datapath.md, "Offloads").
	 */
	if (unlikely(len > XSKP_MTU_ONE + ETH_HLEN_) && w->ctx.sh->slot_mtu &&
	    slot < w->ctx.sh->max_sandboxes &&
	    (mtu = atomic_load_explicit(&w->ctx.sh->slot_mtu[slot], memory_order_relaxed)) &&
	    len > mtu + (uint32_t)ETH_HLEN_) {
		w->st.drop[CVS_DROP_TOO_BIG]++;
		return;
	}
	dp_sandbox_rx(&w->ctx, slot, data, len, &r);
	if (unlikely(r.action == DP_DROP && r.drop == CVS_DROP_NO_NEIGHBOUR))
		worker_park(w, slot, data, len);
	else
		worker_emit(w, o, &r, data, NULL, (int)slot);
}

/* Receive on the world or cube-dev queue of this worker; answers go back on our tx queue. */
static uint32_t
worker_eth_rx(struct worker *w, struct worker_out *o, bool host)
{
	enum dp_origin origin = host ? DP_FROM_HOST : DP_FROM_WORLD;
	struct world_txq *src = host ? &o->host : &o->world;
	struct rte_mbuf *m[WORLD_BURST];
	struct dp_result r;
	uint16_t n, i;

	uint8_t *data[WORLD_BURST];
	uint32_t len[WORLD_BURST];
	struct rte_mbuf *keep[WORLD_BURST];
	struct dp_result res[WORLD_BURST];
	uint16_t k = 0;

	n = rte_eth_rx_burst(host ? w->host_port : w->world_port,
			     host ? w->host_queue : w->world_queue, m, WORLD_BURST);
	for (i = 0; i < n; i++) {
		uint8_t *d = rte_pktmbuf_mtod(m[i], uint8_t *);
		uint32_t l = rte_pktmbuf_pkt_len(m[i]);

		if (host) {
			w->st.c[CVS_WC_HOST_RX_PKTS]++;
			w->st.c[CVS_WC_HOST_RX_BYTES] += l;
		} else {
			w->st.c[CVS_WC_WORLD_RX_PKTS]++;
			w->st.c[CVS_WC_WORLD_RX_BYTES] += l;
		}
		if (w->nworkers > 1) {
			uint32_t to = worker_owner(w, origin, 0, d, l);

			if (to != w->id) {
				worker_handoff(w, to, host ? WH_FROM_HOST : WH_FROM_WORLD, 0, m[i]);
				continue;
			}
		}
		/* cube-dev's frames one by one; a jumbo frame (a chain) from the jumbo buffer. */
		if (host || unlikely(m[i]->nb_segs > 1)) {
			d = worker_mbuf_data(w, m[i], &l);
			if (d && host)
				dp_host_rx(&w->ctx, d, l, &r);
			else if (d)
				dp_world_rx(&w->ctx, d, l, &r);
			if (d)
				worker_emit(w, o, &r, d, src, -1);
			rte_pktmbuf_free(m[i]);
			continue;
		}
		keep[k] = m[i];
		data[k] = d;
		len[k++] = l;
	}
	if (k) {
		uint64_t t = rte_rdtsc();

		dp_world_rx_burst(&w->ctx, data, len, k, res);
		worker_pipe_account(w, t, k);
		for (i = 0; i < k; i++) {
			worker_emit(w, o, &res[i], data[i], src, -1);
			rte_pktmbuf_free(keep[i]);
		}
	}
	return n;
}

/* A frame of our world queue for another worker: it needs an mbuf (a copy) to travel. */
static inline bool
worker_world_handoff(struct worker *w, const uint8_t *p, uint32_t l)
{
	uint32_t to = worker_owner(w, DP_FROM_WORLD, 0, p, l);
	struct rte_mbuf *m;

	if (to == w->id)
		return false;
	m = worker_mbuf(w, p, l);
	if (m)
		worker_handoff(w, to, WH_FROM_WORLD, 0, m);
	return true;
}

/* A burst of world frames where the kernel put them, through the pipeline and out. */
static void
worker_world_batch(struct worker *w, struct worker_out *o, uint8_t **data, uint32_t *len,
		   const uint32_t *at, uint32_t k, uint64_t *done)
{
	struct dp_result res[WORLD_BURST];
	uint64_t t;
	uint32_t i;

	if (!k)
		return;
	t = rte_rdtsc();
	dp_world_rx_burst(&w->ctx, data, len, k, res);
	worker_pipe_account(w, t, k);
	for (i = 0; i < k; i++) {
		if (w->wq_shared && worker_pass_desc(w, &res[i], data[i], len[i], -1))
			done[at[i]] = UINT64_MAX;
		else
			worker_emit(w, o, &res[i], data[i], &o->world, -1);
	}
}

/*
 * A frame of the socket in several descriptors from idx on, copied into the jumbo buffer: the
 * descriptors it took (their addresses in addrs), 0 while its last one is not peeked. *len
 * is 0 for one longer than the jumbo buffer (counted).
 */
static uint32_t
worker_rx_jumbo(struct worker *w, struct xskport *xp, uint32_t idx, uint32_t avail,
		uint64_t *addrs, uint32_t *len)
{
	uint32_t c = xskport_rx_gather(xp, idx, avail, worker_jumbo_buf(), XSKP_JUMBO_MAX, len,
				       addrs);

	if (c && !*len)
		w->st.drop[CVS_DROP_TOO_BIG]++;
	else if (c)
		w->st.c[CVS_WC_FRAMES_COPIED]++;
	return c;
}

/* A world frame in several descriptors (a jumbo frame): on its own, from the jumbo buffer. */
static uint32_t
worker_world_jumbo(struct worker *w, struct worker_out *o, uint32_t idx, uint32_t avail,
		   uint64_t *addrs)
{
	uint8_t *p = worker_jumbo_buf();
	struct dp_result r;
	uint32_t l, c = worker_rx_jumbo(w, w->wq_rx, idx, avail, addrs, &l);

	if (!c || !l)
		return c;
	w->st.c[CVS_WC_WORLD_RX_PKTS]++;
	w->st.c[CVS_WC_WORLD_RX_BYTES] += l;
	if (w->nworkers > 1 && worker_world_handoff(w, p, l))
		return c;
	dp_world_rx(&w->ctx, p, l, &r);
	worker_emit(w, o, &r, p, &o->world, -1);
	return c;
}

/*
 * The frame in several descriptors at idx + *i of a peek of *n, run by 'jumbo' (the frames
 * before it went through already); *i moves to its last descriptor. false when that is not
 * peeked yet: the rest of the peek is given back (its last piece comes with the next one)
 * and *n ends before it.
 */
static inline bool
worker_rx_chain(struct worker *w, struct worker_out *o, struct xskport *xp, uint32_t idx,
		uint32_t *i, uint32_t *n, uint64_t *done,
		uint32_t (*jumbo)(struct worker *, struct worker_out *, uint32_t, uint32_t,
				  uint64_t *))
{
	uint32_t c = jumbo(w, o, idx + *i, *n - *i, &done[*i]);

	if (!c) {
		xsk_ring_cons__cancel(&xp->rx, *n - *i);
		*n = *i;
		return false;
	}
	*i += c - 1;
	return true;
}

/*
 * Receive on our socket of this worker's world queue: the pipeline runs on the frames where
 * the kernel put them, answers go back on our world transmit queue. A frame in several
 * descriptors goes through on its own, after the frames before it (a flow keeps its order).
 */
static uint32_t
worker_world_rx(struct worker *w, struct worker_out *o)
{
	struct xskport *xp = w->wq_rx;
	uint64_t done[WORLD_BURST];
	uint8_t *data[WORLD_BURST];
	uint32_t len[WORLD_BURST], at[WORLD_BURST];
	uint32_t idx, n, i, k = 0;

	n = xskport_rx_peek(xp, WORLD_BURST, &idx);
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		uint32_t l;
		uint8_t *p;

		if (unlikely(xskport_rx_contd(xp, idx + i))) {
			worker_world_batch(w, o, data, len, at, k, done);
			k = 0;
			if (!worker_rx_chain(w, o, xp, idx, &i, &n, done, worker_world_jumbo))
				break;
			continue;
		}
		p = xskport_rx_frame(xp, idx + i, &l, &done[i]);
		w->st.c[CVS_WC_WORLD_RX_PKTS]++;
		w->st.c[CVS_WC_WORLD_RX_BYTES] += l;
		if (w->nworkers > 1 && worker_world_handoff(w, p, l))
			continue;
		at[k] = i;
		data[k] = p;
		len[k++] = l;
	}
	worker_world_batch(w, o, data, len, at, k, done);
	xskport_rx_release(xp, n);
	worker_refill(xp, done, n);
	return n;
}

/*
 * A run of frames of one slot from the funnel, through the pipeline of a sandbox; frame i is
 * received descriptor at[i], whose done[] entry says UINT64_MAX when it was sent on as it lies.
 */
static void
worker_sandbox_run(struct worker *w, struct worker_out *o, uint32_t slot, uint8_t **data,
		   uint32_t *len, const uint32_t *at, uint32_t k, uint64_t *done)
{
	struct dp_result res[XSKP_BURST];
	uint64_t t = rte_rdtsc();
	uint32_t i;

	dp_sandbox_rx_burst(&w->ctx, slot, data, len, k, res);
	worker_pipe_account(w, t, k);
	for (i = 0; i < k; i++) {
		if (unlikely(res[i].action == DP_DROP && res[i].drop == CVS_DROP_NO_NEIGHBOUR))
			worker_park(w, slot, data[i], len[i]);
		else if (worker_pass_desc(w, &res[i], data[i], len[i], (int)slot))
			done[at[i]] = UINT64_MAX;
		else
			worker_emit(w, o, &res[i], data[i], NULL, (int)slot);
	}
}

/*
 * The slot a funnel frame came from, past its header; UINT32_MAX for one that is not ours
 * to take (counted). The header's flag says the guest's source MAC was not the registered one.
 */
static inline uint32_t
worker_funnel_slot(struct worker *w, uint8_t **p, uint32_t *l)
{
	struct cvs_fun_hdr h;

	if (unlikely(*l < sizeof(h) + 12)) {
		w->st.drop[CVS_DROP_RUNT]++;
		return UINT32_MAX;
	}
	memcpy(&h, *p, sizeof(h));
	*p += sizeof(h);
	*l -= (uint32_t)sizeof(h);
	if (unlikely(h.slot >= w->ctx.sh->max_sandboxes || !worker_xsk_on(w, h.slot))) {
		w->st.drop[CVS_DROP_SANDBOX_GONE]++;
		return UINT32_MAX;
	}
	if (w->slot_st) {
		struct cvs_port_stats *ps = &w->slot_st[h.slot];

		ps->c[CVS_PC_RX_PKTS]++;
		ps->c[CVS_PC_RX_BYTES] += *l;
		ps->c[CVS_PC_MAC_MISMATCH] += !!(h.flags & CVS_FUN_F_MAC_MISMATCH);
	}
	return h.slot;
}

/*
 * Tell the sandbox program when the funnel's ring fills: then each sandbox gets a share of it
 * (xdp/cvs_xdp.h, cvs_sbx_pol), so one that floods cannot crowd the others out.
 */
static inline void
worker_funnel_pressure(struct worker *w, uint32_t queued)
{
	uint32_t ring = w->fun->ring_size;
	bool on = w->pressed ? queued > ring / 8 : queued >= ring / 2;

	if (likely(on == w->pressed) || !w->fun_press)
		return;
	w->pressed = on;
	atomic_store_explicit(w->fun_press, on, memory_order_relaxed);
	w->st.c[on ? CVS_WC_FUNNEL_PRESSED : CVS_WC_FUNNEL_RELIEVED]++;
}

/* A funnel frame's slot, or UINT32_MAX when it is not run here (dropped, or handed on). */
static inline uint32_t
worker_funnel_take(struct worker *w, uint8_t **p, uint32_t *l)
{
	uint32_t slot = worker_funnel_slot(w, p, l), to;
	struct rte_mbuf *m;

	if (slot == UINT32_MAX || w->nworkers == 1)
		return slot;
	to = worker_owner(w, DP_FROM_SANDBOX, slot, *p, *l);
	if (to == w->id)
		return slot;
	m = worker_mbuf(w, *p, *l);
	if (m)
		worker_handoff(w, to, WH_FROM_SANDBOX, slot, m);
	return UINT32_MAX;
}

/* A guest frame in several descriptors (a jumbo frame): on its own, from the jumbo buffer. */
static uint32_t
worker_funnel_jumbo(struct worker *w, struct worker_out *o, uint32_t idx, uint32_t avail,
		    uint64_t *addrs)
{
	uint8_t *p = worker_jumbo_buf();
	uint32_t l, slot, c = worker_rx_jumbo(w, w->fun, idx, avail, addrs, &l);

	if (!c || !l)
		return c;
	w->st.c[CVS_WC_SBX_RX_PKTS]++;
	w->st.c[CVS_WC_SBX_RX_BYTES] += l;
	slot = worker_funnel_take(w, &p, &l);
	if (slot != UINT32_MAX)
		worker_sandbox_frame(w, o, slot, p, l);
	return c;
}

static uint32_t
worker_funnel_rx(struct worker *w, struct worker_out *o)
{
	struct xskport *xp = w->fun;
	uint64_t done[XSKP_BURST];
	uint8_t *data[XSKP_BURST];
	uint32_t len[XSKP_BURST], at[XSKP_BURST];
	uint32_t idx, n, i, k = 0, run = UINT32_MAX;

	n = xskport_rx_peek(xp, XSKP_BURST, &idx);
	if (!n)
		return 0;
	worker_funnel_pressure(w, xsk_cons_nb_avail(&xp->rx, xp->ring_size) + n);
	for (i = 0; i < n; i++) {
		uint32_t l, slot;
		uint8_t *p;

		if (unlikely(xskport_rx_contd(xp, idx + i))) {
			/* After the frames before it, as on the world queue. */
			if (k)
				worker_sandbox_run(w, o, run, data, len, at, k, done);
			k = 0;
			if (!worker_rx_chain(w, o, xp, idx, &i, &n, done, worker_funnel_jumbo))
				break;
			continue;
		}
		p = xskport_rx_frame(xp, idx + i, &l, &done[i]);
		w->st.c[CVS_WC_SBX_RX_PKTS]++;
		w->st.c[CVS_WC_SBX_RX_BYTES] += l;
		slot = worker_funnel_take(w, &p, &l);
		if (slot == UINT32_MAX)
			continue;
		/* Frames of one sandbox come in runs: each run is one burst of the pipeline. */
		if (k && slot != run) {
			worker_sandbox_run(w, o, run, data, len, at, k, done);
			k = 0;
		}
		run = slot;
		at[k] = i;
		data[k] = p;
		len[k++] = l;
	}
	if (k)
		worker_sandbox_run(w, o, run, data, len, at, k, done);
	xskport_rx_release(xp, n);
	if (unlikely(xskport_fill_short(xp, n)))
		w->st.c[CVS_WC_SBX_FILL_SHORT]++;
	worker_refill(xp, done, n);
	return n;
}

/*
 * The world's fragments that came ahead of their first were held (the steering program sent
 * them here); if the first went to the kernel instead, they go to the kernel through cube-dev
 * as they came. Without cube-dev they expire.
 */
static void
worker_frag_giveback(struct worker *w)
{
	const struct dp_cfg *c = w->ctx.cfg;
	struct frag_xlat x = { .action = DP_TO_HOST };

	if (!c->have_host)
		return;
	memcpy(x.dst_mac, c->host_peer_mac, 6);
	memcpy(x.src_mac, c->host_mac, 6);
	frag_set_giveback(w->ctx.frag, &x);
}

/* Frames other workers handed to us. */
static uint32_t
worker_inbox(struct worker *w, struct worker_out *o)
{
	struct rte_mbuf *m[WORLD_BURST];
	struct dp_result r;
	unsigned int n, i;

	if (!w->inbox)
		return 0;
	n = rte_ring_sc_dequeue_burst(w->inbox, (void **)m, WORLD_BURST, NULL);
	for (i = 0; i < n; i++) {
		uint32_t len, slot = m[i]->hash.usr & ((1u << WH_SHIFT) - 1);
		uint8_t *data = worker_mbuf_data(w, m[i], &len);

		switch (data ? m[i]->hash.usr >> WH_SHIFT : 0) {
		case WH_FROM_WORLD:
			dp_world_rx(&w->ctx, data, len, &r);
			worker_emit(w, o, &r, data, &o->world, -1);
			break;
		case WH_FROM_HOST:
			dp_host_rx(&w->ctx, data, len, &r);
			worker_emit(w, o, &r, data, &o->host, -1);
			break;
		case WH_FROM_SANDBOX:
			worker_sandbox_frame(w, o, slot, data, len);
			break;
		case WH_TO_SANDBOX:
			sandbox_send(w, slot, data, len);
			break;
		}
		rte_pktmbuf_free(m[i]);
	}
	return n;
}

static void
worker_mailbox(struct worker *w)
{
	uint64_t seq = atomic_load_explicit(&w->cmd_seq, memory_order_acquire);

	if (seq == atomic_load_explicit(&w->done_seq, memory_order_relaxed))
		return;
	switch (w->cmd) {
	case WCMD_SYNC:
		w->cmd_result = 0;
		break;
	case WCMD_FLUSH_ZONE:
		w->cmd_result = ct_flush_zone(w->ct, (uint16_t)w->arg);
		if (w->ctx.ct6)
			w->cmd_result += ct6_flush_zone(w->ctx.ct6, (uint16_t)w->arg);
		w->st.c[CVS_WC_SESS_FLUSHED] += w->cmd_result;
		/* Its fragments' datagrams too, those from it and those towards it. */
		if (w->ctx.frag && w->arg) {
			frag_flush(w->ctx.frag, (uint16_t)w->arg, DP_TO_SANDBOX,
				   (uint32_t)w->arg - 1u);
			dp_frag_counters(&w->ctx);
		}
		break;
	case WCMD_DUMP:
		ct_dump(w->ct, w->ctx.now, w->cmd_ptr);
		w->cmd_result = 0;
		break;
	default:
		w->cmd_result = 0;
		break;
	}
	atomic_store_explicit(&w->done_seq, seq, memory_order_release);
}

/* What the loop owns on this lcore, made before its first turn (no allocation after). */
static void
worker_start(struct worker *w)
{
	w->ctx.st = &w->st;
	w->ctx.ct = w->ct;
	w->ctx.nhreq = &w->nhreq;
	w->ctx.slot_st = w->slot_st;
	/* The token buckets of the slots this worker owns: its own, never shared. */
	w->ctx.bucket = calloc(w->ctx.sh->max_sandboxes, sizeof(*w->ctx.bucket));
	if (!w->ctx.bucket)
		RTE_LOG(ERR, USER1, "worker %u: no memory for the rate limits: none apply\n", w->id);
	/* Without it idle vhost-user guests are polled every loop: slower, still correct. */
	w->vh_idle = calloc((w->ctx.sh->max_sandboxes + 63) / 64, sizeof(*w->vh_idle));
	/* Its own, like the session table: fragments of its flows come to it (dp_frag.c). */
	if (w->frag_cfg.contexts) {
		w->ctx.frag = frag_create(&w->frag_cfg, w->ctx.sh->max_sandboxes + 2u);
		if (!w->ctx.frag)
			RTE_LOG(ERR, USER1, "worker %u: no memory for the fragment table: fragments "
				"are dropped\n", w->id);
		else
			worker_frag_giveback(w);
	}
	/*
	 * IPv6 sessions: the region's table (adopted or made there), else a private one of a
	 * quarter of the IPv4 table's size, the same timeouts.
	 */
	w->ctx.ct6 = w->ctx.cfg->have_ip6 ? w->ct6_given : NULL;
	if (w->ctx.cfg->have_ip6 && !w->ctx.ct6) {
		uint32_t cap = ct6_capacity_of(w->ct->capacity);

		w->ctx.ct6 = ct6_create(cap, w->ctx.sh->max_sandboxes, w->ct->timeout);
		if (!w->ctx.ct6)
			RTE_LOG(ERR, USER1, "worker %u: no memory for %u IPv6 sessions: IPv6 is "
				"dropped\n", w->id, cap);
	}
	w->capacity6 = w->ctx.ct6 ? w->ctx.ct6->capacity : 0;
}

static void
worker_stop(struct worker *w)
{
	free(w->ctx.bucket);
	w->ctx.bucket = NULL;
	free(w->vh_idle);
	w->vh_idle = NULL;
	frag_destroy(w->ctx.frag);
	w->ctx.frag = NULL;
	/* The region's table stays for the next process (region_close() lets it go). */
	if (w->ctx.ct6 != w->ct6_given)
		ct6_destroy(w->ctx.ct6);
	w->ctx.ct6 = NULL;
}

/* Once a second: sessions and fragment datagrams past their time, bounded per call. */
static void
worker_expire(struct worker *w)
{
	w->st.c[CVS_WC_SESS_EXPIRED] += ct_expire(w->ct, w->ctx.now, 4096);
	if (w->ctx.ct6) {
		w->st.c[CVS_WC_SESS_EXPIRED] += ct6_expire(w->ctx.ct6, w->ctx.now, 4096);
		/* The total goes with its classes, from the same moment: a reader adding
		 * the classes up must find the total (they are read once a second). */
		memcpy(w->cls6, w->ctx.ct6->class_count, sizeof(w->cls6));
		atomic_store_explicit(&w->sessions6, w->ctx.ct6->used, memory_order_relaxed);
		worker_ra(w);
	}
	if (!w->ctx.frag)
		return;
	frag_expire(w->ctx.frag, w->ctx.now, 4096);
	dp_frag_counters(&w->ctx);
	/* Copies given back (frag_set_giveback) go out on the next loop. */
	if (frag_ready(w->ctx.frag))
		w->ctx.frag_ready = w->ctx.frag_busy = true;
}

int
worker_main(void *arg)
{
	struct worker *w = arg;
	struct worker_out o = {
		.world = { .port = w->world_port, .queue = w->world_txq,
			   .pkts = CVS_WC_WORLD_TX_PKTS, .bytes = CVS_WC_WORLD_TX_BYTES,
			   .lock = w->world_txlock, .xp = w->wq_tx, .bad_every = w->test_bad_tx },
		.host = { .port = w->host_port, .queue = w->host_queue,
			  .pkts = CVS_WC_HOST_TX_PKTS, .bytes = CVS_WC_HOST_TX_BYTES },
	};
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_get_tsc_cycles();
	uint64_t last_unpark = 0, ms = hz / 1000;
	uint32_t last_now = UINT32_MAX, idle = 0;
	uint64_t nloop = 0;

	worker_start(w);
	while (!atomic_load_explicit(&w->quit, memory_order_relaxed)) {
		uint32_t vh_hi = atomic_load_explicit(&w->wp->vh_hi, memory_order_acquire);
		uint64_t start = rte_get_tsc_cycles();
		uint32_t moved;

		/* One clock for the loop; tests move it forward through clock_offset. */
		w->ctx.now = (uint32_t)((int64_t)((start - t0) / hz) + w->clock_base +
			atomic_load_explicit(&w->ctx.sh->clock_offset, memory_order_relaxed));
		moved = w->wq_rx ? worker_world_rx(w, &o) :
			w->world_queue != UINT16_MAX && w->world_port != UINT16_MAX ?
			worker_eth_rx(w, &o, false) : 0;
		if (w->host_port != UINT16_MAX)
			moved += worker_eth_rx(w, &o, true);
		if (w->fun)
			moved += worker_funnel_rx(w, &o);
		if (vh_hi)
			moved += worker_vhost_poll(w, &o, vh_hi, nloop++);
		moved += worker_inbox(w, &o);
		if (unlikely(w->ctx.frag_busy))
			worker_frags(w, &o);
		if (unlikely(w->nparked)) {
			uint64_t t = rte_get_tsc_cycles();

			if (t - last_unpark >= ms) {
				last_unpark = t;
				worker_unpark(w, &o, t);
			}
		}
		world_flush(w, &o.world);
		if (w->host_port != UINT16_MAX)
			world_flush(w, &o.host);
		if (w->fun) {
			xskport_kick(w->fun);
			xskport_complete(w->fun);
		}
		vhost_flush_all(w);
		if (w->ctx.now != last_now) {
			last_now = w->ctx.now;
			worker_expire(w);
		}
		worker_mailbox(w);
		atomic_store_explicit(&w->sessions, w->ct->used, memory_order_relaxed);
		w->st.c[moved ? CVS_WC_POLLS_BUSY : CVS_WC_POLLS_IDLE]++;
		if (moved)
			w->st.c[CVS_WC_BUSY_CYCLES] += rte_get_tsc_cycles() - start;
		atomic_fetch_add_explicit(&w->loops, 1, memory_order_release);
		if (moved) {
			idle = 0;
		} else if (w->idle_sleep_us && ++idle > 1024) {
			/* Optional: give the CPU back when idle (shared CPUs, test beds). */
			usleep(w->idle_sleep_us);
		} else {
			rte_pause();
		}
	}
	worker_stop(w);
	return 0;
}
