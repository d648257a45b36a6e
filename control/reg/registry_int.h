/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the registry's own files share and nobody else calls; the caller holds r->lock. Its
 * users are registry.c, the requests, and the six files below it, grouped here by the file
 * that defines each part: reg_link.c and reg_state.c, then reg_ports.c and reg_guest.c, then
 * reg_index.c and reg_format.c. Calls go only downwards in that order (registry.c to any of
 * them, reg_link.c and reg_state.c to the lower ones, reg_ports.c and reg_guest.c to
 * reg_format.c), so no file below registry.c calls back into it and a change to the request
 * path cannot loop through the files that serve it.
 */
#ifndef CVS_REGISTRY_INT_H
#define CVS_REGISTRY_INT_H

#include "registry.h"

/* Attach an unattached sandbox and program its host ports (reg_link.c); -errno, why set. */
int reg_attach_one(struct registry *r, struct sandbox *sb);
/* A PUT of an existing interface registration: repair what the kernel changed (reg_link.c). */
void reg_link_check(struct registry *r, struct sandbox *sb);

/* Tell the store about a change of sb (nothing without a store); reg_state.c. */
void reg_changed(struct registry *r, const struct sandbox *sb, bool deleted);

/* sb's exposed ports made the request's, all or nothing (reg_ports.c); already equal? */
int reg_set_ports(struct registry *r, struct sandbox *sb, const struct reg_req *q, char *err,
		  size_t errlen);
bool reg_same_ports(const struct sandbox *sb, const struct reg_req *q);

/*
 * A guest's own addressing (reg_guest.c): rendered into an answer or a state record when it
 * has one; claimed (REG_OK, or REG_E_CONFLICT when another sandbox has that guestIP or sb has
 * another); applied to sb (true when that changed anything).
 */
void reg_guest_render(json_t *j, const struct sandbox *sb);
int reg_guest_claim(struct registry *r, const struct sandbox *sb, const struct reg_guest *g,
		    char *err, size_t errlen);
bool reg_guest_apply(struct sandbox *sb, const struct reg_guest *g);

/* The lookup chains (reg_index.c): made with the registry, kept with by_slot. */
int reg_index_init(struct registry *r);
void reg_index_fini(struct registry *r);
void reg_index_add(struct registry *r, struct sandbox *sb);
void reg_index_del(struct registry *r, struct sandbox *sb);
/* The registration with this id, or (id NULL) on this interface. */
struct sandbox *reg_lookup(struct registry *r, const char *id, const char *iface);
#define reg_find(r, id)			reg_lookup(r, id, NULL)
#define reg_find_iface(r, iface)	reg_lookup(r, NULL, iface)
/* The registration on this vhost-user socket path. */
struct sandbox *reg_find_vhost(struct registry *r, const char *path);

/* Fill err and return the status: the registry's one way to refuse (reg_format.c). */
int reg_fail(char *err, size_t errlen, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A state-file or answer object for a vhost-user port. */
json_t *reg_vhost_json(const struct sandbox *sb);
void reg_ip_str(uint32_t ip, char *buf);
/* Unix seconds as an RFC 3339 UTC string. */
json_t *reg_time_json(int64_t t);
json_t *reg_mac_json(const uint8_t mac[6]);

#endif /* CVS_REGISTRY_INT_H */
