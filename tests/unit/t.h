/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal test harness: CHECK records a failure and goes on; main returns the count. */
#ifndef CVS_T_H
#define CVS_T_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_fails, t_checks;

#define CHECK(cond) do { \
	t_checks++; \
	if (!(cond)) { \
		t_fails++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	t_checks++; \
	if (_a != _b) { \
		t_fails++; \
		fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n", __FILE__, \
			__LINE__, #a, _a, #b, _b); \
	} \
} while (0)

static inline int
t_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, t_checks, t_fails);
	return t_fails ? 1 : 0;
}

#endif /* CVS_T_H */
