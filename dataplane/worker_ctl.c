/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread's side of the workers (not per packet): the one-slot mailbox and the
 * publication of sandbox ports by slot. What the worker does with them is worker.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "worker.h"

static int
worker_call_ptr(struct worker *w, uint32_t cmd, uint32_t arg, void *ptr, uint32_t timeout_ms,
		uint32_t *result)
{
	uint64_t seq, spin_until;
	uint32_t waited = 0;
	int ret = 0;

	/* API threads, telemetry and registry changes share the one-slot mailbox. */
	while (atomic_flag_test_and_set_explicit(&w->call_busy, memory_order_acquire))
		usleep(100);
	seq = atomic_load(&w->cmd_seq) + 1;
	w->cmd = cmd;
	w->arg = arg;
	w->cmd_ptr = ptr;
	atomic_store_explicit(&w->cmd_seq, seq, memory_order_release);
	/*
	 * A polling worker answers within a loop or two (about a microsecond), so spin for the
	 * first 50 us: a usleep() would cost 60-170 us and hand the CPU away, which under load
	 * comes back only after other threads' time slices, and every registration waits here.
	 */
	for (spin_until = rte_get_timer_cycles() + rte_get_timer_hz() / 20000;
	     atomic_load_explicit(&w->done_seq, memory_order_acquire) != seq &&
	     rte_get_timer_cycles() < spin_until;)
		rte_pause();
	while (atomic_load_explicit(&w->done_seq, memory_order_acquire) != seq) {
		if (waited++ >= timeout_ms * 10) {
			ret = -ETIMEDOUT;
			break;
		}
		usleep(100);
	}
	if (!ret && result)
		*result = w->cmd_result;
	atomic_flag_clear_explicit(&w->call_busy, memory_order_release);
	return ret;
}

int
worker_call(struct worker *w, uint32_t cmd, uint32_t arg, uint32_t timeout_ms,
	    uint32_t *result)
{
	return worker_call_ptr(w, cmd, arg, NULL, timeout_ms, result);
}

int
worker_dump(struct worker *w, struct ct_dump_req *req, uint32_t timeout_ms)
{
	return worker_call_ptr(w, WCMD_DUMP, 0, req, timeout_ms, NULL);
}

void
worker_publish(struct worker_ports *wp, uint32_t slot, bool on)
{
	atomic_store_explicit(&wp->xsk_on[slot], on, memory_order_release);
}

void
worker_publish_vhost(struct worker_ports *wp, uint32_t slot, struct vhport *vp)
{
	atomic_store_explicit(&wp->vh[slot], vp, memory_order_release);
	if (vp && slot + 1 > atomic_load(&wp->vh_hi))
		atomic_store_explicit(&wp->vh_hi, slot + 1, memory_order_release);
}

void
worker_sum_add(const struct worker *w, struct worker_sum *sum)
{
	int i;

	for (i = 0; i < CVS_DROP_MAX; i++)
		sum->st.drop[i] += w->st.drop[i];
	for (i = 0; i < CVS_WC_MAX; i++)
		sum->st.c[i] += w->st.c[i];
	for (i = 0; i < CT_C_MAX; i++)
		sum->cls[i] += w->ct->class_count[i];
	sum->sessions += atomic_load(&w->sessions);
	sum->capacity += w->ct->capacity;
	for (i = 0; i < CT_C_MAX; i++)
		sum->cls6[i] += w->cls6[i];
	sum->sessions6 += atomic_load(&w->sessions6);
	sum->capacity6 += w->capacity6;
	sum->loops += atomic_load(&w->loops);
}

uint64_t
worker_drops(const struct worker *w, int reason)
{
	return w->st.drop[reason];
}

uint64_t
worker_loops(const struct worker *w)
{
	return atomic_load_explicit(&w->loops, memory_order_acquire);
}

uint32_t
worker_sessions(const struct worker *w)
{
	return atomic_load(&w->sessions);
}

uint32_t
worker_parked(const struct worker *w)
{
	return __atomic_load_n(&w->nparked, __ATOMIC_RELAXED);
}

const struct xskport *
worker_funnel(const struct worker *w)
{
	return w->fun;
}

struct rte_mempool *
worker_mbufs(const struct worker *w)
{
	return w->mp;
}

const struct cvs_port_stats *
worker_slot_stats(const struct worker *w, uint32_t slot)
{
	return w->slot_st ? &w->slot_st[slot] : NULL;
}

void
worker_share_world(struct worker *w, struct xskport *xp)
{
	w->wq_rx = xp;
	w->wq_tx = xp;
	w->wq_shared = true;
}

int
worker_init(struct worker *w, const struct worker_conf *c)
{
	char rname[32];

	w->ct = c->ct;
	w->ct6_given = c->ct6;
	w->clock_base = c->clock_base;
	w->park = calloc(PARK_MAX, sizeof(*w->park));
	snprintf(rname, sizeof(rname), "cvs_inbox%u", c->id);
	/* Frames other workers hand over: only needed when there are others. */
	w->inbox = c->nworkers > 1 ? rte_ring_create(rname, WORKER_INBOX, rte_socket_id(),
						     RING_F_SC_DEQ) : NULL;
	if (!w->ct || !w->park || (c->nworkers > 1 && !w->inbox))
		return -ENOMEM;
	w->id = c->id;
	w->nworkers = c->nworkers;
	w->all = c->all;
	w->slot_st = c->slot_st;
	w->wp = c->wp;
	w->mp = c->mp;
	w->world_port = c->world_port;
	w->world_queue = c->id < c->world_queues ? (uint16_t)c->id : UINT16_MAX;
	w->world_txq = (uint16_t)(c->id % c->world_queues);
	w->world_txlock = c->world_txlock;
	if (c->world_xsk) {
		w->wq_rx = w->world_queue != UINT16_MAX ? c->world_xsk[w->world_queue] : NULL;
		w->wq_tx = c->world_xsk[w->world_txq];
		w->test_bad_tx = c->test_bad_tx;
	}
	w->host_port = c->host_port;
	w->host_queue = (uint16_t)c->id;
	w->idle_sleep_us = c->idle_sleep_us;
	w->frag_cfg = c->frag;
	w->ctx.cfg = c->cfg;
	w->ctx.sh = c->sh;
	w->ctx.snat_cursor = (uint32_t)rte_rdtsc() * (c->id + 1);
	dp_snat_share(c->cfg, c->id, c->nworkers, &w->ctx.snat_lo, &w->ctx.snat_hi);
	return 0;
}
