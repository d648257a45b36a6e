/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The next-hop cache (see nhcache.h). Entries are written under a sequence count, so a worker
 * never waits for the control thread: a lookup that overlaps a write misses, as a lookup of an
 * unknown address does. Lookup and request run per packet, the rest on the control thread.
 */
#include <string.h>

#include "nhcache.h"

static inline uint32_t
nh_slot(uint32_t ip)
{
	return (ip * 2654435761u) >> (32 - 12);
}

bool
dp_nh_lookup(struct dp_nh *nh, uint32_t ip, uint8_t mac[6])
{
	uint32_t i, h = nh_slot(ip);

	for (i = 0; i < DP_NH_PROBE; i++) {
		struct dp_nh_entry *e = &nh->e[(h + i) & (DP_NH_SIZE - 1)];
		uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire), eip, valid;

		if (s1 & 1)
			return false;
		eip = atomic_load_explicit(&e->ip, memory_order_relaxed);
		valid = atomic_load_explicit(&e->valid, memory_order_relaxed);
		if (!valid && !eip)
			return false;
		if (eip != ip || !valid)
			continue;
		memcpy(mac, e->mac, 6);
		atomic_thread_fence(memory_order_acquire);
		return atomic_load_explicit(&e->seq, memory_order_relaxed) == s1;
	}
	return false;
}

void
dp_nh_store(struct dp_nh *nh, uint32_t ip, const uint8_t mac[6])
{
	uint32_t i, h = nh_slot(ip), pick = DP_NH_SIZE;

	for (i = 0; i < DP_NH_PROBE; i++) {
		uint32_t k = (h + i) & (DP_NH_SIZE - 1);
		struct dp_nh_entry *e = &nh->e[k];

		if (atomic_load(&e->ip) == ip && atomic_load(&e->valid)) {
			pick = k;
			break;
		}
		if (pick == DP_NH_SIZE && !atomic_load(&e->valid))
			pick = k;
	}
	if (pick == DP_NH_SIZE)
		pick = h & (DP_NH_SIZE - 1);	/* full run: replace the home entry */
	{
		struct dp_nh_entry *e = &nh->e[pick];

		atomic_fetch_add_explicit(&e->seq, 1, memory_order_acq_rel);
		atomic_thread_fence(memory_order_release);
		atomic_store_explicit(&e->ip, ip, memory_order_relaxed);
		memcpy(e->mac, mac, 6);
		atomic_store_explicit(&e->valid, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->seq, 1, memory_order_release);
	}
}

void
dp_nh_clear(struct dp_nh *nh)
{
	uint32_t k;

	for (k = 0; k < DP_NH_SIZE; k++) {
		struct dp_nh_entry *e = &nh->e[k];

		if (!atomic_load(&e->valid))
			continue;
		atomic_fetch_add_explicit(&e->seq, 1, memory_order_acq_rel);
		/* Keep the ip so probe chains of other entries stay intact. */
		atomic_store_explicit(&e->valid, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->seq, 1, memory_order_release);
	}
}

void
dp_nh_request(struct dp_nh_reqs *q, uint32_t ip)
{
	uint32_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);

	if (head - tail >= DP_NH_REQS)
		return;	/* the control thread is behind; the frame waits or the guest retries */
	atomic_store_explicit(&q->req[head & (DP_NH_REQS - 1)], ip, memory_order_relaxed);
	atomic_store_explicit(&q->head, head + 1, memory_order_release);
}

bool
dp_nh_next_request(struct dp_nh_reqs *q, uint32_t *ip)
{
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);

	if (tail == atomic_load_explicit(&q->head, memory_order_acquire))
		return false;
	*ip = atomic_load_explicit(&q->req[tail & (DP_NH_REQS - 1)], memory_order_relaxed);
	atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
	return true;
}
