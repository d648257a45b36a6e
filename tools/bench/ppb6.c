/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ppbench's IPv6 flows (issue 34): the same flows, cases and verdicts as the IPv4 ones, with
 * IPv6 addresses, so each case's cost per packet compares with its IPv4 counterpart in one
 * build (tests/bench/callgrind_budget.py prints the ratios).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "csum.h"
#include "ct6.h"
#include "pktgen.h"
#include "ppb.h"

static const uint8_t node6[16] = { 0x20, 0x01, 0, 2, [15] = 1 };
static const uint8_t client6[16] = { 0x20, 0x01, 0, 2, 0, 0xff };
static const uint8_t guest_pfx6[8] = { 0x20, 0x01, 0, 2, 0, 6 };
static uint8_t guest6[16];

void
ppb6_setup(struct dp_cfg *cfg, struct dp_shared *sh, const uint8_t guest_mac[6])
{
	static const uint8_t router[6] = { 2, 0, 0, 0, 0, 0x66 };

	cfg->have_ip6 = true;
	memcpy(cfg->node_ip6, node6, 16);
	memcpy(cfg->guest_pfx6, guest_pfx6, 8);
	atomic_store(&sh->nh6_mac, dp_mac_pack(router));
	/* The address every slot's guest has: no slot learnt one, so its MAC's EUI-64. */
	memcpy(guest6, guest_pfx6, 8);
	guest6[8] = guest_mac[0] ^ 0x02;
	guest6[9] = guest_mac[1];
	guest6[10] = guest_mac[2];
	guest6[11] = 0xff;
	guest6[12] = 0xfe;
	memcpy(guest6 + 13, guest_mac + 3, 3);
}

/* A table of --capacity sessions hashed with a key fixed by --seed, for the same reason. */
struct ct6_table *
ppb6_table(void)
{
	struct ct6_table *ct = ct6_create(opt.capacity, opt.nsbx, NULL);
	uint32_t i;

	if (!ct) {
		perror("ct6_create");
		return NULL;
	}
	for (i = 0; i < 4; i++)
		ct->key[i] = (opt.seed + 1 + i) * 0x9e3779b97f4a7c15ull;
	return ct;
}

static void
client_of(uint8_t out[16], uint32_t c)
{
	memcpy(out, client6, 12);
	memcpy(out + 12, &c, 4);
}

void
ppb6_templates(uint8_t tpl[T_MAX][FRAME_ROOM], uint32_t tlen[T_MAX], const struct dp_cfg *cfg,
	       uint32_t c, uint16_t cport)
{
	uint16_t hp = htons(HOSTPORT_BASE), gp = htons(CPORT);
	struct tcp_hdr *th;
	uint8_t cl[16];

	client_of(cl, c);
	tlen[T_SYN] = build_frame6(tpl[T_SYN], IPPROTO_TCP_, cl, cfg->node_ip6, cport, hp,
				   TCPF_SYN, 6);
	tlen[T_ACK] = build_frame6(tpl[T_ACK], IPPROTO_TCP_, cl, cfg->node_ip6, cport, hp,
				   TCPF_ACK, 6);
	tlen[T_SYNACK] = build_frame6(tpl[T_SYNACK], IPPROTO_TCP_, guest6, cl, gp, cport,
				      TCPF_SYN | TCPF_ACK, 6);
	tlen[T_RACK] = build_frame6(tpl[T_RACK], IPPROTO_TCP_, guest6, cl, gp, cport, TCPF_ACK, 6);
	tlen[T_BRST] = build_frame6(tpl[T_BRST], IPPROTO_TCP_, cl, cfg->node_ip6, cport, hp,
				    TCPF_RST, 0);
	th = (struct tcp_hdr *)(tpl[T_BRST] + 54);
	th->seq = htonl(1000 + 0x80000000u);
	th->check = 0;
	th->check = l4_csum6(tpl[T_BRST] + 14);
	tlen[T_FULL] = build_frame6(tpl[T_FULL], IPPROTO_TCP_, cl, cfg->node_ip6, cport, hp,
				    TCPF_ACK, 1440);
	/* A guest opening a connection to a remote host (NAT66); the remote varies. */
	tlen[T_ESYN] = build_frame6(tpl[T_ESYN], IPPROTO_TCP_, guest6, cl, gp, cport, TCPF_SYN, 6);
	tlen[T_FFIRST] = tlen[T_FLATER] = 0;
}

/*
 * Flow i's frame from flow 0's, written in place: the client's last 32 bits, its port and the
 * host port change, the TCP checksum is fixed incrementally (IPv6 has no header checksum).
 */
void
ppb6_frame_of(uint8_t *f, uint32_t len, uint32_t c, uint16_t cp, uint16_t hp, enum pb_dir dir,
	      int partial)
{
	uint8_t *ip = f + 14;
	struct tcp_hdr *th = (struct tcp_hdr *)(f + 54);
	uint8_t *a = ip + (dir == PB_WORLD ? 8 + 12 : 24 + 12);
	uint16_t *port = dir == PB_WORLD ? &th->sport : &th->dport;
	uint32_t old, sum;

	memcpy(&old, a, 4);
	csum_replace4(&th->check, old, c);
	memcpy(a, &c, 4);
	csum_replace2(&th->check, *port, cp);
	*port = cp;
	if (dir == PB_WORLD) {
		csum_replace2(&th->check, th->dport, hp);
		th->dport = hp;
	}
	if (partial) {
		sum = csum_partial(ip + 8, 32, htons((uint16_t)(len - 54)) + htons(IPPROTO_TCP_));
		th->check = csum_fold(sum);
	}
}
