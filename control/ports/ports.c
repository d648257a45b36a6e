/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's DPDK ports: the world port (net_af_xdp or an EAL port), cube-dev, the mbuf pool. */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "hostif.h"
#include "mbufpool.h"
#include "ports.h"

#define NB_MBUF		8191

/* Configure nq rx and tx queues on a port and start it; wx: note its AF_XDP sockets. */
static int
ports_queues(uint16_t pid, uint32_t nq, uint16_t desc, struct rte_mempool *mp,
	     struct worldxsk *wx)
{
	struct rte_eth_conf conf;
	uint16_t q;
	int ret;

	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_configure(pid, (uint16_t)nq, (uint16_t)nq, &conf);
	if (wx)
		worldxsk_begin(wx);
	for (q = 0; !ret && q < nq; q++) {
		ret = rte_eth_rx_queue_setup(pid, q, desc, rte_eth_dev_socket_id(pid), NULL, mp);
		if (!ret && wx)
			worldxsk_note_queue(wx, q);
		if (!ret)
			ret = rte_eth_tx_queue_setup(pid, q, desc, rte_eth_dev_socket_id(pid),
						     NULL);
	}
	return ret ? ret : rte_eth_dev_start(pid);
}

int
ports_world_setup(struct ports *pt, const struct cvs_config *cfg, uint32_t nw, struct dp_cfg *dpc,
		  char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	uint16_t pid, found = RTE_MAX_ETHPORTS;
	bool af_xdp, packed;
	int ret;

	RTE_ETH_FOREACH_DEV(pid) {
		char name[RTE_ETH_NAME_MAX_LEN];

		rte_eth_dev_get_name_by_port(pid, name);
		if (!strcmp(name, HOST_VDEV))
			pt->host = pid;
		else if (cfg->world_iface[0] ? !strcmp(name, WORLD_VDEV) :
			 found == RTE_MAX_ETHPORTS)
			found = pid;
	}
	if (found == RTE_MAX_ETHPORTS && cfg->world_iface[0]) {
		snprintf(err, errlen, "cannot create the AF_XDP port on %s with %u queue(s) (see "
			 "the PMD's message above; 'ethtool -l %s' shows its queues)",
			 cfg->world_iface, cfg->world_queues, cfg->world_iface);
		return -ENODEV;
	}
	if (found == RTE_MAX_ETHPORTS) {
		snprintf(err, errlen, "no world port: give --world-iface IFACE or an EAL port "
			 "(--vdev net_af_xdp0,iface=... or a PCI device)");
		return -ENODEV;
	}
	pt->world = found;
	worldxsk_init(&pt->wxsk);
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
	if (!ret)
		ret = ports_queues(found, cfg->world_queues, 1024, pt->mp,
				   af_xdp ? &pt->wxsk : NULL);
	if (ret) {
		snprintf(err, errlen, "cannot start the world port: %s", strerror(-ret));
		return ret;
	}
	rte_eth_macaddr_get(found, &mac);
	memcpy(dpc->world_mac, mac.addr_bytes, 6);
	pt->world_ifindex = (int)info.if_index;
	return 0;
}

/* cube-dev: the net_tap port, its kernel address and the kernel's MAC. */
int
ports_host_setup(struct ports *pt, const struct cvs_config *cfg, uint32_t nw, struct dp_cfg *dpc,
		 char *err, size_t errlen)
{
	struct rte_ether_addr mac;
	uint16_t pid = pt->host;
	int ret;

	ret = ports_queues(pid, nw, 512, pt->mp, NULL);
	if (ret) {
		snprintf(err, errlen, "cannot start %s: %s", cfg->host_iface, strerror(-ret));
		return ret;
	}
	rte_eth_macaddr_get(pid, &mac);
	memcpy(dpc->host_mac, mac.addr_bytes, 6);
	dpc->host_ip = htonl(ntohl(cfg->sandbox_net) + 1);
	ret = hostif_configure(cfg->host_iface, dpc->host_ip, cfg->sandbox_prefix,
			       dpc->host_peer_mac, err, errlen);
	if (ret)
		return ret;
	dpc->have_host = true;
	return 0;
}

