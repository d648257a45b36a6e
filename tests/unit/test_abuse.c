/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile API requests at the handler level (the route table, no HTTP): every answer is a
 * status with a JSON error, and a refused request leaves the registry as it was. Regression
 * for the empty error body on invalid UTF-8 (found by fuzz_api). Also the table itself: 405
 * with Allow, 404, path arguments, refused registrations.
 */
#include <errno.h>
#include <arpa/inet.h>

#include "t.h"
#include "fake_dp.h"
#include "api.h"
#include "reg_api.h"
#include "registry.h"

static struct fake_dp fdp = { .prefix = "sb" };
static struct api_routes routes;

static char *
state(struct registry *r)
{
	json_t *j = reg_list(r);
	char *s;

	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	return s;
}

/* Route one request; returns the status, checks the error body of a refusal. */
static int
route_allow(const char *m, const char *path, const char *body, char *allow)
{
	struct api_reply rep;

	api_dispatch(&routes, m, path, body, body ? strlen(body) : 0, NULL, &rep);
	if (rep.status >= 400)
		CHECK(json_is_string(json_object_get(rep.json, "error")));
	CHECK((rep.status == 405) == (rep.allow[0] != '\0'));
	if (allow)
		strcpy(allow, rep.allow);
	api_reply_free(&rep);
	return rep.status;
}

static int
route(struct registry *r, const char *m, const char *path, const char *body)
{
	return route_allow(m, path, body, NULL);
}

/* GET path: the value of 'key' in the 200 answer, as compact JSON ("" when not 200). */
static char *
get_field(const char *path, const char *key)
{
	struct api_reply rep;
	char *v = NULL;

	api_dispatch(&routes, "GET", path, NULL, 0, NULL, &rep);
	if (rep.status == 200)
		v = json_dumps(json_object_get(rep.json, key), JSON_COMPACT | JSON_ENCODE_ANY);
	api_reply_free(&rep);
	return v ? v : strdup("");
}

static void
check_field(const char *path, const char *key, const char *want)
{
	char *v = get_field(path, key);

	if (strcmp(v, want))
		fprintf(stderr, "GET %s: %s is %s, want %s\n", path, key, v, want);
	CHECK(!strcmp(v, want));
	free(v);
}

static const char *seen[API_ARGS_MAX];

static void
echo(void *ctx, const struct api_request *rq, struct api_reply *rep)
{
	int i;

	for (i = 0; i < API_ARGS_MAX; i++)
		seen[i] = rq->arg[i];
	rep->status = 299;
}

/* The table on its own: arguments, 405 with every method of the path, 404, bad patterns. */
static void
test_table(void)
{
	struct api_routes t;
	struct api_reply rep;

	api_routes_init(&t);
	CHECK_EQ(api_register(&t, "GET", "/a/{x}/b/{y}", 0, echo, NULL), 0);
	CHECK_EQ(api_register(&t, "POST", "/a/{x}/b/{y}", 0, echo, NULL), 0);
	CHECK_EQ(api_register(&t, "POST", "/a/{x}/b/{y}", 0, echo, NULL), -EEXIST);
	CHECK_EQ(api_register(&t, "PUT", "/exact", API_EXACT, echo, NULL), 0);
	CHECK_EQ(api_register(&t, "PUT", "/exact/{x}", API_EXACT, echo, NULL), -EINVAL);
	CHECK_EQ(api_register(&t, "GET", "no-slash", 0, echo, NULL), -EINVAL);
	CHECK_EQ(api_register(&t, "GET", "/", 0, echo, NULL), -EINVAL);
	CHECK_EQ(api_register(&t, "GET", "/{a}/{b}/{c}/{d}/{e}", 0, echo, NULL), -EINVAL);
	api_dispatch(&t, "GET", "//a/1//b/2/", NULL, 0, NULL, &rep);
	CHECK_EQ(rep.status, 299);
	CHECK(seen[0] && !strcmp(seen[0], "1") && seen[1] && !strcmp(seen[1], "2"));
	api_reply_free(&rep);
	api_dispatch(&t, "DELETE", "/a/1/b/2", NULL, 0, NULL, &rep);
	CHECK_EQ(rep.status, 405);
	CHECK(!strcmp(rep.allow, "GET, POST"));
	api_reply_free(&rep);
	api_dispatch(&t, "PUT", "/exact", NULL, 0, NULL, &rep);
	CHECK_EQ(rep.status, 299);
	api_reply_free(&rep);
	api_dispatch(&t, "PUT", "/exact/", NULL, 0, NULL, &rep);
	CHECK_EQ(rep.status, 404);
	api_reply_free(&rep);
	api_dispatch(&t, "GET", "/a/1/b", NULL, 0, NULL, &rep);
	CHECK_EQ(rep.status, 404);
	CHECK(!strcmp(json_string_value(json_object_get(rep.json, "error")),
		      "no route for /a/1/b"));
	api_reply_free(&rep);
}

int
main(void)
{
	struct registry r;
	char *before, *after, big[4200], deep[20010], allow[64];
	int st;

	test_table();
	CHECK_EQ(reg_init(&r, 8, 20000, 20009, htonl(0xc0a80000), 24, htonl(0xc6120001), &fake_dp_ops,
			  &fdp), 0);
	api_routes_init(&routes);
	CHECK_EQ(reg_api_register(&routes, &r), 0);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s1", "{\"iface\":\"sb1\",\"exposedPorts\":[80]}"),
		 201);
	before = state(&r);

	/* The methods a route serves, in the order they were registered. */
	CHECK_EQ(route_allow("POST", "/sandboxes/s1", NULL, allow), 405);
	CHECK(!strcmp(allow, "GET, PUT, DELETE"));
	CHECK_EQ(route_allow("DELETE", "/sandboxes/s1/policy", NULL, allow), 405);
	CHECK(!strcmp(allow, "GET, PUT"));
	CHECK_EQ(route_allow("PUT", "/sandboxes", NULL, allow), 405);
	CHECK(!strcmp(allow, "GET"));
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
	/* The registry's codes as HTTP statuses. */
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s2", "{\"iface\":\"sb1\"}"), 409);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s2", "{\"iface\":\"nope1\"}"), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s3", "{\"iface\":\"sb3\",\"exposedPorts\":"
		       "[1,2,3,4,5,6,7,8,9,10]}"), 503);
	CHECK_EQ(route(&r, "GET", "/sandboxes/s3", NULL), 404);
	CHECK_EQ(route(&r, "GET", "/sandboxes/s1/exposed-ports/81", NULL), 404);
	CHECK_EQ(route(&r, "GET", "/sandboxes/s1/exposed-ports/80", NULL), 200);
	/* vhost-user ports: exactly one kind of port, a usable path, a known mode. */
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"iface\":\"sb2\",\"vhostUser\":"
		       "{\"socket\":\"/run/v1.sock\"}}"), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"exposedPorts\":[80]}"), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"vhostUser\":{\"socket\":\"v1.sock\"}}"),
		 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"vhostUser\":{\"socket\":\"/v1\","
		       "\"mode\":\"both\"}}"), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"vhostUser\":{\"socket\":\"/v1\","
		       "\"extra\":1}}"), 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"vhostUser\":{\"socket\":\"/v\\u0000x\"}}"),
		 400);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"vhostUser\":\"/v1\"}"), 400);
	memset(big, 'a', 200);
	big[0] = '/';
	snprintf(big + 200, 100, "\"}}");
	{
		char body[400];

		snprintf(body, sizeof(body), "{\"vhostUser\":{\"socket\":\"%s", big);
		CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", body), 400);
	}
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"vhostUser\":{\"socket\":\"/run/v1.sock\","
		       "\"mode\":\"client\"},\"exposedPorts\":[80]}"), 201);
	check_field("/sandboxes/v1", "vhostUser",
		    "{\"socket\":\"/run/v1.sock\",\"mode\":\"client\",\"connected\":false}");
	/* A VMM connected: GET says so, with the features its device negotiated. */
	fdp.vhost_features = 0x100008000ULL;
	check_field("/sandboxes/v1", "vhostUser", "{\"socket\":\"/run/v1.sock\",\"mode\":"
		    "\"client\",\"connected\":true,\"features\":\"0x100008000\"}");
	fdp.vhost_features = 0;
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v2", "{\"vhostUser\":{\"socket\":\"/run/v1.sock\"}}"),
		 409);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"vhostUser\":{\"socket\":\"/run/v1.sock\"}}"),
		 409);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"iface\":\"sb2\"}"), 409);
	CHECK_EQ(route(&r, "PUT", "/sandboxes/v1", "{\"vhostUser\":{\"socket\":\"/run/v1.sock\","
		       "\"mode\":\"client\"},\"exposedPorts\":[80]}"), 200);
	CHECK_EQ(route(&r, "DELETE", "/sandboxes/v1", NULL), 204);
	/* The answers carry the registration. */
	check_field("/sandboxes/s1", "sandboxID", "\"s1\"");
	check_field("//sandboxes//s1/", "iface", "\"sb1\"");
	check_field("/sandboxes/s1/exposed-ports/80", "hostPort", "20000");
	check_field("/sandboxes/s1/exposed-ports/80", "endpoint", "\"198.18.0.1:20000\"");
	check_field("/sandboxes/s1/policy", "allowInternetAccess", "true");
	CHECK_EQ(route(&r, "PUT", "/sandboxes/s1/policy", "{\"allowInternetAccess\":false}"),
		 200);
	check_field("/sandboxes/s1/policy", "allowInternetAccess", "false");
	{
		char *list = get_field("/sandboxes", "sandboxes");

		CHECK(strstr(list, "\"sandboxID\":\"s1\"") && strstr(list, "\"allowOut\":[]"));
		free(list);
	}
	CHECK_EQ(route(&r, "DELETE", "/sandboxes/s1", NULL), 204);
	CHECK_EQ(route(&r, "DELETE", "/sandboxes/s1", NULL), 404);
	reg_clear(&r);
	reg_fini(&r);
	return t_done("test_abuse");
}
