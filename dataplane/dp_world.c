/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline of a frame from the world (per packet): the three-stage burst, a reply of a
 * tracked flow, a new connection to a host port (the exposed-port DNAT), an ICMP error.
 */
#include "dp_core.h"

/* Burst stage 1 for a world frame: DP_GO_NONE when it is decided already (r says how). */
static enum dp_go
dp_world_prep(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_pre *pre,
	      struct dp_result *r)
{
	int kind = dp_parse(x, &pre->p, frame, len);

	if (kind == PKT_FRAG) {
		dp_frag_later(x, 0, &pre->p, r);
		return DP_GO_NONE;
	}
	if (kind != PKT_IPV4) {
		if (kind == PKT_IPV6)
			return dp6_world_prep(x, pre, r) ? DP_GO_V6 : DP_GO_NONE;
		dp_drop(x, r, pre->p.kind == PKT_ARP ? CVS_DROP_ARP : (enum cvs_drop)pre->p.drop);
		return DP_GO_NONE;
	}
	if (pre->p.daddr != x->cfg->node_ip) {
		dp_drop(x, r, CVS_DROP_NOT_NODE_IP);
		return DP_GO_NONE;
	}
	/* Our own addresses cannot come from outside: such a session would talk to itself. */
	if (pre->p.saddr == x->cfg->node_ip || pre->p.saddr == x->cfg->guest_ip ||
	    pre->p.saddr == x->cfg->gw_ip) {
		dp_drop(x, r, CVS_DROP_BAD_SOURCE);
		return DP_GO_NONE;
	}
	dp_pre_hash(x, pre, 0);
	/* A SYN to an exposed port most likely opens a session. */
	if (dp_pure_syn(&pre->p)) {
		uint32_t hp = atomic_load_explicit(&x->sh->hostport[ntohs(pre->p.dport)],
						   memory_order_acquire);

		if (hp) {
			ct_tuple_set(&pre->rt, dp_guest_ip(x->sh, (hp >> 16) - 1u), pre->p.saddr,
				     htons((uint16_t)(hp & 0xffff)), pre->p.sport,
				     (uint16_t)(hp >> 16), pre->p.proto);
			dp_pre_reply(x, pre);
		}
	}
	return DP_GO_V4;
}

static void
dp_world_pkt(struct dp_ctx *x, struct dp_pre *pre, struct dp_result *r)
{
	struct pkt *p = &pre->p;
	struct ct_session *s;
	int dir;

	if (icmperr_is_error(p)) {
		dp_icmp_error(x, 0, p, r);
		return;
	}
	s = dp_lookup(x, pre, &dir);
	if (s) {
		dp_forward(x, s, dir, p, r);
		return;
	}
	/* Only a connection opening creates a session: SYN without ACK, FIN or RST. */
	if (!dp_pure_syn(p)) {
		dp_drop(x, r, p->proto == IPPROTO_TCP_ &&
			!atomic_load_explicit(&x->sh->hostport[ntohs(p->dport)],
					      memory_order_acquire) ?
			CVS_DROP_NO_HOSTPORT : CVS_DROP_NO_SESSION);
		return;
	}
	if (!pre->rt_ok) {
		dp_drop(x, r, CVS_DROP_NO_HOSTPORT);
		return;
	}
	if (!dp_inbound_ok(x, pre->rt.zone, r))
		return;
	s = dp_open_hashed(x, &pre->t, pre->h, &pre->rt, pre->rh, p, r);
	if (!s)
		return;
	memcpy(s->peer_mac, pkt_eth(p)->src, 6);
	dp_open_forward(x, s, p, r);
}

/* Stage 3; a first fragment's translation becomes its datagram's (dp_frag.c). */
static inline void
dp_world_go(struct dp_ctx *x, struct dp_pre *pre, struct dp_result *r)
{
	struct frag_key k;

	if (__builtin_expect(!pre->p.frag, 1)) {
		dp_world_pkt(x, pre, r);
		return;
	}
	if (!dp_frag_begin(x, 0, &pre->p, &k, r))
		return;
	dp_world_pkt(x, pre, r);
	dp_frag_first(x, &k, &pre->p, r);
}

void
dp_world_rx_burst(struct dp_ctx *x, uint8_t *const *frames, const uint32_t *lens, uint32_t n,
		  struct dp_result *r)
{
	struct dp_pre pre[DP_BURST_MAX];
	uint8_t go[DP_BURST_MAX];
	uint32_t i;

	for (i = 0; i < n; i++)
		go[i] = (uint8_t)dp_world_prep(x, frames[i], lens[i], &pre[i], &r[i]);
	for (i = 0; i < n; i++)
		if (go[i] == DP_GO_V4)
			pre[i].hint = ct_prefetch_session(x->ct, pre[i].h);
		else if (go[i] == DP_GO_V6)
			pre[i].hint = ct6_prefetch_session(x->ct6, pre[i].h);
	for (i = 0; i < n; i++)
		if (go[i] == DP_GO_V4)
			dp_world_go(x, &pre[i], &r[i]);
		else if (go[i] == DP_GO_V6)
			dp6_world_go(x, &pre[i], &r[i]);
}

void
dp_world_rx(struct dp_ctx *x, uint8_t *frame, uint32_t len, struct dp_result *r)
{
	dp_world_rx_burst(x, &frame, &len, 1, r);
}
