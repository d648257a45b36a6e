/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-zone and per-endpoint counts of a table against a recount from its sessions. */
#ifndef CVS_CT_COUNTS_H
#define CVS_CT_COUNTS_H

#include <stdlib.h>
#include <string.h>

#include "ct.h"

/*
 * How many counters differ from what ct_recount_zones() (the rule an adopted table gets)
 * gives; the table is left recounted. UINT32_MAX when no memory for the copies.
 */
static inline uint32_t
ct_counts_diff(struct ct_table *ct)
{
	size_t nz = 2 * ((size_t)ct->nzones + 1);
	uint32_t *z = malloc(nz * sizeof(*z)), *e = malloc(CT_EP_BUCKETS * sizeof(*e));
	uint32_t bad = 0;
	size_t i;

	if (!z || !e) {
		free(z);
		free(e);
		return UINT32_MAX;
	}
	memcpy(z, ct->zone_cnt, nz * sizeof(*z));
	memcpy(e, ct->ep_cnt, CT_EP_BUCKETS * sizeof(*e));
	ct_recount_zones(ct);
	for (i = 0; i < nz; i++)
		bad += z[i] != ct->zone_cnt[i];
	for (i = 0; i < CT_EP_BUCKETS; i++)
		bad += e[i] != ct->ep_cnt[i];
	free(z);
	free(e);
	return bad;
}

#endif /* CVS_CT_COUNTS_H */
