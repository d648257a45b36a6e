/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cubevs-fp: set-up on the main lcore (options, EAL, world port, XDP programs, workers, API),
 * then the control loop until SIGTERM/SIGINT, then an orderly teardown. main() is the list of
 * steps; each step is a function below, in the order it runs, but for the steps before the
 * EAL (options, preflight checks, the EAL's arguments), which are preflight.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "api.h"
#include "config.h"
#include "funnel.h"
#include "linkwatch.h"
#include "cvs_common.h"
#include "cvs_commit.h"
#include "cvs_version.h"
#include "hostif.h"
#include "hostlisten.h"
#include "log.h"
#include "nexthop.h"
#include "node.h"
#include "notify.h"
#include "obs.h"
#include "ports.h"
#include "publish.h"
#include "reg_api.h"
#include "region.h"
#include "region_reg.h"
#include "registry.h"
#include "rollback.h"
#include "state.h"
#include "store.h"
#include "telemetry.h"
#include "worker.h"
#include "xdpctl.h"
#include "xdppin.h"

static volatile sig_atomic_t force_quit;

static void
on_signal(int sig)
{
	force_quit = 1;
}

/* ---- step 2: EAL, log types, signals (the steps before it are in preflight.c) ---- */

static void
node_eal_init(struct node *n, int eal_argc, char **eal_argv)
{
	n->pt.host = UINT16_MAX;
	n->pt.world = UINT16_MAX;
	n->nw = n->cfg.workers;
	n->w = calloc(n->nw, sizeof(*n->w));
	if (!n->w)
		node_fail_early("out of memory");
	if (rte_eal_init(eal_argc, eal_argv) < 0)
		node_fail_early("EAL initialisation failed: %s", rte_strerror(rte_errno));
	cvs_log_init();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

/* ---- step 3: ports ---- */

/* An EAL world port on a kernel interface: its address, and our program if its PMD has it. */
static void
node_steer_eal(struct node *n)
{
	char err[512], ifname[IF_NAMESIZE];

	if (if_indextoname((unsigned int)n->pt.world_ifindex, ifname))
		n->cfg.node_ip = hostif_ipv4(ifname, n->cfg.node_ip, &n->world_mask) ?:
				 n->cfg.node_ip;
	n->have_steer = !xdpctl_steer_open(&n->steer, n->pt.world_ifindex, err, sizeof(err));
	if (!n->have_steer)
		CVS_LOG(WARNING, xdp, "%s: every frame of the world queue comes to us", err);
	else if (xdpctl_steer_cfg(&n->steer, n->cfg.node_ip, n->cfg.snat_ports.lo,
				  n->cfg.snat_ports.hi,
				  n->cfg.restart_grace_s * 1000000000ull) ||
		 xdpctl_steer_cfg6(&n->steer, n->cfg.have_ip6 ? n->cfg.node_ip6 : NULL))
		CVS_LOG(ERR, xdp, "cannot configure the steering program: %s", strerror(errno));
}

/* World port, cube-dev, the node address, the steering and the sandbox XDP programs. */
static int
node_ports(struct node *n)
{
	char err[512];
	int ret;

	ret = ports_world_setup(&n->pt, &n->cfg, n->nw, &n->dpc, err, sizeof(err));
	if (!ret && n->pt.host != UINT16_MAX)
		ret = ports_host_setup(&n->pt, &n->cfg, n->nw, &n->dpc, err, sizeof(err));
	if (ret) {
		CVS_LOG(ERR, main, "%s", err);
		return ret;
	}
	if (!n->cfg.world_iface[0] && n->pt.world_ifindex > 0)
		node_steer_eal(n);
	if (!n->cfg.node_ip) {
		CVS_LOG(ERR, main, "no node IP: give --node-ip");
		return -EINVAL;
	}
	if (n->cfg.world_iface[0]) {
		ret = ports_world_steer(&n->pt, &n->cfg, &n->steer, n->pin_dir,
					n->cfg.world_queues == n->nw);
		if (ret)
			return ret;
		n->have_steer = true;
	}
	ret = xdpctl_sbx_load(&n->sbx, n->cfg.max_sandboxes, n->pin_dir, err, sizeof(err));
	if (ret)
		CVS_LOG(ERR, xdp, "%s", err);
	else if (n->sbx.note[0])
		CVS_LOG(WARNING, xdp, "%s", n->sbx.note);
	else if (n->sbx.reused)
		CVS_LOG(INFO, xdp, "sandbox maps reused from %s (%u maps)", n->pin_dir,
			n->sbx.reused);
	return ret;
}

/* ---- step 4: the state the workers share, and the workers ---- */

static int
node_shared(struct node *n)
{
	n->dpc.node_ip = n->cfg.node_ip;
	n->dpc.world_mask = n->world_mask ? n->world_mask : 0xffffffff;
	n->dpc.world_net = n->cfg.node_ip & n->dpc.world_mask;
	n->dpc.sbx_mask = htonl(~0u << (32 - n->cfg.sandbox_prefix));
	n->dpc.sbx_net = n->cfg.sandbox_net;
	n->dpc.snat_lo = n->cfg.snat_ports.lo;
	n->dpc.snat_hi = n->cfg.snat_ports.hi;
	n->dpc.guest_ip = n->cfg.guest_ip;
	n->dpc.gw_ip = n->cfg.gw_ip;
	n->dpc.tcp_liberal = n->cfg.tcp_liberal;
	memcpy(n->dpc.guest_mac, n->cfg.guest_mac, 6);
	memcpy(n->dpc.gw_mac, n->cfg.gw_mac, 6);
	n->dpc.have_ip6 = n->cfg.have_ip6;
	memcpy(n->dpc.node_ip6, n->cfg.node_ip6, 16);
	memcpy(n->dpc.guest_pfx6, n->cfg.guest_pfx6, 8);
	memcpy(n->dpc.sbx_pfx6, n->cfg.sbx_pfx6, 12);
	if (publish_init(&n->pub, n->cfg.max_sandboxes, n->cfg.sandbox_net,
			 n->cfg.sandbox_prefix) || obs_init(&n->obs)) {
		CVS_LOG(ERR, main, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Each worker owns a table of its share of the sessions, its queues and its SNAT ports. */
/* Worker i's one socket for all its interface sandboxes (control/ports/funnel.h). */
/*
 * With a world queue per worker that runs in copy mode, the queue's socket joins the funnel's
 * UMEM and a frame crosses between the world and a sandbox by descriptor (docs/datapath.md,
 * "One frame pool"). Half the frames still transmit for both; of the receiving half the world
 * queue gets a quarter (1,024 of the default 8,192, the depth net_af_xdp gave it) and the
 * funnel the rest, so its sandboxes keep most of the depth they had alone.
 */
static int
node_funnel(struct node *n, uint32_t i)
{
	uint32_t frames = n->cfg.sandbox_umem_frames, world = frames / 8;
	bool share = worldq_pending(&n->pt.wq, i);
	char err[512];
	int ret = funnel_for_worker(&n->fun[i], &n->sbx, &n->w[i], frames,
				    frames / 2 - (share ? world : 0), err, sizeof(err));

	if (!ret && funnel_sbx_mtu_max(&n->fun[i]) < n->pub.sbx_mtu_max)
		n->pub.sbx_mtu_max = funnel_sbx_mtu_max(&n->fun[i]);
	if (!ret && share) {
		ret = worldq_share(&n->pt.wq, i, n->fun[i].xp, world, err, sizeof(err));
		if (!ret)
			worker_share_world(&n->w[i], n->pt.wq.xp[i]);
	}
	if (ret)
		CVS_LOG(ERR, main, "worker %u: %s", i, err);
	return ret;
}

static int
node_worker_init(struct node *n, uint32_t i)
{
	uint16_t q = (uint16_t)n->cfg.world_queues;
	struct worker_conf c = {
		.id = i, .nworkers = n->nw, .all = n->w,
		.ct = n->have_region ? n->region.ct[i] :
		      ct_create((n->cfg.max_sessions + n->nw - 1) / n->nw, n->cfg.max_sandboxes,
				n->cfg.timeouts),
		.ct6 = n->have_region ? n->region.ct6[i] : NULL,
		.clock_base = n->have_region ? region_clock_now(&n->region) : 0,
		.slot_st = n->pub.slot_st, .wp = &n->pub.wp, .mp = n->pt.mp,
		.world_port = n->pt.world, .world_queues = q,
		.world_txlock = q < n->nw ? &n->txlock[i % q] : NULL,
		.world_xsk = n->pt.wq.n ? n->pt.wq.xp : NULL,
		/* The fault the unpacked pool made on net_af_xdp, made on our own sockets. */
		.test_bad_tx = n->cfg.test_unpacked_pool && n->pt.wq.n ? 256 : 0,
		.host_port = n->dpc.have_host ? n->pt.host : UINT16_MAX,
		.idle_sleep_us = n->cfg.idle_sleep_us, .frag = n->cfg.frag, .cfg = &n->dpc,
		.sh = n->pub.sh,
	};

	rte_spinlock_init(&n->txlock[i % q]);
	if (worker_init(&n->w[i], &c)) {
		CVS_LOG(ERR, main, "cannot allocate worker %u (session table of %u)", i,
			n->cfg.max_sessions / n->nw);
		return -ENOMEM;
	}
	return node_funnel(n, i);
}

/* The workers, the next-hop resolver that feeds them, and an lcore for each. */
static int
node_workers(struct node *n)
{
	char err[512];
	unsigned int lcore = -1u;
	uint32_t i;

	n->have_region = !region_start(&n->region, &n->cfg, n->nw);
	for (i = 0; i < n->nw; i++)
		if (node_worker_init(n, i))
			return -ENOMEM;
	funnel_remove_from(&n->sbx, n->nw);
	if (n->pt.world_ifindex > 0) {
		n->have_nexthop = !nexthop_open(&n->nexthop, n->pt.world_ifindex, &n->pub.sh->nh,
						n->w, n->nw,
						n->cfg.have_nh_fallback ? n->cfg.nh_fallback : NULL,
						err, sizeof(err));
		if (!n->have_nexthop)
			CVS_LOG(WARNING, ctl, "%s: egress needs --next-hop-mac", err);
		else if (n->cfg.have_ip6 &&
			 nexthop_open_ip6(&n->nexthop, &n->pub.sh->nh6_mac, err, sizeof(err)))
			CVS_LOG(WARNING, ctl, "%s: no IPv6 egress", err);
	}
	if (!n->have_nexthop && n->cfg.have_nh_fallback)
		dp_nh_store(&n->pub.sh->nh, 0, n->cfg.nh_fallback);
	for (i = 0; i < n->nw; i++) {
		lcore = rte_get_next_lcore(lcore, 1, 0);
		if (lcore >= RTE_MAX_LCORE) {
			CVS_LOG(ERR, main, "%u workers need %u worker lcores: give EAL more "
				"(-l 0-%u, or --lcores to share CPUs)", n->nw, n->nw, n->nw);
			return -EINVAL;
		}
		n->w[i].lcore = lcore;
	}
	return 0;
}

/* ---- step 5: the registry, and where the other modules find what they read ---- */

static int
node_registry(struct node *n)
{
	n->pub.w = n->w;
	n->pub.nw = n->nw;
	n->pub.sbx = &n->sbx;
	n->pub.dpc = &n->dpc;
	n->pub.steer = n->have_steer ? &n->steer : NULL;
	n->pub.world_ifindex = n->pt.world_ifindex;
	if (reg_init(&n->reg, n->cfg.max_sandboxes, n->cfg.host_ports.lo, n->cfg.host_ports.hi,
		     n->cfg.sandbox_net, n->cfg.sandbox_prefix, n->cfg.node_ip, &publish_reg_ops,
		     &n->pub)) {
		CVS_LOG(ERR, main, "cannot allocate the registry");
		return -ENOMEM;
	}
	reg_set_node_ip6(&n->reg, n->cfg.have_ip6 ? n->cfg.node_ip6 : NULL);
	reg_set_sbx_pfx6(&n->reg, n->cfg.have_ip6 && n->dpc.have_host ? n->cfg.sbx_pfx6 : NULL);
	hostlisten_node_ip6(n->cfg.have_ip6 ? n->cfg.node_ip6 : NULL);
	reg_hostports_configure(&n->reg, n->cfg.reserved, n->cfg.n_reserved,
				n->cfg.hostport_hold_s);
	reg_set_default_guest_mac(&n->reg, n->cfg.guest_mac);
	{
		struct reg_limits lim = { .set = 0 };

		_Static_assert((int)CVS_SLIM_MAX == (int)REG_LIM_MAX, "limits in one order");
		memcpy(lim.v, n->cfg.sbx_lim, sizeof(lim.v));
		reg_set_default_limits(&n->reg, &lim);
	}
	n->obs.w = n->w;
	n->obs.nw = n->nw;
	n->obs.reg = &n->reg;
	n->obs.cfg = &n->cfg;
	n->obs.steer = n->have_steer ? &n->steer : NULL;
	n->obs.region = n->have_region ? &n->region.info : NULL;
	n->obs.sbx = &n->sbx;
	n->obs.store = &n->store;
	n->obs.world_port = n->pt.world;
	n->obs.host_port = n->pt.host;
	n->obs.world_ifindex = n->pt.world_ifindex;
	n->obs.wq = &n->pt.wq;
	return 0;
}

/* ---- step 6: launch the workers ---- */

static void
node_launch(struct node *n)
{
	uint32_t i;

	for (i = 0; i < n->nw; i++)
		rte_eal_remote_launch(worker_main, &n->w[i], n->w[i].lcore);
	n->pub.launched = true;
}

/* ---- step 7: registrations back, then telemetry and the API ---- */

/* A registration changed (registry lock held): its journal record and its zone record. */
static void
node_change(void *ctx, const struct reg_change *c)
{
	struct node *n = ctx;

	store_change(&n->store, c);
	if (n->have_region)
		region_note(&n->region, c->sb, c->deleted);
}

static int
node_commit(void *ctx, char *err, size_t errlen)
{
	struct node *n = ctx;
	int ret = store_commit(&n->store, err, errlen);

	if (ret) {
		atomic_fetch_add(&n->obs.state_write_errors, 1);
		CVS_LOG(ERR, ctl, "%s", err);
	} else {
		atomic_fetch_add(&n->obs.state_writes, 1);
	}
	return ret;
}

static const struct reg_store_ops node_store_ops = {
	.change = node_change,
	.commit = node_commit,
};

/*
 * Bring back the registrations of the state file and its journal, with the same addresses and
 * host ports, then write the snapshot again and start an empty journal: that proves the
 * directory writable before the first registration needs it.
 */
static int
node_restore(struct node *n, char *err, size_t errlen)
{
	uint32_t total, left;
	int ret;

	/* Listening before the first attach: no interface change falls between the two. */
	if (linkwatch_open(&n->lw, err, errlen))
		CVS_LOG(WARNING, ctl, "%s: sandbox interfaces are checked every 2 s instead", err);
	if (!n->cfg.state_file[0])
		return 0;
	ret = reg_restore(&n->reg, n->restore, err, errlen);
	if (!ret && n->restore_holds)
		ret = reg_holds_restore(&n->reg, n->restore_holds, err, errlen);
	if (ret) {
		CVS_LOG(ERR, ctl, "state file %s: %s", n->cfg.state_file, err);
		snprintf(err, errlen, "the state file was left as it is: repair it, or move it "
			 "away to start without registrations");
		return ret;
	}
	reg_attach_pending(&n->reg);
	reg_counts(&n->reg, &total, &left);
	CVS_LOG(INFO, ctl, "restored %u sandboxes from %s (%u journal records applied, %u "
		"already in it), %u not attached", total, n->cfg.state_file, n->loaded.replayed,
		n->loaded.skipped, left);
	if (left)
		obs_log_unattached(&n->obs);
	ret = store_open(&n->store, n->cfg.state_file, &n->reg, n->loaded.last, err, errlen);
	if (ret) {
		atomic_fetch_add(&n->obs.state_write_errors, 1);
		return ret;
	}
	atomic_fetch_add(&n->obs.state_writes, 1);
	if (n->have_region)
		region_sync_registry(&n->region, &n->reg);
	reg_set_store(&n->reg, &node_store_ops, n);
	return 0;
}

/* Every module's routes in the one table. */
static int
node_routes(struct node *n)
{
	int ret;

	api_routes_init(&n->routes);
	ret = reg_api_register(&n->routes, &n->reg);
	if (!ret)
		ret = obs_api_register(&n->routes, &n->obs);
	if (!ret && n->cfg.test_clock)
		ret = publish_api_register(&n->routes, &n->pub);
	return ret;
}

/* A port the hand-over carried is kept only when a restored registration holds it. */
static bool
node_steered(void *arg, uint8_t proto, uint16_t port)
{
	struct node *n = arg;

	return proto == IPPROTO_TCP &&
	       atomic_load_explicit(&n->pub.sh->hostport[port], memory_order_relaxed) != 0;
}

static int
node_serve(struct node *n)
{
	char err[512], node_ip[INET_ADDRSTRLEN], api_ip[INET_ADDRSTRLEN];
	uint32_t gone;

	if (node_restore(n, err, sizeof(err))) {
		CVS_LOG(ERR, ctl, "%s", err);
		return -1;
	}
	if (n->have_region)
		region_drop_gone(&n->region, &n->reg, &n->pub);
	if (n->have_steer && n->steer.carried)
		CVS_LOG(INFO, xdp, "steering taken over: %u ports carried, %u no longer registered "
			"removed", n->steer.carried, xdpctl_steer_prune(&n->steer, node_steered, n));
	if ((gone = xdpctl_sbx_prune(&n->sbx)))
		CVS_LOG(INFO, xdp, "%u sandbox interfaces no sandbox came back for: their program "
			"removed", gone);
	atomic_store(&n->obs.restored, true);
	telemetry_start(&n->obs);
	if (node_routes(n)) {
		CVS_LOG(ERR, api, "the route table is full or a pattern is malformed");
		return -1;
	}
	{
		struct api_listen l = { n->cfg.api_addr, n->cfg.api_port, n->cfg.api_socket,
					n->cfg.api_socket_mode, !n->cfg.api_socket_given };

		err[0] = '\0';
		n->api = api_start(&l, &n->routes, err, sizeof(err));
		if (n->api && err[0]) {
			CVS_LOG(WARNING, api, "%s: the API is on TCP only", err);
			n->cfg.api_socket[0] = '\0';
		}
	}
	if (!n->api) {
		CVS_LOG(ERR, api, "%s", err);
		return -1;
	}
	atomic_store(&n->obs.serving, true);
	inet_ntop(AF_INET, &n->cfg.node_ip, node_ip, sizeof(node_ip));
	inet_ntop(AF_INET, &n->cfg.api_addr, api_ip, sizeof(api_ip));
	CVS_LOG(INFO, main, "cubevs-fp %s", CVS_RELEASE);
	if (n->cfg.api_socket[0])
		CVS_LOG(INFO, api, "API also on unix:%s (mode %04o)", n->cfg.api_socket,
			n->cfg.api_socket_mode);
	if (n->pt.wq.n)
		CVS_LOG(INFO, main, "ready: world port %s (%u AF_XDP queue(s) of ours), node IP %s, "
			"%u worker(s) from lcore %u, API http://%s:%u", n->cfg.world_iface,
			n->pt.wq.n, node_ip, n->nw, n->w[0].lcore, api_ip, n->cfg.api_port);
	else
		CVS_LOG(INFO, main, "ready: world port %u, node IP %s, %u worker(s) from lcore %u, "
			"API http://%s:%u", n->pt.world, node_ip, n->nw, n->w[0].lcore, api_ip,
			n->cfg.api_port);
	notify_send("READY=1\nSTATUS=serving");
	return 0;
}

/* ---- step 8: the control loop, until a signal ---- */

/* The journal outgrew the snapshot: write the snapshot again, here rather than in a request. */
static void
node_compact(struct node *n)
{
	char err[512];

	if (store_tick(&n->store, cvs_now_ms(), err, sizeof(err)) < 0)
		CVS_LOG(WARNING, ctl, "compacting the state journal: %s (the journal keeps every "
			"change; tried again in 10 s)", err);
}

/*
 * Every 5 ms next hops; every 100 ms liveness, drop summaries, re-attach retries, the
 * journal's compaction and the heaps' trim.
 */
static void
node_loop(struct node *n)
{
	unsigned long long wd = notify_watchdog_usec(), next_wd = 0, t = 0, next_tick = 0;
	uint32_t attached, waiting, total;

	while (!force_quit) {
		if (n->have_nexthop)
			nexthop_poll(&n->nexthop);
		linkwatch_poll(&n->lw, &n->reg);
		usleep(5 * 1000);
		t += 5 * 1000;
		if (t >= next_tick) {
			obs_tick(&n->obs);
			/* Restored sandboxes attach once their interface appears. */
			attached = reg_tick(&n->reg, cvs_now_ms(), &waiting);
			if (attached)
				CVS_LOG(INFO, ctl, "%u restored sandboxes attached, %u still "
					"waiting", attached, waiting);
			if (n->have_steer)
				xdpctl_steer_heartbeat(&n->steer);
			node_compact(n);
			reg_counts(&n->reg, &total, &waiting);
			cvs_trim_tick(&n->trim, total);
			next_tick = t + 100 * 1000;
		}
		/* Ping the systemd watchdog only while the worker is still polling. */
		if (wd && t >= next_wd) {
			struct obs_ready rd;

			obs_readiness(&n->obs, &rd);
			if (rd.worker_polling)
				notify_send("WATCHDOG=1");
			next_wd = t + wd / 2;
		}
	}
}

/* ---- step 9: shutdown ---- */

static void
node_stop_workers(struct node *n)
{
	uint32_t i;

	for (i = 0; i < n->nw; i++)
		atomic_store(&n->w[i].quit, true);
	for (i = 0; i < n->nw; i++)
		rte_eal_wait_lcore(n->w[i].lcore);
}

static void
node_teardown(struct node *n, bool worker_running)
{
	uint32_t i;

	telemetry_stop();
	api_stop(n->api);
	n->api = NULL;
	/* No more changes: the state file alone holds them from here on. */
	reg_set_store(&n->reg, NULL, NULL);
	store_close(&n->store);
	/*
	 * With a region the workers stop first and the sessions stay as they are for the next
	 * process: detaching the sandboxes must not flush their zones.
	 */
	if (worker_running && n->have_region && !n->cfg.detach_on_exit) {
		node_stop_workers(n);
		n->pub.launched = false;
		worker_running = false;
	}
	/*
	 * Kept for the next process: the steered ports stay in the map and the grace counts from
	 * this last beat. --detach-on-exit removes the program, as a node without us should be.
	 */
	if (n->have_steer && !n->cfg.detach_on_exit) {
		xdpctl_steer_heartbeat(&n->steer);
		n->pub.steer = NULL;
	}
	/* Guest frames dropped, not the kernel's, until the next start (unless we never served). */
	n->pub.keep_sbx_xdp = !n->cfg.detach_on_exit && atomic_load(&n->obs.restored);
	reg_clear(&n->reg);
	if (worker_running)
		node_stop_workers(n);
	if (n->have_nexthop)
		nexthop_close(&n->nexthop);
	if (n->pt.world != UINT16_MAX) {
		rte_eth_dev_stop(n->pt.world);
		rte_eth_dev_close(n->pt.world);
	}
	/* The program stays and holds the gap once they are gone (gap_drop, --restart-grace). */
	worldq_close(&n->pt.wq);
	if (n->pt.host != UINT16_MAX) {
		rte_eth_dev_stop(n->pt.host);
		rte_eth_dev_close(n->pt.host);
	}
	if (n->have_steer)
		xdpctl_steer_close(&n->steer, n->cfg.detach_on_exit);
	if (n->pin_dir[0] && n->cfg.detach_on_exit)
		xdppin_remove(n->pin_dir);
	linkwatch_close(&n->lw);
	for (i = 0; i < n->nw && i < CVS_FUN_MAX; i++)
		funnel_close(&n->fun[i], &n->sbx, n->cfg.detach_on_exit);
	xdpctl_sbx_unload(&n->sbx);
	reg_fini(&n->reg);
	for (i = 0; n->w && i < n->nw; i++) {
		ct_destroy(n->w[i].ct);
		free(n->w[i].park);
		rte_ring_free(n->w[i].inbox);
	}
	if (n->have_region && n->cfg.detach_on_exit)
		unlink(n->region.info.path);
	if (n->have_region)
		region_close(&n->region);
	obs_fini(&n->obs);
	publish_fini(&n->pub);
	json_decref(n->restore);
	json_decref(n->restore_holds);
	rte_eal_cleanup();
}

int
main(int argc, char **argv)
{
	static struct node node;
	struct node *n = &node;
	char **eal_argv;
	int app_at, eal_argc;

	n->lw.fd = -1;

	if (node_parse(n, argc, argv, &app_at))
		return 0;
	if (n->cfg.rollback_to[0])
		return rollback_run(&n->cfg, stdout);
	state_set_release(CVS_RELEASE);
	node_preflight(n);
	eal_argv = node_eal_args(n, app_at, argv, &eal_argc);
	node_eal_init(n, eal_argc, eal_argv);
	if (node_ports(n) || node_shared(n) || node_workers(n) || node_registry(n)) {
		node_teardown(n, false);
		return 1;
	}
	node_launch(n);
	if (node_serve(n)) {
		node_teardown(n, true);
		return 1;
	}
	node_loop(n);
	CVS_LOG(INFO, main, "signal received, stopping");
	notify_send("STOPPING=1");
	node_teardown(n, true);
	return 0;
}
