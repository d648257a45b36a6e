/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames longer than one buffer (jumbo frames, issue 33): an AF_XDP socket bound for
 * multi-buffer hands one over in several descriptors, an mbuf pool of 2 KiB buffers holds one
 * in a chain. The pipeline reads and rewrites headers in one contiguous frame, so such a frame
 * is copied whole into the worker's jumbo buffer, run through the pipeline from there and
 * copied out again (xskport_tx_segs(), or a chain here). Worker lcore only.
 */
#include <string.h>

#include "worker_int.h"

/*
 * One per worker thread. The frame lies past a headroom as a received UMEM frame does, and
 * the room behind it takes an answer the pipeline writes in place (an ICMP error is shorter).
 */
#define JUMBO_HEADROOM	256u
static __thread uint8_t jumbo[JUMBO_HEADROOM + XSKP_JUMBO_MAX + 256u] __rte_aligned(64);

uint8_t *
worker_jumbo_buf(void)
{
	return jumbo + JUMBO_HEADROOM;
}

struct rte_mbuf *
worker_mbuf_of(struct worker *w, struct rte_mempool *mp, const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *m, *seg;
	uint32_t off = 0;

	if (unlikely(len > XSKP_JUMBO_MAX)) {
		w->st.drop[CVS_DROP_TOO_BIG]++;
		return NULL;
	}
	m = rte_pktmbuf_alloc(mp);
	for (seg = m; seg;) {
		uint32_t room = rte_pktmbuf_tailroom(seg), l = len - off < room ? len - off : room;

		rte_memcpy(rte_pktmbuf_mtod(seg, uint8_t *), data + off, l);
		seg->data_len = (uint16_t)l;
		off += l;
		if (off == len)
			break;
		/* A frame longer than a buffer goes on in a chain (the PMDs send chains). */
		seg->next = rte_pktmbuf_alloc(mp);
		seg = seg->next;
		m->nb_segs++;
	}
	if (unlikely(!seg)) {
		rte_pktmbuf_free(m);
		w->st.drop[CVS_DROP_NO_BUFFER]++;
		return NULL;
	}
	m->pkt_len = len;
	w->st.c[CVS_WC_FRAMES_COPIED]++;
	return m;
}

uint8_t *
worker_mbuf_data(struct worker *w, struct rte_mbuf *m, uint32_t *len)
{
	*len = rte_pktmbuf_pkt_len(m);
	if (likely(m->nb_segs == 1))
		return rte_pktmbuf_mtod(m, uint8_t *);
	if (unlikely(*len > XSKP_JUMBO_MAX)) {
		/* A TSO frame of a NIC: we do not segment (docs/datapath.md, "Offloads"). */
		w->st.drop[CVS_DROP_TOO_BIG]++;
		return NULL;
	}
	w->st.c[CVS_WC_FRAMES_COPIED]++;
	return (uint8_t *)rte_pktmbuf_read(m, 0, *len, worker_jumbo_buf());
}
