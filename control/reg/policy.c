/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "config.h"
#include "policy.h"

int
cidr_parse(const char *s, struct dp_cidr *c)
{
	char buf[32], *slash;
	uint32_t len = 32, ip;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (cvs_parse_u32(slash + 1, 0, 32, &len))
			return -EINVAL;
	}
	if (cvs_parse_ipv4(buf, &ip))
		return -EINVAL;
	c->mask = len ? htonl(~0u << (32 - len)) : 0;
	/* Host bits are ignored, as iptables and CubeVS do. */
	c->net = ip & c->mask;
	return 0;
}

static int
policy_list(const json_t *arr, const char *name, struct dp_cidr *out, uint16_t *n, char *err,
	    size_t errlen)
{
	size_t i;

	*n = 0;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > DP_POLICY_MAX_CIDRS) {
		snprintf(err, errlen, "\"%s\" must be an array of at most %d CIDRs", name,
			 DP_POLICY_MAX_CIDRS);
		return -EINVAL;
	}
	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *v = json_array_get(arr, i);

		if (!json_is_string(v) || cidr_parse(json_string_value(v), &out[*n])) {
			snprintf(err, errlen, "\"%s\"[%zu] is not an IPv4 CIDR like 10.0.0.0/8",
				 name, i);
			return -EINVAL;
		}
		(*n)++;
	}
	return 0;
}

int
policy_parse(const json_t *j, struct reg_policy *p, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(j)) {
		snprintf(err, errlen, "policy must be a JSON object");
		return -EINVAL;
	}
	json_object_foreach((json_t *)j, key, v) {
		if (strcmp(key, "allowInternetAccess") && strcmp(key, "allowOut") &&
		    strcmp(key, "denyOut")) {
			snprintf(err, errlen, "unknown policy field \"%s\"", key);
			return -EINVAL;
		}
	}
	v = json_object_get(j, "allowInternetAccess");
	if (v && !json_is_boolean(v)) {
		snprintf(err, errlen, "\"allowInternetAccess\" must be true or false");
		return -EINVAL;
	}
	p->internet = v ? json_is_true(v) : true;
	if (policy_list(json_object_get(j, "allowOut"), "allowOut", p->allow, &p->nallow, err,
			errlen) ||
	    policy_list(json_object_get(j, "denyOut"), "denyOut", p->deny, &p->ndeny, err, errlen))
		return -EINVAL;
	p->set = true;
	return 0;
}

static json_t *
policy_render_list(const struct dp_cidr *c, uint16_t n)
{
	json_t *arr = json_array();
	char ip[INET_ADDRSTRLEN], buf[INET_ADDRSTRLEN + 4];
	uint16_t i;

	for (i = 0; i < n; i++) {
		inet_ntop(AF_INET, &c[i].net, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s/%d", ip, __builtin_popcount(c[i].mask));
		json_array_append_new(arr, json_string(buf));
	}
	return arr;
}

json_t *
policy_render(const struct reg_policy *p)
{
	return json_pack("{s:b,s:o,s:o}", "allowInternetAccess", p->set ? p->internet : 1,
			 "allowOut", policy_render_list(p->allow, p->set ? p->nallow : 0),
			 "denyOut", policy_render_list(p->deny, p->set ? p->ndeny : 0));
}

struct dp_policy *
policy_compile(const struct reg_policy *p)
{
	struct dp_policy *d;

	if (!p->set)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->internet = p->internet;
	d->nallow = p->nallow;
	d->ndeny = p->ndeny;
	memcpy(d->allow, p->allow, sizeof(p->allow[0]) * p->nallow);
	memcpy(d->deny, p->deny, sizeof(p->deny[0]) * p->ndeny);
	return d;
}
