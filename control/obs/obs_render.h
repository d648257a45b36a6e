/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rendering of the observability snapshot: the one enumeration of every metric, expanded from
 * the counter lists (dataplane/counters.h, xdp/cvs_xdp.h, dataplane/ct.h and the two below),
 * and what it becomes: Prometheus text, the /stats JSON, session entries as JSON. Pure
 * functions of their arguments (no DPDK, no registry), so unit tests run them on made-up
 * snapshots; obs.c collects the snapshot.
 */
#ifndef CVS_OBS_RENDER_H
#define CVS_OBS_RENDER_H

#include "vhostctl.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "counters.h"
#include "ct.h"
#include "cvs_xdp.h"
#include "registry.h"

/* Kernel AF_XDP socket statistics (struct xdp_statistics): _(field, "name", "help"). */
#define OBS_XSK_COUNTERS(_) \
	_(rx_dropped, "xsk_rx_dropped", "frames the kernel dropped for other reasons") \
	_(rx_invalid_descs, "xsk_rx_invalid", "frames dropped for an invalid descriptor") \
	_(tx_invalid_descs, "xsk_tx_invalid", "TX descriptors the kernel rejected") \
	_(rx_ring_full, "xsk_rx_ring_full", "frames dropped because the RX ring was full") \
	_(rx_fill_ring_empty_descs, "xsk_fill_ring_empty", \
	  "times a frame arrived while the fill ring was empty") \
	_(tx_ring_empty_descs, "xsk_tx_ring_empty", "times the kernel found the TX ring empty")

enum obs_xsk {
#define OBS_XSK_ENUM(f, s, h) OBS_XSK_##f,
	OBS_XSK_COUNTERS(OBS_XSK_ENUM)
#undef OBS_XSK_ENUM
	OBS_XSK_MAX
};

/* The world port's AF_XDP sockets shown, one per queue: bounds the queue-labelled series. */
#define OBS_WXSK_MAX	16

/* Ethdev counters of the DPDK ports (world, cube-dev): _(field, "name", "help"). */
#define OBS_ETH_COUNTERS(_) \
	_(ipackets, "rx_packets", "frames the port's PMD received") \
	_(opackets, "tx_packets", "frames the port's PMD sent") \
	_(ibytes, "rx_bytes", "bytes the port's PMD received") \
	_(obytes, "tx_bytes", "bytes the port's PMD sent") \
	_(imissed, "rx_missed", "frames the NIC or kernel dropped before the port's queue") \
	_(ierrors, "rx_errors", "receive errors of the port") \
	_(oerrors, "tx_errors", "transmit errors of the port") \
	_(rx_nombuf, "rx_nombuf", "receives that failed for lack of an mbuf")

enum obs_eth {
#define OBS_ETH_ENUM(f, s, h) OBS_ETH_##f,
	OBS_ETH_COUNTERS(OBS_ETH_ENUM)
#undef OBS_ETH_ENUM
	OBS_ETH_MAX
};

/* The DPDK ports: the world port and, when there is one, cube-dev. */
enum obs_port {
	OBS_PORT_WORLD,
	OBS_PORT_HOST,
	OBS_PORT_MAX
};

/* Per registered sandbox, copied under the registry lock. */
struct obs_sbx {
	char id[CVS_ID_MAX + 1];
	bool attached;
	uint64_t port[CVS_PC_MAX];
};

/* Everything at one moment. Counters are read without stopping the worker. */
struct obs_snap {
	struct cvs_stats st;
	uint64_t xdp_steer[CVS_XDP_MAX];
	uint64_t xdp_sbx[CVS_XDP_MAX];
	uint32_t cls[CT_C_MAX];
	uint32_t sessions;
	uint32_t capacity;
	uint32_t cls6[CT_C_MAX];	/* the IPv6 table's, as the three above */
	uint32_t sessions6;
	uint32_t capacity6;
	uint32_t mbufs_in_use;	/* taken from the pool: rx rings and frames in flight */
	uint32_t umem_frames;	/* of every published sandbox port */
	uint32_t umem_free;	/* on the ports' free lists (transmit side) */
	uint32_t parked;	/* frames waiting for a next hop */
	uint64_t eth[OBS_PORT_MAX][OBS_ETH_MAX];
	bool have_port[OBS_PORT_MAX];
	/* The world queues' AF_XDP sockets (control/ports/worldq.h), in queue order. */
	uint32_t wxsk_n;
	uint32_t wxsk_queue[OBS_WXSK_MAX];
	uint64_t wxsk[OBS_WXSK_MAX][OBS_XSK_MAX];
	uint64_t wxsk_alarms;	/* checks that found rx/tx_invalid risen (obs.c) */
	/* Each worker's funnel socket (control/ports/funnel.h), in worker order. */
	uint32_t fun_n;
	uint64_t fun_xsk[OBS_WXSK_MAX][OBS_XSK_MAX];
	uint64_t loops;
	uint64_t tsc_hz;
	uint64_t state_writes;
	uint64_t state_write_errors;
	uint64_t state_syncs;		/* the journal's fdatasync calls */
	uint64_t state_slow_syncs;	/* of them, those of 10 ms or more */
	/* The session region (control/restart/region.h); all 0 without one. */
	uint64_t region_generation;
	uint64_t region_bytes;
	uint32_t region_adopted;
	uint32_t region_discarded_gone;
	uint32_t region_discarded_bad;
	uint32_t region_rebuilt;
	uint32_t region_refused;
	uint32_t region_adopt_us;
	uint32_t region_carried;
	uint32_t region_carry_dropped;
	uint32_t region_adopted6;
	uint32_t region_refused6;
	double uptime;
	bool ready;
	uint32_t nsbx;
	uint32_t unattached;
	uint64_t links_lost;	/* sandboxes detached by the kernel's link events */
	uint64_t links_back;	/* and attached again by them */
	uint32_t links_ending;	/* deleted sandboxes' links the kernel has not ended yet */
	/* Host ports (reg_hostport_info()). */
	uint32_t hp_size;
	uint32_t hp_used;
	uint32_t hp_free;
	uint32_t hp_listening;
	uint32_t hp_holds;
	uint32_t hp_conflicts;
	uint64_t hp_holds_reused;
	uint64_t hp_holds_expired;
	uint64_t hp_holds_broken;
	uint64_t hp_scan_errors;
	struct vhostctl_stats vh;	/* vhost-user ports (vhostctl_stats()) */
	struct obs_sbx *sbx;	/* nsbx entries, freed by obs_snap_free() */
};

enum obs_kind {
	OBS_COUNTER,
	OBS_GAUGE,
};

/* One sample of the enumeration. */
struct obs_metric {
	const char *family;	/* Prometheus name without "cubevs_" and "_total" */
	const char *help;
	enum obs_kind kind;
	const char *label;	/* label name, NULL for none */
	const char *lvalue;
	const char *group;	/* object in /stats ("" = top level), telemetry key prefix */
	const char *key;	/* name inside the group */
	bool nested;		/* in /stats under group/label-value/key */
	bool per_sandbox;	/* left out of the telemetry summary */
	bool is_float;
	uint64_t u;
	double d;
};

typedef void (*obs_visit_fn)(void *arg, const struct obs_metric *m);

void obs_snap_free(struct obs_snap *s);

/* Call fn for every metric of the snapshot, families in a fixed order. */
void obs_enumerate(const struct obs_snap *s, obs_visit_fn fn, void *arg);

/* Prometheus text format 0.0.4 (malloc'ed, *len bytes), NULL when out of memory. */
char *obs_prometheus(const struct obs_snap *s, size_t *len);
/* The /stats object: every metric with a group, grouped. */
json_t *obs_stats_json(const struct obs_snap *s);

/* The sandbox id of a sandbox zone (slot + 1) into buf; false when no sandbox has it. */
typedef bool (*obs_zone_fn)(void *arg, uint16_t zone, char *buf, size_t len);

/* One session of a /sessions page; tuples name their port: world, host, a sandbox or gone. */
json_t *obs_session_json(const struct ct_dump_entry *e, obs_zone_fn zone, void *arg);

#endif /* CVS_OBS_RENDER_H */
