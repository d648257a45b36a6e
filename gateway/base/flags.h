/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: command-line flags with Go "flag" package semantics (flags.c). */
#ifndef GW_FLAGS_H
#define GW_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

enum flag_type {
	FLAG_STRING,
	FLAG_BOOL,
	FLAG_INT,
	FLAG_DURATION,
};

struct flag {
	const char *name;
	enum flag_type type;
	void *ptr;		/* char **, bool *, long long *, int64_t * (ns) */
	const char *usage;
	bool set;
};

/* Returns 0, or the exit status the caller should use (1 error, 2 help); prints itself. */
int flags_parse(struct flag *fl, size_t n, int argc, char **argv, const char *synopsis,
		int *next);
void flags_usage(const struct flag *fl, size_t n, const char *synopsis);

#endif /* GW_FLAGS_H */
