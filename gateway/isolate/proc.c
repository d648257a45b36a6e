/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: spawning and reaping child processes. */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/str.h"
#include "isolate/isolate.h"
#include "isolate/proc.h"

#define PGRP_MAX 256

static pthread_mutex_t pgrp_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t pgrps[PGRP_MAX];
static bool cancelled;

void
proc_set_cancelled(void)
{
	pthread_mutex_lock(&pgrp_lock);
	cancelled = true;
	pthread_mutex_unlock(&pgrp_lock);
}

bool
proc_cancelled(void)
{
	bool c;

	pthread_mutex_lock(&pgrp_lock);
	c = cancelled;
	pthread_mutex_unlock(&pgrp_lock);
	return c;
}

/*
 * Registering after the group exists leaves a window in which a shutdown could miss it;
 * closing it here (kill right away when a shutdown already started) keeps installs from
 * outliving the gateway.
 */
int
pgrp_register(pid_t pgid)
{
	int i, rc = -ENOSPC;

	pthread_mutex_lock(&pgrp_lock);
	if (cancelled) {
		kill(-pgid, SIGKILL);
		rc = -ECANCELED;
		goto out;
	}
	for (i = 0; i < PGRP_MAX; i++) {
		if (pgrps[i] == 0) {
			pgrps[i] = pgid;
			rc = 0;
			break;
		}
	}
out:
	pthread_mutex_unlock(&pgrp_lock);
	return rc;
}

void
pgrp_unregister(pid_t pgid)
{
	int i;

	pthread_mutex_lock(&pgrp_lock);
	for (i = 0; i < PGRP_MAX; i++)
		if (pgrps[i] == pgid)
			pgrps[i] = 0;
	pthread_mutex_unlock(&pgrp_lock);
}

void
pgrp_kill_all(void)
{
	int i;

	pthread_mutex_lock(&pgrp_lock);
	cancelled = true;
	for (i = 0; i < PGRP_MAX; i++)
		if (pgrps[i] > 0)
			kill(-pgrps[i], SIGKILL);
	pthread_mutex_unlock(&pgrp_lock);
}

static void
child_fd(int src, int dst, int nullfd)
{
	if (src < 0)
		src = nullfd;
	if (src == dst)
		fcntl(dst, F_SETFD, 0);
	else
		dup2(src, dst);
}

static void
child_close_from(int lowfd)
{
	long max, fd;

	if (syscall(SYS_close_range, (unsigned int)lowfd, ~0U, 0) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = lowfd; fd < max; fd++)
		close((int)fd);
}

#define CHILD_STAGE_CHDIR 100

/* What the child tells the parent when it cannot exec: the step (0: exec) and errno. */
struct child_err {
	int stage;
	int err;
};

static void __attribute__((noreturn))
child_fail(int fd, int stage, int e)
{
	struct child_err ce = {stage, e};
	ssize_t n = write(fd, &ce, sizeof(ce));

	(void)n;
	_exit(127);
}

static int
spawn_error(const struct proc_opts *o, const char *path, const struct child_err *ce,
	    char **err)
{
	int rc = -ce->err;

	if (ce->stage == CHILD_STAGE_CHDIR)
		return err_set(err, rc, "chdir %s: %s", o->cwd, strerror(ce->err));
	if (ce->stage)
		return err_set(err, rc, "isolate: %s: %s", iso_stage_name(ce->stage),
			       strerror(ce->err));
	return err_set(err, rc, "fork/exec %s: %s", path, strerror(ce->err));
}

/* In the forked child: signals and fds as the server should see them, isolation, exec. */
static void __attribute__((noreturn))
child_exec(const struct proc_opts *o, const char *path, int nullfd, int errfd)
{
	struct sigaction sa;
	sigset_t all;
	int stage = 0, e, s;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (s = 1; s < NSIG; s++)
		sigaction(s, &sa, NULL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (o->new_pgrp)
		setpgid(0, 0);
	child_fd(o->stdin_fd, 0, nullfd);
	child_fd(o->stdout_fd, 1, nullfd);
	child_fd(o->stderr_fd, 2, nullfd);
	e = iso_child_apply(o->iso, &stage);
	if (e)
		child_fail(errfd, stage, e);
	/* After the uid change: the directory must be one the server itself may enter. */
	if (o->cwd && chdir(o->cwd) < 0)
		child_fail(errfd, CHILD_STAGE_CHDIR, errno);
	/* The error pipe is close-on-exec; everything else above 2 must go. */
	if (errfd != 3) {
		dup2(errfd, 3);
		fcntl(3, F_SETFD, FD_CLOEXEC);
	}
	child_close_from(4);
	execve(path, o->argv, o->envp);
	child_fail(3, 0, errno);
}

/*
 * fork + execve. Everything that allocates (PATH lookup, environment) happens before the
 * fork, because the child of a multi-threaded process may only call async-signal-safe
 * functions. An exec failure is reported back through a close-on-exec pipe.
 */
int
proc_spawn(const struct proc_opts *o, pid_t *pidp, char **err)
{
	char *path = exec_lookup(o->argv[0], o->envp);
	int errpipe[2] = {-1, -1}, nullfd = -1, rc = 0;
	struct child_err ce = {0, 0};
	ssize_t n;
	pid_t pid;

	if (path == NULL)
		return err_set(err, -ENOENT, "exec: \"%s\": executable file not found in $PATH",
			       o->argv[0]);
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nullfd < 0 || pipe2(errpipe, O_CLOEXEC) < 0) {
		rc = -errno;
		err_set(err, rc, "spawn: %s", strerror(errno));
		goto out;
	}
	/* Keep our fds clear of 0-2 so the dup2 calls in the child never clobber a source. */
	if (nullfd < 3 || errpipe[0] < 3 || errpipe[1] < 3) {
		int a = fcntl(nullfd, F_DUPFD_CLOEXEC, 3);
		int b = fcntl(errpipe[1], F_DUPFD_CLOEXEC, 3);

		close(nullfd);
		close(errpipe[1]);
		nullfd = a;
		errpipe[1] = b;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		err_set(err, rc, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(o, path, nullfd, errpipe[1]);
	close(errpipe[1]);
	errpipe[1] = -1;
	do {
		n = read(errpipe[0], &ce, sizeof(ce));
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(ce)) {
		int st;

		waitpid(pid, &st, 0);
		rc = spawn_error(o, path, &ce, err);
		goto out;
	}
	*pidp = pid;
out:
	if (nullfd >= 0)
		close(nullfd);
	if (errpipe[0] >= 0)
		close(errpipe[0]);
	if (errpipe[1] >= 0)
		close(errpipe[1]);
	free(path);
	return rc;
}

int
proc_wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Returns 0 when reaped, -ETIMEDOUT when still running after timeout_ms. */
int
proc_wait_timeout(pid_t pid, int *status, int timeout_ms)
{
	int64_t deadline = time_mono_ns() + (int64_t)timeout_ms * 1000000;
	struct timespec ts = {0, 20 * 1000000};

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (time_mono_ns() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
}

/* PATH search in the parent, so the forked child only has to call execve(). */
char *
exec_lookup(const char *name, char *const *envp)
{
	const char *path = NULL;
	char *dup, *dir, *save = NULL;
	size_t i;

	if (strchr(name, '/'))
		return strdup(name);
	for (i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			path = envp[i] + 5;
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	dup = strdup(path);
	if (dup == NULL)
		return NULL;
	for (dir = strtok_r(dup, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *cand = str_printf("%s/%s", *dir ? dir : ".", name);
		struct stat st;

		if (cand && stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(cand, X_OK) == 0) {
			free(dup);
			return cand;
		}
		free(cand);
	}
	free(dup);
	return NULL;
}

void
status_format(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal: %s", strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "wait status %d", status);
}
