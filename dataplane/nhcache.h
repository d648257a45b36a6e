/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Next-hop cache: destination IP → MAC, written by the control thread (which learns it from
 * the kernel over netlink), read by workers under a per-entry sequence lock. Key 0 holds the
 * default gateway. A worker that misses posts the destination to its request ring, which the
 * control thread drains.
 *
 * Per packet (worker): dp_nh_lookup(), dp_nh_request(). Control thread: dp_nh_store(),
 * dp_nh_clear(), dp_nh_next_request().
 */
#ifndef CVS_NHCACHE_H
#define CVS_NHCACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define DP_NH_SIZE	4096	/* power of two */
#define DP_NH_PROBE	8
#define DP_NH_REQS	256	/* power of two */

struct dp_nh_entry {
	_Atomic uint32_t seq;	/* odd while being written */
	_Atomic uint32_t ip;	/* 0 with valid == 0: empty */
	_Atomic uint32_t valid;
	uint8_t mac[6];
};

struct dp_nh {
	struct dp_nh_entry e[DP_NH_SIZE];
};

/* Next-hop requests of one worker to the control thread (single producer, single consumer). */
struct dp_nh_reqs {
	_Atomic uint32_t head;	/* written by the worker */
	_Atomic uint32_t tail;	/* written by the control thread */
	_Atomic uint32_t req[DP_NH_REQS];
};

/* Worker, per packet: the MAC of 'ip', false when unknown or being rewritten. */
bool dp_nh_lookup(struct dp_nh *nh, uint32_t ip, uint8_t mac[6]);
/* Worker, per packet: ask the control thread to resolve 'ip' (dropped when the ring is full). */
void dp_nh_request(struct dp_nh_reqs *q, uint32_t ip);

/* Control thread: add or replace an entry, or invalidate them all. */
void dp_nh_store(struct dp_nh *nh, uint32_t ip, const uint8_t mac[6]);
void dp_nh_clear(struct dp_nh *nh);
/* Control thread: take one pending request; false when none. */
bool dp_nh_next_request(struct dp_nh_reqs *q, uint32_t *ip);

#endif /* CVS_NHCACHE_H */
