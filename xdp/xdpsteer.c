/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steering program's loader (xdp/steer.bpf.c on the world interface), in the model of
 * xdp-tools: the loader owns the program, its maps and its attachment. The embedded object is
 * loaded onto the maps the process before pinned (xdppin.h), so the steered ports, the
 * configuration with its heartbeat and the verdict counters simply go on, and the program of
 * the process before, still attached, is kept when it is the same program over the same maps.
 * Otherwise it is replaced in one step (XDP_FLAGS_REPLACE), after its heartbeat, steered ports
 * and counters were copied into the new maps when those are not the same: the interface is
 * never without a steering program, so the kernel never resets the flows of the next process.
 * The world queues' sockets are ours too (control/ports/worldq.h): nothing here knows a PMD.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpctl.h"
#include "xdppin.h"

extern const unsigned char cvs_bpf_steer[];
extern const size_t cvs_bpf_steer_len;

int
xdpctl_steer_check(int ifindex, const char *ifname, char *err, size_t errlen)
{
	char name[BPF_OBJ_NAME_LEN];
	uint32_t id;
	int ret = xdpctl_prog_info(ifindex, &id, name, sizeof(name));

	if (ret) {
		snprintf(err, errlen, "cannot query XDP programs of %s: %s", ifname,
			 strerror(-ret));
		return ret;
	}
	if (id && strcmp(name, CVS_PROG_STEER)) {
		snprintf(err, errlen, "%s already has XDP program '%s' (id %u), which is not ours; "
			 "refusing to replace it (remove it with 'ip link set dev %s xdp off')",
			 ifname, name, id, ifname);
		return -EBUSY;
	}
	return id ? 1 : 0;
}

/* Id of the map 'name' of a loaded program, 0 when it has none. */
static uint32_t
steer_map_id(int prog_fd, const char *name)
{
	int fd = xdpctl_prog_map_fd(prog_fd, name);
	struct bpf_map_info mi;
	uint32_t len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		mi.id = 0;
	close(fd);
	return mi.id;
}

/* The same instructions over the same maps: the old program can stay as it is. */
static bool
steer_same(int a, int b)
{
	static const char *const maps[] = { CVS_MAP_XSKS, CVS_MAP_STEER, CVS_MAP_CFG,
					    CVS_MAP_CFG6, CVS_MAP_STATS, CVS_MAP_FRAG,
					    CVS_MAP_FRAG6 };
	struct bpf_prog_info ia, ib;
	uint32_t la = sizeof(ia), lb = sizeof(ib), i;

	memset(&ia, 0, sizeof(ia));
	memset(&ib, 0, sizeof(ib));
	if (bpf_obj_get_info_by_fd(a, &ia, &la) || bpf_obj_get_info_by_fd(b, &ib, &lb) ||
	    memcmp(ia.tag, ib.tag, sizeof(ia.tag)) || ia.nr_map_ids != ib.nr_map_ids)
		return false;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		uint32_t id = steer_map_id(a, maps[i]);

		if (!id || id != steer_map_id(b, maps[i]))
			return false;
	}
	return true;
}

static bool
steer_copy_port(void *arg, const void *key)
{
	uint8_t one = 1;

	bpf_map_update_elem(*(const int *)arg, key, &one, BPF_ANY);
	return false;
}

/* Every key of a hash map into another (the steered ports of an old program's own maps). */
static void
steer_copy_ports(int from, int to)
{
	struct xdpctl_walk w = { .visit = steer_copy_port, .arg = &to };

	xdpctl_map_walk(from, sizeof(struct cvs_steer_key), &w);
}

/* The verdict counters go on from the old program's, gap_drop among them. */
static void
steer_copy_stats(int from, int to)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*v)) : NULL;
	uint32_t k;

	for (k = 0; v && k < CVS_XDP_MAX; k++)
		if (!bpf_map_lookup_elem(from, &k, v))
			bpf_map_update_elem(to, &k, v, BPF_ANY);
	free(v);
}

/*
 * What the old program's maps hold that ours do not have already (they are other maps: no
 * pins, or pins of another layout): its heartbeat, its steered ports, its counters.
 */
static void
steer_inherit(struct xdp_steer *s, int old_fd, __u64 *heartbeat)
{
	int ocfg = xdpctl_prog_map_fd(old_fd, CVS_MAP_CFG);
	int ost = xdpctl_prog_map_fd(old_fd, CVS_MAP_STEER);
	int ostats = xdpctl_prog_map_fd(old_fd, CVS_MAP_STATS);
	struct cvs_xdp_cfg old = { 0 };
	uint32_t zero = 0;

	/* Only from a map of our value size: an older build's has no heartbeat. */
	if (ocfg >= 0 && xdpctl_map_value_size(ocfg) == sizeof(old) &&
	    !bpf_map_lookup_elem(ocfg, &zero, &old))
		*heartbeat = old.heartbeat_ns;
	if (ost >= 0 && steer_map_id(old_fd, CVS_MAP_STEER) != steer_map_id(s->prog_fd,
									 CVS_MAP_STEER))
		steer_copy_ports(ost, s->steer_fd);
	if (ostats >= 0 && steer_map_id(old_fd, CVS_MAP_STATS) != steer_map_id(s->prog_fd,
										 CVS_MAP_STATS))
		steer_copy_stats(ostats, s->stats_fd);
	if (ocfg >= 0)
		close(ocfg);
	if (ost >= 0)
		close(ost);
	if (ostats >= 0)
		close(ostats);
}

/*
 * This build's configuration, with the heartbeat the process before left (in the pinned map,
 * or carried from its own): the grace counts from its last beat, not from now.
 */
static int
steer_configure(struct xdp_steer *s, const struct cvs_xdp_cfg *cfg, const uint8_t *node_ip6,
		int old_fd)
{
	struct cvs_xdp_cfg c = *cfg, cur = { 0 };
	uint32_t zero = 0;
	int ret;

	if (!bpf_map_lookup_elem(s->cfg_fd, &zero, &cur))
		c.heartbeat_ns = cur.heartbeat_ns;
	if (old_fd >= 0)
		steer_inherit(s, old_fd, &c.heartbeat_ns);
	/* IPv6 first: once cvs_cfg is written, the program may be the one that runs. */
	ret = xdpctl_steer_cfg6(s, node_ip6);
	if (ret)
		return ret;
	return bpf_map_update_elem(s->cfg_fd, &zero, &c, BPF_ANY) ? -errno : 0;
}

static bool
steer_count_one(void *arg, const void *key)
{
	(void)key;
	(*(uint32_t *)arg)++;
	return false;
}

static uint32_t
steer_count(int fd)
{
	uint32_t n = 0;
	struct xdpctl_walk w = { .visit = steer_count_one, .arg = &n };

	xdpctl_map_walk(fd, sizeof(struct cvs_steer_key), &w);
	return n;
}

/* The object loaded onto the pins; our descriptors of its program and maps taken. */
static int
steer_object(struct xdp_steer *s, const char *pin_dir, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "cvs_steer");
	struct bpf_object *obj = bpf_object__open_mem(cvs_bpf_steer, cvs_bpf_steer_len, &oo);
	int ret;

	if (!obj) {
		snprintf(err, errlen, "cannot open the steering program: %s", strerror(errno));
		return -errno;
	}
	if (pin_dir[0])
		s->reused = xdppin_reuse(obj, pin_dir, "", s->note, sizeof(s->note));
	ret = bpf_object__load(obj);
	if (ret) {
		snprintf(err, errlen, "cannot load the steering program: %s%s", strerror(-ret),
			 ret == -EPERM ? " (needs CAP_BPF and CAP_NET_ADMIN)" : "");
		bpf_object__close(obj);
		return ret;
	}
	if (pin_dir[0] && xdppin_pin(obj, pin_dir, "")) {
		size_t l = strlen(s->note);

		snprintf(s->note + l, sizeof(s->note) - l, "%scannot pin the steering maps in %s: %s",
			 l ? "; " : "", pin_dir, strerror(errno));
	}
	/* Our own descriptors: the object goes, the program and the maps stay with them. */
	s->prog_fd = dup(bpf_program__fd(bpf_object__find_program_by_name(obj, CVS_PROG_STEER)));
	s->xsks_fd = dup(bpf_object__find_map_fd_by_name(obj, CVS_MAP_XSKS));
	s->steer_fd = dup(bpf_object__find_map_fd_by_name(obj, CVS_MAP_STEER));
	s->cfg_fd = dup(bpf_object__find_map_fd_by_name(obj, CVS_MAP_CFG));
	s->cfg6_fd = dup(bpf_object__find_map_fd_by_name(obj, CVS_MAP_CFG6));
	s->stats_fd = dup(bpf_object__find_map_fd_by_name(obj, CVS_MAP_STATS));
	bpf_object__close(obj);
	if (s->prog_fd < 0 || s->xsks_fd < 0 || s->steer_fd < 0 || s->cfg_fd < 0 ||
	    s->cfg6_fd < 0 || s->stats_fd < 0) {
		snprintf(err, errlen, "the steering program lacks its maps");
		return -ENOENT;
	}
	return 0;
}

/*
 * Ours on the interface, configured before it sees a frame: the old one kept, or replaced by
 * ours in one step, or ours attached.
 */
static int
steer_attach(struct xdp_steer *s, uint32_t old_id, const struct cvs_xdp_cfg *cfg,
	     const uint8_t *node_ip6, char *err, size_t errlen)
{
	int old_fd = old_id ? bpf_prog_get_fd_by_id(old_id) : -1;
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int ret;

	ret = steer_configure(s, cfg, node_ip6, old_fd);
	if (ret) {
		snprintf(err, errlen, "cannot configure the steering program: %s", strerror(-ret));
		if (old_fd >= 0)
			close(old_fd);
		return ret;
	}
	if (old_fd >= 0 && steer_same(old_fd, s->prog_fd)) {
		close(s->prog_fd);
		s->prog_fd = old_fd;
		s->prog_id = old_id;
		s->kept = true;
		return 0;
	}
	if (old_fd >= 0) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = old_fd);

		ret = bpf_xdp_attach(s->ifindex, s->prog_fd, XDP_FLAGS_REPLACE, &o);
		close(old_fd);
	} else {
		ret = bpf_xdp_attach(s->ifindex, s->prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	}
	if (ret) {
		snprintf(err, errlen, "cannot attach the steering program: %s", strerror(-ret));
		return ret;
	}
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(s->prog_fd, &info, &len))
		s->prog_id = info.id;
	return 0;
}

int
xdpctl_steer_load(struct xdp_steer *s, int ifindex, const char *ifname, const char *pin_dir,
		  const struct cvs_xdp_cfg *cfg, const uint8_t *node_ip6, char *err,
		  size_t errlen)
{
	char name[BPF_OBJ_NAME_LEN];
	uint32_t old_id = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	s->prog_fd = s->xsks_fd = s->steer_fd = s->cfg_fd = s->cfg6_fd = s->stats_fd = -1;
	s->ifindex = ifindex;
	ret = xdpctl_steer_check(ifindex, ifname, err, errlen);
	if (ret < 0)
		return ret;
	if (ret > 0 && !xdpctl_prog_info(ifindex, &old_id, name, sizeof(name)))
		s->took_over = old_id != 0;
	ret = steer_object(s, pin_dir, err, errlen);
	if (!ret)
		ret = steer_attach(s, old_id, cfg, node_ip6, err, errlen);
	if (ret) {
		xdpctl_steer_close(s, false);
		return ret;
	}
	/* What the process before steered: kept until the restore says whose it is. */
	s->carried = s->took_over || s->reused ? steer_count(s->steer_fd) : 0;
	return 0;
}
