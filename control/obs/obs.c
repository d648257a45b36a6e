/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/if_xdp.h>
#include <bpf/libbpf.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "cvs_common.h"
#include "cvs_version.h"
#include "log.h"
#include "obs.h"
#include "rtnl.h"
#include "region.h"
#include "store.h"
#include "worker.h"
#include "xdpctl.h"

#define OBS_DUMP_MAX		1000u	/* largest page of /sessions */
#define OBS_DUMP_BUDGET		65536u	/* table slots the worker looks at per mailbox call */
#define OBS_SUMMARY_MS		10000u
#define OBS_WORKER_STALL_MS	1000u
#define OBS_WXSK_CHECK_MS	1000u
#define OBS_WXSK_LOG_MS		10000u	/* at most one line per queue and counter per period */
#define OBS_WXSK_UNREADY_MS	30000u	/* /readyz 503 this long after a rejected descriptor */

int
obs_init(struct obs *o)
{
	o->dump_buf = calloc(OBS_DUMP_MAX, sizeof(*o->dump_buf));
	if (!o->dump_buf)
		return -ENOMEM;
	pthread_mutex_init(&o->dump_lock, NULL);
	clock_gettime(CLOCK_MONOTONIC, &o->started);
	if (!o->summary_period_ms)
		o->summary_period_ms = OBS_SUMMARY_MS;
	o->next_summary_ms = cvs_now_ms() + o->summary_period_ms;
	return 0;
}

void
obs_fini(struct obs *o)
{
	if (!o->dump_buf)
		return;
	pthread_mutex_destroy(&o->dump_lock);
	free(o->dump_buf);
	o->dump_buf = NULL;
}

/* Packet-triggered conditions are counted, never logged per packet: one line per period. */
static void
obs_drop_summary(struct obs *o)
{
	char line[1024];
	size_t off = 0;
	uint64_t total = 0;
	int i;

	for (i = 0; i < CVS_DROP_MAX; i++) {
		uint64_t now = 0, d;
		uint32_t k;

		for (k = 0; k < o->nw; k++)
			now += worker_drops(&o->w[k], i);
		d = now - o->drops_logged[i];

		o->drops_logged[i] = now;
		if (!d)
			continue;
		total += d;
		if (off < sizeof(line))
			off += (size_t)snprintf(line + off, sizeof(line) - off, " %s=%llu",
						cvs_drop_names[i], (unsigned long long)d);
	}
	if (total)
		CVS_LOG(NOTICE, ctl, "%llu packets dropped in the last %u s:%s",
			(unsigned long long)total, o->summary_period_ms / 1000, line);
}

static void
obs_warn_unattached(void *arg, const struct sandbox *sb)
{
	if (!sb->dp)
		CVS_LOG(WARNING, ctl, "sandbox %s is registered but not attached: %s", sb->id,
			sb->why);
}

void
obs_log_unattached(struct obs *o)
{
	reg_foreach(o->reg, obs_warn_unattached, NULL);
}

/*
 * A kernel service that starts listening on a host port already handed out is shadowed by
 * the steering program: say so once when the set of such ports changes, not every tick.
 */
static void
obs_log_conflicts(struct obs *o)
{
	struct reg_hostport_info hp;
	char list[HOSTPORTS_MAX_CONFLICTS * 7 + 8];
	size_t at = 0;
	uint32_t i;

	reg_hostport_info(o->reg, &hp);
	if (hp.nconflicts == o->conflicts_logged &&
	    !memcmp(hp.conflicts, o->conflict_ports, sizeof(hp.conflicts)))
		return;
	o->conflicts_logged = hp.nconflicts;
	memcpy(o->conflict_ports, hp.conflicts, sizeof(hp.conflicts));
	if (!hp.nconflicts) {
		CVS_LOG(INFO, ctl, "no host port shadows a kernel listener any more");
		return;
	}
	list[0] = '\0';
	for (i = 0; i < hp.nconflicts && i < HOSTPORTS_MAX_CONFLICTS; i++)
		at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%u", i ? "," : "",
				       hp.conflicts[i]);
	CVS_LOG(WARNING, ctl, "%u host port(s) handed out to sandboxes now also have a kernel "
		"listener on the node, which world clients cannot reach: %s%s (move the "
		"service, or register the sandbox's port again: a port with a listener is "
		"never handed out; --reserved-host-ports keeps a port out for good)",
		hp.nconflicts, list, hp.nconflicts > HOSTPORTS_MAX_CONFLICTS ? ",..." : "");
}

/* ---- the world port's sockets ---- */

static const char *const obs_wxsk_what[2] = {
	"descriptors of the fill ring were invalid (rx_invalid_descs): frames from the world "
	"are dropped",
	"TX descriptors were rejected (tx_invalid_descs): frames to the world are lost and the "
	"queue's transmit may have stopped for good",
};

/* Counter c (0 rx_invalid, 1 tx_invalid) of socket i now reads v. */
static void
obs_wxsk_rise(struct obs *o, uint32_t i, int c, uint64_t v, uint64_t now)
{
	if (v <= o->wxsk_seen[i][c]) {
		o->wxsk_seen[i][c] = v;
		return;
	}
	o->wxsk_pending[i][c] += v - o->wxsk_seen[i][c];
	o->wxsk_seen[i][c] = v;
	atomic_fetch_add(&o->wxsk_alarms, 1);
	atomic_store(&o->wxsk_bad_until_ms, now + OBS_WXSK_UNREADY_MS);
}

static void
obs_wxsk_log(struct obs *o, uint64_t now)
{
	uint32_t i;
	int c;

	if (now < o->wxsk_next_log_ms)
		return;
	for (i = 0; i < OBS_WXSK_MAX; i++)
		for (c = 0; c < 2; c++) {
			if (!o->wxsk_pending[i][c])
				continue;
			CVS_LOG(ERR, ctl, "world port queue %u: %llu %s (%llu in all; "
				"cubevs_world_xsk_%s_invalid_total, docs/troubleshooting.md)",
				o->wxsk_seen_queue[i], (unsigned long long)o->wxsk_pending[i][c],
				obs_wxsk_what[c], (unsigned long long)o->wxsk_seen[i][c],
				c ? "tx" : "rx");
			o->wxsk_pending[i][c] = 0;
			o->wxsk_next_log_ms = now + OBS_WXSK_LOG_MS;
		}
}

/* The kernel's invalid-descriptor counts of every world socket, once a second. */
static void
obs_wxsk_check(struct obs *o, uint64_t now)
{
	struct xdp_statistics xs;
	uint32_t i;
	int ret;

	if (!o->wq || now < o->wxsk_next_check_ms)
		return;
	o->wxsk_next_check_ms = now + OBS_WXSK_CHECK_MS;
	for (i = 0; i < OBS_WXSK_MAX && (ret = worldq_read(o->wq, i, &xs)) != -ENOENT; i++) {
		if (ret)
			continue;
		/* From 0: the sockets are as old as the process, every invalid one is news. */
		o->wxsk_seen_queue[i] = i;
		obs_wxsk_rise(o, i, 0, xs.rx_invalid_descs, now);
		obs_wxsk_rise(o, i, 1, xs.tx_invalid_descs, now);
	}
	obs_wxsk_log(o, now);
}

/* The world sockets' statistics into the snapshot (any thread). */
static void
obs_wxsk_snap(struct obs *o, struct obs_snap *s)
{
	struct xdp_statistics xs;
	uint32_t i;
	int ret;

	for (i = 0; o->wq && i < OBS_WXSK_MAX && (ret = worldq_read(o->wq, i, &xs)) != -ENOENT;
	     i++) {
		if (ret)
			continue;
		s->wxsk_queue[s->wxsk_n] = i;
#define OBS_XSK_COPY(f, str, h) s->wxsk[s->wxsk_n][OBS_XSK_##f] = xs.f;
		OBS_XSK_COUNTERS(OBS_XSK_COPY)
#undef OBS_XSK_COPY
		s->wxsk_n++;
	}
	s->wxsk_alarms = atomic_load(&o->wxsk_alarms);
}

void
obs_tick(struct obs *o)
{
	uint64_t now = cvs_now_ms(), oldest = UINT64_MAX;
	uint32_t k;

	/* Every worker must be moving: readiness follows the one that moved last longest ago. */
	for (k = 0; k < o->nw && k < OBS_MAX_WORKERS; k++) {
		uint64_t loops = worker_loops(&o->w[k]);

		if (loops != o->loops_seen[k]) {
			o->loops_seen[k] = loops;
			o->moved_ms[k] = now;
		}
		if (o->moved_ms[k] < oldest)
			oldest = o->moved_ms[k];
	}
	atomic_store(&o->worker_seen_ms, oldest == UINT64_MAX ? 0 : oldest);
	obs_log_conflicts(o);
	obs_wxsk_check(o, now);
	if (now >= o->next_summary_ms) {
		obs_drop_summary(o);
		o->next_summary_ms = now + o->summary_period_ms;
	}
}

struct obs_sbx_walk {
	const struct obs *o;
	struct obs_snap *s;
	uint32_t cap;
};

/* One registration into the snapshot (under the registry lock: copy, do not keep). */
static void
obs_sbx_one(void *arg, const struct sandbox *sb)
{
	struct obs_sbx_walk *v = arg;
	struct obs_snap *s = v->s;
	const struct cvs_port_stats *ps;
	struct obs_sbx *e;

	if (s->nsbx == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 64;
		struct obs_sbx *grown = realloc(s->sbx, cap * sizeof(*s->sbx));

		if (!grown)
			return;
		s->sbx = grown;
		v->cap = cap;
	}
	e = &s->sbx[s->nsbx++];
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", sb->id);
	e->attached = sb->dp != NULL;
	if (!e->attached) {
		s->unattached++;
		return;
	}
	ps = worker_slot_stats(&v->o->w[0], sb->slot);
	if (ps)
		memcpy(e->port, ps->c, sizeof(e->port));
	/* The sandbox program counts this one, not a worker. */
	if (!reg_is_vhost(sb) && v->o->sbx)
		e->port[CVS_PC_POLICED] = xdpctl_sbx_policed(v->o->sbx, sb->slot);
}

static void
obs_sbx_collect(struct obs *o, struct obs_snap *s)
{
	struct obs_sbx_walk v = { .o = o, .s = s, .cap = 0 };
	struct reg_hostport_info hp;

	reg_foreach(o->reg, obs_sbx_one, &v);
	reg_link_counts(o->reg, &s->links_lost, &s->links_back);
	s->links_ending = o->sbx ? xdpctl_sbx_ending(o->sbx) : 0;
	reg_hostport_info(o->reg, &hp);
	s->hp_size = hp.size;
	s->hp_used = hp.used;
	s->hp_free = hp.free;
	s->hp_listening = hp.listening;
	s->hp_holds = hp.holds;
	s->hp_conflicts = hp.nconflicts;
	s->hp_holds_reused = hp.st.holds_reused;
	s->hp_holds_expired = hp.st.holds_expired;
	s->hp_holds_broken = hp.st.holds_broken;
	s->hp_scan_errors = hp.st.scan_errors;
	vhostctl_stats(&s->vh);
}

/*
 * Buffers: idle values are what a quiet node returns to, so a leak shows as a drift. The UMEM
 * free counts and the parked count belong to the workers; a relaxed read is exact at rest.
 */
static void
obs_buffers(const struct obs *o, struct obs_snap *s)
{
	uint32_t k;

	if (o->nw && worker_mbufs(&o->w[0]))
		s->mbufs_in_use = rte_mempool_in_use_count(worker_mbufs(&o->w[0]));
	for (k = 0; k < o->nw; k++)
		s->parked += worker_parked(&o->w[k]);
	for (k = 0; k < o->nw; k++) {
		const struct xskport *xp = worker_funnel(&o->w[k]);
		struct xdp_statistics xs;
		socklen_t len = sizeof(xs);

		if (!xp)
			continue;
		s->umem_frames += xp->nframes;
		s->umem_free += __atomic_load_n(&xp->nfree, __ATOMIC_RELAXED);
		memset(&xs, 0, sizeof(xs));
		if (k < OBS_WXSK_MAX && !getsockopt(xp->fd, SOL_XDP, XDP_STATISTICS, &xs, &len)) {
#define OBS_XSK_COPY(f, str, h) s->fun_xsk[k][OBS_XSK_##f] = xs.f;
			OBS_XSK_COUNTERS(OBS_XSK_COPY)
#undef OBS_XSK_COPY
			s->fun_n = k + 1;
		}
	}
}

/*
 * The world port's counters when its queues are our own sockets: what the worker received
 * and sent on them, and what the kernel dropped before their rings (as net_af_xdp counts).
 */
static void
obs_world_own(const struct obs *o, struct obs_snap *s)
{
	struct xdp_statistics xs;
	uint64_t *e = s->eth[OBS_PORT_WORLD];
	uint32_t i;

	if (!o->wq || !o->wq->n)
		return;
	s->have_port[OBS_PORT_WORLD] = true;
	e[OBS_ETH_ipackets] = s->st.c[CVS_WC_WORLD_RX_PKTS];
	e[OBS_ETH_ibytes] = s->st.c[CVS_WC_WORLD_RX_BYTES];
	e[OBS_ETH_opackets] = s->st.c[CVS_WC_WORLD_TX_PKTS];
	e[OBS_ETH_obytes] = s->st.c[CVS_WC_WORLD_TX_BYTES];
	for (i = 0; !worldq_read(o->wq, i, &xs); i++)
		e[OBS_ETH_imissed] += xs.rx_dropped + xs.rx_ring_full;
}

void
obs_snapshot(struct obs *o, struct obs_snap *s)
{
	struct rte_eth_stats es;
	struct worker_sum sum;
	struct timespec now;
	struct obs_ready rd;
	uint32_t k;
	int i;

	memset(s, 0, sizeof(*s));
	memset(&sum, 0, sizeof(sum));
	for (k = 0; k < o->nw; k++)
		worker_sum_add(&o->w[k], &sum);
	s->st = sum.st;
	memcpy(s->cls, sum.cls, sizeof(s->cls));
	s->sessions = sum.sessions;
	s->capacity = sum.capacity;
	memcpy(s->cls6, sum.cls6, sizeof(s->cls6));
	s->sessions6 = sum.sessions6;
	s->capacity6 = sum.capacity6;
	s->loops = sum.loops;
	obs_buffers(o, s);
	obs_wxsk_snap(o, s);
	if (o->steer)
		xdpctl_read_stats(o->steer->stats_fd, s->xdp_steer);
	if (o->sbx)
		xdpctl_read_stats(o->sbx->stats_fd, s->xdp_sbx);
	obs_world_own(o, s);
	for (i = 0; i < OBS_PORT_MAX; i++) {
		uint16_t pid = i == OBS_PORT_WORLD ? o->world_port : o->host_port;

		if (pid == UINT16_MAX || rte_eth_stats_get(pid, &es))
			continue;
		s->have_port[i] = true;
#define OBS_ETH_COPY(f, str, h) s->eth[i][OBS_ETH_##f] = es.f;
		OBS_ETH_COUNTERS(OBS_ETH_COPY)
#undef OBS_ETH_COPY
	}
	s->tsc_hz = rte_get_tsc_hz();
	s->state_writes = atomic_load(&o->state_writes);
	store_sync_counts(o->store, &s->state_syncs, &s->state_slow_syncs);
	s->state_write_errors = atomic_load(&o->state_write_errors);
	if (o->region) {
		s->region_generation = o->region->generation;
		s->region_bytes = o->region->bytes;
		s->region_adopted = o->region->adopted;
		s->region_discarded_gone = o->region->discarded_gone;
		s->region_discarded_bad = o->region->discarded_bad;
		s->region_rebuilt = o->region->rebuilt;
		s->region_refused = o->region->refused;
		s->region_adopt_us = o->region->adopt_us;
		s->region_carried = o->region->carried_from[0] != 0;
		s->region_carry_dropped = o->region->carry_dropped;
		s->region_adopted6 = o->region->adopted6;
		s->region_refused6 = o->region->refused6;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	s->uptime = (double)(now.tv_sec - o->started.tv_sec) +
		    (double)(now.tv_nsec - o->started.tv_nsec) / 1e9;
	obs_readiness(o, &rd);
	s->ready = rd.world_port_up && rd.steering_attached && rd.worker_polling &&
		   rd.state_restored && rd.world_xsk_healthy;
	obs_sbx_collect(o, s);
}

/* ---- readiness ---- */

void
obs_readiness(struct obs *o, struct obs_ready *r)
{
	struct rte_eth_link link;
	uint64_t seen = atomic_load(&o->worker_seen_ms);

	memset(r, 0, sizeof(*r));
	memset(&link, 0, sizeof(link));
	if (o->wq && o->wq->n)
		r->world_port_up = worldq_link_up(o->cfg->world_iface);
	else
		r->world_port_up = !rte_eth_link_get_nowait(o->world_port, &link) &&
				   link.link_status == RTE_ETH_LINK_UP;
	if (!o->cfg->world_iface[0]) {
		/* A PMD port without our program: nothing to check. */
		r->steering_attached = true;
	} else if (o->steer) {
		uint32_t id = 0;

		r->steering_attached = !rtnl_xdp_prog_id(o->world_ifindex, &id) &&
				       id == o->steer->prog_id;
	}
	r->worker_polling = seen && cvs_now_ms() - seen < OBS_WORKER_STALL_MS;
	r->state_restored = atomic_load(&o->restored);
	r->api_serving = atomic_load(&o->serving);
	r->world_xsk_healthy = cvs_now_ms() >= atomic_load(&o->wxsk_bad_until_ms);
}

/* ---- sessions ---- */

/* The filter and the position of a /sessions page, from the raw query values. */
static int
obs_dump_req(struct obs *o, const char *sandbox, const char *proto, const char *limit,
	     const char *cursor, uint32_t max_limit, struct ct_dump_req *q, uint32_t *lim,
	     uint64_t *cur, char *err, size_t errlen)
{
	char *end;

	memset(q, 0, sizeof(*q));
	*lim = max_limit < 100 ? max_limit : 100;
	*cur = 0;
	if (limit && cvs_parse_u32(limit, 1, max_limit, lim)) {
		snprintf(err, errlen, "limit must be an integer 1..%u", max_limit);
		return -EINVAL;
	}
	/* A cursor is worker << 32 | table index: each worker has its own table. */
	if (cursor) {
		errno = 0;
		*cur = strtoull(cursor, &end, 10);
		if (!*cursor || *end || errno || cursor[0] == '-' || (*cur >> 32) >= o->nw ||
		    (uint32_t)*cur == CT_NIL) {
			snprintf(err, errlen, "cursor must be the nextCursor of an earlier page");
			return -EINVAL;
		}
	}
	if (proto) {
		q->proto = !strcmp(proto, "tcp") ? 6 : !strcmp(proto, "udp") ? 17 :
			   !strcmp(proto, "icmp") ? 1 : 0;
		if (!q->proto) {
			snprintf(err, errlen, "proto must be tcp, udp or icmp");
			return -EINVAL;
		}
	}
	if (sandbox) {
		q->zone = reg_zone_of(o->reg, sandbox);
		if (!q->zone) {
			snprintf(err, errlen, "sandbox %s not found", sandbox);
			return -ENOENT;
		}
	}
	return 0;
}

static bool
obs_zone_id(void *arg, uint16_t zone, char *buf, size_t len)
{
	return reg_zone_name(arg, zone, buf, len);
}

int
obs_sessions(struct obs *o, const char *sandbox, const char *proto, const char *limit,
	     const char *cursor, uint32_t max_limit, json_t **out, char *err, size_t errlen)
{
	struct ct_dump_req q;
	uint32_t lim, got = 0, i, wk;
	uint64_t cur, total = 0;
	json_t *arr;
	char next[24];
	int ret;

	ret = obs_dump_req(o, sandbox, proto, limit, cursor, max_limit, &q, &lim, &cur, err,
			   errlen);
	if (ret)
		return ret;
	pthread_mutex_lock(&o->dump_lock);
	wk = (uint32_t)(cur >> 32);
	q.cursor = (uint32_t)cur;
	/* Several short visits to each worker rather than one long one. */
	while (got < lim && wk < o->nw) {
		q.out = o->dump_buf + got;
		q.max = lim - got;
		q.budget = OBS_DUMP_BUDGET;
		if (worker_dump(&o->w[wk], &q, 2000)) {
			pthread_mutex_unlock(&o->dump_lock);
			snprintf(err, errlen, "worker %u did not answer", wk);
			return -ETIMEDOUT;
		}
		got += q.n;
		if (q.cursor == CT_NIL) {
			wk++;
			q.cursor = 0;
		}
	}
	arr = json_array();
	for (i = 0; i < got; i++)
		json_array_append_new(arr, obs_session_json(&o->dump_buf[i], obs_zone_id, o->reg));
	pthread_mutex_unlock(&o->dump_lock);
	snprintf(next, sizeof(next), "%llu", (unsigned long long)wk << 32 | q.cursor);
	for (i = 0; i < o->nw; i++)
		total += worker_sessions(&o->w[i]);
	*out = json_pack("{s:o,s:i,s:o,s:I}", "sessions", arr, "count", (json_int_t)got,
			 "nextCursor", wk >= o->nw ? json_null() : json_string(next),
			 "total", (json_int_t)total);
	return 0;
}

/* ---- routes ---- */

static json_t *
obs_ready_json(struct obs *o, bool *ready)
{
	struct reg_hostport_info hp;
	struct obs_ready r;
	uint32_t total, unattached, i;
	json_t *conflicts = json_array();

	obs_readiness(o, &r);
	reg_counts(o->reg, &total, &unattached);
	reg_hostport_info(o->reg, &hp);
	for (i = 0; i < hp.nconflicts && i < HOSTPORTS_MAX_CONFLICTS; i++)
		json_array_append_new(conflicts, json_integer(hp.conflicts[i]));
	/*
	 * A shadowed node service is reported, not a reason to stop serving the sandboxes:
	 * the operator decides which of the two moves.
	 */
	*ready = r.world_port_up && r.steering_attached && r.worker_polling && r.state_restored &&
		 r.world_xsk_healthy;
	return json_pack("{s:b,s:{s:b,s:b,s:b,s:b,s:b},s:i,s:i,s:i,s:o}", "ready", *ready,
			 "checks", "worldPortUp", r.world_port_up, "steeringProgramAttached",
			 r.steering_attached, "workerPolling", r.worker_polling, "stateRestored",
			 r.state_restored, "worldSocketsHealthy", r.world_xsk_healthy,
			 "sandboxes", (json_int_t)total, "unattachedSandboxes",
			 (json_int_t)unattached, "hostPortConflicts", (json_int_t)hp.nconflicts,
			 "hostPortsShadowingListeners", conflicts);
}

static void
obs_api_healthz(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	rep->json = json_pack("{s:s}", "status", "ok");
}

static void
obs_api_readyz(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	bool ready;

	rep->json = obs_ready_json(ctx, &ready);
	rep->status = ready ? 200 : 503;
}

static void
obs_api_metrics(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	struct obs_snap s;

	obs_snapshot(ctx, &s);
	rep->text = obs_prometheus(&s, &rep->text_len);
	obs_snap_free(&s);
	if (!rep->text) {
		rep->status = 500;
		rep->json = api_error("out of memory");
		return;
	}
	rep->ctype = "text/plain; version=0.0.4; charset=utf-8";
}

static void
obs_api_stats(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	struct obs_snap s;

	obs_snapshot(ctx, &s);
	rep->json = obs_stats_json(&s);
	obs_snap_free(&s);
}

static void
obs_api_sessions(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	const struct api_query *q = rq->query;
	char err[512];
	int i, ret;

	for (i = 0; i < q->n; i++)
		if (strcmp(q->key[i], "sandbox") && strcmp(q->key[i], "proto") &&
		    strcmp(q->key[i], "limit") && strcmp(q->key[i], "cursor")) {
			rep->status = 400;
			rep->json = api_error("unknown query parameter \"%.64s\"; known: sandbox, "
					      "proto, limit, cursor", q->key[i]);
			return;
		}
	if (q->overflow) {
		rep->status = 400;
		rep->json = api_error("too many query parameters");
		return;
	}
	ret = obs_sessions(ctx, api_query_get(q, "sandbox"), api_query_get(q, "proto"),
			   api_query_get(q, "limit"), api_query_get(q, "cursor"), OBS_DUMP_MAX,
			   &rep->json, err, sizeof(err));
	if (ret) {
		rep->status = ret == -ENOENT ? 404 : ret == -EINVAL ? 400 : 503;
		rep->json = api_error("%s", err);
	}
}

int
obs_api_register(struct api_routes *t, struct obs *o)
{
	int ret;

	ret = api_register(t, "GET", "/healthz", API_EXACT, obs_api_healthz, o);
	if (!ret)
		ret = api_register(t, "GET", "/readyz", API_EXACT, obs_api_readyz, o);
	if (!ret)
		ret = api_register(t, "GET", "/metrics", API_EXACT, obs_api_metrics, o);
	if (!ret)
		ret = api_register(t, "GET", "/stats", API_EXACT, obs_api_stats, o);
	if (!ret)
		ret = api_register(t, "GET", "/sessions", API_EXACT, obs_api_sessions, o);
	return ret;
}
