/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cubevs-fpctl: the operator's client of the cubevs-fp control API (HTTP through libcurl,
 * JSON through jansson; no DPDK, so it runs anywhere the API is reachable). This file is
 * the command line: the global options and the table of commands, each with its usage text
 * and its options; ctl_opts.c parses them all, ctl_cmds.c runs them.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ctl.h"
#include "cvs_version.h"

#define CTL_DEFAULT_API		"127.0.0.1:9180"
/* The daemon's socket at its defaults (--runtime-dir /run/cubevs-fp), used when it is there. */
#define CTL_DEFAULT_SOCK	"/run/cubevs-fp/api.sock"

static const char usage_main[] =
	"Usage: cubevs-fpctl [--api ADDR:PORT|unix:PATH] [--json] [--timeout S] COMMAND [ARGS]\n"
	"\n"
	"Operator tool for cubevs-fp, through its control API.\n"
	"\n"
	"Commands (each has --help):\n"
	"  status                          readiness and a summary\n"
	"  stats [--all]                   counters\n"
	"  sandbox list|show|add|del       registrations\n"
	"  ports ID [CONTAINER_PORT]       exposed ports and their endpoints\n"
	"  policy get|set ID               egress policy of a sandbox\n"
	"  sessions [--sandbox ID] [--limit N]   the session table\n"
	"\n"
	"Options:\n"
	"  --api ADDR:PORT | unix:PATH   API address [$CUBEVS_FP_API, else the socket\n"
	"                    " CTL_DEFAULT_SOCK " when it is there, else " CTL_DEFAULT_API "]\n"
	"  --json            print the API's JSON answer\n"
	"  --timeout S       give up after S seconds [10]\n"
	"  --version         print the version\n"
	"\n"
	"Exit status: 0 success, 1 the API answered with an error (printed) or is not\n"
	"ready, 2 usage error, 3 the API could not be reached.\n";

static const char usage_status[] =
	"Usage: cubevs-fpctl status [--json]\n"
	"Readiness of cubevs-fp (GET /readyz) and a summary of its counters. Exits 1 when it\n"
	"is not ready.\n";

static const char usage_stats[] =
	"Usage: cubevs-fpctl stats [--all] [--json]\n"
	"Counters of cubevs-fp (GET /stats), grouped. Without --all, counters that are zero\n"
	"are left out.\n";

static const char usage_sandbox[] =
	"Usage: cubevs-fpctl sandbox list [--json]\n"
	"       cubevs-fpctl sandbox show ID [--json]\n"
	"       cubevs-fpctl sandbox add ID --iface IFACE [--port PORT]... [--ip SANDBOX_IP]\n"
	"                          [--guest-mac MAC] [GUEST] [LIMITS]\n"
	"       cubevs-fpctl sandbox add ID --vhost-user SOCKET [--vhost-mode server|client]\n"
	"                          [--port PORT]... [--ip SANDBOX_IP] [--guest-mac MAC] [GUEST]\n"
	"                          [LIMITS]\n"
	"       cubevs-fpctl sandbox del ID\n"
	"Register (add: PUT /sandboxes/ID, also changes the exposed ports of a registered\n"
	"sandbox), remove, list and show sandboxes. GUEST addresses a guest on its own (a CNI\n"
	"pod) instead of the node-wide --guest-ip/--gateway-ip/--gateway-mac:\n"
	"  --guest-ip IP --gateway-ip IP --gateway-mac MAC   (guestIP, gatewayIP, gatewayMAC)\n"
	"LIMITS override the node's per-sandbox\n"
	"limits for this sandbox (0: no limit); given, they replace those set before (the\n"
	"others: the node's defaults); none given, those set before are kept:\n"
	"  --max-sessions N             sessions it opened (maxSessions)\n"
	"  --max-inbound N              sessions opened towards it (maxInboundSessions)\n"
	"  --new-sessions-per-sec N     new sessions a second (newSessionsPerSec)\n"
	"  --new-sessions-burst N       the burst of that (newSessionsBurst)\n"
	"  --snat-ports-per-endpoint N  SNAT ports towards one endpoint (snatPortsPerEndpoint)\n";

static const char usage_ports[] =
	"Usage: cubevs-fpctl ports ID [CONTAINER_PORT [--family ipv4|ipv6]] [--json]\n"
	"With a container port: the exposed-ports answer (GET /sandboxes/ID/exposed-ports/PORT);\n"
	"--family ipv6 gives the same host port on the node's IPv6 address (?family=ipv6).\n"
	"Without: every exposed port of the sandbox and its endpoint.\n";

static const char usage_policy[] =
	"Usage: cubevs-fpctl policy get ID [--json]\n"
	"       cubevs-fpctl policy set ID [--internet yes|no] [--allow CIDR]... [--deny CIDR]...\n"
	"                                   [--clear-allow] [--clear-deny]\n"
	"Egress policy of a sandbox (GET/PUT /sandboxes/ID/policy). 'set' reads the current\n"
	"policy and changes only what is given: --allow and --deny replace their list.\n";

static const char usage_sessions[] =
	"Usage: cubevs-fpctl sessions [--sandbox ID] [--proto tcp|udp|icmp] [--limit N]\n"
	"                             [--cursor C] [--all] [--json]\n"
	"A page of the session table (GET /sessions); --all follows the pages to the end.\n";

static const struct ctl_opt opts_main[] = {
	{ .name = "api", .kind = CTL_STR },
	{ .name = "timeout", .kind = CTL_NUM, .lo = 1, .hi = 3600, .unit = "seconds" },
	{ .name = "version", .kind = CTL_FLAG },
	{ .name = NULL },
};

static const struct ctl_opt opts_stats[] = {
	{ .name = "all", .kind = CTL_FLAG, .key = 'a' },
	{ .name = NULL },
};

static const struct ctl_opt opts_sandbox_add[] = {
	{ .name = "iface", .kind = CTL_STR, .key = 'i' },
	{ .name = "vhost-user", .kind = CTL_STR },
	{ .name = "vhost-mode", .kind = CTL_STR },
	{ .name = "port", .kind = CTL_NUMS, .key = 'p', .lo = 1, .hi = 65535 },
	{ .name = "ip", .kind = CTL_STR, .key = 'a' },
	{ .name = "guest-mac", .kind = CTL_STR, .key = 'm' },
	{ .name = "guest-ip", .kind = CTL_STR },
	{ .name = "gateway-ip", .kind = CTL_STR },
	{ .name = "gateway-mac", .kind = CTL_STR },
#define CTL_LIMIT_OPT(o, k) { .name = o, .kind = CTL_NUM, .lo = 0, .hi = CTL_LIMIT_MAX },
	CTL_LIMITS(CTL_LIMIT_OPT)
#undef CTL_LIMIT_OPT
	{ .name = NULL },
};

static const struct ctl_opt opts_policy_set[] = {
	{ .name = "internet", .kind = CTL_STR },
	{ .name = "allow", .kind = CTL_STRS },
	{ .name = "deny", .kind = CTL_STRS },
	{ .name = "clear-allow", .kind = CTL_FLAG },
	{ .name = "clear-deny", .kind = CTL_FLAG },
	{ .name = NULL },
};

static const struct ctl_opt opts_ports[] = {
	{ .name = "family", .kind = CTL_STR },
	{ .name = NULL },
};

static const struct ctl_opt opts_sessions[] = {
	{ .name = "sandbox", .kind = CTL_STR },
	{ .name = "proto", .kind = CTL_STR },
	{ .name = "limit", .kind = CTL_NUM, .lo = 1, .hi = UINT32_MAX },
	{ .name = "cursor", .kind = CTL_STR },
	{ .name = "all", .kind = CTL_FLAG },
	{ .name = NULL },
};

static const struct ctl_cmd cmd_main = {
	"cubevs-fpctl", NULL, usage_main, 0, INT_MAX, true, opts_main, NULL,
};

static const struct ctl_cmd ctl_cmds[] = {
	{ "status", NULL, usage_status, 0, 0, false, NULL, ctl_run_status },
	{ "stats", NULL, usage_stats, 0, 0, false, opts_stats, ctl_run_stats },
	{ "sandbox", "list", usage_sandbox, 0, 0, false, NULL, ctl_run_sandbox_list },
	{ "sandbox", "show", usage_sandbox, 1, 1, false, NULL, ctl_run_sandbox_show },
	{ "sandbox", "add", usage_sandbox, 1, 1, false, opts_sandbox_add, ctl_run_sandbox_add },
	{ "sandbox", "del", usage_sandbox, 1, 1, false, NULL, ctl_run_sandbox_del },
	{ "ports", NULL, usage_ports, 1, 2, false, opts_ports, ctl_run_ports },
	{ "policy", "get", usage_policy, 1, 1, false, NULL, ctl_run_policy_get },
	{ "policy", "set", usage_policy, 1, 1, false, opts_policy_set, ctl_run_policy_set },
	{ "sessions", NULL, usage_sessions, 0, 0, false, opts_sessions, ctl_run_sessions },
};

#define CTL_NCMDS	(sizeof(ctl_cmds) / sizeof(ctl_cmds[0]))

/* "ADDR:PORT", or "[V6ADDR]:PORT"; the port a whole number 1..65535; or "unix:PATH". */
static int
ctl_set_api(struct ctl *c, const char *s)
{
	const char *colon = strrchr(s, ':');
	uint32_t port;
	size_t hl;

	snprintf(c->where, sizeof(c->where), "%s", s);
	if (!strncmp(s, "unix:", 5)) {
		if (s[5] != '/' || strlen(s + 5) >= sizeof(c->sock))
			return -1;
		snprintf(c->sock, sizeof(c->sock), "%s", s + 5);
		return 0;
	}
	if (!colon || colon == s || cvs_parse_u32(colon + 1, 1, 65535, &port))
		return -1;
	hl = (size_t)(colon - s);
	if (s[0] == '[' && hl >= 2 && s[hl - 1] == ']') {
		s++;
		hl -= 2;
	}
	/* Only what a host name or an address holds: the host becomes part of a URL. */
	if (!hl || hl >= sizeof(c->host) || strspn(s, "abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:%") < hl)
		return -1;
	memcpy(c->host, s, hl);
	c->host[hl] = '\0';
	snprintf(c->port, sizeof(c->port), "%u", port);
	return 0;
}

/* The command ARGV names, or NULL after printing what is wrong (*rc the exit code). */
static const struct ctl_cmd *
ctl_find(int argc, char **argv, int *rc)
{
	const char *usage = NULL;
	size_t i;

	for (i = 0; i < CTL_NCMDS; i++) {
		const struct ctl_cmd *k = &ctl_cmds[i];

		if (strcmp(k->name, argv[0]))
			continue;
		if (!k->sub)
			return k;
		usage = k->usage;
		if (argc > 1 && !strcmp(k->sub, argv[1]))
			return k;
	}
	*rc = EXIT_USAGE;
	if (!usage) {
		ctl_err("unknown command '%s' (see --help)", argv[0]);
	} else if (argc < 2) {
		fputs(usage, stderr);
	} else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, stdout);
		*rc = EXIT_OK;
	} else {
		ctl_err("unknown %s command '%s'", argv[0], argv[1]);
		fputs(usage, stderr);
	}
	return NULL;
}

static int
ctl_command(struct ctl *c, int argc, char **argv)
{
	const struct ctl_cmd *cmd;
	struct ctl_args a;
	int rc;

	if (!strcmp(argv[0], "help")) {
		fputs(usage_main, stdout);
		return EXIT_OK;
	}
	cmd = ctl_find(argc, argv, &rc);
	if (!cmd)
		return rc;
	if (cmd->sub) {
		argc--;
		argv++;
	}
	rc = ctl_parse(c, cmd, argc, argv, &a);
	if (rc < 0)
		rc = cmd->run(c, &a);
	ctl_args_free(&a);
	return rc;
}

/*
 * The local socket when a daemon at its defaults accepts on it (one killed leaves the file),
 * else its TCP listener.
 */
static const char *
ctl_default_api(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = CTL_DEFAULT_SOCK };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool up = fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa));

	if (fd >= 0)
		close(fd);
	return up ? "unix:" CTL_DEFAULT_SOCK : CTL_DEFAULT_API;
}

int
main(int argc, char **argv)
{
	struct ctl c = { .timeout = 10 };
	const char *api = getenv("CUBEVS_FP_API");
	struct ctl_args a;
	int rc;

	rc = ctl_parse(&c, &cmd_main, argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (ctl_flag(&a, "version")) {
		printf("cubevs-fpctl %s\n", CVS_VERSION);
		return EXIT_OK;
	}
	if (ctl_str(&a, "api"))
		api = ctl_str(&a, "api");
	else if (!api || !*api)
		api = ctl_default_api();
	c.timeout = ctl_num(&a, "timeout", c.timeout);
	if (ctl_set_api(&c, api)) {
		ctl_err("--api wants ADDR:PORT or unix:/PATH, got '%s'", api);
		return EXIT_USAGE;
	}
	if (!a.npos) {
		fputs(usage_main, stderr);
		return EXIT_USAGE;
	}
	rc = ctl_command(&c, a.npos, a.pos);
	ctl_close(&c);
	return rc;
}
