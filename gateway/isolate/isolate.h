/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: every server in a trust domain of its own (isolate.c, isoflags.c,
 * landlock.c, cgroup.c): its own uid/gid, HOME and working directory, a clean environment,
 * no capabilities, and where the kernel has them a Landlock view of the filesystem and
 * cgroup v2 limits.
 */
#ifndef GW_ISOLATE_H
#define GW_ISOLATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "base/flags.h"

/* The access token travels in it from the launcher to serve; no child ever sees it. */
#define GW_TOKEN_ENV		"GATEWAY_ACCESS_TOKEN"

struct server_spec;

/* Defaults: between login.defs' UID_MAX (60000) and systemd's dynamic users (61184). */
#define ISO_UID_RANGE		"60100-61099"
#define ISO_HOME_ROOT		"/var/lib/mcp-gateway/home"
#define ISO_MEMORY		"2G"
#define ISO_CPUS		"1"
#define ISO_PIDS		1024

/* The flags, as both the launcher and serve take them (the launcher hands them on). */
struct iso_opts {
	char *uid_range;
	char *home_root;
	char *read_paths;	/* comma-separated, read-only in every server's view */
	bool landlock;
	bool cgroup;
	char *memory;
	char *cpus;
	long long pids;
};

#define ISO_FLAGS(o) \
	{"server-uid-range", FLAG_STRING, &(o).uid_range, "uids (and gids) servers run as, " \
	 "one per server, stable per name (default " ISO_UID_RANGE ")", false}, \
	{"servers-home", FLAG_STRING, &(o).home_root, "where each server's HOME and working " \
	 "directory is made (default " ISO_HOME_ROOT ")", false}, \
	{"server-read-paths", FLAG_STRING, &(o).read_paths, "comma-separated paths every " \
	 "server may read besides the system directories (Landlock)", false}, \
	{"landlock", FLAG_BOOL, &(o).landlock, "give each server a Landlock view of the " \
	 "filesystem where the kernel has Landlock (default true)", false}, \
	{"cgroup-limits", FLAG_BOOL, &(o).cgroup, "put each server in a cgroup v2 of its own " \
	 "with limits where the kernel allows (default true)", false}, \
	{"server-memory", FLAG_STRING, &(o).memory, "memory.max of each server: bytes with " \
	 "K/M/G, or max (default " ISO_MEMORY ")", false}, \
	{"server-cpus", FLAG_STRING, &(o).cpus, "CPUs each server may use: a number, or max " \
	 "(default " ISO_CPUS ")", false}, \
	{"server-pids", FLAG_INT, &(o).pids, "pids.max of each server; 0 means max " \
	 "(default 1024)", false}

void iso_self_protect(void);
void iso_opts_init(struct iso_opts *o);
void iso_opts_fini(struct iso_opts *o);
/* Checks the values (the launcher does so before it touches the system). */
int iso_opts_check(const struct iso_opts *o, char **err);
/* Appends the flags to serve's argv. */
int iso_opts_argv(const struct iso_opts *o, char ***argv);

/*
 * serve: reads the flags, detects Landlock and cgroup v2 and assigns every isolated server
 * its uid, HOME and cgroup (creating them). Logs what is in force.
 */
int iso_setup(const struct iso_opts *o, struct server_spec *v, size_t n, char **err);
/* What /health shows: what is in force and each server's user. */
json_t *iso_report(const struct server_spec *v, size_t n);
/* pull: the HOME a catalog server will have, made for its install; handed over after. */
int iso_pull_home(const struct iso_opts *o, const char *name, char **home, uid_t *uid,
		  char **err);
int iso_pull_done(const char *home, uid_t uid);
/* At exit: removes the servers' cgroups (all of them are stopped by then). */
void iso_cleanup(const struct server_spec *v, size_t n);
/* Forgets the serve-wide state (unit tests call iso_setup more than once). */
void iso_reset(void);

/* uid for a name in [lo, hi], stable; taken(uid, ctx) says a uid is not free. */
uid_t iso_uid_pick(const char *name, uid_t lo, uid_t hi, bool (*taken)(uid_t, void *),
		   void *ctx);
int iso_range_parse(const char *s, uid_t *lo, uid_t *hi);
/* "2G", "512M", "max" (-1). */
int iso_size_parse(const char *s, long long *bytes);
/* "1", "0.5", "max" (-1): CPU time per 100 ms period, in microseconds. */
int iso_cpus_parse(const char *s, long long *quota_us);

/* Where it runs: its clone (GitHub), else its HOME; a root server runs in its "dir". */
const char *iso_cwd(const struct server_spec *s);
/* A child's environment: ours (the token removed) with extra "K=V" entries over it. */
char **env_build(char *const *extra);
/* The environment of a server or its install: a clean base plus its own envs. */
char **iso_env(const struct server_spec *s);
/* Values of its envs long enough to mask in the log (8 characters or more). */
char **iso_secrets(const struct server_spec *s);

/*
 * A server's mount namespace (view.c): each directory closed to its user on the way to a path
 * its command names is covered by a tmpfs holding only the entries bound into it.
 */
#define VIEW_MAX	16
struct view_bind {
	char *target;		/* the entry's path, the same inside the view */
	bool rw, file;
};
struct iso_view {
	unsigned n, ncover;
	struct view_bind b[VIEW_MAX];
	char *cover[VIEW_MAX];
};

/*
 * Parent: the view of server s from its command line (resolved with env), read_paths and its
 * declared paths; each entry bound is appended to ro or rw (its Landlock rules).
 */
int view_plan(struct iso_view *v, const struct server_spec *s, char *const *env,
	      char *const *read_paths, char ***ro, char ***rw, char **err);
/* Child, as root still: 0 or an errno value. Nothing for an empty view. */
int view_apply(const struct iso_view *v);
void view_free(struct iso_view *v);
/*
 * What lets server s read path, which it said it was denied: "; it could not read P ...",
 * for the reason its start failed.
 */
void iso_denied_hint(const struct server_spec *s, const char *path, char *out, size_t len);

/* What a child applies to itself between fork and exec; prepared by the parent. */
struct iso_child {
	bool active;
	uid_t uid;
	gid_t gid;
	int ruleset_fd;		/* Landlock ruleset, -1 without */
	int cgroup_fd;		/* the server cgroup's cgroup.procs, -1 without */
	struct iso_view view;
};

/* Steps of iso_child_apply, for the error the parent reports. */
enum iso_stage {
	ISO_STAGE_CGROUP = 1,
	ISO_STAGE_VIEW,
	ISO_STAGE_GROUPS,
	ISO_STAGE_CAPS,
	ISO_STAGE_UID,
	ISO_STAGE_NNP,
	ISO_STAGE_LANDLOCK,
};

int iso_child_open(const struct server_spec *s, struct iso_child *c, char **err);
void iso_child_close(struct iso_child *c);
/* In the forked child: async-signal-safe syscalls only. Returns 0 or an errno value. */
int iso_child_apply(const struct iso_child *c, int *stage);
const char *iso_stage_name(int stage);

/* landlock.c */
int landlock_abi_get(void);
/* A ruleset fd for the server's view, or a negative errno. */
int landlock_ruleset(int abi, char *const *ro, char *const *rw, char **err);

/* cgroup.c */
int cgroup_setup(const char *sub, char *state, size_t len, char **dir);
int cgroup_server(const char *dir, const char *slug, long long mem, long long cpu_us,
		  long long pids, char **path, char **err);

#endif /* GW_ISOLATE_H */
