/* SPDX-License-Identifier: BSD-3-Clause */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "handover.h"
#include "xdpctl.h"
#include "xdppin.h"

static struct {
	int ifindex;		/* the world interface; 0 = nothing to do */
	int old_fd;		/* the old steering program, -1 when none */
	bool keep;		/* skip the PMD's detach at exit */
	struct cvs_xdp_cfg cfg;
	uint32_t copied;
	char pin_dir[300];	/* "" = no pins */
} ho = { .old_fd = -1 };

typedef int (*attach_fn)(int, int, __u32, const struct bpf_xdp_attach_opts *);
typedef int (*detach_fn)(int, __u32, const struct bpf_xdp_attach_opts *);
typedef int (*load_fn)(struct bpf_object *);

/* libbpf's own definition of a call we interpose, looked up once. */
static void *
real_sym(void **cache, const char *name, const char *version)
{
	if (!*cache)
		*cache = dlvsym(RTLD_NEXT, name, version);
	return *cache;
}

static void *real_fns[3];
#define real_attach() ((attach_fn)real_sym(&real_fns[0], "bpf_xdp_attach", "LIBBPF_0.7.0"))
#define real_detach() ((detach_fn)real_sym(&real_fns[1], "bpf_xdp_detach", "LIBBPF_0.7.0"))
#define real_load() ((load_fn)real_sym(&real_fns[2], "bpf_object__load", "LIBBPF_0.0.1"))

const char *
handover_pin_dir(void)
{
	return ho.pin_dir;
}

int
handover_prepare(int ifindex, const struct cvs_xdp_cfg *cfg, const char *pin_root,
		 const char *iface)
{
	char name[BPF_OBJ_NAME_LEN], err[512];
	uint32_t id;

	ho.ifindex = ifindex;
	ho.cfg = *cfg;
	if (pin_root[0] && xdppin_dir(pin_root, iface, ho.pin_dir, sizeof(ho.pin_dir), err,
				      sizeof(err))) {
		fprintf(stderr, "cubevs-fp: the XDP maps are not pinned: %s\n", err);
		ho.pin_dir[0] = '\0';
	}
	if (xdpctl_prog_info(ifindex, &id, name, sizeof(name)) || !id ||
	    strcmp(name, CVS_PROG_STEER))
		return 0;
	ho.old_fd = bpf_prog_get_fd_by_id(id);
	return ho.old_fd >= 0;
}

void
handover_keep_attached(int ifindex, bool keep)
{
	ho.ifindex = ifindex;
	ho.keep = keep;
}

uint32_t
handover_copied(void)
{
	return ho.copied;
}

/*
 * The verdict counters go on from where the old program left them, so the frames held back
 * during the gap (gap_drop) are seen in the next process's /metrics and /stats.
 */
static void
handover_copy_stats(int new_prog)
{
	int ofd = xdpctl_prog_map_fd(ho.old_fd, CVS_MAP_STATS);
	int nfd = xdpctl_prog_map_fd(new_prog, CVS_MAP_STATS);
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*v)) : NULL;
	uint32_t k;

	for (k = 0; v && ofd >= 0 && nfd >= 0 && k < CVS_XDP_MAX; k++)
		if (!bpf_map_lookup_elem(ofd, &k, v))
			bpf_map_update_elem(nfd, &k, v, BPF_ANY);
	free(v);
	if (ofd >= 0)
		close(ofd);
	if (nfd >= 0)
		close(nfd);
}

/*
 * The old program's heartbeat and, unless the maps are the same ones, its steered ports into
 * the new program's maps. The configuration is written either way: it is this build's.
 */
static void
handover_copy(int new_prog, bool ports)
{
	int ncfg = xdpctl_prog_map_fd(new_prog, CVS_MAP_CFG);
	int nst = xdpctl_prog_map_fd(new_prog, CVS_MAP_STEER);
	int ocfg = xdpctl_prog_map_fd(ho.old_fd, CVS_MAP_CFG);
	int ost = xdpctl_prog_map_fd(ho.old_fd, CVS_MAP_STEER);
	struct cvs_steer_key k, next;
	struct cvs_xdp_cfg old = { 0 };
	uint32_t zero = 0;
	uint8_t one = 1;
	void *prev = NULL;

	/* Only from a map of our value size: an older build's has no heartbeat. */
	if (ocfg >= 0 && xdpctl_map_value_size(ocfg) == sizeof(old) &&
	    !bpf_map_lookup_elem(ocfg, &zero, &old))
		ho.cfg.heartbeat_ns = old.heartbeat_ns;
	if (ncfg >= 0)
		bpf_map_update_elem(ncfg, &zero, &ho.cfg, BPF_ANY);
	while (ports && ost >= 0 && nst >= 0 && !bpf_map_get_next_key(ost, prev, &next)) {
		if (!bpf_map_update_elem(nst, &next, &one, BPF_ANY))
			ho.copied++;
		k = next;
		prev = &k;
	}
	if (ncfg >= 0)
		close(ncfg);
	if (nst >= 0)
		close(nst);
	if (ocfg >= 0)
		close(ocfg);
	if (ost >= 0)
		close(ost);
}

/* Id of a program's map 'name', 0 when it has none. */
static uint32_t
handover_map_id(int prog_fd, const char *name)
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

/* Interposed for net_af_xdp: see handover.h. */
int
bpf_xdp_attach(int ifindex, int prog_fd, __u32 flags, const struct bpf_xdp_attach_opts *opts)
{
	attach_fn f = real_attach();
	int ret;

	if (!f)
		return -ENOSYS;
	if (ifindex != ho.ifindex || !ho.ifindex || ho.old_fd < 0 ||
	    !(flags & XDP_FLAGS_UPDATE_IF_NOEXIST) || opts)
		return f(ifindex, prog_fd, flags, opts);
	/* On the pinned maps the ports and counters are there already; a replaced one is not. */
	handover_copy(prog_fd, handover_map_id(ho.old_fd, CVS_MAP_STEER) !=
			       handover_map_id(prog_fd, CVS_MAP_STEER));
	if (handover_map_id(ho.old_fd, CVS_MAP_STATS) != handover_map_id(prog_fd, CVS_MAP_STATS))
		handover_copy_stats(prog_fd);
	{
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = ho.old_fd);

		ret = f(ifindex, prog_fd, (flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST) |
			XDP_FLAGS_REPLACE, &o);
	}
	close(ho.old_fd);
	ho.old_fd = -1;
	return ret;
}

/* The steered ports a reused cvs_steer carries, for the pruning after the restore. */
static uint32_t
handover_count_steered(struct bpf_object *obj)
{
	int fd = bpf_object__find_map_fd_by_name(obj, CVS_MAP_STEER);
	struct cvs_steer_key k, next;
	void *prev = NULL;
	uint32_t n = 0;

	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &next)) {
		n++;
		k = next;
		prev = &k;
	}
	return n;
}

/*
 * Interposed for net_af_xdp, which loads our steering object with bpf_object__load(): the
 * object goes onto the maps pinned by the process before, and its own are pinned for the
 * next. Any other object (the sandbox program is ours and pins itself) loads unchanged.
 */
int
bpf_object__load(struct bpf_object *obj)
{
	load_fn f = real_load();
	char note[600];
	uint32_t n = 0;
	int ret;

	if (!f)
		return -ENOSYS;
	if (!ho.pin_dir[0] || !bpf_object__find_program_by_name(obj, CVS_PROG_STEER))
		return f(obj);
	n = xdppin_reuse(obj, ho.pin_dir, "", note, sizeof(note));
	if (note[0])
		fprintf(stderr, "cubevs-fp: %s\n", note);
	ret = f(obj);
	if (ret)
		return ret;
	if (n) {
		ho.copied = handover_count_steered(obj);
		fprintf(stderr, "cubevs-fp: steering maps reused from %s (%u maps)\n", ho.pin_dir,
			n);
	}
	if (xdppin_pin(obj, ho.pin_dir, ""))
		fprintf(stderr, "cubevs-fp: cannot pin the steering maps in %s: %s\n",
			ho.pin_dir, strerror(errno));
	return 0;
}

int
bpf_xdp_detach(int ifindex, __u32 flags, const struct bpf_xdp_attach_opts *opts)
{
	detach_fn f = real_detach();

	if (!f)
		return -ENOSYS;
	if (ho.keep && ifindex == ho.ifindex)
		return 0;
	return f(ifindex, flags, opts);
}
