/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpctl.h"
#include "rtnl.h"
#include "xdppin.h"

int
xdpctl_prog_name(uint32_t id, char *name, size_t namelen)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id), ret;

	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	ret = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	close(fd);
	if (!ret)
		snprintf(name, namelen, "%s", info.name);
	return ret;
}

int
xdpctl_prog_info(int ifindex, uint32_t *id, char *name, size_t namelen)
{
	int ret;

	*id = 0;
	if (name && namelen)
		name[0] = '\0';
	ret = rtnl_xdp_prog_id(ifindex, id);
	if (ret)
		return ret;
	if (!*id || !name)
		return 0;
	return xdpctl_prog_name(*id, name, namelen);
}

uint32_t
xdpctl_map_value_size(int map_fd)
{
	struct bpf_map_info mi;
	uint32_t len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	return bpf_obj_get_info_by_fd(map_fd, &mi, &len) ? 0 : mi.value_size;
}

int
xdpctl_prog_map_fd(int prog_fd, const char *want)
{
	struct bpf_prog_info info;
	uint32_t ids[16], len = sizeof(info), i;

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 16;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
		struct bpf_map_info mi;
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen) && !strcmp(mi.name, want))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int
xdpctl_steer_open(struct xdp_steer *s, int ifindex, char *err, size_t errlen)
{
	char name[BPF_OBJ_NAME_LEN];
	int ret;

	memset(s, 0, sizeof(*s));
	s->prog_fd = s->xsks_fd = s->steer_fd = s->cfg_fd = s->cfg6_fd = s->stats_fd = -1;
	s->ifindex = ifindex;
	ret = xdpctl_prog_info(ifindex, &s->prog_id, name, sizeof(name));
	if (ret || !s->prog_id || strcmp(name, CVS_PROG_STEER)) {
		snprintf(err, errlen, "the world interface does not run our steering program "
			 "(found '%s')", s->prog_id ? name : "none");
		return -ENOENT;
	}
	s->prog_fd = bpf_prog_get_fd_by_id(s->prog_id);
	if (s->prog_fd < 0) {
		snprintf(err, errlen, "cannot open steering program: %s", strerror(errno));
		return -errno;
	}
	s->steer_fd = xdpctl_prog_map_fd(s->prog_fd, CVS_MAP_STEER);
	s->cfg_fd = xdpctl_prog_map_fd(s->prog_fd, CVS_MAP_CFG);
	s->stats_fd = xdpctl_prog_map_fd(s->prog_fd, CVS_MAP_STATS);
	/* An installed object of a build before IPv6 has none: IPv6 then goes to the kernel. */
	s->cfg6_fd = xdpctl_prog_map_fd(s->prog_fd, CVS_MAP_CFG6);
	if (s->steer_fd < 0 || s->cfg_fd < 0 || s->stats_fd < 0) {
		snprintf(err, errlen, "steering program lacks its maps");
		xdpctl_steer_close(s, false);
		return -ENOENT;
	}
	return 0;
}

int
xdpctl_steer_cfg(struct xdp_steer *s, uint32_t node_ip, uint16_t snat_lo, uint16_t snat_hi,
		 uint64_t grace_ns)
{
	struct cvs_xdp_cfg c = { 0 };
	uint32_t zero = 0;

	/* The heartbeat carried from the process before stays until we beat. */
	bpf_map_lookup_elem(s->cfg_fd, &zero, &c);
	c.node_ip = node_ip;
	c.snat_lo = snat_lo;
	c.snat_hi = snat_hi;
	c.flags = CVS_CFG_F_ENABLED;
	c.grace_ns = grace_ns;
	return bpf_map_update_elem(s->cfg_fd, &zero, &c, BPF_ANY) ? -errno : 0;
}

int
xdpctl_steer_cfg6(struct xdp_steer *s, const uint8_t *node_ip6)
{
	struct cvs_xdp_cfg6 c = { .flags = node_ip6 ? CVS_CFG6_F_ENABLED : 0 };
	uint32_t zero = 0;

	if (s->cfg6_fd < 0) {
		errno = ENOENT;
		return node_ip6 ? -ENOENT : 0;
	}
	if (node_ip6)
		memcpy(c.node_ip6, node_ip6, sizeof(c.node_ip6));
	return bpf_map_update_elem(s->cfg6_fd, &zero, &c, BPF_ANY) ? -errno : 0;
}

int
xdpctl_steer_heartbeat(struct xdp_steer *s)
{
	struct cvs_xdp_cfg c;
	struct timespec ts;
	uint32_t zero = 0;

	if (s->cfg_fd < 0 || bpf_map_lookup_elem(s->cfg_fd, &zero, &c))
		return -errno;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	c.heartbeat_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return bpf_map_update_elem(s->cfg_fd, &zero, &c, BPF_ANY) ? -errno : 0;
}

uint32_t
xdpctl_map_walk(int fd, uint32_t key_size, const struct xdpctl_walk *w)
{
	uint8_t prev[XDPCTL_KEY_MAX], next[XDPCTL_KEY_MAX], gone[256][XDPCTL_KEY_MAX];
	uint32_t n, i, total = 0;
	bool first;

	if (key_size > XDPCTL_KEY_MAX)
		return 0;
	/*
	 * Deleting while walking restarts the walk: collect a batch, then drop it, and walk
	 * again from the start while batches come full (visit() sees kept keys again).
	 */
	do {
		n = 0;
		first = true;
		while (n < 256 && !bpf_map_get_next_key(fd, first ? NULL : prev, next)) {
			if (w->visit(w->arg, next))
				memcpy(gone[n++], next, key_size);
			memcpy(prev, next, key_size);
			first = false;
		}
		for (i = 0; i < n; i++) {
			if (w->drop)
				w->drop(w->arg, gone[i]);
			else
				bpf_map_delete_elem(fd, gone[i]);
		}
		total += n;
	} while (n == 256);
	return total;
}

struct steer_prune {
	bool (*keep)(void *arg, uint8_t proto, uint16_t port);
	void *arg;
};

static bool
steer_prune_visit(void *arg, const void *key)
{
	const struct steer_prune *p = arg;
	const struct cvs_steer_key *k = key;

	return !p->keep(p->arg, k->proto, ntohs(k->port));
}

uint32_t
xdpctl_steer_prune(struct xdp_steer *s, bool (*keep)(void *arg, uint8_t proto, uint16_t port),
		   void *arg)
{
	struct steer_prune p = { .keep = keep, .arg = arg };
	struct xdpctl_walk w = { .visit = steer_prune_visit, .arg = &p };

	return xdpctl_map_walk(s->steer_fd, sizeof(struct cvs_steer_key), &w);
}

int
xdpctl_steer_port(struct xdp_steer *s, uint8_t proto, uint16_t port, bool add)
{
	struct cvs_steer_key k = { .port = htons(port), .proto = proto };
	uint8_t one = 1;

	if (s->steer_fd < 0)
		return 0;
	if (add)
		return bpf_map_update_elem(s->steer_fd, &k, &one, BPF_ANY) ? -errno : 0;
	return bpf_map_delete_elem(s->steer_fd, &k) && errno != ENOENT ? -errno : 0;
}

void
xdpctl_steer_close(struct xdp_steer *s, bool detach)
{
	if (detach && s->prog_fd >= 0) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = s->prog_fd);
		uint32_t id = 0;

		/* Only our own program: XDP_FLAGS_REPLACE fails if someone else's is there. */
		if (!bpf_xdp_query_id(s->ifindex, 0, &id) && id == s->prog_id)
			bpf_xdp_detach(s->ifindex, XDP_FLAGS_REPLACE, &o);
	}
	if (s->xsks_fd >= 0)
		close(s->xsks_fd);
	if (s->steer_fd >= 0)
		close(s->steer_fd);
	if (s->cfg_fd >= 0)
		close(s->cfg_fd);
	if (s->cfg6_fd >= 0)
		close(s->cfg6_fd);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	if (s->prog_fd >= 0)
		close(s->prog_fd);
	s->prog_fd = s->xsks_fd = s->steer_fd = s->cfg_fd = s->cfg6_fd = s->stats_fd = -1;
}

int
xdpctl_read_stats(int stats_fd, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	uint64_t *v;
	uint32_t k;

	memset(out, 0, sizeof(uint64_t) * CVS_XDP_MAX);
	if (stats_fd < 0 || ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(uint64_t));
	if (!v)
		return -ENOMEM;
	for (k = 0; k < CVS_XDP_MAX; k++) {
		if (bpf_map_lookup_elem(stats_fd, &k, v))
			continue;
		for (c = 0; c < ncpu; c++)
			out[k] += v[c];
	}
	free(v);
	return 0;
}
