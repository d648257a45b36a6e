/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loading the sandbox-side programs (xdp/sbx.bpf.c) once per process and pointing sandbox
 * interfaces at them. What one registration costs here: two map updates, one rtnetlink
 * question about that interface alone, and an attach by fd when the interface does not run our
 * program yet. A restart finds the program of the process before still attached, over the same
 * pinned maps, and keeps it.
 *
 * With a pin directory the attach is a BPF link pinned beside the maps (link_if<ifindex>),
 * not an rtnetlink IFLA_XDP request: the kernel answers every such setlink with a
 * NETDEV_CHANGE, and IPv6 answers that by walking the whole FIB of the namespace
 * (rt6_sync_down_dev), which holds routes of every interface: ~1 ms per attach at 2,000
 * interfaces, 5-10 ms at p99 under load, all under RTNL. A link attach sends no notification
 * (13 us at 2,000; docs/datapath.md). The pin keeps the attachment across a restart or a
 * kill -9 as the rtnetlink attach does, and nobody's "ip link set xdp" replaces it unawares.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rtnl.h"
#include "xdpctl.h"
#include "xdpend.h"
#include "xdpgso.h"
#include "xdppin.h"

extern const unsigned char cvs_bpf_sbx[];
extern const size_t cvs_bpf_sbx_len;

static int
xdpsbx_info(int prog_fd, struct bpf_prog_info *info, uint32_t *ids, uint32_t nids)
{
	uint32_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	info->nr_map_ids = nids;
	info->map_ids = (uint64_t)(uintptr_t)ids;
	return bpf_obj_get_info_by_fd(prog_fd, info, &len) ? -errno : 0;
}

static void
xdpsbx_fds(struct xdp_sbx *x)
{
	struct bpf_object *o = x->obj;

	x->prog_fd = bpf_program__fd(bpf_object__find_program_by_name(o, CVS_PROG_SBX));
	x->fun_in_fd = bpf_program__fd(bpf_object__find_program_by_name(o, CVS_PROG_FUN_IN));
	x->fun_out_fd = bpf_program__fd(bpf_object__find_program_by_name(o, CVS_PROG_FUN_OUT));
	x->if_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_SBX_IF);
	x->out_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_SBX_OUT);
	x->pol_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_SBX_POL);
	x->dev_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_FUN_DEV);
	x->ifx_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_FUN_IFX);
	x->xsks_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_FUN_XSKS);
	x->press_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_FUN_PRESS);
	x->stats_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_STATS);
	x->gso_prog_fd = bpf_program__fd(bpf_object__find_program_by_name(o, CVS_PROG_SBX_GSO));
	x->gso_map_fd = bpf_object__find_map_fd_by_name(o, CVS_MAP_SBX_GSO);
}

static void
xdpsbx_size(struct bpf_object *o, const char *map, uint32_t n)
{
	bpf_map__set_max_entries(bpf_object__find_map_by_name(o, map), n);
}

/* One fd per attached sandbox: main made room for them (cvs_fd_room) before any thread. */
static int
xdpsbx_links_init(struct xdp_sbx *x, uint32_t n)
{
	uint32_t i;

	x->links = calloc(n, sizeof(*x->links));
	if (!x->links || xdpend_init(x, n)) {
		free(x->links);
		x->links = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		x->links[i].fd = -1;
	x->nlinks = n;
	return 0;
}

int
xdpctl_sbx_load(struct xdp_sbx *x, uint32_t max_sandboxes, const char *pin_dir, char *err,
		size_t errlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "cvs_sbx");
	struct bpf_prog_info info;
	uint32_t ids[8];
	void *press;
	int ret;

	memset(x, 0, sizeof(*x));
	ret = xdpsbx_links_init(x, max_sandboxes);
	if (ret) {
		snprintf(err, errlen, "cannot allocate the table of links: %s", strerror(-ret));
		return ret;
	}
	x->obj = bpf_object__open_mem(cvs_bpf_sbx, cvs_bpf_sbx_len, &oo);
	if (!x->obj) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the sandbox XDP program: %s", strerror(-ret));
		xdpctl_sbx_unload(x);
		return ret;
	}
	xdpsbx_size(x->obj, CVS_MAP_SBX_IF, max_sandboxes);
	xdpsbx_size(x->obj, CVS_MAP_SBX_OUT, max_sandboxes);
	xdpsbx_size(x->obj, CVS_MAP_SBX_POL, max_sandboxes);
	xdpsbx_size(x->obj, CVS_MAP_SBX_GSO, max_sandboxes);
	if (pin_dir && pin_dir[0])
		x->reused = xdppin_reuse(x->obj, pin_dir, "sbx_", x->note, sizeof(x->note));
	ret = bpf_object__load(x->obj);
	if (ret) {
		snprintf(err, errlen, "cannot load the sandbox XDP program: %s%s", strerror(-ret),
			 ret == -EPERM ? " (needs CAP_BPF and CAP_NET_ADMIN)" : "");
		xdpctl_sbx_unload(x);
		return ret;
	}
	xdpsbx_fds(x);
	if (!xdpsbx_info(x->prog_fd, &info, ids, 8)) {
		x->prog_id = info.id;
		memcpy(x->tag, info.tag, sizeof(x->tag));
	}
	press = mmap(NULL, CVS_FUN_MAX * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED,
		     x->press_fd, 0);
	x->press = press == MAP_FAILED ? NULL : press;
	/* Never 0, and another value than the process before almost always. */
	x->gen = (uint16_t)((uint32_t)getpid() ^ (uint32_t)time(NULL)) | 1;
	if (pin_dir && pin_dir[0] && xdppin_pin(x->obj, pin_dir, "sbx_")) {
		size_t l = strlen(x->note);

		snprintf(x->note + l, sizeof(x->note) - l, "%scannot pin the sandbox maps in %s: %s",
			 l ? "; " : "", pin_dir, strerror(errno));
	} else if (pin_dir && pin_dir[0]) {
		snprintf(x->pin_dir, sizeof(x->pin_dir), "%s", pin_dir);
	}
	return 0;
}

/* ---- the interfaces' links ---- */

static bool
xdpsbx_link_path(const struct xdp_sbx *x, int ifindex, char *buf, size_t len)
{
	return x->pin_dir[0] &&
	       (size_t)snprintf(buf, len, "%s/link_if%d", x->pin_dir, ifindex) < len;
}

/*
 * The process holds the link of every slot it attached or kept, beside the pin: a bpffs
 * unmounted under a running node drops the pins, and a link nothing holds any more detaches.
 */
static void
xdpsbx_link_hold(struct xdp_sbx *x, uint32_t slot, int ifindex, int fd)
{
	if (slot >= x->nlinks) {
		close(fd);
		return;
	}
	if (x->links[slot].fd >= 0)
		close(x->links[slot].fd);
	x->links[slot].fd = fd;
	x->links[slot].ifindex = ifindex;
}

/*
 * Whether link fd is an XDP link on ifindex, running prog_id when that is not 0; its id in
 * *id when asked (0 when unknown). An ifindex names an interface only inside one network
 * namespace and the kernel's link info has no namespace: the program tells. prog_id is what
 * rtnetlink of our namespace says the interface runs, and a link of another namespace at the
 * same index runs another program (each process loads its own instance).
 */
static bool
xdpsbx_link_on(int fd, int ifindex, uint32_t prog_id, uint32_t *id)
{
	struct bpf_link_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return false;
	if (id)
		*id = info.id;
	return info.type == BPF_LINK_TYPE_XDP && info.xdp.ifindex == (uint32_t)ifindex &&
	       (!prog_id || info.prog_id == prog_id);
}

/* The XDP program interface ifindex of our namespace runs; 0 for none or unknown. */
static uint32_t
xdpsbx_running(int ifindex)
{
	uint32_t id = 0;

	return xdpctl_prog_info(ifindex, &id, NULL, 0) ? 0 : id;
}

void
xdpsbx_link_end(const struct xdp_sbx *x, int ifindex, int fd)
{
	char path[PATH_MAX];

	bpf_link_detach(fd);
	if (xdpsbx_link_path(x, ifindex, path, sizeof(path)))
		unlink(path);
	close(fd);
}

/*
 * The link that holds ifindex, the caller's to close: the slot's own, else the pinned one
 * (a restart's, which this process does not hold yet). -1 when none; a stale pin goes.
 * prog_id: what the interface runs, when the caller asked rtnetlink already (else 0).
 */
static int
xdpsbx_link_take(struct xdp_sbx *x, int ifindex, uint32_t slot, uint32_t prog_id)
{
	char path[PATH_MAX];
	int fd;

	if (slot < x->nlinks && x->links[slot].fd >= 0 && x->links[slot].ifindex == ifindex) {
		fd = x->links[slot].fd;
		x->links[slot].fd = -1;
		return fd;
	}
	if (!xdpsbx_link_path(x, ifindex, path, sizeof(path)))
		return -1;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	/*
	 * Our pin, and the interface of that index here runs its program. Otherwise the
	 * interface went (the kernel leaves its link defunct) or moved to another namespace
	 * with our link: the pin goes, and with it the link, which is ours.
	 */
	if (!prog_id)
		prog_id = xdpsbx_running(ifindex);
	if (prog_id && xdpsbx_link_on(fd, ifindex, prog_id, NULL))
		return fd;
	xdpsbx_link_end(x, ifindex, fd);
	return -1;
}

/* Whether the pin of ifindex is this link. */
static bool
xdpsbx_link_pinned(const struct xdp_sbx *x, int ifindex, int fd)
{
	uint32_t pinned_id = 0, id = 0;
	char path[PATH_MAX];
	int pin;

	if (!xdpsbx_link_path(x, ifindex, path, sizeof(path)))
		return false;
	pin = bpf_obj_get(path);
	if (pin < 0)
		return false;
	xdpsbx_link_on(pin, ifindex, 0, &pinned_id);
	close(pin);
	xdpsbx_link_on(fd, ifindex, 0, &id);
	return id && id == pinned_id;
}

/*
 * A link on ifindex that no pin of ours reaches: pinned in a bpffs we no longer see (one
 * unmounted while other processes kept it, say). Looked for among all links of the kernel,
 * so only when the interface shows a program of ours, prog_id, that we cannot otherwise get
 * hold of; every namespace's links are there, and only prog_id tells ours.
 */
static int
xdpsbx_link_find(int ifindex, uint32_t prog_id)
{
	uint32_t id = 0;
	int fd;

	while (!bpf_link_get_next_id(id, &id)) {
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (xdpsbx_link_on(fd, ifindex, prog_id, NULL))
			return fd;
		close(fd);
	}
	return -1;
}

/* Our program onto ifindex through a pinned link; -ENOTSUP sends the caller to rtnetlink. */
static int
xdpsbx_link_attach(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	char path[PATH_MAX];
	int fd;

	if (!xdpsbx_link_path(x, ifindex, path, sizeof(path)))
		return -ENOTSUP;
	fd = bpf_link_create(x->prog_fd, ifindex, BPF_XDP, NULL);
	/* Out of fds (RLIMIT_NOFILE) or a kernel without XDP links: rtnetlink does it. */
	if (fd < 0)
		return errno == EBUSY || errno == EEXIST ? -errno : -ENOTSUP;
	/* A pin of an interface that had this index before: nothing runs here, so it is stale. */
	if (bpf_obj_pin(fd, path) && (errno != EEXIST || unlink(path) || bpf_obj_pin(fd, path))) {
		/* Unpinned, the link ends with its fd: the interface is as it was. */
		close(fd);
		return -ENOTSUP;
	}
	xdpsbx_link_hold(x, slot, ifindex, fd);
	return 0;
}

/* Detached and unpinned when a link of ours holds ifindex; false when there is none. */
static bool
xdpsbx_link_drop(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	int fd = xdpsbx_link_take(x, ifindex, slot, 0);

	if (fd < 0)
		return false;
	xdpsbx_link_end(x, ifindex, fd);
	return true;
}

/* A restart's link of program prog_id, pinned by the process before: held from now on. */
static void
xdpsbx_link_keep(struct xdp_sbx *x, int ifindex, uint32_t slot, uint32_t prog_id)
{
	int fd = xdpsbx_link_take(x, ifindex, slot, prog_id);

	if (fd >= 0)
		xdpsbx_link_hold(x, slot, ifindex, fd);
}

/* Ours, of another build: the new program in one step, never a moment without. */
static int
xdpsbx_replace(struct xdp_sbx *x, int ifindex, uint32_t slot, uint32_t old_id)
{
	int old_fd = bpf_prog_get_fd_by_id(old_id), link, ret;

	if (old_fd < 0)
		return -errno;
	link = xdpsbx_link_take(x, ifindex, slot, old_id);
	if (link < 0)
		link = xdpsbx_link_find(ifindex, old_id);
	if (link >= 0) {
		LIBBPF_OPTS(bpf_link_update_opts, lo, .flags = BPF_F_REPLACE, .old_prog_fd = old_fd);

		ret = bpf_link_update(link, x->prog_fd, &lo) ? -errno : 0;
		xdpsbx_link_hold(x, slot, ifindex, link);
	} else {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = old_fd);

		ret = bpf_xdp_attach(ifindex, x->prog_fd, XDP_FLAGS_REPLACE, &o);
	}
	close(old_fd);
	return ret;
}

/* The same instructions over the same maps as ours: the process before's instance. */
static bool
xdpsbx_ours(struct xdp_sbx *x, uint32_t id)
{
	struct bpf_prog_info a, b;
	uint32_t ida[8], idb[8], i, j;
	bool same;
	int fd;

	if (id == x->prog_id || (x->kept_id && id == x->kept_id))
		return true;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return false;
	same = !xdpsbx_info(fd, &b, idb, 8) && !xdpsbx_info(x->prog_fd, &a, ida, 8) &&
	       !memcmp(a.tag, b.tag, sizeof(a.tag)) && a.nr_map_ids == b.nr_map_ids &&
	       a.nr_map_ids <= 8;
	for (i = 0; same && i < a.nr_map_ids; i++) {
		for (j = 0; j < b.nr_map_ids && idb[j] != ida[i]; j++)
			;
		same = j < b.nr_map_ids;
	}
	close(fd);
	if (same)
		x->kept_id = id;
	return same;
}

/* The slot's entries go (and with 'unattach' our program); the next one counts afresh. */
static void
xdpsbx_detach(struct xdp_sbx *x, int ifindex, uint32_t slot, bool unattach)
{
	struct cvs_sbx_pol zero = { 0 };

	xdpctl_sbx_forget(x, ifindex, slot, unattach);
	/* The next sandbox in the slot starts with its own count. */
	bpf_map_update_elem(x->pol_fd, &slot, &zero, BPF_ANY);
}

void
xdpctl_sbx_detach_later(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	int fd = x->late ? xdpsbx_link_take(x, ifindex, slot, 0) : -1;

	/* No link of ours to take (no pins, a build before the links): the whole detach now. */
	xdpsbx_detach(x, ifindex, slot, fd < 0);
	if (fd < 0)
		return;
	xdpend_push(x, ifindex, fd);
}

void
xdpctl_sbx_settle(struct xdp_sbx *x)
{
	xdpend_now(x, 0);
}

static int
xdpsbx_entries(struct xdp_sbx *x, int ifindex, uint32_t slot, uint32_t worker,
	       const uint8_t mac[6])
{
	struct cvs_sbx_if v = { .slot = slot, .worker = worker, .gen = x->gen };
	struct cvs_sbx_out o = { .ifindex = (uint32_t)ifindex };
	uint32_t ifi = (uint32_t)ifindex;

	memcpy(v.mac, mac, 6);
	memcpy(o.mac, mac, 6);
	if (bpf_map_update_elem(x->out_fd, &slot, &o, BPF_ANY) ||
	    bpf_map_update_elem(x->if_fd, &ifi, &v, BPF_ANY))
		return -errno;
	return 0;
}

/* Our program onto an interface that has none: a pinned link, else rtnetlink. */
static int
xdpsbx_attach_new(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	int ret = xdpsbx_link_attach(x, ifindex, slot);

	if (ret == -ENOTSUP)
		ret = bpf_xdp_attach(ifindex, x->prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	/* EEXIST: one in the other mode (generic beside native). Either way, it has one. */
	return ret == -EEXIST ? -EBUSY : ret;
}

/*
 * What the interface holds already: ours (a restart's, or another build's), or someone
 * else's, which is refused. err is set only for those refusals.
 */
static int
xdpsbx_attach_over(struct xdp_sbx *x, int ifindex, const char *ifname, uint32_t slot,
		   char *err, size_t errlen)
{
	char name[BPF_OBJ_NAME_LEN];
	uint32_t id;
	int ret = xdpctl_prog_info(ifindex, &id, name, sizeof(name));

	if (ret) {
		snprintf(err, errlen, "cannot query XDP programs of %s: %s", ifname, strerror(-ret));
		return ret;
	}
	if (id && strcmp(name, CVS_PROG_SBX)) {
		snprintf(err, errlen, "%s already has XDP program '%s' (id %u), which is not ours; "
			 "refusing to replace it (remove it with 'ip link set dev %s xdp off')",
			 ifname, name, id, ifname);
		return -EBUSY;
	}
	if (id && xdpsbx_ours(x, id)) {
		xdpsbx_link_keep(x, ifindex, slot, id);
		return 0;
	}
	/* No id: gone since the kernel refused the attach, which is tried once more. */
	return id ? xdpsbx_replace(x, ifindex, slot, id) : xdpsbx_attach_new(x, ifindex, slot);
}

/*
 * The entries first, so that the program finds them from its first frame, then the attach.
 * A new sandbox's interface has no program, and the attach alone finds that out: the kernel
 * refuses a second one, and only then is the interface asked what it holds. Asking first
 * cost every registration a netlink socket and a full link dump of the interface, a fifth
 * of the CPU of a PUT under 20 concurrent clients.
 */
int
xdpctl_sbx_attach(struct xdp_sbx *x, int ifindex, const char *ifname, uint32_t slot,
		  uint32_t worker, const uint8_t mac[6], char *err, size_t errlen)
{
	int ret;

	/* A deletion's link on this interface that was not ended yet ends first. */
	xdpend_now(x, ifindex);
	ret = xdpsbx_entries(x, ifindex, slot, worker, mac);
	if (ret) {
		snprintf(err, errlen, "cannot add %s to the sandbox maps: %s", ifname,
			 strerror(-ret));
		xdpctl_sbx_detach(x, ifindex, slot);
		return ret;
	}
	if (errlen)
		err[0] = '\0';
	ret = xdpsbx_attach_new(x, ifindex, slot);
	if (ret == -EBUSY)
		ret = xdpsbx_attach_over(x, ifindex, ifname, slot, err, errlen);
	if (!ret)
		return 0;
	/* A veth refuses XDP while its peer's MTU is above what one page holds (the guest side). */
	if (ret == -ERANGE && errlen && !err[0])
		snprintf(err, errlen, "cannot attach the sandbox XDP program to %s: the MTU of its "
			 "veth peer (the guest's side) is larger than XDP without multi-buffer "
			 "takes; set both ends to the same MTU, at most the limit the API names",
			 ifname);
	if (errlen && !err[0])
		snprintf(err, errlen, "cannot attach the sandbox XDP program to %s: %s", ifname,
			 strerror(-ret));
	/* The entries go, and our program if it got there; someone else's stays. */
	xdpctl_sbx_detach(x, ifindex, slot);
	return ret == -EEXIST ? -EBUSY : ret == -ERANGE ? -EMSGSIZE : ret;
}

int
xdpctl_sbx_set_mac(struct xdp_sbx *x, int ifindex, uint32_t slot, uint32_t worker,
		   const uint8_t mac[6])
{
	return xdpsbx_entries(x, ifindex, slot, worker, mac);
}

/* Our program off ifindex, whichever instance of it is there; someone else's stays. */
static void
xdpsbx_unattach(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	char name[BPF_OBJ_NAME_LEN];
	uint32_t id;
	int fd;

	if (xdpsbx_link_drop(x, ifindex, slot))
		return;
	/*
	 * Ours but not through a pin we reach: a link pinned in a bpffs out of our sight, or
	 * an rtnetlink attach (no pin directory, or a build before the links).
	 */
	if (xdpctl_prog_info(ifindex, &id, name, sizeof(name)) || !id ||
	    strcmp(name, CVS_PROG_SBX))
		return;
	fd = xdpsbx_link_find(ifindex, id);
	if (fd >= 0) {
		xdpsbx_link_end(x, ifindex, fd);
		return;
	}
	fd = bpf_prog_get_fd_by_id(id);
	if (fd >= 0) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = fd);

		bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE, &o);
		close(fd);
	}
}

/* The slot's way out, unless another interface took the slot over meanwhile. */
static void
xdpsbx_clear_out(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	struct cvs_sbx_out o, none = { 0 };

	if (!bpf_map_lookup_elem(x->out_fd, &slot, &o) && o.ifindex == (uint32_t)ifindex)
		bpf_map_update_elem(x->out_fd, &slot, &none, BPF_ANY);
}

void
xdpctl_sbx_forget(struct xdp_sbx *x, int ifindex, uint32_t slot, bool unattach)
{
	uint32_t ifi = (uint32_t)ifindex;

	/* Its entry first: the XDP program stops passing frames before the TC one goes. */
	xdpctl_gso_detach(x, ifindex);
	if (unattach)
		xdpsbx_unattach(x, ifindex, slot);
	bpf_map_delete_elem(x->if_fd, &ifi);
	xdpsbx_clear_out(x, ifindex, slot);
}

void
xdpctl_sbx_detach(struct xdp_sbx *x, int ifindex, uint32_t slot)
{
	xdpsbx_detach(x, ifindex, slot, true);
}

int
xdpctl_sbx_slot_of(const struct xdp_sbx *x, int ifindex)
{
	uint32_t ifi = (uint32_t)ifindex;
	struct cvs_sbx_if v;

	return x->obj && !bpf_map_lookup_elem(x->if_fd, &ifi, &v) ? (int)v.slot : -1;
}

int
xdpctl_sbx_prog_owner(struct xdp_sbx *x, uint32_t prog_id, char *name, size_t namelen)
{
	if (!prog_id)
		return 0;
	if (xdpsbx_ours(x, prog_id))
		return 1;
	if (xdpctl_prog_name(prog_id, name, namelen))
		snprintf(name, namelen, "?");
	/* Our program of another build is still ours: an attach replaces it. */
	return strcmp(name, CVS_PROG_SBX) ? -1 : 1;
}

uint64_t
xdpctl_sbx_policed(const struct xdp_sbx *x, uint32_t slot)
{
	struct cvs_sbx_pol p;

	return x->pol_fd > 0 && !bpf_map_lookup_elem(x->pol_fd, &slot, &p) ? p.dropped : 0;
}

/* Links pinned for interfaces that have no entry (any more): a crash between the two. */
static uint32_t
xdpsbx_links_sweep(struct xdp_sbx *x)
{
	DIR *dh = x->pin_dir[0] ? opendir(x->pin_dir) : NULL;
	struct cvs_sbx_if v;
	struct dirent *e;
	uint32_t n = 0;
	int ifindex;

	while (dh && (e = readdir(dh))) {
		uint32_t ifi;

		if (sscanf(e->d_name, "link_if%d", &ifindex) != 1 || ifindex <= 0)
			continue;
		ifi = (uint32_t)ifindex;
		if (bpf_map_lookup_elem(x->if_fd, &ifi, &v) &&
		    xdpsbx_link_drop(x, ifindex, UINT32_MAX))
			n++;
	}
	if (dh)
		closedir(dh);
	return n;
}

/* An entry another process wrote that no registration of ours wrote again. */
static bool
xdpsbx_prune_visit(void *arg, const void *key)
{
	const struct xdp_sbx *x = arg;
	struct cvs_sbx_if v;

	return !bpf_map_lookup_elem(x->if_fd, key, &v) && v.gen != x->gen;
}

static void
xdpsbx_prune_drop(void *arg, const void *key)
{
	struct xdp_sbx *x = arg;
	struct cvs_sbx_if v;

	if (!bpf_map_lookup_elem(x->if_fd, key, &v))
		xdpctl_sbx_detach(x, (int)*(const uint32_t *)key, v.slot);
}

/* The pinned link at 'path' (interface ifindex) made an rtnetlink attachment, or ended. */
static int
xdpsbx_link_release(const char *path, int ifindex, struct xdpctl_release *r, char *err,
		    size_t errlen)
{
	uint32_t prog = xdpsbx_running(ifindex);
	int fd = bpf_obj_get(path), pfd, ret = 0;

	if (fd < 0 || !prog || !xdpsbx_link_on(fd, ifindex, prog, NULL)) {
		/*
		 * Not the link of what the interface here runs: it went, or moved to another
		 * namespace with our link, or the pin is no link at all. A pin in our directory
		 * all the same: it ends (detaching what is no link fails harmlessly).
		 */
		if (fd >= 0)
			bpf_link_detach(fd);
		r->ended++;
	} else {
		pfd = bpf_prog_get_fd_by_id(prog);
		bpf_link_detach(fd);
		ret = pfd < 0 ? -errno :
		      bpf_xdp_attach(ifindex, pfd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
		if (pfd >= 0)
			close(pfd);
		if (ret) {
			r->failed++;
			snprintf(err, errlen, "interface %d: cannot attach program %u through "
				 "rtnetlink: %s", ifindex, prog, strerror(-ret));
		} else {
			r->moved++;
		}
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	return ret;
}

int
xdpctl_sbx_links_release(const char *dir, struct xdpctl_release *r, char *err,
			 size_t errlen)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	int ret = 0, ifindex;

	memset(r, 0, sizeof(*r));
	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	/* Before the XDP links: their program passes a TAP's TSO frame only while it has a filter. */
	r->gso = xdpgso_release(dir);
	while ((e = readdir(dh))) {
		char path[PATH_MAX];
		char tail;

		if (sscanf(e->d_name, "link_if%d%c", &ifindex, &tail) != 1 || ifindex <= 0 ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (xdpsbx_link_release(path, ifindex, r, err, errlen) && !ret)
			ret = -EIO;
	}
	closedir(dh);
	return ret;
}

uint32_t
xdpctl_sbx_prune(struct xdp_sbx *x)
{
	struct xdpctl_walk w = { .visit = xdpsbx_prune_visit, .drop = xdpsbx_prune_drop, .arg = x };

	return xdpctl_map_walk(x->if_fd, sizeof(uint32_t), &w) + xdpsbx_links_sweep(x) +
	       xdpgso_sweep(x->gso_map_fd, x->if_fd);
}

void
xdpctl_sbx_unload(struct xdp_sbx *x)
{
	uint32_t i;

	xdpend_fini(x);
	/*
	 * Their pins keep the links: the interfaces keep the program for the next process. A
	 * link whose pin went with its bpffs (unmounted under us) would end with this process,
	 * some time after its exit (the kernel frees the mount late): detached now instead, so
	 * the next process finds the interface free rather than a program about to vanish.
	 */
	for (i = 0; i < x->nlinks; i++) {
		if (x->links[i].fd < 0)
			continue;
		if (!xdpsbx_link_pinned(x, x->links[i].ifindex, x->links[i].fd))
			bpf_link_detach(x->links[i].fd);
		close(x->links[i].fd);
	}
	free(x->links);
	x->links = NULL;
	x->nlinks = 0;
	if (x->press)
		munmap((void *)x->press, CVS_FUN_MAX * sizeof(uint64_t));
	x->press = NULL;
	if (x->obj)
		bpf_object__close(x->obj);
	x->obj = NULL;
}
