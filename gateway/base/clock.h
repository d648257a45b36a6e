/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: time: Go-style durations parsed and printed, the monotonic clock, deadlines, and a
 * bell one thread waits on and others ring (clock.c).
 */
#ifndef GW_CLOCK_H
#define GW_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

int dur_parse(const char *s, int64_t *ns);
void dur_format(int64_t ns, char *buf, size_t len);
int64_t time_mono_ns(void);
/* The CLOCK_REALTIME instant ns from now, as pthread_cond_timedwait() wants it (ns >= 0). */
void time_deadline(struct timespec *ts, int64_t ns);

/* A bell one thread waits on and any rings; a ring is never lost between two waits. */
struct bell {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool rung;
	bool stop;
};

void bell_init(struct bell *b);
void bell_fini(struct bell *b);
void bell_ring(struct bell *b);
/* Rings for good: every wait from now on returns at once. */
void bell_stop(struct bell *b);
bool bell_stopped(struct bell *b);
/* Until rung, stopped, or ns passed (0: no limit); takes the ring. */
void bell_wait(struct bell *b, int64_t ns);

#endif /* GW_CLOCK_H */
