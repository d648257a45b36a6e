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

int
cidr6_parse(const char *s, struct reg_cidr6 *c)
{
	char buf[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	uint32_t len = 128, i;

	if (slash ? cvs_split_prefix(s, buf, sizeof(buf), 0, 128, &len) :
		    strlen(s) >= sizeof(buf) ? -EINVAL : (strcpy(buf, s), 0))
		return -EINVAL;
	if (cvs_parse_ipv6(buf, c->addr))
		return -EINVAL;
	/* Host bits are ignored, as for IPv4. */
	for (i = len; i < 128; i++)
		c->addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
	c->len = (uint8_t)len;
	return 0;
}

/* Where one list's entries go: IPv4 and IPv6 each into an array of their own. */
struct policy_dst {
	struct dp_cidr *v4;
	uint16_t *n4;
	struct reg_cidr6 *v6;
	uint16_t *n6;
};

static int
policy_list(const json_t *arr, const char *name, const struct policy_dst *d, char *err,
	    size_t errlen)
{
	const char *str;
	size_t i;

	*d->n4 = *d->n6 = 0;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > DP_POLICY_MAX_CIDRS) {
		snprintf(err, errlen, "\"%s\" must be an array of at most %d CIDRs", name,
			 DP_POLICY_MAX_CIDRS);
		return -EINVAL;
	}
	for (i = 0; i < json_array_size(arr); i++) {
		str = json_string_value(json_array_get(arr, i));
		if (str && strchr(str, ':')) {
			if (*d->n6 == DP_POLICY_MAX_CIDRS6) {
				snprintf(err, errlen, "\"%s\" holds more than %d IPv6 CIDRs", name,
					 DP_POLICY_MAX_CIDRS6);
				return -EINVAL;
			}
			if (!cidr6_parse(str, &d->v6[*d->n6])) {
				(*d->n6)++;
				continue;
			}
		} else if (str && !cidr_parse(str, &d->v4[*d->n4])) {
			(*d->n4)++;
			continue;
		}
		snprintf(err, errlen, "\"%s\"[%zu] is not a CIDR like 10.0.0.0/8 or 2001:db8::/32",
			 name, i);
		return -EINVAL;
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
	if (policy_list(json_object_get(j, "allowOut"), "allowOut",
			&(struct policy_dst){ p->allow, &p->nallow, p->allow6, &p->nallow6 },
			err, errlen) ||
	    policy_list(json_object_get(j, "denyOut"), "denyOut",
			&(struct policy_dst){ p->deny, &p->ndeny, p->deny6, &p->ndeny6 },
			err, errlen))
		return -EINVAL;
	p->set = true;
	return 0;
}

/* IPv4 entries first, then IPv6: the order within a list never matters. */
static json_t *
policy_render_list(const struct dp_cidr *c, uint16_t n, const struct reg_cidr6 *c6,
		   uint16_t n6)
{
	json_t *arr = json_array();
	char ip[INET6_ADDRSTRLEN], buf[INET6_ADDRSTRLEN + 5];
	uint16_t i;

	for (i = 0; i < n; i++) {
		inet_ntop(AF_INET, &c[i].net, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s/%d", ip, __builtin_popcount(c[i].mask));
		json_array_append_new(arr, json_string(buf));
	}
	for (i = 0; i < n6; i++) {
		inet_ntop(AF_INET6, c6[i].addr, ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s/%u", ip, c6[i].len);
		json_array_append_new(arr, json_string(buf));
	}
	return arr;
}

json_t *
policy_render(const struct reg_policy *p)
{
	return json_pack("{s:b,s:o,s:o}", "allowInternetAccess", p->set ? p->internet : 1,
			 "allowOut", p->set ? policy_render_list(p->allow, p->nallow, p->allow6,
								 p->nallow6) : json_array(),
			 "denyOut", p->set ? policy_render_list(p->deny, p->ndeny, p->deny6,
								p->ndeny6) : json_array());
}

static void
policy_compile6(struct dp_cidr6 *d, const struct reg_cidr6 *c)
{
	uint8_t mask[16] = { 0 };
	uint32_t i;

	for (i = 0; i < c->len; i++)
		mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
	memcpy(d->net, c->addr, 16);
	memcpy(d->mask, mask, 16);
}

struct dp_policy *
policy_compile(const struct reg_policy *p)
{
	struct dp_policy *d;
	struct dp_cidr6 *c6;
	uint16_t i;

	if (!p->set)
		return NULL;
	/* One allocation, freed as one: the IPv6 lists right behind the struct. */
	d = calloc(1, sizeof(*d) + sizeof(*c6) * (p->nallow6 + p->ndeny6));
	if (!d)
		return NULL;
	d->internet = p->internet;
	d->nallow = p->nallow;
	d->ndeny = p->ndeny;
	memcpy(d->allow, p->allow, sizeof(p->allow[0]) * p->nallow);
	memcpy(d->deny, p->deny, sizeof(p->deny[0]) * p->ndeny);
	c6 = (struct dp_cidr6 *)(d + 1);
	for (i = 0; i < p->nallow6; i++)
		policy_compile6(&c6[i], &p->allow6[i]);
	for (i = 0; i < p->ndeny6; i++)
		policy_compile6(&c6[p->nallow6 + i], &p->deny6[i]);
	d->nallow6 = p->nallow6;
	d->ndeny6 = p->ndeny6;
	d->cidr6 = c6;
	return d;
}
