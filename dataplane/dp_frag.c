/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 fragments through the pipelines (per packet, fragments only), the shallow virtual
 * reassembly of frag.h in the VPP manner: a first fragment goes through its pipeline as a whole
 * packet would (its ports open or find the session, the policy and the limits apply); what it
 * became (addresses, Ethernet header, exit) is recorded for its datagram, and every later
 * fragment is translated the same way, its addresses only, as it comes or, when it came first,
 * once the first fragment has. Nothing is reassembled; each fragment leaves as it arrived.
 */
#include "dp_core.h"
#include "frag.h"

static inline void
dp_frag_key(struct frag_key *k, const struct pkt *p, uint16_t zone)
{
	memset(k, 0, sizeof(*k));
	k->zone = zone;
	k->proto = p->proto;
	/* IPv6 (dp6.c): the Fragment header is right after the fixed one, its id at bytes 4-7. */
	if (p->kind == PKT_IPV6) {
		memcpy(k->a6, (const uint8_t *)pkt_ip6(p) + 8, 32);
		memcpy(&k->id, p->data + ETH_HLEN_ + sizeof(struct ipv6_hdr) + 4, 4);
		k->v6 = 1;
		return;
	}
	k->saddr = p->saddr;
	k->daddr = p->daddr;
	k->id = pkt_ip(p)->id;
}

/* A fragment the table refused: counted there (frag_stats, copied into the drops). */
static inline void
dp_frag_drop(struct dp_result *r, enum frag_reason why)
{
	r->action = DP_DROP;
	r->drop = (uint8_t)(CVS_DROP_FRAG_BASE + why);
}

/* The IP MTU of the port a result leaves on: its zone's. */
static uint16_t
dp_frag_exit_mtu(const struct dp_ctx *x, const struct dp_result *r)
{
	return dp_zone_mtu(x, r->action == DP_TO_WORLD ? 0 : r->action == DP_TO_HOST ?
			   CVS_ZONE_HOST : (uint16_t)(r->slot + 1u));
}

/*
 * The same for IPv6: no header checksum; nobody on the way fragments IPv6 again (RFC 8200
 * 4.5), so a fragment longer than the exit carries is dropped (its first fragment, as long,
 * was answered with a Packet Too Big).
 */
static bool
dp_frag_apply6(struct dp_ctx *x, uint8_t *frame, uint32_t len, const struct frag_xlat *xl,
	       struct dp_result *r)
{
	if (xl->mtu && len - ETH_HLEN_ > xl->mtu) {
		dp_drop(x, r, CVS_DROP_TOO_BIG);
		return false;
	}
	memcpy(frame + ETH_HLEN_ + 8, xl->a6, 32);
	memcpy(frame, xl->dst_mac, 6);
	memcpy(frame + 6, xl->src_mac, 6);
	r->action = xl->action;
	r->slot = xl->slot;
	r->len = len;
	r->mtu = 0;
	return true;
}

/* A later fragment translated as its first fragment was: addresses, Ethernet header, exit. */
static bool
dp_frag_apply(struct dp_ctx *x, uint8_t *frame, uint32_t len, const struct frag_xlat *xl,
	      struct dp_result *r)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(frame + ETH_HLEN_);

	if (xl->action == DP_TO_SANDBOX && !dp_slot_alive(x, xl->slot)) {
		dp_drop(x, r, CVS_DROP_SANDBOX_GONE);
		return false;
	}
	if (xl->v6)
		return dp_frag_apply6(x, frame, len, xl, r);
	csum_replace4(&ip->check, ip->saddr, xl->saddr);
	ip->saddr = xl->saddr;
	csum_replace4(&ip->check, ip->daddr, xl->daddr);
	ip->daddr = xl->daddr;
	memcpy(frame, xl->dst_mac, 6);
	memcpy(frame + 6, xl->src_mac, 6);
	r->action = xl->action;
	r->slot = xl->slot;
	r->len = len;
	r->mtu = xl->mtu && len - ETH_HLEN_ > xl->mtu ? xl->mtu : 0;
	return true;
}

void
dp_frag_later(struct dp_ctx *x, uint16_t zone, struct pkt *p, struct dp_result *r)
{
	struct frag_key k;
	struct frag_xlat xl;
	enum frag_reason why;

	if (!x->frag) {
		dp_drop(x, r, CVS_DROP_FRAGMENT);
		return;
	}
	dp_frag_key(&k, p, zone);
	x->frag_busy = true;
	switch (frag_other(x->frag, &k, p->data, p->len, x->now, &xl, &why)) {
	case FRAG_FORWARD:
		dp_frag_apply(x, p->data, p->len, &xl, r);
		break;
	case FRAG_HELD:
		r->action = DP_HELD;
		break;
	default:
		dp_frag_drop(r, why);
		break;
	}
	/* A datagram that timed out on the way gave its copies back (frag_set_giveback). */
	x->frag_ready |= frag_ready(x->frag);
}

bool
dp_frag_begin(struct dp_ctx *x, uint16_t zone, const struct pkt *p, struct frag_key *k,
	      struct dp_result *r)
{
	/*
	 * A first fragment's data is a multiple of 8 bytes (RFC 791): one that is not can never
	 * be followed, and must not open a session before the table refuses it.
	 */
	if (!x->frag || ((p->len - p->l4_off) & 7)) {
		dp_drop(x, r, CVS_DROP_FRAGMENT);
		return false;
	}
	dp_frag_key(k, p, zone);
	x->frag_busy = true;
	return true;
}

void
dp_frag_first(struct dp_ctx *x, const struct frag_key *k, const struct pkt *p,
	      struct dp_result *r)
{
	enum frag_verdict v;
	enum frag_reason why;
	struct frag_xlat xl;

	/* Parked until its next hop is known: it comes through again then (worker_unpark). */
	if (r->action == DP_DROP && r->drop == CVS_DROP_NO_NEIGHBOUR)
		return;
	if (r->action != DP_TO_WORLD && r->action != DP_TO_HOST && r->action != DP_TO_SANDBOX) {
		frag_refuse(x->frag, k, x->now);
		return;
	}
	memset(&xl, 0, sizeof(xl));
	if (k->v6) {
		memcpy(xl.a6, (const uint8_t *)pkt_ip6(p) + 8, 32);
		xl.v6 = 1;
	} else {
		xl.saddr = pkt_ip(p)->saddr;
		xl.daddr = pkt_ip(p)->daddr;
	}
	memcpy(xl.dst_mac, p->data, 6);
	memcpy(xl.src_mac, p->data + 6, 6);
	xl.action = r->action;
	xl.slot = r->slot;
	xl.mtu = dp_frag_exit_mtu(x, r);
	if (frag_first(x->frag, k, p->data, p->len, &xl, x->now, &v, &why))
		x->frag_ready = true;
	if (v == FRAG_DROP)
		dp_frag_drop(r, why);
}

void
dp_frag_counters(struct dp_ctx *x)
{
	const struct frag_stats *fs = frag_stats(x->frag);
	uint32_t i;

	for (i = 0; i < FRAG_R_MAX; i++)
		x->st->drop[CVS_DROP_FRAG_BASE + i] = fs->drop[i];
	x->st->c[CVS_WC_FRAG_DATAGRAMS] = fs->contexts;
	x->st->c[CVS_WC_FRAG_HELD] = fs->held;
	x->st->c[CVS_WC_FRAG_RELEASED] = fs->released;
	x->st->c[CVS_WC_FRAG_FORWARDED] = fs->forwarded;
	x->st->c[CVS_WC_FRAG_TO_KERNEL] = fs->given_back;
	x->st->c[CVS_WC_FRAG_HANDED_OVER] = fs->handed_over;
	x->frag_busy = false;
}

uint32_t
dp_frag_release(struct dp_ctx *x, uint8_t **frame, struct dp_result *r)
{
	struct frag_xlat xl;
	uint32_t len;

	while (frag_take(x->frag, frame, &len, &xl))
		if (dp_frag_apply(x, *frame, len, &xl, r))
			return len;
	x->frag_ready = false;
	return 0;
}
