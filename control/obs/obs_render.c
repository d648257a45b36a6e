/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "cvs_version.h"
#include "obs_render.h"

static const char *const obs_xsk_names[OBS_XSK_MAX] = {
#define OBS_XSK_NAME(f, s, h) [OBS_XSK_##f] = "funnel_" s,
	OBS_XSK_COUNTERS(OBS_XSK_NAME)
#undef OBS_XSK_NAME
};
static const char *const obs_xsk_keys[OBS_XSK_MAX] = {
#define OBS_XSK_KEY(f, s, h) [OBS_XSK_##f] = s,
	OBS_XSK_COUNTERS(OBS_XSK_KEY)
#undef OBS_XSK_KEY
};
static const char *const obs_xsk_help[OBS_XSK_MAX] = {
#define OBS_XSK_HELP(f, s, h) [OBS_XSK_##f] = "AF_XDP socket of a worker's sandbox funnel: " h,
	OBS_XSK_COUNTERS(OBS_XSK_HELP)
#undef OBS_XSK_HELP
};
static const char *const obs_wxsk_names[OBS_XSK_MAX] = {
#define OBS_WXSK_NAME(f, s, h) [OBS_XSK_##f] = "world_" s,
	OBS_XSK_COUNTERS(OBS_WXSK_NAME)
#undef OBS_WXSK_NAME
};
static const char *const obs_wxsk_help[OBS_XSK_MAX] = {
#define OBS_WXSK_HELP(f, s, h) [OBS_XSK_##f] = "AF_XDP socket of a world port queue: " h,
	OBS_XSK_COUNTERS(OBS_WXSK_HELP)
#undef OBS_WXSK_HELP
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

/* The process and the workers' counters. */
static void
obs_enum_worker(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	uint64_t pkts;
	uint32_t i;

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
}

/* XDP verdicts, the session tables and the buffers. */
static void
obs_enum_tables(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	uint32_t i;

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
	/* The IPv6 table is another table (dataplane/ct6.h): its own series, not a label. */
	for (i = 0; i < CT_C_MAX; i++)
		obs_emit(fn, arg, "ipv6_sessions", "IPv6 sessions in their table, by class",
			 OBS_GAUGE, "class", ct_class_names[i], "ipv6SessionsByClass",
			 ct_class_names[i], s->cls6[i]);
	obs_emit(fn, arg, "ipv6_session_table_used", "sessions in the IPv6 table", OBS_GAUGE,
		 NULL, NULL, "", "ipv6Sessions", s->sessions6);
	obs_emit(fn, arg, "ipv6_session_table_capacity",
		 "IPv6 table capacity (a quarter of --max-sessions; 0 without --node-ip6)",
		 OBS_GAUGE, NULL, NULL, "", "ipv6SessionCapacity", s->capacity6);
	obs_emit(fn, arg, "mbufs_in_use", "mbufs taken from the pool (rx rings, frames in flight)",
		 OBS_GAUGE, NULL, NULL, "buffers", "mbufsInUse", s->mbufs_in_use);
	obs_emit(fn, arg, "umem_frames", "UMEM frames of the attached sandbox ports", OBS_GAUGE,
		 NULL, NULL, "buffers", "umemFrames", s->umem_frames);
	obs_emit(fn, arg, "umem_frames_free",
		 "UMEM frames free for transmit on the sandbox ports (the rest are the kernel's)",
		 OBS_GAUGE, NULL, NULL, "buffers", "umemFramesFree", s->umem_free);
	obs_emit(fn, arg, "parked_frames", "frames waiting for their next hop to be resolved",
		 OBS_GAUGE, NULL, NULL, "buffers", "parkedFrames", s->parked);
}

/* The host-port range: what is handed out, what is kept back and why. */
static void
obs_enum_hostports(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	obs_emit(fn, arg, "host_ports", "size of --host-port-range", OBS_GAUGE, NULL, NULL,
		 "hostPorts", "size", s->hp_size);
	obs_emit(fn, arg, "host_ports_used", "host ports of registered sandboxes", OBS_GAUGE,
		 NULL, NULL, "hostPorts", "used", s->hp_used);
	obs_emit(fn, arg, "host_ports_free", "host ports that a registration may get now",
		 OBS_GAUGE, NULL, NULL, "hostPorts", "free", s->hp_free);
	obs_emit(fn, arg, "host_ports_kernel_listening",
		 "host ports skipped because a kernel service of the node listens there",
		 OBS_GAUGE, NULL, NULL, "hostPorts", "kernelListening", s->hp_listening);
	obs_emit(fn, arg, "host_port_conflicts",
		 "handed-out host ports on which a kernel service started listening (shadowed)",
		 OBS_GAUGE, NULL, NULL, "hostPorts", "conflicts", s->hp_conflicts);
	obs_emit(fn, arg, "host_port_holds", "host ports kept for recently deleted sandbox ids",
		 OBS_GAUGE, NULL, NULL, "hostPorts", "holds", s->hp_holds);
	obs_emit(fn, arg, "host_port_holds_reused",
		 "host ports given back to a sandbox id registered again within the hold",
		 OBS_COUNTER, NULL, NULL, "hostPorts", "holdsReused", s->hp_holds_reused);
	obs_emit(fn, arg, "host_port_holds_expired", "host-port holds that ran out",
		 OBS_COUNTER, NULL, NULL, "hostPorts", "holdsExpired", s->hp_holds_expired);
	obs_emit(fn, arg, "host_port_holds_broken",
		 "host-port holds given up because the range ran short", OBS_COUNTER, NULL, NULL,
		 "hostPorts", "holdsBroken", s->hp_holds_broken);
	obs_emit(fn, arg, "host_port_scan_errors",
		 "failed questions to the kernel about listeners (sock_diag)", OBS_COUNTER, NULL,
		 NULL, "hostPorts", "scanErrors", s->hp_scan_errors);
}

/* vhost-user ports: their lifecycle (connections, devices, refusals) and their mbuf pool. */
static void
obs_enum_vhost(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
#define OBS_VH_EMIT(f, n, h) \
	obs_emit(fn, arg, n, h, OBS_COUNTER, NULL, NULL, "vhost", #f, s->vh.f);
	CVS_VHOST_COUNTERS(OBS_VH_EMIT)
#undef OBS_VH_EMIT
	obs_emit(fn, arg, "vhost_ports", "vhost-user sandbox ports (sockets)", OBS_GAUGE, NULL,
		 NULL, "vhost", "ports", s->vh.ports);
	obs_emit(fn, arg, "vhost_ports_running", "vhost-user ports whose VMM device runs",
		 OBS_GAUGE, NULL, NULL, "vhost", "running", s->vh.running);
	obs_emit(fn, arg, "vhost_mbufs", "size of the vhost-user mbuf pool (0 before a port)",
		 OBS_GAUGE, NULL, NULL, "buffers", "vhostMbufs", s->vh.mbufs);
	obs_emit(fn, arg, "vhost_mbufs_in_use",
		 "mbufs taken from the vhost-user pool (frames in flight; 0 at rest)", OBS_GAUGE,
		 NULL, NULL, "buffers", "vhostMbufsInUse", s->vh.mbufs_in_use);
}

/* One set of AF_XDP socket statistics, labelled by queue (or, without 'ids', by index). */
static void
obs_enum_xsk_set(obs_visit_fn fn, void *arg, const char *const *names, const char *const *help,
		 const char *label, const char *group, uint32_t n, const uint32_t *ids,
		 const uint64_t (*v)[OBS_XSK_MAX])
{
	char q[12];
	uint32_t i, k;

	for (k = 0; k < OBS_XSK_MAX; k++)
		for (i = 0; i < n && i < OBS_WXSK_MAX; i++) {
			struct obs_metric m = {
				.family = names[k], .help = help[k], .kind = OBS_COUNTER,
				.label = label, .lvalue = q, .group = group, .key = obs_xsk_keys[k],
				.nested = true, .u = v[i][k], .d = (double)v[i][k],
			};

			snprintf(q, sizeof(q), "%u", ids ? ids[i] : i);
			fn(arg, &m);
		}
}

/*
 * The kernel's view of the world queues' sockets (control/ports/worldq.h): a rejected
 * descriptor there is a frame to the world that never left.
 */
static void
obs_enum_world_xsk(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	obs_emit(fn, arg, "world_xsk_sockets", "AF_XDP sockets of the world port, one per queue "
		 "(0 when the world port is an ethdev)", OBS_GAUGE, NULL, NULL,
		 "worldXsk", "sockets", s->wxsk_n);
	obs_emit(fn, arg, "world_xsk_invalid_alarms", "checks (one a second per queue) that "
		 "found a world socket's rx_invalid or tx_invalid risen", OBS_COUNTER, NULL, NULL,
		 "worldXsk", "invalidAlarms", s->wxsk_alarms);
	obs_enum_xsk_set(fn, arg, obs_wxsk_names, obs_wxsk_help, "queue", "worldXsk", s->wxsk_n,
			 s->wxsk_queue, s->wxsk);
}

/* The DPDK ports (the world port when it is an ethdev, cube-dev), each by its role. */
static void
obs_enum_eth(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	uint32_t i, k;

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
}

/* The registry's sandboxes and what the kernel did to their links. */
static void
obs_enum_registry(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	obs_emit(fn, arg, "sandboxes", "registered sandboxes", OBS_GAUGE, NULL, NULL, "registry",
		 "sandboxes", s->nsbx);
	obs_emit(fn, arg, "sandboxes_unattached",
		 "registered sandboxes whose interface is not attached", OBS_GAUGE, NULL, NULL,
		 "registry", "unattached", s->unattached);
	obs_emit(fn, arg, "sandbox_links_lost", "sandboxes detached because the kernel removed, "
		 "renamed or took over their interface", OBS_COUNTER, NULL, NULL, "registry",
		 "linksLost", s->links_lost);
	obs_emit(fn, arg, "sandbox_links_back", "sandboxes attached again when their interface "
		 "came back", OBS_COUNTER, NULL, NULL, "registry", "linksBack", s->links_back);
	obs_emit(fn, arg, "sandbox_links_ending", "deleted sandboxes whose interface's link is "
		 "still to be ended (after the answer, one at a time)", OBS_GAUGE, NULL, NULL,
		 "registry", "linksEnding", s->links_ending);
}

/* The state file and its journal: a change is acknowledged only once it is there. */
static void
obs_enum_state(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	obs_emit(fn, arg, "state_writes", "successful writes of the state file", OBS_COUNTER,
		 NULL, NULL, "state", "writes", s->state_writes);
	obs_emit(fn, arg, "state_write_errors", "failed writes of the state file", OBS_COUNTER,
		 NULL, NULL, "state", "write_errors", s->state_write_errors);
	obs_emit(fn, arg, "state_syncs", "fdatasync calls of the state journal (one for the "
		 "changes of concurrent clients)", OBS_COUNTER, NULL, NULL, "state", "syncs",
		 s->state_syncs);
	obs_emit(fn, arg, "state_slow_syncs", "fdatasync calls of the state journal that took "
		 "10 ms or more (every change waiting for them waited as long)", OBS_COUNTER, NULL,
		 NULL, "state", "slow_syncs", s->state_slow_syncs);
}

/* The session region: what this start adopted, rebuilt, carried or refused. */
static void
obs_enum_region(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	obs_emit(fn, arg, "region_generation", "starts of the session region (1: made by this "
		 "process, +1 per adoption)", OBS_GAUGE, NULL, NULL, "region", "generation",
		 s->region_generation);
	obs_emit(fn, arg, "region_bytes", "size of the session region file", OBS_GAUGE, NULL, NULL,
		 "region", "bytes", s->region_bytes);
	obs_emit(fn, arg, "region_adopted_sessions", "sessions adopted from the process before",
		 OBS_GAUGE, NULL, NULL, "region", "adopted", s->region_adopted);
	obs_emit(fn, arg, "region_discarded_sessions", "adopted sessions dropped at start because "
		 "their sandbox did not come back", OBS_GAUGE, NULL, NULL, "region",
		 "discarded_gone", s->region_discarded_gone);
	obs_emit(fn, arg, "region_rebuilt_tables", "adopted session tables left in the middle of "
		 "an update by a crash, rebuilt from their sessions", OBS_GAUGE, NULL, NULL,
		 "region", "rebuilt", s->region_rebuilt);
	obs_emit(fn, arg, "region_inconsistent_sessions", "sessions such a rebuild dropped "
		 "(inconsistent, or a duplicate tuple)", OBS_GAUGE, NULL, NULL, "region",
		 "discarded_bad", s->region_discarded_bad);
	obs_emit(fn, arg, "region_refused", "1 when the region found at start was refused (the "
		 "reason is in the log)", OBS_GAUGE, NULL, NULL, "region", "refused",
		 s->region_refused);
	obs_emit(fn, arg, "region_adopt_microseconds", "time the checks of the adopted region took",
		 OBS_GAUGE, NULL, NULL, "region", "adopt_us", s->region_adopt_us);
	obs_emit(fn, arg, "region_carried", "1 when the region found at start was of another shape "
		 "(workers, --max-sessions, --max-sandboxes) and its sessions were carried into one "
		 "of this start's", OBS_GAUGE, NULL, NULL, "region", "carried", s->region_carried);
	obs_emit(fn, arg, "region_carry_dropped_sessions", "sessions such a carry could not take: "
		 "past the new capacity, of a sandbox slot the new shape has not, or owned by no one "
		 "worker under the new worker count", OBS_GAUGE, NULL, NULL, "region",
		 "carry_dropped", s->region_carry_dropped);
	obs_emit(fn, arg, "region_adopted_ipv6_sessions", "of the adopted sessions, the IPv6 ones",
		 OBS_GAUGE, NULL, NULL, "region", "adopted6", s->region_adopted6);
	obs_emit(fn, arg, "region_refused_ipv6_tables", "IPv6 session tables of the region "
		 "started empty beside the adopted IPv4 ones: a damaged IPv6 part, or another "
		 "--node-ip6 (the reason is in the log)", OBS_GAUGE, NULL, NULL, "region",
		 "refused6", s->region_refused6);
}

/* Every sandbox's port counters, then the funnels' sockets that carry them. */
static void
obs_enum_sbx_ports(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	uint32_t i, k;

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
	obs_enum_xsk_set(fn, arg, obs_xsk_names, obs_xsk_help, "worker", "funnelXsk", s->fun_n,
			 NULL, s->fun_xsk);
}

/* The DPDK ports, the registry, the state file and every sandbox's port. */
static void
obs_enum_ports(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	obs_enum_eth(s, fn, arg);
	obs_enum_world_xsk(s, fn, arg);
	obs_enum_registry(s, fn, arg);
	obs_enum_hostports(s, fn, arg);
	obs_enum_vhost(s, fn, arg);
	obs_enum_state(s, fn, arg);
	obs_enum_region(s, fn, arg);
	obs_enum_sbx_ports(s, fn, arg);
}

void
obs_enumerate(const struct obs_snap *s, obs_visit_fn fn, void *arg)
{
	obs_enum_worker(s, fn, arg);
	obs_enum_tables(s, fn, arg);
	obs_enum_ports(s, fn, arg);
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

/* Zone → "world", "host" (cube-dev), the sandbox id, or "gone" (a sandbox being removed). */
static const char *
obs_zone_name(uint16_t zone, obs_zone_fn fn, void *arg, char *buf, size_t len)
{
	if (!zone)
		return "world";
	if (zone == CVS_ZONE_HOST)
		return "host";
	return fn(arg, zone, buf, len) ? buf : "gone";
}

static json_t *
obs_tuple_json(const struct ct_tuple *t, obs_zone_fn fn, void *arg)
{
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN], sa[32], da[32], id[CVS_ID_MAX + 1];

	inet_ntop(AF_INET, &t->saddr, s, sizeof(s));
	inet_ntop(AF_INET, &t->daddr, d, sizeof(d));
	snprintf(sa, sizeof(sa), "%s:%u", s, ntohs(t->sport));
	snprintf(da, sizeof(da), "%s:%u", d, ntohs(t->dport));
	return json_pack("{s:s,s:s,s:s}", "src", sa, "dst", da, "port",
			 obs_zone_name(t->zone, fn, arg, id, sizeof(id)));
}

json_t *
obs_session_json(const struct ct_dump_entry *e, obs_zone_fn fn, void *arg)
{
	const struct ct_tuple *sbx = obs_zone_is_sandbox(e->t[0].zone) ? &e->t[0] :
				     obs_zone_is_sandbox(e->t[1].zone) ? &e->t[1] : NULL;
	char id[CVS_ID_MAX + 1];
	json_t *j;

	j = json_pack("{s:s,s:s,s:s,s:o,s:o,s:i,s:i}", "proto", obs_proto_name(e->t[0].proto),
		      "state", obs_state_name(e), "class", ct_class_names[e->cls],
		      "original", obs_tuple_json(&e->t[0], fn, arg),
		      "reply", obs_tuple_json(&e->t[1], fn, arg),
		      "idleSeconds", (json_int_t)e->idle, "expiresInSeconds",
		      (json_int_t)e->expires);
	json_object_set_new(j, "sandboxID", sbx ? json_string(obs_zone_name(sbx->zone, fn, arg,
								    id, sizeof(id))) :
			    json_null());
	return j;
}
