/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Observability of a running node, on the control side: collection. A snapshot reads the
 * workers' counters, the ports, the XDP maps and (through reg_foreach()) the sandboxes; the one
 * enumeration of obs_render.h turns it into /metrics, /stats, the DPDK telemetry commands, the
 * ctl tool (through /stats) and the drop summaries in the log, so names never drift between
 * surfaces. Also readiness, worker liveness and the bounded session dump.
 */
#ifndef CVS_OBS_H
#define CVS_OBS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

#include "api.h"
#include "config.h"
#include "obs_render.h"
#include "registry.h"
#include "worldq.h"

struct worker;
struct xdp_steer;
struct xdp_sbx;

/* Readiness: each condition that /readyz reports. */
struct obs_ready {
	bool world_port_up;
	bool steering_attached;
	bool worker_polling;
	bool state_restored;
	bool api_serving;
	bool world_xsk_healthy;	/* no world socket rejected a descriptor lately */
};

#define OBS_MAX_WORKERS	64

struct region_info;

struct obs {
	/* Sources, set before the API starts. */
	struct worker *w;		/* nw workers */
	uint32_t nw;
	struct registry *reg;
	const struct cvs_config *cfg;
	struct xdp_steer *steer;	/* NULL when the world port runs without our program */
	struct xdp_sbx *sbx;
	struct store *store;		/* the state file; never NULL */
	const struct region_info *region;	/* NULL without a session region */
	uint16_t world_port;
	uint16_t host_port;		/* UINT16_MAX without cube-dev */
	int world_ifindex;

	_Atomic bool restored;
	_Atomic bool serving;
	_Atomic uint64_t state_writes;
	_Atomic uint64_t state_write_errors;
	_Atomic uint64_t worker_seen_ms;	/* when the slowest worker's loop last moved */
	uint64_t loops_seen[OBS_MAX_WORKERS];
	uint64_t moved_ms[OBS_MAX_WORKERS];
	struct timespec started;

	uint64_t drops_logged[CVS_DROP_MAX];
	uint32_t conflicts_logged;	/* the shadowed host ports last logged */
	uint16_t conflict_ports[HOSTPORTS_MAX_CONFLICTS];
	uint64_t next_summary_ms;
	uint32_t summary_period_ms;

	/* Our world queues' sockets (set before the API starts), checked once a second. */
	const struct worldq *wq;
	uint64_t wxsk_next_check_ms;
	uint64_t wxsk_next_log_ms;
	uint32_t wxsk_seen_queue[OBS_WXSK_MAX];
	uint64_t wxsk_seen[OBS_WXSK_MAX][2];	/* rx_invalid, tx_invalid at the last check */
	uint64_t wxsk_pending[OBS_WXSK_MAX][2];	/* risen since the last line in the log */
	_Atomic uint64_t wxsk_alarms;
	_Atomic uint64_t wxsk_bad_until_ms;	/* /readyz is 503 until then */

	pthread_mutex_t dump_lock;	/* one session dump at a time through dump_buf */
	struct ct_dump_entry *dump_buf;
};

int obs_init(struct obs *o);
void obs_fini(struct obs *o);

/*
 * Control-loop duty, about ten times a second: worker liveness, drop summaries, the world
 * sockets' invalid descriptors.
 */
void obs_tick(struct obs *o);

/* Log every registered sandbox that is not attached, with the reason. */
void obs_log_unattached(struct obs *o);

void obs_snapshot(struct obs *o, struct obs_snap *s);
void obs_snap_free(struct obs_snap *s);
void obs_enumerate(const struct obs_snap *s, obs_visit_fn fn, void *arg);
void obs_readiness(struct obs *o, struct obs_ready *r);

/* Renderers. */
char *obs_prometheus(const struct obs_snap *s, size_t *len);
json_t *obs_stats_json(const struct obs_snap *s);

/*
 * A page of the session table, filtered, as JSON. Arguments are the raw query values (NULL
 * when absent). 0, or with a message in err: -EINVAL for a bad argument, -ENOENT for an
 * unknown sandbox, -ETIMEDOUT when a worker did not answer.
 */
int obs_sessions(struct obs *o, const char *sandbox, const char *proto, const char *limit,
		 const char *cursor, uint32_t max_limit, json_t **out, char *err, size_t errlen);

/* Register /healthz, /readyz, /metrics, /stats and /sessions. 0 or -errno. */
int obs_api_register(struct api_routes *t, struct obs *o);

#endif /* CVS_OBS_H */
