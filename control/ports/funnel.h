/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A worker's funnel (control thread): the veth pair cvsfunN / cvsfunNp that carries every
 * frame between the worker's one AF_XDP socket and the sandbox interfaces of its slots
 * (xdp/sbx.bpf.c, docs/datapath.md "One socket per worker"). The pair stays over a restart
 * with its programs, so the next process only binds a new socket; --detach-on-exit removes it.
 */
#ifndef CVS_FUNNEL_H
#define CVS_FUNNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include "xskport.h"

/*
 * The funnel veths' MTU: the longest jumbo frame our sockets carry in several UMEM frames
 * (AF_XDP multi-buffer). What a sandbox interface may carry is that less the stamp its
 * program puts in front (FUNNEL_SBX_MTU_MAX): the kernel drops longer frames on the funnel
 * without a word (issue 33). A funnel socket without multi-buffer carries less:
 * funnel_sbx_mtu_max().
 */
#define FUNNEL_MTU		XSKP_MTU_MAX
#define FUNNEL_SBX_MTU_MAX	(FUNNEL_MTU - (uint32_t)sizeof(struct cvs_fun_hdr))
_Static_assert(CVS_SBX_FRAME_MAX == FUNNEL_SBX_MTU_MAX + 14, "xdp/cvs_xdp.h, CVS_SBX_FRAME_MAX");

struct xdp_sbx;
struct xskport;

struct funnel {
	char name[IF_NAMESIZE];		/* worker end: XDP cvs_fun_in and the socket */
	char peer[IF_NAMESIZE];		/* near end: TC cvs_fun_out, the devmap's target */
	int ifindex;
	int peer_ifindex;
	uint32_t worker;
	struct xskport *xp;
	_Atomic uint64_t *press;	/* the worker's pressure word (xdpctl_fun_press()) */
};

/*
 * Make (or find) the pair of 'worker', program it and bind a socket of nframes frames, 'fill'
 * of them in its fill ring (the rest transmit, or fill a world socket on the same UMEM).
 */
int funnel_open(struct funnel *f, struct xdp_sbx *x, uint32_t worker, uint32_t nframes,
		uint32_t fill, char *err, size_t errlen);
/* The same for worker w (its id set), which then receives and sends on the funnel's socket. */
struct worker;
int funnel_for_worker(struct funnel *f, struct xdp_sbx *x, struct worker *w, uint32_t nframes,
		      uint32_t fill, char *err, size_t errlen);
/* The sandbox MTU the funnel's socket carries: FUNNEL_SBX_MTU_MAX with multi-buffer. */
static inline uint32_t
funnel_sbx_mtu_max(const struct funnel *f)
{
	return xskport_mtu_max(f->xp) - (uint32_t)sizeof(struct cvs_fun_hdr);
}

/* Close the socket; with 'remove' the pair goes too (its programs with it). */
void funnel_close(struct funnel *f, struct xdp_sbx *x, bool remove);

/*
 * Remove the funnels of workers first.. that the process before had (a smaller --workers),
 * and their devmap entries when x is not NULL (a rollback has no maps). Returns how many.
 */
uint32_t funnel_remove_from(struct xdp_sbx *x, uint32_t first);

#endif /* CVS_FUNNEL_H */
