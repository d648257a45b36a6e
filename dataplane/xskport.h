/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An AF_XDP socket of ours: a worker's funnel socket (control/ports/funnel.h), which carries the
 * frames of all its interface sandboxes, or a world queue's socket (control/ports/worldq.h), with
 * a UMEM of nframes frames, half for receive and half for transmit, and rings of nframes / 2.
 * Created and destroyed by the control thread (xskport.c); in between only workers touch its
 * rings and its free-frame stack, with the per-packet functions below: receive (rx_peek,
 * rx_frame, rx_release, fill_short, refill) and transmit (tx_stamped or tx, kick, complete).
 * The receive half (rx and fill rings, the frames in them) belongs to one worker; the transmit
 * half (tx and completion rings, 'free') to one worker or, for a world queue that several
 * workers send on, to whoever holds that queue's lock. A world queue's socket may sit on its
 * worker's funnel UMEM (xskport_create_shared()): then both take frames from the funnel's
 * free stack ('pool'), and a frame received on one can leave on the other by descriptor.
 */
#ifndef CVS_XSKPORT_H
#define CVS_XSKPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <xdp/xsk.h>

#include "cvs_xdp.h"
#include "umem.h"

#define XSKP_FRAME_SIZE		2048u
#define XSKP_BURST		32u
/* The IP MTU one frame holds after the kernel's XDP headroom and an Ethernet header. */
#define XSKP_MTU_ONE		(XSKP_FRAME_SIZE - 256u - 14u)
/*
 * The IP MTU a socket bound for multi-buffer carries (jumbo frames): a frame spread over
 * several UMEM frames, each descriptor but the last marked XDP_PKT_CONTD (kernel 6.6).
 */
#define XSKP_MTU_MAX		9216u
/* The longest frame: that MTU, an Ethernet header and the funnel's stamp (cvs_fun_hdr). */
#define XSKP_JUMBO_MAX		(XSKP_MTU_MAX + 14u + 8u)
#define XSKP_TX_SEGS		((XSKP_JUMBO_MAX + XSKP_FRAME_SIZE - 1) / XSKP_FRAME_SIZE)

/* Not in Debian 12's kernel headers (6.1). */
#ifndef XDP_USE_SG
#define XDP_USE_SG		(1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD		(1 << 0)
#endif

struct xskport {
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	uint8_t *area;
	uint32_t nfree;		/* of the pool's free stack: meaningful in the pool's owner */
	uint32_t tx_unsent;	/* descriptors submitted since the last kick */
	uint32_t fill_owed;	/* received frames sent on by descriptor, not yet replaced */
	struct xskport *pool;	/* whose UMEM and free stack: itself, or the socket it shares */
	uint32_t slot;		/* the funnel's worker, or the world queue */
	uint32_t ring_size;	/* every ring: nframes / 2 */
	uint32_t nframes;	/* fixed at creation */
	bool sg;		/* bound for multi-buffer: frames longer than one UMEM frame */
	int ifindex;
	int fd;
	uint64_t free[];	/* the owner's: nframes entries, room for any frame of the UMEM */
};

/*
 * Up to 'max' received descriptors, from *idx on. With none, wake the kernel if it asks: in
 * copy mode it fills our ring only after a wakeup.
 */
static inline uint32_t
xskport_rx_peek(struct xskport *xp, uint32_t max, uint32_t *idx)
{
	uint32_t n = xsk_ring_cons__peek(&xp->rx, max, idx);

	if (!n && xsk_ring_prod__needs_wakeup(&xp->fq))
		recvfrom(xp->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return n;
}

/* The received descriptor at idx: its frame's data and length, and its UMEM address in *addr. */
static inline uint8_t *
xskport_rx_frame(const struct xskport *xp, uint32_t idx, uint32_t *len, uint64_t *addr)
{
	const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xp->rx, idx);

	*addr = xsk_umem__extract_addr(d->addr);
	*len = d->len;
	return xsk_umem__get_data(xp->area, d->addr);
}

/* The received descriptor at idx is not a frame's last: the frame goes on in the next one. */
static inline bool
xskport_rx_contd(const struct xskport *xp, uint32_t idx)
{
	return xsk_ring_cons__rx_desc(&xp->rx, idx)->options & XDP_PKT_CONTD;
}

/*
 * A frame the kernel spread over the descriptors from idx on (multi-buffer), copied whole into
 * buf: the descriptors it took (each one's UMEM address in addrs[]), 0 when its last one is
 * not among the 'avail' peeked. *len is its length, 0 when it is longer than cap.
 */
static inline uint32_t
xskport_rx_gather(struct xskport *xp, uint32_t idx, uint32_t avail, uint8_t *buf, uint32_t cap,
		  uint32_t *len, uint64_t *addrs)
{
	uint32_t i = 0, l = 0;
	bool fits = true;

	for (;;) {
		const struct xdp_desc *d;

		if (i == avail)
			return 0;
		d = xsk_ring_cons__rx_desc(&xp->rx, idx + i);
		addrs[i++] = xsk_umem__extract_addr(d->addr);
		if (fits && l + d->len <= cap)
			memcpy(buf + l, xsk_umem__get_data(xp->area, d->addr), d->len);
		else
			fits = false;
		l += d->len;
		if (!(d->options & XDP_PKT_CONTD))
			break;
	}
	*len = fits ? l : 0;
	return i;
}

/* Done with n received descriptors (their frames go back with xskport_refill()). */
static inline void
xskport_rx_release(struct xskport *xp, uint32_t n)
{
	xsk_ring_cons__release(&xp->rx, n);
}

/* The fill ring has fewer than n free slots: the kernel runs short of frames to receive into. */
static inline bool
xskport_fill_short(struct xskport *xp, uint32_t n)
{
	return xsk_prod_nb_free(&xp->fq, n) < n;
}

/* Reclaim transmitted frames into the pool's free stack. */
static inline void
xskport_complete(struct xskport *xp)
{
	struct xskport *pl = xp->pool;
	uint32_t idx, n, i;

	n = xsk_ring_cons__peek(&xp->cq, xp->ring_size, &idx);
	for (i = 0; i < n; i++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&xp->cq, idx + i);

		/*
		 * A kernel may complete a descriptor it rejected (xskport_tx_invalid()); one sent
		 * on by descriptor points into its frame, which goes back whole.
		 */
		if (__builtin_expect(a < (uint64_t)xp->nframes * XSKP_FRAME_SIZE, 1))
			pl->free[pl->nfree++] = a & ~(uint64_t)(XSKP_FRAME_SIZE - 1);
	}
	if (n)
		xsk_ring_cons__release(&xp->cq, n);
}

/* A free frame and a TX slot for len bytes: the frame's UMEM address, or UINT64_MAX. */
static inline uint64_t
xskport_tx_take(struct xskport *xp, uint32_t len, uint32_t *idx)
{
	struct xskport *pl = xp->pool;

	if (len > XSKP_FRAME_SIZE || !pl->nfree)
		return UINT64_MAX;
	if (xsk_ring_prod__reserve(&xp->tx, 1, idx) != 1)
		return UINT64_MAX;
	return pl->free[--pl->nfree];
}

static inline void
xskport_tx_submit(struct xskport *xp, uint32_t idx, uint64_t addr, uint32_t len)
{
	struct xdp_desc *d = xsk_ring_prod__tx_desc(&xp->tx, idx);

	d->addr = addr;
	d->len = len;
	/* The ring's slots are reused: one that last carried a piece of a frame says so. */
	d->options = 0;
	xsk_ring_prod__submit(&xp->tx, 1);
	xp->tx_unsent++;
}

/*
 * A copy of a frame longer than a UMEM frame, in as many frames as it takes, all reserved at
 * once so that no half of it is ever queued; the slot stamped in the first when stamp is not
 * NULL. 0, or -1 without multi-buffer, or when frames or slots run short.
 */
static inline int
xskport_tx_segs(struct xskport *xp, const uint8_t *data, uint32_t len, const uint8_t *stamp)
{
	struct xskport *pl = xp->pool;
	uint32_t nseg = (len + XSKP_FRAME_SIZE - 1) / XSKP_FRAME_SIZE, idx, i;

	if (!xp->sg || nseg > XSKP_TX_SEGS || pl->nfree < nseg ||
	    xsk_ring_prod__reserve(&xp->tx, nseg, &idx) != nseg)
		return -1;
	for (i = 0; i < nseg; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&xp->tx, idx + i);
		uint32_t off = i * XSKP_FRAME_SIZE;
		uint32_t l = len - off < XSKP_FRAME_SIZE ? len - off : XSKP_FRAME_SIZE;

		d->addr = pl->free[--pl->nfree];
		d->len = l;
		d->options = i + 1 < nseg ? XDP_PKT_CONTD : 0;
		memcpy(xp->area + d->addr, data + off, l);
		if (!i && stamp)
			memcpy(xp->area + d->addr, stamp, 6);
	}
	xsk_ring_prod__submit(&xp->tx, nseg);
	xp->tx_unsent += nseg;
	return 0;
}

/*
 * Queue a copy of a frame for a sandbox behind the funnel: the destination MAC carries the
 * slot, and the funnel's TC program puts the guest's MAC back (xdp/cvs_xdp.h, CVS_FUN_STAMP0).
 * Returns 0, or -1 when no frame or slot is free.
 */
static inline int
xskport_tx_stamped(struct xskport *xp, const void *data, uint32_t len, uint32_t slot)
{
	uint8_t stamp[6] = { CVS_FUN_STAMP0, CVS_FUN_STAMP1, (uint8_t)(slot >> 24),
			     (uint8_t)(slot >> 16), (uint8_t)(slot >> 8), (uint8_t)slot };
	uint32_t idx;
	uint64_t addr;

	if (len < sizeof(stamp))
		return -1;
	if (len > XSKP_FRAME_SIZE)
		return xskport_tx_segs(xp, data, len, stamp);
	addr = xskport_tx_take(xp, len, &idx);
	if (addr == UINT64_MAX)
		return -1;
	memcpy(xp->area + addr, data, len);
	memcpy(xp->area + addr, stamp, sizeof(stamp));
	xskport_tx_submit(xp, idx, addr, len);
	return 0;
}

/* Queue a copy of a frame as it is (a world queue). 0, or -1 when no frame or slot is free. */
static inline int
xskport_tx(struct xskport *xp, const void *data, uint32_t len)
{
	uint32_t idx;
	uint64_t addr;

	if (len > XSKP_FRAME_SIZE)
		return xskport_tx_segs(xp, data, len, NULL);
	addr = xskport_tx_take(xp, len, &idx);
	if (addr == UINT64_MAX)
		return -1;
	memcpy(xp->area + addr, data, len);
	xskport_tx_submit(xp, idx, addr, len);
	return 0;
}

/* The IP MTU the socket carries: a jumbo frame with multi-buffer, one UMEM frame without. */
static inline uint32_t
xskport_mtu_max(const struct xskport *xp)
{
	return xp->sg ? XSKP_MTU_MAX : XSKP_MTU_ONE;
}

/*
 * A received frame of the same UMEM sent on as it lies, by descriptor: 'data' is where the
 * kernel put it (or a little further in the same frame). Towards a sandbox behind the funnel
 * the slot is stamped in place first. 0, or -1 when the TX ring is full.
 */
static inline int
xskport_tx_desc(struct xskport *xp, const uint8_t *data, uint32_t len)
{
	uint32_t idx;

	if (xsk_ring_prod__reserve(&xp->tx, 1, &idx) != 1)
		return -1;
	xskport_tx_submit(xp, idx, (uint64_t)(data - xp->area), len);
	return 0;
}

static inline int
xskport_tx_desc_stamped(struct xskport *xp, uint8_t *data, uint32_t len, uint32_t slot)
{
	uint8_t stamp[6] = { CVS_FUN_STAMP0, CVS_FUN_STAMP1, (uint8_t)(slot >> 24),
			     (uint8_t)(slot >> 16), (uint8_t)(slot >> 8), (uint8_t)slot };
	uint32_t idx;

	if (len < sizeof(stamp) || xsk_ring_prod__reserve(&xp->tx, 1, &idx) != 1)
		return -1;
	memcpy(data, stamp, sizeof(stamp));
	xskport_tx_submit(xp, idx, (uint64_t)(data - xp->area), len);
	return 0;
}

/*
 * Tests only (--test-unpacked-pool): a descriptor past the end of the UMEM, which the kernel
 * rejects and counts (tx_invalid_descs) without ever completing it, so no frame is lost to it.
 */
static inline int
xskport_tx_invalid(struct xskport *xp, uint32_t len)
{
	uint32_t idx;

	if (xsk_ring_prod__reserve(&xp->tx, 1, &idx) != 1)
		return -1;
	xskport_tx_submit(xp, idx, (uint64_t)xp->nframes * XSKP_FRAME_SIZE, len);
	return 0;
}

/* Descriptors on the TX ring that the kernel has not taken yet. */
static inline uint32_t
xskport_tx_pending(const struct xskport *xp)
{
	return xp->tx.cached_prod - __atomic_load_n(xp->tx.consumer, __ATOMIC_ACQUIRE);
}

/*
 * Copy mode needs a syscall to move queued frames; one per burst, not per frame. A send
 * leaves descriptors behind when the kernel stops early: at a frame the device drops (one
 * larger than its MTU: the call ends with EBUSY there), at a busy queue (EAGAIN) or at its
 * per-call budget of 32. Those are kicked again on the next loop even when nothing new was
 * queued, so the frames behind an undeliverable one never wait for new traffic (issue 33).
 */
static inline void
xskport_kick(struct xskport *xp)
{
	if (!xp->tx_unsent && !xskport_tx_pending(xp))
		return;
	xp->tx_unsent = 0;
	if (xsk_ring_prod__needs_wakeup(&xp->tx))
		sendto(xp->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
}

/*
 * Give received frames back to the kernel; in their place, frames of the pool for those that
 * were sent on by descriptor (fill_owed), while the pool keeps XSKP_POOL_RESERVE for copies.
 */
#define XSKP_POOL_RESERVE	64u

static inline void
xskport_refill(struct xskport *xp, const uint64_t *addrs, uint32_t n)
{
	struct xskport *pl = xp->pool;
	uint32_t idx, i, owed = 0;

	if (xp->fill_owed && pl->nfree > XSKP_POOL_RESERVE) {
		owed = pl->nfree - XSKP_POOL_RESERVE;
		owed = owed < xp->fill_owed ? owed : xp->fill_owed;
	}
	if ((!n && !owed) || xsk_ring_prod__reserve(&xp->fq, n + owed, &idx) != n + owed)
		return;
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&xp->fq, idx + i) = addrs[i];
	for (i = 0; i < owed; i++)
		*xsk_ring_prod__fill_addr(&xp->fq, idx + n + i) = pl->free[--pl->nfree];
	xp->fill_owed -= owed;
	xsk_ring_prod__submit(&xp->fq, n + owed);
}

/*
 * Control thread, not per packet (xskport.c): create the socket on 'queue' of 'ifname' with a
 * UMEM of 'nframes' frames (a power of two, CVS_UMEM_FRAMES_MIN..MAX of umem.h) and a full
 * fill ring, or destroy it. No XDP program is loaded: ours is attached already, and the
 * caller puts the socket into its map. Returns NULL and sets errno; 'err' gets a readable
 * reason.
 */
struct xskport *xskport_create(const char *ifname, int ifindex, uint32_t queue, uint32_t slot,
			       uint32_t nframes, char *err, size_t errlen);
/*
 * The same, but 'fill' frames in the fill ring (nframes / 2 above), and with 'zerocopy' bound
 * in zero-copy mode or not at all (the probe of a world queue).
 */
struct xskport *xskport_create_opts(const char *ifname, int ifindex, uint32_t queue,
				    uint32_t slot, uint32_t nframes, uint32_t fill, bool zerocopy,
				    char *err, size_t errlen);
/*
 * A socket on another device or queue over owner's UMEM (XDP_SHARED_UMEM, its own fill and
 * completion rings, owner's copy or zero-copy mode), its fill ring given 'fill' frames of
 * owner's free stack: frames received on one can leave on the other by descriptor. Destroy
 * it before its owner.
 */
struct xskport *xskport_create_shared(struct xskport *owner, const char *ifname, int ifindex,
				      uint32_t queue, uint32_t slot, uint32_t fill, char *err,
				      size_t errlen);
void xskport_destroy(struct xskport *xp);

#endif /* CVS_XSKPORT_H */
