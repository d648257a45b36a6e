/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Egress policy (control/reg/policy.c, dataplane dp_policy_allows*()): lists mixing IPv4 and
 * IPv6 CIDRs parse into their families, bad entries are refused with the reason, a rendered
 * policy parses back to itself, and the compiled IPv6 lists decide as a bit-by-bit reference
 * does for random prefixes and addresses.
 */
#include <arpa/inet.h>
#include <jansson.h>

#include "t.h"
#include "policy.h"

static int
parse(const char *js, struct reg_policy *p, char *err, size_t len)
{
	json_t *j = json_loads(js, 0, NULL);
	int ret = j ? policy_parse(j, p, err, len) : -1;

	json_decref(j);
	return ret;
}

static void
test_parse(void)
{
	struct reg_policy p, q;
	char err[200], *a, *b;
	json_t *r;

	CHECK_EQ(parse("{\"allowInternetAccess\":false,\"allowOut\":[\"10.0.0.0/8\","
		       "\"2001:2:0:2::/64\",\"2001:2::7\"],\"denyOut\":[\"2001:2::/48\","
		       "\"198.18.0.0/15\"]}", &p, err, sizeof(err)), 0);
	CHECK_EQ(p.nallow, 1);
	CHECK_EQ(p.nallow6, 2);
	CHECK_EQ(p.ndeny, 1);
	CHECK_EQ(p.ndeny6, 1);
	CHECK_EQ(p.allow6[1].len, 128);
	CHECK_EQ(p.deny6[0].len, 48);
	/* Host bits are ignored, as for IPv4. */
	CHECK_EQ(parse("{\"denyOut\":[\"2001:2:0:2::1/64\"]}", &q, err, sizeof(err)), 0);
	CHECK_EQ(q.deny6[0].addr[15], 0);
	r = policy_render(&p);
	a = json_dumps(r, JSON_COMPACT);
	CHECK(a && strstr(a, "\"2001:2:0:2::/64\"") && strstr(a, "\"2001:2::7/128\"") &&
	      strstr(a, "\"10.0.0.0/8\""));
	CHECK_EQ(policy_parse(r, &q, err, sizeof(err)), 0);
	json_decref(r);
	r = policy_render(&q);
	b = json_dumps(r, JSON_COMPACT);
	CHECK(a && b && !strcmp(a, b));
	free(a);
	free(b);
	json_decref(r);
	CHECK(parse("{\"allowOut\":[\"2001:2::/129\"]}", &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "\"allowOut\"[0] is not a CIDR") != NULL);
	CHECK(parse("{\"denyOut\":[\"10.0.0.0/8\",\"fe80::1%eth0/64\"]}", &p, err,
		    sizeof(err)) < 0);
	CHECK(strstr(err, "\"denyOut\"[1]") != NULL);
	CHECK(parse("{\"denyOut\":[\":::/64\"]}", &p, err, sizeof(err)) < 0);
	CHECK(parse("{\"denyOut\":[\"2001:2::/\"]}", &p, err, sizeof(err)) < 0);
}

/* One more IPv6 CIDR than a list holds is refused by name; as many as it holds are not. */
static void
test_limits(void)
{
	char js[8192], err[200];
	struct reg_policy p;
	size_t n = 0;
	int i;

	n += (size_t)snprintf(js + n, sizeof(js) - n, "{\"denyOut\":[");
	for (i = 0; i <= DP_POLICY_MAX_CIDRS6; i++)
		n += (size_t)snprintf(js + n, sizeof(js) - n, "%s\"2001:2:%x::/48\"", i ? "," : "",
				      i);
	snprintf(js + n, sizeof(js) - n, "]}");
	CHECK(parse(js, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "more than 64 IPv6 CIDRs") != NULL);
	*strrchr(js, ',') = '\0';
	strcat(js, "]}");
	CHECK_EQ(parse(js, &p, err, sizeof(err)), 0);
	CHECK_EQ(p.ndeny6, DP_POLICY_MAX_CIDRS6);
}

static bool
ref_in(const struct reg_cidr6 *c, const uint8_t a[16])
{
	uint32_t i;

	for (i = 0; i < c->len; i++)
		if ((a[i / 8] ^ c->addr[i / 8]) & (0x80 >> (i % 8)))
			return false;
	return true;
}

static bool
ref_allows(const struct reg_policy *p, const uint8_t a[16])
{
	uint16_t i;

	for (i = 0; i < p->nallow6; i++)
		if (ref_in(&p->allow6[i], a))
			return true;
	for (i = 0; i < p->ndeny6; i++)
		if (ref_in(&p->deny6[i], a))
			return false;
	return p->internet;
}

/* An address near one of the prefixes (its bits with a few flipped), or a random one. */
static void
pick(const struct reg_policy *p, uint8_t a[16])
{
	const struct reg_cidr6 *c = rand() & 1 ? &p->allow6[rand() % p->nallow6] :
						 &p->deny6[rand() % p->ndeny6];
	int i;

	for (i = 0; i < 16; i++)
		a[i] = (uint8_t)rand();
	if (rand() % 4 == 0)
		return;
	memcpy(a, c->addr, 16);
	for (i = rand() % 3; i > 0; i--) {
		int bit = rand() % 128;

		a[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
	}
}

static void
test_compiled(void)
{
	struct reg_policy p;
	struct dp_policy *d;
	uint8_t a[16];
	int round, i, agree = 0, total = 0;

	srand(34);
	for (round = 0; round < 200; round++) {
		memset(&p, 0, sizeof(p));
		p.set = true;
		p.internet = rand() & 1;
		p.nallow6 = (uint16_t)(1 + rand() % 8);
		p.ndeny6 = (uint16_t)(1 + rand() % 8);
		for (i = 0; i < p.nallow6 + p.ndeny6; i++) {
			struct reg_cidr6 *c = i < p.nallow6 ? &p.allow6[i] :
							      &p.deny6[i - p.nallow6];
			uint32_t b;

			c->len = (uint8_t)(rand() % 129);
			for (b = 0; b < 16; b++)
				c->addr[b] = (uint8_t)rand();
			for (b = c->len; b < 128; b++)
				c->addr[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
		}
		d = policy_compile(&p);
		CHECK(d != NULL);
		if (!d)
			return;
		for (i = 0; i < 500; i++) {
			pick(&p, a);
			agree += dp_policy_allows6(d, a) == ref_allows(&p, a);
			total++;
		}
		/* An IPv6 list never decides for an IPv4 destination. */
		CHECK_EQ(dp_policy_allows(d, htonl(0xc6120001)), p.internet);
		free(d);
	}
	CHECK_EQ(agree, total);
	CHECK(dp_policy_allows6(NULL, a));
}

int
main(void)
{
	test_parse();
	test_limits();
	test_compiled();
	return t_done("unit-policy");
}
