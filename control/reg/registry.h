/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sandbox registrations: ids, interfaces, sandbox addresses, exposed ports and their host
 * ports. Allocation and validation live here; what a registration does to the data path
 * (socket, XDP program, steering entries) is behind reg_ops, so this file runs in unit tests.
 * It owns every struct sandbox: other modules read them through reg_foreach() and the
 * lookups below, never through the slot table. All functions take the registry lock
 * themselves.
 */
#ifndef CVS_REGISTRY_H
#define CVS_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <jansson.h>

#include "fifolock.h"
#include "policy.h"
#include "hostports.h"
#include "portalloc.h"

#define CVS_ID_MAX		64
#define CVS_MAX_EXPOSED		64
#define CVS_VHOST_PATH_MAX	108	/* sun_path, with its NUL */

struct xskport;

struct exposed_port {
	uint16_t cport;
	uint16_t hport;
};

/*
 * Per-sandbox limits (docs/datapath.md, "Per-sandbox limits"): the node defaults come from
 * the command line, a registration may override any of them ("limits" in its body). 0 is no
 * limit. 'set' has bit k when v[k] was given rather than taken from the defaults.
 */
#define REG_LIMITS(_) \
	_(SESSIONS,	"maxSessions") \
	_(INBOUND,	"maxInboundSessions") \
	_(RATE,		"newSessionsPerSec") \
	_(BURST,	"newSessionsBurst") \
	_(SNAT,		"snatPortsPerEndpoint")

enum reg_limit {
#define REG_LIM_ENUM(n, s) REG_LIM_##n,
	REG_LIMITS(REG_LIM_ENUM)
#undef REG_LIM_ENUM
	REG_LIM_MAX
};

#define REG_LIMIT_CAP	(1u << 30)	/* the largest value a limit takes */

struct reg_limits {
	uint32_t v[REG_LIM_MAX];
	uint32_t set;
};

extern const char *const reg_limit_names[REG_LIM_MAX];

/* Parse a "limits" object into l (set bits for the fields given); 0 or -1 with 'why'. */
int reg_limits_parse(const json_t *v, struct reg_limits *l, char *why, size_t whylen);
/*
 * A guest addressed on its own (a CNI pod with the address its IPAM gave it): each field left
 * out (0, or gw_mac_set false) is the node-wide --guest-ip, --gateway-ip, --gateway-mac.
 */
struct reg_guest {
	uint32_t ip;		/* network order */
	uint32_t gw_ip;
	uint8_t gw_mac[6];
	bool gw_mac_set;
};

/* The given fields of l as an object, or every field when all is true. */
json_t *reg_limits_render(const struct reg_limits *l, bool all);

struct sandbox {
	char id[CVS_ID_MAX + 1];
	char iface[IF_NAMESIZE];	/* "" for a vhost-user sandbox */
	int ifindex;
	char vhost[CVS_VHOST_PATH_MAX];	/* vhost-user socket, "" for an interface */
	bool vhost_client;	/* we connect to the VMM's socket (else we listen) */
	uint32_t ip;		/* network order */
	uint32_t slot;
	uint32_t nports;
	struct exposed_port ports[CVS_MAX_EXPOSED];
	struct reg_policy policy;
	uint8_t guest_mac[6];	/* the MAC frames to the guest carry (the default or its own) */
	uint16_t mtu;		/* the MTU it is served at, set by the attach (0: not attached) */
	bool guest_mac_set;	/* given in the registration, not --guest-mac */
	struct reg_guest guest;	/* its own addressing, when the registration gave one */
	struct reg_limits limits;	/* the overrides of its registration */
	struct reg_limits lim_eff;	/* in force: overrides over the node defaults */
	void *dp;		/* data-path state owned by reg_ops */
	char why[160];		/* why it is not attached (restored, interface gone) */
	int64_t why_at;		/* when it stopped being attached (unix seconds), 0: never was */
	struct sandbox *next_id;	/* the registry's lookup chains (reg_index.c) */
	struct sandbox *next_port;
};

struct reg_ops {
	/* Resolve an interface name; 0 when it does not exist. */
	int (*ifindex)(void *ctx, const char *iface);
	/* Attach the sandbox port; on failure fill err and return -errno (-EBUSY: taken). */
	int (*attach)(void *ctx, struct sandbox *sb, char *err, size_t errlen);
	void (*detach)(void *ctx, struct sandbox *sb);
	/* What detaches left to the end of the registry lock (optional; any thread). */
	void (*settle)(void *ctx);
	/* Program or remove one host port → (slot, container port). */
	void (*hostport)(void *ctx, const struct sandbox *sb, const struct exposed_port *ep,
			 bool add);
	/* Publish sb->policy to the data path; -errno on failure. */
	int (*policy)(void *ctx, struct sandbox *sb);
	/* Optional: the attached interface's MTU may have changed (a link event): publish it. */
	void (*mtu)(void *ctx, struct sandbox *sb);
	/* Optional: publish a changed guest MAC or addressing of an attached sandbox. */
	void (*guest_mac)(void *ctx, const struct sandbox *sb);
	/* Optional: publish changed sb->lim_eff of an attached sandbox (attach publishes it). */
	void (*limits)(void *ctx, const struct sandbox *sb);
	/*
	 * Optional: whether the VMM of an attached vhost-user sandbox is connected with a
	 * running device, and the virtio features it negotiated (0 when not connected).
	 */
	bool (*vhost_state)(void *ctx, const struct sandbox *sb, uint64_t *features,
			    uint16_t *mtu);
	/*
	 * Optional, for the kernel's link events (reg_link.c): the slot attached on an ifindex
	 * (-1: none); whether the XDP program with this id is ours (1), none (0) or someone
	 * else's (-1, its name in 'name'); and taking an attached sandbox off its interface
	 * while keeping its slot, host ports and sessions ('unattach': remove our program too).
	 */
	int (*slot_of)(void *ctx, int ifindex);
	int (*prog_owner)(void *ctx, uint32_t prog_id, char *name, size_t namelen);
	void (*suspend)(void *ctx, struct sandbox *sb, bool unattach);
	/* Optional: a change of state the operator should read in the log. */
	void (*note)(void *ctx, bool warn, const char *msg);
	/* Optional: nonzero when the attached interface does not run our program any more. */
	int (*check)(void *ctx, const struct sandbox *sb);
	/*
	 * Optional: the IPv6 address an attached sandbox's guest is reached at (learnt from its
	 * frames when *learnt, else the EUI-64 of its MAC); false when the node has no IPv6.
	 */
	bool (*guest_ip6)(void *ctx, const struct sandbox *sb, uint8_t out[16], bool *learnt);
};

/* One registration changed: what the state file keeps of it, for the journal (store.h). */
struct reg_change {
	const struct sandbox *sb;	/* as it is now; when deleted, as it was */
	bool deleted;
	json_t *rec;	/* its state-file record (NULL when deleted); borrowed */
	json_t *holds;	/* the host-port holds of its id after the change; borrowed */
};

/* Where the registrations are made durable (the state file and its journal). */
struct reg_store_ops {
	/*
	 * Under the registry lock, right after each change, in the order of the changes; it
	 * must not call back into the registry.
	 */
	void (*change)(void *ctx, const struct reg_change *c);
	/* Every change so far durable, before an answer; non-zero with a message in err. */
	int (*commit)(void *ctx, char *err, size_t errlen);
};

struct registry {
	struct fifo_lock lock;		/* handed to its waiters in order (fifolock.h) */
	struct sandbox **by_slot;
	uint32_t max_sandboxes;
	uint32_t count;
	struct hostports hostports;
	struct portalloc ips;	/* host-order addresses of the sandbox CIDR */
	struct portalloc slots;
	uint32_t node_ip;
	bool have_ip6;		/* the node's IPv6 address (--node-ip6), for IPv6 endpoints */
	uint8_t node_ip6[16];
	bool have_host6;	/* the host path over IPv6: sandboxes at sbx_pfx6 + their IPv4 */
	uint8_t sbx_pfx6[12];
	uint8_t default_mac[6];	/* guests registered without "guestMAC" */
	struct reg_limits default_lim;	/* the node-wide limits (flags) */
	const struct reg_ops *ops;
	void *ctx;
	const struct reg_store_ops *store;
	void *store_ctx;
	struct sandbox **by_id;	/* hash chains by id, and by interface or vhost-user socket */
	struct sandbox **by_port;
	uint32_t idx_mask;
	uint32_t unattached;	/* registered without a data path (sb->dp NULL) */
	uint64_t links_lost;	/* detached by a link event (reg_link.c) */
	uint64_t links_back;	/* attached again by one */
	uint64_t next_retry_ms;	/* reg_tick(), control thread only */
};

/*
 * What a registry call ended with. The registry knows nothing of HTTP: the API layer maps
 * these to statuses (reg_api.c). Failures come with a message in err.
 */
enum reg_status {
	REG_OK = 0,
	REG_CREATED = 1,	/* reg_put() registered a new sandbox */
	REG_E_INVALID = -1,	/* malformed or out of range */
	REG_E_NOT_FOUND = -2,	/* no such sandbox, or the port is not exposed */
	REG_E_CONFLICT = -3,	/* held by another registration, or the interface is taken */
	REG_E_EXHAUSTED = -4,	/* host ports, sandbox addresses or slots */
	REG_E_FAILED = -5,	/* the data path refused, or memory ran out */
};

/* A registration request (PUT /sandboxes/{id}), already parsed and checked for form. */
struct reg_req {
	char iface[IF_NAMESIZE];	/* exactly one of iface and vhost is set */
	char vhost[CVS_VHOST_PATH_MAX];
	bool vhost_client;
	uint32_t ip;	/* network order; 0 = allocate one */
	uint32_t nports;
	uint16_t cports[CVS_MAX_EXPOSED];
	uint16_t hports[CVS_MAX_EXPOSED];	/* the host port asked for each, 0: any */
	struct reg_policy policy;	/* .set when the request had one */
	uint8_t guest_mac[6];
	bool guest_mac_set;		/* the request had "guestMAC" */
	struct reg_guest guest;		/* "guestIP", "gatewayIP", "gatewayMAC" */
	struct reg_limits limits;	/* the request's "limits" (set bits: given) */
};

int reg_init(struct registry *r, uint32_t max_sandboxes, uint16_t hp_lo, uint16_t hp_hi,
	     uint32_t net, uint8_t prefix, uint32_t node_ip, const struct reg_ops *ops, void *ctx);
void reg_fini(struct registry *r);

/*
 * Requests. Each returns an enum reg_status; on success *out (when given) is the answer's
 * JSON, which the caller frees; on failure err says why.
 */
int reg_put(struct registry *r, const char *id, const struct reg_req *q, json_t **out,
	    char *err, size_t errlen);
int reg_delete(struct registry *r, const char *id, char *err, size_t errlen);
int reg_get(struct registry *r, const char *id, json_t **out, char *err, size_t errlen);
json_t *reg_list(struct registry *r);
/* The exposed-ports answer: nodeIP:hostPort. */
int reg_exposed(struct registry *r, const char *id, uint16_t port, json_t **out, char *err,
		size_t errlen);
/*
 * The same, with ip6 [nodeIPv6]:hostPort: the same host port on the node's IPv6 address
 * (REG_E_CONFLICT when the node has none).
 */
int reg_exposed_family(struct registry *r, const char *id, uint16_t port, bool ip6,
		       json_t **out, char *err, size_t errlen);
/* The node's IPv6 address, for the IPv6 endpoints (NULL: none). Before any request. */
void reg_set_node_ip6(struct registry *r, const uint8_t ip6[16]);
/* The /96 of the host path over IPv6 (--sandbox-prefix6), NULL when there is none. */
void reg_set_sbx_pfx6(struct registry *r, const uint8_t pfx[12]);
int reg_policy_get(struct registry *r, const char *id, json_t **out, char *err,
		   size_t errlen);
int reg_policy_set(struct registry *r, const char *id, const struct reg_policy *p,
		   json_t **out, char *err, size_t errlen);
/* Remove every registration (shutdown). */
void reg_clear(struct registry *r);

/* Whether a sandbox address (network order) may be asked for: inside the CIDR, not reserved. */
bool reg_ip_usable(const struct registry *r, uint32_t ip);

/*
 * Durability. Every change of a registration goes to store->change (reg_set_store()) as it
 * happens; reg_persist() runs store->commit, which the API calls before it answers a change
 * (0 without a store): it makes durable the changes the calling thread made, and those
 * before them. Restores (reg_restore()) and reg_clear() are not changes.
 */
void reg_set_store(struct registry *r, const struct reg_store_ops *ops, void *ctx);
int reg_persist(struct registry *r, char *err, size_t errlen);

/*
 * Read access for the other modules. reg_foreach() calls fn for every registration in slot
 * order, under the registry lock: fn must not call back into the registry. A zone of the data
 * path is slot + 1: reg_zone_of() gives a sandbox's (0 when unknown), reg_zone_name() copies
 * the id of the sandbox in a zone (false when none).
 */
void reg_foreach(struct registry *r, void (*fn)(void *arg, const struct sandbox *sb),
		 void *arg);
uint16_t reg_zone_of(struct registry *r, const char *id);
bool reg_zone_name(struct registry *r, uint16_t zone, char *buf, size_t len);

/*
 * State file support. reg_state() renders every registration with its host ports (caller
 * frees). reg_restore() re-creates them from such an array with the same addresses and host
 * ports, unattached; any invalid or conflicting record fails the whole restore (-EINVAL) with a
 * message in err. reg_attach_pending() attaches every unattached sandbox whose interface
 * exists; it returns how many are still unattached.
 */
json_t *reg_state(struct registry *r);
/*
 * reg_state() and reg_holds_state() for a compaction: 'at' (may be NULL) runs under the
 * registry lock before the first record is rendered, and the lock is let go between chunks of
 * slots, so the render holds every change up to that instant and maybe some after it (the
 * journal after the mark repeats those).
 */
json_t *reg_state_at(struct registry *r, json_t **holds, void (*at)(void *arg), void *arg);
int reg_restore(struct registry *r, const json_t *sandboxes, char *err, size_t errlen);
/*
 * The host-port holds for the state file, and back: restore them after reg_restore() (a port
 * a restored record uses ends its hold). The clock is the wall clock, which a restart keeps.
 */
json_t *reg_holds_state(struct registry *r);
int reg_holds_restore(struct registry *r, const json_t *holds, char *err, size_t errlen);
uint32_t reg_attach_pending(struct registry *r);
/* Registered and unattached sandbox counts. */
void reg_counts(struct registry *r, uint32_t *total, uint32_t *unattached);

/*
 * The registry's periodic duty, from the control loop (one thread): every 2 s, end the host
 * port holds that ran out, look for kernel listeners on handed-out host ports, and attach the
 * sandboxes whose interface was missing. Returns how many it attached; *waiting is how many
 * are still unattached.
 */
uint32_t reg_tick(struct registry *r, uint64_t now_ms, uint32_t *waiting);

/* The guest MAC of sandboxes registered without one (--guest-mac). */
void reg_set_default_guest_mac(struct registry *r, const uint8_t mac[6]);
/* The node-wide limits; every sandbox attached afterwards gets them where it sets none. */
void reg_set_default_limits(struct registry *r, const struct reg_limits *l);
/* sb->lim_eff from sb->limits over the defaults (registry lock held). */
void reg_limits_apply(const struct registry *r, struct sandbox *sb);

/* Host ports never handed out, and how long a deleted id keeps its ports (0 = not at all). */
void reg_hostports_configure(struct registry *r, const struct cvs_range *reserved, uint32_t n,
			     uint32_t hold_s);

/* Host ports for /stats, /metrics and /readyz. */
struct reg_hostport_info {
	uint32_t size;
	uint32_t used;		/* by registered sandboxes */
	uint32_t free;		/* may be handed out now */
	uint32_t listening;	/* kept back: a kernel service listens there */
	uint32_t holds;		/* kept back for a recently deleted sandbox id */
	uint32_t nconflicts;	/* handed out, and a kernel service listens there too */
	uint16_t conflicts[HOSTPORTS_MAX_CONFLICTS];
	struct hostports_stats st;
};
void reg_hostport_info(struct registry *r, struct reg_hostport_info *out);

/* A sandbox port is an interface (AF_XDP) or a vhost-user socket. */
static inline bool
reg_is_vhost(const struct sandbox *sb)
{
	return sb->vhost[0] != '\0';
}

bool reg_id_valid(const char *id);
/* A "guestMAC" value: 0, or -EINVAL unless it is a unicast MAC other than all zeros. */
int reg_mac_parse(const json_t *v, uint8_t mac[6]);
/* guestIP, gatewayIP, gatewayMAC from their values (NULL: absent); -EINVAL with why. */
int reg_guest_parse(const char *ip, const char *gw, const json_t *mac, struct reg_guest *g,
		    char *why, size_t len);
/* REG_OK, or REG_E_INVALID with the rule for ids in err. */
int reg_id_check(const char *id, char *err, size_t errlen);

/*
 * The kernel's link events (control/ports/linkwatch.c feeds them): an interface appeared or
 * changed (name, ifindex, its XDP program's id) or went away. A registered interface that goes
 * is detached at once and keeps its registration, host ports and sessions; the name that comes
 * back (any ifindex) is attached again. Returns how many sandboxes changed state.
 */
uint32_t reg_link_seen(struct registry *r, int ifindex, const char *ifname, uint32_t xdp_id);
uint32_t reg_link_gone(struct registry *r, int ifindex, const char *ifname);
/* Missed events (the socket overflowed): check every interface sandbox against the kernel. */
uint32_t reg_link_resync(struct registry *r);
/* Sandboxes detached by the kernel's events, and attached again by them, since the start. */
void reg_link_counts(struct registry *r, uint64_t *lost, uint64_t *back);

#endif /* CVS_REGISTRY_H */
