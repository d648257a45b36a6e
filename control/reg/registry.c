/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "config.h"
#include "guest6.h"
#include "registry.h"
#include "registry_int.h"

#define REG_RETRY_MS	2000u

int
reg_init(struct registry *r, uint32_t max_sandboxes, uint16_t hp_lo, uint16_t hp_hi,
	 uint32_t net, uint8_t prefix, uint32_t node_ip, const struct reg_ops *ops, void *ctx)
{
	uint32_t base = ntohl(net), size = 1u << (32 - prefix);
	int ret;

	memset(r, 0, sizeof(*r));
	fifo_lock_init(&r->lock);
	r->max_sandboxes = max_sandboxes;
	r->node_ip = node_ip;
	memcpy(r->default_mac, (const uint8_t[6]){ 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc }, 6);
	r->ops = ops;
	r->ctx = ctx;
	r->by_slot = calloc(max_sandboxes, sizeof(*r->by_slot));
	if (!r->by_slot || reg_index_init(r)) {
		free(r->by_slot);
		r->by_slot = NULL;
		return -ENOMEM;
	}
	/* Network address, .1 (the host side, cube-dev) and broadcast are never handed out. */
	ret = hostports_init(&r->hostports, (struct cvs_range){ hp_lo, hp_hi }, NULL, 0, node_ip,
			     0);
	if (!ret)
		ret = portalloc_init(&r->ips, base + 2, base + size - 2);
	if (!ret)
		ret = portalloc_init(&r->slots, 0, max_sandboxes - 1);
	if (ret)
		reg_fini(r);
	return ret;
}

void
reg_fini(struct registry *r)
{
	/* A start that failed before reg_init(): nothing to undo. */
	if (!r->by_slot)
		return;
	hostports_fini(&r->hostports);
	portalloc_fini(&r->ips);
	portalloc_fini(&r->slots);
	free(r->by_slot);
	r->by_slot = NULL;
	reg_index_fini(r);
	fifo_lock_destroy(&r->lock);
}

/* The port of a registration or request for messages: "interface X" or "vhost-user socket X". */
static const char *
reg_port_name(const char *iface, const char *vhost, char *buf, size_t len)
{
	if (vhost[0])
		snprintf(buf, len, "vhost-user socket %s", vhost);
	else
		snprintf(buf, len, "interface %s", iface);
	return buf;
}

/*
 * The answer's object: the registration plus the VMM's connection (not in the state file);
 * with a device running, *mtu becomes the MTU its guest is served at.
 */
static json_t *
reg_vhost_render(const struct registry *r, const struct sandbox *sb, uint16_t *mtu)
{
	json_t *j = reg_vhost_json(sb);
	uint64_t features = 0;
	uint16_t served = 0;
	bool up = r->ops->vhost_state && r->ops->vhost_state(r->ctx, sb, &features, &served);
	char hex[19];

	json_object_set_new(j, "connected", json_boolean(up));
	if (up && served)
		*mtu = served;
	if (up) {
		snprintf(hex, sizeof(hex), "%#llx", (unsigned long long)features);
		json_object_set_new(j, "features", json_string(hex));
	}
	return j;
}

/* Where its guest is reached over IPv6 (docs/datapath.md, "IPv6"), when the node has it. */
static void
reg_guest6_render(const struct registry *r, json_t *j, const struct sandbox *sb)
{
	char a[INET6_ADDRSTRLEN];
	uint8_t ip6[16];
	bool learnt = false;

	/* The host path's address: the /96 and the sandbox's IPv4 one, attached or not. */
	if (r->have_host6) {
		sbx6_addr(ip6, r->sbx_pfx6, sb->ip);
		inet_ntop(AF_INET6, ip6, a, sizeof(a));
		json_object_set_new(j, "sandboxIP6", json_string(a));
	}
	if (!sb->dp || !r->have_ip6 || !r->ops->guest_ip6 ||
	    !r->ops->guest_ip6(r->ctx, sb, ip6, &learnt))
		return;
	inet_ntop(AF_INET6, ip6, a, sizeof(a));
	json_object_set_new(j, "guestIP6", json_string(a));
	json_object_set_new(j, "guestIP6Learnt", json_boolean(learnt));
}

static json_t *
reg_render(const struct registry *r, const struct sandbox *sb)
{
	char ip[INET_ADDRSTRLEN], node[INET_ADDRSTRLEN], ep[INET_ADDRSTRLEN + 8];
	json_t *ports = json_array(), *j;
	uint16_t mtu = sb->mtu;
	uint32_t i;

	reg_ip_str(sb->ip, ip);
	reg_ip_str(r->node_ip, node);
	for (i = 0; i < sb->nports; i++) {
		snprintf(ep, sizeof(ep), "%s:%u", node, sb->ports[i].hport);
		json_array_append_new(ports, json_pack("{s:i,s:i,s:s}",
			"containerPort", sb->ports[i].cport, "hostPort", sb->ports[i].hport,
			"endpoint", ep));
	}
	j = json_pack("{s:s,s:s,s:o,s:b}", "sandboxID", sb->id, "sandboxIP", ip,
		      "exposedPorts", ports, "attached", sb->dp != NULL);
	if (reg_is_vhost(sb))
		json_object_set_new(j, "vhostUser", reg_vhost_render(r, sb, &mtu));
	else
		json_object_set_new(j, "iface", json_string(sb->iface));
	if (!sb->dp && sb->why[0])
		json_object_set_new(j, "attachError", json_string(sb->why));
	if (!sb->dp && sb->why_at)
		json_object_set_new(j, "detachedAt", reg_time_json(sb->why_at));
	if (sb->policy.set)
		json_object_set_new(j, "policy", policy_render(&sb->policy));
	json_object_set_new(j, "guestMAC", reg_mac_json(sb->guest_mac));
	reg_guest_render(j, sb);
	reg_guest6_render(r, j, sb);
	/* What frames towards it may carry; the path's MSS and fragmentation follow it. */
	if (sb->dp && mtu)
		json_object_set_new(j, "mtu", json_integer(mtu));
	/* Every limit in force; those the registration set are listed in limitsSet. */
	json_object_set_new(j, "limits", reg_limits_render(&sb->lim_eff, true));
	json_object_set_new(j, "limitsSet", reg_limits_render(&sb->limits, false));
	return j;
}

bool
reg_ip_usable(const struct registry *r, uint32_t ip)
{
	uint32_t h = ntohl(ip);

	return h >= r->ips.lo && h <= r->ips.hi;
}

/* Publish a new policy; the old one stays in force when that fails. */
static int
reg_apply_policy(struct registry *r, struct sandbox *sb, const struct reg_policy *p,
		 char *err, size_t errlen)
{
	struct reg_policy old = sb->policy;
	int ret;

	sb->policy = *p;
	ret = sb->dp ? r->ops->policy(r->ctx, sb) : 0;
	if (ret) {
		sb->policy = old;
		return reg_fail(err, errlen, REG_E_FAILED, "cannot apply the policy: %s",
				strerror(-ret));
	}
	return REG_OK;
}

/* PUT of a registered id: the same interface and address, maybe other ports or policy. */
static int
reg_update(struct registry *r, struct sandbox *sb, const struct reg_req *q, char *err,
	   size_t errlen)
{
	int status;

	char was[CVS_VHOST_PATH_MAX + 24], now[CVS_VHOST_PATH_MAX + 24];

	if (strcmp(sb->iface, q->iface) || strcmp(sb->vhost, q->vhost) ||
	    sb->vhost_client != q->vhost_client)
		return reg_fail(err, errlen, REG_E_CONFLICT,
				"sandbox %s is registered on %s%s, not %s", sb->id,
				reg_port_name(sb->iface, sb->vhost, was, sizeof(was)),
				reg_is_vhost(sb) && sb->vhost_client ? " (client)" : "",
				reg_port_name(q->iface, q->vhost, now, sizeof(now)));
	if (q->ip && q->ip != sb->ip)
		return reg_fail(err, errlen, REG_E_CONFLICT,
				"sandbox %s already has another sandboxIP", sb->id);
	status = reg_guest_claim(r, sb, &q->guest, err, errlen);
	if (status)
		return status;
	if (!reg_same_ports(sb, q) && (status = reg_set_ports(r, sb, q, err, errlen)))
		return status;
	/* The ports may have changed already: that much is recorded, though the answer fails. */
	if (q->policy.set && (status = reg_apply_policy(r, sb, &q->policy, err, errlen))) {
		reg_changed(r, sb, false);
		return status;
	}
	if (q->guest_mac_set)
		memcpy(sb->guest_mac, q->guest_mac, 6);
	if ((reg_guest_apply(sb, &q->guest) || q->guest_mac_set) && sb->dp && r->ops->guest_mac)
		r->ops->guest_mac(r->ctx, sb);
	sb->guest_mac_set |= q->guest_mac_set;
	if (q->limits.set) {
		sb->limits = q->limits;
		reg_limits_apply(r, sb);
		if (sb->dp && r->ops->limits)
			r->ops->limits(r->ctx, sb);
	}
	/* Missing, gone or stale since: the node agent asking again repairs it. */
	if (!sb->dp)
		reg_attach_one(r, sb);
	else
		reg_link_check(r, sb);
	return REG_OK;
}

/* The slot and address of a new registration. */
static int
reg_take_slot_ip(struct registry *r, struct sandbox *sb, uint32_t ip, char *err,
		 size_t errlen)
{
	uint32_t v = 0;
	int status;

	if (portalloc_get(&r->slots, &sb->slot))
		return reg_fail(err, errlen, REG_E_EXHAUSTED, "sandbox limit reached (%u)",
				r->max_sandboxes);
	if (ip && portalloc_take(&r->ips, ntohl(ip))) {
		status = reg_fail(err, errlen, REG_E_CONFLICT, "sandboxIP is already in use");
	} else if (!ip && portalloc_get(&r->ips, &v)) {
		status = reg_fail(err, errlen, REG_E_EXHAUSTED, "sandbox addresses exhausted");
	} else {
		sb->ip = ip ? ip : htonl(v);
		return REG_OK;
	}
	portalloc_put(&r->slots, sb->slot);
	return status;
}

/* A new registration: slot, address, host ports, then the data path. */
static int
reg_create(struct registry *r, const char *id, const struct reg_req *q, struct sandbox **out,
	   char *err, size_t errlen)
{
	const struct reg_req none = { .nports = 0 };
	struct sandbox *sb, *other = q->vhost[0] ? reg_find_vhost(r, q->vhost) :
					 reg_find_iface(r, q->iface);
	char why[256], name[CVS_VHOST_PATH_MAX + 24];
	uint32_t i;
	int status, ret;

	if (other)
		return reg_fail(err, errlen, REG_E_CONFLICT, "%s is used by sandbox %s",
				reg_port_name(q->iface, q->vhost, name, sizeof(name)), other->id);
	status = reg_guest_claim(r, NULL, &q->guest, err, errlen);
	if (status)
		return status;
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return reg_fail(err, errlen, REG_E_FAILED, "out of memory");
	snprintf(sb->id, sizeof(sb->id), "%s", id);
	snprintf(sb->iface, sizeof(sb->iface), "%s", q->iface);
	snprintf(sb->vhost, sizeof(sb->vhost), "%s", q->vhost);
	sb->vhost_client = q->vhost_client;
	/* A vhost-user port has no interface: the VMM's socket is all it needs. */
	sb->ifindex = reg_is_vhost(sb) ? 0 : r->ops->ifindex(r->ctx, q->iface);
	if (!sb->ifindex && !reg_is_vhost(sb)) {
		status = reg_fail(err, errlen, REG_E_INVALID, "unknown interface %s", q->iface);
		goto free_sb;
	}
	status = reg_take_slot_ip(r, sb, q->ip, err, errlen);
	if (status)
		goto free_sb;
	status = reg_set_ports(r, sb, q, err, errlen);
	if (status)
		goto put_ip;
	sb->policy = q->policy;
	sb->guest_mac_set = q->guest_mac_set;
	memcpy(sb->guest_mac, q->guest_mac_set ? q->guest_mac : r->default_mac, 6);
	sb->guest = q->guest;
	sb->limits = q->limits;
	reg_limits_apply(r, sb);
	ret = r->ops->attach(r->ctx, sb, why, sizeof(why));
	if (ret) {
		status = reg_fail(err, errlen, ret == -EBUSY ? REG_E_CONFLICT :
				  ret == -EMSGSIZE ? REG_E_INVALID : REG_E_FAILED, "%s",
				  why);
		reg_set_ports(r, sb, &none, why, sizeof(why));
		goto put_ip;
	}
	for (i = 0; i < sb->nports; i++)
		r->ops->hostport(r->ctx, sb, &sb->ports[i], true);
	r->by_slot[sb->slot] = sb;
	reg_index_add(r, sb);
	r->count++;
	*out = sb;
	return REG_CREATED;
put_ip:
	portalloc_put(&r->ips, ntohl(sb->ip));
	portalloc_put(&r->slots, sb->slot);
free_sb:
	free(sb);
	return status;
}

int
reg_put(struct registry *r, const char *id, const struct reg_req *q, json_t **out,
	char *err, size_t errlen)
{
	struct sandbox *sb;
	int status;

	if (reg_id_check(id, err, errlen))
		return REG_E_INVALID;
	fifo_lock(&r->lock);
	sb = reg_find(r, id);
	if (sb)
		status = reg_update(r, sb, q, err, errlen);
	else
		status = reg_create(r, id, q, &sb, err, errlen);
	if (status >= 0)
		reg_changed(r, sb, false);
	if (status >= 0 && out)
		*out = reg_render(r, sb);
	fifo_unlock(&r->lock);
	return status;
}

/* Outside the lock: the kernel's slow part of a detach, off everyone else's path. */
static void
reg_settle(struct registry *r)
{
	if (r->ops->settle)
		r->ops->settle(r->ctx);
}

/* 'record': a deletion the state file must learn of, not the shutdown's reg_clear(). */
static void
reg_remove(struct registry *r, struct sandbox *sb, bool record)
{
	uint64_t now = (uint64_t)time(NULL);
	uint32_t i;

	for (i = 0; i < sb->nports; i++) {
		r->ops->hostport(r->ctx, sb, &sb->ports[i], false);
		hostports_release(&r->hostports, sb->id, sb->ports[i].cport, sb->ports[i].hport,
				  now);
	}
	if (!sb->dp)
		r->unattached--;
	r->ops->detach(r->ctx, sb);
	portalloc_put(&r->ips, ntohl(sb->ip));
	portalloc_put(&r->slots, sb->slot);
	r->by_slot[sb->slot] = NULL;
	reg_index_del(r, sb);
	r->count--;
	if (record)
		reg_changed(r, sb, true);
	free(sb);
}

int
reg_delete(struct registry *r, const char *id, char *err, size_t errlen)
{
	struct sandbox *sb;
	int status = REG_OK;

	fifo_lock(&r->lock);
	sb = reg_id_valid(id) ? reg_find(r, id) : NULL;
	if (!sb)
		status = reg_fail(err, errlen, REG_E_NOT_FOUND, "sandbox %s not found", id);
	else
		reg_remove(r, sb, true);
	fifo_unlock(&r->lock);
	/*
	 * Not settled here: the kernel's end of the interface's link follows on its own thread
	 * (xdp/xdpend.c). The sandbox is gone from the data path already, and waiting for RTNL
	 * behind the other deletions was most of a DELETE's time under concurrent clients.
	 */
	return status;
}

void
reg_clear(struct registry *r)
{
	uint32_t i;

	if (!r->by_slot)
		return;
	fifo_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i])
			reg_remove(r, r->by_slot[i], false);
	fifo_unlock(&r->lock);
	reg_settle(r);
}

/* Answer with render(sb) for a known sandbox. */
static int
reg_show(struct registry *r, const char *id,
	 json_t *(*render)(const struct registry *r, const struct sandbox *sb), json_t **out,
	 char *err, size_t errlen)
{
	struct sandbox *sb;
	int status = REG_OK;

	fifo_lock(&r->lock);
	sb = reg_id_valid(id) ? reg_find(r, id) : NULL;
	if (sb)
		*out = render(r, sb);
	else
		status = reg_fail(err, errlen, REG_E_NOT_FOUND, "sandbox %s not found", id);
	fifo_unlock(&r->lock);
	return status;
}

int
reg_get(struct registry *r, const char *id, json_t **out, char *err, size_t errlen)
{
	return reg_show(r, id, reg_render, out, err, errlen);
}

json_t *
reg_list(struct registry *r)
{
	json_t *arr = json_array();
	uint32_t i;

	fifo_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i])
			json_array_append_new(arr, reg_render(r, r->by_slot[i]));
	fifo_unlock(&r->lock);
	return json_pack("{s:o}", "sandboxes", arr);
}

void
reg_set_node_ip6(struct registry *r, const uint8_t ip6[16])
{
	r->have_ip6 = ip6 != NULL;
	if (ip6)
		memcpy(r->node_ip6, ip6, 16);
}

void
reg_set_sbx_pfx6(struct registry *r, const uint8_t pfx[12])
{
	r->have_host6 = pfx != NULL;
	if (pfx)
		memcpy(r->sbx_pfx6, pfx, 12);
}

int
reg_exposed(struct registry *r, const char *id, uint16_t port, json_t **out, char *err,
	    size_t errlen)
{
	return reg_exposed_family(r, id, port, false, out, err, errlen);
}

int
reg_exposed_family(struct registry *r, const char *id, uint16_t port, bool ip6, json_t **out,
		   char *err, size_t errlen)
{
	char node[INET6_ADDRSTRLEN], ep[INET6_ADDRSTRLEN + 8];
	struct sandbox *sb;
	int status = REG_OK;
	uint32_t i;

	fifo_lock(&r->lock);
	sb = reg_id_valid(id) ? reg_find(r, id) : NULL;
	for (i = 0; sb && i < sb->nports && sb->ports[i].cport != port; i++)
		;
	if (!sb) {
		status = reg_fail(err, errlen, REG_E_NOT_FOUND, "sandbox %s not found", id);
	} else if (i == sb->nports) {
		status = reg_fail(err, errlen, REG_E_NOT_FOUND,
				  "port %u of sandbox %s is not exposed", port, id);
	} else if (ip6 && !r->have_ip6) {
		status = reg_fail(err, errlen, REG_E_CONFLICT, "the node has no IPv6 address "
				  "(--node-ip6): no IPv6 endpoint");
	} else {
		if (ip6)
			inet_ntop(AF_INET6, r->node_ip6, node, sizeof(node));
		else
			reg_ip_str(r->node_ip, node);
		snprintf(ep, sizeof(ep), ip6 ? "[%s]:%u" : "%s:%u", node, sb->ports[i].hport);
		*out = json_pack("{s:s,s:i,s:s,s:s,s:s,s:i}", "sandboxID", sb->id,
				 "containerPort", (int)port, "mode", "host_port", "endpoint", ep,
				 "hostIP", node, "hostPort", sb->ports[i].hport);
	}
	fifo_unlock(&r->lock);
	return status;
}

static json_t *
reg_render_policy(const struct registry *r, const struct sandbox *sb)
{
	return policy_render(&sb->policy);
}

int
reg_policy_get(struct registry *r, const char *id, json_t **out, char *err, size_t errlen)
{
	return reg_show(r, id, reg_render_policy, out, err, errlen);
}

int
reg_policy_set(struct registry *r, const char *id, const struct reg_policy *p,
	       json_t **out, char *err, size_t errlen)
{
	struct sandbox *sb;
	int status;

	fifo_lock(&r->lock);
	sb = reg_id_valid(id) ? reg_find(r, id) : NULL;
	if (!sb) {
		status = reg_fail(err, errlen, REG_E_NOT_FOUND, "sandbox %s not found", id);
	} else {
		status = reg_apply_policy(r, sb, p, err, errlen);
		if (!status)
			reg_changed(r, sb, false);
		if (!status && out)
			*out = policy_render(&sb->policy);
	}
	fifo_unlock(&r->lock);
	return status;
}

/* ---- what the other modules may read ---- */

void
reg_foreach(struct registry *r, void (*fn)(void *arg, const struct sandbox *sb), void *arg)
{
	uint32_t i;

	fifo_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i])
			fn(arg, r->by_slot[i]);
	fifo_unlock(&r->lock);
}

uint16_t
reg_zone_of(struct registry *r, const char *id)
{
	const struct sandbox *sb;
	uint16_t zone;

	fifo_lock(&r->lock);
	sb = reg_find(r, id);
	zone = sb ? (uint16_t)(sb->slot + 1) : 0;
	fifo_unlock(&r->lock);
	return zone;
}

bool
reg_zone_name(struct registry *r, uint16_t zone, char *buf, size_t len)
{
	const struct sandbox *sb;

	fifo_lock(&r->lock);
	sb = zone && zone - 1u < r->max_sandboxes ? r->by_slot[zone - 1] : NULL;
	if (sb)
		snprintf(buf, len, "%s", sb->id);
	fifo_unlock(&r->lock);
	return sb != NULL;
}

/* ---- durability ---- */

void
reg_set_store(struct registry *r, const struct reg_store_ops *ops, void *ctx)
{
	if (!r->by_slot)
		return;
	fifo_lock(&r->lock);
	r->store = ops;
	r->store_ctx = ctx;
	fifo_unlock(&r->lock);
}

/* No registry lock: the store orders its own writers, and the answer waits only for them. */
int
reg_persist(struct registry *r, char *err, size_t errlen)
{
	return r->store ? r->store->commit(r->store_ctx, err, errlen) : 0;
}

uint32_t
reg_attach_pending(struct registry *r)
{
	uint32_t i, left = 0;

	fifo_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++) {
		struct sandbox *sb = r->by_slot[i];

		if (sb && !sb->dp && reg_attach_one(r, sb))
			left++;
	}
	fifo_unlock(&r->lock);
	return left;
}

void
reg_counts(struct registry *r, uint32_t *total, uint32_t *unattached)
{
	fifo_lock(&r->lock);
	*total = r->count;
	*unattached = r->unattached;
	fifo_unlock(&r->lock);
}

uint32_t
reg_tick(struct registry *r, uint64_t now_ms, uint32_t *waiting)
{
	uint32_t total, before, after;

	*waiting = 0;
	if (now_ms < r->next_retry_ms)
		return 0;
	r->next_retry_ms = now_ms + REG_RETRY_MS;
	/* Holds run out, and a listener that appeared on a handed-out port is seen. */
	fifo_lock(&r->lock);
	hostports_expire(&r->hostports, (uint64_t)time(NULL));
	hostports_scan(&r->hostports);
	fifo_unlock(&r->lock);
	reg_counts(r, &total, &before);
	if (!before)
		return 0;
	after = reg_attach_pending(r);
	*waiting = after;
	return after < before ? before - after : 0;
}

void
reg_set_default_guest_mac(struct registry *r, const uint8_t mac[6])
{
	fifo_lock(&r->lock);
	memcpy(r->default_mac, mac, 6);
	fifo_unlock(&r->lock);
}

void
reg_hostports_configure(struct registry *r, const struct cvs_range *reserved, uint32_t n,
			uint32_t hold_s)
{
	fifo_lock(&r->lock);
	hostports_configure(&r->hostports, reserved, n, hold_s);
	fifo_unlock(&r->lock);
}

void
reg_hostport_info(struct registry *r, struct reg_hostport_info *out)
{
	const struct hostports *h = &r->hostports;

	fifo_lock(&r->lock);
	out->size = hostports_size(h);
	out->used = hostports_used(h) - h->nholds;
	out->free = hostports_free(h);
	out->listening = hostports_listening(h);
	out->holds = h->nholds;
	out->nconflicts = h->nconflicts;
	memcpy(out->conflicts, h->conflicts, sizeof(out->conflicts));
	out->st = h->st;
	fifo_unlock(&r->lock);
}
