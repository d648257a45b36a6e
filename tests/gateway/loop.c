/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loop's busy polling and deferred tasks (issue 37, base/loop.c). Busy polling, with a
 * thread of the test as the server: the loop writes a request on one pipe, calls
 * loop_expect(), and reads the answer from the other. A server that answers at once is taken
 * in a window; one slower than the window makes the windows shrink to none within a few
 * calls; a fast server after that makes them grow again; without busy polling no window is
 * opened at all. Deferred tasks run once each at the end of the turn, in order.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/loop.h"
#include "check.h"

struct bed {
	struct loop *l;
	struct loop_watch watch;	/* the answers */
	int req[2], ans[2];
	pthread_t server;
	atomic_int delay_us;		/* the server's time per request */
	atomic_int answered;		/* answers the loop read */
	atomic_int rounds;		/* requests still to send */
	atomic_bool send;		/* send the next request at the loop's turn */
};

static void *
server_main(void *arg)
{
	struct bed *b = arg;
	char c;

	while (read(b->req[0], &c, 1) == 1) {
		int d = atomic_load(&b->delay_us);

		if (d)
			usleep((useconds_t)d);
		if (write(b->ans[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void
answer_ready(struct loop_watch *w, uint32_t events)
{
	struct bed *b = (struct bed *)((char *)w - offsetof(struct bed, watch));
	char c;

	if (events && read(w->fd, &c, 1) == 1) {
		atomic_fetch_add(&b->answered, 1);
		atomic_store(&b->send, true);
	}
}

/* After every batch: the next request, if one is due. */
static int
turn(void *ctx)
{
	struct bed *b = ctx;

	if (atomic_load(&b->send) && atomic_load(&b->rounds) > 0) {
		atomic_store(&b->send, false);
		atomic_fetch_sub(&b->rounds, 1);
		if (write(b->req[1], "x", 1) == 1)
			loop_expect(b->l);
	}
	return 1000;
}

static void
bed_start(struct bed *b, int64_t busy_ns)
{
	memset(b, 0, sizeof(*b));
	CHECK(pipe(b->req) == 0 && pipe(b->ans) == 0, "pipes");
	b->l = loop_new(turn, b);
	CHECK(b->l != NULL, "loop");
	loop_set_busy_poll(b->l, busy_ns);
	b->watch.fd = b->ans[0];
	b->watch.ready = answer_ready;
	CHECK(loop_add(b->l, &b->watch) == 0, "watch");
	pthread_create(&b->server, NULL, server_main, b);
	CHECK(loop_start(b->l) == 0, "start");
}

/* n requests one after another, each answered after delay_us; waits for their answers. */
static void
bed_run(struct bed *b, int n, int delay_us)
{
	int want = atomic_load(&b->answered) + n;

	atomic_store(&b->delay_us, delay_us);
	atomic_store(&b->rounds, n);
	atomic_store(&b->send, true);
	loop_wake(b->l);
	for (int i = 0; i < 20000 && atomic_load(&b->answered) < want; i++)
		usleep(1000);
	CHECK(atomic_load(&b->answered) == want, "answered %d of %d",
	      atomic_load(&b->answered), want);
}

static void
bed_stop(struct bed *b)
{
	loop_free(b->l);
	close(b->req[1]);
	pthread_join(b->server, NULL);
	close(b->req[0]);
	close(b->ans[0]);
	close(b->ans[1]);
}

/* ---- deferred tasks ---------------------------------------------------------------------- */

struct dtask {
	struct loop_task t;
	int id;
};

static int ran[8], nran;
static atomic_int deferred_ok;		/* 1 when the loop's turn saw what it should */
static struct dtask dt[4];
static struct loop *dl;

static void
dtask_run(struct loop_task *t)
{
	int id = ((struct dtask *)t)->id;

	if (nran < 8)
		ran[nran++] = id;
	if (id == 3 && !loop_defer(dl, &dt[3].t))	/* a task that defers another */
		atomic_store(&deferred_ok, -1);
}

/*
 * The turn defers task 1, 2, 1 again and 3: each runs once, after the turn, in the order first
 * deferred, and task 3 defers task 4, which runs before the loop waits: all four are done by
 * the next turn. Another thread cannot defer.
 */
static int
defer_turn(void *ctx)
{
	static int turns;

	(void)ctx;
	turns++;
	if (turns == 1) {
		for (int i = 0; i < 4; i++) {
			dt[i].t.run = dtask_run;
			dt[i].id = i + 1;
		}
		if (!loop_defer(dl, &dt[0].t) || !loop_defer(dl, &dt[1].t) ||
		    !loop_defer(dl, &dt[0].t) || !loop_defer(dl, &dt[2].t) || nran != 0)
			atomic_store(&deferred_ok, -1);
		loop_wake(dl);		/* one more turn at once */
	} else if (turns == 2) {
		if (atomic_load(&deferred_ok) == 0)
			atomic_store(&deferred_ok, nran == 4 && ran[0] == 1 && ran[1] == 2 &&
				     ran[2] == 3 && ran[3] == 4 ? 1 : -1);
	}
	return 1000;
}

static void
case_defer(void)
{
	static struct loop_task other = { .run = dtask_run };
	int i;

	dl = loop_new(defer_turn, NULL);
	CHECK(dl != NULL, "loop");
	CHECK(!loop_defer(dl, &other) && !other.queued, "deferred from outside the loop");
	CHECK(loop_start(dl) == 0, "start");
	for (i = 0; i < 2000 && atomic_load(&deferred_ok) == 0; i++)
		usleep(1000);
	CHECK(atomic_load(&deferred_ok) == 1, "deferred tasks ran %d: %d %d %d %d", nran, ran[0],
	      ran[1], ran[2], ran[3]);
	loop_free(dl);
}

int
main(void)
{
	struct bed b;
	uint64_t hit, missed, hit0, missed0;

	/* Windows of 200 us: a server answering at once is taken in them, in some calls. */
	bed_start(&b, 200000);
	bed_run(&b, 300, 0);
	loop_poll_counts(b.l, &hit, &missed);
	CHECK(hit > 0, "fast server: %llu windows took the answer, %llu passed empty",
	      (unsigned long long)hit, (unsigned long long)missed);

	/*
	 * A server 5 ms slow: each window passes empty and halves the next, down to none
	 * (200, 100, 50, 25, 12.5 us: five), instead of one per call.
	 */
	loop_poll_counts(b.l, &hit0, &missed0);
	bed_run(&b, 60, 5000);
	loop_poll_counts(b.l, &hit, &missed);
	CHECK(hit == hit0, "slow server: %llu windows took an answer", (unsigned long long)(hit - hit0));
	CHECK(missed - missed0 >= 1 && missed - missed0 <= 8,
	      "slow server: %llu empty windows for 60 calls", (unsigned long long)(missed - missed0));

	/* Fast again: answers the loop slept for come within 200 us, and the windows regrow. */
	bed_run(&b, 300, 0);
	loop_poll_counts(b.l, &hit0, &missed0);
	CHECK(hit0 > hit, "fast again: no window took an answer (%llu empty)",
	      (unsigned long long)(missed0 - missed));
	bed_stop(&b);

	/* Busy polling off: no window at all. */
	bed_start(&b, 0);
	bed_run(&b, 100, 0);
	loop_poll_counts(b.l, &hit, &missed);
	CHECK(hit == 0 && missed == 0, "off: %llu and %llu windows", (unsigned long long)hit,
	      (unsigned long long)missed);
	bed_stop(&b);

	case_defer();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
