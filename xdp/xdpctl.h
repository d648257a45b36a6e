/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading, attaching and programming our XDP programs (control thread). */
#ifndef CVS_XDPCTL_H
#define CVS_XDPCTL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cvs_xdp.h"

struct bpf_object;

/*
 * The steering program on the world interface: loaded and attached by us (xdpsteer.c), or,
 * on an explicit EAL net_af_xdp port, found where that PMD attached the installed object.
 */
struct xdp_steer {
	int ifindex;
	uint32_t prog_id;	/* the attached program */
	int prog_fd;		/* its descriptor */
	int xsks_fd;		/* the world queues' sockets by queue id */
	int steer_fd;
	int cfg_fd;
	int cfg6_fd;		/* the IPv6 side; -1 on an EAL port whose object has none */
	int stats_fd;
	bool took_over;		/* a steering program of the process before was attached */
	bool kept;		/* and stays: the same program over the same maps */
	uint32_t reused;	/* maps taken from their pins */
	uint32_t carried;	/* steered ports found from before, pruned after the restore */
	char note[600];		/* what the pinning had to say, for the log; "" when nothing */
};

/*
 * The sandbox side: the one program of all sandbox interfaces, the funnel programs
 * (xdp/sbx.bpf.c) and their maps. 'press' is cvs_fun_press mapped into our memory: each
 * worker writes its own entry.
 */
struct xdp_sbx {
	struct bpf_object *obj;
	int prog_fd;
	int fun_in_fd;
	int fun_out_fd;
	uint32_t prog_id;
	int if_fd;
	int out_fd;
	int pol_fd;
	int dev_fd;
	int ifx_fd;
	int xsks_fd;
	int press_fd;
	int stats_fd;
	_Atomic uint64_t *press;
	uint16_t gen;		/* marks the entries this process wrote */
	uint32_t kept_id;	/* a program of the process before that is ours in all but id */
	uint8_t tag[8];
	uint32_t reused;	/* maps taken from their pins (xdppin.h) */
	char note[600];		/* what the pinning had to say, for the log; "" when nothing */
	char pin_dir[300];	/* where the maps and the interfaces' links are pinned; "" = none */
	struct { int fd; int ifindex; } *links;	/* by slot: the link this process holds */
	/* A TAP's TSO frames (xdpgso.c): the TC program and its map. */
	int gso_prog_fd;
	int gso_map_fd;
	uint32_t nlinks;
	/*
	 * Links taken off their slot by xdpctl_sbx_detach_later(), ended by the ender thread
	 * (xdpend.c) or xdpctl_sbx_settle(); 'ending' lists the interfaces whose link a thread
	 * is ending now. All under end_lock.
	 */
	pthread_mutex_t end_lock;
	pthread_cond_t ended;
	pthread_cond_t late_cv;		/* the ender's: something was pushed, or stop */
	pthread_t ender;
	bool ender_on, end_stop;
	struct { int fd; int ifindex; } *late;
	uint32_t nlate;
#define XDPSBX_ENDING_MAX	32
	int ending[XDPSBX_ENDING_MAX];
	uint32_t nending;
};

/* Name and id of the program attached to ifindex; returns 0 with *id = 0 when none. */
int xdpctl_prog_info(int ifindex, uint32_t *id, char *name, size_t namelen);
/* The name of program id into name; 0 or -errno (gone, not ours to see). */
int xdpctl_prog_name(uint32_t id, char *name, size_t namelen);
/*
 * Whether ifindex runs our steering program (1), none (0), or someone else's (-EBUSY, named
 * in err, which we never replace). Asked before anything on the node changes.
 */
int xdpctl_steer_check(int ifindex, const char *ifname, char *err, size_t errlen);
/*
 * Load the steering program onto the maps pinned in pin_dir ("" for none), give it 'cfg' (node
 * IP, SNAT range, grace; the heartbeat stays the one of the process before) and node_ip6 (16
 * bytes, the node's IPv6 address; NULL: every IPv6 frame to the kernel), and attach it to
 * ifindex: a steering program of the process before is kept when it is the same program over
 * the same maps, else replaced atomically after its heartbeat, steered ports and verdict
 * counters were carried into our maps. 0, or -errno with the reason in err.
 */
int xdpctl_steer_load(struct xdp_steer *s, int ifindex, const char *ifname, const char *pin_dir,
		      const struct cvs_xdp_cfg *cfg, const uint8_t *node_ip6, char *err,
		      size_t errlen);
/* An explicit EAL net_af_xdp port: the program its PMD attached, if it is ours. */
int xdpctl_steer_open(struct xdp_steer *s, int ifindex, char *err, size_t errlen);
int xdpctl_steer_cfg(struct xdp_steer *s, uint32_t node_ip, uint16_t snat_lo, uint16_t snat_hi,
		     uint64_t grace_ns);
/* The node's IPv6 address into cvs_cfg6 (NULL: IPv6 off); -ENOENT if the program lacks it. */
int xdpctl_steer_cfg6(struct xdp_steer *s, const uint8_t *node_ip6);
/* Now (CLOCK_BOOTTIME) into cvs_cfg: the restart grace counts from the last beat. */
int xdpctl_steer_heartbeat(struct xdp_steer *s);
/* Remove every steered port 'keep' says no to (ports a hand-over carried over). */
uint32_t xdpctl_steer_prune(struct xdp_steer *s,
			    bool (*keep)(void *arg, uint8_t proto, uint16_t port), void *arg);
int xdpctl_steer_port(struct xdp_steer *s, uint8_t proto, uint16_t port, bool add);
void xdpctl_steer_close(struct xdp_steer *s, bool detach);

/* Load the sandbox program; with 'pin_dir' (not "") onto the maps pinned there, as sbx_*. */
int xdpctl_sbx_load(struct xdp_sbx *x, uint32_t max_sandboxes, const char *pin_dir, char *err,
		    size_t errlen);
/*
 * A sandbox interface into the funnel of 'worker': its entries, then the program (kept when
 * it is ours already, as after a restart). 'mac' is the registered guest MAC.
 */
int xdpctl_sbx_attach(struct xdp_sbx *x, int ifindex, const char *ifname, uint32_t slot,
		      uint32_t worker, const uint8_t mac[6], char *err, size_t errlen);
void xdpctl_sbx_detach(struct xdp_sbx *x, int ifindex, uint32_t slot);
/*
 * Detach, but the interface's link is only taken off the slot: a thread of this module ends
 * it soon after (xdpend.c), an attach to the same interface first, xdpctl_sbx_settle() or
 * the unload at the latest. For callers under a lock that others wait for.
 */
void xdpctl_sbx_detach_later(struct xdp_sbx *x, int ifindex, uint32_t slot);
void xdpctl_sbx_settle(struct xdp_sbx *x);
/* The guest MAC of an attached sandbox changed. */
int xdpctl_sbx_set_mac(struct xdp_sbx *x, int ifindex, uint32_t slot, uint32_t worker,
		       const uint8_t mac[6]);
/*
 * An interface the kernel took away or changed: its entries go (and with 'unattach' our
 * program on it too), the slot's way out with them.
 */
void xdpctl_sbx_forget(struct xdp_sbx *x, int ifindex, uint32_t slot, bool unattach);
/* The slot whose interface ifindex is, or -1. */
int xdpctl_sbx_slot_of(const struct xdp_sbx *x, int ifindex);
/* Whether program prog_id is our sandbox program (1), none (0, id 0) or another (-1, named). */
int xdpctl_sbx_prog_owner(struct xdp_sbx *x, uint32_t prog_id, char *name, size_t namelen);
/*
 * A worker's funnel (xdpfun.c; control/ports/funnel.c makes the veth pair, cvsfunN and its
 * near end cvsfunNp, and the socket). Whether the sandbox programs are loaded; the funnel's
 * programs attached to the pair and its near end put into the devmap (0, or -errno with the
 * reason in err); the worker's socket put into / taken out of the XSKMAP; the near end taken
 * out of the devmap (x may be NULL: nothing to do); the worker's pressure word, cleared, or
 * NULL without the mapping.
 */
bool xdpctl_fun_loaded(const struct xdp_sbx *x);
int xdpctl_fun_attach(struct xdp_sbx *x, uint32_t worker, int ifindex, int peer_ifindex,
		      char *err, size_t errlen);
int xdpctl_fun_bind(struct xdp_sbx *x, uint32_t worker, int xsk_fd);
void xdpctl_fun_unbind(struct xdp_sbx *x, uint32_t worker);
void xdpctl_fun_forget(struct xdp_sbx *x, uint32_t worker);
_Atomic uint64_t *xdpctl_fun_press(struct xdp_sbx *x, uint32_t worker);

/* Frames of this slot the policer dropped (its excess while its funnel was under pressure). */
/*
 * A TAP's TSO frames segmented by the kernel (xdpgso.c): our TC filter on ifname when it is a
 * TAP, and its MTU for cvs_sbx_prog; again when the MTU changes. Nothing for other interfaces.
 * -EBUSY when another program holds our filter's place: those frames stay dropped, counted.
 */
int xdpctl_gso_attach(struct xdp_sbx *x, int ifindex, const char *ifname, uint32_t mtu);
void xdpctl_gso_detach(struct xdp_sbx *x, int ifindex);

uint64_t xdpctl_sbx_policed(const struct xdp_sbx *x, uint32_t slot);
/* Links of deleted sandboxes not ended yet (xdpend.c); 0 once the kernel has them all back. */
uint32_t xdpctl_sbx_ending(struct xdp_sbx *x);
/*
 * After the restore: the interfaces in the (pinned) slot map that no sandbox came back for
 * lose the program the process before left attached, and their entries. Returns how many.
 */
uint32_t xdpctl_sbx_prune(struct xdp_sbx *x);
void xdpctl_sbx_unload(struct xdp_sbx *x);

/* What xdpctl_sbx_links_release() did. */
struct xdpctl_release {
	uint32_t moved;		/* links become rtnetlink attachments of the same program */
	uint32_t ended;		/* links of interfaces gone or moved away: pin removed */
	uint32_t failed;	/* rtnetlink refused: the interface has no program now (err) */
	uint32_t gso;		/* TC filters of TAPs removed (xdpgso.c): 0.1.0 has none */
};

/*
 * For a rollback to a release that attaches through rtnetlink (0.1.0, which cannot replace a
 * link's program and leaves such an interface unattached): with no process running, every
 * link pinned in 'dir' (DIR/<world iface>) whose interface in our namespace runs the link's
 * program is replaced by an rtnetlink attachment of that program, and its pin removed. The
 * interface is without a program for the microseconds between the two (the kernel has no
 * step that turns one into the other). Returns 0, or -EIO with a failure named in err.
 */
int xdpctl_sbx_links_release(const char *dir, struct xdpctl_release *r, char *err,
			     size_t errlen);

/*
 * Every key of a hash map to visit(); those it returns true for go to drop() (NULL: deleted)
 * once their batch is collected. Keys of at most XDPCTL_KEY_MAX bytes. Returns how many.
 */
#define XDPCTL_KEY_MAX	16
struct xdpctl_walk {
	bool (*visit)(void *arg, const void *key);
	void (*drop)(void *arg, const void *key);
	void *arg;
};
uint32_t xdpctl_map_walk(int fd, uint32_t key_size, const struct xdpctl_walk *w);

/* A map of a loaded program by name: an fd the caller closes, or -errno. */
int xdpctl_prog_map_fd(int prog_fd, const char *want);
/* Value size of a map, 0 when it cannot be asked. */
uint32_t xdpctl_map_value_size(int map_fd);

/* Sum a per-CPU counter array of CVS_XDP_MAX entries into out. */
int xdpctl_read_stats(int stats_fd, uint64_t *out);

#endif /* CVS_XDPCTL_H */
