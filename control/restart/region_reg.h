/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The session region (region.h) against the rest of the node: opened from the options with its
 * verdict in the log, its zone records kept equal to the registry, and the adopted sessions
 * of sandboxes that did not come back flushed through the workers. Control thread; cubevs-fp
 * only (region.c itself stays plain libc for the unit tests and the fuzz target).
 */
#ifndef CVS_REGION_REG_H
#define CVS_REGION_REG_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "publish.h"
#include "region.h"
#include "registry.h"

/*
 * The region of --runtime-dir for 'nw' workers: adopted when it passes every check, else
 * fresh. Returns 0, or -1 (logged) when there is none: the tables are then private.
 */
int region_start(struct region *rg, const struct cvs_config *cfg, uint32_t nw);
/* Which sandbox each zone is now, into the region: all of them, once, after the restore. */
void region_sync_registry(struct region *rg, struct registry *reg);
/*
 * A registration changed (registry lock held): its zone's record alone, so a change costs the
 * same with 8,192 zones as with one.
 */
void region_note(struct region *rg, const struct sandbox *sb, bool deleted);
/*
 * After the restore: flush the adopted sessions of every zone whose sandbox is missing or
 * another one. Returns how many sessions went (also in rg->info.discarded_gone).
 */
uint32_t region_drop_gone(struct region *rg, struct registry *reg, struct publish *pub);

/*
 * For a rollback (no process running): the region of the options carried to 'nw' workers and
 * 'nzones' sandboxes, the shape the release rolled back to will run with, its release record
 * cleared. What was done in 'msg'; 0, or -errno when there was no region to be had.
 */
int region_reshape_for(const struct cvs_config *cfg, uint32_t nw, uint32_t nzones, char *msg,
		       size_t len);

#endif /* CVS_REGION_REG_H */
