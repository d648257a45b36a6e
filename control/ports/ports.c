/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's ports: the world port (our own AF_XDP sockets on --world-iface, or an EAL port),
 * cube-dev, the mbuf pool.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "guest6.h"
#include "hostif.h"
#include "log.h"
#include "mbufpool.h"
#include "ports.h"
#include "umem.h"
#include "worldq.h"
#include "xdpctl.h"
#include "xskport.h"

#define NB_MBUF		8191

/* Configure nq rx and tx queues on a port at MTU mtu (0: the driver's default), start it. */
static int
ports_queues(uint16_t pid, uint32_t nq, uint16_t desc, struct rte_mempool *mp, uint16_t mtu)
{
	struct rte_eth_conf conf;
	uint16_t q;
	int ret;

	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = mtu;
	ret = rte_eth_dev_configure(pid, (uint16_t)nq, (uint16_t)nq, &conf);
	for (q = 0; !ret && q < nq; q++) {
		ret = rte_eth_rx_queue_setup(pid, q, desc, rte_eth_dev_socket_id(pid), NULL, mp);
		if (!ret)
			ret = rte_eth_tx_queue_setup(pid, q, desc, rte_eth_dev_socket_id(pid),
						     NULL);
	}
	return ret ? ret : rte_eth_dev_start(pid);
}

/*
 * --world-iface: no ethdev; the pool serves cube-dev and the frames handed between workers.
 * The sockets come with ports_world_steer(), once the steering program is there.
 */
static int
ports_world_own(struct ports *pt, const struct cvs_config *cfg, uint32_t nw, struct dp_cfg *dpc,
		char *err, size_t errlen)
{
	int ret;

	pt->world = UINT16_MAX;
	pt->mp = mbufpool_create("cvs_mbuf", NB_MBUF * nw, 256, rte_socket_id(), false);
	if (!pt->mp) {
		snprintf(err, errlen, "cannot create the mbuf pool: %s (raise -m)",
			 rte_strerror(rte_errno));
		return -ENOMEM;
	}
	ret = worldq_mac(cfg->world_iface, dpc->world_mac);
	if (ret)
		snprintf(err, errlen, "cannot read the MAC address of %s: %s", cfg->world_iface,
			 strerror(-ret));
	dpc->world_mtu = worldq_mtu(cfg->world_iface);
	if (!ret && dpc->world_mtu > XSKP_MTU_MAX) {
		snprintf(err, errlen, "%s has MTU %u; the world queues carry at most %u (a jumbo "
			 "frame in AF_XDP multi-buffer): set its MTU to %u or less",
			 cfg->world_iface, dpc->world_mtu, XSKP_MTU_MAX, XSKP_MTU_MAX);
		return -EMSGSIZE;
	}
	return ret;
}

int
ports_world_steer(struct ports *pt, const struct cvs_config *cfg, struct xdp_steer *s,
		  const char *pin_dir, bool share)
{
	struct cvs_xdp_cfg xc = {
		.node_ip = cfg->node_ip, .snat_lo = cfg->snat_ports.lo,
		.snat_hi = cfg->snat_ports.hi, .flags = CVS_CFG_F_ENABLED,
		.grace_ns = cfg->restart_grace_s * 1000000000ull,
	};
	char err[512];
	int ret;

	ret = xdpctl_steer_load(s, pt->world_ifindex, cfg->world_iface, pin_dir, &xc,
				cfg->have_ip6 ? cfg->node_ip6 : NULL, err, sizeof(err));
	if (ret) {
		CVS_LOG(ERR, xdp, "%s: %s", cfg->world_iface, err);
		return ret;
	}
	if (s->note[0])
		CVS_LOG(WARNING, xdp, "%s", s->note);
	if (s->reused)
		CVS_LOG(INFO, xdp, "steering maps reused from %s (%u maps)", pin_dir, s->reused);
	if (s->took_over)
		CVS_LOG(INFO, xdp, "taking over the steering program on %s (%s)", cfg->world_iface,
			s->kept ? "kept: the same program over the same maps" :
			"replaced in one step");
	/* Into the xsks_map of the program now attached: from here on it steers to us. */
	ret = worldq_open(&pt->wq, cfg->world_iface, pt->world_ifindex, cfg->world_queues,
			  CVS_WORLD_UMEM_FRAMES, s->xsks_fd, share, err, sizeof(err));
	if (ret) {
		CVS_LOG(ERR, main, "%s", err);
		xdpctl_steer_close(s, false);
	}
	return ret;
}

/*
 * The MTU of an EAL world port: its kernel interface's when it has one (a net_af_xdp port:
 * DPDK starts every port at 1500 whatever its link carries, and a frame sent longer than the
 * link is lost), else DPDK's. A frame is one mbuf here (no scatter), so a larger MTU fails the
 * start with the largest that works; --world-iface carries jumbo frames.
 */
static int
ports_world_eal_mtu(uint16_t pid, const struct rte_eth_dev_info *info, uint16_t *mtu,
		    char *err, size_t errlen)
{
	uint32_t room = RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM - RTE_ETHER_HDR_LEN;
	uint32_t max = info->max_mtu && info->max_mtu < room ? info->max_mtu : room;
	char ifname[IF_NAMESIZE] = "";

	*mtu = 0;
	if (info->if_index && if_indextoname(info->if_index, ifname))
		*mtu = worldq_mtu(ifname);
	if (!*mtu && rte_eth_dev_get_mtu(pid, mtu))
		*mtu = RTE_ETHER_MTU;
	if (*mtu <= max)
		return 0;
	snprintf(err, errlen, "the world port%s%s has MTU %u; an EAL world port carries at most %u "
		 "(one mbuf a frame, driver %s): set its MTU to %u or less, or give the interface "
		 "with --world-iface, which carries jumbo frames", ifname[0] ? " " : "", ifname,
		 *mtu, max, info->driver_name ? info->driver_name : "?", max);
	return -EMSGSIZE;
}

/* An EAL port: a PCI NIC, or a net_af_xdp port the operator gave with its own xdp_prog=. */
static int
ports_world_eal(struct ports *pt, const struct cvs_config *cfg, uint32_t nw, struct dp_cfg *dpc,
		uint16_t found, char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	bool af_xdp, packed;
	int ret;

	pt->world = found;
	ret = rte_eth_dev_info_get(found, &info);
	af_xdp = !ret && info.driver_name && strstr(info.driver_name, "af_xdp");
	packed = af_xdp && !cfg->test_unpacked_pool;
	pt->mp = mbufpool_create("cvs_mbuf", NB_MBUF * nw, 256, rte_socket_id(), packed);
	if (!pt->mp) {
		snprintf(err, errlen, "cannot create the mbuf pool: %s (raise -m)",
			 rte_strerror(rte_errno));
		return -ENOMEM;
	}
	if (packed && !mbufpool_packed_ok(pt->mp, err, errlen))
		return -ENOMEM;
	if (!ret && (info.max_rx_queues < cfg->world_queues ||
		     info.max_tx_queues < cfg->world_queues)) {
		snprintf(err, errlen, "the world port has %u rx / %u tx queues, fewer than "
			 "--world-queues %u", info.max_rx_queues, info.max_tx_queues,
			 cfg->world_queues);
		return -EINVAL;
	}
	if (!ret && ports_world_eal_mtu(found, &info, &dpc->world_mtu, err, errlen))
		return -EMSGSIZE;
	if (!ret)
		ret = ports_queues(found, cfg->world_queues, 1024, pt->mp, dpc->world_mtu);
	if (ret) {
		snprintf(err, errlen, "cannot start the world port: %s", strerror(-ret));
		return ret;
	}
	rte_eth_macaddr_get(found, &mac);
	memcpy(dpc->world_mac, mac.addr_bytes, 6);
	pt->world_ifindex = (int)info.if_index;
	return 0;
}

int
ports_world_setup(struct ports *pt, const struct cvs_config *cfg, uint32_t nw, struct dp_cfg *dpc,
		  char *err, size_t errlen)
{
	uint16_t pid, found = RTE_MAX_ETHPORTS;

	RTE_ETH_FOREACH_DEV(pid) {
		char name[RTE_ETH_NAME_MAX_LEN];

		rte_eth_dev_get_name_by_port(pid, name);
		if (!strcmp(name, HOST_VDEV))
			pt->host = pid;
		else if (found == RTE_MAX_ETHPORTS)
			found = pid;
	}
	if (cfg->world_iface[0])
		return ports_world_own(pt, cfg, nw, dpc, err, errlen);
	if (found == RTE_MAX_ETHPORTS) {
		snprintf(err, errlen, "no world port: give --world-iface IFACE or an EAL port "
			 "(--vdev net_af_xdp0,iface=... or a PCI device)");
		return -ENODEV;
	}
	return ports_world_eal(pt, cfg, nw, dpc, found, err, errlen);
}

/* cube-dev: the net_tap port, its kernel address and the kernel's MAC. */
int
ports_host_setup(struct ports *pt, const struct cvs_config *cfg, uint32_t nw, struct dp_cfg *dpc,
		 char *err, size_t errlen)
{
	struct rte_ether_addr mac;
	uint16_t pid = pt->host;
	int ret;

	ret = ports_queues(pid, nw, 512, pt->mp, 0);
	if (ret) {
		snprintf(err, errlen, "cannot start %s: %s", cfg->host_iface, strerror(-ret));
		return ret;
	}
	rte_eth_macaddr_get(pid, &mac);
	memcpy(dpc->host_mac, mac.addr_bytes, 6);
	if (rte_eth_dev_get_mtu(pid, &dpc->host_mtu))
		dpc->host_mtu = 0;
	dpc->host_ip = htonl(ntohl(cfg->sandbox_net) + 1);
	ret = hostif_configure(cfg->host_iface, dpc->host_ip, cfg->sandbox_prefix,
			       dpc->host_peer_mac, err, errlen);
	if (ret)
		return ret;
	/* The host path over IPv6: the kernel's side is the prefix and its own IPv4 address. */
	if (cfg->have_ip6) {
		uint8_t a6[16];

		sbx6_addr(a6, cfg->sbx_pfx6, dpc->host_ip);
		ret = hostif_configure6(cfg->host_iface, a6, 96, err, errlen);
		if (ret)
			return ret;
	}
	dpc->have_host = true;
	return 0;
}

