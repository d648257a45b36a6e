/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct6_region.h"
#include "cvs_commit.h"
#include "log.h"
#include "region_reg.h"
#include "worker.h"

/*
 * The shape and addressing of the options, for 'nw' workers and 'nzones' sandboxes; IPv6
 * blocks with --node-ip6 when 'ip6' (a rollback asks for none: the release before has none).
 */
static struct region_want
region_want_of(const struct cvs_config *cfg, uint32_t nw, uint32_t nzones, const char *release,
	       bool ip6)
{
	struct region_want want = {
		.nworkers = nw,
		.capacity = (cfg->max_sessions + nw - 1) / nw,
		.nzones = nzones,
		.node_ip = cfg->node_ip,
		.snat_lo = cfg->snat_ports.lo,
		.snat_hi = cfg->snat_ports.hi,
		.timeouts = cfg->timeouts,
		.release = release,
	};

	if (ip6 && cfg->have_ip6) {
		want.capacity6 = ct6_capacity_of(want.capacity);
		memcpy(want.node_ip6, cfg->node_ip6, sizeof(want.node_ip6));
	}
	return want;
}

static void
region_name(const struct cvs_config *cfg, char *name, size_t len)
{
	snprintf(name, len, "sessions-%s.region",
		 cfg->world_iface[0] ? cfg->world_iface : "noiface");
}

int
region_start(struct region *rg, const struct cvs_config *cfg, uint32_t nw)
{
	struct region_want want = region_want_of(cfg, nw, cfg->max_sandboxes, CVS_RELEASE,
						  true);
	const struct region_info *ri = &rg->info;
	char err[512], name[64];

	if (!cfg->runtime_dir[0])
		return -1;
	region_name(cfg, name, sizeof(name));
	if (region_open(rg, cfg->runtime_dir, name, &want, err, sizeof(err))) {
		CVS_LOG(ERR, main, "%s: sessions will not survive a restart", err);
		return -1;
	}
	if (ri->rebuilt)
		CVS_LOG(WARNING, main, "session region %s: %u table(s) left in the middle of an "
			"update (%s): rebuilt from their sessions, %u inconsistent sessions dropped",
			ri->path, ri->rebuilt, ri->rebuild_why, ri->discarded_bad);
	if (!ri->refused && ri->refused6)
		CVS_LOG(WARNING, main, "session region %s: %u IPv6 table(s) refused (%s): their "
			"IPv6 sessions are dropped, the IPv4 ones adopted", ri->path, ri->refused6,
			ri->why6);
	if (ri->refused)
		CVS_LOG(WARNING, main, "session region %s refused: %s; moved to %s, starting "
			"with empty session tables", ri->path, ri->why, ri->aside);
	else if (ri->carried_from[0])
		CVS_LOG(NOTICE, main, "session region %s (written by %s): carried %u sessions from "
			"%u worker(s) of %u sessions and %u sandboxes to %u of %u and %u (%u the new "
			"shape could not take), %u of them IPv6, generation %llu, in %u us", ri->path,
			ri->written_by, ri->adopted,
			ri->carried_from[0], ri->carried_from[1], ri->carried_from[2], nw,
			want.capacity, want.nzones, ri->carry_dropped, ri->adopted6,
			(unsigned long long)ri->generation, ri->adopt_us);
	else if (ri->generation > 1)
		CVS_LOG(INFO, main, "session region %s (written by %s): adopted %u sessions of %u "
			"worker(s), %u of them IPv6, generation %llu, checked in %u us", ri->path,
			ri->written_by, ri->adopted, nw, ri->adopted6,
			(unsigned long long)ri->generation, ri->adopt_us);
	else
		CVS_LOG(INFO, main, "session region %s: new, %llu bytes%s", ri->path,
			(unsigned long long)ri->bytes, ri->hugetlb ? " on hugetlbfs" : "");
	return 0;
}

static void
region_slot_of(void *arg, const struct sandbox *sb)
{
	struct region_slot *cur = arg;

	cur[sb->slot].ip = sb->ip;
	cur[sb->slot].id_hash = region_id_hash(sb->id);
}

/* Which sandbox each zone is, as the registry has it now; NULL when out of memory. */
static struct region_slot *
region_slots_now(const struct region *rg, struct registry *reg)
{
	struct region_slot *cur = calloc(rg->nzones ? rg->nzones : 1, sizeof(*cur));

	if (cur)
		reg_foreach(reg, region_slot_of, cur);
	return cur;
}

void
region_sync_registry(struct region *rg, struct registry *reg)
{
	struct region_slot *cur = region_slots_now(rg, reg);

	if (cur)
		region_set_slots(rg, cur);
	free(cur);
}

void
region_note(struct region *rg, const struct sandbox *sb, bool deleted)
{
	struct region_slot cur = { 0, 0 };

	if (!deleted) {
		cur.ip = sb->ip;
		cur.id_hash = region_id_hash(sb->id);
	}
	region_set_slot(rg, sb->slot, &cur);
}

uint32_t
region_drop_gone(struct region *rg, struct registry *reg, struct publish *pub)
{
	struct region_slot *cur;
	uint32_t z, flushed, total = 0;
	bool *gone;

	if (rg->info.generation < 2)
		return 0;
	cur = region_slots_now(rg, reg);
	gone = calloc(rg->nzones ? rg->nzones : 1, sizeof(*gone));
	if (cur && gone && region_slots_gone(rg, cur, gone)) {
		for (z = 0; z < rg->nzones; z++) {
			if (!gone[z] || publish_call(pub, WCMD_FLUSH_ZONE, z + 1, 1000, &flushed))
				continue;
			total += flushed;
		}
		rg->info.discarded_gone = total;
		CVS_LOG(INFO, ctl, "session region: %u adopted sessions dropped, their sandbox "
			"did not come back", total);
	}
	free(cur);
	free(gone);
	return total;
}

int
region_reshape_for(const struct cvs_config *cfg, uint32_t nw, uint32_t nzones, char *msg,
		   size_t len)
{
	struct region_want want = region_want_of(cfg, nw, nzones, NULL, false);
	struct region rg;
	char name[64];
	int ret;

	if (!cfg->runtime_dir[0]) {
		snprintf(msg, len, "no session region (--runtime-dir none)");
		return 0;
	}
	region_name(cfg, name, sizeof(name));
	ret = region_open(&rg, cfg->runtime_dir, name, &want, msg, len);
	if (ret)
		return ret;
	if (rg.info.refused)
		snprintf(msg, len, "session region %s refused (%s): moved to %s, the release rolled "
			 "back to starts with empty tables", rg.info.path, rg.info.why, rg.info.aside);
	else if (rg.info.carried_from[0])
		snprintf(msg, len, "session region %s: %u sessions carried to %u sandboxes (%u "
			 "dropped)", rg.info.path, rg.info.adopted, nzones, rg.info.carry_dropped);
	else
		snprintf(msg, len, "session region %s: %u sessions, already of that shape",
			 rg.info.path, rg.info.adopted);
	region_close(&rg);
	return 0;
}
