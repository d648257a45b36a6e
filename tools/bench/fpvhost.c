/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fpvhost: the "guest" of fpbench's cubevs-vhost path. One DPDK process with one or two
 * virtio_user ports (EAL --vdev net_virtio_user<N>,path=SOCK), each the virtio-net device of
 * a vhost-user sandbox of cubevs-fp, so the sandbox leg has no kernel and no VM: what the
 * benchmark measures is cubevs-fp's vhost-user I/O and its pipeline.
 *
 * It counts the frames arriving on --rx-port (after --warmup, for --seconds) and, with
 * --tx-port, sends frames from the guest at the highest rate the ring takes: UDP (S3, the
 * reflected replies come back on the same port) or TCP ACKs (S5, counted at the other port).
 * Flow f (0 <= f < --flows) has source port --sport + f. Ports other than these two are
 * started and left idle (a running device whose guest sends nothing: tools/bench/vhidle.py). Addresses must be inside
 * 198.18.0.0/15. --idle-us makes a pure sink sleep when its ring is empty, so on a two-CPU box
 * it leaves the generator's CPU mostly alone.
 */
#include <getopt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#define BURST	32u
#define MAXF	65536u

static volatile sig_atomic_t stop;

struct vopts {
	int rx, tx;			/* port ids; tx -1: sink only */
	int udp;
	uint32_t src, dst;		/* network order */
	uint16_t sport, dport;
	uint32_t flows, size;
	struct rte_ether_addr dmac;
	double warmup, seconds;
	unsigned int idle_us;
	uint16_t ring;			/* descriptors per ring: the vdev's queue_size */
};

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void __attribute__((noreturn))
die(const char *msg)
{
	fprintf(stderr, "fpvhost: %s\n", msg);
	exit(1);
}

static uint32_t
parse_ip(const char *s)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1 || (ntohl(a.s_addr) & 0xfffe0000u) != 0xc6120000u)
		die("addresses must be IPv4 inside 198.18.0.0/15");
	return a.s_addr;
}

/* The frame of flow f, complete and checksummed (cubevs-fp negotiates no offload). */
static uint16_t
build(uint8_t *buf, const struct vopts *o, const struct rte_ether_addr *smac, uint32_t f,
      bool syn)
{
	struct rte_ether_hdr *eth = (void *)buf;
	struct rte_ipv4_hdr *ip = (void *)(eth + 1);
	uint16_t l4 = o->udp ? sizeof(struct rte_udp_hdr) : sizeof(struct rte_tcp_hdr);
	uint16_t len = o->size > sizeof(*eth) + sizeof(*ip) + l4 ? o->size :
		       sizeof(*eth) + sizeof(*ip) + l4;

	memset(buf, 0, len);
	eth->dst_addr = o->dmac;
	eth->src_addr = *smac;
	eth->ether_type = htons(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = htons(len - sizeof(*eth));
	ip->time_to_live = 64;
	ip->next_proto_id = o->udp ? IPPROTO_UDP : IPPROTO_TCP;
	ip->src_addr = o->src;
	ip->dst_addr = o->dst;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (o->udp) {
		struct rte_udp_hdr *u = (void *)(ip + 1);

		u->src_port = htons((uint16_t)(o->sport + f));
		u->dst_port = htons(o->dport);
		u->dgram_len = htons(len - sizeof(*eth) - sizeof(*ip));
		u->dgram_cksum = rte_ipv4_udptcp_cksum(ip, u);
	} else {
		struct rte_tcp_hdr *t = (void *)(ip + 1);

		t->src_port = htons((uint16_t)(o->sport + f));
		t->dst_port = htons(o->dport);
		/* The numbers fpgen uses: the session opened by the SYN takes these ACKs. */
		t->sent_seq = htonl(0x10000000u);
		t->recv_ack = syn ? 0 : htonl(0x20000000u);
		t->data_off = 5 << 4;
		t->tcp_flags = syn ? RTE_TCP_SYN_FLAG : RTE_TCP_ACK_FLAG;
		t->rx_win = htons(65535);
		t->cksum = rte_ipv4_udptcp_cksum(ip, t);
	}
	return len;
}

static void
port_up(uint16_t port, struct rte_mempool *mp, uint16_t ring)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_link link;
	int i;

	if (rte_eth_dev_configure(port, 1, 1, &conf) ||
	    rte_eth_rx_queue_setup(port, 0, ring, rte_socket_id(), NULL, mp) ||
	    rte_eth_tx_queue_setup(port, 0, ring, rte_socket_id(), NULL) ||
	    rte_eth_dev_start(port))
		die("cannot set up a virtio_user port (is cubevs-fp listening on the socket?)");
	for (i = 0; i < 100; i++) {
		if (!rte_eth_link_get_nowait(port, &link) && link.link_status)
			return;
		usleep(50000);
	}
	die("virtio_user link stayed down");
}

static void
usage(void)
{
	fprintf(stderr, "usage: fpvhost EAL-ARGS -- [--rx-port N] [--tx-port N --proto udp|ack "
		"--src IP --sport P --flows N --dst IP --dport P --dst-mac MAC [--size B]] "
		"--warmup S --seconds S [--idle-us US] [--ring N]\n");
	exit(2);
}

static void
parse(int argc, char **argv, struct vopts *o)
{
	static const struct option lo[] = {
		{ "rx-port", 1, NULL, 'r' }, { "tx-port", 1, NULL, 't' },
		{ "proto", 1, NULL, 'p' }, { "src", 1, NULL, 's' }, { "sport", 1, NULL, 'S' },
		{ "flows", 1, NULL, 'f' }, { "dst", 1, NULL, 'd' }, { "dport", 1, NULL, 'D' },
		{ "dst-mac", 1, NULL, 'm' }, { "size", 1, NULL, 'z' },
		{ "warmup", 1, NULL, 'w' }, { "seconds", 1, NULL, 'n' },
		{ "idle-us", 1, NULL, 'i' }, { "ring", 1, NULL, 'R' }, { "json", 0, NULL, 'j' },
		{ NULL, 0, NULL, 0 } };
	int c;

	*o = (struct vopts){ .tx = -1, .udp = 1, .flows = 1, .size = 60, .seconds = -1,
			     .ring = 1024 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'r': o->rx = atoi(optarg); break;
		case 't': o->tx = atoi(optarg); break;
		case 'p': o->udp = !strcmp(optarg, "udp"); break;
		case 's': o->src = parse_ip(optarg); break;
		case 'S': o->sport = (uint16_t)atoi(optarg); break;
		case 'f': o->flows = (uint32_t)atoi(optarg); break;
		case 'd': o->dst = parse_ip(optarg); break;
		case 'D': o->dport = (uint16_t)atoi(optarg); break;
		case 'm':
			if (rte_ether_unformat_addr(optarg, &o->dmac))
				die("bad --dst-mac");
			break;
		case 'z': o->size = (uint32_t)atoi(optarg); break;
		case 'w': o->warmup = atof(optarg); break;
		case 'n': o->seconds = atof(optarg); break;
		case 'i': o->idle_us = (unsigned int)atoi(optarg); break;
		case 'R': o->ring = (uint16_t)atoi(optarg); break;
		case 'j': break;	/* the output is always JSON */
		default: usage();
		}
	}
	if (!o->ring || o->ring > 32768 || (o->ring & (o->ring - 1)))
		die("--ring: a power of two up to 32768, the vdev's queue_size");
	if (o->seconds <= 0 || o->seconds > 600 || o->warmup < 0 || o->warmup > 60)
		die("--seconds (0-600] and --warmup [0-60] are required: every load is bounded");
	if (o->tx >= 0 && (!o->src || !o->dst || !o->flows || o->flows > MAXF ||
			   o->sport + o->flows > 65536u || o->size > 1514))
		die("--tx-port needs --src, --dst and 1..65536 flows within the port range");
}

/* The guest's frames: flow f's ACK or UDP frame, and its SYN for the first pass. */
struct gen {
	uint8_t frames[MAXF][64];
	uint8_t syns[MAXF][64];
	uint16_t len[MAXF];
	uint32_t next;		/* flow of the next frame */
	bool opening;		/* TCP: the first pass over the flows sends SYNs, opening sessions */
	uint64_t sent;
};

static void
send_burst(struct gen *g, const struct vopts *o, struct rte_mempool *mp)
{
	struct rte_mbuf *m[BURST];
	uint32_t i = g->next;
	uint16_t j, k;

	if (rte_pktmbuf_alloc_bulk(mp, m, BURST))
		return;
	for (j = 0; j < BURST; j++) {
		rte_memcpy(rte_pktmbuf_mtod(m[j], void *),
			   g->opening ? g->syns[i] : g->frames[i], g->len[i]);
		m[j]->data_len = m[j]->pkt_len = g->len[i];
		if (++i == o->flows)
			i = 0;
	}
	k = rte_eth_tx_burst((uint16_t)o->tx, 0, m, BURST);
	g->sent += k;
	/* Only what the ring took moves on: every flow gets its SYN. */
	for (j = 0; j < k; j++)
		if (++g->next == o->flows)
			g->next = 0, g->opening = false;
	if (k < BURST)
		rte_pktmbuf_free_bulk(m + k, BURST - k);
}

int
main(int argc, char **argv)
{
	static struct gen g;
	struct rte_mbuf *m[BURST];
	struct rte_ether_addr smac;
	struct rte_mempool *mp;
	uint64_t got = 0, win = 0;
	double t0, t1, t_end, w0 = 0, w1 = 0;
	struct vopts o;
	uint32_t i;
	int n;

	n = rte_eal_init(argc, argv);
	if (n < 0)
		die("EAL init failed");
	parse(argc - n, argv + n, &o);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!rte_eth_dev_is_valid_port(o.rx) || (o.tx >= 0 && !rte_eth_dev_is_valid_port(o.tx)))
		die("no such port (one --vdev net_virtio_user per port)");
	/* Every receive ring is filled at start; ports other than rx and tx only sit idle. */
	mp = rte_pktmbuf_pool_create("fpv", rte_eth_dev_count_avail() * (o.ring + 2u * BURST) +
				     4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (!mp)
		die("no mbuf pool (raise -m)");
	RTE_ETH_FOREACH_DEV(i)
		port_up((uint16_t)i, mp, o.ring);
	if (o.tx >= 0) {
		rte_eth_macaddr_get(o.tx, &smac);
		for (i = 0; i < o.flows; i++) {
			g.len[i] = build(g.frames[i], &o, &smac, i, false);
			build(g.syns[i], &o, &smac, i, true);
		}
	}
	g.opening = !o.udp;
	printf("ready\n");
	fflush(stdout);
	t0 = now_s();
	t1 = t0 + o.warmup;
	t_end = t1 + o.seconds;
	while (!stop) {
		double t = now_s();
		uint16_t k;

		if (t >= t_end)
			break;
		if (o.tx >= 0)
			send_burst(&g, &o, mp);
		k = rte_eth_rx_burst(o.rx, 0, m, BURST);
		got += k;
		if (t >= t1) {
			if (!w0)
				w0 = t, win = 0;
			win += k;
			w1 = t;
		}
		if (k)
			rte_pktmbuf_free_bulk(m, k);
		/*
		 * A sink sleeps once it has drained its ring, not only when it finds it empty: a
		 * steady stream leaves a frame or two there at every poll, and busy polling them
		 * would take half of the CPU it shares with the generator.
		 */
		if (k < BURST && o.tx < 0 && o.idle_us)
			usleep(o.idle_us);
	}
	printf("{\"pps\": %.0f, \"packets\": %" PRIu64 ", \"window_s\": %.3f, "
	       "\"total_packets\": %" PRIu64 ", \"sent\": %" PRIu64 "}\n",
	       w1 > w0 ? win / (w1 - w0) : 0.0, win, w1 - w0, got, g.sent);
	fflush(stdout);
	RTE_ETH_FOREACH_DEV(i)
		rte_eth_dev_stop((uint16_t)i);
	rte_eal_cleanup();
	return 0;
}
