/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process's own state, shared by main.c (the steps from EAL on, the loop, the teardown)
 * and preflight.c (the steps before EAL: options, the checks that change nothing, the EAL
 * command line). Nobody else includes it: the other modules get what they read from main.c
 * through their own init calls.
 */
#ifndef CVS_NODE_H
#define CVS_NODE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include <rte_spinlock.h>

#include "api.h"
#include "config.h"
#include "cvs_common.h"
#include "funnel.h"
#include "linkwatch.h"
#include "nexthop.h"
#include "obs.h"
#include "ports.h"
#include "publish.h"
#include "region.h"
#include "registry.h"
#include "store.h"
#include "worker.h"
#include "xdpctl.h"

struct node {
	struct cvs_config cfg;
	struct dp_cfg dpc;		/* addressing shared by the workers */
	struct worker *w;		/* nw workers */
	uint32_t nw;
	struct ports pt;		/* world port, cube-dev, the mbuf pool */
	rte_spinlock_t txlock[16];	/* world tx queues shared by several workers */
	struct publish pub;		/* the state the workers read */
	struct xdp_steer steer;
	bool have_steer;
	struct xdp_sbx sbx;
	struct funnel fun[CVS_FUN_MAX];	/* one per worker */
	struct linkwatch lw;		/* the kernel's link events */
	struct registry reg;
	struct nexthop nexthop;
	bool have_nexthop;
	uint32_t world_mask;
	struct obs obs;
	struct api_routes routes;
	struct api *api;
	json_t *restore;	/* registrations read from the state file at start */
	json_t *restore_holds;	/* and the host-port holds (NULL: none) */
	struct store_loaded loaded;	/* what the state file and its journal held */
	struct store store;
	char pin_dir[300];	/* the XDP maps' pins for the world interface; "" for none */
	struct region region;	/* the session tables, kept across restarts */
	bool have_region;
	char hvdev[128];	/* EAL --vdev argument of cube-dev */
	struct cvs_trim trim;	/* the heaps given back after mass deletions */
};

/* A start-up error before the EAL runs (or when it fails): the message, exit status 2. */
void __attribute__((noreturn, format(printf, 1, 2))) node_fail_early(const char *fmt, ...);

/* Options; 1 when --help or --version was asked and answered, exits on bad options. */
int node_parse(struct node *n, int argc, char **argv, int *app_at);
/* The world interface, the kernel's port range, the state file: exits on what stops a start. */
void node_preflight(struct node *n);
/* The EAL's arguments (those before "--"), with cube-dev's --vdev when it is asked for. */
char **node_eal_args(struct node *n, int app_at, char **argv, int *eal_argc);

#endif
