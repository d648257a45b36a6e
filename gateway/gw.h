/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: shared declarations.
 *
 * Error convention: functions return 0 or a negative errno. Where the caller needs a
 * human-readable reason (every user-visible failure does), the function also takes
 * `char **err` and stores a malloc'd message there; the caller frees it.
 */
#ifndef GW_H
#define GW_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include <jansson.h>

#define GW_DEFAULT_PORT		50005
#define GW_DEFAULT_TIMEOUT_NS	(55LL * 1000000000LL)
#define GW_TOKEN_FILE		"/etc/mcp-gateway/.token"
#define GW_CATALOG_FILE		"/etc/mcp-gateway/catalog.json"
#define GW_PID_FILE		"/run/mcp-gateway.pid"
#define GW_LOG_FILE		"/var/log/mcp-gateway.log"
#define GW_SERVERS_DIR		"/opt/mcp-gateway/servers"
#define GW_GITHUB_BASE		"https://github.com"
#define GW_TOKEN_ENV		"GATEWAY_ACCESS_TOKEN"
#define GW_CLIENT_NAME		"cube-mcp-gateway"
#define GW_NAME_MAX		128

/* ---- util.c ---------------------------------------------------------------------------- */
int fd_write_all(int fd, const char *p, size_t len);

struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
};

int sb_append(struct strbuf *sb, const void *p, size_t n);
int sb_appends(struct strbuf *sb, const char *s);
int sb_appendf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_steal(struct strbuf *sb);
void sb_free(struct strbuf *sb);

int err_set(char **err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_quote(const char *s);
bool str_blank(const char *s);
char *str_trim_dup(const char *s, size_t len);

int dur_parse(const char *s, int64_t *ns);
void dur_format(int64_t ns, char *buf, size_t len);
char *num_format(double v);

int rand_bytes(void *buf, size_t len);
int rand_hex(char *out, size_t nbytes);

int dir_make_parents(const char *dir, mode_t mode);
int path_parent_make(const char *path, mode_t mode);
int path_remove_all(const char *path);
int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		      mode_t dirmode, char **err);
char *file_read_all(const char *path, size_t *len, int *rc);
bool fd_is_valid(int fd);

size_t strv_len(char *const *v);
char **strv_dup(char *const *v);
char *strv_join(char *const *v, const char *sep);
int strv_push(char ***v, const char *s);
void strv_free(char **v);

char **env_build(char *const *extra);
char *exec_lookup(const char *name, char *const *envp);
void status_format(int status, char *buf, size_t len);
int64_t time_mono_ns(void);
/* The CLOCK_REALTIME instant ns from now, as pthread_cond_timedwait() wants it (ns >= 0). */
void time_deadline(struct timespec *ts, int64_t ns);

/* ---- frame.c: stdio line framing -------------------------------------------------------- */

#define GW_MAX_LINE	(32u << 20)	/* longest message line accepted from a server */
#define GW_MAX_LINE_TEXT	"32 MiB"

typedef void (*framer_line_fn)(void *ctx, const char *line, size_t len);

struct line_framer {
	struct strbuf buf;	/* the unfinished line */
	size_t max;
	bool skipping;		/* inside a line that outgrew max: drop up to its newline */
	uint64_t dropped;
};

void framer_init(struct line_framer *f, size_t max);
/*
 * Feed bytes; cb gets every non-empty line without its newline. Returns how many lines
 * outgrew the limit in this chunk (they are dropped), or -ENOMEM.
 */
int framer_feed(struct line_framer *f, const char *data, size_t n, framer_line_fn cb,
		void *ctx);
void framer_fini(struct line_framer *f);

/* ---- proc.c: child processes ------------------------------------------------------------- */

struct proc_opts {
	char *const *argv;
	char *const *envp;
	const char *cwd;
	int stdin_fd;		/* -1: /dev/null */
	int stdout_fd;		/* -1: /dev/null */
	int stderr_fd;		/* -1: /dev/null */
	bool new_pgrp;		/* own process group so the whole tree can be killed */
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

/* ---- log.c ------------------------------------------------------------------------------- */

void log_write(const char *level, const char *msg, const char *kvfmt, ...)
	__attribute__((format(printf, 3, 4)));
#define log_info(msg, ...)	log_write("INFO", msg, __VA_ARGS__)
#define log_warn(msg, ...)	log_write("WARN", msg, __VA_ARGS__)
#define log_error(msg, ...)	log_write("ERROR", msg, __VA_ARGS__)

/* Copies a child's output to a log fd, putting "[name] " at the start of every line. */
struct prefixw {
	int fd;
	char *prefix;
	size_t plen;
	bool mid_line;
};

int prefixw_init(struct prefixw *w, int fd, const char *name);
int prefixw_write(struct prefixw *w, const void *buf, size_t len);
void prefixw_fini(struct prefixw *w);

struct pump;
struct pump *pump_start(int fd, const char *name, int logfd);
int pump_wait(struct pump *p, int timeout_ms);

/* ---- flags.c: Go "flag" package semantics ------------------------------------------------ */

enum flag_type {
	FLAG_STRING,
	FLAG_BOOL,
	FLAG_INT,
	FLAG_DURATION,
};

struct flag {
	const char *name;
	enum flag_type type;
	void *ptr;		/* char **, bool *, long long *, int64_t * (ns) */
	const char *usage;
	bool set;
};

/* Returns 0, or the exit status the caller should use (1 error, 2 help); prints itself. */
int flags_parse(struct flag *fl, size_t n, int argc, char **argv, const char *synopsis,
		int *next);
void flags_usage(const struct flag *fl, size_t n, const char *synopsis);

/* ---- catalog.c / config.c ---------------------------------------------------------------- */

int catalog_parse(const char *text, const char *origin, json_t **out, char **err);
int catalog_load(const char *override_path, json_t **out, char **err);
char *catalog_names(json_t *catalog);

enum server_kind {
	SERVER_CATALOG,
	SERVER_GITHUB,
	SERVER_LOCAL,
};

struct server_spec {
	char *name;
	enum server_kind kind;
	char **argv;		/* run command */
	char **env;		/* extra "K=V" entries, override the inherited environment */
	char **install;		/* install argv or NULL; catalog installs only run via pull */
	char *dir;		/* working directory */
	char *repo;		/* clone URL (GitHub servers) */
};

struct server_list {
	struct server_spec *v;
	size_t n;
	char **warnings;
};

int config_parse_text(const char *text, json_t **out, char **err);
int config_resolve(json_t *cfg, json_t *catalog, const char *servers_dir,
		   const char *github_base, struct server_list *out, char **err);
void server_list_free(struct server_list *l);

/* ---- tools.c: aggregation ---------------------------------------------------------------- */

struct tool_source {
	const char *server;	/* sorted by name */
	json_t *tools;		/* array, in upstream order */
	void *ctx;
};

struct tool_route {
	char *name;		/* exported */
	char *orig;
	void *ctx;
	json_t *tool;		/* exported object (name replaced) */
};

struct tool_table {
	struct tool_route *v;
	size_t n;
};

/* What one table holds: the key field, whether clashes are renamed "<server>_<name>". */
struct route_kind {
	const char *what;
	const char *key;
	bool rename;
	bool tools;		/* inputSchema checks */
};

extern const struct route_kind route_tools, route_prompts, route_resources, route_templates;

int routes_build(const struct tool_source *src, size_t n, const struct route_kind *k,
		 struct tool_table *t);
int tools_build(const struct tool_source *src, size_t n, struct tool_table *t);
const struct tool_route *tools_find(const struct tool_table *t, const char *name);
void tools_free(struct tool_table *t);
char *name_sanitise(const char *s);

#include "upstream.h"

/* ---- http.c ------------------------------------------------------------------------------ */

struct http_conf {
	const char *token;
	const char *version;
	const struct tool_table *tools;
	const struct tool_table *prompts;
	const struct tool_table *resources;
	const struct tool_table *templates;
	struct upstream **ups;	/* every upstream, for requests no table routes */
	size_t nups;
	char **allowed_hosts;	/* NULL: the defaults (see host_allowed) */
	char **allowed_origins;
	int64_t call_timeout_ns;
	int port;		/* the listen port: "<port>-<sandbox>.<domain>" Hosts are ours */
	char **servers;		/* sorted names */
	size_t page_size;
	int64_t session_idle_ns;
	size_t max_body;
	size_t max_sessions;
};

struct http_server;

struct http_server *http_start(const struct http_conf *conf, int listen_fd, char **err);
void http_quiesce(struct http_server *h, int grace_ms);
void http_stop(struct http_server *h);
/* The /health body: servers and counts of the merged lists. */
char *http_health(struct http_server *h);
bool token_equal(const char *header, const char *token);
const char *proto_negotiate(const char *requested);
bool proto_supported(const char *v);

/* ---- commands ---------------------------------------------------------------------------- */

int cmd_launch(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
void die_msg(const char *msg);

#endif /* GW_H */
