/* SPDX-License-Identifier: BSD-3-Clause */
/* Application options of cubevs-fp (the part after "--"). Parsed before EAL starts. */
#ifndef CVS_CONFIG_H
#define CVS_CONFIG_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <net/if.h>

#include "cvs_common.h"	/* cvs_parse_*, struct cvs_range */
#include "umem.h"		/* CVS_UMEM_FRAMES_* */
#include "frag.h"		/* struct frag_cfg, FRAG_DEF_* */

#define CVS_STATE_FILE_DEFAULT	"/var/lib/cubevs-fp/state.json"
#define CVS_RUNTIME_DIR_DEFAULT	"/run/cubevs-fp"
#define CVS_BPF_PIN_DIR_DEFAULT	"/sys/fs/bpf/cubevs-fp"
#define CVS_GUEST_PFX6_DEFAULT	"fd00:a9fe:4406::"	/* --guest-prefix6, a /64 */
#define CVS_SBX_PFX6_DEFAULT	"fd00:a9fe:4407::"	/* --sandbox-prefix6, a /96 */
#define CVS_MAX_RESERVED	64	/* --reserved-host-ports entries */
/* --sandbox-umem-frames: powers of two; the default's reasons are in docs/operations.md. */


/*
 * Node-wide per-sandbox limits, in the order of REG_LIMITS (registry.h): sessions a sandbox
 * opened, sessions opened towards it, new sessions per second, the burst, SNAT ports towards
 * one endpoint. 0 = none. Those not given are derived from the table and SNAT range.
 */
enum {
	CVS_SLIM_SESSIONS, CVS_SLIM_INBOUND, CVS_SLIM_RATE, CVS_SLIM_BURST, CVS_SLIM_SNAT,
	CVS_SLIM_MAX
};

struct cvs_config {
	char world_iface[IF_NAMESIZE];
	uint32_t node_ip;		/* network order; 0 = first IPv4 of the world interface */
	bool have_ip6;			/* --node-ip6 given: IPv6 NAT on */
	uint8_t node_ip6[16];		/* the node's IPv6 address on the world interface */
	uint8_t guest_pfx6[8];		/* the guests' /64 (--guest-prefix6) */
	uint8_t sbx_pfx6[12];		/* sandbox addresses on cube-dev (--sandbox-prefix6) */
	uint32_t api_addr;		/* network order */
	uint16_t api_port;
	char api_socket[108];		/* the API's unix socket; "" = none */
	bool api_socket_off;		/* --api-socket none */
	bool api_socket_given;		/* --api-socket PATH, not the RUNTIME-DIR default */
	uint32_t api_socket_mode;	/* its file mode */
	struct cvs_range host_ports;
	struct cvs_range reserved[CVS_MAX_RESERVED];	/* host ports never handed out */
	uint32_t n_reserved;
	uint32_t hostport_hold_s;	/* a deleted sandbox id keeps its host ports this long */
	struct cvs_range snat_ports;
	uint32_t sandbox_net;		/* network order */
	uint8_t sandbox_prefix;
	uint32_t max_sessions;
	uint32_t max_sandboxes;
	uint32_t sandbox_umem_frames;	/* UMEM frames per sandbox socket, a power of two */
	uint32_t guest_ip;
	uint32_t gw_ip;
	uint8_t guest_mac[6];
	uint8_t gw_mac[6];
	char host_iface[IF_NAMESIZE];	/* cube-dev; empty = none */
	bool have_nh_fallback;
	uint8_t nh_fallback[6];		/* next-hop MAC when none is learned */
	uint32_t workers;		/* worker lcores */
	uint32_t world_queues;		/* world queues, <= workers; 0 = as many as workers */
	uint32_t idle_sleep_us;		/* workers sleep this long when idle; 0 = pure polling */
	struct frag_cfg frag;		/* --frag-*: each worker's fragment table (contexts 0: none) */
	bool test_clock;		/* POST /debug/clock moves the session clock */
	bool test_unpacked_pool;	/* tests: invalid world TX descriptors (config.c) */
	uint32_t timeouts[16];		/* per conntrack class, seconds */
	bool tcp_liberal;		/* no TCP window tracking */
	uint32_t sbx_lim[CVS_SLIM_MAX];	/* per-sandbox limit defaults */
	uint32_t sbx_lim_given;		/* bit k: sbx_lim[k] came from the command line */
	bool set_ephemeral;		/* move net.ipv4.ip_local_port_range out of our ranges */
	char state_file[256];		/* registrations survive restarts here; "" = not kept */
	char runtime_dir[200];		/* the session region lives here; "" = not kept */
	char bpf_pin_dir[200];		/* our XDP maps are pinned under DIR/<world-iface> */
	uint32_t restart_grace_s;	/* steered frames held back this long without a process */
	bool detach_on_exit;		/* a stop detaches the steering program, drops sessions */
	char rollback_to[16];		/* --rollback-to: prepare the node for that release, exit */
	bool max_sandboxes_given;	/* --max-sandboxes was on the command line */
	bool help;
	bool version;
};

/*
 * Parse the application options. On error returns -EINVAL and writes one line (no newline)
 * into 'err'. Never touches the system.
 */
int cvs_config_parse(struct cvs_config *c, int argc, char **argv, char *err, size_t errlen);
void cvs_config_defaults(struct cvs_config *c);
void cvs_config_usage(FILE *f, const char *prog);

/* "P,LO-HI,..." appended to out[*n]; -EINVAL on a bad entry, -E2BIG past 'max' entries. */
int cvs_parse_port_list(const char *s, struct cvs_range *out, uint32_t max, uint32_t *n);

/*
 * Check the kernel's ephemeral port range against our port ranges. Returns 0 when disjoint,
 * -EADDRINUSE (with a message naming the sysctl) when they overlap, another -errno when the
 * file cannot be read. With 'fix', writes a disjoint range instead of failing.
 */
int cvs_check_ephemeral(const struct cvs_config *c, const char *path, bool fix, char *msg,
			size_t msglen);

/*
 * Make sure 'dir' is a directory: create it with mode 0700 when it is missing (its parent
 * must exist). Returns 1 when created, 0 when it was there (its mode is left as it is), or
 * -errno with a message naming the directory.
 */
int cvs_make_dir(const char *dir, char *err, size_t errlen);

/*
 * Create the default directories the configuration uses (the state directory of the default
 * --state-file) when they are missing, so that the plain start works on a fresh machine. A
 * directory the operator chose is never created: a typo there stops the start instead.
 * Returns 0, 1 with a message saying what was created, or -errno with a message.
 */
int cvs_config_make_dirs(const struct cvs_config *c, char *err, size_t errlen);

#endif /* CVS_CONFIG_H */
