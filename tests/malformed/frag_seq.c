/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fragment part of the malformed catalogue (issue 33): sequences of IPv4 fragments from
 * guest A towards the client (UDP egress), or from the client on its established flow to
 * sandbox A's exposed port (TCP), each on a fresh bed with a small fragment table (8 fragments a
 * datagram, 16 datagrams, 8 copies), every fragment's verdict and the table's reason checked:
 * in order, reversed, an overlap, a tiny first fragment, too many fragments, a datagram past
 * 65,535 bytes, a repeat, fragments whose first never comes.
 */
#include <stdio.h>
#include <string.h>

#include "dpbed.h"
#include "frag_seq.h"
#include "mtu.h"

#define SEQ_MAX		24
#define SEQ_ROOM	2048

struct seq {
	const char *name;
	uint32_t payload;	/* UDP payload of the datagram */
	uint32_t mtu;		/* its fragments' MTU */
	const char *order;	/* fragment indexes fed, in order; 'r': all reversed */
	int patch;		/* 0 none, 1 overlap, 2 tiny first, 3 past 65,535, 4 clock +5 s */
	const char *want;	/* per fed fragment: W to the world, S to sandbox A, H held, D dropped */
	int reason;		/* the drop reason of the D ones (enum cvs_drop), -1: none */
	uint32_t released;	/* held fragments released to where the first went */
	int world;		/* 1: the client's TCP segment to the exposed port */
};

static const struct seq seqs[] = {
	{ "frag-seq-in-order", 3000, 1000, "0123", 0, "WWWW", -1, 0, 0 },
	{ "frag-seq-reversed", 3000, 1000, "r", 0, "HHHW", -1, 3, 0 },
	{ "frag-seq-shuffled", 3000, 1000, "2031", 0, "HWWW", -1, 1, 0 },
	{ "frag-seq-overlap", 3000, 1000, "01*23", 1, "WWDWW", CVS_DROP_FRAG_BASE + FRAG_R_OVERLAP,
	  0, 0 },
	{ "frag-seq-duplicate", 3000, 1000, "0112", 0, "WWDW", CVS_DROP_FRAG_BASE + FRAG_R_DUPLICATE,
	  0, 0 },
	{ "frag-seq-tiny-first", 3000, 1000, "*", 2, "D", CVS_DROP_L4_HEADER, 0, 0 },
	{ "frag-seq-too-many", 600, 68, "0123456789", 0, "WWWWWWWWDD",
	  CVS_DROP_FRAG_BASE + FRAG_R_TOO_MANY, 0, 0 },
	{ "frag-seq-past-65535", 3000, 1000, "0*", 3, "WD", CVS_DROP_FRAG_BASE + FRAG_R_TOO_LONG, 0, 0 },
	{ "frag-seq-first-never-comes", 3000, 1000, "12*0", 4, "HH.W",
	  -1, 0, 0 },
	{ "frag-seq-exposed-port", 2000, 1000, "012", 0, "SSS", -1, 0, 1 },
	{ "frag-seq-exposed-port-reversed", 2000, 1000, "r", 0, "HHS", -1, 2, 1 },
};

/* The crafted fragment of a patch, from fragment 1 of the datagram. */
static uint32_t
seq_patch(uint8_t *out, const uint8_t *frag1, uint32_t len1, const uint8_t *first, int patch)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(out + ETH_HLEN_);
	uint32_t n = len1;

	memcpy(out, patch == 2 ? first : frag1, n);
	switch (patch) {
	case 1:	/* fragment 1 moved back by 8 bytes: over the end of fragment 0 */
		ip->frag_off = htons((uint16_t)(ntohs(ip->frag_off) - 1));
		break;
	case 2:	/* the first fragment cut to 4 bytes of UDP header */
		n = ETH_HLEN_ + 20 + 4;
		ip->tot_len = htons(24);
		break;
	case 3:	/* a later fragment reaching past 65,535 bytes */
		ip->frag_off = htons(0x2000 | 8180);
		break;
	}
	ip->check = 0;
	ip->check = (uint16_t)~csum_fold(csum_partial(ip, 20, 0));
	return n;
}

static int
seq_run(struct dpbed *b, const struct seq *q)
{
	static uint8_t bufs[SEQ_MAX][SEQ_ROOM], dgram[8192], work[SEQ_ROOM];
	uint8_t *outs[SEQ_MAX];
	uint32_t lens[SEQ_MAX], nf, i, k, count, released = 0;
	struct dp_result r;
	int bad = 0;

	if (bed_reset(b))
		return 1;
	frag_destroy(b->x.frag);
	b->x.frag = frag_create(&(struct frag_cfg){ .contexts = 16, .max_frags = 8, .held = 8,
						    .timeout = 2 }, BED_SLOTS + 2);
	for (i = 0; i < SEQ_MAX; i++)
		outs[i] = bufs[i];
	nf = mtu_fragment(dgram, q->world ?
			  build_frame(dgram, IPPROTO_TCP_, b->client, b->cfg.node_ip,
				      htons(b->exp_sport), htons(BED_HP_A), TCPF_ACK, q->payload) :
			  build_frame(dgram, IPPROTO_UDP_, b->cfg.guest_ip, b->client,
				      htons(6001), htons(53), 0, q->payload),
			  q->mtu, outs, SEQ_MAX, SEQ_ROOM, lens);
	if (!b->x.frag || nf < 2)
		return 2;
	count = q->order[0] == 'r' ? nf : (uint32_t)strlen(q->order);
	for (k = 0; k < count; k++) {
		int idx = q->order[0] == 'r' ? (int)(nf - 1 - k) : q->order[k] - '0';
		bool crafted = q->order[0] != 'r' && q->order[k] == '*';
		uint8_t *f = work;
		uint32_t n;
		char got;

		if (crafted && q->patch == 4) {
			b->x.now += 5;
			frag_expire(b->x.frag, b->x.now, 64);
			continue;
		}
		/* A copy: the pipeline rewrites in place, and a repeat must be the original. */
		n = crafted ? seq_patch(work, bufs[1], lens[1], bufs[0], q->patch) : lens[idx];
		if (!crafted)
			memcpy(work, bufs[idx], n);
		bed_rx(b, q->world ? 0 : 1, f, n, &r);
		got = r.action == DP_TO_WORLD ? 'W' : r.action == DP_HELD ? 'H' :
		      r.action == DP_DROP ? 'D' : r.action == DP_TO_SANDBOX &&
		      r.slot == BED_SLOT_A ? 'S' : '?';
		if (got != q->want[k] || (got == 'D' && (int)r.drop != q->reason)) {
			fprintf(stderr, "not ok - %s: fragment %u: %c (%s), expected %c\n", q->name,
				k, got, got == 'D' ? cvs_drop_names[r.drop] : "-", q->want[k]);
			bad = 1;
		}
		while (b->x.frag_ready)
			if (dp_frag_release(&b->x, &f, &r) &&
			    r.action == (q->world ? DP_TO_SANDBOX : DP_TO_WORLD))
				released++;
	}
	dp_frag_counters(&b->x);
	if (released != q->released) {
		fprintf(stderr, "not ok - %s: %u released, expected %u\n", q->name, released,
			q->released);
		bad = 1;
	}
	if (q->patch == 4 && !b->st.drop[CVS_DROP_FRAG_BASE + FRAG_R_EXPIRED]) {
		fprintf(stderr, "not ok - %s: the held fragments did not expire\n", q->name);
		bad = 1;
	}
	if (bed_ct_check(b))
		bad = 1;
	if (!bad)
		printf("ok - %s\n", q->name);
	return bad;
}

int
frag_sequences(struct dpbed *b)
{
	uint32_t i;
	int fails = 0;

	for (i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		fails += seq_run(b, &seqs[i]) != 0;
	frag_destroy(b->x.frag);
	b->x.frag = NULL;
	return fails;
}
