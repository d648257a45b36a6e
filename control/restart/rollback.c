/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "funnel.h"
#include "hostif.h"
#include "region_reg.h"
#include "rollback.h"
#include "state.h"
#include "store.h"
#include "xdpctl.h"
#include "xdppin.h"

/* What a release rolled back to reads: its default shape and the pins it knows. */
struct rollback_target {
	const char *release;
	uint32_t max_sandboxes;		/* its default --max-sandboxes */
	const char *const *pins;
};

/* 0.1.0 (e423b49): one socket per sandbox, no funnels, no fragments map, no links. */
static const char *const pins_0_1_0[] = {
	"cvs_steer", "cvs_cfg", "cvs_stats", "xsks_map",
	"sbx_xsks_map", "sbx_cvs_sbx_slot", "sbx_cvs_stats", NULL,
};

static const struct rollback_target rollback_targets[] = {
	{ "0.1.0", 4096, pins_0_1_0 },
};

static const struct rollback_target *
rollback_target_of(const char *release)
{
	size_t i;

	for (i = 0; i < sizeof(rollback_targets) / sizeof(rollback_targets[0]); i++)
		if (!strcmp(rollback_targets[i].release, release))
			return &rollback_targets[i];
	return NULL;
}

/* Whether a record's policy names an IPv6 CIDR: 0.1.0 refuses such a policy, and its record. */
static bool
rollback_policy_v6(json_t *rec)
{
	static const char *const lists[] = { "allowOut", "denyOut" };
	json_t *pol = json_object_get(rec, "policy"), *v;
	size_t k, i;

	for (k = 0; pol && k < 2; k++)
		json_array_foreach(json_object_get(pol, lists[k]), i, v)
			if (json_is_string(v) && strchr(json_string_value(v), ':'))
				return true;
	return false;
}

/*
 * Registrations 0.1.0 can keep: none with an address of its own, which it does not know, and
 * no policy with IPv6 CIDRs, which it cannot parse.
 */
static int
rollback_state_fits(json_t *sbx, char *err, size_t errlen)
{
	static const char *const newer[] = { "guestIP", "gatewayIP", "gatewayMAC" };
	json_t *rec;
	size_t i, k;

	json_array_foreach(sbx, i, rec) {
		if (rollback_policy_v6(rec)) {
			snprintf(err, errlen, "sandbox %s has IPv6 CIDRs in its policy, which 0.1.0 "
				 "cannot read: give it a policy without them first; nothing was "
				 "changed", json_string_value(json_object_get(rec, "sandboxID")));
			return -EINVAL;
		}
		for (k = 0; k < sizeof(newer) / sizeof(newer[0]); k++) {
			if (!json_object_get(rec, newer[k]))
				continue;
			snprintf(err, errlen, "sandbox %s has a %s of its own, which 0.1.0 cannot "
				 "keep: delete it (and register it again after the rollback) first; "
				 "nothing was changed",
				 json_string_value(json_object_get(rec, "sandboxID")), newer[k]);
			return -EINVAL;
		}
	}
	return 0;
}

/* The journal folded into one snapshot 0.1.0 reads; the journal removed. */
static int
rollback_state(const struct cvs_config *cfg, FILE *out, char *err, size_t errlen)
{
	struct store_loaded li;
	json_t *sbx = NULL, *holds = NULL;
	int ret;

	if (!cfg->state_file[0]) {
		fprintf(out, "state: none kept (--state-file none)\n");
		return 0;
	}
	ret = store_load(cfg->state_file, &sbx, &holds, &li, err, errlen);
	if (!ret)
		ret = rollback_state_fits(sbx, err, errlen);
	if (!ret)
		ret = store_fold(cfg->state_file, sbx, holds, err, errlen);
	if (!ret)
		fprintf(out, "state: %s: %zu sandboxes, %u journal records folded in, written "
			"without journalSeq and writtenBy; journal removed\n", cfg->state_file,
			json_array_size(sbx), li.replayed);
	json_decref(sbx);
	json_decref(holds);
	return ret;
}

/* The links made rtnetlink attachments, the pins and funnels the target has no use for. */
static int
rollback_bpf(const struct cvs_config *cfg, const struct rollback_target *t, FILE *out,
	     char *err, size_t errlen)
{
	struct xdpctl_release r;
	char dir[512], removed[512];
	uint32_t n;
	int ret = 0;

	if (cfg->bpf_pin_dir[0] && cfg->world_iface[0]) {
		snprintf(dir, sizeof(dir), "%s/%s", cfg->bpf_pin_dir, cfg->world_iface);
		ret = xdpctl_sbx_links_release(dir, &r, err, errlen);
		fprintf(out, "links: %u sandbox interfaces now attached through rtnetlink, %u "
			"links of interfaces gone ended, %u failed, %u TC filters of TAPs removed\n",
			r.moved, r.ended, r.failed, r.gso);
		n = xdppin_keep_only(dir, t->pins, removed, sizeof(removed));
		fprintf(out, "pins: %u that %s does not know removed%s%s\n", n, t->release,
			n ? ": " : "", removed);
	}
	/* Funnels are ours by name: the daemon makes and removes cvsfunN (ports/funnel.c). */
	fprintf(out, "funnels: %u removed\n", funnel_remove_from(NULL, 0));
	return ret;
}

int
rollback_run(const struct cvs_config *cfg, FILE *out)
{
	const struct rollback_target *t = rollback_target_of(cfg->rollback_to);
	struct cvs_config c = *cfg;
	char err[512], msg[600];
	uint32_t mask, nzones;
	int lock = -1, ret;

	if (!t) {
		cvs_err("cubevs-fp", "--rollback-to %s: this release knows the way back to %s "
			"only", cfg->rollback_to, rollback_targets[0].release);
		return 1;
	}
	/* The state file's lock is held by a running cubevs-fp: it must be stopped first. */
	if (c.state_file[0]) {
		lock = state_lock(c.state_file, err, sizeof(err));
		if (lock < 0) {
			cvs_err("cubevs-fp", "%s; stop cubevs-fp before --rollback-to", err);
			return 1;
		}
	}
	if (c.world_iface[0])
		c.node_ip = hostif_ipv4(c.world_iface, c.node_ip, &mask) ?: c.node_ip;
	nzones = c.max_sandboxes_given ? c.max_sandboxes : t->max_sandboxes;
	ret = rollback_state(&c, out, err, sizeof(err));
	if (!ret) {
		ret = region_reshape_for(&c, c.workers ? c.workers : 1, nzones, msg, sizeof(msg));
		fprintf(out, "%s\n", msg);
		if (ret)
			snprintf(err, sizeof(err), "%.400s", msg);
	}
	if (!ret)
		ret = rollback_bpf(&c, t, out, err, sizeof(err));
	if (lock >= 0)
		close(lock);
	if (ret) {
		cvs_err("cubevs-fp", "rollback to %s not complete: %s", t->release, err);
		return 1;
	}
	fprintf(out, "ready for cubevs-fp %s: start it with the same flags%s\n", t->release,
		c.max_sandboxes_given ? "" : " (its default --max-sandboxes is the region's)");
	return 0;
}
