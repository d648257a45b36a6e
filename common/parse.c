/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "cvs_common.h"

int
cvs_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull alone would skip blanks and take a sign ("-1" is ULLONG_MAX). */
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int
cvs_parse_ipv4(const char *s, uint32_t *out)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*out = a.s_addr;
	return 0;
}

int
cvs_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6 || strlen(s) != 17)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

int
cvs_parse_range(const char *s, struct cvs_range *r)
{
	char buf[32], *dash;
	uint32_t lo, hi;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (!dash)
		return -EINVAL;
	*dash = '\0';
	if (cvs_parse_u32(buf, 1, 65535, &lo) || cvs_parse_u32(dash + 1, 1, 65535, &hi) ||
	    lo > hi)
		return -EINVAL;
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	return 0;
}

int
cvs_parse_ipv6(const char *s, uint8_t out[16])
{
	struct in6_addr a;

	if (inet_pton(AF_INET6, s, &a) != 1)
		return -EINVAL;
	memcpy(out, &a, 16);
	return 0;
}

const char *
cvs_ipv6_not_unicast(const uint8_t a[16])
{
	struct in6_addr x;

	memcpy(&x, a, 16);
	if (IN6_IS_ADDR_UNSPECIFIED(&x))
		return "unspecified";
	if (IN6_IS_ADDR_LOOPBACK(&x))
		return "loopback";
	if (IN6_IS_ADDR_MULTICAST(&x))
		return "multicast";
	if (IN6_IS_ADDR_LINKLOCAL(&x))
		return "link-local";
	if (IN6_IS_ADDR_SITELOCAL(&x))
		return "site-local (deprecated, RFC 3879)";
	/* Carried in IPv6 but IPv4 addresses: no IPv6 host answers for them. */
	if (IN6_IS_ADDR_V4MAPPED(&x) || IN6_IS_ADDR_V4COMPAT(&x))
		return "IPv4-mapped";
	return NULL;
}

int
cvs_split_prefix(const char *s, char *addr, size_t addrlen, uint32_t lo, uint32_t hi,
		 uint32_t *len)
{
	const char *slash = strchr(s, '/');

	if (!slash || (size_t)(slash - s) >= addrlen || cvs_parse_u32(slash + 1, lo, hi, len))
		return -EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	return 0;
}

int
cvs_parse_prefix6(const char *s, uint8_t out[16], uint32_t *len)
{
	char buf[INET6_ADDRSTRLEN];
	uint32_t l, i;

	if (cvs_split_prefix(s, buf, sizeof(buf), 0, 128, &l) || cvs_parse_ipv6(buf, out))
		return -EINVAL;
	for (i = l; i < 128; i++)
		if (out[i / 8] & (0x80 >> (i % 8)))
			return -EINVAL;
	*len = l;
	return 0;
}
