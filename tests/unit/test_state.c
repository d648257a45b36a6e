/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state file and the registry's restore, without EAL or root: atomic save and load, corrupt
 * files refused and left alone, the lock, restore with the same host ports, conflicting records,
 * sandboxes whose interface is missing, policies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include "t.h"
#include "fake_dp.h"
#include "reg_api.h"
#include "registry.h"
#include "state.h"


/* Interfaces tap0 .. tap9 exist. */
static struct fake_dp fdp = { .prefix = "tap" };

static void
reg_new(struct registry *r)
{
	uint32_t net, node;

	inet_pton(AF_INET, "192.168.0.0", &net);
	inet_pton(AF_INET, "198.18.0.1", &node);
	CHECK_EQ(reg_init(r, 64, 20000, 20099, net, 18, node, &fake_dp_ops, &fdp), 0);
}

static int
put(struct registry *r, const char *id, const char *body)
{
	struct reg_req q;
	json_t *out = NULL;
	char err[512];
	int st;

	if (reg_req_parse(r, body, strlen(body), &q, err, sizeof(err)))
		return REG_E_INVALID;
	st = reg_put(r, id, &q, &out, err, sizeof(err));
	json_decref(out);
	return st;
}

static char *
slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void
spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

/*
 * The state file at path, restored into b (fresh, configured by the caller): b then lists
 * exactly what a lists. Returns how many sandboxes are still unattached.
 */
static uint32_t
restored_equal(struct registry *a, struct registry *b, const char *path)
{
	json_t *arr = NULL, *la = reg_list(a), *lb;
	char err[512];
	uint32_t left;

	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), 0);
	CHECK_EQ(reg_restore(b, arr, err, sizeof(err)), 0);
	json_decref(arr);
	left = reg_attach_pending(b);
	lb = reg_list(b);
	CHECK(json_equal(la, lb));
	json_decref(la);
	json_decref(lb);
	return left;
}

static void
test_file(const char *dir)
{
	char path[256], lock[300], err[512], before[4096];
	json_t *arr = NULL;
	int fd, fd2;

	snprintf(path, sizeof(path), "%s/state.json", dir);
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), 0);
	CHECK(json_is_array(arr) && json_array_size(arr) == 0);
	json_decref(arr);

	arr = json_pack("[{s:s}]", "sandboxID", "x");
	CHECK_EQ(state_save(path, arr, NULL, err, sizeof(err)), 0);
	json_decref(arr);
	CHECK(access(path, F_OK) == 0);
	snprintf(lock, sizeof(lock), "%s.tmp", path);
	CHECK(access(lock, F_OK) != 0);
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), 0);
	CHECK_EQ(json_array_size(arr), 1);
	json_decref(arr);

	/* Corrupt, wrong version, foreign, unknown field: refused, file untouched. */
	spit(path, "{\"format\":\"cubevs-fp-state\",\"version\":1,\"sandboxes\":[");
	snprintf(before, sizeof(before), "%s", slurp(path));
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "corrupt") && strstr(err, path));
	CHECK(!strcmp(slurp(path), before));
	spit(path, "");
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), -EINVAL);
	spit(path, "{\"format\":\"cubevs-fp-state\",\"version\":2,\"sandboxes\":[]}");
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "version 2") != NULL);
	spit(path, "{\"sandboxes\":[]}");
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), -EINVAL);
	spit(path, "{\"format\":\"cubevs-fp-state\",\"version\":1,\"sandboxes\":[],\"x\":1}");
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown field") != NULL);

	/* A file a newer, self-recording release wrote: the refusal names it and the way back. */
	spit(path, "{\"format\":\"cubevs-fp-state\",\"version\":1,\"sandboxes\":[],"
	     "\"writtenBy\":\"0.9.0 (commit abc)\",\"newThing\":1}");
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown field \"newThing\"") != NULL);
	CHECK(strstr(err, "written by cubevs-fp 0.9.0 (commit abc)") != NULL);
	CHECK(strstr(err, "--rollback-to") != NULL);
	spit(path, "{\"format\":\"cubevs-fp-state\",\"version\":3,\"sandboxes\":[],"
	     "\"writtenBy\":\"0.9.0\"}");
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "version 3") && strstr(err, "written by cubevs-fp 0.9.0"));
	/* This release records itself with the journal's seq, and only then (0.1.0 reads it). */
	state_set_release("0.2.0 (commit test)");
	arr = json_array();
	CHECK_EQ(state_save_seq(path, arr, NULL, 7, NULL, err, sizeof(err)), 0);
	CHECK(strstr(slurp(path), "\"writtenBy\": \"0.2.0 (commit test)\"") != NULL);
	json_decref(arr);
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), 0);
	CHECK_EQ(state_save(path, arr, NULL, err, sizeof(err)), 0);
	json_decref(arr);
	CHECK(strstr(slurp(path), "writtenBy") == NULL && strstr(slurp(path), "journalSeq") == NULL);
	state_set_release("");

	/* One owner at a time, even within a process (flock is per open file). */
	fd = state_lock(path, err, sizeof(err));
	CHECK(fd >= 0);
	fd2 = state_lock(path, err, sizeof(err));
	CHECK_EQ(fd2, -EBUSY);
	CHECK(strstr(err, "in use") != NULL);
	close(fd);
	fd2 = state_lock(path, err, sizeof(err));
	CHECK(fd2 >= 0);
	close(fd2);

	/* A directory that does not exist: a message that tells what to do. */
	snprintf(path, sizeof(path), "%s/missing/state.json", dir);
	CHECK(state_lock(path, err, sizeof(err)) < 0);
	CHECK(strstr(err, "create the directory") != NULL);
	arr = json_array();
	CHECK(state_save(path, arr, NULL, err, sizeof(err)) < 0);
	json_decref(arr);
}

/*
 * A restored sandbox keeps its slot (the zone of the sessions a restarted node adopts), even
 * when an earlier slot was freed; a record without a slot (an older file) takes a free one.
 */
static void
test_slots(void)
{
	struct registry a, b;
	char err[512];
	json_t *arr;

	reg_new(&a);
	CHECK_EQ(put(&a, "s1", "{\"iface\":\"tap1\",\"exposedPorts\":[80]}"), REG_CREATED);
	CHECK_EQ(put(&a, "s2", "{\"iface\":\"tap2\",\"exposedPorts\":[80]}"), REG_CREATED);
	CHECK_EQ(put(&a, "s3", "{\"iface\":\"tap3\",\"exposedPorts\":[80]}"), REG_CREATED);
	CHECK_EQ(reg_delete(&a, "s2", err, sizeof(err)), 0);
	arr = reg_state(&a);
	reg_new(&b);
	CHECK_EQ(reg_restore(&b, arr, err, sizeof(err)), 0);
	CHECK(reg_zone_of(&a, "s3") != 0);
	CHECK_EQ(reg_zone_of(&b, "s3"), reg_zone_of(&a, "s3"));
	CHECK_EQ(reg_zone_of(&b, "s1"), reg_zone_of(&a, "s1"));
	json_decref(arr);
	reg_clear(&b);
	reg_fini(&b);
	reg_new(&b);
	arr = json_loads("[{\"sandboxID\":\"old\",\"iface\":\"tap1\",\"sandboxIP\":"
			 "\"192.168.0.9\",\"exposedPorts\":[]}]", 0, NULL);
	CHECK_EQ(reg_restore(&b, arr, err, sizeof(err)), 0);
	CHECK(reg_zone_of(&b, "old") != 0);
	json_decref(arr);
	reg_clear(&b);
	reg_fini(&b);
	reg_clear(&a);
	reg_fini(&a);
}

static void
test_restore(const char *dir)
{
	struct registry a, b;
	char path[256], err[512];
	json_t *arr, *bad;
	int i;

	snprintf(path, sizeof(path), "%s/reg.json", dir);
	reg_new(&a);
	CHECK_EQ(put(&a, "s1", "{\"iface\":\"tap1\",\"exposedPorts\":[80,443]}"), REG_CREATED);
	CHECK_EQ(put(&a, "s2", "{\"iface\":\"tap2\",\"exposedPorts\":[8080],"
		     "\"sandboxIP\":\"192.168.0.77\"}"), REG_CREATED);
	CHECK_EQ(put(&a, "s3", "{\"iface\":\"tap3\",\"exposedPorts\":[22],\"policy\":"
		     "{\"allowInternetAccess\":false,\"allowOut\":[\"10.0.0.0/8\"]}}"),
		 REG_CREATED);
	CHECK_EQ(put(&a, "v1", "{\"vhostUser\":{\"socket\":\"/run/v1.sock\"},"
		     "\"exposedPorts\":[8081]}"), REG_CREATED);
	CHECK_EQ(put(&a, "v2", "{\"vhostUser\":{\"socket\":\"/run/v2.sock\",\"mode\":"
		     "\"client\"}}"), REG_CREATED);
	/* Churn so restored host ports are not simply the first ones. */
	CHECK_EQ(put(&a, "s1", "{\"iface\":\"tap1\",\"exposedPorts\":[443,9000]}"), REG_OK);
	arr = reg_state(&a);
	CHECK_EQ(state_save(path, arr, NULL, err, sizeof(err)), 0);
	json_decref(arr);
	reg_new(&b);
	CHECK_EQ(restored_equal(&a, &b, path), 0);
	/* The restored host ports are taken: a new registration gets another one. */
	CHECK_EQ(put(&b, "s4", "{\"iface\":\"tap4\",\"exposedPorts\":[1]}"), REG_CREATED);
	{
		json_t *o = NULL;
		int hp;

		reg_exposed(&b, "s4", 1, &o, err, sizeof(err));
		hp = (int)json_integer_value(json_object_get(o, "hostPort"));
		json_decref(o);
		reg_exposed(&b, "s1", 443, &o, err, sizeof(err));
		CHECK(hp != json_integer_value(json_object_get(o, "hostPort")));
		json_decref(o);
	}
	{
		json_t *o = NULL;

		CHECK_EQ(reg_policy_get(&b, "s3", &o, err, sizeof(err)), REG_OK);
		CHECK(json_is_false(json_object_get(o, "allowInternetAccess")));
		json_decref(o);
	}
	reg_clear(&b);
	reg_fini(&b);
	reg_clear(&a);
	reg_fini(&a);

	/* Records that must fail the whole restore. */
	const char *bads[] = {
		"[{\"sandboxID\":\"a\",\"iface\":\"tap1\",\"sandboxIP\":\"192.168.0.2\","
		"\"exposedPorts\":[{\"containerPort\":1,\"hostPort\":20000}]},"
		"{\"sandboxID\":\"b\",\"iface\":\"tap2\",\"sandboxIP\":\"192.168.0.3\","
		"\"exposedPorts\":[{\"containerPort\":1,\"hostPort\":20000}]}]",
		"[{\"sandboxID\":\"a\",\"iface\":\"tap1\",\"sandboxIP\":\"192.168.0.2\","
		"\"exposedPorts\":[{\"containerPort\":1,\"hostPort\":30000}]}]",
		"[{\"sandboxID\":\"a\",\"iface\":\"tap1\",\"sandboxIP\":\"10.0.0.2\","
		"\"exposedPorts\":[]}]",
		"[{\"sandboxID\":\"a\",\"iface\":\"tap1\",\"sandboxIP\":\"192.168.0.2\","
		"\"exposedPorts\":[]},{\"sandboxID\":\"a\",\"iface\":\"tap2\","
		"\"sandboxIP\":\"192.168.0.3\",\"exposedPorts\":[]}]",
		"[{\"sandboxID\":\"a\",\"iface\":\"tap1\",\"sandboxIP\":\"192.168.0.2\","
		"\"exposedPorts\":[],\"extra\":1}]",
		"[{\"sandboxID\":\"a b\",\"iface\":\"tap1\",\"sandboxIP\":\"192.168.0.2\","
		"\"exposedPorts\":[]}]",
		"[{\"sandboxID\":\"a\",\"iface\":\"tap1\",\"sandboxIP\":\"192.168.0.2\","
		"\"exposedPorts\":[],\"policy\":{\"denyOut\":[\"x\"]}}]",
		"[{\"sandboxID\":\"a\",\"iface\":\"tap1\",\"vhostUser\":{\"socket\":\"/v\","
		"\"mode\":\"server\"},\"sandboxIP\":\"192.168.0.2\",\"exposedPorts\":[]}]",
		"[{\"sandboxID\":\"a\",\"vhostUser\":{\"socket\":\"/v\",\"mode\":\"both\"},"
		"\"sandboxIP\":\"192.168.0.2\",\"exposedPorts\":[]}]",
		"[{\"sandboxID\":\"a\",\"vhostUser\":{\"socket\":\"/v\",\"mode\":\"server\"},"
		"\"sandboxIP\":\"192.168.0.2\",\"exposedPorts\":[]},{\"sandboxID\":\"b\","
		"\"vhostUser\":{\"socket\":\"/v\",\"mode\":\"client\"},"
		"\"sandboxIP\":\"192.168.0.3\",\"exposedPorts\":[]}]",
		"[{\"sandboxID\":\"a\",\"sandboxIP\":\"192.168.0.2\",\"exposedPorts\":[]}]",
		"[7]",
	};
	for (i = 0; i < (int)(sizeof(bads) / sizeof(bads[0])); i++) {
		uint32_t total, un;

		reg_new(&b);
		bad = json_loads(bads[i], 0, NULL);
		CHECK(bad != NULL);
		err[0] = '\0';
		CHECK_EQ(reg_restore(&b, bad, err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "record") != NULL);
		json_decref(bad);
		/* What was restored before the bad record is released with the registry. */
		reg_counts(&b, &total, &un);
		CHECK_EQ(total, un);
		reg_clear(&b);
		CHECK_EQ(hostports_used(&b.hostports), 0);
		CHECK_EQ(b.ips.used, 0);
		reg_fini(&b);
	}

	/* A missing interface: kept, unattached, with the reason; attached once it exists. */
	reg_new(&b);
	bad = json_loads("[{\"sandboxID\":\"g\",\"iface\":\"gone0\",\"sandboxIP\":"
			 "\"192.168.0.9\",\"exposedPorts\":[{\"containerPort\":80,"
			 "\"hostPort\":20050}]}]", 0, NULL);
	CHECK_EQ(reg_restore(&b, bad, err, sizeof(err)), 0);
	json_decref(bad);
	CHECK_EQ(reg_attach_pending(&b), 1);
	{
		json_t *o = NULL;

		CHECK_EQ(reg_get(&b, "g", &o, err, sizeof(err)), REG_OK);
		CHECK(json_is_false(json_object_get(o, "attached")));
		CHECK(strstr(json_string_value(json_object_get(o, "attachError")), "gone0"));
		json_decref(o);
		CHECK_EQ(reg_exposed(&b, "g", 80, &o, err, sizeof(err)), REG_OK);
		CHECK_EQ(json_integer_value(json_object_get(o, "hostPort")), 20050);
		json_decref(o);
		arr = reg_state(&b);
		CHECK_EQ(json_array_size(arr), 1);
		json_decref(arr);
	}
	/* The registry's tick retries every 2 s: the interface appears, the sandbox attaches. */
	{
		uint32_t waiting = 99, total, un;
		int hp0 = fdp.hostports;
		json_t *o = NULL;

		CHECK_EQ(reg_tick(&b, 10000, &waiting), 0);
		CHECK_EQ(waiting, 1);
		fdp.prefix = "gone";
		CHECK_EQ(reg_tick(&b, 11000, &waiting), 0);	/* not due yet */
		CHECK_EQ(reg_tick(&b, 12000, &waiting), 1);
		CHECK_EQ(waiting, 0);
		reg_counts(&b, &total, &un);
		CHECK_EQ(total, 1);
		CHECK_EQ(un, 0);
		CHECK_EQ(fdp.hostports, hp0 + 1);
		CHECK_EQ(reg_get(&b, "g", &o, err, sizeof(err)), REG_OK);
		CHECK(json_is_true(json_object_get(o, "attached")));
		CHECK(!json_object_get(o, "attachError"));
		json_decref(o);
		fdp.prefix = "tap";
	}
	reg_clear(&b);
	reg_fini(&b);
}

static const char *
mac_of(json_t *sb)
{
	return json_string_value(json_object_get(sb, "guestMAC"));
}

/* A guest MAC per sandbox: checked, shown, updated, kept in the state file only when set. */
static void
test_guest_mac(const char *dir)
{
	struct registry a, b;
	char path[256], err[512];
	json_t *arr, *o = NULL;

	snprintf(path, sizeof(path), "%s/mac.json", dir);
	reg_new(&a);
	CHECK_EQ(put(&a, "m1", "{\"iface\":\"tap1\",\"exposedPorts\":[80],"
		     "\"guestMAC\":\"02:00:00:00:00:01\"}"), REG_CREATED);
	CHECK_EQ(put(&a, "m2", "{\"iface\":\"tap2\",\"exposedPorts\":[80]}"), REG_CREATED);
	CHECK_EQ(put(&a, "m3", "{\"iface\":\"tap3\",\"guestMAC\":\"01:00:5e:00:00:01\"}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "m3", "{\"iface\":\"tap3\",\"guestMAC\":\"00:00:00:00:00:00\"}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "m3", "{\"iface\":\"tap3\",\"guestMAC\":\"02:00:00:00:01\"}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "m3", "{\"iface\":\"tap3\",\"guestMAC\":7}"), REG_E_INVALID);
	CHECK_EQ(reg_get(&a, "m1", &o, err, sizeof(err)), REG_OK);
	CHECK(!strcmp(mac_of(o), "02:00:00:00:00:01"));
	json_decref(o);
	CHECK_EQ(reg_get(&a, "m2", &o, err, sizeof(err)), REG_OK);
	CHECK(!strcmp(mac_of(o), "20:90:6f:fc:fc:fc"));	/* the default, shown */
	json_decref(o);
	/* An update changes it; a PUT without the field keeps it, as with a policy. */
	CHECK_EQ(put(&a, "m1", "{\"iface\":\"tap1\",\"exposedPorts\":[80],"
		     "\"guestMAC\":\"02:00:00:00:00:02\"}"), REG_OK);
	CHECK_EQ(put(&a, "m1", "{\"iface\":\"tap1\",\"exposedPorts\":[80]}"), REG_OK);
	CHECK_EQ(reg_get(&a, "m1", &o, err, sizeof(err)), REG_OK);
	CHECK(!strcmp(mac_of(o), "02:00:00:00:00:02"));
	json_decref(o);

	arr = reg_state(&a);
	CHECK_EQ(state_save(path, arr, NULL, err, sizeof(err)), 0);
	CHECK(strstr(slurp(path), "02:00:00:00:00:02") != NULL);
	CHECK(strstr(slurp(path), "20:90:6f") == NULL);	/* the default is not written */
	json_decref(arr);
	reg_new(&b);
	restored_equal(&a, &b, path);
	reg_clear(&b);
	reg_fini(&b);
	/* A record with a bad MAC fails the restore. */
	spit(path, "{\"format\":\"cubevs-fp-state\",\"version\":1,\"sandboxes\":[{"
	     "\"sandboxID\":\"x\",\"iface\":\"tap5\",\"sandboxIP\":\"192.168.0.9\","
	     "\"exposedPorts\":[],\"guestMAC\":\"ff:ff:ff:ff:ff:ff\"}]}");
	reg_new(&b);
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), 0);
	CHECK_EQ(reg_restore(&b, arr, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "guestMAC") != NULL);
	json_decref(arr);
	reg_fini(&b);
	reg_clear(&a);
	reg_fini(&a);
}

static uint32_t
limit_of(json_t *o, const char *group, const char *name)
{
	return (uint32_t)json_integer_value(json_object_get(json_object_get(o, group), name));
}

/* Registration limits: parsed, over the defaults, rendered, kept in the state file. */
static void
test_limits(const char *dir)
{
	const struct reg_limits def = { .v = { 1000, 2000, 300, 600, 64 } };
	struct registry a, b;
	char path[256], err[512];
	json_t *arr, *o = NULL;

	snprintf(path, sizeof(path), "%s/limits.json", dir);
	reg_new(&a);
	reg_set_default_limits(&a, &def);
	CHECK_EQ(put(&a, "l1", "{\"iface\":\"tap1\",\"limits\":{\"maxSessions\":10,"
		     "\"snatPortsPerEndpoint\":0}}"), REG_CREATED);
	CHECK_EQ(put(&a, "l2", "{\"iface\":\"tap2\"}"), REG_CREATED);
	CHECK_EQ(put(&a, "l3", "{\"iface\":\"tap3\",\"limits\":{\"maxSession\":1}}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "l3", "{\"iface\":\"tap3\",\"limits\":{\"maxSessions\":-1}}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "l3", "{\"iface\":\"tap3\",\"limits\":{\"maxSessions\":1.5}}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "l3", "{\"iface\":\"tap3\",\"limits\":{\"maxSessions\":"
		     "1073741825}}"), REG_E_INVALID);
	CHECK_EQ(put(&a, "l3", "{\"iface\":\"tap3\",\"limits\":[]}"), REG_E_INVALID);
	CHECK_EQ(reg_get(&a, "l1", &o, err, sizeof(err)), REG_OK);
	CHECK_EQ(limit_of(o, "limits", "maxSessions"), 10);
	CHECK_EQ(limit_of(o, "limits", "snatPortsPerEndpoint"), 0);	/* none, as set */
	CHECK_EQ(limit_of(o, "limits", "newSessionsPerSec"), 300);	/* the default */
	CHECK_EQ(json_object_size(json_object_get(o, "limitsSet")), 2);
	json_decref(o);
	CHECK_EQ(reg_get(&a, "l2", &o, err, sizeof(err)), REG_OK);
	CHECK_EQ(limit_of(o, "limits", "maxInboundSessions"), 2000);
	CHECK_EQ(json_object_size(json_object_get(o, "limitsSet")), 0);
	json_decref(o);
	/* A PUT without limits keeps them; with limits replaces the set. */
	CHECK_EQ(put(&a, "l1", "{\"iface\":\"tap1\"}"), REG_OK);
	CHECK_EQ(reg_get(&a, "l1", &o, err, sizeof(err)), REG_OK);
	CHECK_EQ(limit_of(o, "limits", "maxSessions"), 10);
	json_decref(o);
	CHECK_EQ(put(&a, "l1", "{\"iface\":\"tap1\",\"limits\":{\"newSessionsPerSec\":5}}"),
		 REG_OK);
	CHECK_EQ(reg_get(&a, "l1", &o, err, sizeof(err)), REG_OK);
	CHECK_EQ(limit_of(o, "limits", "maxSessions"), 1000);
	CHECK_EQ(limit_of(o, "limits", "newSessionsPerSec"), 5);
	json_decref(o);
	/* Only the set ones go to the state file, and come back from it. */
	arr = reg_state(&a);
	CHECK_EQ(state_save(path, arr, NULL, err, sizeof(err)), 0);
	CHECK(strstr(slurp(path), "\"newSessionsPerSec\": 5") ||
	      strstr(slurp(path), "\"newSessionsPerSec\":5"));
	CHECK(strstr(slurp(path), "maxSessions") == NULL);
	json_decref(arr);
	reg_new(&b);
	reg_set_default_limits(&b, &def);
	restored_equal(&a, &b, path);
	reg_clear(&b);
	reg_fini(&b);
	reg_clear(&a);
	reg_fini(&a);
}

static const char *
str_field(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : "";
}

/*
 * A guest addressed on its own (issue 35): guestIP, gatewayIP, gatewayMAC checked for form,
 * one guestIP per node (409), kept by a PUT without them, never changed (409), written to the
 * state file and restored; a state file with one guestIP twice fails its restore.
 */
static void
test_guest_addr(const char *dir)
{
	struct registry a, b;
	char path[256], err[512];
	json_t *arr, *o = NULL;

	snprintf(path, sizeof(path), "%s/guest.json", dir);
	reg_new(&a);
	CHECK_EQ(put(&a, "p1", "{\"iface\":\"tap1\",\"guestIP\":\"10.22.0.5\","
		     "\"gatewayIP\":\"10.22.0.1\",\"gatewayMAC\":\"02:00:00:00:0a:01\"}"),
		 REG_CREATED);
	CHECK_EQ(put(&a, "p2", "{\"iface\":\"tap2\",\"guestIP\":\"10.22.0.5\"}"),
		 REG_E_CONFLICT);
	CHECK_EQ(put(&a, "p2", "{\"iface\":\"tap2\",\"guestIP\":\"10.22.0.6\"}"), REG_CREATED);
	CHECK_EQ(put(&a, "p3", "{\"iface\":\"tap3\"}"), REG_CREATED);	/* node-wide */
	CHECK_EQ(put(&a, "p4", "{\"iface\":\"tap4\",\"guestIP\":\"224.0.0.1\"}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "p4", "{\"iface\":\"tap4\",\"guestIP\":\"127.0.0.1\"}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "p4", "{\"iface\":\"tap4\",\"gatewayIP\":\"10.22.0.300\"}"),
		 REG_E_INVALID);
	CHECK_EQ(put(&a, "p4", "{\"iface\":\"tap4\",\"guestIP\":\"10.22.0.9\","
		     "\"gatewayIP\":\"10.22.0.9\"}"), REG_E_INVALID);
	CHECK_EQ(put(&a, "p4", "{\"iface\":\"tap4\",\"gatewayMAC\":\"01:00:00:00:00:01\"}"),
		 REG_E_INVALID);
	/* Kept by a PUT without them; another guestIP for p1 is refused. */
	CHECK_EQ(put(&a, "p1", "{\"iface\":\"tap1\",\"exposedPorts\":[80]}"), REG_OK);
	CHECK_EQ(put(&a, "p1", "{\"iface\":\"tap1\",\"guestIP\":\"10.22.0.7\"}"),
		 REG_E_CONFLICT);
	CHECK_EQ(put(&a, "p1", "{\"iface\":\"tap1\",\"exposedPorts\":[80],"
		     "\"gatewayMAC\":\"02:00:00:00:0a:02\"}"), REG_OK);
	CHECK_EQ(reg_get(&a, "p1", &o, err, sizeof(err)), REG_OK);
	CHECK(!strcmp(str_field(o, "guestIP"), "10.22.0.5"));
	CHECK(!strcmp(str_field(o, "gatewayIP"), "10.22.0.1"));
	CHECK(!strcmp(str_field(o, "gatewayMAC"), "02:00:00:00:0a:02"));
	json_decref(o);
	CHECK_EQ(reg_get(&a, "p3", &o, err, sizeof(err)), REG_OK);
	CHECK(!json_object_get(o, "guestIP") && !json_object_get(o, "gatewayMAC"));
	json_decref(o);
	arr = reg_state(&a);
	CHECK_EQ(state_save(path, arr, NULL, err, sizeof(err)), 0);
	json_decref(arr);
	CHECK(strstr(slurp(path), "\"guestIP\": \"10.22.0.6\"") != NULL);
	reg_new(&b);
	restored_equal(&a, &b, path);
	/* Restored, the claim holds: no other sandbox may take p2's address. */
	CHECK_EQ(put(&b, "p9", "{\"iface\":\"tap9\",\"guestIP\":\"10.22.0.6\"}"),
		 REG_E_CONFLICT);
	reg_clear(&b);
	reg_fini(&b);
	spit(path, "{\"format\":\"cubevs-fp-state\",\"version\":1,\"sandboxes\":["
	     "{\"sandboxID\":\"x\",\"iface\":\"tap5\",\"sandboxIP\":\"192.168.0.9\","
	     "\"exposedPorts\":[],\"guestIP\":\"10.22.0.5\"},"
	     "{\"sandboxID\":\"y\",\"iface\":\"tap6\",\"sandboxIP\":\"192.168.0.10\","
	     "\"exposedPorts\":[],\"guestIP\":\"10.22.0.5\"}]}");
	reg_new(&b);
	CHECK_EQ(state_load(path, &arr, NULL, err, sizeof(err)), 0);
	CHECK_EQ(reg_restore(&b, arr, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "guestIP 10.22.0.5 is sandbox x's") != NULL);
	json_decref(arr);
	reg_clear(&b);	/* x was restored before y failed: the start stops, nothing stays */
	reg_fini(&b);
	reg_clear(&a);
	reg_fini(&a);
}

/* The host port of sandbox id's container port cport, 0 when it has none. */
static int
hport_of(struct registry *r, const char *id, int cport)
{
	json_t *o = NULL, *p;
	char err[256];
	size_t i;
	int hp = 0;

	if (reg_get(r, id, &o, err, sizeof(err)) != REG_OK)
		return 0;
	json_array_foreach(json_object_get(o, "exposedPorts"), i, p)
		if (json_integer_value(json_object_get(p, "containerPort")) == cport)
			hp = (int)json_integer_value(json_object_get(p, "hostPort"));
	json_decref(o);
	return hp;
}

/*
 * Host ports asked for by number (a CNI runtime's portMappings): given when free in the range,
 * refused outside it (400) or when another sandbox has it (409), kept by a PUT asking the same,
 * moved by one asking another; a port handed out before is not given to a request by number.
 */
static void
test_hostport_asked(void)
{
	struct registry a;

	reg_new(&a);
	CHECK_EQ(put(&a, "h1", "{\"iface\":\"tap1\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":20050},443]}"), REG_CREATED);
	CHECK_EQ(hport_of(&a, "h1", 80), 20050);
	CHECK(hport_of(&a, "h1", 443) >= 20000 && hport_of(&a, "h1", 443) != 20050);
	CHECK_EQ(put(&a, "h2", "{\"iface\":\"tap2\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":20050}]}"), REG_E_CONFLICT);
	CHECK_EQ(put(&a, "h2", "{\"iface\":\"tap2\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":8080}]}"), REG_E_INVALID);
	CHECK_EQ(put(&a, "h2", "{\"iface\":\"tap2\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":0}]}"), REG_E_INVALID);
	CHECK_EQ(put(&a, "h2", "{\"iface\":\"tap2\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":20051,\"x\":1}]}"), REG_E_INVALID);
	CHECK_EQ(put(&a, "h2", "{\"iface\":\"tap2\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":20051},"
		     "{\"containerPort\":81,\"hostPort\":20051}]}"), REG_E_INVALID);
	/* 443's port was handed out: not to be had by number. */
	{
		char body[160];

		snprintf(body, sizeof(body), "{\"iface\":\"tap3\",\"exposedPorts\":"
			 "[{\"containerPort\":1,\"hostPort\":%d}]}", hport_of(&a, "h1", 443));
		CHECK_EQ(put(&a, "h3", body), REG_E_CONFLICT);
	}
	CHECK_EQ(put(&a, "h1", "{\"iface\":\"tap1\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":20050},443]}"), REG_OK);
	CHECK_EQ(hport_of(&a, "h1", 80), 20050);
	CHECK_EQ(put(&a, "h1", "{\"iface\":\"tap1\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":20060},443]}"), REG_OK);
	CHECK_EQ(hport_of(&a, "h1", 80), 20060);
	/* Freed by the move (this registry keeps no holds): another sandbox may have it now. */
	CHECK_EQ(put(&a, "h2", "{\"iface\":\"tap2\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":20050}]}"), REG_CREATED);
	CHECK_EQ(hport_of(&a, "h2", 80), 20050);
	CHECK_EQ(put(&a, "h1", "{\"iface\":\"tap1\",\"exposedPorts\":"
		     "[{\"containerPort\":80,\"hostPort\":20050},443]}"), REG_E_CONFLICT);
	CHECK_EQ(hport_of(&a, "h1", 80), 20060);
	reg_clear(&a);
	reg_fini(&a);
}

int
main(void)
{
	char dir[] = "/tmp/cvs-state-XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	test_file(dir);
	test_restore(dir);
	test_slots();
	test_guest_mac(dir);
	test_limits(dir);
	test_guest_addr(dir);
	test_hostport_asked();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return t_done("test_state");
}
