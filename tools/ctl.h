/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cubevs-fpctl: the pieces the command line (cubevs-fpctl.c), the option parser (ctl_opts.c),
 * the API client (ctl_http.c) and the commands (ctl_cmds.c) share.
 */
#ifndef CTL_H
#define CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "cvs_common.h"

#define CTL_PROG		"cubevs-fpctl"
#define CTL_MAX_OPTS		16	/* options of one command, --help and --json aside */

#define ctl_err(...)		cvs_err(CTL_PROG, __VA_ARGS__)

/* Exit codes: documented in cubevs-fpctl(8). */
enum {
	EXIT_OK = 0,
	EXIT_API = 1,		/* the API answered with an error (or "not ready") */
	EXIT_USAGE = 2,
	EXIT_CONNECT = 3,	/* no answer at all */
};

struct ctl {
	char host[256];
	char port[16];
	char sock[108];		/* the API's unix socket, "" for TCP */
	char where[300];	/* what the messages call it: ADDR:PORT or unix:PATH */
	bool json;
	uint32_t timeout;	/* seconds */
	void *curl;		/* one handle for every request: paging reuses the connection */
};

/* ---- options (ctl_opts.c) ---- */

enum ctl_kind {
	CTL_FLAG,		/* --all */
	CTL_STR,		/* --iface IFACE */
	CTL_NUM,		/* --limit N: a whole number in [lo, hi] */
	CTL_STRS,		/* --allow CIDR, repeatable: a JSON array of strings */
	CTL_NUMS,		/* --port PORT, repeatable: a JSON array of numbers in [lo, hi] */
};

struct ctl_opt {
	const char *name;	/* without "--" */
	enum ctl_kind kind;
	char key;		/* a short option, or 0 */
	bool required;
	uint32_t lo, hi;	/* numbers */
	const char *unit;	/* numbers: what one is, for the error message ("seconds") */
};

struct ctl_val {
	bool set;
	const char *str;
	uint32_t num;
	json_t *list;
};

struct ctl_args {
	const struct ctl_opt *opts;
	struct ctl_val val[CTL_MAX_OPTS];
	char **pos;		/* positional arguments */
	int npos;
};

struct ctl_cmd {
	const char *name;	/* "sandbox" */
	const char *sub;	/* "add", or NULL for a command of one word */
	const char *usage;	/* --help, and on stderr after a usage error */
	int min_args, max_args;	/* positional */
	bool stop_at_arg;	/* options end at the first positional (the global ones) */
	const struct ctl_opt *opts;	/* ends with a NULL name; --help and --json are implicit */
	int (*run)(struct ctl *c, const struct ctl_args *a);
};

/*
 * Parse ARGV (ARGV[0] is the command) against CMD's options into A. Returns -1 to go on, or
 * the exit code after printing --help (EXIT_OK) or a usage error (EXIT_USAGE).
 */
int ctl_parse(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv,
	      struct ctl_args *a);
void ctl_args_free(struct ctl_args *a);
bool ctl_flag(const struct ctl_args *a, const char *name);
const char *ctl_str(const struct ctl_args *a, const char *name);
/* The value of a CTL_NUM option, or DEF when it was not given. */
uint32_t ctl_num(const struct ctl_args *a, const char *name, uint32_t def);
json_t *ctl_list(const struct ctl_args *a, const char *name);

/* ---- the API (ctl_http.c) ---- */

struct ctl_resp {
	long status;
	char *body;		/* NUL-terminated */
	size_t len;
};

/* One HTTP request. Returns 0 with the answer, or -1 after printing why there is none. */
int ctl_http(struct ctl *c, const char *method, const char *path, const char *body,
	     struct ctl_resp *r);
/*
 * One API call: the parsed JSON of a 2xx answer (a JSON null for an empty one), or NULL
 * after printing the API's error. *rc gets the exit code.
 */
json_t *ctl_call(struct ctl *c, const char *method, const char *path, const char *body,
		 int *rc);
/* PATH_FMT with every %s (its only conversion) percent-encoded; NULL after printing why. */
char *ctl_path(struct ctl *c, const char *path_fmt, ...);
void ctl_close(struct ctl *c);
void ctl_print_json(const json_t *j);

/* ---- the commands (ctl_cmds.c) ---- */

/*
 * The per-sandbox limits of sandbox add: option name, registration field. The options are
 * in the command table (cubevs-fpctl.c) as CTL_NUM 0..CTL_LIMIT_MAX, in this order.
 */
#define CTL_LIMITS(_) \
	_("max-sessions",		"maxSessions") \
	_("max-inbound",		"maxInboundSessions") \
	_("new-sessions-per-sec",	"newSessionsPerSec") \
	_("new-sessions-burst",		"newSessionsBurst") \
	_("snat-ports-per-endpoint",	"snatPortsPerEndpoint")
#define CTL_LIMIT_MAX		(1u << 30)	/* the API's largest (REG_LIMIT_CAP) */

int ctl_run_status(struct ctl *c, const struct ctl_args *a);
int ctl_run_stats(struct ctl *c, const struct ctl_args *a);
int ctl_run_sandbox_list(struct ctl *c, const struct ctl_args *a);
int ctl_run_sandbox_show(struct ctl *c, const struct ctl_args *a);
int ctl_run_sandbox_add(struct ctl *c, const struct ctl_args *a);
int ctl_run_sandbox_del(struct ctl *c, const struct ctl_args *a);
int ctl_run_ports(struct ctl *c, const struct ctl_args *a);
int ctl_run_policy_get(struct ctl *c, const struct ctl_args *a);
int ctl_run_policy_set(struct ctl *c, const struct ctl_args *a);
int ctl_run_sessions(struct ctl *c, const struct ctl_args *a);

#endif /* CTL_H */
