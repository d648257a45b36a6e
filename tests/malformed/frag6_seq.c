/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 part of the malformed catalogue (issue 34): IPv6 fragments of a guest's UDP
 * datagram to the world (in order, reversed, bad offsets, overlapping, too many, a repeat,
 * past 65,535 bytes, atomic, two Fragment headers, TCP at offset 8, a first fragment without
 * its UDP header) and ICMPv6 errors about a NAT66 flow with bad quotes, each on a fresh bed
 * with IPv6 carried and a small fragment table, every verdict and drop reason checked.
 */
#include <stdio.h>
#include <string.h>

#include "ct6.h"
#include "dpbed.h"
#include "frag_seq.h"
#include "icmperr6.h"

#define F6_ROOM		2048
#define F6_MAX		24

static const uint8_t node6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 1 };
static const uint8_t guest6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 6, [15] = 0x66 };
static const uint8_t world6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 2, [15] = 2 };

/* IPv6 on the bed as --node-ip6 has it: a session table, the prefix, the next hop. */
static int
bed6_on(struct dpbed *b, uint16_t world_mtu)
{
	if (bed_reset(b))
		return 1;
	frag_destroy(b->x.frag);
	b->x.frag = frag_create(&(struct frag_cfg){ .contexts = 16, .max_frags = 8, .held = 8,
						    .timeout = 2 }, BED_SLOTS + 2);
	ct6_destroy(b->x.ct6);
	b->x.ct6 = ct6_create(64, BED_SLOTS, NULL);
	if (!b->x.frag || !b->x.ct6)
		return 2;
	b->cfg.have_ip6 = true;
	b->cfg.world_mtu = world_mtu;
	memcpy(b->cfg.node_ip6, node6, 16);
	memcpy(b->cfg.guest_pfx6, guest6, 8);
	atomic_store(&b->sh->nh6_mac, dp_mac_pack(bed_router_mac));
	return 0;
}

static void
bed6_off(struct dpbed *b)
{
	ct6_destroy(b->x.ct6);
	b->x.ct6 = NULL;
	frag_destroy(b->x.frag);
	b->x.frag = NULL;
	b->cfg.have_ip6 = false;
	b->cfg.world_mtu = 0;
}

/* The IPv6 header of a frame: 'plen' bytes after it, next header 'nh'. */
static void
hdr6(uint8_t *f, const uint8_t *s, const uint8_t *d, uint8_t nh, uint32_t plen)
{
	struct ipv6_hdr *ip6 = (struct ipv6_hdr *)(f + ETH_HLEN_);

	memcpy(f, bed_router_mac, 6);
	memcpy(f + 6, bed_client_mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip6->vtc_flow = htonl(6u << 28);
	ip6->plen = htons((uint16_t)plen);
	ip6->nxt = nh;
	ip6->hlim = 64;
	memcpy(ip6->saddr, s, 16);
	memcpy(ip6->daddr, d, 16);
}

static uint16_t
sum6(const uint8_t *f, uint8_t proto, const uint8_t *l4, uint32_t len)
{
	uint32_t s = csum_partial(f + ETH_HLEN_ + 8, 32, htons((uint16_t)len) + htons(proto));

	return (uint16_t)~csum_fold(csum_partial(l4, len, s));
}

/* A whole UDP datagram from guest A to the world host (payload 'n' bytes): its length. */
static uint32_t
udp6(uint8_t *f, const uint8_t *s, const uint8_t *d, uint16_t sp, uint16_t dp, uint32_t n)
{
	struct udp_hdr *uh = (struct udp_hdr *)(f + ETH_HLEN_ + 40);
	uint16_t c;
	uint32_t i;

	hdr6(f, s, d, IPPROTO_UDP_, 8 + n);
	uh->sport = htons(sp);
	uh->dport = htons(dp);
	uh->len = htons((uint16_t)(8 + n));
	uh->check = 0;
	for (i = 0; i < n; i++)
		f[ETH_HLEN_ + 48 + i] = (uint8_t)(i * 7);
	c = sum6(f, IPPROTO_UDP_, (uint8_t *)uh, 8 + n);
	uh->check = c ? c : 0xffff;
	return ETH_HLEN_ + 48 + n;
}

/*
 * Split the datagram in 'whole' into fragments of 'piece' bytes of data (a multiple of 8), id
 * 'id'; each its own frame in outs. Returns how many.
 */
static uint32_t
frag6(const uint8_t *whole, uint32_t len, uint32_t piece, uint32_t id, uint8_t (*outs)[F6_ROOM],
      uint32_t *lens)
{
	uint32_t data = len - ETH_HLEN_ - 40, off, n = 0, k;
	uint8_t nh = whole[ETH_HLEN_ + 6];

	for (off = 0; off < data && n < F6_MAX; off += piece, n++) {
		uint8_t *f = outs[n], *fh = f + ETH_HLEN_ + 40;
		uint16_t fo;

		k = data - off < piece ? data - off : piece;
		memcpy(f, whole, ETH_HLEN_ + 40);
		f[ETH_HLEN_ + 6] = IP6_NH_FRAGMENT;
		((struct ipv6_hdr *)(f + ETH_HLEN_))->plen = htons((uint16_t)(8 + k));
		fo = (uint16_t)(off | (off + k < data));
		fh[0] = nh;
		fh[1] = 0;
		fh[2] = (uint8_t)(fo >> 8);
		fh[3] = (uint8_t)fo;
		id = htonl(id);
		memcpy(fh + 4, &id, 4);
		id = ntohl(id);
		memcpy(fh + 8, whole + ETH_HLEN_ + 40 + off, k);
		lens[n] = ETH_HLEN_ + 48 + k;
	}
	return n;
}

/* A fragment's offset and M flag rewritten. */
static void
set_fo(uint8_t *f, uint16_t off, int m)
{
	f[ETH_HLEN_ + 42] = (uint8_t)((off | m) >> 8);
	f[ETH_HLEN_ + 43] = (uint8_t)(off | m);
}

struct seq6 {
	const char *name;
	uint32_t payload;
	uint32_t piece;
	const char *order;	/* fragment indexes; '*' the crafted one */
	int patch;	/* 1 overlap, 2 atomic, 3 past 65,535, 4 middle not a multiple of 8,
			 * 5 two Fragment headers, 6 first without its UDP header */
	const char *want;	/* W world, H held, D dropped */
	int reason;
};

static const struct seq6 seqs6[] = {
	{ "ipv6-frag-in-order", 3000, 1000, "0123", 0, "WWWW", -1 },
	{ "ipv6-frag-reversed", 3000, 1000, "3210", 0, "HHHW", -1 },
	{ "ipv6-frag-overlap", 3000, 1000, "01*23", 1, "WWDWW", CVS_DROP_FRAG_BASE + FRAG_R_OVERLAP },
	{ "ipv6-frag-duplicate", 3000, 1000, "0112", 0, "WWDW", CVS_DROP_FRAG_BASE + FRAG_R_DUPLICATE },
	{ "ipv6-frag-too-many", 1000, 96, "0123456789", 0, "WWWWWWWWDD",
	  CVS_DROP_FRAG_BASE + FRAG_R_TOO_MANY },
	{ "ipv6-frag-past-65535", 3000, 1000, "0*", 3, "WD", CVS_DROP_FRAG_BASE + FRAG_R_TOO_LONG },
	{ "ipv6-frag-bad-offset", 3000, 1000, "0*", 4, "WD", CVS_DROP_FRAG_BASE + FRAG_R_BAD_LENGTH },
	{ "ipv6-frag-atomic", 3000, 1000, "*", 2, "D", CVS_DROP_FRAGMENT },
	{ "ipv6-frag-two-headers", 3000, 1000, "*", 5, "D", CVS_DROP_FRAGMENT },
	{ "ipv6-frag-first-without-udp", 3000, 1000, "*", 6, "D", CVS_DROP_L4_HEADER },
};

/* The crafted fragment of a patch, from fragment 1 (or 0) of the datagram. */
static uint32_t
seq6_patch(uint8_t *out, uint8_t (*fr)[F6_ROOM], const uint32_t *lens, int patch)
{
	uint32_t n = lens[1];

	memcpy(out, fr[1], n);
	switch (patch) {
	case 1:	/* fragment 1 moved back by 8 bytes: over the end of fragment 0 */
		set_fo(out, 1000 - 8, 1);
		break;
	case 2:	/* fragment 0 as an atomic fragment */
		memcpy(out, fr[0], n = lens[0]);
		set_fo(out, 0, 0);
		break;
	case 3:
		set_fo(out, 65528, 1);
		break;
	case 4:	/* a middle fragment of 1,001 bytes */
		((struct ipv6_hdr *)(out + ETH_HLEN_))->plen = htons(8 + 1001);
		out[n] = 0;
		n++;
		break;
	case 5:	/* a Fragment header behind fragment 0's */
		memcpy(out, fr[0], ETH_HLEN_ + 48);
		out[ETH_HLEN_ + 40] = IP6_NH_FRAGMENT;
		memcpy(out + ETH_HLEN_ + 48, fr[0] + ETH_HLEN_ + 40, 8);
		memcpy(out + ETH_HLEN_ + 56, fr[0] + ETH_HLEN_ + 48, 8);
		((struct ipv6_hdr *)(out + ETH_HLEN_))->plen = htons(24);
		n = ETH_HLEN_ + 64;
		break;
	case 6:	/* fragment 0 cut to 4 bytes of UDP header */
		memcpy(out, fr[0], n = ETH_HLEN_ + 48 + 4);
		((struct ipv6_hdr *)(out + ETH_HLEN_))->plen = htons(12);
		set_fo(out, 0, 1);
		break;
	}
	return n;
}

/* With --dump, each sequence's frames are also written as one fuzz_dp input (port, length). */
static FILE *dump_out;

static void
rx6(struct dpbed *b, int port, uint8_t *f, uint32_t n, struct dp_result *r)
{
	uint8_t hdr[3] = { (uint8_t)port, (uint8_t)(n >> 8), (uint8_t)n };

	if (dump_out) {
		fwrite(hdr, 1, 3, dump_out);
		fwrite(f, 1, n, dump_out);
	}
	bed_rx(b, port, f, n, r);
}

static char
verdict_of(const struct dp_result *r)
{
	return r->action == DP_TO_WORLD ? 'W' : r->action == DP_HELD ? 'H' :
	       r->action == DP_DROP ? 'D' : r->action == DP_TO_SANDBOX ? 'S' :
	       r->action == DP_BACK ? 'B' : '?';
}

static int
seq6_run(struct dpbed *b, const struct seq6 *q)
{
	static uint8_t fr[F6_MAX][F6_ROOM], whole[8192], work[F6_ROOM];
	uint32_t lens[F6_MAX], nf, k, n;
	struct dp_result r;
	int bad = 0;

	if (bed6_on(b, 0))
		return 1;
	nf = frag6(whole, udp6(whole, guest6, world6, 6001, 53, q->payload), q->piece, 0x1234,
		   fr, lens);
	for (k = 0; k < strlen(q->order); k++) {
		uint8_t *f = work;
		char got;

		if (q->order[k] == '*')
			n = seq6_patch(work, fr, lens, q->patch);
		else if ((uint32_t)(q->order[k] - '0') < nf)
			memcpy(work, fr[q->order[k] - '0'], n = lens[q->order[k] - '0']);
		else
			return 3;
		rx6(b, 1, f, n, &r);
		got = verdict_of(&r);
		if (got != q->want[k] || (got == 'D' && (int)r.drop != q->reason)) {
			fprintf(stderr, "not ok - %s: fragment %u: %c (%s), expected %c\n", q->name,
				k, got, got == 'D' ? cvs_drop_names[r.drop] : "-", q->want[k]);
			bad = 1;
		}
		/* Translated: from the node's address, to the world host. */
		if (got == 'W' && memcmp(work + ETH_HLEN_ + 8, node6, 16)) {
			fprintf(stderr, "not ok - %s: fragment %u not from the node\n", q->name, k);
			bad = 1;
		}
		while (b->x.frag_ready)
			if (dp_frag_release(&b->x, &f, &r) &&
			    (r.action != DP_TO_WORLD || memcmp(f + ETH_HLEN_ + 8, node6, 16))) {
				fprintf(stderr, "not ok - %s: a released fragment untranslated\n",
					q->name);
				bad = 1;
			}
	}
	dp_frag_counters(&b->x);
	if (!bad)
		printf("ok - %s\n", q->name);
	return bad;
}

/*
 * An ICMPv6 error from the router 'src' to the node quoting guest A's UDP datagram as it
 * left (node6:SNAT port → world6:53): its length.
 */
static uint32_t
err6(struct dpbed *b, uint8_t *f, uint8_t type, uint16_t snat)
{
	static const uint8_t router6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 2 };
	uint8_t q[ETH_HLEN_ + 48 + 64];
	uint32_t ql = udp6(q, node6, world6, ntohs(snat), 53, 64) - ETH_HLEN_;
	uint8_t *ic = f + ETH_HLEN_ + 40;

	(void)b;
	hdr6(f, router6, node6, IPPROTO_ICMPV6_, 8 + ql);
	memset(ic, 0, 8);
	ic[0] = type;
	if (type == ICMP6_PACKET_TOO_BIG)
		ic[6] = 0x05;	/* MTU 1,280 */
	memcpy(ic + 8, q + ETH_HLEN_, ql);
	{
		uint16_t c = sum6(f, IPPROTO_ICMPV6_, ic, 8 + ql);

		memcpy(ic + 2, &c, 2);
	}
	return ETH_HLEN_ + 48 + ql;
}

struct err_row {
	const char *name;
	uint8_t type;
	int patch;	/* 0 none, 1 bad ICMPv6 sum, 2 quote cut to 30 bytes, 3 quote version 4,
			 * 4 another SNAT port, 5 quoted protocol GRE, 6 quote a later fragment,
			 * 7 the quote from the world host itself (not from the node) */
	char want;
	int reason;
};

static const struct err_row errs[] = {
	{ "icmp6-error-too-big-tracked", ICMP6_PACKET_TOO_BIG, 0, 'S', -1 },
	{ "icmp6-error-unreach-tracked", ICMP6_DST_UNREACH, 0, 'S', -1 },
	{ "icmp6-error-bad-csum-stays-bad", ICMP6_TIME_EXCEEDED, 1, 'S', -1 },
	{ "icmp6-error-quote-truncated", ICMP6_DST_UNREACH, 2, 'D', CVS_DROP_L4_HEADER },
	{ "icmp6-error-quote-not-ipv6", ICMP6_PARAM_PROB, 3, 'D', CVS_DROP_L4_HEADER },
	{ "icmp6-error-foreign-flow", ICMP6_DST_UNREACH, 4, 'D', CVS_DROP_ICMP_NO_FLOW },
	{ "icmp6-error-quote-gre", ICMP6_DST_UNREACH, 5, 'D', CVS_DROP_ICMP_NO_FLOW },
	{ "icmp6-error-quote-later-fragment", ICMP6_DST_UNREACH, 6, 'D', CVS_DROP_ICMP_NO_FLOW },
	{ "icmp6-error-quote-not-ours", ICMP6_DST_UNREACH, 7, 'D', CVS_DROP_ICMP_NO_FLOW },
};

/* The ICMPv6 checksum of frame f ('len' bytes) is right. */
static bool
err6_sum_ok(const uint8_t *f, uint32_t len)
{
	uint32_t l = len - ETH_HLEN_ - 40;
	uint32_t s = csum_partial(f + ETH_HLEN_ + 8, 32, htons((uint16_t)l) + htons(58));

	return csum_fold(csum_partial(f + ETH_HLEN_ + 40, l, s)) == 0xffff;
}

static int
err_run(struct dpbed *b, const struct err_row *e)
{
	static uint8_t f[F6_ROOM];
	struct ct6_tuple t;
	struct ct6_session *s;
	struct dp_result r;
	uint32_t n;
	uint16_t snat;
	int dir, bad = 0;
	char got;

	if (bed6_on(b, 0))
		return 1;
	/* Guest A's flow first, through the pipeline: its SNAT port is the session's. */
	n = udp6(f, guest6, world6, 6001, 53, 16);
	rx6(b, 1, f, n, &r);
	if (r.action != DP_TO_WORLD)
		return 2;
	memcpy(&snat, f + ETH_HLEN_ + 40, 2);
	n = err6(b, f, e->type, snat);
	switch (e->patch) {
	case 1:
		f[ETH_HLEN_ + 43] ^= 0x5a;
		break;
	case 2:
		n = ETH_HLEN_ + 48 + 30;
		((struct ipv6_hdr *)(f + ETH_HLEN_))->plen = htons(38);
		break;
	case 3:
		f[ETH_HLEN_ + 48] = 0x45;
		break;
	case 4:
		f[ETH_HLEN_ + 48 + 40] ^= 1;
		break;
	case 5:
		f[ETH_HLEN_ + 48 + 6] = 47;
		break;
	case 6:	/* the quote's UDP header becomes a Fragment header at offset 8 */
		f[ETH_HLEN_ + 48 + 6] = IP6_NH_FRAGMENT;
		f[ETH_HLEN_ + 48 + 40] = IPPROTO_UDP_;
		set_fo(f + 48, 8, 1);
		break;
	case 7:
		memcpy(f + ETH_HLEN_ + 48 + 8, world6, 16);
		break;
	}
	if (e->patch >= 2) {
		uint16_t c = 0;

		memcpy(f + ETH_HLEN_ + 42, &c, 2);
		c = sum6(f, IPPROTO_ICMPV6_, f + ETH_HLEN_ + 40, n - ETH_HLEN_ - 40);
		memcpy(f + ETH_HLEN_ + 42, &c, 2);
	}
	rx6(b, 0, f, n, &r);
	got = verdict_of(&r);
	if (got != e->want || (got == 'D' && (int)r.drop != e->reason)) {
		fprintf(stderr, "not ok - %s: %c (%s), expected %c\n", e->name, got,
			got == 'D' ? cvs_drop_names[r.drop] : "-", e->want);
		bad = 1;
	}
	if (got == 'S' && (memcmp(f + ETH_HLEN_ + 24, guest6, 16) ||
			   memcmp(f + ETH_HLEN_ + 48 + 8, guest6, 16) ||
			   err6_sum_ok(f, r.len) != (e->patch != 1))) {
		fprintf(stderr, "not ok - %s: not translated to the guest, or its checksum "
			"changed validity\n", e->name);
		bad = 1;
	}
	ct6_tuple_set(&t, guest6, world6, htons(6001), htons(53), BED_SLOT_A + 1, IPPROTO_UDP_);
	s = ct6_lookup(b->x.ct6, &t, &dir);
	if (!s) {
		fprintf(stderr, "not ok - %s: the flow is gone\n", e->name);
		bad = 1;
	}
	if (!bad)
		printf("ok - %s\n", e->name);
	return bad;
}

/* A guest datagram over the world link's MTU: our Packet Too Big, from fe80::1. */
static int
ptb_run(struct dpbed *b)
{
	static uint8_t f[F6_ROOM];
	struct dp_result r;
	uint32_t n, mtu;
	int bad = 0;

	if (bed6_on(b, 1280))
		return 1;
	n = udp6(f, guest6, world6, 6002, 53, 1400);
	rx6(b, 1, f, n, &r);
	memcpy(&mtu, f + ETH_HLEN_ + 44, 4);
	if (r.action != DP_BACK || r.len != ETH_HLEN_ + 1280 || f[ETH_HLEN_ + 40] != 2 ||
	    ntohl(mtu) != 1280 || f[ETH_HLEN_ + 8] != 0xfe || memcmp(f + ETH_HLEN_ + 24, guest6, 16) ||
	    !err6_sum_ok(f, r.len) || b->st.c[CVS_WC_PTB6_SENT] != 1) {
		fprintf(stderr, "not ok - ipv6-too-big-answered: %c, %u bytes\n", verdict_of(&r),
			r.len);
		bad = 1;
	}
	/* An ICMPv6 error over the MTU is answered with nothing. */
	n = err6(b, f, ICMP6_DST_UNREACH, 0);
	hdr6(f, guest6, world6, IPPROTO_ICMPV6_, 1400);
	bed_rx(b, 1, f, ETH_HLEN_ + 40 + 1400, &r);
	if (r.action != DP_DROP) {
		fprintf(stderr, "not ok - ipv6-too-big-error-not-answered: %c\n", verdict_of(&r));
		bad = 1;
	}
	if (!bad)
		printf("ok - ipv6-too-big-answered\n");
	return bad;
}

/* Write the sequences and error rows as fuzz_dp seeds into 'dir' (their checks run too). */
int
ipv6_dump(struct dpbed *b, const char *dir)
{
	char path[4096];
	uint32_t i;
	int fails = 0;

	for (i = 0; i < sizeof(seqs6) / sizeof(seqs6[0]) + sizeof(errs) / sizeof(errs[0]); i++) {
		bool seq = i < sizeof(seqs6) / sizeof(seqs6[0]);
		const char *name = seq ? seqs6[i].name : errs[i - sizeof(seqs6) / sizeof(seqs6[0])].name;

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		dump_out = fopen(path, "wb");
		if (!dump_out) {
			perror(path);
			return 1;
		}
		fails += seq ? seq6_run(b, &seqs6[i]) :
			 err_run(b, &errs[i - sizeof(seqs6) / sizeof(seqs6[0])]);
		fclose(dump_out);
		dump_out = NULL;
	}
	bed6_off(b);
	return fails;
}

int
ipv6_sequences(struct dpbed *b)
{
	uint32_t i;
	int fails = 0;

	for (i = 0; i < sizeof(seqs6) / sizeof(seqs6[0]); i++)
		fails += seq6_run(b, &seqs6[i]) != 0;
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		fails += err_run(b, &errs[i]) != 0;
	fails += ptb_run(b) != 0;
	bed6_off(b);
	return fails;
}
