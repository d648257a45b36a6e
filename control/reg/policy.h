/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Egress policy of a sandbox as the API sees it: {"allowInternetAccess":bool,
 * "allowOut":["cidr",...],"denyOut":["cidr",...]}. Allow list beats deny list beats the
 * default, which is allowInternetAccess (true when absent). A list mixes IPv4 and IPv6 CIDRs;
 * each family applies to destinations of its own.
 */
#ifndef CVS_POLICY_H
#define CVS_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "dp.h"

/* An IPv6 prefix as the registry keeps it: 17 bytes, since every sandbox has room for 128. */
struct reg_cidr6 {
	uint8_t addr[16];	/* host bits clear */
	uint8_t len;
};

struct reg_policy {
	bool set;		/* a policy was given; otherwise everything is allowed */
	bool internet;
	uint16_t nallow;
	uint16_t ndeny;
	struct dp_cidr allow[DP_POLICY_MAX_CIDRS];
	struct dp_cidr deny[DP_POLICY_MAX_CIDRS];
	uint16_t nallow6;
	uint16_t ndeny6;
	struct reg_cidr6 allow6[DP_POLICY_MAX_CIDRS6];
	struct reg_cidr6 deny6[DP_POLICY_MAX_CIDRS6];
};

/* Parse a policy object; on error returns -EINVAL with a readable reason in err. */
int policy_parse(const json_t *j, struct reg_policy *p, char *err, size_t errlen);
json_t *policy_render(const struct reg_policy *p);
/* The data-path form; NULL when no policy is set (allow all). Caller frees. */
struct dp_policy *policy_compile(const struct reg_policy *p);
int cidr_parse(const char *s, struct dp_cidr *c);
/* An IPv6 CIDR ("2001:db8::/32"; no length: /128), host bits cleared. */
int cidr6_parse(const char *s, struct reg_cidr6 *c);

#endif /* CVS_POLICY_H */
