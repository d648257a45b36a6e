/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cubevs-fp: set-up on the main lcore (options, EAL, world port, XDP programs, worker, API),
 * then the control loop until SIGTERM/SIGINT, then an orderly teardown.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "api.h"
#include "config.h"
#include "cvs_common.h"
#include "cvs_version.h"
#include "hostif.h"
#include "log.h"
#include "nexthop.h"
#include "notify.h"
#include "obs.h"
#include "registry.h"
#include "state.h"
#include "telemetry.h"
#include "worker.h"
#include "xdpctl.h"

#define WORLD_VDEV	"net_af_xdp_cvs"
#define HOST_VDEV	"net_tap_cvs"
#define NB_MBUF		8191
#define EPHEMERAL_PATH	"/proc/sys/net/ipv4/ip_local_port_range"

int cvs_log_main, cvs_log_ctl, cvs_log_ct, cvs_log_xdp, cvs_log_api;

static volatile sig_atomic_t force_quit;

struct node {
	struct cvs_config cfg;
	struct dp_cfg dpc;		/* addressing shared by the workers */
	struct worker *w;		/* nw workers */
	struct cvs_port_stats *slot_st;	/* per sandbox slot, shared by the workers */
	uint32_t nw;
	bool launched;
	struct worker_ports wp;
	struct rte_mempool *mp;
	rte_spinlock_t txlock[16];	/* world tx queues shared by several workers */
	struct dp_shared *sh;
	struct xdp_steer steer;
	bool have_steer;
	struct xdp_sbx sbx;
	struct registry reg;
	struct nexthop nexthop;
	bool have_nexthop;
	uint16_t world_port;
	uint16_t host_port;
	int world_ifindex;
	uint32_t world_mask;
	struct obs obs;
	json_t *restore;	/* registrations read from the state file at start */
};

void
cvs_log_init(void)
{
	cvs_log_main = rte_log_register_type_and_pick_level("cvs.main", RTE_LOG_INFO);
	cvs_log_ctl = rte_log_register_type_and_pick_level("cvs.ctl", RTE_LOG_INFO);
	cvs_log_ct = rte_log_register_type_and_pick_level("cvs.ct", RTE_LOG_INFO);
	cvs_log_xdp = rte_log_register_type_and_pick_level("cvs.xdp", RTE_LOG_INFO);
	cvs_log_api = rte_log_register_type_and_pick_level("cvs.api", RTE_LOG_INFO);
}

static int
libbpf_to_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	uint32_t lvl = level == LIBBPF_WARN ? RTE_LOG_WARNING :
		       level == LIBBPF_INFO ? RTE_LOG_INFO : RTE_LOG_DEBUG;

	return rte_vlog(lvl, cvs_log_xdp, fmt, ap);
}

/* libxdp's messages (socket and program set-up) go to the same log type as libbpf's. */
static int
libxdp_to_log(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	uint32_t lvl = level == LIBXDP_WARN ? RTE_LOG_WARNING :
		       level == LIBXDP_INFO ? RTE_LOG_INFO : RTE_LOG_DEBUG;

	return rte_vlog(lvl, cvs_log_xdp, fmt, ap);
}

static void
on_signal(int sig)
{
	force_quit = 1;
}

static void __attribute__((noreturn))
fail_early(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cvs_verr("cubevs-fp", fmt, ap);
	va_end(ap);
	exit(2);
}

/* An IPv4 address of an interface (the first, or 'want' if present) and its mask, or 0. */
static uint32_t
iface_ipv4(const char *ifname, uint32_t want, uint32_t *mask)
{
	struct ifaddrs *ifa, *p;
	uint32_t ip = 0;

	*mask = 0;
	if (getifaddrs(&ifa))
		return 0;
	for (p = ifa; p; p = p->ifa_next) {
		uint32_t a;

		if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET ||
		    strcmp(p->ifa_name, ifname))
			continue;
		a = ((struct sockaddr_in *)p->ifa_addr)->sin_addr.s_addr;
		if (ip && want && a != want)
			continue;
		ip = a;
		*mask = p->ifa_netmask ?
			((struct sockaddr_in *)p->ifa_netmask)->sin_addr.s_addr : 0xffffffff;
		if (!want || a == want)
			break;
	}
	freeifaddrs(ifa);
	return ip;
}

/* ---- registry operations: what a registration does to the data path ---- */

static int
node_ifindex(void *ctx, const char *iface)
{
	return (int)if_nametoindex(iface);
}

static uint32_t node_detach_port(struct node *n, struct sandbox *sb);

/* Run a command on every worker; sums the results. -ETIMEDOUT if one did not answer. */
static int
node_call(struct node *n, uint32_t cmd, uint32_t arg, uint32_t timeout_ms, uint32_t *sum)
{
	uint32_t i, r;
	int ret = 0;

	if (sum)
		*sum = 0;
	if (!n->launched)
		return 0;
	for (i = 0; i < n->nw; i++) {
		if (worker_call(&n->w[i], cmd, arg, timeout_ms, &r))
			ret = -ETIMEDOUT;
		else if (sum)
			*sum += r;
	}
	return ret;
}

/*
 * Publish a sandbox's policy. Flows check the version on their next packet; the old policy
 * is freed once the worker has passed a loop, so no packet still reads it.
 */
static int
node_policy(void *ctx, struct sandbox *sb)
{
	struct node *n = ctx;
	struct dp_policy *pol = policy_compile(&sb->policy);
	const struct dp_policy *old;

	if (sb->policy.set && !pol)
		return -ENOMEM;
	old = atomic_exchange(&n->sh->policy[sb->slot], pol);
	atomic_fetch_add_explicit(&n->sh->policy_ver[sb->slot], 1, memory_order_release);
	if (node_call(n, WCMD_SYNC, 0, 5000, NULL))
		CVS_LOG(ERR, ctl, "worker did not answer; keeping the old policy of %s allocated",
			sb->id);
	else
		free((void *)old);
	return 0;
}

static int
node_attach(void *ctx, struct sandbox *sb, char *err, size_t errlen)
{
	struct node *n = ctx;
	struct xskport *xp;
	int ret;

	if (sb->ifindex == n->world_ifindex) {
		snprintf(err, errlen, "%s is the world interface", sb->iface);
		return -EBUSY;
	}
	xp = xskport_create(sb->iface, sb->ifindex, sb->slot, err, errlen);
	if (!xp)
		return -errno;
	ret = xdpctl_sbx_attach(&n->sbx, sb->ifindex, sb->iface, sb->slot, xp->fd, err, errlen);
	if (ret) {
		xskport_destroy(xp);
		return ret;
	}
	atomic_store(&n->sh->slot_ip[sb->slot], sb->ip);
	atomic_store(&n->sh->ip2slot[ntohl(sb->ip) - ntohl(n->cfg.sandbox_net)],
		     (uint16_t)(sb->slot + 1));
	atomic_store(&n->sh->slot_alive[sb->slot], 1);
	/* The slot may have served another sandbox: its counters start again from zero. */
	memset(&n->slot_st[sb->slot], 0, sizeof(n->slot_st[sb->slot]));
	sb->dp = xp;
	ret = node_policy(n, sb);
	if (ret) {
		snprintf(err, errlen, "cannot apply the policy: %s", strerror(-ret));
		node_detach_port(n, sb);
		return ret;
	}
	worker_publish(&n->wp, sb->slot, xp);
	CVS_LOG(INFO, ctl, "sandbox %s attached on %s (slot %u)", sb->id, sb->iface, sb->slot);
	return 0;
}

/* Unpublish a sandbox port, flush its sessions and free it; returns the sessions removed. */
static uint32_t
node_detach_port(struct node *n, struct sandbox *sb)
{
	const struct dp_policy *old;
	uint32_t flushed = 0;

	atomic_store(&n->sh->slot_alive[sb->slot], 0);
	atomic_store(&n->sh->ip2slot[ntohl(sb->ip) - ntohl(n->cfg.sandbox_net)], 0);
	atomic_store(&n->sh->slot_ip[sb->slot], 0);
	worker_publish(&n->wp, sb->slot, NULL);
	old = atomic_exchange(&n->sh->policy[sb->slot], NULL);
	atomic_fetch_add(&n->sh->policy_ver[sb->slot], 1);
	/* Returns once the worker has passed a loop without this port: then it is ours. */
	if (node_call(n, WCMD_FLUSH_ZONE, sb->slot + 1, 5000, &flushed))
		CVS_LOG(ERR, ctl, "worker did not answer while removing %s", sb->id);
	free((void *)old);
	xdpctl_sbx_detach(&n->sbx, sb->ifindex, sb->slot);
	xskport_destroy(sb->dp);
	sb->dp = NULL;
	return flushed;
}

static void
node_detach(void *ctx, struct sandbox *sb)
{
	struct node *n = ctx;
	uint32_t flushed;

	if (!sb->dp)
		return;
	flushed = node_detach_port(n, sb);
	CVS_LOG(INFO, ctl, "sandbox %s detached from %s, %u sessions removed", sb->id, sb->iface,
		flushed);
}

static void
node_hostport(void *ctx, const struct sandbox *sb, const struct exposed_port *ep, bool add)
{
	struct node *n = ctx;

	if (add) {
		atomic_store_explicit(&n->sh->hostport[ep->hport],
				      dp_hostport_entry(sb->slot, ep->cport), memory_order_release);
		if (n->have_steer && xdpctl_steer_port(&n->steer, IPPROTO_TCP, ep->hport, true))
			CVS_LOG(ERR, xdp, "cannot steer host port %u: %s", ep->hport,
				strerror(errno));
	} else {
		if (n->have_steer)
			xdpctl_steer_port(&n->steer, IPPROTO_TCP, ep->hport, false);
		atomic_store_explicit(&n->sh->hostport[ep->hport], 0, memory_order_release);
	}
}

static int
node_persist(void *ctx, char *err, size_t errlen)
{
	struct node *n = ctx;
	json_t *arr;
	int ret;

	if (!n->cfg.state_file[0])
		return 0;
	arr = reg_state(&n->reg);
	ret = state_save(n->cfg.state_file, arr, err, errlen);
	json_decref(arr);
	if (ret) {
		atomic_fetch_add(&n->obs.state_write_errors, 1);
		CVS_LOG(ERR, ctl, "%s", err);
	} else {
		atomic_fetch_add(&n->obs.state_writes, 1);
	}
	return ret;
}

static const struct reg_ops node_ops = {
	.ifindex = node_ifindex,
	.attach = node_attach,
	.detach = node_detach,
	.hostport = node_hostport,
	.policy = node_policy,
	.persist = node_persist,
};

/* ---- read-only routes ---- */

static json_t *
node_clock(struct node *n, const char *body, size_t len, int *status)
{
	json_error_t jerr;
	json_t *j = json_loadb(body ? body : "", len, 0, &jerr), *adv;
	int64_t off;

	adv = j ? json_object_get(j, "advance") : NULL;
	if (!json_is_integer(adv) || json_integer_value(adv) < 0 ||
	    json_integer_value(adv) > 86400 * 365) {
		json_decref(j);
		*status = 400;
		return reg_error("body must be {\"advance\": seconds}");
	}
	off = atomic_fetch_add(&n->sh->clock_offset, json_integer_value(adv)) +
	      json_integer_value(adv);
	json_decref(j);
	/* Let the worker run its expiry at the new time before answering. */
	node_call(n, WCMD_SYNC, 0, 1000, NULL);
	node_call(n, WCMD_SYNC, 0, 1000, NULL);
	return json_pack("{s:I}", "offset", (json_int_t)off);
}

static json_t *
node_extra(void *ctx, const char *method, const char *path, const char *body, size_t len,
	   int *status, const char **allow)
{
	struct node *n = ctx;

	if (!strcmp(path, "/debug/clock") && n->cfg.test_clock) {
		if (strcmp(method, "POST")) {
			*allow = "POST";
			*status = 405;
			return reg_error("method not allowed; allowed: POST");
		}
		return node_clock(n, body, len, status);
	}
	return NULL;
}

/* ---- set-up ---- */

/* Configure nq rx and tx queues on a port and start it. */
static int
node_queues(uint16_t pid, uint32_t nq, uint16_t desc, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	uint16_t q;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(pid, (uint16_t)nq, (uint16_t)nq, &conf);
	for (q = 0; !ret && q < nq; q++) {
		ret = rte_eth_rx_queue_setup(pid, q, desc, rte_eth_dev_socket_id(pid), NULL, mp);
		if (!ret)
			ret = rte_eth_tx_queue_setup(pid, q, desc, rte_eth_dev_socket_id(pid),
						     NULL);
	}
	return ret ? ret : rte_eth_dev_start(pid);
}

static int
world_port_setup(struct node *n, char *err, size_t errlen)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	uint16_t pid, found = RTE_MAX_ETHPORTS;
	int ret;

	RTE_ETH_FOREACH_DEV(pid) {
		char name[RTE_ETH_NAME_MAX_LEN];

		rte_eth_dev_get_name_by_port(pid, name);
		if (!strcmp(name, HOST_VDEV))
			n->host_port = pid;
		else if (n->cfg.world_iface[0] ? !strcmp(name, WORLD_VDEV) :
			 found == RTE_MAX_ETHPORTS)
			found = pid;
	}
	if (found == RTE_MAX_ETHPORTS && n->cfg.world_iface[0]) {
		snprintf(err, errlen, "cannot create the AF_XDP port on %s with %u queue(s) (see "
			 "the PMD's message above; 'ethtool -l %s' shows its queues)",
			 n->cfg.world_iface, n->cfg.world_queues, n->cfg.world_iface);
		return -ENODEV;
	}
	if (found == RTE_MAX_ETHPORTS) {
		snprintf(err, errlen, "no world port: give --world-iface IFACE or an EAL port "
			 "(--vdev net_af_xdp0,iface=... or a PCI device)");
		return -ENODEV;
	}
	n->world_port = found;
	n->mp = rte_pktmbuf_pool_create("cvs_mbuf", NB_MBUF * n->nw, 256, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (!n->mp) {
		snprintf(err, errlen, "cannot create the mbuf pool: %s (raise -m)",
			 rte_strerror(rte_errno));
		return -ENOMEM;
	}
	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_info_get(found, &info);
	if (!ret && (info.max_rx_queues < n->cfg.world_queues ||
		     info.max_tx_queues < n->cfg.world_queues)) {
		snprintf(err, errlen, "the world port has %u rx / %u tx queues, fewer than "
			 "--world-queues %u", info.max_rx_queues, info.max_tx_queues,
			 n->cfg.world_queues);
		return -EINVAL;
	}
	if (!ret)
		ret = node_queues(found, n->cfg.world_queues, 1024, n->mp);
	if (ret) {
		snprintf(err, errlen, "cannot start the world port: %s", strerror(-ret));
		return ret;
	}
	rte_eth_macaddr_get(found, &mac);
	memcpy(n->dpc.world_mac, mac.addr_bytes, 6);
	n->world_ifindex = (int)info.if_index;
	n->world_port = found;
	return 0;
}

/* cube-dev: the net_tap port, its kernel address and the kernel's MAC. */
static int
host_port_setup(struct node *n, char *err, size_t errlen)
{
	struct rte_ether_addr mac;
	uint16_t pid = n->host_port;
	int ret;

	ret = node_queues(pid, n->nw, 512, n->mp);
	if (ret) {
		snprintf(err, errlen, "cannot start %s: %s", n->cfg.host_iface, strerror(-ret));
		return ret;
	}
	rte_eth_macaddr_get(pid, &mac);
	memcpy(n->dpc.host_mac, mac.addr_bytes, 6);
	n->dpc.host_ip = htonl(ntohl(n->cfg.sandbox_net) + 1);
	ret = hostif_configure(n->cfg.host_iface, n->dpc.host_ip, n->cfg.sandbox_prefix,
			       n->dpc.host_peer_mac, err, errlen);
	if (ret)
		return ret;
	n->dpc.have_host = true;
	return 0;
}

static void
node_teardown(struct node *n, struct api *api, bool worker_running)
{
	telemetry_stop();
	api_stop(api);
	if (n->reg.by_slot)
		reg_clear(&n->reg);
	if (worker_running) {
		uint32_t i;

		for (i = 0; i < n->nw; i++)
			atomic_store(&n->w[i].quit, true);
		for (i = 0; i < n->nw; i++)
			rte_eal_wait_lcore(n->w[i].lcore);
	}
	if (n->have_nexthop)
		nexthop_close(&n->nexthop);
	if (n->world_port != UINT16_MAX) {
		rte_eth_dev_stop(n->world_port);
		rte_eth_dev_close(n->world_port);
	}
	if (n->host_port != UINT16_MAX) {
		rte_eth_dev_stop(n->host_port);
		rte_eth_dev_close(n->host_port);
	}
	if (n->have_steer)
		xdpctl_steer_close(&n->steer, true);
	xdpctl_sbx_unload(&n->sbx);
	if (n->reg.by_slot)
		reg_fini(&n->reg);
	{
		uint32_t i;

		for (i = 0; n->w && i < n->nw; i++) {
			ct_destroy(n->w[i].ct);
			free(n->w[i].park);
			rte_ring_free(n->w[i].inbox);
		}
	}
	obs_fini(&n->obs);
	json_decref(n->restore);
}

/*
 * Bring back the registrations of the state file, with the same addresses and host ports, then
 * write it again: that proves it is writable before the first registration needs it.
 */
static int
node_restore(struct node *n, char *err, size_t errlen)
{
	uint32_t total, left;
	int ret;

	if (!n->cfg.state_file[0])
		return 0;
	ret = reg_restore(&n->reg, n->restore, err, errlen);
	if (ret) {
		CVS_LOG(ERR, ctl, "state file %s: %s", n->cfg.state_file, err);
		snprintf(err, errlen, "the state file was left as it is: repair it, or move it "
			 "away to start without registrations");
		return ret;
	}
	reg_attach_pending(&n->reg);
	reg_counts(&n->reg, &total, &left);
	CVS_LOG(INFO, ctl, "restored %u sandboxes from %s, %u not attached", total,
		n->cfg.state_file, left);
	if (left)
		obs_log_unattached(&n->obs);
	return node_persist(n, err, errlen);
}

int
main(int argc, char **argv)
{
	static struct node node;
	struct node *n = &node;
	char err[512], vdev[1024], hvdev[128], node_ip[INET_ADDRSTRLEN];
	char **eal_argv;
	int app_at = argc, eal_argc, i, ret, memfd = -1;
	struct api *api = NULL;
	unsigned int lcore;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			app_at = i;
			break;
		}
	/* Without "--", still answer --help and --version (no EAL, no root needed). */
	if (app_at == argc) {
		for (i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
				cvs_config_usage(stdout, "cubevs-fp");
				return 0;
			}
			if (!strcmp(argv[i], "--version")) {
				printf("cubevs-fp %s\n", CVS_VERSION);
				return 0;
			}
		}
	}
	{
		int app_argc = argc - app_at;
		char **app_argv = argv + app_at;
		char *a0 = argv[0];

		/* getopt wants argv[0]: reuse the "--" slot for it. */
		if (app_at < argc)
			app_argv[0] = a0;
		else {
			app_argc = 1;
			app_argv = &a0;
		}
		if (cvs_config_parse(&n->cfg, app_argc, app_argv, err, sizeof(err)))
			fail_early("%s", err);
	}
	if (n->cfg.help) {
		cvs_config_usage(stdout, "cubevs-fp");
		return 0;
	}
	if (n->cfg.version) {
		printf("cubevs-fp %s\n", CVS_VERSION);
		return 0;
	}
	if (n->cfg.world_iface[0]) {
		n->world_ifindex = (int)if_nametoindex(n->cfg.world_iface);
		if (!n->world_ifindex)
			fail_early("--world-iface %s: no such interface", n->cfg.world_iface);
		n->cfg.node_ip = iface_ipv4(n->cfg.world_iface, n->cfg.node_ip, &n->world_mask) ?:
				 n->cfg.node_ip;
		if (!n->cfg.node_ip)
			fail_early("%s has no IPv4 address; give --node-ip", n->cfg.world_iface);
	}
	ret = cvs_check_ephemeral(&n->cfg, EPHEMERAL_PATH, n->cfg.set_ephemeral, err,
				  sizeof(err));
	if (ret < 0)
		fail_early("%s", err);
	if (ret > 0)
		fprintf(stderr, "cubevs-fp: %s\n", err);
	/* A state file we cannot own or read stops us before anything on the node changes. */
	if (n->cfg.state_file[0]) {
		if (state_lock(n->cfg.state_file, err, sizeof(err)) < 0)
			fail_early("%s", err);
		if (state_load(n->cfg.state_file, &n->restore, err, sizeof(err)))
			fail_early("%s", err);
	}

	/* Build the EAL command line, adding our own world port when asked to. */
	eal_argv = calloc((size_t)app_at + 8, sizeof(char *));
	if (!eal_argv)
		fail_early("out of memory");
	for (eal_argc = 0; eal_argc < app_at; eal_argc++)
		eal_argv[eal_argc] = argv[eal_argc];
	if (n->cfg.world_iface[0]) {
		ret = xdpctl_clear_stale(n->world_ifindex, n->cfg.world_iface, CVS_PROG_STEER, err,
					 sizeof(err));
		if (ret < 0)
			fail_early("%s", err);
		if (ret > 0)
			fprintf(stderr, "cubevs-fp: replaced a stale steering program on %s\n",
				n->cfg.world_iface);
		memfd = xdpctl_steer_memfd();
		if (memfd < 0)
			fail_early("cannot stage the steering program: %s", strerror(-memfd));
		snprintf(vdev, sizeof(vdev),
			 WORLD_VDEV ",iface=%.16s,start_queue=0,queue_count=%u,busy_budget=0,"
			 "xdp_prog=/proc/self/fd/%d", n->cfg.world_iface, n->cfg.world_queues, memfd);
		eal_argv[eal_argc++] = (char *)"--vdev";
		eal_argv[eal_argc++] = vdev;
	}
	if (n->cfg.host_iface[0]) {
		if (if_nametoindex(n->cfg.host_iface))
			fail_early("%s exists already: another instance, or a leftover (remove it "
				   "with 'ip link del %s'); or give --host-iface", n->cfg.host_iface,
				   n->cfg.host_iface);
		snprintf(hvdev, sizeof(hvdev), HOST_VDEV ",iface=%.16s", n->cfg.host_iface);
		eal_argv[eal_argc++] = (char *)"--vdev";
		eal_argv[eal_argc++] = hvdev;
	}
	n->host_port = UINT16_MAX;
	n->world_port = UINT16_MAX;
	n->nw = n->cfg.workers;
	n->w = calloc(n->nw, sizeof(*n->w));
	if (!n->w)
		fail_early("out of memory");
	ret = rte_eal_init(eal_argc, eal_argv);
	if (ret < 0)
		fail_early("EAL initialisation failed: %s", rte_strerror(rte_errno));
	cvs_log_init();
	libbpf_set_print(libbpf_to_log);
	libxdp_set_print(libxdp_to_log);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	ret = world_port_setup(n, err, sizeof(err));
	if (memfd >= 0)
		close(memfd);
	if (ret) {
		CVS_LOG(ERR, main, "%s", err);
		goto fail_port;
	}
	if (n->host_port != UINT16_MAX && host_port_setup(n, err, sizeof(err))) {
		CVS_LOG(ERR, main, "%s", err);
		goto fail_port;
	}
	if (!n->cfg.world_iface[0] && n->world_ifindex > 0) {
		/* An explicit EAL port on a kernel interface: take its address and subnet. */
		char ifname[IF_NAMESIZE];

		if (if_indextoname((unsigned int)n->world_ifindex, ifname))
			n->cfg.node_ip = iface_ipv4(ifname, n->cfg.node_ip, &n->world_mask) ?:
					 n->cfg.node_ip;
	}
	if (!n->cfg.node_ip) {
		CVS_LOG(ERR, main, "no node IP: give --node-ip");
		goto fail_port;
	}
	if (n->world_ifindex > 0) {
		n->have_steer = !xdpctl_steer_open(&n->steer, n->world_ifindex, err, sizeof(err));
		if (!n->have_steer)
			CVS_LOG(WARNING, xdp, "%s: every frame of the world queue comes to us", err);
		else if (xdpctl_steer_cfg(&n->steer, n->cfg.node_ip, n->cfg.snat_ports.lo,
					  n->cfg.snat_ports.hi))
			CVS_LOG(ERR, xdp, "cannot configure the steering program: %s",
				strerror(errno));
	}
	if (xdpctl_sbx_load(&n->sbx, n->cfg.max_sandboxes, err, sizeof(err))) {
		CVS_LOG(ERR, xdp, "%s", err);
		goto fail_port;
	}

	n->dpc.node_ip = n->cfg.node_ip;
	n->dpc.world_mask = n->world_mask ? n->world_mask : 0xffffffff;
	n->dpc.world_net = n->cfg.node_ip & n->dpc.world_mask;
	n->dpc.sbx_mask = htonl(~0u << (32 - n->cfg.sandbox_prefix));
	n->dpc.sbx_net = n->cfg.sandbox_net;
	n->dpc.snat_lo = n->cfg.snat_ports.lo;
	n->dpc.snat_hi = n->cfg.snat_ports.hi;
	n->dpc.guest_ip = n->cfg.guest_ip;
	n->dpc.gw_ip = n->cfg.gw_ip;
	memcpy(n->dpc.guest_mac, n->cfg.guest_mac, 6);
	memcpy(n->dpc.gw_mac, n->cfg.gw_mac, 6);
	n->sh = calloc(1, sizeof(*n->sh));
	n->wp.ports = calloc(n->cfg.max_sandboxes, sizeof(*n->wp.ports));
	if (n->sh) {
		n->sh->slot_alive = calloc(n->cfg.max_sandboxes, 1);
		n->sh->policy = calloc(n->cfg.max_sandboxes, sizeof(*n->sh->policy));
		n->sh->policy_ver = calloc(n->cfg.max_sandboxes, sizeof(*n->sh->policy_ver));
		n->sh->slot_ip = calloc(n->cfg.max_sandboxes, sizeof(*n->sh->slot_ip));
		n->sh->ip2slot_size = 1u << (32 - n->cfg.sandbox_prefix);
		n->sh->ip2slot = calloc(n->sh->ip2slot_size, sizeof(*n->sh->ip2slot));
	}
	n->slot_st = calloc(n->cfg.max_sandboxes, sizeof(*n->slot_st));
	if (!n->sh || !n->sh->slot_alive || !n->sh->policy || !n->sh->policy_ver ||
	    !n->sh->slot_ip || !n->sh->ip2slot || !n->wp.ports || !n->slot_st ||
	    obs_init(&n->obs)) {
		CVS_LOG(ERR, main, "out of memory");
		goto fail_port;
	}
	for (i = 0; i < (int)n->nw; i++) {
		struct worker *w = &n->w[i];
		char rname[32];

		/* Each worker owns a table of its share of the sessions. */
		w->ct = ct_create((n->cfg.max_sessions + n->nw - 1) / n->nw, n->cfg.max_sandboxes,
				  n->cfg.timeouts);
		w->park = calloc(PARK_MAX, sizeof(*w->park));
		snprintf(rname, sizeof(rname), "cvs_inbox%d", i);
		w->inbox = n->nw > 1 ? rte_ring_create(rname, WORKER_INBOX, rte_socket_id(),
						       RING_F_SC_DEQ) : NULL;
		if (!w->ct || !w->park || (n->nw > 1 && !w->inbox)) {
			CVS_LOG(ERR, main, "cannot allocate worker %d (session table of %u)", i,
				n->cfg.max_sessions / n->nw);
			goto fail_port;
		}
		w->id = (uint32_t)i;
		w->nworkers = n->nw;
		w->all = n->w;
		/* Shared: a slot's counters are written only by the worker that owns the slot. */
		w->slot_st = n->slot_st;
		w->wp = &n->wp;
		w->mp = n->mp;
		w->world_port = n->world_port;
		w->world_queue = (uint32_t)i < n->cfg.world_queues ? (uint16_t)i : UINT16_MAX;
		w->world_txq = (uint16_t)(i % n->cfg.world_queues);
		rte_spinlock_init(&n->txlock[i % n->cfg.world_queues]);
		w->world_txlock = n->cfg.world_queues < n->nw ?
				  &n->txlock[i % n->cfg.world_queues] : NULL;
		w->host_port = n->dpc.have_host ? n->host_port : UINT16_MAX;
		w->host_queue = (uint16_t)i;
		w->idle_sleep_us = n->cfg.idle_sleep_us;
		w->ctx.cfg = &n->dpc;
		w->ctx.sh = n->sh;
		w->ctx.snat_cursor = (uint32_t)rte_rdtsc() * (uint32_t)(i + 1);
		dp_snat_share(&n->dpc, (uint32_t)i, n->nw, &w->ctx.snat_lo, &w->ctx.snat_hi);
	}
	n->sh->max_sandboxes = n->cfg.max_sandboxes;
	if (n->world_ifindex > 0) {
		n->have_nexthop = !nexthop_open(&n->nexthop, n->world_ifindex, &n->sh->nh,
						n->w, n->nw,
						n->cfg.have_nh_fallback ? n->cfg.nh_fallback : NULL,
						err, sizeof(err));
		if (!n->have_nexthop)
			CVS_LOG(WARNING, ctl, "%s: egress needs --next-hop-mac", err);
	}
	if (!n->have_nexthop && n->cfg.have_nh_fallback)
		dp_nh_store(&n->sh->nh, 0, n->cfg.nh_fallback);

	lcore = -1u;
	for (i = 0; i < (int)n->nw; i++) {
		lcore = rte_get_next_lcore(lcore, 1, 0);
		if (lcore >= RTE_MAX_LCORE) {
			CVS_LOG(ERR, main, "%u workers need %u worker lcores: give EAL more "
				"(-l 0-%u, or --lcores to share CPUs)", n->nw, n->nw, n->nw);
			goto fail_port;
		}
		n->w[i].lcore = lcore;
	}
	if (reg_init(&n->reg, n->cfg.max_sandboxes, n->cfg.host_ports.lo, n->cfg.host_ports.hi,
		     n->cfg.sandbox_net, n->cfg.sandbox_prefix, n->cfg.node_ip, &node_ops, n)) {
		CVS_LOG(ERR, main, "cannot allocate the registry");
		goto fail_port;
	}
	n->obs.w = n->w;
	n->obs.nw = n->nw;
	n->obs.reg = &n->reg;
	n->obs.cfg = &n->cfg;
	n->obs.steer = n->have_steer ? &n->steer : NULL;
	n->obs.sbx = &n->sbx;
	n->obs.world_port = n->world_port;
	n->obs.host_port = n->host_port;
	n->obs.world_ifindex = n->world_ifindex;
	for (i = 0; i < (int)n->nw; i++)
		rte_eal_remote_launch(worker_main, &n->w[i], n->w[i].lcore);
	n->launched = true;
	if (node_restore(n, err, sizeof(err))) {
		CVS_LOG(ERR, ctl, "%s", err);
		node_teardown(n, NULL, true);
		rte_eal_cleanup();
		return 1;
	}
	atomic_store(&n->obs.restored, true);
	telemetry_start(&n->obs);
	api = api_start(n->cfg.api_addr, n->cfg.api_port, &n->reg, node_extra, n, obs_route,
			&n->obs, err, sizeof(err));
	if (!api) {
		CVS_LOG(ERR, api, "%s", err);
		node_teardown(n, NULL, true);
		rte_eal_cleanup();
		return 1;
	}
	atomic_store(&n->obs.serving, true);
	inet_ntop(AF_INET, &n->cfg.node_ip, node_ip, sizeof(node_ip));
	{
		char api_ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &n->cfg.api_addr, api_ip, sizeof(api_ip));
		CVS_LOG(INFO, main, "ready: world port %u%s%s, node IP %s, %u worker(s) from "
			"lcore %u, API http://%s:%u", n->world_port,
			n->cfg.world_iface[0] ? " on " : "", n->cfg.world_iface, node_ip, n->nw,
			n->w[0].lcore, api_ip, n->cfg.api_port);
	}
	notify_send("READY=1\nSTATUS=serving");
	{
		unsigned long long wd = notify_watchdog_usec(), next_wd = 0, t = 0, next_obs = 0;

		while (!force_quit) {
			if (n->have_nexthop)
				nexthop_poll(&n->nexthop);
			usleep(5 * 1000);
			t += 5 * 1000;
			if (t >= next_obs) {
				obs_tick(&n->obs);
				next_obs = t + 100 * 1000;
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
	CVS_LOG(INFO, main, "signal received, stopping");
	notify_send("STOPPING=1");
	node_teardown(n, api, true);
	rte_eal_cleanup();
	return 0;

fail_port:
	node_teardown(n, NULL, false);
	rte_eal_cleanup();
	return 1;
}
