/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sandbox registrations: ids, interfaces, sandbox addresses, exposed ports and their host
 * ports. Allocation and validation live here; what a registration does to the data path
 * (socket, XDP program, steering entries) is behind reg_ops, so this file runs in unit tests.
 * All functions take the registry lock themselves.
 */
#ifndef CVS_REGISTRY_H
#define CVS_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <jansson.h>

#include "policy.h"
#include "portalloc.h"

#define CVS_ID_MAX		64
#define CVS_MAX_EXPOSED		64

struct xskport;

struct exposed_port {
	uint16_t cport;
	uint16_t hport;
};

struct sandbox {
	char id[CVS_ID_MAX + 1];
	char iface[IF_NAMESIZE];
	int ifindex;
	uint32_t ip;		/* network order */
	uint32_t slot;
	uint32_t nports;
	struct exposed_port ports[CVS_MAX_EXPOSED];
	struct reg_policy policy;
	void *dp;		/* data-path state owned by reg_ops */
	char why[160];		/* why it is not attached (restored, interface gone) */
};

struct reg_ops {
	/* Resolve an interface name; 0 when it does not exist. */
	int (*ifindex)(void *ctx, const char *iface);
	/* Attach the sandbox port; on failure fill err and return -errno. */
	int (*attach)(void *ctx, struct sandbox *sb, char *err, size_t errlen);
	void (*detach)(void *ctx, struct sandbox *sb);
	/* Program or remove one host port → (slot, container port). */
	void (*hostport)(void *ctx, const struct sandbox *sb, const struct exposed_port *ep,
			 bool add);
	/* Publish sb->policy to the data path; -errno on failure. */
	int (*policy)(void *ctx, struct sandbox *sb);
	/*
	 * Optional: make the registrations durable (the state file). The API calls it after
	 * every successful change, before it answers; non-zero fails the request with 500.
	 */
	int (*persist)(void *ctx, char *err, size_t errlen);
};

struct registry {
	pthread_mutex_t lock;
	struct sandbox **by_slot;
	uint32_t max_sandboxes;
	uint32_t count;
	struct portalloc hostports;
	struct portalloc ips;	/* host-order addresses of the sandbox CIDR */
	struct portalloc slots;
	uint32_t node_ip;
	const struct reg_ops *ops;
	void *ctx;
};

int reg_init(struct registry *r, uint32_t max_sandboxes, uint16_t hp_lo, uint16_t hp_hi,
	     uint32_t net, uint8_t prefix, uint32_t node_ip, const struct reg_ops *ops, void *ctx);
void reg_fini(struct registry *r);

/*
 * Handlers return an HTTP status and set *out to the JSON answer (an {"error": ...} object on
 * failure, NULL for 204).
 */
int reg_put(struct registry *r, const char *id, const char *body, size_t len, json_t **out);
int reg_delete(struct registry *r, const char *id, json_t **out);
int reg_get(struct registry *r, const char *id, json_t **out);
int reg_list(struct registry *r, json_t **out);
int reg_exposed(struct registry *r, const char *id, const char *port, json_t **out);
int reg_policy_get(struct registry *r, const char *id, json_t **out);
int reg_policy_put(struct registry *r, const char *id, const char *body, size_t len,
		   json_t **out);
/* Remove every registration (shutdown). */
void reg_clear(struct registry *r);

/*
 * State file support. reg_state() renders every registration with its host ports (caller
 * frees). reg_restore() re-creates them from such an array with the same addresses and host
 * ports, unattached; any invalid or conflicting record fails the whole restore (-EINVAL) with a
 * message in err. reg_attach_pending() attaches every unattached sandbox whose interface
 * exists; it returns how many are still unattached.
 */
json_t *reg_state(struct registry *r);
int reg_restore(struct registry *r, const json_t *sandboxes, char *err, size_t errlen);
uint32_t reg_attach_pending(struct registry *r);
/* Registered and unattached sandbox counts. */
void reg_counts(struct registry *r, uint32_t *total, uint32_t *unattached);

bool reg_id_valid(const char *id);
json_t *reg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CVS_REGISTRY_H */
