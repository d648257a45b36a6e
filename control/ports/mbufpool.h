/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CVS_MBUFPOOL_H
#define CVS_MBUFPOOL_H

#include <stdbool.h>
#include <stddef.h>

#include <rte_mempool.h>

/*
 * The mbuf pool of the world port. For a net_af_xdp port the pool is the socket's UMEM, and
 * the PMD registers it as populated_size × object size from the first object: every object
 * must lie inside that span, so the pool is packed (objects may cross page boundaries, which
 * copy-mode and zero-copy AF_XDP both allow). A default pool keeps objects inside pages: on
 * 4 KiB pages (--no-huge) one 2,368-byte mbuf per page, 16,382 mbufs over 64 MiB of which the
 * PMD registered 37 MiB. Once the pool handed out an mbuf above that, the kernel rejected its
 * tx descriptor (tx_invalid_descs), stopped taking frames from the ring, and every frame to
 * the world was lost for good. Other ports (PCI NICs DMA into the mbufs) keep the default pool.
 */
struct rte_mempool *mbufpool_create(const char *name, unsigned int n, unsigned int cache,
				    int socket, bool packed);

/* Whether every object of a packed pool lies inside the span AF_XDP registers; else why. */
bool mbufpool_packed_ok(const struct rte_mempool *mp, char *why, size_t whylen);

#endif
