/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-sandbox limits in the registry: the "limits" object of a registration, the node
 * defaults under it, and the values in force that reg_ops publishes to the data path.
 */
#include <stdio.h>
#include <string.h>

#include "registry.h"

const char *const reg_limit_names[REG_LIM_MAX] = {
#define REG_LIM_NAME(n, s) [REG_LIM_##n] = s,
	REG_LIMITS(REG_LIM_NAME)
#undef REG_LIM_NAME
};

static int
reg_limit_index(const char *key)
{
	int k;

	for (k = 0; k < REG_LIM_MAX; k++)
		if (!strcmp(key, reg_limit_names[k]))
			return k;
	return -1;
}

int
reg_limits_parse(const json_t *v, struct reg_limits *l, char *why, size_t whylen)
{
	const char *key;
	json_t *e;

	memset(l, 0, sizeof(*l));
	if (!json_is_object(v)) {
		snprintf(why, whylen, "\"limits\" must be an object");
		return -1;
	}
	json_object_foreach((json_t *)v, key, e) {
		int k = reg_limit_index(key);

		if (k < 0) {
			snprintf(why, whylen, "unknown limit \"%s\"", key);
			return -1;
		}
		if (!json_is_integer(e) || json_integer_value(e) < 0 ||
		    json_integer_value(e) > REG_LIMIT_CAP) {
			snprintf(why, whylen, "limit \"%s\" must be an integer 0..%u (0: none)",
				 key, REG_LIMIT_CAP);
			return -1;
		}
		l->v[k] = (uint32_t)json_integer_value(e);
		l->set |= 1u << k;
	}
	return 0;
}

json_t *
reg_limits_render(const struct reg_limits *l, bool all)
{
	json_t *j = json_object();
	int k;

	for (k = 0; k < REG_LIM_MAX; k++)
		if (all || (l->set & (1u << k)))
			json_object_set_new(j, reg_limit_names[k], json_integer(l->v[k]));
	return j;
}

void
reg_limits_apply(const struct registry *r, struct sandbox *sb)
{
	int k;

	for (k = 0; k < REG_LIM_MAX; k++)
		sb->lim_eff.v[k] = sb->limits.set & (1u << k) ? sb->limits.v[k] :
				   r->default_lim.v[k];
	sb->lim_eff.set = sb->limits.set;
}

void
reg_set_default_limits(struct registry *r, const struct reg_limits *l)
{
	fifo_lock(&r->lock);
	r->default_lim = *l;
	fifo_unlock(&r->lock);
}
