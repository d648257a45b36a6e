/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A registration's exposed ports against the host-port allocator (hostports.c): the ports a
 * PUT asks for, each with the host port it had, the one asked for by number (a CNI runtime's
 * portMappings) or one handed out. Under the registry lock.
 */
#include <errno.h>
#include <time.h>

#include "registry_int.h"

/* Whether ports[0..n) has this mapping (container port and host port). */
static bool
reg_has_port(const struct exposed_port *ports, uint32_t n, const struct exposed_port *p)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (ports[i].cport == p->cport && ports[i].hport == p->hport)
			return true;
	return false;
}

/* A host port asked for by number: free in --host-port-range, or kept for this very id. */
static int
reg_claim_hport(struct registry *r, const struct sandbox *sb, uint16_t port, char *err,
		size_t errlen)
{
	char who[CVS_ID_MAX + 64];
	int ret = hostports_claim(&r->hostports, sb->id, port, who, sizeof(who));

	if (ret == -ERANGE)
		return reg_fail(err, errlen, REG_E_INVALID, "host port %u is outside "
				"--host-port-range %u-%u", port, hostports_lo(&r->hostports),
				hostports_hi(&r->hostports));
	if (ret)
		return reg_fail(err, errlen, REG_E_CONFLICT, "host port %u is taken (%s)", port,
				who);
	return REG_OK;
}

/*
 * Bring sb's exposed ports to the requested set: keep the host ports of ports that stay (and
 * are not asked for another), take the ones asked for by number, allocate the others, free
 * the rest. All or nothing.
 */
int
reg_set_ports(struct registry *r, struct sandbox *sb, const struct reg_req *q, char *err,
	      size_t errlen)
{
	struct exposed_port next[CVS_MAX_EXPOSED];
	bool fresh[CVS_MAX_EXPOSED] = { false };
	uint64_t now = (uint64_t)time(NULL);
	uint32_t i, j, n = 0;

	for (i = 0; i < q->nports; i++) {
		next[n].cport = q->cports[i];
		next[n].hport = 0;
		for (j = 0; j < sb->nports; j++)
			if (sb->ports[j].cport == q->cports[i] &&
			    (!q->hports[i] || q->hports[i] == sb->ports[j].hport))
				next[n].hport = sb->ports[j].hport;
		n++;
	}
	for (i = 0; i < n; i++) {
		int st;

		if (next[i].hport)
			continue;
		if (q->hports[i]) {
			st = reg_claim_hport(r, sb, q->hports[i], err, errlen);
			if (st) {
				for (j = 0; j < i; j++)
					if (fresh[j])
						hostports_unget(&r->hostports, next[j].hport);
				return st;
			}
			next[i].hport = q->hports[i];
			fresh[i] = true;
			continue;
		}
		/* It asks the kernel about its candidate: a service may have just started. */
		if (hostports_get(&r->hostports, sb->id, next[i].cport, now, &next[i].hport)) {
			for (j = 0; j < i; j++)
				if (fresh[j])
					hostports_unget(&r->hostports, next[j].hport);
			return reg_fail(err, errlen, REG_E_EXHAUSTED,
					"host ports exhausted: %u of %u in use or kept back "
					"(reserved, a kernel listener)",
					hostports_size(&r->hostports) -
					hostports_free(&r->hostports),
					hostports_size(&r->hostports));
		}
		fresh[i] = true;
	}
	/* Commit: remove dropped ports (held for this id), add new ones. */
	for (j = 0; j < sb->nports; j++)
		if (!reg_has_port(next, n, &sb->ports[j])) {
			if (sb->dp)
				r->ops->hostport(r->ctx, sb, &sb->ports[j], false);
			hostports_release(&r->hostports, sb->id, sb->ports[j].cport,
					  sb->ports[j].hport, now);
		}
	for (i = 0; i < n; i++) {
		bool had = reg_has_port(sb->ports, sb->nports, &next[i]);

		if (!had && sb->dp)
			r->ops->hostport(r->ctx, sb, &next[i], true);
	}
	memcpy(sb->ports, next, sizeof(next[0]) * n);
	sb->nports = n;
	return REG_OK;
}

bool
reg_same_ports(const struct sandbox *sb, const struct reg_req *q)
{
	uint32_t i, j;

	if (sb->nports != q->nports)
		return false;
	for (i = 0; i < q->nports; i++) {
		for (j = 0; j < sb->nports; j++)
			if (sb->ports[j].cport == q->cports[i] &&
			    (!q->hports[i] || q->hports[i] == sb->ports[j].hport))
				break;
		if (j == sb->nports)
			return false;
	}
	return true;
}
