/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdint.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include "mbufpool.h"

struct rte_mempool *
mbufpool_create(const char *name, unsigned int n, unsigned int cache, int socket, bool packed)
{
	struct rte_pktmbuf_pool_private priv = {
		.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE,
		.mbuf_priv_size = 0,
	};
	struct rte_mempool *mp;
	int ret;

	if (!packed)
		return rte_pktmbuf_pool_create(name, n, cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					       socket);
	/* rte_pktmbuf_pool_create() by hand, with the one flag it does not take. */
	mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE,
				      cache, sizeof(priv), socket, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp)
		return NULL;
	ret = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (!ret) {
		rte_pktmbuf_pool_init(mp, &priv);
		ret = rte_mempool_populate_default(mp);
		ret = ret < 0 ? ret : ((unsigned int)ret == n ? 0 : -ENOMEM);
	}
	if (ret) {
		rte_mempool_free(mp);
		rte_errno = -ret;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

struct span {
	uintptr_t lo, hi;
	size_t total;
};

static void
span_of(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct span *s = arg;
	uintptr_t o = (uintptr_t)obj - mp->header_size;

	(void)idx;
	if (o < s->lo)
		s->lo = o;
	if (o + s->total > s->hi)
		s->hi = o + s->total;
}

bool
mbufpool_packed_ok(const struct rte_mempool *mp, char *why, size_t whylen)
{
	struct rte_mempool *m = (struct rte_mempool *)mp;
	struct span s = { .lo = UINTPTR_MAX, .hi = 0 };
	size_t want;

	s.total = (size_t)mp->header_size + mp->elt_size + mp->trailer_size;
	want = (size_t)mp->populated_size * s.total;
	rte_mempool_obj_iter(m, span_of, &s);
	if (mp->nb_mem_chunks != 1 || s.hi - s.lo > want) {
		snprintf(why, whylen, "the mbuf pool spans %zu bytes in %u chunk(s), more than "
			 "the %zu bytes an AF_XDP UMEM registers for it", (size_t)(s.hi - s.lo),
			 mp->nb_mem_chunks, want);
		return false;
	}
	return true;
}
