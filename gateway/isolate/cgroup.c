/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: cgroup v2 limits per server, in <root>/mcp-gateway/<name>. The root of the
 * hierarchy (as serve sees it): a cgroup that holds processes may not hand controllers to
 * children ("no internal processes"), and serve's own cgroup always holds serve, so the root,
 * which is exempt, is the one place that works wherever we are root. Nothing is assumed: the
 * hierarchy must be mounted, offer memory, cpu and pids and let us enable them; otherwise
 * the state says why and servers run without limits.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "base/str.h"
#include "isolate/isolate.h"

static const char *const cg_ctrls[] = {"memory", "cpu", "pids", NULL};

/* The mount point of the cgroup2 filesystem, from mountinfo ("... - cgroup2 ..."). */
static char *
cg2_mount(void)
{
	char *text = file_read_all("/proc/self/mountinfo", NULL, NULL), *line, *save = NULL;
	char *mnt = NULL;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line && !mnt;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sep = strstr(line, " - "), *f[5] = {0}, *s2 = NULL, *tok;
		int i = 0;

		if (sep == NULL || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		for (tok = strtok_r(line, " ", &s2); tok && i < 5; tok = strtok_r(NULL, " ", &s2))
			f[i++] = tok;
		if (i == 5)
			mnt = strdup(f[4]);
	}
	free(text);
	return mnt;
}

static bool
word_in(const char *text, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = text; p && (p = strstr(p, w)) != NULL; p += n)
		if ((p == text || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return true;
	return false;
}

static int
file_put(const char *dir, const char *name, const char *val)
{
	char *p = str_printf("%s/%s", dir, name);
	int fd = p ? open(p, O_WRONLY | O_CLOEXEC) : -1, rc = 0;

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

/* The controllers a subtree of dir may use; enabling them where they are not yet. */
static int
subtree_enable(const char *dir)
{
	char *p = str_printf("%s/cgroup.subtree_control", dir);
	char *have = p ? file_read_all(p, NULL, NULL) : NULL;
	int rc = 0;

	for (size_t i = 0; rc == 0 && cg_ctrls[i]; i++) {
		char add[32];

		if (have && word_in(have, cg_ctrls[i]))
			continue;
		snprintf(add, sizeof(add), "+%s", cg_ctrls[i]);
		rc = file_put(dir, "cgroup.subtree_control", add);
	}
	free(have);
	free(p);
	return rc;
}

int
cgroup_setup(const char *sub, char *state, size_t len, char **dir)
{
	char *mnt = cg2_mount(), *base = NULL, *ctl = NULL, *have = NULL;
	char missing[64] = "";
	int rc = -ENOENT;

	*dir = NULL;
	if (mnt == NULL) {
		snprintf(state, len, "unavailable: no cgroup v2 hierarchy is mounted");
		goto out;
	}
	base = strdup(mnt);
	ctl = base ? str_printf("%s/cgroup.controllers", base) : NULL;
	have = ctl ? file_read_all(ctl, NULL, NULL) : NULL;
	for (size_t i = 0; cg_ctrls[i]; i++)
		if (!have || !word_in(have, cg_ctrls[i]))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 "%s%s", missing[0] ? " " : "", cg_ctrls[i]);
	if (missing[0]) {
		snprintf(state, len, "unavailable: cgroup v2 at %s lacks the %s controller(s) "
			 "(on cgroup v1 or not enabled)", base ? base : mnt, missing);
		goto out;
	}
	rc = subtree_enable(base);
	if (rc) {
		snprintf(state, len, "unavailable: cannot enable memory, cpu, pids below %s: %s",
			 base, strerror(-rc));
		goto out;
	}
	*dir = str_printf("%s/%s", base, sub);
	if (*dir && mkdir(*dir, 0755) < 0 && errno != EEXIST)
		rc = -errno;
	if (rc == 0 && *dir)
		rc = subtree_enable(*dir);
	if (rc || *dir == NULL) {
		snprintf(state, len, "unavailable: cannot set up %s: %s", *dir ? *dir : sub,
			 strerror(rc ? -rc : ENOMEM));
		free(*dir);
		*dir = NULL;
		goto out;
	}
	snprintf(state, len, "in force under %s", *dir);
out:
	free(mnt);
	free(base);
	free(ctl);
	free(have);
	return rc;
}

int
cgroup_server(const char *dir, const char *slug, long long mem, long long cpu_us,
	      long long pids, char **path, char **err)
{
	char mbuf[32] = "max", cbuf[48] = "max 100000", pbuf[32] = "max";
	char *p = str_printf("%s/%s", dir, slug);
	int rc = 0;

	if (p == NULL)
		return err_set(err, -ENOMEM, "out of memory");
	if (mem > 0)
		snprintf(mbuf, sizeof(mbuf), "%lld", mem);
	if (cpu_us > 0)
		snprintf(cbuf, sizeof(cbuf), "%lld 100000", cpu_us);
	if (pids > 0)
		snprintf(pbuf, sizeof(pbuf), "%lld", pids);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		rc = err_set(err, -errno, "create cgroup %s: %s", p, strerror(errno));
	if (rc == 0 && ((rc = file_put(p, "memory.max", mbuf)) ||
			(rc = file_put(p, "cpu.max", cbuf)) ||
			(rc = file_put(p, "pids.max", pbuf))))
		err_set(err, rc, "set limits of cgroup %s: %s", p, strerror(-rc));
	if (rc) {
		free(p);
		return rc;
	}
	*path = p;
	return 0;
}
