/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The store as the registry's reg_store_ops with nothing around it, for the unit tests and
 * storebench (the daemon's own, in control/main.c, also counts the writes).
 */
#ifndef CVS_TEST_STORE_OPS_H
#define CVS_TEST_STORE_OPS_H

#include "store.h"

static void
store_ops_change(void *ctx, const struct reg_change *c)
{
	store_change(ctx, c);
}

static int
store_ops_commit(void *ctx, char *err, size_t errlen)
{
	return store_commit(ctx, err, errlen);
}

static const struct reg_store_ops store_reg_ops = {
	.change = store_ops_change,
	.commit = store_ops_commit,
};

#endif /* CVS_TEST_STORE_OPS_H */
