/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the gateway's C tests share: CHECK (count, and report a failure without stopping) and
 * a fixed-seed xorshift for the random cases, so a failure is the same on every run.
 */
#ifndef GW_TEST_CHECK_H
#define GW_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>

static int failures, checks;

#define CHECK(cond, ...)							\
	do {									\
		checks++;							\
		if (!(cond)) {							\
			failures++;						\
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
		}								\
	} while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* A number below n. */
static inline unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

#endif /* GW_TEST_CHECK_H */
