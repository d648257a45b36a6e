/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ppbench's parts: the runner and its cases (ppbench.c), the command line and the report
 * (ppb_cli.c), the IPv6 flows (ppb6.c). Benchmark code, not the data path.
 */
#ifndef CVS_PPB_H
#define CVS_PPB_H

#include <stdint.h>
#include <time.h>

#include "dp.h"

#define BURST 32
#define FRAME_ROOM 1536
#define HOSTPORT_BASE 20000
#define CPORT 8080

enum pb_dir { PB_WORLD, PB_SANDBOX };

/* The frames every flow's are written from (frame_of()). */
enum pb_tpl {
	T_SYN,		/* client SYN to a host port */
	T_ACK,		/* client ACK on its flow */
	T_SYNACK,	/* the guest's SYN+ACK */
	T_RACK,		/* the guest's ACK (reply direction) */
	T_BRST,		/* a blind RST: the flow's tuple, a sequence number half the space away */
	T_FFIRST,	/* first fragment of a client segment (IPv4 only) */
	T_FLATER,	/* a later fragment of it (IPv4 only) */
	T_FULL,		/* a full-size segment, 1,448 bytes of data */
	T_ESYN,		/* a guest's SYN to a remote host (egress) */
	T_MAX
};

enum pb_case_id {
	C_NEW, C_SYNACK, C_ACK3, C_EST_WORLD, C_EST_SAME, C_EST_SBX, C_MISS, C_HOT_WORLD,
	C_BLIND_RST, C_FULL, C_PARTIAL, C_FRAG_FIRST, C_FRAG_LATER, C_EGRESS_NEW, C_MAX
};

struct pb_case {
	const char *name;
	const char *what;
	uint64_t pkts;
	uint64_t ns;
	uint64_t bad;	/* packets whose verdict was not the expected one */
	int skipped;	/* not run for this address family */
};

struct pb_opts {
	uint32_t sessions;
	uint32_t capacity;
	uint32_t rounds;
	uint32_t nsbx;
	uint64_t seed;
	int json;
	int per_packet;
	int ipv6;	/* the IPv6 flows (ppb6.c) instead of the IPv4 ones */
	clockid_t clock;
};

/* What the report prints besides the cases. */
struct pb_summary {
	uint64_t timer_cost;
	size_t sess_bytes;	/* a session, the parts a packet and the lists touch */
	size_t bucket_bytes;	/* the index */
	long rss_growth;	/* while the handshakes filled the table */
};

extern struct pb_opts opt;

/* ppb_cli.c */
int pb_parse_args(int argc, char **argv);
void pb_report(const struct pb_case *cs, const struct pb_summary *sm);

/*
 * ppb6.c: flow i of the IPv6 family is the client 2001:2:0:ff::/64 with client_ip(i) as its
 * last 32 bits and the same port as in IPv4, towards [node6]:host port, DNATed to the slot's
 * guest address (the EUI-64 of its MAC in --guest-prefix6, what a guest with kernel defaults
 * forms). ppb6_setup() gives the pipeline its IPv6 configuration.
 */
void ppb6_setup(struct dp_cfg *cfg, struct dp_shared *sh, const uint8_t guest_mac[6]);
struct ct6_table *ppb6_table(void);
void ppb6_templates(uint8_t tpl[T_MAX][FRAME_ROOM], uint32_t tlen[T_MAX],
		    const struct dp_cfg *cfg, uint32_t c, uint16_t cport);
void ppb6_frame_of(uint8_t *f, uint32_t len, uint32_t c, uint16_t cp, uint16_t hp,
		   enum pb_dir dir, int partial);

#endif /* CVS_PPB_H */
