/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile API requests at the handler level (api_route, no HTTP): every answer is a status
 * with a JSON error, and a refused request leaves the registry as it was. Regression for the
 * empty error body on invalid UTF-8 (found by fuzz_api).
 */
#include <errno.h>
#include <arpa/inet.h>

#include "t.h"
#include "fake_dp.h"
#include "api.h"
#include "registry.h"

static struct fake_dp fdp = { .prefix = "sb" };

static char *
state(struct registry *r)
{
	json_t *j;
	char *s;

	reg_list(r, &j);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	return s;
}

/* Route one request; returns the status, checks the error body of a refusal. */
static int
route(struct registry *r, const char *m, const char *path, const char *body)
{
	const char *allow;
	json_t *out;
	int st = api_route(r, NULL, NULL, m, path, body, body ? strlen(body) : 0, &out, &allow);

	if (st >= 400)
		CHECK(json_is_string(json_object_get(out, "error")));
	json_decref(out);
	return st;
}

int
main(void)
{
	struct registry r;
	char *before, *after, big[4200], deep[20010];
	int st;

	CHECK_EQ(reg_init(&r, 8, 20000, 20009, htonl(0xc0a80000), 24, htonl(0xc6120001), &fake_dp_ops,
			  &fdp), 0);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s1", "{\"iface\":\"sb1\",\"exposedPorts\":[80]}"),
		 201);
	before = state(&r);

	/* Invalid UTF-8 quoted in the error message: the body must still be there. */
	CHECK_EQ(route(&r, "GET", "/\xff\x01", NULL), 404);
	CHECK_EQ(route(&r, "GET", "/sandboxes/\xc3\x28", NULL), 404);
	CHECK_EQ(route(&r, "GET", "/sandboxes/\xc3\x28/exposed-ports/x\xff", NULL), 400);
	/* A message cut at 512 bytes in the middle of a character. */
	memset(big, 0, sizeof(big));
	strcpy(big, "/sandboxes/");
	for (st = 11; st < 700; st += 2) {
		big[st] = (char)0xc3;
		big[st + 1] = (char)0xa9;
	}
	CHECK_EQ(route(&r, "GET", big, NULL), 404);
	/* 4 KiB id, dot ids, encoded leftovers. */
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "/sandboxes/", 11);
	CHECK(route(&r, "PUT", big, "{\"iface\":\"sb2\"}") / 100 == 4);
	CHECK(route(&r, "DELETE", big, NULL) / 100 == 4);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/..", "{\"iface\":\"sb2\"}"), 400);
	CHECK_EQ(route(&r, "DELETE", "/sandboxes/..", NULL), 404);
	CHECK_EQ(route(&r, "DELETE", "/sandboxes/s1%00x", NULL), 404);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s1%2Fpolicy", "{}"), 400);
	/* Bodies: deep nesting, invalid UTF-8, NUL in a string, wrong types. */
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s2", deep), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s2", "{\"iface\":\"\xff\"}"), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s2", "{\"iface\":\"sb2\\u0000x\"}"), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s1/policy", "{\"denyOut\":\"10.0.0.0/8\"}"), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s1", "{\"iface\":\"sb1\",\"exposedPorts\":[0]}"),
		 400);
	after = state(&r);
	CHECK(!strcmp(before, after));
	free(before);
	free(after);
	reg_clear(&r);
	reg_fini(&r);
	return t_done("test_abuse");
}
