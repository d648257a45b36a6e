/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry's lookups by id and by port (interface or vhost-user socket): hash chains
 * through the sandboxes themselves, so a registration, a deletion or a GET costs the same
 * with 10 or 8,192 sandboxes instead of a walk over every slot. Registry lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "registry_int.h"

/* FNV-1a; 'kind' keeps an interface and a socket path of the same text apart. */
static uint32_t
reg_hash(char kind, const char *s)
{
	uint32_t h = 2166136261u ^ (uint8_t)kind;

	h *= 16777619u;
	while (*s) {
		h ^= (uint8_t)*s++;
		h *= 16777619u;
	}
	return h;
}

static uint32_t
reg_port_hash(const struct sandbox *sb)
{
	return reg_is_vhost(sb) ? reg_hash('v', sb->vhost) : reg_hash('i', sb->iface);
}

int
reg_index_init(struct registry *r)
{
	uint32_t n = 64;

	while (n < r->max_sandboxes && n < (1u << 30))
		n <<= 1;
	r->by_id = calloc(n, sizeof(*r->by_id));
	r->by_port = calloc(n, sizeof(*r->by_port));
	if (!r->by_id || !r->by_port) {
		reg_index_fini(r);
		return -ENOMEM;
	}
	r->idx_mask = n - 1;
	return 0;
}

void
reg_index_fini(struct registry *r)
{
	free(r->by_id);
	free(r->by_port);
	r->by_id = r->by_port = NULL;
}

void
reg_index_add(struct registry *r, struct sandbox *sb)
{
	struct sandbox **b = &r->by_id[reg_hash('d', sb->id) & r->idx_mask];

	sb->next_id = *b;
	*b = sb;
	b = &r->by_port[reg_port_hash(sb) & r->idx_mask];
	sb->next_port = *b;
	*b = sb;
}

void
reg_index_del(struct registry *r, struct sandbox *sb)
{
	struct sandbox **p = &r->by_id[reg_hash('d', sb->id) & r->idx_mask];

	while (*p && *p != sb)
		p = &(*p)->next_id;
	if (*p)
		*p = sb->next_id;
	p = &r->by_port[reg_port_hash(sb) & r->idx_mask];
	while (*p && *p != sb)
		p = &(*p)->next_port;
	if (*p)
		*p = sb->next_port;
}

struct sandbox *
reg_lookup(struct registry *r, const char *id, const char *iface)
{
	struct sandbox *sb;

	if (id) {
		for (sb = r->by_id[reg_hash('d', id) & r->idx_mask]; sb; sb = sb->next_id)
			if (!strcmp(sb->id, id))
				return sb;
		return NULL;
	}
	for (sb = r->by_port[reg_hash('i', iface) & r->idx_mask]; sb; sb = sb->next_port)
		if (!reg_is_vhost(sb) && !strcmp(sb->iface, iface))
			return sb;
	return NULL;
}

struct sandbox *
reg_find_vhost(struct registry *r, const char *path)
{
	struct sandbox *sb;

	for (sb = r->by_port[reg_hash('v', path) & r->idx_mask]; sb; sb = sb->next_port)
		if (reg_is_vhost(sb) && !strcmp(sb->vhost, path))
			return sb;
	return NULL;
}
