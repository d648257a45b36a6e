/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hand-over of the steering program between two processes, so the world interface is never
 * without it (control thread, before and during EAL start and at exit).
 *
 * net_af_xdp (DPDK 22.11) attaches the program it is given with XDP_FLAGS_UPDATE_IF_NOEXIST,
 * which fails while the program of the process before is still attached, and detaches it when
 * the port closes. Both would open a gap in which the kernel answers the host ports and SNAT
 * replies with resets. This module interposes the two libbpf calls the PMD makes for our world
 * interface: the attach becomes an atomic replacement of the old program (XDP_FLAGS_REPLACE),
 * after the new program's maps got the old one's configuration, heartbeat and steered ports;
 * the detach at exit is skipped unless the operator asked to detach (--detach-on-exit).
 * With a pin directory (xdppin.h) the PMD's load is interposed too: the new program is
 * loaded onto the maps the process before pinned, so nothing needs copying. Every other
 * interface and object, and every call of ours, goes to libbpf unchanged.
 */
#ifndef CVS_HANDOVER_H
#define CVS_HANDOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "cvs_xdp.h"

/*
 * Before EAL: when a steering program of ours is attached to ifindex, keep it (its fd) for
 * the replacement. 'cfg' is what the new program's cvs_cfg starts with (node IP, SNAT range,
 * grace); the heartbeat is taken from the old program. The maps are pinned and reused in
 * pin_root/iface (xdppin_dir(); pin_root "" for none, and none when that directory cannot be
 * had, which is logged). Returns 1 when an old program will be replaced, 0 when there is none.
 */
int handover_prepare(int ifindex, const struct cvs_xdp_cfg *cfg, const char *pin_root,
		     const char *iface);
/* The pin directory in use, "" when the maps are not pinned. */
const char *handover_pin_dir(void);
/* Whether net_af_xdp may detach the steering program when the world port closes. */
void handover_keep_attached(int ifindex, bool keep);
/* Ports carried from the old program's cvs_steer, copied or pinned (pruned after the restore). */
uint32_t handover_copied(void);

#endif /* CVS_HANDOVER_H */
