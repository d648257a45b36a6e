/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway serve: the long-running server. Order matters: the port is bound before the
 * upstreams start (a busy port fails fast), the PID file is written only once every upstream
 * is up, and "ok" goes to the launcher last.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/audit.h"
#include "base/files.h"
#include "base/flags.h"
#include "base/log.h"
#include "base/str.h"
#include "cmd/cmd.h"
#include "config/config.h"
#include "cvs_version.h"
#include "http/http.h"
#include "isolate/isolate.h"
#include "isolate/proc.h"
#include "session/http_conf.h"
#include "upstream/upstream.h"

#define SERVE_SYNOPSIS "mcp-gateway serve [flags]"

enum serve_phase {
	PHASE_STARTING,
	PHASE_RUNNING,
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum serve_phase phase;
	bool stop;
	struct upstream **ups;
	size_t nups;
} sv = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

struct serve_opts {
	char *config;
	char *config_file;
	bool config_stdin;
	long long port;
	long long ready_fd;
	char *pid_file;
	struct config_sources src;
	long long page_size;
	int64_t idle_ns;
	long long max_body;
	int64_t call_timeout_ns;
	int64_t resume_ns;
	int64_t busy_poll_ns;
	char *allowed_hosts;
	char *allowed_origins;
	char *audit_log;
	long long audit_max_bytes;
	long long audit_keep;
	struct iso_opts iso;
};

static void *
signal_main(void *arg)
{
	sigset_t *set = arg;
	size_t i;
	int sig;

	if (sigwait(set, &sig) != 0)
		return NULL;
	log_info("shutting down", "signal=%s", strsignal(sig));
	pthread_mutex_lock(&sv.lock);
	sv.stop = true;
	if (sv.phase == PHASE_STARTING) {
		/* Installs run in their own groups: only we can reach them, and must, right now. */
		proc_set_cancelled();
		pgrp_kill_all();
		for (i = 0; i < sv.nups; i++)
			upstream_kill(sv.ups[i]);
	}
	pthread_cond_broadcast(&sv.cond);
	pthread_mutex_unlock(&sv.lock);
	return NULL;
}

static int
listen_open(int port, char **err)
{
	struct sockaddr_in6 a6 = {0};
	struct sockaddr_in a4 = {0};
	int one = 1, zero = 0, fd, rc;

	/* ":port" like the reference: IPv4 and IPv6 on one socket where the kernel has IPv6. */
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		a6.sin6_family = AF_INET6;
		a6.sin6_addr = in6addr_any;
		a6.sin6_port = htons((uint16_t)port);
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0)
			goto listen;
		rc = errno;
		close(fd);
		if (rc != EADDRNOTAVAIL && rc != EAFNOSUPPORT)
			return err_set(err, -rc, "listen tcp :%d: bind: %s", port, strerror(rc));
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, -errno, "listen tcp :%d: socket: %s", port, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a4.sin_family = AF_INET;
	a4.sin_addr.s_addr = htonl(INADDR_ANY);
	a4.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&a4, sizeof(a4)) < 0) {
		rc = errno;
		close(fd);
		return err_set(err, -rc, "listen tcp :%d: bind: %s", port, strerror(rc));
	}
listen:
	if (listen(fd, 128) < 0) {
		rc = errno;
		close(fd);
		return err_set(err, -rc, "listen tcp :%d: %s", port, strerror(rc));
	}
	return fd;
}

static void
ready_report(int fd, const char *err)
{
	struct strbuf sb = {0};
	const char *p;
	ssize_t n;

	if (fd <= 0)
		return;
	if (err == NULL) {
		sb_appends(&sb, "ok\n");
	} else {
		sb_appends(&sb, "error: ");
		/* One line on the pipe: the launcher reads exactly one. */
		for (p = err; *p; p++) {
			if (*p == '\n')
				sb_appends(&sb, "; ");
			else
				sb_append(&sb, p, 1);
		}
		sb_appends(&sb, "\n");
	}
	n = write(fd, sb.buf, sb.len);
	(void)n;
	sb_free(&sb);
}

struct start_job {
	struct upstream *u;
	pthread_t th;
	int rc;
	char *err;
};

static void *
start_main(void *arg)
{
	struct start_job *j = arg;

	j->rc = upstream_start(j->u, &j->err);
	return NULL;
}

static void *
close_main(void *arg)
{
	upstream_close(arg);
	return NULL;
}

/* Upstreams close in parallel so shutdown takes one grace period, not one per server. */
static void
upstreams_close(struct upstream **ups, size_t n)
{
	pthread_t *th = calloc(n + 1, sizeof(*th));
	bool *ok = calloc(n + 1, sizeof(*ok));
	size_t i;

	for (i = 0; i < n; i++) {
		ok[i] = th && ok && pthread_create(&th[i], NULL, close_main, ups[i]) == 0;
		if (!ok[i])
			upstream_close(ups[i]);
	}
	for (i = 0; i < n; i++)
		if (ok && ok[i])
			pthread_join(th[i], NULL);
	free(th);
	free(ok);
}

static int
input_stdin(json_t **cfg, char **token, char **err)
{
	struct strbuf sb = {0};
	json_error_t jerr;
	json_t *root, *t;
	char buf[65536];
	int nullfd;

	for (;;) {
		ssize_t n = read(0, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sb_free(&sb);
			return err_set(err, -errno, "read configuration from stdin: %s",
				       strerror(errno));
		}
		if (n == 0)
			break;
		sb_append(&sb, buf, (size_t)n);
	}
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd >= 0) {
		dup2(nullfd, 0);
		close(nullfd);
	}
	root = json_loadb(sb.buf ? sb.buf : "", sb.len, JSON_DISABLE_EOF_CHECK, &jerr);
	explicit_bzero(buf, sizeof(buf));
	if (sb.buf)
		explicit_bzero(sb.buf, sb.len);
	sb_free(&sb);
	if (root == NULL || !json_is_object(root)) {
		err_set(err, -EINVAL, "read configuration from stdin: %s",
			root ? "not a JSON object" : jerr.text);
		json_decref(root);
		return -EINVAL;
	}
	t = json_object_get(root, "token");
	if (!json_is_string(t) || *json_string_value(t) == '\0') {
		json_decref(root);
		return err_set(err, -EINVAL, "missing access token");
	}
	*token = strdup(json_string_value(t));
	*cfg = json_incref(json_object_get(root, "config"));
	json_decref(root);
	if (*cfg == NULL)
		*cfg = json_null();
	return 0;
}

static int
input_flags(struct serve_opts *o, json_t **cfg, char **token, char **err)
{
	const char *env;
	char *text = NULL;
	int rc;

	rc = config_text_read(o->config, o->config_file, &text, err);
	if (rc)
		return rc;
	rc = config_parse_text(text, cfg, err);
	free(text);
	if (rc)
		return rc;
	env = getenv(GW_TOKEN_ENV);
	if (env == NULL) {
		json_decref(*cfg);
		*cfg = NULL;
		return err_set(err, -EINVAL, GW_TOKEN_ENV " must be set");
	}
	*token = strdup(env);
	/*
	 * Nothing we start may inherit it. unsetenv() only drops the pointer, and the original
	 * bytes stay readable in /proc/<pid>/environ, so blank them too.
	 */
	unsetenv(GW_TOKEN_ENV);
	memset((char *)env, 0, strlen(env));
	return 0;
}

/* "a,b,,c" -> {"a", "b", "c"}; NULL for an empty list. */
static char **
strv_split(const char *list)
{
	char *dup = strdup(list ? list : ""), *tok, *save = NULL, **v = NULL;

	for (tok = dup ? strtok_r(dup, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		char *t = str_trim_dup(tok, strlen(tok));

		if (t && *t)
			strv_push(&v, t);
		free(t);
	}
	free(dup);
	return v;
}

/* Every server in parallel; the errors, one line per server, go to errs. */
static void
servers_start(const struct server_list *list, struct strbuf *errs)
{
	struct start_job *jobs = calloc(list->n + 1, sizeof(*jobs));
	size_t i;

	if (jobs == NULL) {
		sb_appends(errs, "out of memory");
		return;
	}
	for (i = 0; i < list->n; i++) {
		jobs[i].u = sv.ups[i];
		if (pthread_create(&jobs[i].th, NULL, start_main, &jobs[i])) {
			jobs[i].rc = -EAGAIN;
			jobs[i].err = strdup("cannot start thread");
			jobs[i].u = NULL;
		}
	}
	for (i = 0; i < list->n; i++)
		if (jobs[i].u)
			pthread_join(jobs[i].th, NULL);
	for (i = 0; i < list->n; i++) {
		char *q;

		if (jobs[i].rc == 0)
			continue;
		q = str_quote(list->v[i].name);
		sb_appendf(errs, "%smcp server %s: %s", errs->len ? "\n" : "", q,
			   jobs[i].err ? jobs[i].err : "failed");
		free(q);
	}
	for (i = 0; i < list->n; i++)
		free(jobs[i].err);
	free(jobs);
}

/* What one run of serve holds, from the config to the HTTP server. */
struct serve_state {
	json_t *cfg, *catalog, *isolation;
	struct server_list list;
	char *token, *err;
	char **names, **hosts, **origins;
	sigset_t sigs;
	int lfd;
	struct http_server *http;
	struct audit *audit;
};

/* Everything that is checked before the upstreams start, and the port bound: it fails fast. */
static int
serve_prepare(struct serve_opts *o, struct serve_state *s)
{
	int rc;

	rc = o->config_stdin ? input_stdin(&s->cfg, &s->token, &s->err) :
			       input_flags(o, &s->cfg, &s->token, &s->err);
	if (rc == 0)
		rc = config_servers(&o->src, NULL, &s->cfg, &s->catalog, &s->list, &s->err);
	if (rc)
		return rc;
	for (size_t i = 0; s->list.warnings && s->list.warnings[i]; i++)
		log_warn(s->list.warnings[i], "%s", "");
	if (o->port < 0 || o->port > 65535)
		return err_set(&s->err, -EINVAL, "invalid port %lld", o->port);
	rc = iso_setup(&o->iso, s->list.v, s->list.n, &s->err);
	if (rc)
		return rc;
	s->isolation = iso_report(s->list.v, s->list.n);
	s->lfd = listen_open((int)o->port, &s->err);
	if (s->lfd < 0)
		return s->lfd;
	s->audit = audit_open(o->audit_log, o->audit_max_bytes, o->audit_keep, &s->err);
	return s->audit == NULL && s->err ? -EIO : 0;
}

/* Every upstream started, with SIGTERM and SIGINT taken by a thread that can stop them. */
static int
serve_upstreams(struct serve_state *s)
{
	struct strbuf errs = {0};
	pthread_t sigth;
	size_t i;

	sigemptyset(&s->sigs);
	sigaddset(&s->sigs, SIGTERM);
	sigaddset(&s->sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &s->sigs, NULL);
	sv.ups = calloc(s->list.n + 1, sizeof(*sv.ups));
	s->names = calloc(s->list.n + 1, sizeof(*s->names));
	if (!sv.ups || !s->names)
		return err_set(&s->err, -ENOMEM, "out of memory");
	pthread_mutex_lock(&sv.lock);
	for (i = 0; i < s->list.n; i++) {
		sv.ups[i] = upstream_new(&s->list.v[i], CVS_VERSION);
		s->names[i] = s->list.v[i].name;
	}
	sv.nups = s->list.n;
	pthread_mutex_unlock(&sv.lock);
	if (pthread_create(&sigth, NULL, signal_main, &s->sigs))
		return err_set(&s->err, -EAGAIN, "cannot start signal thread");
	pthread_detach(sigth);
	servers_start(&s->list, &errs);
	pthread_mutex_lock(&sv.lock);
	if (sv.stop && errs.len == 0)
		sb_appends(&errs, "interrupted while starting MCP servers");
	pthread_mutex_unlock(&sv.lock);
	if (errs.len == 0)
		return 0;
	s->err = sb_steal(&errs);
	return -EIO;
}

/* The PID file says the gateway is up: written once every upstream is. */
static int
serve_pid_write(const char *pid_file, struct serve_state *s)
{
	char buf[32], *m;
	int rc;

	if (pid_file == NULL || *pid_file == '\0')
		return 0;
	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	rc = file_write_atomic(pid_file, buf, strlen(buf), 0600, 0755, &s->err);
	if (rc) {
		m = s->err;
		s->err = str_printf("write pid file: %s", m ? m : "");
		free(m);
	}
	return rc;
}

static void
serve_pid_remove(const char *pid_file)
{
	if (pid_file && *pid_file)
		unlink(pid_file);
}

/* The HTTP server on the bound socket, which it owns from now on. */
static int
serve_http(struct serve_opts *o, struct serve_state *s)
{
	struct http_conf hc = {
		.token = s->token,
		.version = CVS_VERSION,
		.ups = sv.ups,
		.nups = sv.nups,
		.allowed_hosts = s->hosts = strv_split(o->allowed_hosts),
		.allowed_origins = s->origins = strv_split(o->allowed_origins),
		.call_timeout_ns = o->call_timeout_ns,
		.port = (int)o->port,
		.servers = s->names,
		.page_size = o->page_size > 0 ? (size_t)o->page_size : 1000,
		.session_idle_ns = o->idle_ns,
		.resume_ns = o->resume_ns,
		.max_body = (size_t)o->max_body,
		.max_sessions = 10000,
		.busy_poll_ns = o->busy_poll_ns,
		.isolation = s->isolation,
		.audit = s->audit,
	};
	char *hb;

	s->http = http_start(&hc, s->lfd, &s->err);
	if (s->http == NULL) {
		serve_pid_remove(o->pid_file);
		return -EIO;
	}
	/* Quiesce hands the socket back and closes it. */
	s->lfd = -1;
	hb = http_health(s->http);
	if (hb && *hb)
		hb[strlen(hb) - 1] = '\0';
	log_info("mcp gateway listening", "port=%lld servers=%zu lists=%s", o->port, s->list.n,
		 hb ? hb : "");
	free(hb);
	return 0;
}

/* "ok" to the launcher, then serving until a signal; the shutdown in its order. */
static void
serve_until_stopped(struct serve_opts *o, struct serve_state *s, int ready_fd)
{
	pthread_mutex_lock(&sv.lock);
	sv.phase = PHASE_RUNNING;
	pthread_mutex_unlock(&sv.lock);
	ready_report(ready_fd, NULL);
	if (ready_fd > 0)
		close(ready_fd);
	pthread_mutex_lock(&sv.lock);
	while (!sv.stop)
		pthread_cond_wait(&sv.cond, &sv.lock);
	pthread_mutex_unlock(&sv.lock);
	http_quiesce(s->http, 5000);
	serve_pid_remove(o->pid_file);
	upstreams_close(sv.ups, sv.nups);
	http_stop(s->http);
	log_info("mcp gateway stopped", "%s", "");
}

static void
serve_fail(struct serve_state *s, int ready_fd)
{
	if (s->err)
		log_error("start failed", "error=%s", s->err);
	fprintf(stderr, "mcp-gateway: %s\n", s->err ? s->err : "failed");
	ready_report(ready_fd, s->err ? s->err : "failed");
	if (sv.ups)
		upstreams_close(sv.ups, sv.nups);
	if (s->lfd >= 0)
		close(s->lfd);
}

static void
serve_state_free(struct serve_state *s)
{
	for (size_t i = 0; sv.ups && i < sv.nups; i++)
		upstream_free(sv.ups[i]);
	free(sv.ups);
	sv.ups = NULL;
	sv.nups = 0;
	strv_free(s->hosts);
	strv_free(s->origins);
	free(s->names);
	json_decref(s->isolation);
	audit_close(s->audit);
	iso_cleanup(s->list.v, s->list.n);
	server_list_free(&s->list);
	json_decref(s->cfg);
	json_decref(s->catalog);
	iso_reset();
	if (s->token) {
		memset(s->token, 0, strlen(s->token));
		free(s->token);
	}
	free(s->err);
}

static int
serve_run(struct serve_opts *o, int ready_fd)
{
	struct serve_state s = { .lfd = -1 };
	int rc;

	rc = serve_prepare(o, &s);
	if (rc == 0)
		rc = serve_upstreams(&s);
	if (rc == 0)
		rc = serve_pid_write(o->pid_file, &s);
	if (rc == 0)
		rc = serve_http(o, &s);
	if (rc == 0)
		serve_until_stopped(o, &s, ready_fd);
	else
		serve_fail(&s, ready_fd);
	serve_state_free(&s);
	return rc ? 1 : 0;
}

int
cmd_serve(int argc, char **argv)
{
	struct serve_opts o = {
		.port = GW_DEFAULT_PORT,
		.page_size = 1000,
		.idle_ns = 3600LL * 1000000000LL,
		.resume_ns = 30LL * 1000000000LL,
		.max_body = 16LL << 20,
		.busy_poll_ns = 200000,
	};
	struct flag fl[] = {
		{"config", FLAG_STRING, &o.config, "MCP configuration JSON object", false},
		{"config-file", FLAG_STRING, &o.config_file, "read the MCP configuration from "
		 "a file", false},
		{"config-stdin", FLAG_BOOL, &o.config_stdin, "read {\"config\",\"token\"} from "
		 "stdin", false},
		{"port", FLAG_INT, &o.port, "listen port (default 50005)", false},
		{"ready-fd", FLAG_INT, &o.ready_fd, "file descriptor to report readiness on",
		 false},
		{"pid-file", FLAG_STRING, &o.pid_file, "PID file; empty disables (default "
		 GW_PID_FILE ")", false},
		CONFIG_SOURCE_FLAGS(o.src),
		{"page-size", FLAG_INT, &o.page_size, "tools per tools/list page (default 1000)",
		 false},
		{"session-idle-timeout", FLAG_DURATION, &o.idle_ns, "close sessions idle this "
		 "long (default 1h0m0s)", false},
		{"max-body", FLAG_INT, &o.max_body, "largest accepted request body in bytes "
		 "(default 16 MiB)", false},
		{"call-timeout", FLAG_DURATION, &o.call_timeout_ns, "fail a tool call an MCP "
		 "server has not answered after this long, and cancel it there (default 0: no "
		 "limit)", false},
		{"resume-window", FLAG_DURATION, &o.resume_ns, "how long a request whose "
		 "POST stream broke goes on for its client to resume it with Last-Event-ID, "
		 "before it is cancelled at the server (default 30s)", false},
		{"busy-poll", FLAG_DURATION, &o.busy_poll_ns, "after a request to an MCP "
		 "server, poll for its answer this long before sleeping (default 200us; 0: "
		 "off)", false},
		HTTP_GUARD_FLAGS(o.allowed_hosts, o.allowed_origins),
		AUDIT_FLAGS(o.audit_log, o.audit_max_bytes, o.audit_keep),
		ISO_FLAGS(o.iso),
	};
	size_t n = sizeof(fl) / sizeof(fl[0]);
	int rc, ready_fd = -1;

	iso_self_protect();
	iso_opts_init(&o.iso);
	o.pid_file = strdup(GW_PID_FILE);
	o.audit_log = strdup(GW_AUDIT_FILE);
	o.audit_max_bytes = 10LL << 20;
	o.audit_keep = 3;
	config_sources_init(&o.src);
	rc = flags_parse(fl, n, argc, argv, SERVE_SYNOPSIS, NULL);
	if (rc)
		goto out;
	/* A window is for answers due within microseconds; a longer one only burns a core. */
	if (o.busy_poll_ns < 0 || o.busy_poll_ns > 10000000) {
		fprintf(stderr, "mcp-gateway: --busy-poll must be between 0 and 10ms\n");
		rc = 1;
		goto out;
	}
	if (o.ready_fd > 0) {
		ready_fd = (int)o.ready_fd;
		/* Before anything is spawned: an install must never see the launcher's pipe. */
		if (fcntl(ready_fd, F_SETFD, FD_CLOEXEC) < 0) {
			fprintf(stderr, "mcp-gateway: ready fd %d: %s\n", ready_fd,
				strerror(errno));
			rc = 1;
			goto out;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	rc = serve_run(&o, ready_fd);
out:
	free(o.config);
	free(o.config_file);
	free(o.pid_file);
	config_sources_fini(&o.src);
	free(o.allowed_hosts);
	free(o.allowed_origins);
	free(o.audit_log);
	iso_opts_fini(&o.iso);
	return rc;
}
