/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: command-line flags with the semantics of Go's "flag" package, because the
 * SDKs and existing templates invoke the gateway the way the reference parses it: -name and
 * --name, "=value" or a separate value, parsing stops at the first non-flag argument.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/flags.h"
#include "base/str.h"

static struct flag *
flag_find(struct flag *fl, size_t n, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(fl[i].name) == len && strncmp(fl[i].name, name, len) == 0)
			return &fl[i];
	return NULL;
}

static int
bool_parse(const char *v, bool *out)
{
	static const char *const t[] = {"1", "t", "T", "true", "TRUE", "True"};
	static const char *const f[] = {"0", "f", "F", "false", "FALSE", "False"};
	size_t i;

	for (i = 0; i < 6; i++) {
		if (strcmp(v, t[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(v, f[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int
flag_set(struct flag *f, const char *v)
{
	char *end;

	switch (f->type) {
	case FLAG_STRING:
		free(*(char **)f->ptr);
		*(char **)f->ptr = strdup(v);
		break;
	case FLAG_BOOL:
		if (bool_parse(v, (bool *)f->ptr))
			return -EINVAL;
		break;
	case FLAG_INT: {
		long long x;

		errno = 0;
		x = strtoll(v, &end, 0);
		if (*v == '\0' || *end != '\0' || errno)
			return -EINVAL;
		*(long long *)f->ptr = x;
		break;
	}
	case FLAG_DURATION:
		if (dur_parse(v, (int64_t *)f->ptr))
			return -EINVAL;
		break;
	}
	f->set = true;
	return 0;
}

void
flags_usage(const struct flag *fl, size_t n, const char *synopsis)
{
	size_t i;

	fprintf(stderr, "Usage: %s\n", synopsis);
	for (i = 0; i < n; i++) {
		const char *arg = "";

		if (fl[i].type == FLAG_STRING)
			arg = " string";
		else if (fl[i].type == FLAG_INT)
			arg = " int";
		else if (fl[i].type == FLAG_DURATION)
			arg = " duration";
		fprintf(stderr, "  -%s%s\n    \t%s\n", fl[i].name, arg, fl[i].usage);
	}
}

static int
flags_fail(const struct flag *fl, size_t n, const char *synopsis, char *msg)
{
	flags_usage(fl, n, synopsis);
	fprintf(stderr, "mcp-gateway: %s\n", msg ? msg : "out of memory");
	free(msg);
	return 1;
}

int
flags_parse(struct flag *fl, size_t n, int argc, char **argv, const char *synopsis, int *next)
{
	int i = 0;

	while (i < argc) {
		const char *a = argv[i], *name, *eq, *val = NULL;
		size_t nlen;
		struct flag *f;

		if (a[0] != '-' || a[1] == '\0')
			break;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		name = a + 1;
		if (*name == '-')
			name++;
		if (*name == '\0' || *name == '-' || *name == '=')
			return flags_fail(fl, n, synopsis,
					  str_printf("bad flag syntax: %s", a));
		eq = strchr(name, '=');
		nlen = eq ? (size_t)(eq - name) : strlen(name);
		if (eq)
			val = eq + 1;
		i++;
		f = flag_find(fl, n, name, nlen);
		if (f == NULL) {
			if ((nlen == 1 && name[0] == 'h') ||
			    (nlen == 4 && strncmp(name, "help", 4) == 0)) {
				flags_usage(fl, n, synopsis);
				return 2;
			}
			return flags_fail(fl, n, synopsis,
					  str_printf("flag provided but not defined: -%.*s",
						     (int)nlen, name));
		}
		if (f->type == FLAG_BOOL && val == NULL) {
			*(bool *)f->ptr = true;
			f->set = true;
			continue;
		}
		if (val == NULL) {
			if (i >= argc)
				return flags_fail(fl, n, synopsis,
						  str_printf("flag needs an argument: -%s",
							     f->name));
			val = argv[i++];
		}
		if (flag_set(f, val))
			return flags_fail(fl, n, synopsis,
					  str_printf("invalid value \"%s\" for flag -%s: "
						     "parse error", val, f->name));
	}
	if (next)
		*next = i;
	return 0;
}
