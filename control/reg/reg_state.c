/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry's side of the state file: every registration with its address and host ports,
 * and the host-port holds of recently deleted sandboxes, rendered and restored. A restore
 * validates every record before it takes anything and refuses the whole file on the first bad
 * one, so a restart never runs with half of the registrations.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "config.h"
#include "registry.h"
#include "registry_int.h"

/* One registration as the state file keeps it. */
static json_t *
reg_state_record(const struct sandbox *sb)
{
	char ip[INET_ADDRSTRLEN];
	json_t *ports, *rec;
	uint32_t k;

	ports = json_array();
	for (k = 0; k < sb->nports; k++)
		json_array_append_new(ports, json_pack("{s:i,s:i}", "containerPort",
			sb->ports[k].cport, "hostPort", sb->ports[k].hport));
	reg_ip_str(sb->ip, ip);
	rec = json_pack("{s:s,s:s,s:o,s:i}", "sandboxID", sb->id, "sandboxIP", ip,
			"exposedPorts", ports, "slot", (int)sb->slot);
	if (!rec)
		return NULL;
	if (reg_is_vhost(sb))
		json_object_set_new(rec, "vhostUser", reg_vhost_json(sb));
	else
		json_object_set_new(rec, "iface", json_string(sb->iface));
	if (sb->policy.set)
		json_object_set_new(rec, "policy", policy_render(&sb->policy));
	if (sb->guest_mac_set)
		json_object_set_new(rec, "guestMAC", reg_mac_json(sb->guest_mac));
	reg_guest_render(rec, sb);
	/* Only the overrides: a restart with other defaults applies the new ones. */
	if (sb->limits.set)
		json_object_set_new(rec, "limits", reg_limits_render(&sb->limits, false));
	return rec;
}

/* Slots rendered per hold of the lock: a compaction never stalls requests for long. */
#define REG_STATE_CHUNK	256u

json_t *
reg_state_at(struct registry *r, json_t **holds, void (*at)(void *arg), void *arg)
{
	json_t *arr = json_array();
	uint32_t i = 0, end;

	/*
	 * 'at' runs before the first slot is rendered and the lock is let go between chunks: a
	 * change made meanwhile may or may not be in the render, and is in the journal after the
	 * mark either way. Records carry a sandbox's whole state, so applying them again over a
	 * render that already has them gives the same registry.
	 */
	fifo_lock(&r->lock);
	if (at)
		at(arg);
	for (;;) {
		end = r->max_sandboxes - i > REG_STATE_CHUNK ? i + REG_STATE_CHUNK :
							     r->max_sandboxes;
		for (; i < end; i++)
			if (r->by_slot[i])
				json_array_append_new(arr, reg_state_record(r->by_slot[i]));
		if (i == r->max_sandboxes)
			break;
		/* The requests waiting meanwhile go first: the lock is handed on in order. */
		fifo_unlock(&r->lock);
		fifo_lock(&r->lock);
	}
	if (holds) {
		hostports_expire(&r->hostports, (uint64_t)time(NULL));
		*holds = hostports_holds_json(&r->hostports, NULL);
	}
	fifo_unlock(&r->lock);
	return arr;
}

json_t *
reg_state(struct registry *r)
{
	return reg_state_at(r, NULL, NULL, NULL);
}

void
reg_changed(struct registry *r, const struct sandbox *sb, bool deleted)
{
	struct reg_change c = { .sb = sb, .deleted = deleted };

	if (!r->store)
		return;
	/* One record and the holds of one id: the cost of a change does not grow with N. */
	c.rec = deleted ? NULL : reg_state_record(sb);
	c.holds = hostports_holds_json(&r->hostports, sb->id);
	r->store->change(r->store_ctx, &c);
	json_decref(c.rec);
	json_decref(c.holds);
}

static int
reg_restore_ports(struct registry *r, struct sandbox *sb, const json_t *ports, char *err,
		  size_t errlen)
{
	size_t i, k;

	if (!json_is_array(ports) || json_array_size(ports) > CVS_MAX_EXPOSED) {
		snprintf(err, errlen, "\"exposedPorts\" must be an array of at most %d entries",
			 CVS_MAX_EXPOSED);
		return -EINVAL;
	}
	for (i = 0; i < json_array_size(ports); i++) {
		json_int_t cp = -1, hp = -1;
		int ret;

		if (json_unpack(json_array_get(ports, i), "{s:I,s:I!}", "containerPort", &cp,
				"hostPort", &hp) || cp < 1 || cp > 65535 || hp < 1 || hp > 65535) {
			snprintf(err, errlen, "exposedPorts[%zu] must be {\"containerPort\": "
				 "1..65535, \"hostPort\": 1..65535}", i);
			return -EINVAL;
		}
		for (k = 0; k < sb->nports; k++)
			if (sb->ports[k].cport == cp) {
				snprintf(err, errlen, "container port %d listed twice", (int)cp);
				return -EINVAL;
			}
		ret = hostports_take(&r->hostports, (uint16_t)hp);
		if (ret) {
			snprintf(err, errlen, "host port %d %s", (int)hp, ret == -ERANGE ?
				 "is outside --host-port-range" : "is used twice");
			return -EINVAL;
		}
		sb->ports[sb->nports].cport = (uint16_t)cp;
		sb->ports[sb->nports].hport = (uint16_t)hp;
		sb->nports++;
	}
	return 0;
}

/* The fields of one state-file record, as json_unpack() leaves them (absent: NULL, -1). */
struct reg_rec {
	const char *id, *iface, *ip, *vpath, *vmode, *gip, *gw;
	json_t *ports, *pol, *mac, *vh, *lim, *gwmac;
	json_int_t slot;
};

/* A record's shape, and an id and port no earlier record has; nothing taken yet. */
static int
reg_rec_unpack(struct registry *r, const json_t *rec, struct reg_rec *f, char *err,
	       size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->slot = -1;
	if (json_unpack((json_t *)rec, "{s:s,s?s,s?o,s:s,s:o,s?o,s?o,s?I,s?o,s?s,s?s,s?o!}",
			"sandboxID", &f->id, "iface", &f->iface, "vhostUser", &f->vh,
			"sandboxIP", &f->ip, "exposedPorts", &f->ports, "policy", &f->pol,
			"guestMAC", &f->mac, "slot", &f->slot, "limits", &f->lim,
			"guestIP", &f->gip, "gatewayIP", &f->gw, "gatewayMAC", &f->gwmac) ||
	    !f->iface == !f->vh ||
	    (f->vh && json_unpack(f->vh, "{s:s,s:s!}", "socket", &f->vpath, "mode", &f->vmode))) {
		snprintf(err, errlen, "a record must have sandboxID, iface or vhostUser (socket, "
			 "mode), sandboxIP, exposedPorts and optionally policy, guestMAC, slot, "
			 "limits, guestIP, gatewayIP and gatewayMAC, nothing else");
		return -EINVAL;
	}
	if (!reg_id_valid(f->id) || reg_find(r, f->id)) {
		snprintf(err, errlen, "sandbox id '%.64s' is invalid or used twice", f->id);
		return -EINVAL;
	}
	if (f->iface && (!*f->iface || strlen(f->iface) >= IF_NAMESIZE ||
			 reg_find_iface(r, f->iface))) {
		snprintf(err, errlen, "sandbox %s: interface '%.32s' is invalid or used twice",
			 f->id, f->iface);
		return -EINVAL;
	}
	if (f->vh && (f->vpath[0] != '/' || strlen(f->vpath) >= CVS_VHOST_PATH_MAX ||
		      reg_find_vhost(r, f->vpath) ||
		      (strcmp(f->vmode, "server") && strcmp(f->vmode, "client")))) {
		snprintf(err, errlen, "sandbox %s: vhost-user socket '%.120s' (mode %.16s) is "
			 "invalid or used twice", f->id, f->vpath, f->vmode);
		return -EINVAL;
	}
	return 0;
}

/*
 * The rest of a record onto sb, which holds its slot and address: host ports, policy, limits,
 * the guest's addressing and MAC. On failure the host ports it took stay in sb for the caller
 * to give back.
 */
static int
reg_rec_apply(struct registry *r, struct sandbox *sb, const struct reg_rec *f, char *why,
	      size_t len)
{
	int ret;

	ret = reg_restore_ports(r, sb, f->ports, why, len);
	if (!ret && f->pol)
		ret = policy_parse(f->pol, &sb->policy, why, len);
	if (!ret && f->lim)
		ret = reg_limits_parse(f->lim, &sb->limits, why, len) ? -EINVAL : 0;
	if (!ret)
		ret = reg_guest_parse(f->gip, f->gw, f->gwmac, &sb->guest, why, len);
	if (!ret && reg_guest_claim(r, NULL, &sb->guest, why, len))
		ret = -EINVAL;
	/* Shown while it waits for its interface; attaching computes them again. */
	reg_limits_apply(r, sb);
	memcpy(sb->guest_mac, r->default_mac, 6);
	if (!ret && f->mac) {
		sb->guest_mac_set = true;
		if (reg_mac_parse(f->mac, sb->guest_mac)) {
			snprintf(why, len, "guestMAC is not a unicast MAC");
			ret = -EINVAL;
		}
	}
	return ret;
}

/* One record → an unattached sandbox holding its slot, address and host ports. */
static int
reg_restore_one(struct registry *r, const json_t *rec, char *err, size_t errlen)
{
	struct reg_rec f;
	struct sandbox *sb;
	uint32_t addr, k;
	char why[160];
	int ret;

	ret = reg_rec_unpack(r, rec, &f, err, errlen);
	if (ret)
		return ret;
	sb = calloc(1, sizeof(*sb));
	if (!sb) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(sb->id, sizeof(sb->id), "%s", f.id);
	snprintf(sb->iface, sizeof(sb->iface), "%s", f.iface ? f.iface : "");
	snprintf(sb->vhost, sizeof(sb->vhost), "%s", f.vpath ? f.vpath : "");
	sb->vhost_client = f.vmode && !strcmp(f.vmode, "client");
	if (cvs_parse_ipv4(f.ip, &sb->ip) || portalloc_take(&r->ips, ntohl(sb->ip))) {
		snprintf(err, errlen, "sandbox %s: sandboxIP '%.32s' is invalid, outside "
			 "--sandbox-cidr or used twice", f.id, f.ip);
		free(sb);
		return -EINVAL;
	}
	addr = ntohl(sb->ip);
	/*
	 * The same slot as before when it is free: the zone of the sessions a restarted node
	 * adopted (control/restart/region.h). A file without slots, or a slot beyond
	 * --max-sandboxes, takes the next free one.
	 */
	if (f.slot >= 0 && f.slot < r->max_sandboxes &&
	    !portalloc_take(&r->slots, (uint32_t)f.slot))
		sb->slot = (uint32_t)f.slot;
	else if (portalloc_get(&r->slots, &sb->slot)) {
		snprintf(err, errlen, "more sandboxes than --max-sandboxes %u", r->max_sandboxes);
		ret = -EINVAL;
		goto put_ip;
	}
	ret = reg_rec_apply(r, sb, &f, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "sandbox %s: %s", f.id, why);
		for (k = 0; k < sb->nports; k++)
			hostports_unget(&r->hostports, sb->ports[k].hport);
		portalloc_put(&r->slots, sb->slot);
		goto put_ip;
	}
	snprintf(sb->why, sizeof(sb->why), "restored, not attached yet");
	r->by_slot[sb->slot] = sb;
	reg_index_add(r, sb);
	r->count++;
	r->unattached++;
	return 0;
put_ip:
	portalloc_put(&r->ips, addr);
	free(sb);
	return ret;
}

int
reg_restore(struct registry *r, const json_t *sandboxes, char *err, size_t errlen)
{
	size_t i;
	int ret = 0;

	if (!json_is_array(sandboxes)) {
		snprintf(err, errlen, "\"sandboxes\" must be an array");
		return -EINVAL;
	}
	fifo_lock(&r->lock);
	for (i = 0; i < json_array_size(sandboxes) && !ret; i++) {
		char why[384];

		ret = reg_restore_one(r, json_array_get(sandboxes, i), why, sizeof(why));
		if (ret)
			snprintf(err, errlen, "record %zu: %s", i, why);
	}
	fifo_unlock(&r->lock);
	return ret;
}

json_t *
reg_holds_state(struct registry *r)
{
	json_t *arr;

	fifo_lock(&r->lock);
	hostports_expire(&r->hostports, (uint64_t)time(NULL));
	arr = hostports_holds_json(&r->hostports, NULL);
	fifo_unlock(&r->lock);
	return arr;
}

int
reg_holds_restore(struct registry *r, const json_t *holds, char *err, size_t errlen)
{
	int ret;

	fifo_lock(&r->lock);
	ret = hostports_holds_restore(&r->hostports, holds, (uint64_t)time(NULL), err, errlen);
	fifo_unlock(&r->lock);
	return ret;
}
