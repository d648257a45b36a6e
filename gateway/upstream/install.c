/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: what runs before a server starts: the shallow clone of a GitHub server and
 * its install command, each with its output in the log and in its own process group, so a
 * shutdown can kill the whole tree.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/files.h"
#include "base/log.h"
#include "base/str.h"
#include "config/config.h"
#include "isolate/isolate.h"
#include "isolate/proc.h"
#include "upstream/upstream_int.h"

extern char **environ;

/* Runs a command with its output in the log, in its own group so a shutdown can kill it all. */
int
install_run_logged(struct upstream *u, char *const *argv, const char *cwd, char **err)
{
	struct proc_opts o = {0};
	char **env = iso_env(u->spec), **secrets, sbuf[64];
	int pfd[2], status, rc;
	struct iso_child ic;
	struct pump *p;
	pid_t pid;

	if (env == NULL)
		return err_set(err, -ENOMEM, "out of memory");
	rc = iso_child_open(u->spec, &ic, err);
	if (rc == 0 && pipe2(pfd, O_CLOEXEC) < 0) {
		rc = err_set(err, -errno, "pipe: %s", strerror(errno));
		iso_child_close(&ic);
	}
	if (rc) {
		strv_free_secure(env);
		return rc;
	}
	o.argv = argv;
	o.envp = env;
	o.cwd = cwd;
	o.stdin_fd = -1;
	o.stdout_fd = pfd[1];
	o.stderr_fd = pfd[1];
	o.new_pgrp = true;
	o.iso = &ic;
	rc = proc_spawn(&o, &pid, err);
	iso_child_close(&ic);
	strv_free_secure(env);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		return rc;
	}
	setpgid(pid, pid);
	pgrp_register(pid);
	secrets = iso_secrets(u->spec);
	p = pump_start_masked(pfd[0], u->spec->name, 2, secrets);
	strv_free_secure(secrets);
	if (p == NULL)
		close(pfd[0]);
	proc_wait(pid, &status);
	/* Like the reference, wait for the output to end: background jobs keep it open. */
	pump_wait(p, -1);
	pgrp_unregister(pid);
	if (proc_cancelled())
		return err_set(err, -ECANCELED, "cancelled");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		status_format(status, sbuf, sizeof(sbuf));
		return err_set(err, -EIO, "%s", sbuf);
	}
	return 0;
}

int
install_repo_clone(struct upstream *u, char **err)
{
	const struct server_spec *s = u->spec;
	char *gitdir = str_printf("%s/.git", s->dir);
	char *partial = str_printf("%s.partial", s->dir);
	char *git = exec_lookup("git", environ), *msg = NULL;
	char *argv[] = {"git", "clone", "--depth", "1", s->repo, partial, NULL};
	struct stat st;
	int rc = 0;

	if (gitdir == NULL || partial == NULL) {
		rc = err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (stat(gitdir, &st) == 0)
		goto out;
	if (git == NULL) {
		rc = err_set(err, -ENOENT, "git is required to clone GitHub MCP servers; install "
			     "it in the template");
		goto out;
	}
	rc = path_parent_make(s->dir, 0755);
	if (rc) {
		err_set(err, rc, "create %s: %s", s->dir, strerror(-rc));
		goto out;
	}
	path_remove_all(partial);
	/* The clone is the server's: git runs as its user, into a directory it owns. */
	if (!s->root && (mkdir(partial, 0700) < 0 || chown(partial, s->uid, s->gid) < 0)) {
		rc = err_set(err, -errno, "create %s: %s", partial, strerror(errno));
		goto out;
	}
	log_info("cloning repository", "server=%s repo=%s", s->name, s->repo);
	rc = install_run_logged(u, argv, "/", &msg);
	if (rc) {
		path_remove_all(partial);
		err_set(err, rc, "clone %s: %s", s->repo, msg ? msg : "failed");
		goto out;
	}
	path_remove_all(s->dir);
	if (rename(partial, s->dir) < 0) {
		rc = -errno;
		err_set(err, rc, "clone %s: rename: %s", s->repo, strerror(errno));
		path_remove_all(partial);
	}
out:
	free(msg);
	free(git);
	free(gitdir);
	free(partial);
	return rc;
}
