/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cvs_common.h"
#include "xdppin.h"

#define BPF_FS_MAGIC_	0xcafe4a11

int
xdppin_dir(const char *root, const char *iface, char *dir, size_t len, char *err,
	   size_t errlen)
{
	struct statfs sf;
	int ret;

	/* Whoever may write here may hand the next process maps of their making. */
	ret = cvs_private_dir(root, "", err, errlen);
	if (ret)
		return ret;
	if (statfs(root, &sf) || (uint32_t)sf.f_type != BPF_FS_MAGIC_) {
		snprintf(err, errlen, "%s is not on a BPF file system (mount one with "
			 "'mount -t bpf bpf /sys/fs/bpf')", root);
		rmdir(root);
		return -ENOTSUP;
	}
	if ((size_t)snprintf(dir, len, "%s/%s", root, iface) >= len) {
		snprintf(err, errlen, "%s/%s: path too long", root, iface);
		return -ENAMETOOLONG;
	}
	return cvs_private_dir(dir, "", err, errlen);
}

/* Whether the pinned map fd is what 'm' would create. */
static const char *
pin_mismatch(int fd, const struct bpf_map *m, char *buf, size_t len)
{
	struct bpf_map_info mi;
	uint32_t ilen = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(fd, &mi, &ilen))
		return "cannot be inspected";
	/* The kernel makes every devmap read-only to programs itself. */
	if (mi.type != (uint32_t)bpf_map__type(m) || mi.key_size != bpf_map__key_size(m) ||
	    mi.value_size != bpf_map__value_size(m) ||
	    mi.max_entries != bpf_map__max_entries(m) ||
	    (mi.map_flags & ~(uint32_t)BPF_F_RDONLY_PROG) !=
	    (bpf_map__map_flags(m) & ~(uint32_t)BPF_F_RDONLY_PROG)) {
		snprintf(buf, len, "type %u key %u value %u entries %u, this build %u/%u/%u/%u",
			 mi.type, mi.key_size, mi.value_size, mi.max_entries,
			 (uint32_t)bpf_map__type(m), bpf_map__key_size(m),
			 bpf_map__value_size(m), bpf_map__max_entries(m));
		return buf;
	}
	return NULL;
}

uint32_t
xdppin_reuse(struct bpf_object *obj, const char *dir, const char *prefix, char *note,
	     size_t notelen)
{
	struct bpf_map *m;
	uint32_t n = 0;
	size_t used = 0;

	note[0] = '\0';
	bpf_object__for_each_map(m, obj) {
		char path[512], buf[128];
		const char *bad;
		int fd;

		snprintf(path, sizeof(path), "%s/%s%s", dir, prefix, bpf_map__name(m));
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		bad = pin_mismatch(fd, m, buf, sizeof(buf));
		if (!bad && !bpf_map__reuse_fd(m, fd)) {
			n++;
		} else {
			unlink(path);
			if (used < notelen)
				used += (size_t)snprintf(note + used, notelen - used,
							 "%spinned map %s differs (%s): replaced",
							 used ? "; " : "", path,
							 bad ? bad : "cannot reuse it");
		}
		close(fd);
	}
	return n;
}

int
xdppin_pin(struct bpf_object *obj, const char *dir, const char *prefix)
{
	struct bpf_map *m;
	int ret = 0;

	bpf_object__for_each_map(m, obj) {
		char path[512];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s%s", dir, prefix, bpf_map__name(m));
		if (!stat(path, &st))
			continue;
		if (bpf_obj_pin(bpf_map__fd(m), path) && !ret)
			ret = -errno;
	}
	return ret;
}

uint32_t
xdppin_keep_only(const char *dir, const char *const *keep, char *removed, size_t len)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	uint32_t n = 0, k;
	size_t at = 0;

	if (len)
		removed[0] = '\0';
	while (dh && (e = readdir(dh))) {
		char path[512];

		for (k = 0; keep[k] && strcmp(keep[k], e->d_name); k++)
			;
		if (e->d_name[0] == '.' || keep[k] ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path) ||
		    unlink(path))
			continue;
		n++;
		if (at < len)
			at += (size_t)snprintf(removed + at, len - at, "%s%s", at ? " " : "",
					       e->d_name);
	}
	if (dh)
		closedir(dh);
	return n;
}

#define XDPPIN_RELEASE	"cvs_release"

static bool
xdppin_empty(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *e;
	bool empty = true;

	while (dh && empty && (e = readdir(dh)))
		empty = e->d_name[0] == '.';
	if (dh)
		closedir(dh);
	return empty;
}

int
xdppin_release(const char *dir, const char *release, char *prev, size_t len)
{
	char path[512], val[64];
	uint32_t k = 0;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, XDPPIN_RELEASE);
	memset(val, 0, sizeof(val));
	fd = bpf_obj_get(path);
	if (fd >= 0 && !bpf_map_lookup_elem(fd, &k, val))
		snprintf(prev, len, "%.*s", (int)sizeof(val) - 1, val);
	else
		snprintf(prev, len, "%s", xdppin_empty(dir) ? "" : "0.1.0 or earlier");
	if (fd >= 0)
		close(fd);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, XDPPIN_RELEASE, sizeof(k), sizeof(val), 1, NULL);
	memset(val, 0, sizeof(val));
	snprintf(val, sizeof(val), "%s", release);
	unlink(path);
	if (fd < 0 || bpf_map_update_elem(fd, &k, val, BPF_ANY) || bpf_obj_pin(fd, path))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	return ret;
}

void
xdppin_remove(const char *dir)
{
	static const char *const none[] = { NULL };

	xdppin_keep_only(dir, none, NULL, 0);
	rmdir(dir);
}
