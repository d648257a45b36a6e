/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: child processes and the process groups a shutdown kills (proc.c). */
#ifndef GW_PROC_H
#define GW_PROC_H

#include <stdbool.h>
#include <sys/types.h>

struct iso_child;

struct proc_opts {
	char *const *argv;
	char *const *envp;
	const char *cwd;
	int stdin_fd;		/* -1: /dev/null */
	int stdout_fd;		/* -1: /dev/null */
	int stderr_fd;		/* -1: /dev/null */
	bool new_pgrp;		/* own process group so the whole tree can be killed */
	const struct iso_child *iso;	/* its own user, view and cgroup; NULL: as we are */
};

int proc_spawn(const struct proc_opts *o, pid_t *pid, char **err);
int proc_wait(pid_t pid, int *status);
int proc_wait_timeout(pid_t pid, int *status, int timeout_ms);

/* Process groups of install/clone commands that a shutdown must SIGKILL. */
int pgrp_register(pid_t pgid);
void pgrp_unregister(pid_t pgid);
void pgrp_kill_all(void);
void proc_set_cancelled(void);
bool proc_cancelled(void);

/* name looked up in envp's PATH as execvp() would, or NULL. */
char *exec_lookup(const char *name, char *const *envp);
/* A wait status in words: "exit status N", "signal NAME". */
void status_format(int status, char *buf, size_t len);

#endif /* GW_PROC_H */
