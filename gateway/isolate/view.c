/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a server's command needs from directories closed to its user (issue 37). A template
 * installs servers as its author does, as root: scripts under /root or a home directory, an
 * npm prefix in root's home, uv's tools there. Those directories (0700) keep every other user
 * out, the server's own too, and Landlock can only take rights away. So such a server gets a
 * mount namespace of its own in which each closed directory on the way is an empty tmpfs
 * holding only the entries its command line names, bound from the original at the same path,
 * read-only (the way systemd's ProtectHome=tmpfs with BindReadOnlyPaths= does); a declared path
 * it may write is bound writable. Nothing else of those directories is there, and nothing of
 * root's is changed. A server whose paths are all reachable gets no namespace at all.
 *
 * The entry bound is the one right below the closed directory: for /root/srv/server.js it is
 * /root/srv, so the script's package (node_modules beside it) comes along. The files in it
 * keep their own modes: a file only root may read stays unreadable.
 *
 * Planned in the parent (allocations, stat, realpath); the forked child only makes syscalls
 * (view_apply()).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/str.h"
#include "config/config.h"
#include "isolate/isolate.h"
#include "isolate/proc.h"

/* Whether uid (with gid, no other groups) may not pass through directory d. */
static bool
dir_closed(const char *d, uid_t uid, gid_t gid)
{
	struct stat st;

	if (stat(d, &st) || !S_ISDIR(st.st_mode))
		return false;
	if (st.st_uid == uid)
		return !(st.st_mode & S_IXUSR);
	if (st.st_gid == gid)
		return !(st.st_mode & S_IXGRP);
	return !(st.st_mode & S_IXOTH);
}

/*
 * For resolved path p: its outermost ancestor closed to the server into *cover, and the
 * entry right below it (returned, malloc'd). NULL when every ancestor lets the server pass.
 */
static char *
view_entry(const char *p, uid_t uid, gid_t gid, char **cover)
{
	char *d = strdup(p), *slash, *next;

	if (d == NULL)
		return NULL;
	for (slash = strchr(d + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (dir_closed(d, uid, gid)) {
			*cover = strdup(d);
			*slash = '/';
			next = strchr(slash + 1, '/');
			if (next)
				*next = '\0';
			return d;
		}
		*slash = '/';
	}
	free(d);
	return NULL;
}

static bool
view_has(char *const *v, unsigned n, const char *s)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/*
 * Path (any spelling) into the view when a closed directory is on its way; its entry also
 * into *ll (the Landlock list of its kind). A path that does not exist is no error: the
 * server says so itself when it needs it.
 */
static int
view_add(struct iso_view *v, const struct server_spec *s, const char *path, bool rw,
	 char ***ll)
{
	char real[PATH_MAX], *cover = NULL, *entry;
	struct view_bind *b;
	struct stat st;

	if (path == NULL || path[0] != '/' || realpath(path, real) == NULL)
		return 0;
	entry = view_entry(real, s->uid, s->gid, &cover);
	if (entry == NULL)
		return 0;
	for (unsigned i = 0; i < v->n; i++) {
		if (strcmp(v->b[i].target, entry) == 0) {
			v->b[i].rw |= rw;
			free(entry);
			free(cover);
			return 0;
		}
	}
	if (v->n == VIEW_MAX || stat(entry, &st)) {
		int rc = v->n == VIEW_MAX ? -E2BIG : -errno;

		free(entry);
		free(cover);
		return rc;
	}
	b = &v->b[v->n];
	b->target = entry;
	b->rw = rw;
	b->file = !S_ISDIR(st.st_mode);
	v->n++;
	if (!view_has(v->cover, v->ncover, cover))
		v->cover[v->ncover++] = cover;
	else
		free(cover);
	strv_push(ll, entry);
	return 0;
}

/*
 * One word of a command line: an absolute path, a path after "=" (VAR=/p, --flag=/p), or a
 * bare command name as PATH resolves it (a bin directory in root's home).
 */
static int
view_word(struct iso_view *v, const struct server_spec *s, char *const *env, const char *w,
	  char ***ro)
{
	const char *eq = strchr(w, '=');
	char *cmd;
	int rc;

	if (w[0] == '/')
		return view_add(v, s, w, false, ro);
	if (eq && eq[1] == '/')
		return view_add(v, s, eq + 1, false, ro);
	if (w[0] == '\0' || strchr(w, '/') || eq)
		return 0;
	cmd = exec_lookup(w, env);
	rc = view_add(v, s, cmd, false, ro);
	free(cmd);
	return rc;
}

/*
 * The words of a runCmd shell line, unquoted as sh would ('...', "...", backslash), split at
 * blanks and at ; | & ( ) < >. A word of ours is only ever a path to look at, never run.
 */
static int
view_line(struct iso_view *v, const struct server_spec *s, char *const *env, const char *line,
	  char ***ro)
{
	char *w = malloc(strlen(line) + 1), q = 0;
	size_t n = 0;
	int rc = 0;

	if (w == NULL)
		return -ENOMEM;
	for (const char *p = line;; p++) {
		if (*p && q && *p != q) {
			w[n++] = *p == '\\' && q == '"' && p[1] ? *++p : *p;
		} else if (*p && q) {
			q = 0;
		} else if (*p == '\'' || *p == '"') {
			q = *p;
		} else if (*p == '\\' && p[1]) {
			w[n++] = *++p;
		} else if (*p && !strchr(" \t\n;|&()<>", *p)) {
			w[n++] = *p;
		} else {
			w[n] = '\0';
			if (n && (rc = view_word(v, s, env, w, ro)))
				break;
			n = 0;
			if (*p == '\0')
				break;
		}
	}
	free(w);
	return rc;
}

static int
view_command(struct iso_view *v, const struct server_spec *s, char *const *env, char ***ro)
{
	char *const *a = s->argv;
	int rc = 0;

	if (a && a[0] && a[1] && a[2] && !strcmp(a[0], "/bin/sh") && !strcmp(a[1], "-c"))
		return view_line(v, s, env, a[2], ro);
	for (size_t i = 0; !rc && a && a[i]; i++)
		rc = view_word(v, s, env, a[i], ro);
	return rc;
}

int
view_plan(struct iso_view *v, const struct server_spec *s, char *const *env,
	  char *const *read_paths, char ***ro, char ***rw, char **err)
{
	const char *what = "its command line";
	int rc = view_command(v, s, env, ro);

	for (size_t i = 0; !rc && read_paths && read_paths[i]; i++)
		if ((rc = view_add(v, s, read_paths[i], false, ro)))
			what = read_paths[i];
	for (size_t i = 0; !rc && s->rw_paths && s->rw_paths[i]; i++)
		if ((rc = view_add(v, s, s->rw_paths[i], true, rw)))
			what = s->rw_paths[i];
	if (rc)
		return err_set(err, rc, "server %s: cannot give it the paths of %s: %s", s->name,
			       what, rc == -E2BIG ? "more than 16 entries of closed directories" :
			       strerror(-rc));
	return 0;
}

void
view_free(struct iso_view *v)
{
	for (unsigned i = 0; i < v->n; i++)
		free(v->b[i].target);
	for (unsigned i = 0; i < v->ncover; i++)
		free(v->cover[i]);
	memset(v, 0, sizeof(*v));
}

/* "/proc/self/fd/N" without stdio (the forked child may not call it). */
static void
fd_path(int fd, char *buf)
{
	static const char pre[] = "/proc/self/fd/";
	char digits[12];
	int n = 0;

	memcpy(buf, pre, sizeof(pre) - 1);
	buf += sizeof(pre) - 1;
	do {
		digits[n++] = (char)('0' + fd % 10);
		fd /= 10;
	} while (fd);
	while (n)
		*buf++ = digits[--n];
	*buf = '\0';
}

/* Read-only, as a second step: a bind mount takes the flags of its source until remounted. */
static int
view_bind(const struct view_bind *b, int src_fd)
{
	unsigned long ro = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;
	char src[32];
	int fd;

	if (b->file) {
		fd = open(b->target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return errno;
		close(fd);
	} else if (mkdir(b->target, 0755) < 0 && errno != EEXIST) {
		return errno;
	}
	fd_path(src_fd, src);
	if (mount(src, b->target, NULL, MS_BIND | MS_REC, NULL) < 0)
		return errno;
	if (!b->rw && mount(NULL, b->target, NULL, ro, NULL) < 0)
		return errno;
	return 0;
}

/*
 * In the forked child, as root still: a mount namespace that changes nothing outside (its
 * mounts propagate nowhere), each entry opened (in the new namespace: a bind takes its
 * source only from there) before a cover hides its path, the covers, the binds.
 */
int
view_apply(const struct iso_view *v)
{
	const unsigned long cover = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	int fds[VIEW_MAX];

	if (v->n == 0)
		return 0;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return errno;
	for (unsigned i = 0; i < v->n; i++) {
		fds[i] = open(v->b[i].target, O_PATH | O_CLOEXEC);
		if (fds[i] < 0)
			return errno;
	}
	for (unsigned i = 0; i < v->ncover; i++)
		if (mount("tmpfs", v->cover[i], "tmpfs", cover, "mode=0755,size=64k") < 0)
			return errno;
	for (unsigned i = 0; i < v->n; i++) {
		int e = view_bind(&v->b[i], fds[i]);

		close(fds[i]);
		if (e)
			return e;
	}
	return 0;
}

void
iso_denied_hint(const struct server_spec *s, const char *path, char *out, size_t len)
{
	mode_t want = S_IROTH;
	struct stat st;

	if (stat(path, &st)) {
		snprintf(out, len, "; it could not read %s (permission denied)", path);
		return;
	}
	if (st.st_uid == s->uid)
		want = S_IRUSR;
	else if (st.st_gid == s->gid)
		want = S_IRGRP;
	if (!(st.st_mode & want))
		snprintf(out, len, "; it could not read %s (permission denied): its mode %04o "
			 "lets only its owner (uid %u) read it: make it readable by others, or run "
			 "the server with \"runAs\": \"root\"", path, (unsigned)(st.st_mode & 07777),
			 (unsigned)st.st_uid);
	else
		snprintf(out, len, "; it could not read %s (permission denied): it is outside the "
			 "server's view: name it on the server's command line or add it to "
			 "--server-read-paths", path);
}
