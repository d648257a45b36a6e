/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A data path for registry and API tests, without EAL or root: the interfaces that exist are
 * the prefix plus one digit (ifindex 100 + digit), attaching the one named 'busy' fails with
 * -EBUSY, and it counts the attached sandboxes and the host ports it was told about. Pass
 * &fake_dp_ops and a struct fake_dp as reg_init()'s ops and ctx.
 */
#ifndef CVS_FAKE_DP_H
#define CVS_FAKE_DP_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"

struct fake_dp {
	const char *prefix;	/* "sb": sb0 .. sb9 exist */
	const char *busy;	/* NULL: every attach succeeds */
	int attached;
	int hostports;
	uint64_t vhost_features;	/* non-zero: every attached vhost-user VMM is connected */
};

static int
fake_dp_ifindex(void *ctx, const char *iface)
{
	const struct fake_dp *f = ctx;
	size_t n = strlen(f->prefix);

	if (strncmp(iface, f->prefix, n) || iface[n] < '0' || iface[n] > '9' || iface[n + 1])
		return 0;
	return 100 + iface[n] - '0';
}

static int
fake_dp_attach(void *ctx, struct sandbox *sb, char *err, size_t errlen)
{
	struct fake_dp *f = ctx;

	if (f->busy && !strcmp(sb->iface, f->busy)) {
		snprintf(err, errlen, "%s is busy", sb->iface);
		return -EBUSY;
	}
	sb->dp = sb;
	f->attached++;
	return 0;
}

static void
fake_dp_detach(void *ctx, struct sandbox *sb)
{
	struct fake_dp *f = ctx;

	if (sb->dp)
		f->attached--;
	sb->dp = NULL;
}

static void
fake_dp_hostport(void *ctx, const struct sandbox *sb, const struct exposed_port *ep, bool add)
{
	struct fake_dp *f = ctx;

	f->hostports += add ? 1 : -1;
}

static int
fake_dp_policy(void *ctx, struct sandbox *sb)
{
	return 0;
}

static bool
fake_dp_vhost_state(void *ctx, const struct sandbox *sb, uint64_t *features, uint16_t *mtu)
{
	const struct fake_dp *f = ctx;

	*features = sb->dp ? f->vhost_features : 0;
	*mtu = *features ? 1500 : 0;
	return *features != 0;
}

static const struct reg_ops fake_dp_ops = {
	.ifindex = fake_dp_ifindex,
	.attach = fake_dp_attach,
	.detach = fake_dp_detach,
	.hostport = fake_dp_hostport,
	.policy = fake_dp_policy,
	.vhost_state = fake_dp_vhost_state,
};

#endif /* CVS_FAKE_DP_H */
