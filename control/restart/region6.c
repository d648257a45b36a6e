/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv6 tables of the session region (region.h): their record beside the header, their
 * adoption, which never costs the IPv4 tables, and their carrying into a region of another
 * shape. Control thread only; plain libc, as region.c.
 */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "cvs_common.h"
#include "ct6_region.h"
#include "owner.h"
#include "region_int.h"

/*
 * What the IPv6 tables were made for, in the header's page: apart from the header and its
 * checksum, so a damaged record costs the IPv6 sessions alone.
 */
#define REGION6_MAGIC	0x36525643u	/* "CVR6" */
struct region6_rec {
	uint32_t magic;
	uint32_t capacity;
	uint8_t node_ip6[16];
	uint32_t pad;
	uint32_t sum;		/* FNV-1a of everything above */
};

_Static_assert(REGION6_OFF + sizeof(struct region6_rec) <= REGION_RELEASE_OFF, "its place");

static uint32_t
region6_sum(const struct region6_rec *r)
{
	const uint8_t *b = (const uint8_t *)r;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < offsetof(struct region6_rec, sum); i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

void
region6_write(void *base, const struct region_want *w)
{
	struct region6_rec *r = (void *)((uint8_t *)base + REGION6_OFF);

	memset(r, 0, sizeof(*r));
	if (!w->capacity6)
		return;
	r->magic = REGION6_MAGIC;
	r->capacity = w->capacity6;
	memcpy(r->node_ip6, w->node_ip6, sizeof(r->node_ip6));
	r->sum = region6_sum(r);
}

/*
 * The IPv6 tables of a region whose header passed (shape *own). A damaged record or table,
 * or one made for another --node-ip6, gives that table empty, laid out anew in place:
 * counted in refused6, never at the cost of the IPv4 tables.
 */
void
region6_adopt(struct region *rg, const struct region_want *w, const struct region_want *own)
{
	const struct region6_rec *r = (const void *)((const uint8_t *)rg->base + REGION6_OFF);
	uint64_t off[REGION_MAX_WORKERS], off6[REGION_MAX_WORKERS], soff;
	char why[160] = "";
	uint32_t i;

	if (!own->capacity6)
		return;
	region_layout(own, off, off6, &soff, 1);
	if (r->magic != REGION6_MAGIC || r->sum != region6_sum(r) || r->capacity != own->capacity6)
		snprintf(why, sizeof(why), "damaged IPv6 record");
	/* A start without IPv6 drops them anyway, counted by the carry: not a refusal. */
	else if (w->capacity6 && memcmp(r->node_ip6, w->node_ip6, sizeof(r->node_ip6)))
		snprintf(why, sizeof(why), "made for another --node-ip6: its sessions are "
			 "translated to it");
	for (i = 0; i < own->nworkers; i++) {
		void *mem = (uint8_t *)rg->base + off6[i];
		struct ct_adopt_stats as;
		char twhy[160] = "";

		rg->ct6[i] = why[0] ? NULL : ct6_region_adopt(mem, own->capacity6, own->nzones,
							      w->timeouts, &as, twhy,
							      sizeof(twhy));
		if (!rg->ct6[i]) {
			if (!rg->info.refused6++)
				snprintf(rg->info.why6, sizeof(rg->info.why6), "worker %u's IPv6 "
					 "table: %s", i, why[0] ? why : twhy);
			memset(mem, 0, ct6_region_bytes(own->capacity6, own->nzones));
			rg->ct6[i] = ct6_region_init(mem, own->capacity6, own->nzones, w->timeouts);
			continue;
		}
		rg->info.adopted += as.sessions;
		rg->info.adopted6 += as.sessions;
		rg->info.discarded_bad += as.dropped;
		if (as.rebuilt && !rg->info.rebuilt++)
			snprintf(rg->info.rebuild_why, sizeof(rg->info.rebuild_why),
				 "worker %u's IPv6 table: %s", i, twhy);
	}
	if (why[0])
		region6_write(rg->base, own);
}

/* region_dest_of() for an IPv6 session: its sandbox's worker, or none by the SNAT share. */
static int
region6_dest_of(const struct ct6_session *s, void *arg)
{
	const struct region_dest *o = arg;
	uint32_t z = s->t[0].zone, own, snat;
	bool in;
	int d;

	if (o->same >= 0)
		return o->same;
	if (z == 0 || z == CVS_ZONE_HOST)
		z = s->t[1].zone;
	if (z == 0 || z == CVS_ZONE_HOST || z > o->w->nzones)
		return -1;
	own = dp_slot_owner(z - 1u, o->w->nworkers);
	for (d = 0; d < 2; d++) {
		const struct ct6_tuple *t = &s->t[d];

		if (memcmp(t->daddr, o->w->node_ip6, sizeof(t->daddr)))
			continue;
		snat = dp_snat_owner(o->w->snat_lo, o->w->snat_hi, ntohs(t->dport),
				     o->w->nworkers, &in);
		if (in && snat != own)
			return -1;
	}
	return (int)own;
}

/* One old worker's IPv6 table carried into the new region's (none: dropped). Its size. */
uint32_t
region6_carry(struct region *rg, const struct region_want *w, const struct ct6_table *from,
	      struct region_dest *o)
{
	if (!from)
		return 0;
	if (w->capacity6)
		ct6_region_carry(rg->ct6, w->nworkers, from, region6_dest_of, o);
	return from->used;
}
