/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: one trust domain per server. serve assigns each server a uid/gid of its own
 * (stable per name, so its files survive restarts), makes its HOME, and prepares what the
 * forked child applies to itself before exec: its cgroup, no groups, no capabilities in any
 * set, its uid, no_new_privs and its Landlock view. A server with "runAs": "root" is not
 * isolated: it runs as root, with the gateway's environment, no view and no limits.
 */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/securebits.h>

#include "base/files.h"
#include "base/log.h"
#include "base/str.h"
#include "config/config.h"
#include "isolate/isolate.h"

extern char **environ;

/* Serve-wide: set once by iso_setup() before any server starts, read-only after. */
static struct {
	int ll_abi;		/* > 0: Landlock in force with this ABI */
	char ll_state[192];
	char *cg_dir;		/* the gateway's cgroup, NULL: no limits */
	char cg_state[256];
	char **ro_paths;
	long long mem, cpu_us, pids;
	uid_t uid_lo, uid_hi;
} iso;

static const char *const iso_system_ro[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/proc", "/sys", "/run", NULL,
};

/*
 * The launcher and serve: not dumpable, so no server can ptrace us or read our memory,
 * environ or fds through /proc (only root can); and jansson's blocks blanked on free.
 */
void
iso_self_protect(void)
{
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	jansson_scrub_frees();
}

/* FNV-1a: a uid that depends on the name alone, so it survives restarts and config edits. */
uid_t
iso_uid_pick(const char *name, uid_t lo, uid_t hi, bool (*taken)(uid_t, void *), void *ctx)
{
	uint32_t h = 2166136261u, span = hi - lo + 1;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	for (uint32_t i = 0; i < span; i++) {
		uid_t u = lo + (h + i) % span;

		if (!taken(u, ctx))
			return u;
	}
	return (uid_t)-1;
}

struct pick_ctx {
	const struct server_spec *v;
	size_t n;
};

/* The image's own users and groups, and the servers already placed, are never reused. */
static bool
uid_taken(uid_t u, void *arg)
{
	const struct pick_ctx *c = arg;

	if (getpwuid(u) != NULL || getgrgid((gid_t)u) != NULL)
		return true;
	for (size_t i = 0; i < c->n; i++)
		if (!c->v[i].root && c->v[i].uid == u)
			return true;
	return false;
}

static uid_t tree_uid;
static gid_t tree_gid;

/*
 * The tree was its old owner's to shape: symlinks are changed themselves (lchown, never
 * followed), and a file with other hard links is skipped, since one of them may be a file
 * of the system that the old owner linked in.
 */
static int
tree_chown_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)flag;
	(void)f;
	if (S_ISREG(st->st_mode) && st->st_nlink > 1)
		return 0;
	return lchown(p, tree_uid, tree_gid) < 0 ? -1 : 0;
}

/* A HOME or clone left by another owner (an earlier range) becomes this server's. */
static int
tree_chown(const char *path, uid_t uid, gid_t gid)
{
	tree_uid = uid;
	tree_gid = gid;
	return nftw(path, tree_chown_one, 32, FTW_PHYS | FTW_MOUNT) < 0 ? -errno : 0;
}

/* A directory of the server's own: created, or taken over if it was someone else's. */
static int
own_dir(const char *path, uid_t uid, gid_t gid, mode_t mode, char **err)
{
	struct stat st;

	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return err_set(err, -errno, "create %s: %s", path, strerror(errno));
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(err, -ENOTDIR, "%s is not a directory", path);
	if ((st.st_uid != uid || st.st_gid != gid) && tree_chown(path, uid, gid) < 0)
		return err_set(err, -errno, "chown %s: %s", path, strerror(errno));
	if (chmod(path, mode) < 0)
		return err_set(err, -errno, "chmod %s: %s", path, strerror(errno));
	return 0;
}

static char *
home_slug(const char *name)
{
	char *s = str_printf("%s%s", name[0] == '.' ? "_" : "", name);

	for (char *p = s; p && *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			*p = '_';
	return s;
}

/*
 * A declared path: made for the server when missing; an existing one keeps its owner, unless
 * that is a uid of our range (we made it for a server, and uids move when a config gains a
 * server whose name takes a uid first): then it follows the server that declares it.
 */
static void
rw_path_prepare(const struct server_spec *s, const char *p)
{
	struct stat st;
	char *m = NULL;

	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid != s->uid &&
	    st.st_uid >= iso.uid_lo && st.st_uid <= iso.uid_hi) {
		if (own_dir(p, s->uid, s->gid, st.st_mode & 07777, &m) == 0)
			return;
		log_warn("cannot take over a declared path", "server=%s path=%s error=\"%s\"",
			 s->name, p, m ? m : "");
		free(m);
		return;
	}

	if (stat(p, &st) < 0 && errno == ENOENT) {
		if (path_parent_make(p, 0755) == 0 && own_dir(p, s->uid, s->gid, 0700, &m) == 0)
			return;
		log_warn("cannot create a declared path", "server=%s path=%s error=\"%s\"",
			 s->name, p, m ? m : strerror(errno));
		free(m);
		return;
	}
	if (!(st.st_uid == s->uid || (st.st_mode & S_IWOTH) ||
	      (st.st_gid == s->gid && (st.st_mode & S_IWGRP))))
		log_warn("a declared path is not writable by the server's user; the gateway "
			 "does not change the owner of existing files", "server=%s path=%s "
			 "uid=%u owner=%u", s->name, p, (unsigned)s->uid, (unsigned)st.st_uid);
}

static int
server_prepare(struct server_spec *s, const char *home_root, char **err)
{
	char *slug = home_slug(s->name), *tmp = NULL;
	int rc;

	s->home = slug ? str_printf("%s/%s", home_root, slug) : NULL;
	tmp = s->home ? str_printf("%s/.tmp", s->home) : NULL;
	if (tmp == NULL) {
		rc = err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = own_dir(s->home, s->uid, s->gid, 0700, err);
	if (rc == 0)
		rc = own_dir(tmp, s->uid, s->gid, 0700, err);
	if (rc == 0 && s->repo) {
		struct stat st;

		if (lstat(s->dir, &st) == 0 && S_ISDIR(st.st_mode) &&
		    (st.st_uid != s->uid || st.st_gid != s->gid))
			rc = own_dir(s->dir, s->uid, s->gid, 0700, err);
	}
	for (size_t i = 0; rc == 0 && s->rw_paths && s->rw_paths[i]; i++)
		rw_path_prepare(s, s->rw_paths[i]);
	if (rc == 0 && iso.cg_dir)
		rc = cgroup_server(iso.cg_dir, slug, iso.mem, iso.cpu_us, iso.pids, &s->cgroup,
				   err);
out:
	free(slug);
	free(tmp);
	return rc;
}

/* Every directory above the HOMEs must let other users through, or no server reaches its own. */
static int
home_root_check(const char *root, char **err)
{
	char *p = strdup(root), *slash;
	struct stat st;
	int rc = 0;

	while (p && rc == 0 && (slash = strrchr(p, '/')) != NULL) {
		if (stat(*p ? p : "/", &st) == 0 && !(st.st_mode & S_IXOTH))
			rc = err_set(err, -EACCES, "--servers-home %s: %s (mode %04o) does not let "
				     "other users through, so no server could reach its HOME",
				     root, *p ? p : "/", (unsigned)(st.st_mode & 07777));
		*slash = '\0';
	}
	free(p);
	return rc;
}

static void
detect(const struct iso_opts *o, bool isolated)
{
	int abi = o->landlock ? landlock_abi_get() : 0;

	iso.ll_abi = abi > 0 ? abi : 0;
	if (!o->landlock)
		snprintf(iso.ll_state, sizeof(iso.ll_state), "off (--landlock=false)");
	else if (abi > 0)
		snprintf(iso.ll_state, sizeof(iso.ll_state), "in force, ABI %d", abi);
	else
		snprintf(iso.ll_state, sizeof(iso.ll_state), "unavailable: %s%s",
			 strerror(-abi), abi == -EOPNOTSUPP ? " (Landlock is disabled at boot)" :
			 abi == -ENOSYS ? " (the kernel has no Landlock)" : "");
	free(iso.cg_dir);
	iso.cg_dir = NULL;
	if (!o->cgroup)
		snprintf(iso.cg_state, sizeof(iso.cg_state), "off (--cgroup-limits=false)");
	else if (!isolated)
		snprintf(iso.cg_state, sizeof(iso.cg_state), "unused: no isolated server");
	else
		cgroup_setup("mcp-gateway", iso.cg_state, sizeof(iso.cg_state), &iso.cg_dir);
}

int
iso_setup(const struct iso_opts *o, struct server_spec *v, size_t n, char **err)
{
	struct pick_ctx pc = {v, 0};
	bool isolated = false;
	uid_t lo, hi;
	int rc;

	rc = iso_opts_check(o, err);
	if (rc)
		return rc;
	iso_range_parse(o->uid_range, &lo, &hi);
	iso.uid_lo = lo;
	iso.uid_hi = hi;
	iso_size_parse(o->memory, &iso.mem);
	iso_cpus_parse(o->cpus, &iso.cpu_us);
	iso.pids = o->pids > 0 ? o->pids : -1;
	strv_free(iso.ro_paths);
	iso.ro_paths = strv_dup((char *const *)iso_system_ro);
	for (char *p = o->read_paths, *q; p && *p; p = q) {
		size_t len = strcspn(p, ",");
		char *one = strndup(p, len);

		q = p[len] ? p + len + 1 : p + len;
		if (one && *one)
			strv_push(&iso.ro_paths, one);
		free(one);
	}
	for (size_t i = 0; i < n && !isolated; i++)
		isolated = !v[i].root;
	if (isolated && geteuid() != 0)
		return err_set(err, -EPERM, "giving each MCP server a user of its own needs root; "
			       "run mcp-gateway as root, or give every server \"runAs\": \"root\" "
			       "to run it unisolated, as this user");
	detect(o, isolated);
	log_info("server isolation", "landlock=\"%s\" cgroup=\"%s\" uids=%s", iso.ll_state,
		 iso.cg_state, o->uid_range);
	/* Nothing is made on the system for a gateway without isolated servers. */
	if (isolated) {
		rc = dir_make_parents(o->home_root, 0755);
		if (rc == 0 && chmod(o->home_root, 0711) < 0)
			rc = -errno;
		if (rc)
			return err_set(err, rc, "create %s: %s", o->home_root, strerror(-rc));
		if (home_root_check(o->home_root, err))
			return -EACCES;
	}
	for (size_t i = 0; i < n; i++, pc.n = i) {
		struct server_spec *s = &v[i];

		if (s->root) {
			log_warn("SERVER RUNS AS ROOT, NOT ISOLATED (runAs: root): it can read "
				 "every other server's envs and the token", "server=%s", s->name);
			continue;
		}
		s->uid = iso_uid_pick(s->name, lo, hi, uid_taken, &pc);
		s->gid = (gid_t)s->uid;
		if (s->uid == (uid_t)-1)
			return err_set(err, -ENOSPC, "no free uid left in --server-uid-range %s",
				       o->uid_range);
		for (size_t j = 0; j < i; j++) {
			char *a = home_slug(v[j].name), *b = home_slug(s->name);
			bool same = a && b && strcmp(a, b) == 0;

			free(a);
			free(b);
			if (same)
				return err_set(err, -EEXIST, "mcp servers \"%s\" and \"%s\" would "
					       "share one HOME; rename one", v[j].name, s->name);
		}
		rc = server_prepare(s, o->home_root, err);
		if (rc)
			return rc;
		log_info("server user", "server=%s uid=%u home=%s cgroup=%s", s->name,
			 (unsigned)s->uid, s->home, s->cgroup ? s->cgroup : "none");
	}
	return 0;
}

/*
 * mcp-gateway pull, at template build time: the install runs as root (a template's own
 * commands may install globally) but with the server's future HOME, which is handed to the
 * server's user afterwards, so what npm or uv cached there is its own at run time.
 */
int
iso_pull_home(const struct iso_opts *o, const char *name, char **home, uid_t *uid,
	      char **err)
{
	struct server_spec s = {0};
	struct pick_ctx pc = {NULL, 0};
	uid_t lo, hi;
	int rc = iso_opts_check(o, err);

	if (rc)
		return rc;
	iso_range_parse(o->uid_range, &lo, &hi);
	s.name = (char *)name;
	s.uid = iso_uid_pick(name, lo, hi, uid_taken, &pc);
	if (s.uid == (uid_t)-1)
		return err_set(err, -ENOSPC, "no free uid left in --server-uid-range %s",
			       o->uid_range);
	s.gid = (gid_t)s.uid;
	rc = dir_make_parents(o->home_root, 0755);
	if (rc == 0 && chmod(o->home_root, 0711) < 0)
		rc = -errno;
	if (rc)
		return err_set(err, rc, "create %s: %s", o->home_root, strerror(-rc));
	rc = server_prepare(&s, o->home_root, err);
	if (rc == 0) {
		*home = s.home;
		*uid = s.uid;
	} else {
		free(s.home);
	}
	free(s.cgroup);
	return rc;
}

int
iso_pull_done(const char *home, uid_t uid)
{
	return tree_chown(home, uid, (gid_t)uid);
}

/* The servers' cgroups go with the gateway (rmdir: only empty ones, a busy one stays). */
void
iso_cleanup(const struct server_spec *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].cgroup)
			rmdir(v[i].cgroup);
	if (iso.cg_dir)
		rmdir(iso.cg_dir);
}

void
iso_reset(void)
{
	strv_free(iso.ro_paths);
	free(iso.cg_dir);
	memset(&iso, 0, sizeof(iso));
}

json_t *
iso_report(const struct server_spec *v, size_t n)
{
	json_t *servers = json_object();

	for (size_t i = 0; i < n; i++) {
		json_t *one = v[i].root ?
			json_pack("{s:s,s:i}", "runAs", "root", "uid", 0) :
			json_pack("{s:s,s:I}", "runAs", "isolated", "uid", (json_int_t)v[i].uid);

		json_object_set_new(servers, v[i].name, one);
	}
	return json_pack("{s:{s:b,s:s},s:{s:b,s:s},s:o}",
			 "landlock", "inForce", iso.ll_abi > 0, "detail", iso.ll_state,
			 "cgroup", "inForce", iso.cg_dir != NULL, "detail", iso.cg_state,
			 "servers", servers);
}

/* The variables a server may see of ours: nothing that describes the gateway or its caller. */
static bool
env_has_key(char *const *extra, const char *kv)
{
	size_t klen = strcspn(kv, "=");
	size_t i;

	for (i = 0; extra && extra[i]; i++)
		if (strncmp(extra[i], kv, klen) == 0 && extra[i][klen] == '=')
			return true;
	return false;
}

/*
 * The environment a child sees: ours minus the access token (absent, not empty), with the
 * server's own variables replacing inherited ones of the same name.
 */
char **
env_build(char *const *extra)
{
	static const char tok[] = GW_TOKEN_ENV "=";
	char **env = NULL;
	size_t i;

	for (i = 0; environ && environ[i]; i++) {
		if (strncmp(environ[i], tok, sizeof(tok) - 1) == 0)
			continue;
		if (env_has_key(extra, environ[i]))
			continue;
		if (strv_push(&env, environ[i]))
			goto fail;
	}
	for (i = 0; extra && extra[i]; i++) {
		if (strncmp(extra[i], tok, sizeof(tok) - 1) == 0)
			continue;
		if (strv_push(&env, extra[i]))
			goto fail;
	}
	if (env == NULL)
		env = calloc(1, sizeof(*env));
	return env;
fail:
	strv_free(env);
	return NULL;
}

static bool
env_passed(const char *kv)
{
	static const char *const keep[] = {"PATH=", "LANG=", "LANGUAGE=", "TERM=", "TZ=", NULL};

	if (strncmp(kv, "LC_", 3) == 0)
		return true;
	for (size_t i = 0; keep[i]; i++)
		if (strncmp(kv, keep[i], strlen(keep[i])) == 0)
			return true;
	return false;
}

char **
iso_env(const struct server_spec *s)
{
	char **base = NULL, **env;
	bool path = false;

	if (s->root)
		return env_build(s->env);
	for (size_t i = 0; environ && environ[i]; i++) {
		if (!env_passed(environ[i]))
			continue;
		path |= strncmp(environ[i], "PATH=", 5) == 0;
		strv_push(&base, environ[i]);
	}
	if (!path)
		strv_push(&base, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
			  "/sbin:/bin");
	{
		char *home = str_printf("HOME=%s", s->home ? s->home : "/");
		char *tmp = str_printf("TMPDIR=%s/.tmp", s->home ? s->home : "");

		strv_push(&base, home);
		strv_push(&base, tmp);
		free(home);
		free(tmp);
	}
	for (size_t i = 0; s->env && s->env[i]; i++)
		if (strncmp(s->env[i], GW_TOKEN_ENV "=", sizeof(GW_TOKEN_ENV)) != 0)
			strv_push(&base, s->env[i]);
	/* Later entries win: the server's own envs override the base. */
	env = NULL;
	for (size_t i = 0; base && base[i]; i++) {
		size_t k = strcspn(base[i], "=") + 1;
		bool later = false;

		for (size_t j = i + 1; base[j] && !later; j++)
			later = strncmp(base[i], base[j], k) == 0;
		if (!later)
			strv_push(&env, base[i]);
	}
	strv_free_secure(base);
	return env ? env : calloc(1, sizeof(char *));
}

char **
iso_secrets(const struct server_spec *s)
{
	char **v = NULL;

	for (size_t i = 0; s->env && s->env[i]; i++) {
		const char *val = strchr(s->env[i], '=');

		if (val && strlen(val + 1) >= 8)
			strv_push(&v, val + 1);
	}
	return v;
}

/* The Landlock ruleset of server s: the system, the read paths, its view, what it may write. */
static int
iso_child_ruleset(const struct server_spec *s, struct iso_child *c, char **err)
{
	char **rw = NULL, **ro = strv_dup(iso.ro_paths), **env = iso_env(s), *parent = NULL;
	int rc = 0;

	strv_push(&rw, s->home);
	/* A clone is made in "<dir>.partial" next to it, then renamed into place. */
	if (s->repo && (parent = strdup(s->dir)) && strrchr(parent, '/')) {
		*strrchr(parent, '/') = '\0';
		strv_push(&rw, parent);
	}
	for (size_t i = 0; s->rw_paths && s->rw_paths[i]; i++)
		strv_push(&rw, s->rw_paths[i]);
	rc = view_plan(&c->view, s, env, iso.ro_paths, &ro, &rw, err);
	if (!rc && iso.ll_abi > 0) {
		rc = landlock_ruleset(iso.ll_abi, ro, rw, err);
		c->ruleset_fd = rc < 0 ? -1 : rc;
		rc = rc < 0 ? rc : 0;
	}
	strv_free(rw);
	strv_free(ro);
	strv_free_secure(env);
	free(parent);
	return rc;
}

int
iso_child_open(const struct server_spec *s, struct iso_child *c, char **err)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->ruleset_fd = -1;
	c->cgroup_fd = -1;
	if (s->root)
		return 0;
	c->active = true;
	c->uid = s->uid;
	c->gid = s->gid;
	rc = iso_child_ruleset(s, c, err);
	if (rc) {
		iso_child_close(c);
		return rc;
	}
	if (s->cgroup) {
		char *p = str_printf("%s/cgroup.procs", s->cgroup);

		c->cgroup_fd = p ? open(p, O_WRONLY | O_CLOEXEC) : -1;
		if (c->cgroup_fd < 0) {
			rc = err_set(err, -errno, "open %s: %s", p ? p : "cgroup",
				     strerror(errno));

			free(p);
			iso_child_close(c);
			return rc;
		}
		free(p);
	}
	return 0;
}

void
iso_child_close(struct iso_child *c)
{
	if (c->ruleset_fd >= 0)
		close(c->ruleset_fd);
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	c->ruleset_fd = -1;
	c->cgroup_fd = -1;
	view_free(&c->view);
}

/* Drops every capability from the bounding and ambient sets while we still may. */
static int
caps_bounding_drop(void)
{
	for (int cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL)
			break;
		return errno;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return errno;
	return 0;
}

/*
 * Raw syscalls: glibc's set*id() would try to signal the parent's other threads, which the
 * child does not have. The order matters: groups and the bounding set need our capabilities,
 * the uid change loses them, and Landlock wants no_new_privs first.
 */
int
iso_child_apply(const struct iso_child *c, int *stage)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	int e;

	if (c == NULL || !c->active)
		return 0;
	memset(data, 0, sizeof(data));
	*stage = ISO_STAGE_CGROUP;
	if (c->cgroup_fd >= 0 && write(c->cgroup_fd, "0", 1) != 1)
		return errno;
	/* Mounts need the capabilities the next steps drop. */
	*stage = ISO_STAGE_VIEW;
	e = view_apply(&c->view);
	if (e)
		return e;
	*stage = ISO_STAGE_GROUPS;
	if (syscall(SYS_setgroups, 0, NULL) < 0 ||
	    syscall(SYS_setresgid, c->gid, c->gid, c->gid) < 0)
		return errno;
	*stage = ISO_STAGE_CAPS;
	/* Locked: no later exec of a setuid-root file, by anyone in the tree, gives caps back. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED, 0, 0, 0) < 0)
		return errno;
	e = caps_bounding_drop();
	if (e)
		return e;
	*stage = ISO_STAGE_UID;
	if (syscall(SYS_setresuid, c->uid, c->uid, c->uid) < 0)
		return errno;
	*stage = ISO_STAGE_CAPS;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return errno;
	*stage = ISO_STAGE_NNP;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	*stage = ISO_STAGE_LANDLOCK;
	if (c->ruleset_fd >= 0 && syscall(SYS_landlock_restrict_self, c->ruleset_fd, 0) < 0)
		return errno;
	return 0;
}

const char *
iso_stage_name(int stage)
{
	switch (stage) {
	case ISO_STAGE_CGROUP:
		return "join its cgroup";
	case ISO_STAGE_VIEW:
		return "make its view of closed directories (a mount namespace)";
	case ISO_STAGE_GROUPS:
		return "set its groups";
	case ISO_STAGE_CAPS:
		return "drop capabilities";
	case ISO_STAGE_UID:
		return "set its uid";
	case ISO_STAGE_NNP:
		return "set no_new_privs";
	case ISO_STAGE_LANDLOCK:
		return "enter its Landlock view";
	default:
		return NULL;
	}
}

/* GitHub servers work in their clone; everything else isolated works in its HOME. */
const char *
iso_cwd(const struct server_spec *s)
{
	if (s->root || s->repo || s->home == NULL)
		return s->dir;
	return s->home;
}
