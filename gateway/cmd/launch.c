/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway launcher: what the SDK runs. It validates everything before touching the
 * system, writes the token, starts "serve" in the background with config and token on a pipe
 * (never argv or environ), and exits 0 only once serve reports ready, within the deadline.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/audit.h"
#include "base/clock.h"
#include "base/files.h"
#include "base/flags.h"
#include "base/log.h"
#include "base/str.h"
#include "cmd/cmd.h"
#include "config/config.h"
#include "cvs_common.h"
#include "http/http.h"
#include "isolate/isolate.h"
#include "isolate/proc.h"

#define LAUNCH_SYNOPSIS "mcp-gateway [--config JSON | --config-file PATH] [--port N] " \
	"[--startup-timeout DUR] [flags]"
#define LOG_TAIL_BYTES 4096

struct launch_opts {
	char *config;
	char *config_file;
	long long port;
	int64_t timeout_ns;
	int64_t call_timeout_ns;
	char *token_file;
	char *pid_file;
	char *log_file;
	char *audit_log;
	struct config_sources src;
	char *allowed_hosts;
	char *allowed_origins;
	struct iso_opts iso;
};

static int
running_check(const char *pid_file, char **err)
{
	char *text, *cmdline, path[64];
	size_t len = 0, i;
	long pid;
	int rc;

	if (pid_file == NULL || *pid_file == '\0')
		return 0;
	text = file_read_all(pid_file, NULL, &rc);
	if (text == NULL)
		return 0;
	pid = strtol(text, NULL, 10);
	free(text);
	if (pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno != EPERM))
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	cmdline = file_read_all(path, &len, &rc);
	if (cmdline == NULL)
		return 0;
	rc = 0;
	for (i = 0; i + 5 <= len; i++) {
		if (memcmp(cmdline + i, "serve", 5) == 0) {
			rc = err_set(err, -EEXIST, "gateway is already running (pid %ld)", pid);
			break;
		}
	}
	free(cmdline);
	return rc;
}

static char *
log_tail(const char *path)
{
	char buf[LOG_TAIL_BYTES];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > LOG_TAIL_BYTES)
		lseek(fd, st.st_size - LOG_TAIL_BYTES, SEEK_SET);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return NULL;
	return str_trim_dup(buf, (size_t)n);
}

static int
fd_high(int fd)
{
	int nfd;

	if (fd > 3)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 4);
	close(fd);
	return nfd;
}

/* fork + setsid + exec ourselves as "serve"; the child's fd 3 is the ready pipe. */
static int
serve_spawn(const struct launch_opts *o, char *argv0, int cfg_r, int ready_w, int logfd,
	    pid_t *pidp, char **err)
{
	char port[32], call_timeout[32];
	const char *fixed[] = {
		argv0, "serve", "--config-stdin", "--ready-fd", "3", "--port", port,
		"--pid-file", o->pid_file, "--catalog-file", o->src.catalog_file,
		"--servers-dir", o->src.servers_dir, "--github-base-url", o->src.github_base,
		"--call-timeout", call_timeout, "--allowed-hosts", o->allowed_hosts,
		"--allowed-origins", o->allowed_origins, "--audit-log", o->audit_log,
	};
	char **env = env_build(NULL), **argv = NULL;
	int rc = 0;
	pid_t pid;

	snprintf(port, sizeof(port), "%lld", o->port);
	dur_format(o->call_timeout_ns > 0 ? o->call_timeout_ns : 0, call_timeout,
		   sizeof(call_timeout));
	for (size_t i = 0; rc == 0 && i < sizeof(fixed) / sizeof(fixed[0]); i++)
		rc = strv_push(&argv, fixed[i]);
	if (rc == 0)
		rc = iso_opts_argv(&o->iso, &argv);
	if (env == NULL || rc) {
		strv_free(env);
		strv_free(argv);
		return err_set(err, -ENOMEM, "out of memory");
	}
	pid = fork();
	if (pid < 0) {
		strv_free(env);
		strv_free(argv);
		return err_set(err, -errno, "start gateway: %s", strerror(errno));
	}
	if (pid == 0) {
		setsid();
		dup2(cfg_r, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		dup2(ready_w, 3);
		if (syscall(SYS_close_range, 4U, ~0U, 0) < 0) {
			for (int fd = 4; fd < 1024; fd++)
				close(fd);
		}
		execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	strv_free(env);
	strv_free(argv);
	*pidp = pid;
	return 0;
}

/* Reads one line within the deadline: 1 = line read, 0 = EOF, -ETIMEDOUT. */
static int
ready_read(int fd, int64_t timeout_ns, char *line, size_t len)
{
	int64_t deadline = time_mono_ns() + timeout_ns;
	size_t off = 0;

	for (;;) {
		int64_t left = deadline - time_mono_ns();
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)((left + 999999) / 1000000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			continue;
		n = read(fd, line + off, len - off - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		off += (size_t)n;
		line[off] = '\0';
		if (memchr(line, '\n', off) || off + 1 >= len) {
			line[strcspn(line, "\n")] = '\0';
			return 1;
		}
	}
}

/* What one launch holds; every copy of the config and the token is blanked at the end. */
struct launch_state {
	json_t *cfg, *catalog, *payload;
	struct server_list list;
	char *text, *err, *msg;
	char token[129];
	bool token_written;
	int cfgp[2], readyp[2], logfd;
	pid_t pid;
};

/*
 * Every copy of the config we hold, envs included, blanked and freed: serve has it now, and
 * the launcher may wait most of a minute more (jansson's blocks are blanked by
 * jansson_scrub_frees()).
 */
static void
config_forget(struct launch_opts *o, struct launch_state *s)
{
	json_decref(s->payload);
	s->payload = NULL;
	json_decref(s->cfg);
	s->cfg = NULL;
	server_list_free(&s->list);
	str_free_secure(s->text);
	s->text = NULL;
	str_free_secure(s->msg);
	s->msg = NULL;
	str_free_secure(o->config);
	o->config = NULL;
}

/* Everything is validated before the system is touched. */
static int
launch_check(struct launch_opts *o, struct launch_state *s)
{
	int rc;

	rc = config_text_read(o->config, o->config_file, &s->text, &s->err);
	if (rc == 0)
		rc = config_servers(&o->src, s->text, &s->cfg, &s->catalog, &s->list, &s->err);
	if (rc)
		return rc;
	for (size_t i = 0; s->list.warnings && s->list.warnings[i]; i++)
		fprintf(stderr, "warning: %s\n", s->list.warnings[i]);
	if (o->port < 0 || o->port > 65535)
		return err_set(&s->err, -EINVAL, "invalid port %lld", o->port);
	rc = iso_opts_check(&o->iso, &s->err);
	if (rc == 0)
		rc = running_check(o->pid_file, &s->err);
	return rc;
}

/* The token: the caller's (GATEWAY_ACCESS_TOKEN) or a random one, in the token file. */
static int
launch_token(struct launch_opts *o, struct launch_state *s)
{
	const char *env = getenv(GW_TOKEN_ENV);

	if (env && *env) {
		if (strlen(env) >= sizeof(s->token))
			return err_set(&s->err, -EINVAL, GW_TOKEN_ENV " is longer than %zu bytes",
				       sizeof(s->token) - 1);
		strcpy(s->token, env);
		/* Our environ is root's to read only, but nothing needs it there any more. */
		unsetenv(GW_TOKEN_ENV);
		explicit_bzero((char *)env, strlen(env));
	} else if (rand_hex(s->token, 32)) {
		return err_set(&s->err, -EIO, "generate token: no randomness");
	}
	if (file_write_atomic(o->token_file, s->token, strlen(s->token), 0600, 0700, &s->msg))
		return err_set(&s->err, -EIO, "write token file: %s", s->msg ? s->msg : "failed");
	s->token_written = true;
	return 0;
}

/* serve in the background, its output in the log, config and token on its stdin. */
static int
launch_spawn(struct launch_opts *o, char *argv0, struct launch_state *s)
{
	path_parent_make(o->log_file, 0755);
	s->logfd = open(o->log_file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (s->logfd < 0)
		return err_set(&s->err, -errno, "open log file %s: %s", o->log_file,
			       strerror(errno));
	if (pipe2(s->cfgp, O_CLOEXEC) < 0 || pipe2(s->readyp, O_CLOEXEC) < 0)
		return err_set(&s->err, -errno, "pipe: %s", strerror(errno));
	/* Above fd 3, so the child's dup2 onto 0-3 can never overwrite a source. */
	s->cfgp[0] = fd_high(s->cfgp[0]);
	s->readyp[1] = fd_high(s->readyp[1]);
	s->logfd = fd_high(s->logfd);
	if (serve_spawn(o, argv0, s->cfgp[0], s->readyp[1], s->logfd, &s->pid, &s->err))
		return -EIO;
	close(s->cfgp[0]);
	s->cfgp[0] = -1;
	close(s->readyp[1]);
	s->readyp[1] = -1;
	s->payload = json_pack("{s:O,s:s}", "config", s->cfg, "token", s->token);
	free(s->msg);
	s->msg = s->payload ? json_dumps(s->payload, JSON_COMPACT) : NULL;
	/* A failed write means serve died; the ready pipe then reports EOF. */
	if (s->msg)
		cvs_write_all(s->cfgp[1], s->msg, strlen(s->msg));
	close(s->cfgp[1]);
	s->cfgp[1] = -1;
	config_forget(o, s);
	explicit_bzero(s->token, sizeof(s->token));
	return 0;
}

/* serve's one line on the ready pipe: "ok", or why it failed (serve is stopped then). */
static int
launch_wait(struct launch_opts *o, struct launch_state *s)
{
	char line[8192], dur[64], *reason, *tail;
	int rc, status;

	rc = ready_read(s->readyp[0], o->timeout_ns, line, sizeof(line));
	if (rc == 1 && strcmp(line, "ok") == 0) {
		printf("MCP gateway is ready on port %lld (pid %d)\n", o->port, (int)s->pid);
		fflush(stdout);
		return 0;
	}
	if (rc == -ETIMEDOUT) {
		dur_format(o->timeout_ns, dur, sizeof(dur));
		reason = str_printf("timed out after %s waiting for MCP servers to start; "
				    "pre-install them in the template with `mcp-gateway pull "
				    "<server>`", dur);
	} else if (rc == 1 && strncmp(line, "error: ", 7) == 0) {
		reason = strdup(line + 7);
	} else {
		reason = strdup("gateway exited before it became ready");
	}
	/* serve runs in its own session: its group holds it and the servers it started. */
	kill(-s->pid, SIGTERM);
	if (proc_wait_timeout(s->pid, &status, 3000) != 0) {
		kill(-s->pid, SIGKILL);
		proc_wait(s->pid, &status);
	} else {
		kill(-s->pid, SIGKILL);
	}
	tail = log_tail(o->log_file);
	err_set(&s->err, -EIO, "%s%s%s", reason ? reason : "failed", tail && *tail ? "\n" : "",
		tail ? tail : "");
	free(tail);
	free(reason);
	return -EIO;
}

static void
launch_state_free(struct launch_opts *o, struct launch_state *s)
{
	for (size_t i = 0; i < 2; i++) {
		if (s->cfgp[i] >= 0)
			close(s->cfgp[i]);
		if (s->readyp[i] >= 0)
			close(s->readyp[i]);
	}
	if (s->logfd >= 0)
		close(s->logfd);
	memset(s->token, 0, sizeof(s->token));
	config_forget(o, s);
	json_decref(s->catalog);
	free(s->err);
}

static int
launch_run(struct launch_opts *o, char *argv0)
{
	struct launch_state s = {
		.cfgp = {-1, -1}, .readyp = {-1, -1}, .logfd = -1, .pid = -1,
	};
	int rc;

	rc = launch_check(o, &s);
	if (rc == 0)
		rc = launch_token(o, &s);
	if (rc == 0)
		rc = launch_spawn(o, argv0, &s);
	if (rc == 0)
		rc = launch_wait(o, &s);
	if (rc) {
		if (s.token_written)
			unlink(o->token_file);
		fprintf(stderr, "mcp-gateway: %s\n", s.err ? s.err : "failed");
	}
	launch_state_free(o, &s);
	return rc ? 1 : 0;
}

/*
 * The SDK puts the config, envs included, on our command line, which any process may read
 * in /proc/<pid>/cmdline. Before anything else the arguments move to the heap and the
 * original bytes are blanked: cmdline shows the program name and NULs for the rest of the
 * start, however long the servers take. Returns the copy (NULL: out of memory).
 */
static char **
cmdline_take(int argc, char **argv)
{
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));

	for (int i = 0; copy && i < argc; i++) {
		copy[i] = strdup(argv[i]);
		if (copy[i] == NULL) {
			strv_free_secure(copy);
			copy = NULL;
		}
	}
	for (int i = 0; i < argc; i++)
		explicit_bzero(argv[i], strlen(argv[i]));
	return copy;
}

int
cmd_launch(int argc, char **argv)
{
	struct launch_opts o = {
		.port = GW_DEFAULT_PORT,
		.timeout_ns = GW_DEFAULT_TIMEOUT_NS,
	};
	struct flag fl[] = {
		{"config", FLAG_STRING, &o.config, "MCP configuration JSON object (the SDK's "
		 "mcp option)", false},
		{"config-file", FLAG_STRING, &o.config_file, "read the MCP configuration from "
		 "a file", false},
		{"port", FLAG_INT, &o.port, "listen port (default 50005)", false},
		{"startup-timeout", FLAG_DURATION, &o.timeout_ns, "how long to wait for every "
		 "server (default 55s)", false},
		{"call-timeout", FLAG_DURATION, &o.call_timeout_ns, "fail a tool call an MCP "
		 "server has not answered after this long (default 0: no limit)", false},
		{"token-file", FLAG_STRING, &o.token_file, "token file (default "
		 GW_TOKEN_FILE ")", false},
		{"pid-file", FLAG_STRING, &o.pid_file, "PID file of the background server "
		 "(default " GW_PID_FILE ")", false},
		{"log-file", FLAG_STRING, &o.log_file, "log file (default " GW_LOG_FILE ")",
		 false},
		{"audit-log", FLAG_STRING, &o.audit_log, "audit log of the background server, "
		 "one line per tool call; \"none\" turns it off (default " GW_AUDIT_FILE ")",
		 false},
		CONFIG_SOURCE_FLAGS(o.src),
		HTTP_GUARD_FLAGS(o.allowed_hosts, o.allowed_origins),
		ISO_FLAGS(o.iso),
	};
	size_t n = sizeof(fl) / sizeof(fl[0]);
	char **args = cmdline_take(argc, argv);
	int rc;

	iso_self_protect();
	iso_opts_init(&o.iso);

	o.token_file = strdup(GW_TOKEN_FILE);
	o.pid_file = strdup(GW_PID_FILE);
	o.log_file = strdup(GW_LOG_FILE);
	o.audit_log = strdup(GW_AUDIT_FILE);
	config_sources_init(&o.src);
	o.allowed_hosts = strdup("");
	o.allowed_origins = strdup("");
	rc = args ? flags_parse(fl, n, argc, args, LAUNCH_SYNOPSIS, NULL) : 1;
	strv_free_secure(args);
	if (args == NULL)
		die_msg("out of memory");
	if (rc == 0) {
		signal(SIGPIPE, SIG_IGN);
		rc = launch_run(&o, "mcp-gateway");
	}
	free(o.config);
	free(o.config_file);
	free(o.token_file);
	free(o.pid_file);
	free(o.log_file);
	config_sources_fini(&o.src);
	free(o.allowed_hosts);
	free(o.allowed_origins);
	free(o.audit_log);
	iso_opts_fini(&o.iso);
	return rc;
}
