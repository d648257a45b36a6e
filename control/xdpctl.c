/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <time.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpctl.h"
#include "xdppin.h"

extern const unsigned char cvs_bpf_steer[];
extern const size_t cvs_bpf_steer_len;
extern const unsigned char cvs_bpf_sbx[];
extern const size_t cvs_bpf_sbx_len;

int
xdpctl_prog_info(int ifindex, uint32_t *id, char *name, size_t namelen)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd, ret;

	*id = 0;
	if (name && namelen)
		name[0] = '\0';
	ret = bpf_xdp_query_id(ifindex, 0, id);
	if (ret)
		return ret;
	if (!*id || !name)
		return 0;
	fd = bpf_prog_get_fd_by_id(*id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	ret = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (ret)
		return -errno;
	snprintf(name, namelen, "%s", info.name);
	return 0;
}

int
xdpctl_clear_stale(int ifindex, const char *ifname, const char *ours, char *err,
		   size_t errlen)
{
	char name[BPF_OBJ_NAME_LEN];
	uint32_t id;
	int ret;

	ret = xdpctl_prog_info(ifindex, &id, name, sizeof(name));
	if (ret) {
		snprintf(err, errlen, "cannot query XDP programs of %s: %s", ifname,
			 strerror(-ret));
		return ret;
	}
	if (!id)
		return 0;
	if (strcmp(name, ours)) {
		snprintf(err, errlen, "%s already has XDP program '%s' (id %u), which is not ours; "
			 "refusing to replace it (remove it with 'ip link set dev %s xdp off')",
			 ifname, name, id, ifname);
		return -EBUSY;
	}
	ret = bpf_xdp_detach(ifindex, 0, NULL);
	if (ret) {
		snprintf(err, errlen, "cannot remove stale program '%s' from %s: %s", name, ifname,
			 strerror(-ret));
		return ret;
	}
	return 1;
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
	s->prog_fd = s->steer_fd = s->cfg_fd = s->stats_fd = -1;
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

	/* The heartbeat a hand-over carried from the process before stays until we beat. */
	bpf_map_lookup_elem(s->cfg_fd, &zero, &c);
	c.node_ip = node_ip;
	c.snat_lo = snat_lo;
	c.snat_hi = snat_hi;
	c.flags = CVS_CFG_F_ENABLED;
	c.grace_ns = grace_ns;
	return bpf_map_update_elem(s->cfg_fd, &zero, &c, BPF_ANY) ? -errno : 0;
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
xdpctl_steer_prune(struct xdp_steer *s, bool (*keep)(void *arg, uint8_t proto, uint16_t port),
		   void *arg)
{
	struct cvs_steer_key k, next, gone[256];
	uint32_t n = 0, i, total = 0;
	void *prev = NULL;

	/* Deleting while walking restarts the walk: collect a batch, then delete it. */
	do {
		n = 0;
		prev = NULL;
		while (n < 256 && !bpf_map_get_next_key(s->steer_fd, prev, &next)) {
			if (!keep(arg, next.proto, ntohs(next.port)))
				gone[n++] = next;
			k = next;
			prev = &k;
		}
		for (i = 0; i < n; i++)
			bpf_map_delete_elem(s->steer_fd, &gone[i]);
		total += n;
	} while (n == 256);
	return total;
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

		/*
		 * The PMD may have removed it already. Detach only our own program:
		 * XDP_FLAGS_REPLACE fails if someone else's is there.
		 */
		if (!bpf_xdp_query_id(s->ifindex, 0, &id) && id == s->prog_id)
			bpf_xdp_detach(s->ifindex, XDP_FLAGS_REPLACE, &o);
	}
	if (s->steer_fd >= 0)
		close(s->steer_fd);
	if (s->cfg_fd >= 0)
		close(s->cfg_fd);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	if (s->prog_fd >= 0)
		close(s->prog_fd);
	s->prog_fd = s->steer_fd = s->cfg_fd = s->stats_fd = -1;
}

int
xdpctl_sbx_load(struct xdp_sbx *x, uint32_t max_sandboxes, const char *pin_dir, char *err,
		size_t errlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "cvs_sbx");
	struct bpf_program *prog;
	int ret;

	memset(x, 0, sizeof(*x));
	x->obj = bpf_object__open_mem(cvs_bpf_sbx, cvs_bpf_sbx_len, &oo);
	if (!x->obj) {
		snprintf(err, errlen, "cannot open the sandbox XDP program: %s", strerror(errno));
		return -errno;
	}
	bpf_map__set_max_entries(bpf_object__find_map_by_name(x->obj, CVS_MAP_XSKS),
				 max_sandboxes);
	bpf_map__set_max_entries(bpf_object__find_map_by_name(x->obj, CVS_MAP_SBX_SLOT),
				 max_sandboxes);
	if (pin_dir && pin_dir[0])
		x->reused = xdppin_reuse(x->obj, pin_dir, "sbx_", x->note, sizeof(x->note));
	ret = bpf_object__load(x->obj);
	if (ret) {
		snprintf(err, errlen, "cannot load the sandbox XDP program: %s%s", strerror(-ret),
			 ret == -EPERM ? " (needs CAP_BPF and CAP_NET_ADMIN)" : "");
		bpf_object__close(x->obj);
		x->obj = NULL;
		return ret;
	}
	prog = bpf_object__find_program_by_name(x->obj, CVS_PROG_SBX);
	x->prog_fd = bpf_program__fd(prog);
	x->xsks_fd = bpf_object__find_map_fd_by_name(x->obj, CVS_MAP_XSKS);
	x->slot_fd = bpf_object__find_map_fd_by_name(x->obj, CVS_MAP_SBX_SLOT);
	x->stats_fd = bpf_object__find_map_fd_by_name(x->obj, CVS_MAP_STATS);
	if (pin_dir && pin_dir[0] && xdppin_pin(x->obj, pin_dir, "sbx_")) {
		size_t l = strlen(x->note);

		snprintf(x->note + l, sizeof(x->note) - l, "%scannot pin the sandbox maps in %s: %s",
			 l ? "; " : "", pin_dir, strerror(errno));
	}
	return 0;
}

/* Id of the program on ifindex when it is our sandbox program (of any process), else 0. */
static uint32_t
xdpctl_sbx_attached(int ifindex)
{
	char name[BPF_OBJ_NAME_LEN];
	uint32_t id;

	if (xdpctl_prog_info(ifindex, &id, name, sizeof(name)) || !id ||
	    strcmp(name, CVS_PROG_SBX))
		return 0;
	return id;
}

static uint32_t
xdpctl_prog_id(int prog_fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(prog_fd, &info, &len) ? 0 : info.id;
}

/*
 * The sandbox program of the process before, kept attached over the restart (sandbox frames
 * dropped and counted as gap drops, never handed to the kernel), is replaced in one step.
 */
static int
xdpctl_sbx_replace(struct xdp_sbx *x, int ifindex, uint32_t old_id)
{
	int old_fd = bpf_prog_get_fd_by_id(old_id), ret;
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = old_fd);

	if (old_fd < 0)
		return -errno;
	ret = bpf_xdp_attach(ifindex, x->prog_fd, XDP_FLAGS_REPLACE, &o);
	close(old_fd);
	return ret;
}

uint32_t
xdpctl_sbx_prune(struct xdp_sbx *x)
{
	uint32_t k, next, ours = xdpctl_prog_id(x->prog_fd), n = 0, gone[256], i, cnt;
	void *prev;

	do {
		cnt = 0;
		prev = NULL;
		while (cnt < 256 && !bpf_map_get_next_key(x->slot_fd, prev, &next)) {
			uint32_t id = xdpctl_sbx_attached((int)next);

			/* Not attached by us since the start: nobody came back for it. */
			if (id != ours) {
				gone[cnt++] = next;
				if (id) {
					int fd = bpf_prog_get_fd_by_id(id);
					LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = fd);

					if (fd >= 0)
						bpf_xdp_detach((int)next, XDP_FLAGS_REPLACE, &o);
					if (fd >= 0)
						close(fd);
				}
			}
			k = next;
			prev = &k;
		}
		for (i = 0; i < cnt; i++)
			bpf_map_delete_elem(x->slot_fd, &gone[i]);
		n += cnt;
	} while (cnt == 256);
	return n;
}

int
xdpctl_sbx_attach(struct xdp_sbx *x, int ifindex, const char *ifname, uint32_t slot,
		  int xsk_fd, char *err, size_t errlen)
{
	uint32_t ifi = (uint32_t)ifindex, old = xdpctl_sbx_attached(ifindex);
	int ret;

	if (!old) {
		ret = xdpctl_clear_stale(ifindex, ifname, CVS_PROG_SBX, err, errlen);
		if (ret < 0)
			return ret;
	}
	if (bpf_map_update_elem(x->xsks_fd, &slot, &xsk_fd, BPF_ANY) ||
	    bpf_map_update_elem(x->slot_fd, &ifi, &slot, BPF_ANY)) {
		ret = -errno;
		snprintf(err, errlen, "cannot bind the socket of %s: %s", ifname, strerror(-ret));
		xdpctl_sbx_detach(x, ifindex, slot);
		return ret;
	}
	ret = old ? xdpctl_sbx_replace(x, ifindex, old) :
	      bpf_xdp_attach(ifindex, x->prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (ret) {
		snprintf(err, errlen, "cannot attach the sandbox XDP program to %s: %s", ifname,
			 strerror(-ret));
		xdpctl_sbx_detach(x, ifindex, slot);
		return ret == -EEXIST ? -EBUSY : ret;
	}
	return 0;
}

void
xdpctl_sbx_detach(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = x->prog_fd);
	uint32_t ifi = (uint32_t)ifindex;

	bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE, &o);
	bpf_map_delete_elem(x->slot_fd, &ifi);
	bpf_map_delete_elem(x->xsks_fd, &slot);
}

void
xdpctl_sbx_unload(struct xdp_sbx *x)
{
	if (x->obj)
		bpf_object__close(x->obj);
	x->obj = NULL;
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

int
xdpctl_steer_memfd(void)
{
	int fd = memfd_create("cvs_steer.bpf.o", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off < cvs_bpf_steer_len) {
		ssize_t n = write(fd, cvs_bpf_steer + off, cvs_bpf_steer_len - off);

		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		off += (size_t)n;
	}
	return fd;
}
