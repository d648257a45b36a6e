/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline of a frame from cube-dev (per packet): the host reaching a sandbox address, its
 * replies, ARP for the sandbox addresses; IPv6 is dp6.c's (dp6_host_rx()).
 */
#include "dp_core.h"

/* A parsed IPv4 packet from the host: its session's reply or a new flow to a sandbox. */
static void
dp_host_ip(struct dp_ctx *x, struct pkt *p, struct dp_result *r)
{
	struct ct_session *s;
	struct ct_tuple t, rt;
	uint32_t zone;
	int dir;

	if (icmperr_is_error(p)) {
		dp_icmp_error(x, CVS_ZONE_HOST, p, r);
		return;
	}
	{
		struct dp_pre pre;

		pre.p = *p;
		dp_pre_hash(x, &pre, CVS_ZONE_HOST);
		s = dp_lookup(x, &pre, &dir);
	}
	if (s) {
		dp_forward(x, s, dir, p, r);
		return;
	}
	zone = dp_sbx_zone(x, p->daddr);
	if (!zone) {
		dp_drop(x, r, CVS_DROP_NOT_SANDBOX_IP);
		return;
	}
	if (p->proto == IPPROTO_TCP_ ? !dp_pure_syn(p) :
	    p->proto == IPPROTO_ICMP_ && ((const struct icmp_hdr *)pkt_l4(p))->type != ICMP_ECHO_) {
		dp_drop(x, r, CVS_DROP_NO_SESSION);
		return;
	}
	/* The guest sees the connection coming from its gateway address. */
	dp_tuple_of(&t, p, CVS_ZONE_HOST);
	ct_tuple_set(&rt, dp_guest_ip(x->sh, zone - 1u), dp_gw_ip(x->sh, zone - 1u), p->dport,
		     p->sport, (uint16_t)zone, p->proto);
	if (!dp_limits_host(x, (uint16_t)zone, r))
		return;
	s = dp_open(x, &t, &rt, p, r);
	if (!s)
		return;
	x->st->c[CVS_WC_HOST_FLOWS]++;
	dp_open_forward(x, s, p, r);
}

void
dp_host_rx(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_result *r)
{
	const struct dp_cfg *c = x->cfg;
	struct frag_key k;
	struct pkt p;

	switch (dp_parse(x, &p, frame, len)) {
	case PKT_ARP: {
		const struct arp_hdr *a = (const struct arp_hdr *)(frame + ETH_HLEN_);

		/* The kernel resolves sandbox addresses on cube-dev: they are all behind us. */
		if (reply_arp_is_request(&p) && (a->tpa & c->sbx_mask) == c->sbx_net &&
		    a->tpa != c->host_ip)
			dp_arp_reply(x, &p, c->host_mac, r);
		else
			dp_drop(x, r, CVS_DROP_ARP);
		return;
	}
	case PKT_BAD:
		dp_drop(x, r, (enum cvs_drop)p.drop);
		return;
	case PKT_FRAG:
		dp_frag_later(x, CVS_ZONE_HOST, &p, r);
		return;
	case PKT_IPV6:
		dp6_host_rx(x, &p, r);
		return;
	}
	if (__builtin_expect(!p.frag, 1)) {
		dp_host_ip(x, &p, r);
		return;
	}
	/* A first fragment's translation becomes its datagram's (dp_frag.c). */
	if (!dp_frag_begin(x, CVS_ZONE_HOST, &p, &k, r))
		return;
	dp_host_ip(x, &p, r);
	dp_frag_first(x, &k, &p, r);
}
