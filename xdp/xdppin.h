/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Our XDP maps pinned in a BPF file system (control thread), so a restart does not start
 * them over: the next process loads its programs onto the same maps, and the steered ports,
 * the configuration with its heartbeat, the sandbox slots and the verdict counters (the gap
 * drops among them) simply go on. The programs stay attached to their interfaces across the
 * restart either way (xdp/xdpsteer.c, xdp/xdpsbx.c); the pins are what the next process
 * finds them by.
 *
 * One directory per world interface, DIR/<iface> (--bpf-pin-dir), root-only (0700). A map is
 * reused only when its type, key and value sizes, entries and flags are the ones this build
 * loads; otherwise its pin is replaced, with a line saying so.
 */
#ifndef CVS_XDPPIN_H
#define CVS_XDPPIN_H

#include <stddef.h>
#include <stdint.h>

struct bpf_object;

/*
 * Make (0700) and check root/iface: on a BPF file system, a directory owned by us with no
 * access for others. 0 with the path in 'dir', or -errno with the reason in 'err'.
 */
int xdppin_dir(const char *root, const char *iface, char *dir, size_t len, char *err,
	       size_t errlen);

/*
 * Before bpf_object__load(): each map of 'obj' with a compatible pin DIR/<prefix><name> is
 * loaded onto it. Incompatible pins are removed and named in 'note' (one line, "" when none).
 * Returns how many maps were reused.
 */
uint32_t xdppin_reuse(struct bpf_object *obj, const char *dir, const char *prefix, char *note,
		      size_t notelen);
/* After the load: pin every map of 'obj' that has no pin yet. 0 or -errno. */
int xdppin_pin(struct bpf_object *obj, const char *dir, const char *prefix);
/*
 * The release that pinned the maps of 'dir' last, kept in a pinned array map of its own
 * (cvs_release: one 64-byte string; bpffs holds no plain files), into 'prev': "0.1.0 or
 * earlier" when maps are pinned without it, "" for an empty directory. Then 'release' is
 * recorded in its place. 0 or -errno.
 */
int xdppin_release(const char *dir, const char *release, char *prev, size_t len);
/* Remove every pin of 'dir' and the directory (an explicit detach). */
void xdppin_remove(const char *dir);
/*
 * Remove every pin of 'dir' whose name is not in 'keep' (NULL-terminated): the maps a release
 * rolled back to does not know. Their names, space-separated, in 'removed'. Returns how many.
 */
uint32_t xdppin_keep_only(const char *dir, const char *const *keep, char *removed, size_t len);

#endif /* CVS_XDPPIN_H */
