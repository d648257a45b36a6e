/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host-port policy: reserved ports, ports a real kernel listener holds (a socket on a
 * loopback address standing for the node IP), holds across DELETE → PUT, their expiry,
 * breaking the oldest hold when the range runs short, and the holds' state-file round trip.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "t.h"
#include "tlisten.h"
#include "hostports.h"

static void
test_reserved_and_holds(void)
{
	struct cvs_range r = { 100, 104 }, res[1] = { { 100, 101 } };
	struct hostports h, h2;
	uint16_t a, b, c;
	char err[128];
	json_t *j;

	CHECK_EQ(hostports_init(&h, r, res, 1, 0, 60), 0);
	CHECK_EQ(hostports_free(&h), 3);
	CHECK_EQ(hostports_get(&h, "sb-a", 80, 1000, &a), 0);
	CHECK_EQ(a, 102);
	CHECK_EQ(hostports_get(&h, "sb-a", 81, 1000, &b), 0);
	CHECK_EQ(b, 103);

	/* DELETE: both held; another sandbox gets neither, sb-a gets each back per cport. */
	hostports_release(&h, "sb-a", 80, a, 1000);
	hostports_release(&h, "sb-a", 81, b, 1001);
	CHECK_EQ(h.nholds, 2);
	CHECK_EQ(hostports_get(&h, "sb-b", 80, 1002, &c), 0);
	CHECK_EQ(c, 104);
	CHECK_EQ(hostports_get(&h, "sb-a", 81, 1010, &c), 0);
	CHECK_EQ(c, 103);
	CHECK_EQ(h.st.holds_reused, 1);

	/* The state file keeps the remaining hold; a new process gives it back. */
	j = hostports_holds_json(&h, NULL);
	CHECK_EQ(json_array_size(j), 1);
	CHECK_EQ(hostports_init(&h2, r, res, 1, 0, 60), 0);
	CHECK_EQ(hostports_take(&h2, 103), 0);	/* a restored registration */
	CHECK_EQ(hostports_holds_restore(&h2, j, 1020, err, sizeof(err)), 0);
	CHECK_EQ(h2.nholds, 1);
	CHECK_EQ(hostports_get(&h2, "sb-c", 80, 1020, &c), 0);
	CHECK(c != 102);
	CHECK_EQ(hostports_get(&h2, "sb-a", 80, 1020, &c), 0);
	CHECK_EQ(c, 102);
	hostports_fini(&h2);

	/* Holds run out: the port is free again (and restored run-out holds are dropped). */
	CHECK_EQ(hostports_init(&h2, r, res, 1, 0, 60), 0);
	CHECK_EQ(hostports_holds_restore(&h2, j, 1061, err, sizeof(err)), 0);
	CHECK_EQ(h2.nholds, 0);
	CHECK_EQ(hostports_free(&h2), 3);
	hostports_fini(&h2);
	hostports_expire(&h, 1059);
	CHECK_EQ(h.nholds, 1);
	hostports_expire(&h, 1060);
	CHECK_EQ(h.nholds, 0);
	CHECK_EQ(h.st.holds_expired, 1);
	json_decref(j);

	/* A short range breaks the oldest hold rather than refusing a registration. */
	hostports_release(&h, "sb-b", 80, 104, 2000);
	hostports_release(&h, "sb-a", 81, 103, 2001);
	CHECK_EQ(hostports_get(&h, "sb-d", 80, 2002, &c), 0);
	CHECK_EQ(c, 102);
	CHECK_EQ(hostports_get(&h, "sb-d", 81, 2002, &c), 0);
	CHECK_EQ(c, 104);	/* sb-b's hold was the older one */
	CHECK_EQ(h.st.holds_broken, 1);
	CHECK_EQ(hostports_get(&h, "sb-d", 82, 2002, &c), 0);
	CHECK_EQ(c, 103);
	CHECK_EQ(hostports_get(&h, "sb-d", 83, 2002, &c), -ENOSPC);
	hostports_unget(&h, 103);
	CHECK_EQ(hostports_free(&h), 1);
	hostports_fini(&h);

	/* Without holds a released port is free at once. */
	CHECK_EQ(hostports_init(&h, r, NULL, 0, 0, 0), 0);
	CHECK_EQ(hostports_get(&h, "x", 1, 0, &a), 0);
	hostports_release(&h, "x", 1, a, 0);
	CHECK_EQ(h.nholds, 0);
	CHECK_EQ(hostports_free(&h), 5);
	hostports_fini(&h);
}

static void
test_restore_bad(void)
{
	struct cvs_range r = { 100, 104 };
	struct hostports h;
	char err[128];
	json_t *j;

	CHECK_EQ(hostports_init(&h, r, NULL, 0, 0, 60), 0);
	j = json_loads("[{\"id\":\"a\",\"containerPort\":80,\"hostPort\":99,\"until\":5}]", 0, NULL);
	CHECK_EQ(hostports_holds_restore(&h, j, 0, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "hostPortHolds[0]") != NULL);
	json_decref(j);
	j = json_loads("{}", 0, NULL);
	CHECK_EQ(hostports_holds_restore(&h, j, 0, err, sizeof(err)), -EINVAL);
	json_decref(j);
	/* A hold far in the future (an older, longer setting) is cut to the hold time. */
	j = json_loads("[{\"id\":\"a\",\"containerPort\":80,\"hostPort\":101,\"until\":99999}]",
		       0, NULL);
	CHECK_EQ(hostports_holds_restore(&h, j, 100, err, sizeof(err)), 0);
	CHECK_EQ(h.nholds, 1);
	CHECK_EQ(h.holds[0].until, 160);
	json_decref(j);
	hostports_fini(&h);
}

static void
test_listener(void)
{
	struct hostports h;
	struct cvs_range r;
	uint32_t node;
	uint16_t p = 0, v;
	int fd, i;

	inet_pton(AF_INET, "127.0.0.2", &node);
	fd = t_listen_v4("127.0.0.2", &p);
	CHECK(fd >= 0);
	r = (struct cvs_range){ (uint16_t)(p - 1), (uint16_t)(p + 1) };
	CHECK_EQ(hostports_init(&h, r, NULL, 0, node, 60), 0);
	CHECK_EQ(hostports_scan(&h), 0);
	CHECK_EQ(hostports_listening(&h), 1);
	CHECK_EQ(hostports_free(&h), 2);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(hostports_get(&h, "a", (uint16_t)(80 + i), 0, &v), 0);
		CHECK(v != p);
	}
	CHECK_EQ(hostports_get(&h, "a", 82, 0, &v), -ENOSPC);
	/* A port handed out before the listener came: a conflict, named for /readyz. */
	CHECK_EQ(hostports_take(&h, p), 0);
	CHECK_EQ(hostports_scan(&h), 1);
	CHECK_EQ(h.conflicts[0], p);
	/* A held port with a listener by now is not given back: the node service wins. */
	hostports_release(&h, "a", 90, p, 0);
	CHECK_EQ(hostports_scan(&h), 0);	/* held, not handed out: no conflict */
	CHECK_EQ(hostports_get(&h, "a", 90, 1, &v), -ENOSPC);
	CHECK_EQ(h.nholds, 0);
	close(fd);
	CHECK_EQ(hostports_scan(&h), 0);
	CHECK_EQ(hostports_listening(&h), 0);
	CHECK_EQ(hostports_get(&h, "a", 90, 1, &v), 0);
	CHECK_EQ(v, p);
	hostports_fini(&h);
}

/*
 * A listener that no scan has seen yet (a service started a moment before the PUT): the
 * allocation asks the kernel about its candidate and passes over it.
 */
static void
test_listener_since_scan(void)
{
	struct hostports h;
	uint32_t node;
	uint16_t p = 0, v;
	int fd;

	inet_pton(AF_INET, "127.0.0.2", &node);
	fd = t_listen_v4("127.0.0.2", &p);
	CHECK(fd >= 0 && p < 65535);
	CHECK_EQ(hostports_init(&h, (struct cvs_range){ p, (uint16_t)(p + 1) }, NULL, 0, node, 60),
		 0);
	CHECK_EQ(hostports_listening(&h), 0);		/* never scanned */
	CHECK_EQ(hostports_get(&h, "a", 80, 0, &v), 0);	/* round robin starts at p */
	CHECK_EQ(v, p + 1);
	CHECK_EQ(hostports_listening(&h), 1);		/* kept back like a scanned one */
	CHECK_EQ(hostports_get(&h, "a", 81, 0, &v), -ENOSPC);
	close(fd);
	hostports_fini(&h);
}

/*
 * The holds' indexes (by port, chains by id) against a plain model, over thousands of random
 * releases, gets, expiries and broken holds: the held port comes back to its id, one id's
 * holds are what the whole list says, and nothing else is held.
 */
static void
test_hold_index(void)
{
	struct cvs_range r = { 20000, 20199 };
	static uint16_t model[40][4];	/* id k, container port c → held host port, 0: none */
	static uint64_t until[40][4];
	struct hostports h;
	uint64_t now = 1000;
	uint32_t seed = 7, step, k, c, held;
	char id[16];

	CHECK_EQ(hostports_init(&h, r, NULL, 0, 0, 50), 0);
	for (step = 0; step < 20000; step++) {
		uint16_t port;

		seed = seed * 1103515245u + 12345u;
		k = (seed >> 8) % 40;
		c = (seed >> 16) % 4;
		snprintf(id, sizeof(id), "id-%u", k);
		now += (seed >> 24) % 3 == 0;
		if (!model[k][c] || until[k][c] <= now) {
			/* No hold (or one that ran out): take a port and give it back held. */
			if (hostports_get(&h, id, (uint16_t)(80 + c), now, &port))
				continue;
			CHECK(!model[k][c] || until[k][c] <= now || port == model[k][c]);
			hostports_release(&h, id, (uint16_t)(80 + c), port, now);
			model[k][c] = port;
			until[k][c] = now + 50;
		} else if (hostports_get(&h, id, (uint16_t)(80 + c), now, &port) == 0) {
			/* Held and not run out: it comes back, unless the range was short. */
			if (port != model[k][c])
				CHECK(hostports_free(&h) == 0 || h.st.holds_broken);
			hostports_release(&h, id, (uint16_t)(80 + c), port, now);
			model[k][c] = port;
			until[k][c] = now + 50;
		}
	}
	hostports_expire(&h, now);
	for (k = 0, held = 0; k < 40; k++) {
		json_t *mine, *all = hostports_holds_json(&h, NULL), *e;
		size_t i, n = 0;

		snprintf(id, sizeof(id), "id-%u", k);
		mine = hostports_holds_json(&h, id);
		json_array_foreach(all, i, e)
			n += !strcmp(json_string_value(json_object_get(e, "id")), id);
		CHECK_EQ(json_array_size(mine), n);
		held += (uint32_t)n;
		json_decref(mine);
		json_decref(all);
	}
	CHECK_EQ(held, h.nholds);
	CHECK_EQ(hostports_used(&h), h.nholds);
	hostports_fini(&h);
}

int
main(void)
{
	test_reserved_and_holds();
	test_restore_bad();
	test_listener();
	test_listener_since_scan();
	test_hold_index();
	return t_done("test_hostports");
}
