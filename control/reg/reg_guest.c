/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A guest addressed on its own (issue 35): a CNI pod has the address its IPAM gave it, a
 * gateway and that gateway's MAC, where a CubeSandbox guest has the node-wide --guest-ip,
 * --gateway-ip and --gateway-mac. The registration may carry guestIP, gatewayIP and gatewayMAC;
 * each one it leaves out stays the node's. Two sandboxes never claim one guestIP: the sessions
 * of both would be one. Under the registry lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "cvs_common.h"
#include "registry_int.h"

/* A unicast IPv4 address a guest can have: not 0, loopback, multicast or broadcast. */
static bool
reg_guest_ip_ok(const char *s, uint32_t *ip)
{
	uint32_t h;

	if (!s || cvs_parse_ipv4(s, ip))
		return false;
	h = ntohl(*ip);
	return h && h >> 24 != 127 && h >> 28 < 14;
}

int
reg_guest_parse(const char *ip, const char *gw, const json_t *mac, struct reg_guest *g,
		char *why, size_t len)
{
	memset(g, 0, sizeof(*g));
	if (ip && !reg_guest_ip_ok(ip, &g->ip)) {
		snprintf(why, len, "\"guestIP\" must be a unicast IPv4 address");
		return -EINVAL;
	}
	if (gw && !reg_guest_ip_ok(gw, &g->gw_ip)) {
		snprintf(why, len, "\"gatewayIP\" must be a unicast IPv4 address");
		return -EINVAL;
	}
	if (g->ip && g->ip == g->gw_ip) {
		snprintf(why, len, "\"guestIP\" and \"gatewayIP\" must differ");
		return -EINVAL;
	}
	if (mac) {
		if (reg_mac_parse(mac, g->gw_mac)) {
			snprintf(why, len, "\"gatewayMAC\" must be a unicast MAC like "
				 "20:90:6f:cf:cf:cf");
			return -EINVAL;
		}
		g->gw_mac_set = true;
	}
	return 0;
}

void
reg_guest_render(json_t *j, const struct sandbox *sb)
{
	char ip[INET_ADDRSTRLEN];

	if (sb->guest.ip) {
		reg_ip_str(sb->guest.ip, ip);
		json_object_set_new(j, "guestIP", json_string(ip));
	}
	if (sb->guest.gw_ip) {
		reg_ip_str(sb->guest.gw_ip, ip);
		json_object_set_new(j, "gatewayIP", json_string(ip));
	}
	if (sb->guest.gw_mac_set)
		json_object_set_new(j, "gatewayMAC", reg_mac_json(sb->guest.gw_mac));
}

int
reg_guest_claim(struct registry *r, const struct sandbox *sb, const struct reg_guest *g,
		char *err, size_t errlen)
{
	char ip[INET_ADDRSTRLEN];
	uint32_t s;

	if (!g->ip)
		return REG_OK;
	if (sb && sb->guest.ip && sb->guest.ip != g->ip)
		return reg_fail(err, errlen, REG_E_CONFLICT, "sandbox %s already has another "
				"guestIP (its sessions are of that address: delete and register it "
				"again)", sb->id);
	/* A scan of the slots, and only for registrations that bring their own address. */
	for (s = 0; s < r->max_sandboxes; s++) {
		const struct sandbox *o = r->by_slot[s];

		if (o && o != sb && o->guest.ip == g->ip) {
			reg_ip_str(g->ip, ip);
			return reg_fail(err, errlen, REG_E_CONFLICT, "guestIP %s is sandbox %s's",
					ip, o->id);
		}
	}
	return REG_OK;
}

bool
reg_guest_apply(struct sandbox *sb, const struct reg_guest *g)
{
	bool changed = false;

	if (g->ip && g->ip != sb->guest.ip) {
		sb->guest.ip = g->ip;
		changed = true;
	}
	if (g->gw_ip && g->gw_ip != sb->guest.gw_ip) {
		sb->guest.gw_ip = g->gw_ip;
		changed = true;
	}
	if (g->gw_mac_set && (!sb->guest.gw_mac_set || memcmp(sb->guest.gw_mac, g->gw_mac, 6))) {
		memcpy(sb->guest.gw_mac, g->gw_mac, 6);
		sb->guest.gw_mac_set = true;
		changed = true;
	}
	return changed;
}
