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

#include "cvs_version.h"
#include "log.h"
#include "obs.h"
#include "worker.h"
#include "xdpctl.h"

#define OBS_DUMP_MAX		1000u	/* largest page of /sessions */
#define OBS_DUMP_BUDGET		65536u	/* table slots the worker looks at per mailbox call */
#define OBS_SUMMARY_MS		10000u
#define OBS_RETRY_MS		2000u
#define OBS_WORKER_STALL_MS	1000u

static const char *const obs_xsk_names[OBS_XSK_MAX] = {
#define OBS_XSK_NAME(f, s, h) [OBS_XSK_##f] = "sandbox_" s,
	OBS_XSK_COUNTERS(OBS_XSK_NAME)
#undef OBS_XSK_NAME
};
static const char *const obs_xsk_keys[OBS_XSK_MAX] = {
#define OBS_XSK_KEY(f, s, h) [OBS_XSK_##f] = s,
	OBS_XSK_COUNTERS(OBS_XSK_KEY)
#undef OBS_XSK_KEY
};
static const char *const obs_xsk_help[OBS_XSK_MAX] = {
#define OBS_XSK_HELP(f, s, h) [OBS_XSK_##f] = "AF_XDP socket of the sandbox: " h,
	OBS_XSK_COUNTERS(OBS_XSK_HELP)
#undef OBS_XSK_HELP
};
static const char *const obs_eth_keys[OBS_ETH_MAX] = {
#define OBS_ETH_KEY(f, s, h) [OBS_ETH_##f] = s,
	OBS_ETH_COUNTERS(OBS_ETH_KEY)
#undef OBS_ETH_KEY
};
static const char *const obs_eth_names[OBS_ETH_MAX] = {
#define OBS_ETH_NAME(f, s, h) [OBS_ETH_##f] = "port_" s,
	OBS_ETH_COUNTERS(OBS_ETH_NAME)
#undef OBS_ETH_NAME
};
static const char *const obs_eth_help[OBS_ETH_MAX] = {
#define OBS_ETH_HELP(f, s, h) [OBS_ETH_##f] = h,
	OBS_ETH_COUNTERS(OBS_ETH_HELP)
#undef OBS_ETH_HELP
};
static const char *const obs_xdp_names[CVS_XDP_MAX] = {
#define OBS_XDP_NAME(e, s, h) [CVS_XDP_##e] = s,
	CVS_XDP_COUNTERS(OBS_XDP_NAME)
#undef OBS_XDP_NAME
};
static const char *const obs_port_names[CVS_PC_MAX] = {
#define OBS_PC_NAME(n, s, h) [CVS_PC_##n] = "sandbox_port_" s,
	CVS_PORT_COUNTERS(OBS_PC_NAME)
#undef OBS_PC_NAME
};

static const char *const obs_tcp_states[] = {
	"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT", "LAST_ACK",
	"TIME_WAIT", "CLOSE", "SYN_SENT2",
};

static uint64_t
obs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

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
	o->next_summary_ms = obs_now_ms() + o->summary_period_ms;
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
			now += o->w[k].st.drop[i];
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

void
obs_log_unattached(struct obs *o)
{
	struct registry *r = o->reg;
	uint32_t i;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++) {
		const struct sandbox *sb = r->by_slot[i];

		if (sb && !sb->dp)
			CVS_LOG(WARNING, ctl, "sandbox %s is registered but not attached: %s",
				sb->id, sb->why);
	}
	pthread_mutex_unlock(&r->lock);
}

void
obs_tick(struct obs *o)
{
	uint64_t now = obs_now_ms(), oldest = UINT64_MAX;
	uint32_t k;

	/* Every worker must be moving: readiness follows the one that moved last longest ago. */
	for (k = 0; k < o->nw && k < OBS_MAX_WORKERS; k++) {
		uint64_t loops = atomic_load_explicit(&o->w[k].loops, memory_order_acquire);

		if (loops != o->loops_seen[k]) {
			o->loops_seen[k] = loops;
			o->moved_ms[k] = now;
		}
		if (o->moved_ms[k] < oldest)
			oldest = o->moved_ms[k];
	}
	atomic_store(&o->worker_seen_ms, oldest == UINT64_MAX ? 0 : oldest);
	if (now >= o->next_summary_ms) {
		obs_drop_summary(o);
		o->next_summary_ms = now + o->summary_period_ms;
	}
	/* Sandboxes restored while their interface was missing are attached when it appears. */
	if (atomic_load(&o->restored) && now >= o->next_retry_ms) {
		uint32_t total, before, after;

		o->next_retry_ms = now + OBS_RETRY_MS;
		reg_counts(o->reg, &total, &before);
		if (before) {
			after = reg_attach_pending(o->reg);
			if (after < before)
				CVS_LOG(INFO, ctl, "%u restored sandboxes attached, %u still "
					"waiting", before - after, after);
		}
	}
}

static void
obs_sbx_collect(struct obs *o, struct obs_snap *s)
{
	struct registry *r = o->reg;
	uint32_t i, n = 0;

	pthread_mutex_lock(&r->lock);
	s->sbx = calloc(r->count ? r->count : 1, sizeof(*s->sbx));
	for (i = 0; s->sbx && i < r->max_sandboxes && n < r->count; i++) {
		const struct sandbox *sb = r->by_slot[i];
		struct obs_sbx *e;

		if (!sb)
			continue;
		e = &s->sbx[n++];
		snprintf(e->id, sizeof(e->id), "%s", sb->id);
		e->attached = sb->dp != NULL;
		if (!sb->dp) {
			s->unattached++;
			continue;
		}
		if (o->w[0].slot_st)
			memcpy(e->port, o->w[0].slot_st[sb->slot].c, sizeof(e->port));
		{
			const struct xskport *xp = sb->dp;
			struct xdp_statistics xs;
			socklen_t len = sizeof(xs);

			memset(&xs, 0, sizeof(xs));
			if (!getsockopt(xp->fd, SOL_XDP, XDP_STATISTICS, &xs, &len)) {
#define OBS_XSK_COPY(f, str, h) e->xsk[OBS_XSK_##f] = xs.f;
				OBS_XSK_COUNTERS(OBS_XSK_COPY)
#undef OBS_XSK_COPY
			}
		}
	}
	s->nsbx = n;
	pthread_mutex_unlock(&r->lock);
}

/*
 * Buffers: idle values are what a quiet node returns to, so a leak shows as a drift. The UMEM
 * free counts and the parked count belong to the workers; a relaxed read is exact at rest.
 */
static void
obs_buffers(const struct obs *o, struct obs_snap *s)
{
	const struct worker_ports *wp = o->nw ? o->w[0].wp : NULL;
	uint32_t k, hi;

	if (o->nw && o->w[0].mp)
		s->mbufs_in_use = rte_mempool_in_use_count(o->w[0].mp);
	for (k = 0; k < o->nw; k++)
		s->parked += __atomic_load_n(&o->w[k].nparked, __ATOMIC_RELAXED);
	if (!wp || !wp->ports)
		return;
	hi = atomic_load(&wp->hi);
	for (k = 0; k < hi; k++) {
		struct xskport *xp = atomic_load(&wp->ports[k]);

		if (!xp)
			continue;
		s->umem_frames += XSKP_NUM_FRAMES;
		s->umem_free += __atomic_load_n(&xp->nfree, __ATOMIC_RELAXED);
	}
}

void
obs_snapshot(struct obs *o, struct obs_snap *s)
{
	struct rte_eth_stats es;
	struct timespec now;
	struct obs_ready rd;
	uint32_t k;
	int i;

	memset(s, 0, sizeof(*s));
	for (k = 0; k < o->nw; k++) {
		const struct worker *w = &o->w[k];

		for (i = 0; i < CVS_DROP_MAX; i++)
			s->st.drop[i] += w->st.drop[i];
		for (i = 0; i < CVS_WC_MAX; i++)
			s->st.c[i] += w->st.c[i];
		for (i = 0; i < CT_C_MAX; i++)
			s->cls[i] += w->ct->class_count[i];
		s->sessions += atomic_load(&w->sessions);
		s->capacity += w->ct->capacity;
		s->loops += atomic_load(&w->loops);
	}
	obs_buffers(o, s);
	if (o->steer)
		xdpctl_read_stats(o->steer->stats_fd, s->xdp_steer);
	if (o->sbx)
		xdpctl_read_stats(o->sbx->stats_fd, s->xdp_sbx);
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
	s->state_write_errors = atomic_load(&o->state_write_errors);
	clock_gettime(CLOCK_MONOTONIC, &now);
	s->uptime = (double)(now.tv_sec - o->started.tv_sec) +
		    (double)(now.tv_nsec - o->started.tv_nsec) / 1e9;
	obs_readiness(o, &rd);
	s->ready = rd.world_port_up && rd.steering_attached && rd.worker_polling &&
		   rd.state_restored;
	obs_sbx_collect(o, s);
}

void
obs_snap_free(struct obs_snap *s)
{
	free(s->sbx);
	s->sbx = NULL;
}

/* ---- the one enumeration ---- */

static void
obs_emit(obs_visit_fn fn, void *arg, const char *family, const char *help, enum obs_kind kind,
	 const char *label, const char *lvalue, const char *group, const char *key, uint64_t u)
{
	struct obs_metric m = {
		.family = family, .help = help, .kind = kind, .label = label, .lvalue = lvalue,
		.group = group, .key = key, .u = u, .d = (double)u,
	};

	fn(arg, &m);
}

static void
obs_emit_f(obs_visit_fn fn, void *arg, const char *family, const char *help,
	   const char *group, const char *key, double d)
{
	struct obs_metric m = {
		.family = family, .help = help, .kind = OBS_GAUGE, .group = group, .key = key,
		.is_float = true, .d = d, .u = (uint64_t)d,
	};

	fn(arg, &m);
}

void
obs_enumerate(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	uint64_t pkts;
	uint32_t i, k;

	obs_emit(fn, arg, "build_info", "version of the running cubevs-fp (always 1)", OBS_GAUGE,
		 "version", CVS_VERSION, NULL, NULL, 1);
	obs_emit_f(fn, arg, "uptime_seconds", "seconds since cubevs-fp started", "",
		   "uptimeSeconds", s->uptime);
	obs_emit(fn, arg, "ready", "1 when /readyz answers 200", OBS_GAUGE, NULL, NULL, "",
		 "ready", s->ready);
	for (i = 0; i < CVS_WC_MAX; i++)
		obs_emit(fn, arg, cvs_wcounter_names[i], cvs_wcounter_help[i], OBS_COUNTER, NULL,
			 NULL, "worker", cvs_wcounter_names[i], s->st.c[i]);
	obs_emit(fn, arg, "worker_loops", "iterations of the worker loop", OBS_COUNTER, NULL,
		 NULL, "worker", "loops", s->loops);
	pkts = s->st.c[CVS_WC_WORLD_RX_PKTS] + s->st.c[CVS_WC_SBX_RX_PKTS] +
	       s->st.c[CVS_WC_HOST_RX_PKTS];
	obs_emit_f(fn, arg, "worker_cycles_per_packet",
		   "busy cycles divided by packets received, since the start", "worker",
		   "cycles_per_packet", pkts ? (double)s->st.c[CVS_WC_BUSY_CYCLES] / pkts : 0);
	obs_emit_f(fn, arg, "worker_pipeline_cycles_per_packet",
		   "pipeline cycles divided by pipeline packets, since the start", "worker",
		   "pipeline_cycles_per_packet", s->st.c[CVS_WC_PIPE_PKTS] ?
		   (double)s->st.c[CVS_WC_PIPE_CYCLES] / s->st.c[CVS_WC_PIPE_PKTS] : 0);
	obs_emit(fn, arg, "tsc_hz", "TSC frequency: busy cycles per second", OBS_GAUGE, NULL,
		 NULL, "worker", "tsc_hz", s->tsc_hz);
	for (i = 0; i < CVS_DROP_MAX; i++)
		obs_emit(fn, arg, "drops", "packets dropped by the worker, by reason", OBS_COUNTER,
			 "reason", cvs_drop_names[i], "drops", cvs_drop_names[i], s->st.drop[i]);
	for (i = 0; i < CVS_XDP_MAX; i++)
		obs_emit(fn, arg, "xdp_verdicts",
			 "verdicts of the XDP programs (per-CPU maps summed), by verdict",
			 OBS_COUNTER, "verdict", obs_xdp_names[i], "xdp", obs_xdp_names[i],
			 s->xdp_steer[i] + s->xdp_sbx[i]);
	for (i = 0; i < CT_C_MAX; i++)
		obs_emit(fn, arg, "sessions", "sessions in the table, by protocol/state class",
			 OBS_GAUGE, "class", ct_class_names[i], "sessionsByClass",
			 ct_class_names[i], s->cls[i]);
	obs_emit(fn, arg, "session_table_used", "sessions in the table", OBS_GAUGE, NULL, NULL,
		 "", "sessions", s->sessions);
	obs_emit(fn, arg, "session_table_capacity", "session table capacity (--max-sessions)",
		 OBS_GAUGE, NULL, NULL, "", "sessionCapacity", s->capacity);
	obs_emit_f(fn, arg, "session_table_fill_ratio", "sessions / capacity", "", "sessionFill",
		   s->capacity ? (double)s->sessions / s->capacity : 0);
	obs_emit(fn, arg, "mbufs_in_use", "mbufs taken from the pool (rx rings, frames in flight)",
		 OBS_GAUGE, NULL, NULL, "buffers", "mbufsInUse", s->mbufs_in_use);
	obs_emit(fn, arg, "umem_frames", "UMEM frames of the attached sandbox ports", OBS_GAUGE,
		 NULL, NULL, "buffers", "umemFrames", s->umem_frames);
	obs_emit(fn, arg, "umem_frames_free",
		 "UMEM frames free for transmit on the sandbox ports (the rest are the kernel's)",
		 OBS_GAUGE, NULL, NULL, "buffers", "umemFramesFree", s->umem_free);
	obs_emit(fn, arg, "parked_frames", "frames waiting for their next hop to be resolved",
		 OBS_GAUGE, NULL, NULL, "buffers", "parkedFrames", s->parked);
	for (k = 0; k < OBS_ETH_MAX; k++)
		for (i = 0; i < OBS_PORT_MAX; i++) {
			struct obs_metric m = {
				.family = obs_eth_names[k], .help = obs_eth_help[k],
				.kind = OBS_COUNTER, .label = "port",
				.lvalue = i == OBS_PORT_WORLD ? "world" : "host", .group = "ports",
				.key = obs_eth_keys[k], .nested = true, .u = s->eth[i][k],
				.d = (double)s->eth[i][k],
			};

			if (s->have_port[i])
				fn(arg, &m);
		}
	obs_emit(fn, arg, "sandboxes", "registered sandboxes", OBS_GAUGE, NULL, NULL, "registry",
		 "sandboxes", s->nsbx);
	obs_emit(fn, arg, "sandboxes_unattached",
		 "registered sandboxes whose interface is not attached", OBS_GAUGE, NULL, NULL,
		 "registry", "unattached", s->unattached);
	obs_emit(fn, arg, "state_writes", "successful writes of the state file", OBS_COUNTER,
		 NULL, NULL, "state", "writes", s->state_writes);
	obs_emit(fn, arg, "state_write_errors", "failed writes of the state file", OBS_COUNTER,
		 NULL, NULL, "state", "write_errors", s->state_write_errors);
	for (k = 0; k < CVS_PC_MAX; k++)
		for (i = 0; i < s->nsbx; i++) {
			struct obs_metric m = {
				.family = obs_port_names[k], .help = cvs_pcounter_help[k],
				.kind = OBS_COUNTER, .label = "sandbox", .lvalue = s->sbx[i].id,
				.group = "sandboxPorts", .key = cvs_pcounter_names[k],
				.nested = true, .per_sandbox = true, .u = s->sbx[i].port[k],
				.d = (double)s->sbx[i].port[k],
			};

			fn(arg, &m);
		}
	for (k = 0; k < OBS_XSK_MAX; k++)
		for (i = 0; i < s->nsbx; i++) {
			struct obs_metric m = {
				.family = obs_xsk_names[k], .help = obs_xsk_help[k],
				.kind = OBS_COUNTER, .label = "sandbox", .lvalue = s->sbx[i].id,
				.group = "sandboxPorts", .key = obs_xsk_keys[k],
				.nested = true, .per_sandbox = true, .u = s->sbx[i].xsk[k],
				.d = (double)s->sbx[i].xsk[k],
			};

			fn(arg, &m);
		}
}

/* ---- Prometheus text ---- */

struct obs_prom {
	FILE *f;
	const char *last;
};

static void
obs_prom_escape(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void
obs_prom_visit(void *arg, const struct obs_metric *m)
{
	struct obs_prom *p = arg;
	const char *sfx = m->kind == OBS_COUNTER ? "_total" : "";

	if (!p->last || strcmp(p->last, m->family)) {
		fprintf(p->f, "# HELP cubevs_%s%s %s\n# TYPE cubevs_%s%s %s\n", m->family, sfx,
			m->help, m->family, sfx, m->kind == OBS_COUNTER ? "counter" : "gauge");
		p->last = m->family;
	}
	fprintf(p->f, "cubevs_%s%s", m->family, sfx);
	if (m->label) {
		fprintf(p->f, "{%s=\"", m->label);
		obs_prom_escape(p->f, m->lvalue);
		fputs("\"}", p->f);
	}
	if (m->is_float)
		fprintf(p->f, " %.6g\n", m->d);
	else
		fprintf(p->f, " %llu\n", (unsigned long long)m->u);
}

char *
obs_prometheus(const struct obs_snap *s, size_t *len)
{
	struct obs_prom p = { .last = NULL };
	char *buf = NULL;

	p.f = open_memstream(&buf, len);
	if (!p.f)
		return NULL;
	obs_enumerate(s, obs_prom_visit, &p);
	if (fclose(p.f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- /stats JSON ---- */

static void
obs_json_visit(void *arg, const struct obs_metric *m)
{
	json_t *root = arg, *obj = root, *v;

	if (!m->group)
		return;
	if (*m->group) {
		obj = json_object_get(root, m->group);
		if (!obj) {
			obj = json_object();
			json_object_set_new(root, m->group, obj);
		}
	}
	if (m->nested) {
		json_t *sub = json_object_get(obj, m->lvalue);

		if (!sub) {
			sub = json_object();
			json_object_set_new(obj, m->lvalue, sub);
		}
		obj = sub;
	}
	v = m->is_float ? json_real(m->d) : json_integer((json_int_t)m->u);
	json_object_set_new(obj, m->key, v);
}

json_t *
obs_stats_json(const struct obs_snap *s)
{
	json_t *root = json_object();

	json_object_set_new(root, "version", json_string(CVS_VERSION));
	obs_enumerate(s, obs_json_visit, root);
	/* Every group exists even when it has no member (no sandboxes yet). */
	if (!json_object_get(root, "sandboxPorts"))
		json_object_set_new(root, "sandboxPorts", json_object());
	return root;
}

/* ---- readiness ---- */

void
obs_readiness(struct obs *o, struct obs_ready *r)
{
	struct rte_eth_link link;
	uint64_t seen = atomic_load(&o->worker_seen_ms);

	memset(r, 0, sizeof(*r));
	memset(&link, 0, sizeof(link));
	r->world_port_up = !rte_eth_link_get_nowait(o->world_port, &link) &&
			   link.link_status == RTE_ETH_LINK_UP;
	if (!o->cfg->world_iface[0]) {
		/* A PMD port without our program: nothing to check. */
		r->steering_attached = true;
	} else if (o->steer) {
		uint32_t id = 0;

		r->steering_attached = !bpf_xdp_query_id(o->world_ifindex, 0, &id) &&
				       id == o->steer->prog_id;
	}
	r->worker_polling = seen && obs_now_ms() - seen < OBS_WORKER_STALL_MS;
	r->state_restored = atomic_load(&o->restored);
	r->api_serving = atomic_load(&o->serving);
}

/* ---- sessions ---- */

static const char *
obs_proto_name(uint8_t p)
{
	return p == 6 ? "tcp" : p == 17 ? "udp" : p == 1 ? "icmp" : "other";
}

static const char *
obs_state_name(const struct ct_dump_entry *e)
{
	if (e->t[0].proto == 6)
		return e->state < sizeof(obs_tcp_states) / sizeof(obs_tcp_states[0]) ?
		       obs_tcp_states[e->state] : "INVALID";
	return e->state == CT_REPLIED ? "REPLIED" : "UNREPLIED";
}

static bool
obs_zone_is_sandbox(uint16_t zone)
{
	return zone && zone != CVS_ZONE_HOST;
}

/* Zone → "world", "host" (cube-dev) or the sandbox id. Caller holds the registry lock. */
static const char *
obs_zone_name(struct registry *r, uint16_t zone)
{
	if (!zone)
		return "world";
	if (zone == CVS_ZONE_HOST)
		return "host";
	if (zone - 1u < r->max_sandboxes && r->by_slot[zone - 1])
		return r->by_slot[zone - 1]->id;
	return "gone";
}

static json_t *
obs_tuple_json(struct registry *r, const struct ct_tuple *t)
{
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN], sa[32], da[32];

	inet_ntop(AF_INET, &t->saddr, s, sizeof(s));
	inet_ntop(AF_INET, &t->daddr, d, sizeof(d));
	snprintf(sa, sizeof(sa), "%s:%u", s, ntohs(t->sport));
	snprintf(da, sizeof(da), "%s:%u", d, ntohs(t->dport));
	return json_pack("{s:s,s:s,s:s}", "src", sa, "dst", da, "port",
			 obs_zone_name(r, t->zone));
}

static json_t *
obs_session_json(struct registry *r, const struct ct_dump_entry *e)
{
	const struct ct_tuple *sbx = obs_zone_is_sandbox(e->t[0].zone) ? &e->t[0] :
				     obs_zone_is_sandbox(e->t[1].zone) ? &e->t[1] : NULL;
	json_t *j;

	j = json_pack("{s:s,s:s,s:s,s:o,s:o,s:i,s:i}", "proto", obs_proto_name(e->t[0].proto),
		      "state", obs_state_name(e), "class", ct_class_names[e->cls],
		      "original", obs_tuple_json(r, &e->t[0]), "reply", obs_tuple_json(r, &e->t[1]),
		      "idleSeconds", (json_int_t)e->idle, "expiresInSeconds",
		      (json_int_t)e->expires);
	json_object_set_new(j, "sandboxID", sbx ? json_string(obs_zone_name(r, sbx->zone)) :
			    json_null());
	return j;
}

int
obs_sessions(struct obs *o, const char *sandbox, const char *proto, const char *limit,
	     const char *cursor, uint32_t max_limit, json_t **out)
{
	struct ct_dump_req q;
	uint32_t lim = max_limit < 100 ? max_limit : 100, got = 0, i, wk = 0;
	uint64_t cur = 0, total = 0;
	json_t *arr;
	char next[24];

	memset(&q, 0, sizeof(q));
	if (limit && cvs_parse_u32(limit, 1, max_limit, &lim)) {
		*out = reg_error("limit must be an integer 1..%u", max_limit);
		return 400;
	}
	/* A cursor is worker << 32 | table index: each worker has its own table. */
	if (cursor) {
		char *end;

		errno = 0;
		cur = strtoull(cursor, &end, 10);
		if (!*cursor || *end || errno || cursor[0] == '-' || (cur >> 32) >= o->nw ||
		    (uint32_t)cur == CT_NIL) {
			*out = reg_error("cursor must be the nextCursor of an earlier page");
			return 400;
		}
	}
	if (proto) {
		if (!strcmp(proto, "tcp"))
			q.proto = 6;
		else if (!strcmp(proto, "udp"))
			q.proto = 17;
		else if (!strcmp(proto, "icmp"))
			q.proto = 1;
		else {
			*out = reg_error("proto must be tcp, udp or icmp");
			return 400;
		}
	}
	if (sandbox) {
		struct registry *r = o->reg;

		pthread_mutex_lock(&r->lock);
		for (i = 0; i < r->max_sandboxes; i++)
			if (r->by_slot[i] && !strcmp(r->by_slot[i]->id, sandbox))
				q.zone = (uint16_t)(i + 1);
		pthread_mutex_unlock(&r->lock);
		if (!q.zone) {
			*out = reg_error("sandbox %s not found", sandbox);
			return 404;
		}
	}
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
			*out = reg_error("worker %u did not answer", wk);
			return 503;
		}
		got += q.n;
		if (q.cursor == CT_NIL) {
			wk++;
			q.cursor = 0;
		}
	}
	arr = json_array();
	pthread_mutex_lock(&o->reg->lock);
	for (i = 0; i < got; i++)
		json_array_append_new(arr, obs_session_json(o->reg, &o->dump_buf[i]));
	pthread_mutex_unlock(&o->reg->lock);
	pthread_mutex_unlock(&o->dump_lock);
	snprintf(next, sizeof(next), "%llu", (unsigned long long)wk << 32 | q.cursor);
	for (i = 0; i < o->nw; i++)
		total += atomic_load(&o->w[i].sessions);
	*out = json_pack("{s:o,s:i,s:o,s:I}", "sessions", arr, "count", (json_int_t)got,
			 "nextCursor", wk >= o->nw ? json_null() : json_string(next),
			 "total", (json_int_t)total);
	return 200;
}

/* ---- routes ---- */

static bool
obs_only_get(const char *method, struct api_reply *rep)
{
	if (!strcmp(method, "GET"))
		return true;
	rep->status = 405;
	rep->allow = "GET";
	rep->json = reg_error("method not allowed; allowed: GET");
	return false;
}

static json_t *
obs_ready_json(struct obs *o, bool *ready)
{
	struct obs_ready r;
	uint32_t total, unattached;

	obs_readiness(o, &r);
	reg_counts(o->reg, &total, &unattached);
	*ready = r.world_port_up && r.steering_attached && r.worker_polling && r.state_restored;
	return json_pack("{s:b,s:{s:b,s:b,s:b,s:b},s:i,s:i}", "ready", *ready, "checks",
			 "worldPortUp", r.world_port_up, "steeringProgramAttached",
			 r.steering_attached, "workerPolling", r.worker_polling, "stateRestored",
			 r.state_restored, "sandboxes", (json_int_t)total, "unattachedSandboxes",
			 (json_int_t)unattached);
}

bool
obs_route(void *ctx, const char *method, const char *path, const struct api_query *q,
	  struct api_reply *rep)
{
	struct obs *o = ctx;
	struct obs_snap s;

	if (!strcmp(path, "/healthz")) {
		if (obs_only_get(method, rep))
			rep->json = json_pack("{s:s}", "status", "ok");
		return true;
	}
	if (!strcmp(path, "/readyz")) {
		bool ready;

		if (obs_only_get(method, rep)) {
			rep->json = obs_ready_json(o, &ready);
			rep->status = ready ? 200 : 503;
		}
		return true;
	}
	if (!strcmp(path, "/metrics")) {
		if (!obs_only_get(method, rep))
			return true;
		obs_snapshot(o, &s);
		rep->text = obs_prometheus(&s, &rep->text_len);
		obs_snap_free(&s);
		if (!rep->text) {
			rep->status = 500;
			rep->json = reg_error("out of memory");
			return true;
		}
		rep->ctype = "text/plain; version=0.0.4; charset=utf-8";
		return true;
	}
	if (!strcmp(path, "/stats")) {
		if (!obs_only_get(method, rep))
			return true;
		obs_snapshot(o, &s);
		rep->json = obs_stats_json(&s);
		obs_snap_free(&s);
		return true;
	}
	if (!strcmp(path, "/sessions")) {
		int i;

		if (!obs_only_get(method, rep))
			return true;
		for (i = 0; i < q->n; i++)
			if (strcmp(q->key[i], "sandbox") && strcmp(q->key[i], "proto") &&
			    strcmp(q->key[i], "limit") && strcmp(q->key[i], "cursor")) {
				rep->status = 400;
				rep->json = reg_error("unknown query parameter \"%.64s\"; known: "
						      "sandbox, proto, limit, cursor", q->key[i]);
				return true;
			}
		if (q->overflow) {
			rep->status = 400;
			rep->json = reg_error("too many query parameters");
			return true;
		}
		rep->status = obs_sessions(o, api_query_get(q, "sandbox"),
					   api_query_get(q, "proto"), api_query_get(q, "limit"),
					   api_query_get(q, "cursor"), OBS_DUMP_MAX, &rep->json);
		return true;
	}
	return false;
}
