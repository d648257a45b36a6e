/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry's side of the kernel's link events. A sandbox interface that a crashed VMM took
 * with it, a TAP made again, a rename, a move to another namespace or someone else's XDP
 * program: what the node agent registered stays (id, address, host ports, sessions), and only
 * the attachment follows what the kernel did. Nothing here waits for the agent: the name it
 * registered is attached again as soon as an interface of that name exists.
 *
 * Attaching a registered sandbox that is not attached (reg_attach_one()) is here, for a PUT
 * and the timer (registry.c) too: the link events attach again through it, and with it here
 * they call nothing of registry.c. Only a new registration's first attach is registry.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "registry.h"
#include "registry_int.h"

static void __attribute__((format(printf, 3, 4)))
reg_note(struct registry *r, bool warn, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (!r->ops->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->ops->note(r->ctx, warn, msg);
}

/* Take an attached interface sandbox off its interface, keeping the rest. */
static void __attribute__((format(printf, 4, 5)))
reg_suspend(struct registry *r, struct sandbox *sb, bool unattach, const char *fmt, ...)
{
	char why[sizeof(sb->why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* Logged once per change of reason: a flapping link does not flood the log. */
	if (strcmp(why, sb->why))
		reg_note(r, true, "sandbox %s detached: %s; its registration, host ports and "
			 "sessions stay", sb->id, why);
	snprintf(sb->why, sizeof(sb->why), "%s", why);
	if (!sb->dp)
		return;
	if (r->ops->suspend)
		r->ops->suspend(r->ctx, sb, unattach);
	sb->dp = NULL;
	sb->why_at = (int64_t)time(NULL);
	r->unattached++;
	r->links_lost++;
}

/* Attach an unattached sandbox and program its host ports; remembers why when it cannot. */
int
reg_attach_one(struct registry *r, struct sandbox *sb)
{
	char err[sizeof(sb->why)];
	uint32_t i;
	int ret;

	sb->ifindex = reg_is_vhost(sb) ? 0 : r->ops->ifindex(r->ctx, sb->iface);
	if (!sb->ifindex && !reg_is_vhost(sb)) {
		/* A retry keeps the reason the kernel's event gave (reg_suspend()). */
		if (!sb->why_at)
			snprintf(sb->why, sizeof(sb->why), "interface %s does not exist",
				 sb->iface);
		sb->why_at = sb->why_at ? sb->why_at : (int64_t)time(NULL);
		return -ENODEV;
	}
	reg_limits_apply(r, sb);
	ret = r->ops->attach(r->ctx, sb, err, sizeof(err));
	if (ret) {
		snprintf(sb->why, sizeof(sb->why), "%s", err);
		sb->why_at = sb->why_at ? sb->why_at : (int64_t)time(NULL);
		return ret;
	}
	r->unattached--;
	sb->why[0] = '\0';
	sb->why_at = 0;
	for (i = 0; i < sb->nports; i++)
		r->ops->hostport(r->ctx, sb, &sb->ports[i], true);
	return 0;
}

/* Attach it again, and count it when it worked. */
static uint32_t
reg_link_attach(struct registry *r, struct sandbox *sb)
{
	bool was_lost = sb->why_at != 0;

	if (reg_attach_one(r, sb))
		return 0;
	if (was_lost)
		r->links_back++;
	reg_note(r, false, "sandbox %s attached again on %s (ifindex %d)", sb->id, sb->iface,
		 sb->ifindex);
	return 1;
}

/* The sandbox attached on ifindex (by the data path's own map), or NULL. */
static struct sandbox *
reg_on_ifindex(struct registry *r, int ifindex)
{
	int slot = r->ops->slot_of ? r->ops->slot_of(r->ctx, ifindex) : -1;
	struct sandbox *sb;

	if (slot < 0 || (uint32_t)slot >= r->max_sandboxes)
		return NULL;
	sb = r->by_slot[slot];
	return sb && sb->dp && !reg_is_vhost(sb) && sb->ifindex == ifindex ? sb : NULL;
}

/* An attached sandbox on ifindex whose program is someone else's now, or gone. */
static uint32_t
reg_link_prog(struct registry *r, struct sandbox *sb, uint32_t xdp_id)
{
	char name[32] = "";
	int owner = r->ops->prog_owner ? r->ops->prog_owner(r->ctx, xdp_id, name, sizeof(name))
				       : 1;

	if (owner > 0)
		return 0;
	if (owner < 0) {
		reg_suspend(r, sb, false, "%s runs XDP program '%s' (id %u), which is not ours; "
			    "not replacing it (remove it with 'ip link set dev %s xdp off')",
			    sb->iface, name, xdp_id, sb->iface);
		return 1;
	}
	reg_suspend(r, sb, false, "the XDP program was removed from %s", sb->iface);
	return 1 + reg_link_attach(r, sb);
}

uint32_t
reg_link_seen(struct registry *r, int ifindex, const char *ifname, uint32_t xdp_id)
{
	struct sandbox *sb;
	uint32_t n = 0;

	fifo_lock(&r->lock);
	sb = reg_on_ifindex(r, ifindex);
	if (sb && strcmp(sb->iface, ifname)) {
		reg_suspend(r, sb, true, "interface %s was renamed to %s", sb->iface, ifname);
		n++;
	} else if (sb) {
		n += reg_link_prog(r, sb, xdp_id);
		if (r->ops->mtu)
			r->ops->mtu(r->ctx, sb);
	}
	sb = reg_find_iface(r, ifname);
	if (sb && sb->dp && sb->ifindex != ifindex) {
		/* Another interface took the name: the agent asked for the name. */
		reg_suspend(r, sb, false, "interface %s is another interface now (ifindex %d, was "
			    "%d)", ifname, ifindex, sb->ifindex);
		n++;
	}
	if (sb && !sb->dp)
		n += reg_link_attach(r, sb);
	fifo_unlock(&r->lock);
	return n;
}

uint32_t
reg_link_gone(struct registry *r, int ifindex, const char *ifname)
{
	struct sandbox *sb;

	fifo_lock(&r->lock);
	sb = reg_on_ifindex(r, ifindex);
	if (sb)
		reg_suspend(r, sb, false, "interface %s disappeared (deleted, or moved to another "
			    "network namespace)", ifname[0] ? ifname : sb->iface);
	fifo_unlock(&r->lock);
	return sb != NULL;
}

void
reg_link_check(struct registry *r, struct sandbox *sb)
{
	int ifindex;

	if (reg_is_vhost(sb) || !sb->dp)
		return;
	ifindex = r->ops->ifindex(r->ctx, sb->iface);
	if (ifindex != sb->ifindex) {
		reg_suspend(r, sb, false, ifindex ? "interface %s is another interface now" :
			    "interface %s disappeared", sb->iface);
		if (ifindex)
			reg_link_attach(r, sb);
		return;
	}
	if (r->ops->check && r->ops->check(r->ctx, sb)) {
		/* Ours, but gone or replaced: attach again, or say whose it is. */
		reg_suspend(r, sb, false, "the XDP program of %s is not ours any more", sb->iface);
		reg_link_attach(r, sb);
	}
}

uint32_t
reg_link_resync(struct registry *r)
{
	uint32_t i, n = 0;

	fifo_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++) {
		struct sandbox *sb = r->by_slot[i];

		if (!sb || reg_is_vhost(sb))
			continue;
		if (sb->dp)
			reg_link_check(r, sb);
		else
			n += reg_link_attach(r, sb);
	}
	fifo_unlock(&r->lock);
	return n;
}

void
reg_link_counts(struct registry *r, uint64_t *lost, uint64_t *back)
{
	fifo_lock(&r->lock);
	*lost = r->links_lost;
	*back = r->links_back;
	fifo_unlock(&r->lock);
}
