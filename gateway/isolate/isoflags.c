/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the isolation flags (isolate.h): defaults, their parsers, the check the
 * launcher makes before it touches the system, and serve's argv, which carries them on.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "isolate/isolate.h"

void
iso_opts_init(struct iso_opts *o)
{
	o->uid_range = strdup(ISO_UID_RANGE);
	o->home_root = strdup(ISO_HOME_ROOT);
	o->read_paths = strdup("");
	o->landlock = true;
	o->cgroup = true;
	o->memory = strdup(ISO_MEMORY);
	o->cpus = strdup(ISO_CPUS);
	o->pids = ISO_PIDS;
}

void
iso_opts_fini(struct iso_opts *o)
{
	free(o->uid_range);
	free(o->home_root);
	free(o->read_paths);
	free(o->memory);
	free(o->cpus);
	memset(o, 0, sizeof(*o));
}

int
iso_range_parse(const char *s, uid_t *lo, uid_t *hi)
{
	unsigned long a, b;
	char *end;

	errno = 0;
	a = strtoul(s, &end, 10);
	if (end == s || *end != '-' || errno)
		return -EINVAL;
	s = end + 1;
	b = strtoul(s, &end, 10);
	if (end == s || *end != '\0' || errno)
		return -EINVAL;
	/* uid 0 is what we take away; 65535 and above is where user namespaces stop mapping. */
	if (a == 0 || b < a || b >= 65535)
		return -ERANGE;
	*lo = (uid_t)a;
	*hi = (uid_t)b;
	return 0;
}

int
iso_size_parse(const char *s, long long *bytes)
{
	long long mul = 1, v;
	char *end;

	if (strcmp(s, "max") == 0) {
		*bytes = -1;
		return 0;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || v <= 0 || errno)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		mul = 1LL << 10;
	else if (*end == 'M' || *end == 'm')
		mul = 1LL << 20;
	else if (*end == 'G' || *end == 'g')
		mul = 1LL << 30;
	else if (*end != '\0')
		return -EINVAL;
	if (*end && end[1] != '\0')
		return -EINVAL;
	*bytes = v * mul;
	return 0;
}

int
iso_cpus_parse(const char *s, long long *quota_us)
{
	char *end;
	double v;

	if (strcmp(s, "max") == 0) {
		*quota_us = -1;
		return 0;
	}
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno || !(v >= 0.01 && v <= 1024))
		return -EINVAL;
	*quota_us = (long long)(v * 100000.0 + 0.5);
	return 0;
}

int
iso_opts_check(const struct iso_opts *o, char **err)
{
	long long x;
	uid_t lo, hi;

	if (iso_range_parse(o->uid_range, &lo, &hi))
		return err_set(err, -EINVAL, "--server-uid-range: expected FIRST-LAST within "
			       "1-65534, not \"%s\"", o->uid_range);
	if (iso_size_parse(o->memory, &x))
		return err_set(err, -EINVAL, "--server-memory: expected bytes with K/M/G or max, "
			       "not \"%s\"", o->memory);
	if (iso_cpus_parse(o->cpus, &x))
		return err_set(err, -EINVAL, "--server-cpus: expected a number of CPUs or max, "
			       "not \"%s\"", o->cpus);
	if (o->pids < 0)
		return err_set(err, -EINVAL, "--server-pids: must not be negative");
	if (o->home_root[0] != '/')
		return err_set(err, -EINVAL, "--servers-home: must be an absolute path");
	return 0;
}

int
iso_opts_argv(const struct iso_opts *o, char ***argv)
{
	char *pids = str_printf("%lld", o->pids);
	const char *kv[] = {
		"--server-uid-range", o->uid_range, "--servers-home", o->home_root,
		"--server-read-paths", o->read_paths,
		"--landlock", o->landlock ? "true" : "false",
		"--cgroup-limits", o->cgroup ? "true" : "false",
		"--server-memory", o->memory, "--server-cpus", o->cpus, "--server-pids", pids,
	};
	int rc = pids ? 0 : -ENOMEM;

	for (size_t i = 0; rc == 0 && i < sizeof(kv) / sizeof(kv[0]); i++) {
		/* Go's flag package takes a bool's value only in the "=" form. */
		if (i % 2 == 0 && (strcmp(kv[i], "--landlock") == 0 ||
				   strcmp(kv[i], "--cgroup-limits") == 0)) {
			char *f = str_printf("%s=%s", kv[i], kv[i + 1]);

			rc = f ? strv_push(argv, f) : -ENOMEM;
			free(f);
			i++;
			continue;
		}
		rc = strv_push(argv, kv[i] ? kv[i] : "");
	}
	free(pids);
	return rc;
}
