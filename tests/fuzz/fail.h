/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A failed check in a fuzz target. run.sh closes the target's stdout and stderr (-close_fd_mask)
 * to keep the logs of the code under test out of the way, so the reason also goes to the file
 * named by FUZZ_FAIL_LOG, which run.sh prints when the run fails.
 */
#ifndef CVS_FUZZ_FAIL_H
#define CVS_FUZZ_FAIL_H

#include <stdio.h>
#include <stdlib.h>

static inline void __attribute__((noreturn))
fuzz_fail_at(const char *target, const char *what, const char *detail)
{
	const char *path = getenv("FUZZ_FAIL_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;

	fprintf(f ? f : stderr, "%s: %s: %.300s\n", target, what, detail ? detail : "");
	if (f)
		fclose(f);
	abort();
}

#endif /* CVS_FUZZ_FAIL_H */
