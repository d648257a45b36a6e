/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry's formats: sandbox ids, addresses, MACs and times as the API and the state
 * file spell them, and the one way to refuse with a message. Every other file of the registry
 * uses them and they use none of those files, so the request side (registry.c) and the files
 * that serve it (reg_state.c, reg_guest.c, reg_ports.c) need not call each other for them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "cvs_common.h"
#include "registry.h"
#include "registry_int.h"

/* Fill err and return the status: the registry's one way to refuse. */
int
reg_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return status;
}

bool
reg_id_valid(const char *id)
{
	size_t n = strlen(id), i;

	if (n == 0 || n > CVS_ID_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	for (i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

int
reg_id_check(const char *id, char *err, size_t errlen)
{
	if (reg_id_valid(id))
		return REG_OK;
	return reg_fail(err, errlen, REG_E_INVALID,
			"invalid sandbox id: 1-%d characters of A-Z a-z 0-9 . _ -", CVS_ID_MAX);
}

json_t *
reg_vhost_json(const struct sandbox *sb)
{
	return json_pack("{s:s,s:s}", "socket", sb->vhost, "mode",
			 sb->vhost_client ? "client" : "server");
}

void
reg_ip_str(uint32_t ip, char *buf)
{
	inet_ntop(AF_INET, &ip, buf, INET_ADDRSTRLEN);
}

json_t *
reg_mac_json(const uint8_t mac[6])
{
	char s[18];

	snprintf(s, sizeof(s), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
	return json_string(s);
}

int
reg_mac_parse(const json_t *v, uint8_t mac[6])
{
	/* A guest's own address: unicast and not all zero, or frames to it never arrive. */
	if (!json_is_string(v) || cvs_parse_mac(json_string_value(v), mac) || (mac[0] & 1) ||
	    !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return -EINVAL;
	return 0;
}

json_t *
reg_time_json(int64_t t)
{
	struct tm tm;
	time_t tt = (time_t)t;
	char buf[32];

	gmtime_r(&tt, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}
