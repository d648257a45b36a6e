/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps of the start that come before the EAL: the options (--help and --version need
 * nothing else), the checks that must stop a start before anything on the node changes (the
 * world interface, a foreign XDP program, the kernel's port range, the state file and its
 * lock), and the EAL's command line. main.c runs them, then everything else.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <arpa/inet.h>

#include "api.h"
#include "config.h"
#include "cvs_common.h"
#include "cvs_commit.h"
#include "cvs_version.h"
#include "hostif.h"
#include "node.h"
#include "ports.h"
#include "state.h"
#include "store.h"
#include "xdpctl.h"
#include "xdppin.h"

#define EPHEMERAL_PATH	"/proc/sys/net/ipv4/ip_local_port_range"

void __attribute__((noreturn))
node_fail_early(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cvs_verr("cubevs-fp", fmt, ap);
	va_end(ap);
	exit(2);
}

/* ---- step 1: options and the checks that need no EAL ---- */

/*
 * Parse the application options (after "--"). Returns 1 when the request was --help or
 * --version and has been answered; exits on bad options.
 */
int
node_parse(struct node *n, int argc, char **argv, int *app_at)
{
	int app_argc, i;
	char **app_argv, *a0 = argv[0], err[512];

	*app_at = argc;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			*app_at = i;
			break;
		}
	/* Without "--", still answer --help and --version (no EAL, no root needed). */
	for (i = 1; *app_at == argc && i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cvs_config_usage(stdout, "cubevs-fp");
			return 1;
		}
		if (!strcmp(argv[i], "--version")) {
			printf("cubevs-fp %s\n", CVS_RELEASE);
			return 1;
		}
	}
	/* getopt wants argv[0]: reuse the "--" slot for it. */
	app_argc = argc - *app_at;
	app_argv = argv + *app_at;
	if (*app_at < argc) {
		app_argv[0] = a0;
	} else {
		app_argc = 1;
		app_argv = &a0;
	}
	if (cvs_config_parse(&n->cfg, app_argc, app_argv, err, sizeof(err)))
		node_fail_early("%s", err);
	if (n->cfg.help) {
		cvs_config_usage(stdout, "cubevs-fp");
		return 1;
	}
	if (n->cfg.version) {
		printf("cubevs-fp %s\n", CVS_RELEASE);
		return 1;
	}
	return 0;
}

/* Which release pinned the maps before (said when it was another), and that this one does. */
static void
node_pins_release(struct node *n)
{
	char prev[64];

	if (xdppin_release(n->pin_dir, CVS_RELEASE, prev, sizeof(prev)))
		fprintf(stderr, "cubevs-fp: cannot record the release in %s: %s\n", n->pin_dir,
			strerror(errno));
	else if (prev[0] && strcmp(prev, CVS_RELEASE))
		fprintf(stderr, "cubevs-fp: the maps pinned in %s were pinned by cubevs-fp %s\n",
			n->pin_dir, prev);
}

/* The world interface, the kernel's port range, the state file: before anything changes. */
void
node_preflight(struct node *n)
{
	char err[512];
	unsigned int want;
	int ret;

	if (n->cfg.world_iface[0]) {
		n->pt.world_ifindex = (int)if_nametoindex(n->cfg.world_iface);
		if (!n->pt.world_ifindex)
			node_fail_early("--world-iface %s: no such interface", n->cfg.world_iface);
		n->cfg.node_ip = hostif_ipv4(n->cfg.world_iface, n->cfg.node_ip, &n->world_mask) ?:
				 n->cfg.node_ip;
		if (!n->cfg.node_ip)
			node_fail_early("%s has no IPv4 address; give --node-ip", n->cfg.world_iface);
		/* Only the kernel answers neighbour solicitations for it: without, no replies. */
		if (n->cfg.have_ip6 && !hostif_has_ipv6(n->cfg.world_iface, n->cfg.node_ip6))
			fprintf(stderr, "cubevs-fp: warning: %s does not carry --node-ip6 %s: "
				"nobody answers neighbour solicitations for it, so no IPv6 reply "
				"reaches the node ('ip addr add %s/64 dev %s')\n", n->cfg.world_iface,
				inet_ntop(AF_INET6, n->cfg.node_ip6, err, sizeof(err)), err,
				n->cfg.world_iface);
		/* Someone else's program there stops us before anything on the node changes. */
		if (xdpctl_steer_check(n->pt.world_ifindex, n->cfg.world_iface, err,
				       sizeof(err)) < 0)
			node_fail_early("%s", err);
		if (n->cfg.bpf_pin_dir[0] &&
		    xdppin_dir(n->cfg.bpf_pin_dir, n->cfg.world_iface, n->pin_dir,
			       sizeof(n->pin_dir), err, sizeof(err))) {
			fprintf(stderr, "cubevs-fp: the XDP maps are not pinned: %s\n", err);
			n->pin_dir[0] = '\0';
		} else if (n->cfg.bpf_pin_dir[0]) {
			node_pins_release(n);
		}
	}
	/* A link fd per sandbox, a socket per API connection, and the rest (ports, TAPs...). */
	want = n->cfg.max_sandboxes + CVS_API_MAX_CONNECTIONS + 1024u;
	if (cvs_fd_room(want) < want)
		fprintf(stderr, "cubevs-fp: the open-files limit (RLIMIT_NOFILE, hard) is under "
			"the %u that --max-sandboxes %u may need: sandboxes past it are attached "
			"through rtnetlink, without a pinned link (raise LimitNOFILE / ulimit -Hn)\n",
			want, n->cfg.max_sandboxes);
	ret = cvs_check_ephemeral(&n->cfg, EPHEMERAL_PATH, n->cfg.set_ephemeral, err,
				  sizeof(err));
	if (ret < 0)
		node_fail_early("%s", err);
	if (ret > 0)
		fprintf(stderr, "cubevs-fp: %s\n", err);
	ret = cvs_config_make_dirs(&n->cfg, err, sizeof(err));
	if (ret < 0)
		node_fail_early("%s", err);
	if (ret > 0)
		fprintf(stderr, "cubevs-fp: %s\n", err);
	/* A state file we cannot own or read stops us before anything on the node changes. */
	if (n->cfg.state_file[0]) {
		if (state_lock(n->cfg.state_file, err, sizeof(err)) < 0)
			node_fail_early("%s", err);
		if (store_load(n->cfg.state_file, &n->restore, &n->restore_holds, &n->loaded, err,
			       sizeof(err)))
			node_fail_early("%s", err);
		/* Never acknowledged (the answer waits for the fdatasync): left out, said so. */
		if (n->loaded.torn)
			fprintf(stderr, "cubevs-fp: journal of %s: %s\n", n->cfg.state_file,
				n->loaded.torn_why);
	}
}

/* ---- step 2: the EAL command line, with cube-dev when asked ---- */

char **
node_eal_args(struct node *n, int app_at, char **argv, int *eal_argc)
{
	char **eal_argv = calloc((size_t)app_at + 8, sizeof(char *));

	if (!eal_argv)
		node_fail_early("out of memory");
	for (*eal_argc = 0; *eal_argc < app_at; (*eal_argc)++)
		eal_argv[*eal_argc] = argv[*eal_argc];
	if (n->cfg.host_iface[0]) {
		if (if_nametoindex(n->cfg.host_iface))
			node_fail_early("%s exists already: another instance, or a leftover "
					"(remove it with 'ip link del %s'); or give --host-iface",
					n->cfg.host_iface, n->cfg.host_iface);
		snprintf(n->hvdev, sizeof(n->hvdev), HOST_VDEV ",iface=%.16s", n->cfg.host_iface);
		eal_argv[(*eal_argc)++] = (char *)"--vdev";
		eal_argv[(*eal_argc)++] = n->hvdev;
	}
	return eal_argv;
}
